#!/usr/bin/env bash
# 2 GPUs: host-time breakdown of eager MPIX epoch calls (instrumented copy of HEAD in .carry/prof).
export HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
mkdir -p /tmp/o6; O=/tmp/o6; rm -rf $O/*
nvidia-smi -L | head -2
t0=$(date +%s)
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF -DMPIX_ST_BUILD_TESTS=OFF"
cmake -S .carry/prof -B build-prof $cfg > $O/cfg.log 2>&1 && cmake --build build-prof -j 16 --target rma_bench_cuda > $O/build.log 2>&1; echo "build rc $? $(( $(date +%s) - t0 )) s"; tail -2 $O/build.log
for k in 1 2; do
timeout 60 mpiexec -n 2 --bind-to none build-prof/examples/bench/rma_bench_cuda --iters 2000 --host-iters 300 --sizes-mib 1 > $O/rma_prof_$k.txt 2>&1; echo "rma rc $? $(( $(date +%s) - t0 )) s"
grep -E "host time|raw epoch|st: epoch|ratio st / raw|prof" $O/rma_prof_$k.txt
done
cp .carry/prof/src/core/prof.h $O/
cd $O && tar czf $OUT/n6.tgz *
