#!/usr/bin/env bash
# Session 16 job 5: where the 1-rank 8-byte reduce's 1.5 us go: 'waited' stamped at point K of the kLL path.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
T0=$(date +%s); R=/tmp/r5; mkdir -p $R
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest"
for k in 1 2 3 4 5; do
  ( cmake -S . -B build-d$k $CF -DCMAKE_CUDA_FLAGS=-DMPIX_DIAG_POINT=$k > $R/conf$k.txt 2>&1 &&
    cmake --build build-d$k -j12 --target coll_bench_cuda > $R/build$k.txt 2>&1; echo "d$k $?" >> $R/builds ) &
done
( cmake --build build -j8 --target coll_bench_cuda > $R/build0.txt 2>&1; echo "d0 $?" >> $R/builds ) &
wait; cat $R/builds; echo "build $(( $(date +%s) - T0 )) s"
cuobjdump -sass build/libmpixst_cuda.so > $R/sass.txt 2>&1; ls -la $R/sass.txt
run() { local name=$1; shift; timeout 60 "$@" > $R/$name.txt 2>&1; echo "$name rc $? $(( $(date +%s) - T0 )) s"; }
for k in 1 2 3 4 5; do
  for n in 1 4; do
    run t$k.n$n mpiexec -n $n --bind-to none -x MPIX_ST_TRACE=$R/t$k.n$n build-d$k/examples/bench/coll_bench_cuda --colls reduce --impls mpixst --graph --auto-only --iters 1000 --warmup 5 --min-bytes 8 --max-bytes 8
    python3 scripts/trace-summary.py $R/t$k.n$n.*.csv --skip 2006 > $R/s$k.n$n.txt 2>&1
    echo "== point $k n$n"; grep -h "collective\|between" $R/s$k.n$n.txt; grep -h graph $R/t$k.n$n.txt
  done
done
rm -f $R/*.csv
tar czf $OUT/r5.tgz -C $R .
