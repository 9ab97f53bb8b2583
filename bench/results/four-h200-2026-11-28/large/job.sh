#!/usr/bin/env bash
# Session 16 job 8: large allreduce on 2 and 4 ranks, head (563c094) against 52e5d96 (before every
# path was inlined into a kernel of its own), alternated twice; the 2-rank 256 MiB ring measured 243 GB/s today.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
T0=$(date +%s); R=/tmp/r8; mkdir -p $R
{ nvidia-smi -L; nproc; } > $R/machine.txt 2>&1
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF"
rm -rf /tmp/base && mkdir -p /tmp/base && tar xzf .carry/base52e.tgz -C /tmp/base
( cd /tmp/base && cmake -S . -B build $CF -DCMAKE_PREFIX_PATH=$OLDPWD/.carry/doctest > $R/conf-base.txt 2>&1 &&
  cmake --build build -j32 --target coll_bench_cuda > $R/build-base.txt 2>&1; echo "base $?" >> $R/builds ) &
cmake -S . -B build $CF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest > $R/configure.txt 2>&1
cmake --build build -j32 --target coll_bench_cuda > $R/build.txt 2>&1; echo "new $?" >> $R/builds
wait; cat $R/builds; echo "build $(( $(date +%s) - T0 )) s"
run() { local name=$1; shift; timeout 60 "$@" > $R/$name.txt 2>&1; echo "$name rc $? $(( $(date +%s) - T0 )) s"; }
A="--colls allreduce,reduce,bcast --impls mpixst,vendor --auto-only --iters 20 --warmup 3 --min-bytes 16777216 --max-bytes 268435456 --step 4"
for i in 1 2; do
  for n in 2 4; do
    run base.n$n.$i mpiexec -n $n --bind-to none /tmp/base/build/examples/bench/coll_bench_cuda $A --json $R/base.n$n.$i.json
    run new.n$n.$i mpiexec -n $n --bind-to none build/examples/bench/coll_bench_cuda $A --json $R/new.n$n.$i.json
  done
done
for f in base.n2.1 new.n2.1 base.n2.2 new.n2.2 base.n4.1 new.n4.1; do echo "== $f"; grep -E "^(allreduce|reduce|bcast)" $R/$f.txt | grep -E "67108864|268435456"; done
tar czf $OUT/r8.tgz -C $R .
