#!/usr/bin/env bash
# 4 H100s: kLL two-shot allreduce/reduce (forced ll; 16/32/64 line channels) against simple two-shot,
# one-shot and NCCL; alltoall with 8 MiB halves; collective gpu tests np2/np4.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
mkdir -p /tmp/o8; O=/tmp/o8; rm -rf $O/*
nvidia-smi -L > $O/machine.txt; head -1 $O/machine.txt
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest"
t0=$(date +%s)
touch kernels/*.cu kernels/*.h
touch .carry/base2/kernels/*
(cmake -S .carry/base2 -B build-base $cfg -DMPIX_ST_BUILD_TESTS=OFF > $O/cfg_base.log 2>&1 && cmake --build build-base -j 12 --target coll_bench_cuda > $O/build_base.log 2>&1; echo "base build rc $? $(( $(date +%s) - t0 )) s") &
cmake -S . -B build-gpu $cfg > $O/cfg.log 2>&1 && cmake --build build-gpu -j 16 --target coll_bench_cuda test_collectives_cuda test_enqueue_api_cuda mpixst_cuda > $O/build.log 2>&1; echo "build rc $? $(( $(date +%s) - t0 )) s"; tail -2 $O/build.log
wait
git log --oneline -1 > $O/commit.txt; git status --short >> $O/commit.txt
pack() { cd $O && tar czf $OUT/n8.tgz * 2>/dev/null; cd - > /dev/null; }
CB=build-gpu/examples/bench/coll_bench_cuda
red() { # name np env...
  local name=$1 np=$2; shift 2
  env "$@" timeout 80 mpiexec -n $np --bind-to none $CB --colls allreduce,reduce --impls mpixst,vendor --graph --iters 50 --warmup 5 --min-bytes 32768 --max-bytes 4194304 --step 2 --json $O/r_$name.json > $O/r_$name.txt 2>&1
  echo "red $name rc $? $(( $(date +%s) - t0 )) s"; grep -c " NO" $O/r_$name.txt
  pack
}
for v in new base; do
  B=$CB; [ $v = base ] && B=build-base/examples/bench/coll_bench_cuda
  timeout 60 mpiexec -n 4 --bind-to none $B --colls allreduce,reduce,bcast,allgather --impls mpixst,vendor --graph --iters 50 --warmup 5 --min-bytes 8 --max-bytes 65536 --step 4 --json $O/small4_$v.json > $O/small4_$v.txt 2>&1; echo "small4 $v rc $? $(( $(date +%s) - t0 )) s"; grep -c " NO" $O/small4_$v.txt
done
red auto4 4
red ll4 4 MPIX_ST_COLL_PROTOCOL=ll
red ll4c32 4 MPIX_ST_COLL_PROTOCOL=ll MPIX_ST_COLL_LL_CHANNELS=32
red ll4c64 4 MPIX_ST_COLL_PROTOCOL=ll MPIX_ST_COLL_LL_CHANNELS=64
red ll2 2 MPIX_ST_COLL_PROTOCOL=ll
for k in 1 2; do
  timeout 60 mpiexec -n 4 --bind-to none $CB --colls alltoall --impls mpixst,vendor --iters 20 --warmup 3 --min-bytes 1048576 --max-bytes 134217728 --step 2 --json $O/a2a4_$k.json > $O/a2a4_$k.txt 2>&1; echo "a2a4 $k rc $? $(( $(date +%s) - t0 )) s"
  grep -E "67108864|134217728" $O/a2a4_$k.txt
done
timeout 60 mpiexec -n 2 --bind-to none $CB --colls alltoall --impls mpixst,vendor --iters 20 --warmup 3 --min-bytes 1048576 --max-bytes 134217728 --step 2 --json $O/a2a2.json > $O/a2a2.txt 2>&1; echo "a2a2 rc $? $(( $(date +%s) - t0 )) s"
grep -E "67108864|134217728" $O/a2a2.txt
pack
timeout 120 ctest --test-dir build-gpu -L gpu -LE internode -R "coll|enqueue" -E np4 -j2 --timeout 100 > $O/ctest_coll2.txt 2>&1; echo "ctest np2 rc $? $(( $(date +%s) - t0 )) s"; grep -E "tests passed|Failed|Timeout|Not Run" $O/ctest_coll2.txt
pack
timeout 150 ctest --test-dir build-gpu -L gpu -LE internode -R "(coll|enqueue).*np4" -j1 --timeout 100 > $O/ctest_coll4.txt 2>&1; echo "ctest np4 rc $? $(( $(date +%s) - t0 )) s"; grep -E "tests passed|Failed|Timeout|Not Run" $O/ctest_coll4.txt
pack
echo "total: $(( $(date +%s) - t0 )) s"
