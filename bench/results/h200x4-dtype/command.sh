#!/usr/bin/env bash
# dtype_bench on 2 ranks: 1 KiB blocks (64 MiB a put) and 8-byte blocks (8 MiB a put). Run from the
# repository's root.
set -euo pipefail
export OMPI_MCA_osc=sm,pt2pt
out=${OUT_DIR:-bench/results/h200x4-dtype}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF \
  -DMPIX_ST_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90
cmake --build build --target dtype_bench_cuda
D=build/examples/bench/dtype_bench_cuda
mpiexec -n 2 --bind-to none $D --mib 64 --block 1024 --json "$out/dtype_1024.json"
mpiexec -n 2 --bind-to none $D --mib 8 --block 8 --json "$out/dtype_8.json"
