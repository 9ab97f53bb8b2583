#!/usr/bin/env bash
# 4 GPUs: the gpu suites at 4 ranks and launch_trace with 256 KiB puts; Faces 2x2x1 (comm, periodic,
# datatypes, sums, large) st --graph against rma and nccl --graph; collectives at 4 ranks against NCCL.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
O=/tmp/o24; mkdir -p $O
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest"
t0=$(date +%s)
pack() { cd $O && tar czf $OUT/n24_$1.tgz $1 2>/dev/null; cd - > /dev/null; }
B=build-gpu/examples/bench
F=build-gpu/examples/faces/faces_cuda
run_faces() { # dir, name, trace(0/1), args...
  local d=$1 n=$2 tr=$3; shift 3
  if [ "$tr" = 1 ]; then mkdir -p $O/$d/tr_$n; export MPIX_ST_TRACE=$O/$d/tr_$n/t; else unset MPIX_ST_TRACE; fi
  timeout 90 mpiexec -n 4 --bind-to none $F --json $O/$d/faces_$n.json "$@" > $O/$d/faces_$n.txt 2>&1; echo "faces $n rc $? $(( $(date +%s) - t0 )) s"
  unset MPIX_ST_TRACE
  grep -E "mode=.*per_exchange_us" $O/$d/faces_$n.txt | sed -E 's/.*mode=([a-z0-9]+).*per_exchange_us avg=([0-9.]+).*/  \1 \2/' | tr '\n' ' '; echo
  if [ "$tr" = 1 ]; then python3 scripts/trace-summary.py $O/$d/tr_$n/t.*.csv --skip 200 --json $O/$d/tr_$n/summary.json > $O/$d/tr_$n/summary.txt 2>&1; head -20 $O/$d/tr_$n/summary.txt; rm -f $O/$d/tr_$n/t.*.csv; fi
}
coll() { # dir, name, timeout, args...
  local d=$1 n=$2 t=$3; shift 3
  timeout $t mpiexec -n 4 --bind-to none $B/coll_bench_cuda --json $O/$d/coll_$n.json "$@" > $O/$d/coll_$n.txt 2>&1; echo "coll $n rc $? $(( $(date +%s) - t0 )) s"
}
G="2 2 1 15 14 13 12 10 10"
case "$1" in
build)
  d=job1; mkdir -p $O/$d; cat .carry/commit24.txt > $O/$d/commit.txt
  { nvidia-smi -L; nvidia-smi topo -m; nproc; nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1; } > $O/$d/machine.txt 2>&1; head -4 $O/$d/machine.txt
  touch kernels/*.cu kernels/*.h
  cmake -S . -B build-gpu $cfg > $O/$d/cfg.log 2>&1 && cmake --build build-gpu -j 16 > $O/$d/build.log 2>&1; echo "build rc $? $(( $(date +%s) - t0 )) s"; tail -2 $O/$d/build.log
  timeout 90 ctest --test-dir build-gpu -L gpu -R "launch_trace|graph_merge.nomerge" -j2 --timeout 60 > $O/$d/ctest_np2.txt 2>&1; echo "ctest np2 rc $? $(( $(date +%s) - t0 )) s"; grep -E "tests passed|Failed|Timeout|Not Run|\*\*\*" $O/$d/ctest_np2.txt
  timeout 200 ctest --test-dir build-gpu -L gpu -LE internode -R "np4|2x2x1" -E "staged|mirrored|vnode" -j1 --timeout 60 > $O/$d/ctest_np4.txt 2>&1; echo "ctest np4 rc $? $(( $(date +%s) - t0 )) s"; grep -E "tests passed|Failed|Timeout|Not Run|\*\*\*" $O/$d/ctest_np4.txt
  pack $d
  run_faces $d comm_1 0 --mode all --graph $G -100
  run_faces $d per_1 0 --mode all --graph --periodic $G -100
  pack $d ;;
faces)
  d=job2; mkdir -p $O/$d
  run_faces $d comm_2 0 --mode all --graph $G -100
  run_faces $d per_2 0 --mode all --graph --periodic $G -100
  run_faces $d dt_1 0 --mode all --graph --datatypes $G -100
  run_faces $d dtper_1 0 --mode all --graph --datatypes --periodic $G -100
  pack $d
  run_faces $d sums_1 0 --mode all --graph $G 100
  run_faces $d sumsper_1 0 --mode all --graph --periodic $G 100
  run_faces $d st_trace 1 --mode st --graph $G -100
  run_faces $d large_1 0 --mode all --graph 2 2 1 95 94 93 12 3 1 10
  run_faces $d largeper_1 0 --mode all --graph --periodic 2 2 1 95 94 93 12 3 1 10
  pack $d ;;
coll)
  d=job3; mkdir -p $O/$d
  coll $d small_1 200 --colls allreduce,reduce,bcast,allgather,alltoall --impls mpixst,vendor,mpi --graph --iters 50 --warmup 5 --min-bytes 8 --max-bytes 65536 --step 2
  pack $d
  coll $d large_1 200 --colls allreduce,reduce,bcast,allgather,alltoall --impls mpixst,vendor --graph --iters 20 --warmup 3 --min-bytes 1048576 --max-bytes 134217728 --step 2
  pack $d
  pack $d ;;
esac
echo "total: $(( $(date +%s) - t0 )) s"
ls $OUT
