#!/usr/bin/env bash
# Session 20 job 4 (2 x H200): the gpu tests that exercise the line hint on 9ed44a7 (put_get_sizes'
# small puts in a row, random epochs, graph replays), 2 ranks.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
T0=$(date +%s); R=/tmp/s4; mkdir -p $R
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF"
cmake -S . -B build $CF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest > $R/configure.txt 2>&1
cmake --build build -j$(nproc) --target test_put_get_sizes_cuda test_random_epochs_cuda test_graph_replay_cuda > $R/build.txt 2>&1 || { tail -30 $R/build.txt; exit 1; }
echo "build $(( $(date +%s) - T0 )) s"
(cd build && ctest -L gpu -R "gpu.put_get_sizes.np2|gpu.random_epochs.np2|gpu.random_epochs.nolines.np2|gpu.graph_replay.np2|gpu.graph_replay.1000.np2" --output-on-failure --timeout 90) > $R/ctest_gpu.txt 2>&1
echo "ctest rc $? at $(( $(date +%s) - T0 )) s"
grep -E "tests passed|Failed|\*\*\*|Test +#" $R/ctest_gpu.txt | tail -12
tar czf $OUT/s4.tgz -C $R .
