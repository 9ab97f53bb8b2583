#!/usr/bin/env bash
# 4 H100s: two-shot lines chosen in run() (fewer spills in run_rounds) against HEAD: small calls
# A/B, alternating; collective gpu tests with the new code.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
mkdir -p /tmp/o11; O=/tmp/o11; rm -rf $O/*
nvidia-smi -L > $O/machine.txt; head -1 $O/machine.txt
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest"
t0=$(date +%s)
touch kernels/*.cu kernels/*.h .carry/base4/kernels/*
(cmake -S .carry/base4 -B build-base $cfg -DMPIX_ST_BUILD_TESTS=OFF > $O/cfg_base.log 2>&1 && cmake --build build-base -j 12 --target coll_bench_cuda > $O/build_base.log 2>&1; echo "base build rc $? $(( $(date +%s) - t0 )) s") &
cmake -S . -B build-gpu $cfg > $O/cfg.log 2>&1 && cmake --build build-gpu -j 16 --target coll_bench_cuda test_collectives_cuda mpixst_cuda > $O/build.log 2>&1; echo "build rc $? $(( $(date +%s) - t0 )) s"; tail -1 $O/build.log
wait
git log --oneline -1 > $O/commit.txt; git status --short >> $O/commit.txt
pack() { cd $O && tar czf $OUT/n11.tgz * 2>/dev/null; cd - > /dev/null; }
for k in 1 2; do
  for v in new base; do
    B=build-gpu; [ $v = base ] && B=build-base
    timeout 40 mpiexec -n 4 --bind-to none $B/examples/bench/coll_bench_cuda --colls allreduce,reduce,bcast,allgather --impls mpixst,vendor --graph --iters 50 --warmup 5 --min-bytes 8 --max-bytes 262144 --step 4 > $O/small_${v}_$k.txt 2>&1; echo "small $v $k rc $? $(( $(date +%s) - t0 )) s"; grep -c " NO" $O/small_${v}_$k.txt
  done
  pack
done
timeout 60 ctest --test-dir build-gpu -L gpu -LE internode -R "collectives.*np4" -j1 --timeout 50 > $O/ctest_coll4.txt 2>&1; echo "ctest np4 rc $? $(( $(date +%s) - t0 )) s"; grep -E "tests passed|Failed|Timeout" $O/ctest_coll4.txt
pack
echo "total: $(( $(date +%s) - t0 )) s"
