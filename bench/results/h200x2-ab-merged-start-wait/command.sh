#!/usr/bin/env bash
# A/B on 2 H200s (one rank per GPU, the machine's Open MPI 4.1.6): Faces 2x1x1 in every mode,
# replayed (--graph) and eager, and p2p_bench's stream-ordered ping-pong (8 B to 1 MiB, eager and
# replayed), built from b019a4e (base: a captured two-sided start and its wait are two kernel
# nodes) and ff4aa39 (head: one node, the wait's receives trailing the sends), two rounds, each
# base then head. Run from the repository's root.
set -euo pipefail
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_MCA_osc=sm,pt2pt
out=${OUT_DIR:-bench/results/h200x2-ab-merged-start-wait}
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DMPIX_ST_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90"
for side in base head; do
  commit=$([ $side = base ] && echo b019a4e || echo ff4aa39)
  rm -rf /tmp/ab/$side && mkdir -p /tmp/ab/$side && git archive $commit | tar x -C /tmp/ab/$side
  (cd /tmp/ab/$side && cmake -S . -B build $CF && cmake --build build --target faces_cuda p2p_bench_cuda)
done
M="mpiexec -n 2 env MPIX_ST_BACKEND=cuda"
G="2 1 1 15 14 13 12 10 10 100"
for round in 1 2; do
  for side in base head; do
    d="$out/$side-$round" B=/tmp/ab/$side/build
    mkdir -p "$d"
    $M $B/examples/faces/faces_cuda --mode all --graph --json "$d/faces_graph.json" $G
    $M $B/examples/faces/faces_cuda --mode all --json "$d/faces.json" $G
    $M $B/examples/bench/p2p_bench_cuda --graph --json "$d/p2p.json"
  done
done
