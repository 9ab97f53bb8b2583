#!/usr/bin/env bash
# Job 3: the final code: build, the whole gpu label; simple against ll for mid allreduce/reduce;
# mpix-st against the MPI's own collective on device buffers; Faces 2x2x1 communication only.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
T0=$(date +%s); R=/tmp/r; mkdir -p $R
el() { echo "$1 $(( $(date +%s) - T0 )) s"; }
{ nvidia-smi -L; nproc; git log --oneline -1; } > $R/machine.txt 2>&1
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest > $R/configure.txt 2>&1
cmake --build build -j16 > $R/build.txt 2>&1 || { tail -40 $R/build.txt; exit 1; }
el build
(cd build && timeout 300 ctest -L gpu --output-on-failure --timeout 120) > $R/ctest_gpu.txt 2>&1
el "ctest rc $?"
B=build/examples/bench/coll_bench_cuda
A="--impls mpixst,vendor --graph --auto-only --iters 50 --warmup 5"
for i in 1 2; do
  for p in auto simple; do
    MPIX_ST_COLL_PROTOCOL=$p MPIX_ST_BACKEND=cuda timeout 40 mpiexec -n 4 --bind-to none $B $A --colls allreduce,reduce \
      --min-bytes 131072 --max-bytes 4194304 --step 2 --json $R/proto4_${p}_$i.json > $R/proto4_${p}_$i.txt 2>&1
  done
done
el proto
MPIX_ST_MPI_GPU_AWARE=1 MPIX_ST_BACKEND=cuda timeout 150 mpiexec -n 4 --bind-to none $B --impls mpixst,vendor,mpi --mpi-device \
  --auto-only --iters 20 --warmup 3 --min-bytes 8 --max-bytes 134217728 --step 8 --json $R/vs_mpi4.json > $R/vs_mpi4.txt 2>&1
el "vs_mpi rc $?"
F=build/examples/faces/faces_cuda
G="2 2 1 15 14 13 12 10 10"
for i in 1 2; do
  MPIX_ST_BACKEND=cuda timeout 40 mpiexec -n 4 --bind-to none $F --json $R/faces_comm_$i.json --mode all --graph $G -100 > $R/faces_comm_$i.txt 2>&1
done
el faces
tar czf $OUT/r.tgz -C $R .
grep -E "tests passed|Failed|\*\*\*" $R/ctest_gpu.txt | tail -12
python3 scripts/compare-coll.py $R/proto4_auto_1.json $R/proto4_simple_1.json $R/proto4_auto_2.json $R/proto4_simple_2.json | head -8
grep -E "per exchange|st |nccl " $R/faces_comm_1.txt | head -12
