#!/usr/bin/env bash
# Lanes of long two-sided messages pulled straight from the send buffer, on 2 H200s, one rank per
# GPU, the machine's Open MPI 4.1.6, one build allowing 64 lanes, one round: MPIX_ST_P2P_LANES=16,
# 32 and 64 (64 became the default), direct pulls on. Per setting: p2p_bench's streaming bandwidth
# (windows of 4 messages, 64 KiB to 256 MiB) beside host MPI, the stream RMA epoch and NCCL
# send/recv, eager and replayed; and Faces 2x1x1 with faces of 1.1 MiB, every mode, eager and
# --graph. Run from the repository's root.
set -euo pipefail
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_MCA_osc=sm,pt2pt
out=${OUT_DIR:-bench/results/h200x2-direct-lanes}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF \
  -DMPIX_ST_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90
cmake --build build --target faces_cuda p2p_bench_cuda
P=build/examples/bench/p2p_bench_cuda
F=build/examples/faces/faces_cuda
G="2 1 1 1 32 32 12 5 5 20"
for lanes in 16 32 64; do
  d="$out/lanes$lanes-1"
  mkdir -p "$d"
  M="mpiexec -n 2 env MPIX_ST_BACKEND=cuda MPIX_ST_P2P_LANES=$lanes"
  $M $P --bandwidth --window 4 --min-bytes 65536 --max-bytes 268435456 --step 4 --graph \
    --json "$d/p2p_bandwidth.json"
  $M $F --mode all --json "$d/faces.json" $G
  $M $F --mode all --graph --json "$d/faces_graph.json" $G
done
