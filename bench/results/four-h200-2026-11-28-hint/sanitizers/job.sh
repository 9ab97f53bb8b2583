#!/usr/bin/env bash
# Session 20 job 5 (2 x H200): compute-sanitizer racecheck and memcheck on the epoch kernel with
# the line hint (its new shared arrays), 2 ranks: graph_replay (replayed merged epochs) and
# put_get_sizes (the row of small puts).
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
T0=$(date +%s); R=/tmp/s5; mkdir -p $R
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF"
cmake -S . -B build $CF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest > $R/configure.txt 2>&1
cmake --build build -j$(nproc) --target test_put_get_sizes_cuda test_graph_replay_cuda > $R/build.txt 2>&1 || { tail -30 $R/build.txt; exit 1; }
echo "build $(( $(date +%s) - T0 )) s"
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer | head -1)
M="mpiexec -n 2 --bind-to none"
for t in racecheck memcheck; do
  for p in graph_replay put_get_sizes; do
    left=$(( 195 - ($(date +%s) - T0) )); [ $left -lt 10 ] && break
    timeout $left $M $CS --tool $t --error-exitcode 9 build/tests/test_${p}_cuda > $R/${t}_${p}.txt 2>&1
    echo "$t $p rc $? $(( $(date +%s) - T0 )) s: $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' $R/${t}_${p}.txt | sort | uniq -c | tr '\n' ' ')"
  done
done
tar czf $OUT/s5.tgz -C $R .
