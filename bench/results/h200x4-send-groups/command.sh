#!/usr/bin/env bash
# Captured two-sided send lists sharing one kernel node, on 4 H200s, the machine's Open MPI 4.1.6:
# Faces 2x2x1 with small faces, one rank per GPU, every mode, --graph, two rounds (queue and
# enqueue beside st and NCCL, replayed). Run from the repository's root.
set -euo pipefail
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_MCA_osc=sm,pt2pt
out=${OUT_DIR:-bench/results/h200x4-send-groups}
mkdir -p "$out"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF \
  -DMPIX_ST_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90
cmake --build build --target faces_cuda
F=build/examples/faces/faces_cuda
M4="mpiexec -n 4 --bind-to none env MPIX_ST_BACKEND=cuda"
G="2 2 1 15 14 13 12 10 10 100"
for i in 1 2; do
  $M4 $F --mode all --graph --json "$out/faces_graph_$i.json" $G
done
