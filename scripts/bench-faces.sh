#!/usr/bin/env bash
# GPU comparison of the Faces modes (p2p, rma, st, nccl) in one run per configuration:
#   inputs: small (latency-bound)  mx my mz n niface niel nshare = 15 14 13 12 10 10 100
#           large (bandwidth-bound)                               = 95 94 93 12 3 1 10
#   on 2 and 4 GPUs (one rank per GPU), periodic and not. The rank grid lx ly lz is chosen from
#   the GPU count (2 -> 2 1 1, 4 -> 2 2 1) and printed with each run.
#   Variants: `packed` (every mode packs) and `datatypes` (--datatypes: rma and st put from the
#   field through derived types; p2p and nccl pack as in `packed`, a reference in the same run).
# Writes one JSON per run and faces.png (scripts/plot-faces.py) to OUT_DIR (default faces-results).
# Environment: OUT_DIR, GPU_COUNTS (default "2 4"), CASES (default "small large"),
#   VARIANTS (default "packed datatypes"), BUILD_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
out_dir=${OUT_DIR:-faces-results}
build_dir=${BUILD_DIR:-build-faces}
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}  # NVLink multicast stays off on shared machines

gpus=0
command -v nvidia-smi >/dev/null 2>&1 && gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "$gpus" -lt 2 ]; then
  echo "bench-faces.sh: needs at least 2 GPUs (nvidia-smi shows $gpus); scripts/faces.sh runs anywhere" >&2
  exit 1
fi
BUILD_DIR=$build_dir scripts/faces.sh --build-only
faces="$build_dir/examples/faces/faces_cuda"
[ -x "$faces" ] || { echo "bench-faces.sh: $faces was not built (no CUDA compiler?)" >&2; exit 1; }
mkdir -p "$out_dir"

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
        MPIX_ST_BACKEND=cuda mpiexec -n "$count" "$faces" --mode all $periodic $flags \
          --json "$out_dir/$name.json" $grid $input || status=1
      done
    done
  done
done

if python3 -c 'import matplotlib' 2>/dev/null; then
  python3 scripts/plot-faces.py "$out_dir"/faces-*.json -o "$out_dir/faces.png"
else
  echo "bench-faces.sh: no matplotlib; plot later with: python3 scripts/plot-faces.py $out_dir/faces-*.json -o faces.png"
fi
exit $status
