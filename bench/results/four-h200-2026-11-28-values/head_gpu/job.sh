#!/usr/bin/env bash
# Session 19 job 1: the whole gpu label on the head (68bd68c: the skip word's kernel store and
# watchdog scenario F never ran on GPUs before), 4 GPUs when lent.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
T0=$(date +%s); R=/tmp/p1; mkdir -p $R
{ nvidia-smi -L; nvidia-smi topo -m; nproc; } > $R/machine.txt 2>&1
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF"
cmake -S . -B build $CF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest > $R/configure.txt 2>&1
cmake --build build -j$(nproc) > $R/build.txt 2>&1 || { tail -40 $R/build.txt; exit 1; }
echo "build $(( $(date +%s) - T0 )) s"
(cd build && timeout $(( 585 - ($(date +%s) - T0) )) ctest -L gpu --output-on-failure --timeout 90 -j1) > $R/ctest_gpu.txt 2>&1
echo "ctest rc $? at $(( $(date +%s) - T0 )) s"
grep -E "tests passed|Failed|\*\*\*|Total Test" $R/ctest_gpu.txt | tail -15
tar czf $OUT/p1.tgz -C $R .
