#!/usr/bin/env bash
# Faces 2x2x1, communication only, every mode eager, packed and --datatypes, with and without
# wrap-around. One rank per GPU. Run from the repository's root.
set -euo pipefail
export NCCL_NVLS_ENABLE=0 OMPI_MCA_osc=sm,pt2pt
out=${OUT_DIR:-bench/results/h200x4-faces-eager}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF \
  -DMPIX_ST_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90
cmake --build build --target faces_cuda
F=build/examples/faces/faces_cuda
M="mpiexec -n 4 --bind-to none"
G="2 2 1 15 14 13 12 10 10 -100"
$M $F --json "$out/faces_eager_comm.json" --mode all $G
$M $F --json "$out/faces_eager_comm_per.json" --mode all --periodic $G
$M $F --json "$out/faces_dt_comm.json" --mode all --datatypes $G
$M $F --json "$out/faces_dt_comm_per.json" --mode all --datatypes --periodic $G
