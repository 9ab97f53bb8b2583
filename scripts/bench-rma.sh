#!/usr/bin/env bash
# rma_bench (the ST epoch against the raw stream-signal floor and host-driven RMA, and put bandwidth)
# on two ranks, written as a run folder that scripts/perf-report.py reads: rma_bench.json,
# command.sh, run.json. Uses rma_bench_cuda when a GPU is visible, else the host backend.
# Arguments go to rma_bench (e.g. --graph, --iters 5000).
#   OUT_DIR=...     the run folder (default bench/results/rma-<backend>)
#   BUILD_DIR=...   the build directory (default build); configured and built as needed
#   CMAKE_ARGS=...  more CMake arguments when the build directory is new
#   MPIEXEC=...     the launcher (default mpiexec)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-common.sh
build_dir=${BUILD_DIR:-build}
target=rma_bench
backend=host
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  target=rma_bench_cuda
  backend=cuda
fi
bench_init "${OUT_DIR:-bench/results/rma-$backend}"
bench_build "$build_dir" "$target"
bench_run env MPIX_ST_BACKEND=$backend "${MPIEXEC:-mpiexec}" -n 2 "$build_dir/examples/bench/$target" \
  --json "$bench_out/rma_bench.json" "$@"
bench_manifest "rma_bench on two ranks${*:+, $*}"
