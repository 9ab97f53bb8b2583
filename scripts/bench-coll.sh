#!/usr/bin/env bash
# Stream collectives vs NCCL vs the MPI's own collectives (examples/bench/coll_bench), one run per
# GPU count, every collective and algorithm, 8 B .. 256 MiB; JSON per run under OUT_DIR
# (default bench/results/coll) and coll.png (scripts/plot-coll.py).
# Environment: OUT_DIR, GPU_COUNTS (default "2 4"), BUILD_DIR (default build), MAX_BYTES,
#   MPIEXEC (default mpiexec), COLL_ARGS (more coll_bench arguments, e.g. --graph --mpi-device).
# Without a GPU it runs coll_bench on the host backend with 2 and 4 ranks (functional figures only).
set -euo pipefail
cd "$(dirname "$0")/.."
out_dir=${OUT_DIR:-bench/results/coll}
build_dir=${BUILD_DIR:-build}
max_bytes=${MAX_BYTES:-268435456}
mpiexec=${MPIEXEC:-mpiexec}
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}  # NVLink multicast stays off on shared machines

gpus=0
command -v nvidia-smi >/dev/null 2>&1 && gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
bin=$build_dir/examples/bench/coll_bench
backend=host
if [ "$gpus" -ge 1 ]; then
  bin=${bin}_cuda
  backend=cuda
fi
if [ ! -x "$bin" ]; then
  scripts/setup.sh
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release
  cmake --build "$build_dir" --target "$(basename "$bin")"
fi
mkdir -p "$out_dir"
files=()
for n in ${GPU_COUNTS:-2 4}; do
  if [ "$backend" = cuda ] && [ "$n" -gt "$gpus" ]; then
    echo "bench-coll.sh: skipping $n ranks: $gpus GPU(s) visible" >&2
    continue
  fi
  out=$out_dir/coll_bench-$backend-${n}ranks.json
  # shellcheck disable=SC2086
  MPIX_ST_BACKEND=$backend "$mpiexec" -n "$n" "$bin" --max-bytes "$max_bytes" --json "$out" ${COLL_ARGS:-}
  files+=("$out")
done
if [ ${#files[@]} -gt 0 ] && python3 -c "import matplotlib" 2>/dev/null; then
  python3 scripts/plot-coll.py "${files[@]}" -o "$out_dir/coll.png"
fi
echo "bench-coll.sh: wrote ${files[*]}"
