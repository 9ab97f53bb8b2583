#!/usr/bin/env bash
# 2 H100s: the pipelined allgather/alltoall's last phase without a fence (HEAD) against ff63fdf
# (.carry/base4): collective gpu tests (np2; np4 under MPS) and coll_bench, builds alternating.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
mkdir -p /tmp/o; O=/tmp/o; rm -f $O/*
nvidia-smi -L > $O/machine.txt; head -2 $O/machine.txt
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest"
t0=$(date +%s)
touch kernels/*.cu kernels/*.h
(cmake -S . -B build-gpu $cfg > $O/cfg.log 2>&1 && cmake --build build-gpu -j 10 --target coll_bench_cuda test_collectives_cuda test_enqueue_api_cuda mpixst_cuda > $O/build.log 2>&1; echo "new build rc $?"; tail -3 $O/build.log) &
(cmake -S .carry/base4 -B build-base $cfg -DMPIX_ST_BUILD_TESTS=OFF > $O/cfg_base.log 2>&1 && cmake --build build-base -j 6 --target coll_bench_cuda > $O/build_base.log 2>&1; echo "base build rc $?") &
wait
echo "builds: $(( $(date +%s) - t0 )) s"
timeout 60 ctest --test-dir build-gpu -L gpu -LE internode -R "coll|enqueue" -E np4 -j1 --timeout 50 > $O/ctest_coll2.txt 2>&1; echo "ctest np2 rc $?"; grep -E "tests passed|Failed|Timeout|Not Run" $O/ctest_coll2.txt
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps_pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps_log; mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d
timeout 60 ctest --test-dir build-gpu -L gpu -LE internode -R "(coll|enqueue).*np4" -j1 --timeout 50 > $O/ctest_coll4_mps.txt 2>&1; echo "ctest np4 rc $?"; grep -E "tests passed|Failed|Timeout|Not Run" $O/ctest_coll4_mps.txt
echo quit | nvidia-cuda-mps-control
unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
CB="--colls allgather,alltoall --impls mpixst,vendor --iters 50 --warmup 5 --graph --min-bytes 8 --max-bytes 2097152 --step 8"
for k in 1 2; do for b in base gpu; do
  timeout 60 mpiexec -n 2 --bind-to none -x MPIX_ST_COLL_PROTOCOL=simple build-$b/examples/bench/coll_bench_cuda $CB --json $O/simple_${b}_$k.json > $O/simple_${b}_$k.txt 2>&1; echo "simple $b $k rc $?"
done; done
for b in base gpu; do
  timeout 60 mpiexec -n 2 --bind-to none build-$b/examples/bench/coll_bench_cuda $CB --json $O/auto_${b}.json > $O/auto_${b}.txt 2>&1; echo "auto $b rc $?"
done
echo "total: $(( $(date +%s) - t0 )) s"
cd $O && tar czf $OUT/n13.tgz *.txt *.json 2>/dev/null; ls $OUT
