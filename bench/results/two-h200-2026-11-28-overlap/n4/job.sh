#!/usr/bin/env bash
# Session 18 job 4: the whole gpu label on the head (af9cf03's code; docs after it).
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
T0=$(date +%s); R=/tmp/n4; mkdir -p $R
{ nvidia-smi -L; nproc; } > $R/machine.txt 2>&1
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF"
cmake -S . -B build $CF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest > $R/configure.txt 2>&1
cmake --build build -j$(nproc) > $R/build.txt 2>&1 || { tail -40 $R/build.txt; exit 1; }
echo "build $(( $(date +%s) - T0 )) s"
mpiexec -n 2 --bind-to none build/examples/faces/faces_cuda --mode st --graph --launch-overlap 2 1 1 4 3 2 6 1 2 10 > $R/faces_overlap.txt 2>&1
grep -h "launch-overlap\|passed" $R/faces_overlap.txt
(cd build && timeout $(( 585 - ($(date +%s) - T0) )) ctest -L gpu --output-on-failure --timeout 90) > $R/ctest_gpu.txt 2>&1
echo "ctest rc $? at $(( $(date +%s) - T0 )) s"
grep -E "tests passed|Failed|\*\*\*|Total Test" $R/ctest_gpu.txt | tail -15
tar czf $OUT/n4.tgz -C $R .
