#!/usr/bin/env bash
# 4 H100s: rotated push order (working tree) against HEAD (.carry/base1): collective gpu tests,
# coll_bench 1-128 MiB and small calls, builds alternating; Faces --datatypes 2x2x1 again.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
mkdir -p /tmp/o3; O=/tmp/o3; rm -rf $O/*
nvidia-smi -L > $O/machine.txt; head -1 $O/machine.txt
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest"
t0=$(date +%s)
touch kernels/*.cu kernels/*.h
(cmake -S . -B build-gpu $cfg > $O/cfg.log 2>&1 && cmake --build build-gpu -j 10 --target coll_bench_cuda test_collectives_cuda test_enqueue_api_cuda faces_cuda mpixst_cuda > $O/build.log 2>&1; echo "new build rc $?"; tail -2 $O/build.log) &
(cmake -S .carry/base1 -B build-base $cfg -DMPIX_ST_BUILD_TESTS=OFF > $O/cfg_base.log 2>&1 && cmake --build build-base -j 6 --target coll_bench_cuda > $O/build_base.log 2>&1; echo "base build rc $?") &
wait
echo "builds: $(( $(date +%s) - t0 )) s"
timeout 90 ctest --test-dir build-gpu -L gpu -LE internode -R "coll|enqueue" -E np4 -j2 --timeout 60 > $O/ctest_coll2.txt 2>&1; echo "ctest np2 rc $?"; grep -E "tests passed|Failed|Timeout|Not Run" $O/ctest_coll2.txt
timeout 90 ctest --test-dir build-gpu -L gpu -LE internode -R "(coll|enqueue).*np4" -j1 --timeout 60 > $O/ctest_coll4.txt 2>&1; echo "ctest np4 rc $?"; grep -E "tests passed|Failed|Timeout|Not Run" $O/ctest_coll4.txt
echo "tests: $(( $(date +%s) - t0 )) s"
LB="--colls allgather,alltoall,allreduce,reduce --impls mpixst,vendor --iters 20 --warmup 3 --min-bytes 1048576 --max-bytes 134217728 --step 2"
SB="--impls mpixst,vendor --iters 50 --warmup 5 --graph --min-bytes 8 --max-bytes 1048576 --step 8"
for k in 1 2; do for b in base gpu; do
  timeout 100 mpiexec -n 4 --bind-to none build-$b/examples/bench/coll_bench_cuda $LB --json $O/large_${b}_$k.json > $O/large_${b}_$k.txt 2>&1; echo "large $b $k rc $? $(( $(date +%s) - t0 )) s"
done; done
for b in base gpu; do
  timeout 60 mpiexec -n 4 --bind-to none build-$b/examples/bench/coll_bench_cuda $SB --json $O/small_${b}.json > $O/small_${b}.txt 2>&1; echo "small $b rc $? $(( $(date +%s) - t0 )) s"
done
F=build-gpu/examples/faces/faces_cuda
for c in "dt_comm --datatypes" "dt_comm_per --datatypes --periodic"; do set -- $c; n=$1; shift
  timeout 60 mpiexec -n 4 --bind-to none $F --json $O/faces_$n.json --mode all --graph "$@" 2 2 1 15 14 13 12 10 10 -100 > $O/faces_$n.txt 2>&1; echo "faces $n rc $? $(( $(date +%s) - t0 )) s"
  grep -E "mode=.*per_exchange_us" $O/faces_$n.txt | sed -E 's/.*mode=([a-z0-9]+).*per_exchange_us avg=([0-9.]+).*/  \1 \2/' | tr '\n' ' '; echo
  cd $O && tar czf $OUT/n3.tgz * 2>/dev/null; cd - >/dev/null
done
echo "total: $(( $(date +%s) - t0 )) s"
cd $O && tar czf $OUT/n3.tgz * 2>/dev/null; ls $OUT
