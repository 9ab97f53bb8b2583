#!/usr/bin/env bash
# rma_bench --graph on 2 ranks; Faces st and NCCL --graph, 2x1x1 on 2 ranks and 2x2x1 on 4,
# communication only; two rounds. One rank per GPU. Run from the repository's root.
set -euo pipefail
export NCCL_NVLS_ENABLE=0 OMPI_MCA_osc=sm,pt2pt
out=${OUT_DIR:-bench/results/h200x4-rma-faces-st}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF \
  -DMPIX_ST_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90
cmake --build build --target faces_cuda rma_bench_cuda
F=build/examples/faces/faces_cuda
for i in 1 2; do
  mpiexec -n 2 --bind-to none build/examples/bench/rma_bench_cuda --graph --json "$out/rma_$i.json"
done
for i in 1 2; do
  for c in 2 4; do
    G="2 1 1 15 14 13 12 10 10 -100"
    [ $c = 4 ] && G="2 2 1 15 14 13 12 10 10 -100"
    mpiexec -n $c --bind-to none $F --json "$out/st${c}r_$i.json" --mode st --graph $G
    mpiexec -n $c --bind-to none $F --json "$out/nccl${c}r_$i.json" --mode nccl --graph $G
  done
done
