#!/usr/bin/env bash
# Faces 2x1x1 st --graph, packed and --datatypes, with and without wrap-around, NCCL --graph beside,
# communication only, two rounds; dtype_bench with 8-byte blocks, two rounds. One rank per GPU. Run
# from the repository's root.
set -euo pipefail
export NCCL_NVLS_ENABLE=0 OMPI_MCA_osc=sm,pt2pt
out=${OUT_DIR:-bench/results/h200x2-faces-st}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF \
  -DMPIX_ST_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90
cmake --build build --target faces_cuda dtype_bench_cuda
F=build/examples/faces/faces_cuda
M="mpiexec -n 2 --bind-to none"
G="2 1 1 15 14 13 12 10 10 -100"
for i in 1 2; do
  for p in "" "--periodic"; do
    t=$i${p:+p}
    $M $F --json "$out/dt_$t.json" --mode st --graph --datatypes $p $G
    $M $F --json "$out/st_$t.json" --mode st --graph $p $G
    $M $F --json "$out/nccl_$t.json" --mode nccl --graph $p $G
  done
done
for i in 1 2; do
  $M build/examples/bench/dtype_bench_cuda --mib 8 --block 8 --json "$out/dtype_8_$i.json"
done
