#!/usr/bin/env bash
# Two-sided stream messages on 2 ranks sharing one GPU under CUDA MPS: p2p_bench (stream-ordered
# ping-pong per size: enqueue, queue, host MPI, stream RMA epoch) and Faces 2x1x1 in every mode,
# eager, two rounds each. NCCL is skipped (one rank per GPU). Run from the repository's root.
set -euo pipefail
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_MCA_osc=sm,pt2pt
out=${OUT_DIR:-bench/results/h200x1-mps-two-sided}
# The ranks share the GPU through the MPS control daemon.
export CUDA_MPS_PIPE_DIRECTORY=${CUDA_MPS_PIPE_DIRECTORY:-/tmp/mps}
export CUDA_MPS_LOG_DIRECTORY=${CUDA_MPS_LOG_DIRECTORY:-/tmp/mps-log}
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
nvidia-cuda-mps-control -d || true  # already running: fine
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF \
  -DMPIX_ST_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90
cmake --build build --target faces_cuda p2p_bench_cuda
F=build/examples/faces/faces_cuda
M="mpiexec --oversubscribe -n 2 env MPIX_ST_BACKEND=cuda"
G="2 1 1 15 14 13 12 10 10 100"
for i in 1 2; do
  $M build/examples/bench/p2p_bench_cuda --json "$out/p2p_$i.json"
  $M $F --json "$out/faces_$i.json" --mode all $G
done
