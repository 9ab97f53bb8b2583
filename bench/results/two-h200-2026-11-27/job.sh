#!/usr/bin/env bash
# 2 GPUs (H200 x2 asked): the head of main measured for issues 12, 13, 14 on two ranks, and the
# gpu tests not yet run on GPUs (graph_merge, stencil, new Faces cases).
# $1 = build: build, tests, small collectives; else: the rest on the warm machine.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
O=/tmp/o20; mkdir -p $O; rm -rf $O/*
{ nvidia-smi -L; nvidia-smi topo -m; nproc; nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1; } > $O/machine.txt 2>&1; head -3 $O/machine.txt
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest"
t0=$(date +%s)
cat .carry/commit20.txt > $O/commit.txt
pack() { cd $O && tar czf $OUT/n20.tgz * 2>/dev/null; cd - > /dev/null; }
B=build-gpu/examples/bench
F=build-gpu/examples/faces/faces_cuda
run_faces() { # name, args...
  local n=$1; shift
  timeout 60 mpiexec -n 2 --bind-to none $F --json $O/faces_$n.json "$@" > $O/faces_$n.txt 2>&1; echo "faces $n rc $? $(( $(date +%s) - t0 )) s"
  grep -E "mode=.*per_exchange_us" $O/faces_$n.txt | sed -E 's/.*mode=([a-z0-9]+).*per_exchange_us avg=([0-9.]+).*/  \1 \2/' | tr '\n' ' '; echo
}
coll() { # name, timeout, args...
  local n=$1 t=$2; shift 2
  timeout $t mpiexec -n 2 --bind-to none $B/coll_bench_cuda --json $O/coll_$n.json "$@" > $O/coll_$n.txt 2>&1; echo "coll $n rc $? $(( $(date +%s) - t0 )) s"
}
if [ "$1" = build ]; then
  touch kernels/*.cu kernels/*.h
  cmake -S . -B build-gpu $cfg > $O/cfg.log 2>&1 && cmake --build build-gpu -j 16 > $O/build.log 2>&1; echo "build rc $? $(( $(date +%s) - t0 )) s"; tail -3 $O/build.log
  timeout 170 ctest --test-dir build-gpu -L gpu -LE internode -R "graph|stencil|faces|datatypes|epochs" -E np4 -j2 --timeout 60 > $O/ctest_np2.txt 2>&1; echo "ctest np2 rc $? $(( $(date +%s) - t0 )) s"; grep -E "tests passed|Failed|Timeout|Not Run|\*\*\*" $O/ctest_np2.txt
  pack
  coll small_1 100 --colls allreduce,reduce,bcast,allgather,alltoall --impls mpixst,vendor,mpi --mpi-device --graph --iters 50 --warmup 5 --min-bytes 8 --max-bytes 65536 --step 4
  pack
else
  coll mid_1 120 --colls allreduce,reduce,bcast,allgather,alltoall --impls mpixst,vendor --graph --iters 50 --warmup 5 --min-bytes 131072 --max-bytes 4194304 --step 2
  pack
  coll large_1 150 --colls allreduce,reduce,bcast,allgather,alltoall --impls mpixst,vendor --graph --iters 20 --warmup 3 --min-bytes 67108864 --max-bytes 268435456 --step 4
  pack
  timeout 90 mpiexec -n 2 --bind-to none $B/rma_bench_cuda --graph --iters 2000 --host-iters 300 --sizes-mib 64 --json $O/rma_1.json > $O/rma_1.txt 2>&1; echo "rma rc $? $(( $(date +%s) - t0 )) s"
  timeout 60 mpiexec -n 2 --bind-to none $B/dtype_bench_cuda --mib 64 --block 1024 --json $O/dtype_1.json > $O/dtype_1.txt 2>&1; echo "dtype rc $? $(( $(date +%s) - t0 )) s"; tail -8 $O/dtype_1.txt
  pack
  G="2 1 1 15 14 13 12 10 10"
  run_faces comm_w2 --mode all --graph --st-windows 2 $G -100
  run_faces comm_w1 --mode all --graph --st-windows 1 $G -100
  run_faces dt_w2 --mode all --graph --datatypes --st-windows 2 $G -100
  run_faces per_w2 --mode all --graph --periodic --st-windows 2 $G -100
  run_faces sums_w2 --mode all --graph --st-windows 2 $G 100
fi
echo "total: $(( $(date +%s) - t0 )) s"
pack; ls $OUT
