#!/usr/bin/env bash
# 4-rank gpu tests on 2 H100s under MPS (two ranks per GPU): line puts with several origins per
# target and the ring allgather with 4 ranks, on CUDA.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
mkdir -p /tmp/o; O=/tmp/o
nvidia-smi -L > $O/machine.txt; head -2 $O/machine.txt
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest"
t0=$(date +%s)
touch kernels/*.cu kernels/*.h examples/bench/rma_bench.cpp
cmake -S . -B build-gpu $cfg > $O/cfg.log 2>&1 || { tail -30 $O/cfg.log; exit 1; }
cmake --build build-gpu -j 64 > $O/build.log 2>&1 || { grep -E "error|FAILED" -A3 $O/build.log | head -30; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps_pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps_log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d && echo "mps started"
timeout 330 ctest --test-dir build-gpu -L gpu -LE internode -R np4 -j1 --timeout 120 > $O/ctest4.txt 2>&1; echo "ctest rc $?"
tail -4 $O/ctest4.txt; grep -E "Failed|Timeout|Not Run" $O/ctest4.txt
echo quit | nvidia-cuda-mps-control; echo "mps stopped"
echo "total: $(( $(date +%s) - t0 )) s"
cd $O && tar czf $OUT/n6.tgz * 2>/dev/null; ls $OUT
