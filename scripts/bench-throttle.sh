#!/usr/bin/env bash
# Throttling modes side by side ([Namashivayam 2023]): Faces st across virtual nodes of one rank
# (MPIX_ST_VNODE_SIZE=1, every peer remote, libfabric sockets provider), a budget of
# MPIX_ST_TRIGGERED_OPS_MAX triggered operations, under static, adaptive, and application-level
# throttling (MPIX_ST_THROTTLE=app with faces --throttle-sync K). Host backend by default: runs on
# CI hardware. Prints per-exchange times and the ratios adaptive/static and adaptive/app; written as
# a run folder that scripts/perf-report.py reads: faces-st-<mode>.json, command.sh, run.json.
#   OUT_DIR=... (default bench/results/throttle-<backend>)  BUILD_DIR=... (default build)
#   RANKS=4  BUDGET=64  SYNC_EVERY=1  BACKEND=host|cuda  FACES=<binary> (default: faces, or
#   faces_cuda for cuda)  FACES_ARGS="..." (default: the host case below; on GPUs e.g. the Faces
#   small case)  CMAKE_ARGS=... (more CMake arguments when the build directory is new)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-common.sh
build=${BUILD_DIR:-build}
ranks=${RANKS:-4}
budget=${BUDGET:-64}
sync_every=${SYNC_EVERY:-1}
backend=${BACKEND:-host}
target=faces
[ "$backend" = host ] || target=faces_cuda
bench_init "${OUT_DIR:-${OUT:-bench/results/throttle-$backend}}"
if [ -n "${FACES:-}" ]; then faces=$FACES; else faces=$build/examples/faces/$target; bench_build "$build" "$target"; fi
# shellcheck disable=SC2206  # a list of numbers and flags
args=(--mode st ${FACES_ARGS:---periodic 2 2 1 2 2 2 4 1 2 100})
echo "bench-throttle: $ranks ranks, backend $backend, MPIX_ST_VNODE_SIZE=1, budget $budget, $faces ${args[*]}"
declare -A us
meta=()
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for mode in static adaptive app; do
  extra=()
  [ "$mode" = app ] && extra=(--throttle-sync "$sync_every")
  file=faces-st-$mode.json
  bench_run env MPIX_ST_BACKEND="$backend" MPIX_ST_VNODE_SIZE=1 MPIX_ST_OFI_PROVIDER=sockets MPIX_ST_THROTTLE=$mode \
    MPIX_ST_TRIGGERED_OPS_MAX="$budget" MPIX_ST_WATCHDOG_MS=60000 \
    mpiexec -n "$ranks" "$faces" "${extra[@]}" --json "$bench_out/$file" "${args[@]}" > "$log"
  line=$(grep '^mode=st total_s' "$log")
  us[$mode]=$(echo "$line" | sed -n 's/.*per_exchange_us avg=\([0-9.]*\).*/\1/p')
  echo "  $mode: ${us[$mode]} us per exchange  ($line)"
  meta+=(--file-meta "$file" benchmark=throttle --file-meta "$file" "throttle=$mode"
         --file-meta "$file" "env.MPIX_ST_THROTTLE=$mode")
done
awk -v a="${us[adaptive]}" -v s="${us[static]}" -v p="${us[app]}" \
  'BEGIN { printf "adaptive/static %.3f  adaptive/app %.3f\n", a / s, a / p }'
bench_manifest "Throttling modes across virtual nodes, $ranks ranks, backend $backend" \
  --setting MPIX_ST_VNODE_SIZE=1 --setting MPIX_ST_OFI_PROVIDER=sockets \
  --setting MPIX_ST_TRIGGERED_OPS_MAX="$budget" --setting MPIX_ST_WATCHDOG_MS=60000 "${meta[@]}"
