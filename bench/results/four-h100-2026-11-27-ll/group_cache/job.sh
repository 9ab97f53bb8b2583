#!/usr/bin/env bash
# 2 GPUs: eager host time per MPIX call with remembered group translations (HEAD) against the
# commit before (base3), alternating runs in one job.
export HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt NCCL_NVLS_ENABLE=0
mkdir -p /tmp/o10; O=/tmp/o10; rm -rf $O/*
nvidia-smi -L > $O/machine.txt; head -2 $O/machine.txt
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF -DMPIX_ST_BUILD_TESTS=OFF"
t0=$(date +%s)
touch kernels/*.cu kernels/*.h .carry/base3/kernels/*
(cmake -S .carry/base3 -B build-base $cfg > $O/cfg_base.log 2>&1 && cmake --build build-base -j 8 --target rma_bench_cuda > $O/build_base.log 2>&1; echo "base build rc $? $(( $(date +%s) - t0 )) s") &
cmake -S . -B build-gpu $cfg > $O/cfg.log 2>&1 && cmake --build build-gpu -j 8 --target rma_bench_cuda > $O/build.log 2>&1; echo "build rc $? $(( $(date +%s) - t0 )) s"
wait
git log --oneline -1 > $O/commit.txt
pack() { cd $O && tar czf $OUT/n10.tgz * 2>/dev/null; cd - > /dev/null; }
for k in 1 2 3; do
  for v in new base; do
    B=build-gpu; [ $v = base ] && B=build-base
    timeout 60 mpiexec -n 2 --bind-to none $B/examples/bench/rma_bench_cuda --iters 2000 --host-iters 300 --sizes-mib 1 --json $O/rma_${v}_$k.json > $O/rma_${v}_$k.txt 2>&1; echo "rma $v $k rc $? $(( $(date +%s) - t0 )) s"
    grep -E "^host time per MPIX|idle stream|ratio host time|ratio idle|ratio st / raw" $O/rma_${v}_$k.txt
  done
  pack
done
echo "total: $(( $(date +%s) - t0 )) s"
