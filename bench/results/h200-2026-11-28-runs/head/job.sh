#!/usr/bin/env bash
# Session 17 job 1: the head on GPUs (whole gpu label), the host cost of a launch by flavour,
# and rma_bench's eager host time per call with launch overlap off and on, alternated twice.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
T0=$(date +%s); R=/tmp/m1; mkdir -p $R
{ nvidia-smi -L; nvidia-smi topo -m; nproc; } > $R/machine.txt 2>&1
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF"
nvcc -arch=sm_90 -std=c++17 -O2 -o /tmp/lp .carry/launch_probe.cu > $R/lp_build.txt 2>&1 &
cmake -S . -B build $CF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest > $R/configure.txt 2>&1
cmake --build build -j48 > $R/build.txt 2>&1 || { tail -40 $R/build.txt; exit 1; }
wait
echo "build $(( $(date +%s) - T0 )) s"
run() { local name=$1; shift; timeout 100 "$@" > $R/$name.txt 2>&1; echo "$name rc $? $(( $(date +%s) - T0 )) s"; }
run lp1 /tmp/lp
RB="build/examples/bench/rma_bench_cuda --iters 2000 --host-iters 300 --sizes-mib 64"
for i in 1 2; do
  run rma_ov0_$i mpiexec -n 2 --bind-to none -x MPIX_ST_LAUNCH_OVERLAP=0 $RB --json $R/rma_ov0_$i.json
  run rma_ov1_$i mpiexec -n 2 --bind-to none -x MPIX_ST_LAUNCH_OVERLAP=1 $RB --json $R/rma_ov1_$i.json
done
run lp2 /tmp/lp
cat $R/lp1.txt $R/lp2.txt
grep -h "per MPIX\|raw launch\|idle\|ratio\|round trip" $R/rma_ov*.txt | head -60
(cd build && timeout $(( 590 - ($(date +%s) - T0) )) ctest -L gpu --output-on-failure --timeout 120) > $R/ctest_gpu.txt 2>&1
echo "ctest rc $? at $(( $(date +%s) - T0 )) s"
grep -E "tests passed|Failed|\*\*\*" $R/ctest_gpu.txt | tail -15
tar czf $OUT/m1.tgz -C $R .
