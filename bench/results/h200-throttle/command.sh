#!/usr/bin/env bash
# Faces st across virtual nodes of one rank (every peer remote over libfabric's sockets provider), a
# budget of 64 triggered operations, static, adaptive and app throttling; 2 and 4 ranks, one per
# GPU, the small input and a latency-bound one. Run from the repository's root.
set -euo pipefail
out=${OUT_DIR:-bench/results/h200-throttle}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build --target faces_cuda
throttle() { # ranks folder faces-arguments...
  local ranks=$1 dir=$out/$2
  shift 2
  mkdir -p "$dir"
  for mode in static adaptive app; do
    extra=()
    [ $mode = app ] && extra=(--throttle-sync 1)
    env MPIX_ST_BACKEND=cuda MPIX_ST_VNODE_SIZE=1 MPIX_ST_OFI_PROVIDER=sockets MPIX_ST_THROTTLE=$mode \
      MPIX_ST_TRIGGERED_OPS_MAX=64 MPIX_ST_WATCHDOG_MS=60000 \
      mpiexec -n "$ranks" build/examples/faces/faces_cuda "${extra[@]}" --json "$dir/faces-st-$mode.json" \
      --mode st "$@"
  done
}
throttle 2 throttle-2gpu 2 1 1 15 14 13 12 10 10 100
throttle 4 throttle-4gpu 2 2 1 15 14 13 12 10 10 100
throttle 2 throttle-tiny-2gpu 2 1 1 2 2 2 4 1 10 100
throttle 4 throttle-tiny-4gpu 2 2 1 2 2 2 4 1 10 100
