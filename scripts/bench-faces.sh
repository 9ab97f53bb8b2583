#!/usr/bin/env bash
# GPU comparison of the Faces modes (p2p, rma, st, nccl) in one run per configuration:
#   inputs: small (latency-bound)  mx my mz n niface niel nshare = 15 14 13 12 10 10 100
#           large (bandwidth-bound)                               = 95 94 93 12 3 1 10
#   on 2 and 4 GPUs (one rank per GPU), periodic and not. The rank grid lx ly lz is chosen from
#   the GPU count (2 -> 2 1 1, 4 -> 2 2 1) and printed with each run.
#   Variants: `packed` (every mode packs) and `datatypes` (--datatypes: rma and st put from the
#   field through derived types; p2p and nccl pack as in `packed`, a reference in the same run).
# Written as a run folder that scripts/perf-report.py reads: one JSON per run, command.sh, run.json.
# Environment: OUT_DIR (default bench/results/faces-cuda), GPU_COUNTS (default "2 4"),
#   CASES (default "small large"), VARIANTS (default "packed datatypes"), BUILD_DIR (default
#   build-faces), FACES_ARGS (more Faces arguments, e.g. --graph).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-common.sh
build_dir=${BUILD_DIR:-build-faces}
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}  # NVLink multicast stays off on shared machines

gpus=0
command -v nvidia-smi >/dev/null 2>&1 && gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "$gpus" -lt 2 ]; then
  echo "bench-faces.sh: needs at least 2 GPUs (nvidia-smi shows $gpus); scripts/faces.sh runs anywhere" >&2
  exit 1
fi
bench_init "${OUT_DIR:-bench/results/faces-cuda}"
bench_run env BUILD_DIR="$build_dir" scripts/faces.sh --build-only
faces="$build_dir/examples/faces/faces_cuda"
[ -x "$faces" ] || { echo "bench-faces.sh: $faces was not built (no CUDA compiler?)" >&2; exit 1; }

grid_for() {
  case $1 in
    2) echo "2 1 1" ;;
    4) echo "2 2 1" ;;
    *) echo "bench-faces.sh: no grid chosen for $1 GPUs" >&2; return 1 ;;
  esac
}
input_for() {
  case $1 in
    small) echo "15 14 13 12 10 10 100" ;;
    large) echo "95 94 93 12 3 1 10" ;;
    *) echo "bench-faces.sh: unknown case $1" >&2; return 1 ;;
  esac
}

status=0
for count in ${GPU_COUNTS:-2 4}; do
  if [ "$count" -gt "$gpus" ]; then
    echo "bench-faces.sh: skipping $count GPUs: this machine has $gpus"
    continue
  fi
  grid=$(grid_for "$count")
  for case in ${CASES:-small large}; do
    input=$(input_for "$case")
    for periodic in "" "--periodic"; do
      for variant in ${VARIANTS:-packed datatypes}; do
        case $variant in
          packed) flags="" ;;
          datatypes) flags="--datatypes" ;;
          *) echo "bench-faces.sh: unknown variant $variant" >&2; exit 1 ;;
        esac
        name="faces-$case-${count}gpu${periodic:+-periodic}${flags:+-datatypes}"
        echo "=== $name: grid lx ly lz = $grid, mx my mz n niface niel nshare = $input ${periodic} ${flags}"
        # shellcheck disable=SC2086  # grid, input and flags are lists
        bench_run env MPIX_ST_BACKEND=cuda NCCL_NVLS_ENABLE="$NCCL_NVLS_ENABLE" mpiexec -n "$count" "$faces" \
          --mode all $periodic $flags ${FACES_ARGS:-} --json "$bench_out/$name.json" $grid $input || status=1
      done
    done
  done
done
bench_manifest "Faces, every mode, ${CASES:-small large} inputs${FACES_ARGS:+, $FACES_ARGS}" \
  --setting NCCL_NVLS_ENABLE="$NCCL_NVLS_ENABLE"
exit $status
