#!/usr/bin/env bash
# Two-sided stream messages longer than a mailbox on 2 H200s, one rank per GPU, the machine's Open
# MPI 4.1.6: p2p_bench's streaming bandwidth (windows of 4 messages, 64 KiB to 64 MiB: above 1 MiB
# the two-sided ways move their messages in chunks through the mailbox) and its ping-pong to 4 MiB,
# eager and replayed, beside host MPI, the stream RMA epoch and NCCL send/recv; and Faces 2x1x1 with
# faces of 1.1 MiB (32 x 32 elements of 12^3 points), every mode, eager and --graph. Run from the
# repository's root.
set -euo pipefail
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_MCA_osc=sm,pt2pt
out=${OUT_DIR:-bench/results/h200x2-long-messages}
mkdir -p "$out"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF \
  -DMPIX_ST_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90
cmake --build build --target faces_cuda p2p_bench_cuda
F=build/examples/faces/faces_cuda
P=build/examples/bench/p2p_bench_cuda
M="mpiexec -n 2 env MPIX_ST_BACKEND=cuda"
G="2 1 1 1 32 32 12 5 5 20"
$M $P --bandwidth --window 4 --min-bytes 65536 --max-bytes 67108864 --step 4 --graph \
  --json "$out/p2p_bandwidth.json"
$M $P --min-bytes 8 --max-bytes 4194304 --step 8 --graph --json "$out/p2p_latency.json"
$M $F --mode all --json "$out/faces.json" $G
$M $F --mode all --graph --json "$out/faces_graph.json" $G
