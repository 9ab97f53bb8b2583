#!/usr/bin/env bash
# Session 16 job 6: geometry precomputed on the host (no 64-bit division before a call's first wait)
# against 1b7c939, alternated twice, small sizes, NCCL in every run; then the whole gpu label.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
T0=$(date +%s); R=/tmp/r6; mkdir -p $R
{ nvidia-smi -L; nvidia-smi topo -m; nproc; } > $R/machine.txt 2>&1
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF"
rm -rf /tmp/base && mkdir -p /tmp/base && tar xzf .carry/base1b7.tgz -C /tmp/base
( cd /tmp/base && cmake -S . -B build $CF -DCMAKE_PREFIX_PATH=$OLDPWD/.carry/doctest > $R/conf-base.txt 2>&1 &&
  cmake --build build -j24 --target coll_bench_cuda > $R/build-base.txt 2>&1; echo "base $?" >> $R/builds ) &
cmake -S . -B build $CF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest > $R/configure.txt 2>&1
cmake --build build -j40 > $R/build.txt 2>&1; echo "new $?" >> $R/builds
wait; cat $R/builds; grep -q "new 0" $R/builds || { tail -40 $R/build.txt; exit 1; }
echo "build $(( $(date +%s) - T0 )) s"
run() { local name=$1; shift; timeout 90 "$@" > $R/$name.txt 2>&1; echo "$name rc $? $(( $(date +%s) - T0 )) s"; }
A="--colls allreduce,reduce,bcast,allgather,alltoall --impls mpixst,vendor --graph --auto-only --iters 100 --warmup 5 --min-bytes 8 --max-bytes 65536 --step 4"
for i in 1 2; do
  run base$i mpiexec -n 4 --bind-to none /tmp/base/build/examples/bench/coll_bench_cuda $A --json $R/base$i.json
  run new$i mpiexec -n 4 --bind-to none build/examples/bench/coll_bench_cuda $A --json $R/new$i.json
done
N1="--colls reduce,allreduce,bcast --impls mpixst --graph --auto-only --iters 1000 --warmup 5 --min-bytes 8 --max-bytes 8"
run base_n1 mpiexec -n 1 --bind-to none /tmp/base/build/examples/bench/coll_bench_cuda $N1
run new_n1 mpiexec -n 1 --bind-to none build/examples/bench/coll_bench_cuda $N1
run new_n2 mpiexec -n 2 --bind-to none build/examples/bench/coll_bench_cuda $N1
run base_n2 mpiexec -n 2 --bind-to none /tmp/base/build/examples/bench/coll_bench_cuda $N1
grep -h "graph" $R/base_n1.txt $R/new_n1.txt $R/base_n2.txt $R/new_n2.txt
python3 scripts/compare-coll.py $R/base1.json $R/new1.json $R/base2.json $R/new2.json > $R/compare.txt 2>&1; tail -30 $R/compare.txt
(cd build && timeout $(( 590 - ($(date +%s) - T0) )) ctest -L gpu --output-on-failure --timeout 120) > $R/ctest_gpu.txt 2>&1
echo "ctest rc $? at $(( $(date +%s) - T0 )) s"
grep -E "tests passed|Failed|\*\*\*" $R/ctest_gpu.txt | tail -15
tar czf $OUT/r6.tgz -C $R .
