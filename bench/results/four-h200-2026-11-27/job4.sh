#!/usr/bin/env bash
# 4 GPUs: collectives with NCCL replayed too (vendor-graph), 4 and 2 ranks; Faces 2x2x1 st --graph
# under the copy-grid knobs (one binary, alternating) beside nccl --graph.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
O=/tmp/o25; mkdir -p $O
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest"
t0=$(date +%s)
pack() { cd $O && tar czf $OUT/n25_$1.tgz $1 2>/dev/null; cd - > /dev/null; }
B=build-gpu/examples/bench
F=build-gpu/examples/faces/faces_cuda
run_faces() { # dir, name, env or -, args...
  local d=$1 n=$2 e=$3; shift 3
  env ${e/#-/X=1} timeout 60 mpiexec -n 4 --bind-to none $F --json $O/$d/faces_$n.json "$@" > $O/$d/faces_$n.txt 2>&1; local rc=$?
  echo "faces $n rc $rc $(( $(date +%s) - t0 )) s: $(grep -E 'mode=.*per_exchange_us' $O/$d/faces_$n.txt | sed -E 's/.*mode=([a-z0-9]+).*per_exchange_us avg=([0-9.]+).*/\1 \2/' | tr '\n' ' ')"
}
coll() { # dir, name, ranks, timeout, args...
  local d=$1 n=$2 np=$3 t=$4; shift 4
  timeout $t mpiexec -n $np --bind-to none $B/coll_bench_cuda --json $O/$d/coll_$n.json "$@" > $O/$d/coll_$n.txt 2>&1; echo "coll $n rc $? $(( $(date +%s) - t0 )) s"
}
G="2 2 1 15 14 13 12 10 10"
ALL="--colls allreduce,reduce,bcast,allgather,alltoall --impls mpixst,vendor --graph"
d=job1; mkdir -p $O/$d; cat .carry/commit25.txt > $O/$d/commit.txt
{ nvidia-smi -L; nvidia-smi topo -m; nproc; nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1; } > $O/$d/machine.txt 2>&1; head -4 $O/$d/machine.txt
if [ ! -x $B/coll_bench_cuda ]; then touch kernels/*.cu kernels/*.h; fi
cmake -S . -B build-gpu $cfg > $O/$d/cfg.log 2>&1 && cmake --build build-gpu -j 16 > $O/$d/build.log 2>&1; echo "build rc $? $(( $(date +%s) - t0 )) s"; tail -1 $O/$d/build.log
coll $d small4_1 4 150 $ALL --iters 50 --warmup 5 --min-bytes 8 --max-bytes 65536 --step 2
pack $d
coll $d small2_1 2 120 $ALL --iters 50 --warmup 5 --min-bytes 8 --max-bytes 65536 --step 2
coll $d large4_1 4 150 $ALL --iters 20 --warmup 3 --min-bytes 1048576 --max-bytes 134217728 --step 2
pack $d
for r in 1 2; do
  run_faces $d nccl_$r - --mode nccl --graph $G -100
  run_faces $d st_def_$r - --mode st --graph $G -100
  run_faces $d st_spread128_$r MPIX_ST_COPY_SPREAD_BLOCKS=128 --mode st --graph $G -100
  run_faces $d st_spread0_$r MPIX_ST_COPY_SPREAD_BLOCKS=0 --mode st --graph $G -100
  run_faces $d st_kib8_$r MPIX_ST_COPY_BLOCK_KIB=8 --mode st --graph $G -100
  run_faces $d st_kib4_$r MPIX_ST_COPY_BLOCK_KIB=4 --mode st --graph $G -100
  run_faces $d per_def_$r - --mode st --graph --periodic $G -100
  run_faces $d per_kib4_$r MPIX_ST_COPY_BLOCK_KIB=4 --mode st --graph --periodic $G -100
  pack $d
done
coll $d small4_2 4 150 $ALL --iters 50 --warmup 5 --min-bytes 8 --max-bytes 65536 --step 2
echo "total: $(( $(date +%s) - t0 )) s"
pack $d; ls $OUT
