#!/usr/bin/env bash
# Faces st on the host backend, 4 ranks across virtual nodes of one rank (every peer remote over
# libfabric's sockets provider), a budget of 64 triggered operations, static, adaptive and app
# throttling. Run from the repository's root.
set -euo pipefail
out=${OUT_DIR:-bench/results/host-throttle}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build --target faces
for mode in static adaptive app; do
  extra=()
  [ $mode = app ] && extra=(--throttle-sync 1)
  env MPIX_ST_BACKEND=host MPIX_ST_VNODE_SIZE=1 MPIX_ST_OFI_PROVIDER=sockets MPIX_ST_THROTTLE=$mode \
    MPIX_ST_TRIGGERED_OPS_MAX=64 MPIX_ST_WATCHDOG_MS=60000 \
    mpiexec -n 4 build/examples/faces/faces "${extra[@]}" --json "$out/faces-st-$mode.json" \
    --mode st --periodic 2 2 1 2 2 2 4 1 2 100
done
