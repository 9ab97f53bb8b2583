#!/usr/bin/env bash
# Throttling modes side by side (seed 002 §5.2): Faces st across virtual nodes of one rank
# (MPIX_ST_VNODE_SIZE=1, every peer remote, libfabric sockets provider), a budget of
# MPIX_ST_TRIGGERED_OPS_MAX triggered operations, under static, adaptive, and application-level
# throttling (MPIX_ST_THROTTLE=app with faces --throttle-sync K). Host backend by default: runs on
# CI hardware. Prints per-exchange times and the ratios adaptive/static and adaptive/app; writes
# JSON per mode.
#   BUILD_DIR=... (default build)  RANKS=4  BUDGET=64  SYNC_EVERY=1  OUT=bench/results/throttle-host
#   BACKEND=host|cuda  FACES=<binary> (default: faces, or faces_cuda for cuda)
#   FACES_ARGS="..." (default: the host case below; on GPUs e.g. the Faces small case)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
ranks=${RANKS:-4}
budget=${BUDGET:-64}
sync_every=${SYNC_EVERY:-1}
out=${OUT:-bench/results/throttle-host}
backend=${BACKEND:-host}
if [ "$backend" = host ]; then faces=${FACES:-$build/examples/faces/faces}; else faces=${FACES:-$build/examples/faces/faces_cuda}; fi
if [ ! -x "$faces" ]; then
  scripts/setup.sh
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
  cmake --build "$build" --target "$(basename "$faces")"
fi
mkdir -p "$out"
# shellcheck disable=SC2206  # a list of numbers and flags
args=(--mode st ${FACES_ARGS:---periodic 2 2 1 2 2 2 4 1 2 100})
echo "bench-throttle: $ranks ranks, backend $backend, MPIX_ST_VNODE_SIZE=1, budget $budget, $faces ${args[*]}"
declare -A us
for mode in static adaptive app; do
  extra=()
  [ "$mode" = app ] && extra=(--throttle-sync "$sync_every")
  line=$(MPIX_ST_BACKEND=$backend MPIX_ST_VNODE_SIZE=1 MPIX_ST_OFI_PROVIDER=sockets MPIX_ST_THROTTLE=$mode \
         MPIX_ST_TRIGGERED_OPS_MAX=$budget MPIX_ST_WATCHDOG_MS=60000 \
         mpiexec -n "$ranks" "$faces" "${extra[@]}" --json "$out/faces-st-$mode.json" "${args[@]}" | grep '^mode=st total_s')
  us[$mode]=$(echo "$line" | sed -n 's/.*per_exchange_us avg=\([0-9.]*\).*/\1/p')
  echo "  $mode: ${us[$mode]} us per exchange  ($line)"
done
awk -v a="${us[adaptive]}" -v s="${us[static]}" -v p="${us[app]}" \
  'BEGIN { printf "adaptive/static %.3f  adaptive/app %.3f\n", a / s, a / p }'
