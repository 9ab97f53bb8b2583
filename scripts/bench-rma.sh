#!/usr/bin/env bash
# Runs rma_bench (ST vs raw stream-signal floor vs host-driven RMA, bandwidth) on two ranks and
# writes bench/results/rma_bench-<backend>.json. Uses rma_bench_cuda when a GPU is visible.
#   BUILD_DIR=...   where the binaries are (default build); built first if missing
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
bin=$build_dir/examples/bench/rma_bench
backend=host
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  bin=${bin}_cuda
  backend=cuda
fi
if [ ! -x "$bin" ]; then
  scripts/setup.sh
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release
  cmake --build "$build_dir" --target "$(basename "$bin")"
fi
mkdir -p bench/results
out=bench/results/rma_bench-$backend.json
MPIX_ST_BACKEND=$backend mpiexec -n 2 "$bin" --json "$out" "$@"
echo "bench-rma.sh: wrote $out"
