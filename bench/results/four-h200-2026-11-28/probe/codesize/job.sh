#!/usr/bin/env bash
# Session 16 job 3: is the replayed small call's extra time the kernel's code size? float-only diag build vs normal.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
T0=$(date +%s); R=/tmp/r3; mkdir -p $R
nvidia-smi -L > $R/machine.txt
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest"
cmake -S . -B build $CF > $R/configure.txt 2>&1
cmake -S . -B build-diag $CF -DCMAKE_CUDA_FLAGS=-DMPIX_DIAG_ONLY_FLOAT > $R/configure-diag.txt 2>&1
(cmake --build build -j8 --target coll_bench_cuda call_chain_mpi_cuda > $R/build.txt 2>&1; echo done > $R/b1) &
cmake --build build-diag -j8 --target coll_bench_cuda > $R/build-diag.txt 2>&1 || { tail -30 $R/build-diag.txt; exit 1; }
wait; cat $R/b1 || { tail -30 $R/build.txt; exit 1; }
echo "build $(( $(date +%s) - T0 )) s"
ls -la build/lib*/libmpix* build-diag/lib*/libmpix* build/*.so build-diag/*.so 2>/dev/null | head
run() { local name=$1; shift; timeout 90 "$@" > $R/$name.txt 2>&1; echo "$name rc $? $(( $(date +%s) - T0 )) s"; }
A="--colls reduce,allreduce,bcast,allgather --impls mpixst --graph --auto-only --iters 1000 --warmup 5 --min-bytes 8 --max-bytes 8"
for k in 1 2; do
  run normal$k mpiexec -n 4 --bind-to none build/examples/bench/coll_bench_cuda $A
  run diag$k mpiexec -n 4 --bind-to none build-diag/examples/bench/coll_bench_cuda $A
done
run nooverlap mpiexec -n 4 --bind-to none -x MPIX_ST_LAUNCH_OVERLAP=0 build/examples/bench/coll_bench_cuda $A
run normal_n2 mpiexec -n 2 --bind-to none build/examples/bench/coll_bench_cuda $A
run diag_n2 mpiexec -n 2 --bind-to none build-diag/examples/bench/coll_bench_cuda $A
run cc2 mpiexec -n 2 --bind-to none build/examples/bench/call_chain_mpi_cuda 20000
run trdiag mpiexec -n 4 --bind-to none -x MPIX_ST_TRACE=$R/td build-diag/examples/bench/coll_bench_cuda --colls reduce --impls mpixst --graph --auto-only --iters 1000 --warmup 5 --min-bytes 8 --max-bytes 8
python3 scripts/trace-summary.py $R/td.*.csv --skip 2006 > $R/tdsum.txt 2>&1
for f in normal1 diag1 normal2 diag2 nooverlap normal_n2 diag_n2; do echo "== $f"; grep graph $R/$f.txt; done
cat $R/cc2.txt $R/tdsum.txt
tar czf $OUT/r3.tgz -C $R .
