#!/usr/bin/env bash
# 4 H100s: the final code (rotated pushes, own block last, kLL reduce pushes in rank order, auto
# ring thresholds): collective gpu tests, coll_bench small (x2) and 1-128 MiB (x2) against NCCL.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
mkdir -p /tmp/o4; O=/tmp/o4; rm -rf $O/*
nvidia-smi -L > $O/machine.txt; head -1 $O/machine.txt
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest"
t0=$(date +%s)
touch kernels/*.cu kernels/*.h
cmake -S . -B build-gpu $cfg > $O/cfg.log 2>&1 && cmake --build build-gpu -j 16 --target coll_bench_cuda test_collectives_cuda test_enqueue_api_cuda mpixst_cuda > $O/build.log 2>&1; echo "build rc $? $(( $(date +%s) - t0 )) s"; tail -2 $O/build.log
git log --oneline -1 > $O/commit.txt; git status --short >> $O/commit.txt
timeout 90 ctest --test-dir build-gpu -L gpu -LE internode -R "coll|enqueue" -E np4 -j2 --timeout 60 > $O/ctest_coll2.txt 2>&1; echo "ctest np2 rc $?"; grep -E "tests passed|Failed|Timeout|Not Run" $O/ctest_coll2.txt
timeout 90 ctest --test-dir build-gpu -L gpu -LE internode -R "(coll|enqueue).*np4" -j1 --timeout 60 > $O/ctest_coll4.txt 2>&1; echo "ctest np4 rc $?"; grep -E "tests passed|Failed|Timeout|Not Run" $O/ctest_coll4.txt
cd $O && tar czf $OUT/n4.tgz * 2>/dev/null; cd - > /dev/null
CB=build-gpu/examples/bench/coll_bench_cuda
for k in 1 2; do
  timeout 60 mpiexec -n 4 --bind-to none $CB --impls mpixst,vendor --iters 50 --warmup 5 --graph --min-bytes 8 --max-bytes 1048576 --step 4 --json $O/small_$k.json > $O/small_$k.txt 2>&1; echo "small $k rc $? $(( $(date +%s) - t0 )) s"
  timeout 100 mpiexec -n 4 --bind-to none $CB --impls mpixst,vendor --iters 20 --warmup 3 --min-bytes 1048576 --max-bytes 134217728 --step 2 --json $O/large_$k.json > $O/large_$k.txt 2>&1; echo "large $k rc $? $(( $(date +%s) - t0 )) s"
  cd $O && tar czf $OUT/n4.tgz * 2>/dev/null; cd - > /dev/null
done
echo "total: $(( $(date +%s) - t0 )) s"
ls $OUT
