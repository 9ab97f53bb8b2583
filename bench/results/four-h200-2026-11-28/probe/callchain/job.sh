#!/usr/bin/env bash
# Session 16 job 1: where a replayed 8-byte collective's time goes (coll_bench vs call_chain).
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
T0=$(date +%s); R=/tmp/r; mkdir -p $R
nvidia-smi -L > $R/machine.txt; nvidia-smi topo -m >> $R/machine.txt 2>&1
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest > $R/configure.txt 2>&1
cmake --build build -j16 --target coll_bench_cuda call_chain_mpi_cuda > $R/build.txt 2>&1 || { tail -40 $R/build.txt; exit 1; }
echo "build $(( $(date +%s) - T0 )) s"
B=build/examples/bench/coll_bench_cuda
CC=build/examples/bench/call_chain_mpi_cuda
run() { local name=$1; shift; timeout 90 "$@" > $R/$name.txt 2>&1; echo "$name rc $? $(( $(date +%s) - T0 )) s"; }
run cc64 mpiexec -n 4 --bind-to none $CC 20000 --json $R/cc64.json
run cc128 mpiexec -n 4 --bind-to none $CC 20000 --threads 128 --json $R/cc128.json
for it in 50 1000 50 1000; do
  run cb$it.$RANDOM mpiexec -n 4 --bind-to none $B --colls reduce,allreduce,bcast --impls mpixst,vendor --graph --auto-only \
    --iters $it --warmup 5 --min-bytes 8 --max-bytes 8
done
run trace mpiexec -n 4 --bind-to none -x MPIX_ST_TRACE=$R/tr $B --colls reduce --impls mpixst --graph --auto-only \
    --iters 1000 --warmup 5 --min-bytes 8 --max-bytes 8
python3 scripts/trace-summary.py $R/tr.*.csv --skip 2006 > $R/trsum.txt 2>&1
run wd0 mpiexec -n 4 --bind-to none -x MPIX_ST_WATCHDOG_MS=0 $B --colls reduce --impls mpixst --graph --auto-only \
    --iters 1000 --warmup 5 --min-bytes 8 --max-bytes 8
head -50 $R/cc64.txt $R/cc128.txt; grep -h "graph\|mpixst \|vendor " $R/cb*.txt; cat $R/trsum.txt | head -40
tar czf $OUT/r.tgz -C $R .
