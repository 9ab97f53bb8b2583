#!/usr/bin/env bash
# A/B on 2 H200s (one rank per GPU, the machine's Open MPI 4.1.6): p2p_bench's stream-ordered
# ping-pong, 8 B to 32 KiB, eager and replayed, built from e98f30b (base: no long two-sided
# messages) and 10f23a6 (head: long messages in chunks, their lists on an instance of the epoch
# kernel of their own), three rounds alternating base and head. Run from the repository's root.
set -euo pipefail
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_MCA_osc=sm,pt2pt
out=${OUT_DIR:-bench/results/h200x2-ab-chunked-kernel}
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF"
for side in base head; do
  commit=$([ $side = base ] && echo e98f30b || echo 10f23a6)
  rm -rf /tmp/ab/$side && mkdir -p /tmp/ab/$side && git archive $commit | tar x -C /tmp/ab/$side
  (cd /tmp/ab/$side && cmake -S . -B build $CF && cmake --build build --target p2p_bench_cuda)
done
for round in 1 2 3; do
  for side in base head; do
    mkdir -p "$out/$side-$round"
    mpiexec -n 2 env MPIX_ST_BACKEND=cuda /tmp/ab/$side/build/examples/bench/p2p_bench_cuda --min-bytes 8 \
      --max-bytes 32768 --step 8 --graph --json "$out/$side-$round/p2p.json"
  done
done
