#!/usr/bin/env bash
# Stream collectives vs NCCL vs the MPI's own collectives (examples/bench/coll_bench), one run per
# GPU count, every collective and algorithm, 8 B .. 256 MiB, written as a run folder that
# scripts/perf-report.py reads: coll_bench-<backend>-<n>ranks.json per run, command.sh, run.json.
# Without a GPU it runs coll_bench on the host backend with 2 and 4 ranks (functional figures only).
#   OUT_DIR=...     the run folder (default bench/results/coll-<backend>)
#   GPU_COUNTS=...  rank counts, one per GPU (default "2 4")
#   BUILD_DIR=...   the build directory (default build); configured and built as needed
#   CMAKE_ARGS=...  more CMake arguments when the build directory is new
#   MAX_BYTES=...   the largest size (default 268435456)
#   MPIEXEC=...     the launcher (default mpiexec)
#   COLL_ARGS=...   more coll_bench arguments, e.g. "--graph --auto-only" or "--mpi-device"
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-common.sh
build_dir=${BUILD_DIR:-build}
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}  # NVLink multicast stays off on shared machines

gpus=0
command -v nvidia-smi >/dev/null 2>&1 && gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
target=coll_bench
backend=host
if [ "$gpus" -ge 1 ]; then
  target=coll_bench_cuda
  backend=cuda
fi
bench_init "${OUT_DIR:-bench/results/coll-$backend}"
bench_build "$build_dir" "$target"
counts=()
for n in ${GPU_COUNTS:-2 4}; do
  if [ "$backend" = cuda ] && [ "$n" -gt "$gpus" ]; then
    echo "bench-coll.sh: skipping $n ranks: $gpus GPU(s) visible" >&2
    continue
  fi
  # shellcheck disable=SC2086  # COLL_ARGS is a list of arguments
  bench_run env MPIX_ST_BACKEND=$backend NCCL_NVLS_ENABLE="$NCCL_NVLS_ENABLE" "${MPIEXEC:-mpiexec}" -n "$n" \
    "$build_dir/examples/bench/$target" --max-bytes "${MAX_BYTES:-268435456}" \
    --json "$bench_out/coll_bench-$backend-${n}ranks.json" ${COLL_ARGS:-}
  counts+=("$n")
done
bench_manifest "coll_bench on ${counts[*]} ranks${COLL_ARGS:+, $COLL_ARGS}" \
  --setting NCCL_NVLS_ENABLE="$NCCL_NVLS_ENABLE"
