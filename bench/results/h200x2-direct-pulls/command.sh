#!/usr/bin/env bash
# Direct pulls of long two-sided messages on 2 H200s, one rank per GPU, the machine's Open MPI
# 4.1.6, one build, settings alternated within each of two rounds: MPIX_ST_P2P_DIRECT=on (the
# receiver reads a long message straight from the send buffer once it mapped it) and
# MPIX_ST_P2P_DIRECT=off (every long message through the mailbox in chunks), 16 lanes (the default
# then). Per setting: p2p_bench's streaming bandwidth (windows of 4 messages, 64 KiB to 256 MiB;
# above a mailbox, 1 MiB, the two-sided ways move long messages) and its ping-pong of 1 to 64 MiB,
# beside host MPI, the stream RMA epoch and NCCL send/recv, eager and replayed; and Faces 2x1x1
# with faces of 1.1 MiB (32 x 32 elements of 12^3 points), every mode, eager and --graph. Run
# from the repository's root.
set -euo pipefail
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_MCA_osc=sm,pt2pt
out=${OUT_DIR:-bench/results/h200x2-direct-pulls}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF \
  -DMPIX_ST_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90
cmake --build build --target faces_cuda p2p_bench_cuda
P=build/examples/bench/p2p_bench_cuda
F=build/examples/faces/faces_cuda
G="2 1 1 1 32 32 12 5 5 20"
for round in 1 2; do
  for setting in direct mailbox; do
    case $setting in
      direct) env="MPIX_ST_P2P_DIRECT=on MPIX_ST_P2P_LANES=16" ;;
      mailbox) env="MPIX_ST_P2P_DIRECT=off MPIX_ST_P2P_LANES=16" ;;
    esac
    d="$out/$setting-$round"
    mkdir -p "$d"
    M="mpiexec -n 2 env MPIX_ST_BACKEND=cuda $env"
    $M $P --bandwidth --window 4 --min-bytes 65536 --max-bytes 268435456 --step 4 --graph \
      --json "$d/p2p_bandwidth.json"
    $M $P --min-bytes 1048576 --max-bytes 67108864 --step 4 --graph --json "$d/p2p_latency.json"
    $M $F --mode all --json "$d/faces.json" $G
    $M $F --mode all --graph --json "$d/faces_graph.json" $G
  done
done
