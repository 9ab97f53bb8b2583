#!/usr/bin/env bash
# Session 16 job 4: the small call's floor on one rank, and a traced 2-rank reduce.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
T0=$(date +%s); R=/tmp/r4; mkdir -p $R
cmake --build build -j16 --target coll_bench_cuda hop_latency_cuda > $R/build.txt 2>&1 || { tail -30 $R/build.txt; exit 1; }
run() { local name=$1; shift; timeout 90 "$@" > $R/$name.txt 2>&1; echo "$name rc $? $(( $(date +%s) - T0 )) s"; }
A="--colls reduce,allreduce,bcast --impls mpixst,vendor --graph --auto-only --iters 1000 --warmup 5 --min-bytes 8 --max-bytes 8"
run n1 mpiexec -n 1 --bind-to none build/examples/bench/coll_bench_cuda $A
run n1tr mpiexec -n 1 --bind-to none -x MPIX_ST_TRACE=$R/t1 build/examples/bench/coll_bench_cuda --colls reduce --impls mpixst --graph --auto-only --iters 1000 --warmup 5 --min-bytes 8 --max-bytes 8
python3 scripts/trace-summary.py $R/t1.*.csv --skip 2006 > $R/t1sum.txt 2>&1
run n2tr mpiexec -n 2 --bind-to none -x MPIX_ST_TRACE=$R/t2 build/examples/bench/coll_bench_cuda --colls reduce --impls mpixst --graph --auto-only --iters 1000 --warmup 5 --min-bytes 8 --max-bytes 8
python3 scripts/trace-summary.py $R/t2.*.csv --skip 2006 > $R/t2sum.txt 2>&1
run hop build/examples/bench/hop_latency_cuda
grep -h graph $R/n1.txt; cat $R/t1sum.txt $R/t2sum.txt; tail -15 $R/hop.txt
tar czf $OUT/r4.tgz -C $R .
