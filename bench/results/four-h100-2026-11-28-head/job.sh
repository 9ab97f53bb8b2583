#!/usr/bin/env bash
# Job 1: HEAD on GPUs: build, the whole gpu label, small collectives auto x2 against NCCL.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
T0=$(date +%s)
{ nvidia-smi -L; nvidia-smi topo -m; nproc; git log --oneline -1; } > $OUT/machine.txt 2>&1
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest > $OUT/configure.txt 2>&1
cmake --build build -j16 > $OUT/build.txt 2>&1 || { tail -50 $OUT/build.txt; exit 1; }
echo "build done $(( $(date +%s) - T0 )) s"
B=build/examples/bench/coll_bench_cuda
A="--colls allreduce,reduce,bcast,allgather,alltoall --impls mpixst,vendor --graph --auto-only --iters 100 --warmup 5 --min-bytes 8 --max-bytes 65536 --step 4"
for i in 1 2; do
  MPIX_ST_BACKEND=cuda mpiexec -n 4 --bind-to none $B $A --json $OUT/small4_$i.json > $OUT/small4_$i.txt 2>&1
done
echo "bench done $(( $(date +%s) - T0 )) s"
(cd build && timeout $(( 585 - ($(date +%s) - T0) )) ctest -L gpu --output-on-failure --timeout 120) > $OUT/ctest_gpu.txt 2>&1
echo "ctest rc $? at $(( $(date +%s) - T0 )) s"
grep -E "tests passed|Failed|\*\*\*" $OUT/ctest_gpu.txt | tail -15
python3 scripts/compare-coll.py $OUT/small4_1.json $OUT/small4_2.json 2>&1 | tail -5 || true
