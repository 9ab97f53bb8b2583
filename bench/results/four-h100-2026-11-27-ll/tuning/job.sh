#!/usr/bin/env bash
# 4 H100s: rma_bench idle-stream host times (2 GPUs), alltoall/allgather 16-128 MiB tuning sweep vs NCCL.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
mkdir -p /tmp/o7; O=/tmp/o7; rm -rf $O/*
nvidia-smi -L > $O/machine.txt; cat $O/machine.txt
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF -DMPIX_ST_BUILD_TESTS=OFF"
t0=$(date +%s)
touch kernels/*.cu kernels/*.h
cmake -S . -B build-gpu $cfg > $O/cfg.log 2>&1 && cmake --build build-gpu -j 16 --target coll_bench_cuda rma_bench_cuda > $O/build.log 2>&1; echo "build rc $? $(( $(date +%s) - t0 )) s"; tail -2 $O/build.log
git log --oneline -1 > $O/commit.txt
pack() { cd $O && tar czf $OUT/n7.tgz * 2>/dev/null; cd - > /dev/null; }
for k in 1 2; do
  timeout 90 mpiexec -n 2 --bind-to none build-gpu/examples/bench/rma_bench_cuda --graph --iters 2000 --host-iters 300 --sizes-mib 64 --json $O/rma_$k.json > $O/rma_$k.txt 2>&1; echo "rma $k rc $? $(( $(date +%s) - t0 )) s"
  grep -iE "idle|host time|ratio|raw epoch|st: epoch" $O/rma_$k.txt
done
pack
CB=build-gpu/examples/bench/coll_bench_cuda
run() { # name env...
  local name=$1; shift
  env "$@" timeout 60 mpiexec -n 4 --bind-to none $CB --colls alltoall,allgather --impls mpixst,vendor --iters 20 --warmup 3 --min-bytes 16777216 --max-bytes 134217728 --step 2 --json $O/sw_$name.json > $O/sw_$name.txt 2>&1
  echo "sweep $name rc $? $(( $(date +%s) - t0 )) s"
  grep -E "^ *(alltoall|allgather) " $O/sw_$name.txt | grep -E "134217728|67108864" | head -12
  pack
}
run base0
run half8 MPIX_ST_COLL_SCRATCH_KIB=8192
run half4 MPIX_ST_COLL_SCRATCH_KIB=4096
run ch64 MPIX_ST_COLL_CHANNELS=64
run ch32 MPIX_ST_COLL_CHANNELS=32
run ch64h8 MPIX_ST_COLL_CHANNELS=64 MPIX_ST_COLL_SCRATCH_KIB=8192
run chk64 MPIX_ST_COLL_CHANNEL_KIB=64
run base1
echo "total: $(( $(date +%s) - t0 )) s"
