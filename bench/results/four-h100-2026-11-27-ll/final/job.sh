#!/usr/bin/env bash
# 4 H100s: final code (kLL two-shot, 64 line areas, one-round auto, alltoall 8 MiB halves):
# collective gpu tests np2/np4, coll_bench 8 B-128 MiB against NCCL on 4 and 2 ranks.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
mkdir -p /tmp/o9; O=/tmp/o9; rm -rf $O/*
nvidia-smi -L > $O/machine.txt; head -1 $O/machine.txt
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest"
t0=$(date +%s)
touch kernels/*.cu kernels/*.h
cmake -S . -B build-gpu $cfg > $O/cfg.log 2>&1 && cmake --build build-gpu -j 16 --target coll_bench_cuda test_collectives_cuda test_enqueue_api_cuda mpixst_cuda > $O/build.log 2>&1; echo "build rc $? $(( $(date +%s) - t0 )) s"; tail -2 $O/build.log
git log --oneline -1 > $O/commit.txt; git status --short >> $O/commit.txt
pack() { cd $O && tar czf $OUT/n9.tgz * 2>/dev/null; cd - > /dev/null; }
CB=build-gpu/examples/bench/coll_bench_cuda
for np in 4 2; do
  timeout 60 mpiexec -n $np --bind-to none $CB --impls mpixst,vendor --graph --iters 50 --warmup 5 --min-bytes 8 --max-bytes 65536 --step 4 --json $O/small$np.json > $O/small$np.txt 2>&1; echo "small$np rc $? $(( $(date +%s) - t0 )) s"; grep -c " NO" $O/small$np.txt
  timeout 60 mpiexec -n $np --bind-to none $CB --impls mpixst,vendor --graph --iters 50 --warmup 5 --min-bytes 32768 --max-bytes 4194304 --step 2 --json $O/mid$np.json > $O/mid$np.txt 2>&1; echo "mid$np rc $? $(( $(date +%s) - t0 )) s"; grep -c " NO" $O/mid$np.txt
  pack
done
timeout 100 mpiexec -n 4 --bind-to none $CB --impls mpixst,vendor --iters 20 --warmup 3 --min-bytes 1048576 --max-bytes 134217728 --step 2 --json $O/large4.json > $O/large4.txt 2>&1; echo "large4 rc $? $(( $(date +%s) - t0 )) s"; grep -c " NO" $O/large4.txt
pack
timeout 120 ctest --test-dir build-gpu -L gpu -LE internode -R "coll|enqueue" -E np4 -j2 --timeout 100 > $O/ctest_coll2.txt 2>&1; echo "ctest np2 rc $? $(( $(date +%s) - t0 )) s"; grep -E "tests passed|Failed|Timeout|Not Run" $O/ctest_coll2.txt
pack
timeout 150 ctest --test-dir build-gpu -L gpu -LE internode -R "(coll|enqueue).*np4" -j1 --timeout 100 > $O/ctest_coll4.txt 2>&1; echo "ctest np4 rc $? $(( $(date +%s) - t0 )) s"; grep -E "tests passed|Failed|Timeout|Not Run" $O/ctest_coll4.txt
pack
echo "total: $(( $(date +%s) - t0 )) s"
