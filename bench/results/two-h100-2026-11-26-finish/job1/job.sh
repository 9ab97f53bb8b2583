#!/usr/bin/env bash
# 2 H100s: the multi-block finish with one system fence (working tree) against cec2526 (.carry/base2),
# same job: gpu tests of the new build, rma_bench --graph with a 256 KiB put (4 blocks) and Faces
# communication only, builds alternating; then Faces st/nccl by element size n on the new build.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
mkdir -p /tmp/o; O=/tmp/o; rm -f $O/*
nvidia-smi -L > $O/machine.txt; head -2 $O/machine.txt
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest"
t0=$(date +%s)
touch kernels/*.cu kernels/*.h
(cmake -S . -B build-gpu $cfg > $O/cfg.log 2>&1 && cmake --build build-gpu -j 12 > $O/build.log 2>&1; echo "new build rc $?") &
(cmake -S .carry/base2 -B build-base $cfg -DMPIX_ST_BUILD_TESTS=OFF > $O/cfg_base.log 2>&1 && cmake --build build-base -j 6 --target faces_cuda rma_bench_cuda > $O/build_base.log 2>&1; echo "base build rc $?") &
wait
echo "builds: $(( $(date +%s) - t0 )) s"
grep -E "error" -A3 $O/build.log | head -20
timeout 200 ctest --test-dir build-gpu -L gpu -LE internode -E np4 -j1 --timeout 100 > $O/ctest2.txt 2>&1; echo "ctest rc $?"; tail -3 $O/ctest2.txt; grep -E "Failed|Timeout" $O/ctest2.txt
echo "after tests: $(( $(date +%s) - t0 )) s"
R="--graph --iters 2000 --host-iters 300 --sizes-mib 1 --put-bytes 262144"
summ() { f=$1; echo "$(basename $f) $(grep -o 'data_check=[a-zA-Z]*' $f) graph $(grep -E '^graph st: epoch round trip \(' $f | awk '{print $(NF-1)}') nodata $(grep -E 'without data' $f | awk '{print $(NF-1)}') floor $(grep -E '^graph floor' $f | awk '{print $(NF-1)}') rawg $(grep -E '^graph raw epoch' $f | awk '{print $(NF-1)}') eager $(grep -E '^st: epoch' $f | awk '{print $(NF-1)}') host $(grep -E 'host-driven' $f | awk '{print $(NF-1)}') $(grep -E '^put' $f)"; }
probe() { name=$1; shift; timeout 60 mpiexec -n 2 --bind-to none "$@" > $O/$name.txt 2>&1; echo "$name rc $? $(grep -E 'total.*per_exchange' $O/$name.txt | sed -E 's/.*mode=([a-z0-9]+).*per_exchange_us avg=([0-9.]+).*/\1=\2/' | tr '\n' ' ')"; }
for k in 1 2; do
  for b in base gpu; do timeout 90 mpiexec -n 2 --bind-to none build-$b/examples/bench/rma_bench_cuda $R --json $O/rma_${b}_$k.json > $O/rma_${b}_$k.txt 2>&1; summ $O/rma_${b}_$k.txt; done
  for per in "" "--periodic"; do for b in base gpu; do
    probe "faces_${b}${per}_$k" build-$b/examples/faces/faces_cuda --mode all --graph $per 2 1 1 15 14 13 12 4 5 -100
  done; done
  echo "t: $(( $(date +%s) - t0 )) s"
done
for n in 2 4 8; do probe "faces_n${n}" build-gpu/examples/faces/faces_cuda --mode all --graph 2 1 1 15 14 13 $n 4 5 -100; done
echo "total: $(( $(date +%s) - t0 )) s"
cd $O && tar czf $OUT/n9.tgz *.txt *.json 2>/dev/null; ls $OUT
