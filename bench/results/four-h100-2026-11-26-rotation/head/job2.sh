#!/usr/bin/env bash
# 4 GPUs, HEAD (built by n1.sh): coll_bench 4 ranks, small (x2) and large; rma_bench 2 ranks;
# Faces large 2x2x1.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
mkdir -p /tmp/o2; O=/tmp/o2; rm -rf $O/*
t0=$(date +%s)
[ -x build-gpu/examples/bench/coll_bench_cuda ] || { echo "no build"; exit 1; }
CB=build-gpu/examples/bench/coll_bench_cuda
for k in 1 2; do
  timeout 170 mpiexec -n 4 --bind-to none $CB --impls mpixst,vendor --iters 50 --warmup 5 --graph --min-bytes 8 --max-bytes 1048576 --step 4 --json $O/small_$k.json > $O/small_$k.txt 2>&1; echo "small $k rc $? $(( $(date +%s) - t0 )) s"
done
timeout 150 mpiexec -n 4 --bind-to none $CB --impls mpixst,vendor --iters 20 --warmup 3 --min-bytes 16777216 --max-bytes 134217728 --step 8 --json $O/large.json > $O/large.txt 2>&1; echo "large rc $? $(( $(date +%s) - t0 )) s"
timeout 60 mpiexec -n 2 --bind-to none build-gpu/examples/bench/rma_bench_cuda --graph --iters 2000 --host-iters 300 --sizes-mib 64 --json $O/rma.json > $O/rma.txt 2>&1; echo "rma rc $? $(( $(date +%s) - t0 )) s"
grep -iE "round trip|host time|ratio|/" $O/rma.txt | head -30
timeout 100 mpiexec -n 4 --bind-to none build-gpu/examples/faces/faces_cuda --mode all --graph --json $O/faces_large.json 2 2 1 95 94 93 12 3 1 10 > $O/faces_large.txt 2>&1; echo "faces large rc $? $(( $(date +%s) - t0 )) s"
grep -E "mode=.*per_exchange_us" $O/faces_large.txt | sed -E 's/.*mode=([a-z0-9]+).*per_exchange_us avg=([0-9.]+).*/  \1 \2/' | tr '\n' ' '; echo
echo "total: $(( $(date +%s) - t0 )) s"
cd $O && tar czf $OUT/n2.tgz * 2>/dev/null; ls $OUT
