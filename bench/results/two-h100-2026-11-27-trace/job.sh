#!/usr/bin/env bash
# 2 GPUs: the launch trace on GPUs (tests, then Faces st traced: where an exchange's time goes),
# what tracing costs, small collectives against NCCL and the host-staged MPI, mid sizes again.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
O=/tmp/o21; mkdir -p $O; rm -rf $O/*
{ nvidia-smi -L; nvidia-smi topo -m; nproc; nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1; } > $O/machine.txt 2>&1; head -2 $O/machine.txt
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest"
t0=$(date +%s)
cat .carry/commit21.txt > $O/commit.txt
pack() { cd $O && tar czf $OUT/n21.tgz * 2>/dev/null; cd - > /dev/null; }
B=build-gpu/examples/bench
F=build-gpu/examples/faces/faces_cuda
G="2 1 1 15 14 13 12 10 10"
# name, trace(0/1), args...
run_faces() {
  local n=$1 tr=$2; shift 2
  if [ "$tr" = 1 ]; then mkdir -p $O/tr_$n; export MPIX_ST_TRACE=$O/tr_$n/t; else unset MPIX_ST_TRACE; fi
  timeout 60 mpiexec -n 2 --bind-to none $F --json $O/faces_$n.json "$@" > $O/faces_$n.txt 2>&1; echo "faces $n rc $? $(( $(date +%s) - t0 )) s"
  unset MPIX_ST_TRACE
  grep -E "mode=.*per_exchange_us" $O/faces_$n.txt | sed -E 's/.*mode=([a-z0-9]+).*per_exchange_us avg=([0-9.]+).*/  \1 \2/' | tr '\n' ' '; echo
  if [ "$tr" = 1 ]; then python3 scripts/trace-summary.py $O/tr_$n/t.*.csv --skip 200 --json $O/tr_$n/summary.json > $O/tr_$n/summary.txt 2>&1; cat $O/tr_$n/summary.txt; fi
}
coll() { # name, timeout, args...
  local n=$1 t=$2; shift 2
  timeout $t mpiexec -n 2 --bind-to none $B/coll_bench_cuda --json $O/coll_$n.json "$@" > $O/coll_$n.txt 2>&1; echo "coll $n rc $? $(( $(date +%s) - t0 )) s"
}
if [ "$1" = build ]; then
  touch kernels/*.cu kernels/*.h
  cmake -S . -B build-gpu $cfg > $O/cfg.log 2>&1 && cmake --build build-gpu -j 16 > $O/build.log 2>&1; echo "build rc $? $(( $(date +%s) - t0 )) s"; tail -3 $O/build.log
  timeout 120 ctest --test-dir build-gpu -L gpu -LE internode -R "launch_trace|graph_merge|graph_replay|faces.st" -E np4 -j2 --timeout 60 > $O/ctest_np2.txt 2>&1; echo "ctest np2 rc $? $(( $(date +%s) - t0 )) s"; grep -E "tests passed|Failed|Timeout|Not Run|\*\*\*" $O/ctest_np2.txt
  pack
  run_faces st_off_1 0 --mode st --graph $G -100
  run_faces st_on_1 1 --mode st --graph $G -100
  run_faces st_off_2 0 --mode st --graph $G -100
  run_faces st_on_2 1 --mode st --graph $G -100
  pack
  run_faces dt_on 1 --mode st --graph --datatypes $G -100
  run_faces w1_on 1 --mode st --graph --st-windows 1 $G -100
  pack
else
  run_faces per_on 1 --mode st --graph --periodic $G -100
  run_faces sums_on 1 --mode st --graph $G 100
  run_faces eager_on 1 --mode st $G -100
  pack
  coll small_1 150 --colls allreduce,reduce,bcast,allgather,alltoall --impls mpixst,vendor,mpi --graph --iters 50 --warmup 5 --min-bytes 8 --max-bytes 65536 --step 2
  pack
  coll mid_2 120 --colls allreduce,reduce,bcast,allgather,alltoall --impls mpixst,vendor --graph --iters 50 --warmup 5 --min-bytes 1048576 --max-bytes 4194304 --step 2
  coll mid_3 120 --colls allreduce,reduce,bcast,allgather,alltoall --impls mpixst,vendor --graph --iters 50 --warmup 5 --min-bytes 1048576 --max-bytes 4194304 --step 2
  pack
fi
echo "total: $(( $(date +%s) - t0 )) s"
pack; ls $OUT
