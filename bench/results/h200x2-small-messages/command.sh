#!/usr/bin/env bash
# Small two-sided messages on 2 H200s, one rank per GPU, the machine's Open MPI 4.1.6: p2p_bench's
# stream-ordered ping-pong, 8 B to a mailbox (enqueue, queue, host MPI, stream RMA epoch, NCCL
# send/recv; eager and replayed), its host time per call, and Faces 2x1x1 with small faces in every
# mode, eager and --graph; two rounds of each. Run from the repository's root.
set -euo pipefail
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_MCA_osc=sm,pt2pt
out=${OUT_DIR:-bench/results/h200x2-small-messages}
mkdir -p "$out"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF \
  -DMPIX_ST_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90
cmake --build build --target faces_cuda p2p_bench_cuda
F=build/examples/faces/faces_cuda
P=build/examples/bench/p2p_bench_cuda
M="mpiexec -n 2 env MPIX_ST_BACKEND=cuda"
G="2 1 1 15 14 13 12 10 10 100"
for i in 1 2; do
  $M $P --graph --json "$out/p2p_$i.json"
  $M $P --host-time --json "$out/host_time_$i.json"
  $M $F --mode all --json "$out/faces_$i.json" $G
  $M $F --mode all --graph --json "$out/faces_graph_$i.json" $G
done
