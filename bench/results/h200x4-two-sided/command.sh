#!/usr/bin/env bash
# Two-sided stream messages on 4 H200s, the machine's Open MPI 4.1.6: Faces 2x2x1 with small faces,
# one rank per GPU, every mode (queue, enqueue, st, rma, p2p, nccl), eager and --graph, two rounds;
# p2p_bench's stream-ordered ping-pong and host time per call between GPUs 0 and 1 of the same host;
# Faces 2x2x2, eight ranks, two per GPU under CUDA MPS, every mode but nccl (NCCL takes one rank per GPU), eager.
# Run from the repository's root.
set -euo pipefail
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_MCA_osc=sm,pt2pt
out=${OUT_DIR:-bench/results/h200x4-two-sided}
mkdir -p "$out"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF \
  -DMPIX_ST_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90
cmake --build build --target faces_cuda p2p_bench_cuda
F=build/examples/faces/faces_cuda
P=build/examples/bench/p2p_bench_cuda
M4="mpiexec -n 4 --bind-to none env MPIX_ST_BACKEND=cuda"
M2="mpiexec -n 2 --bind-to none env MPIX_ST_BACKEND=cuda"
G="2 2 1 15 14 13 12 10 10 100"
for i in 1 2; do
  $M4 $F --mode all --json "$out/faces_$i.json" $G
  $M4 $F --mode all --graph --json "$out/faces_graph_$i.json" $G
done
$M2 $P --graph --json "$out/p2p_1.json"
$M2 $P --host-time --json "$out/host_time_1.json"
# Two ranks per GPU share it through the MPS control daemon.
export CUDA_MPS_PIPE_DIRECTORY=${CUDA_MPS_PIPE_DIRECTORY:-/tmp/mps}
export CUDA_MPS_LOG_DIRECTORY=${CUDA_MPS_LOG_DIRECTORY:-/tmp/mps-log}
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
nvidia-cuda-mps-control -d || true  # already running: fine
mpiexec --oversubscribe -n 8 --bind-to none env MPIX_ST_BACKEND=cuda \
  $F --mode all --ranks-per-gpu 2 --json "$out/faces_mps8.json" 2 2 2 15 14 13 12 10 10 100
echo quit | nvidia-cuda-mps-control || true
