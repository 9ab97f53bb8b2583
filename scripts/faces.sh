#!/usr/bin/env bash
# Faces, the project's main job: installs what the build needs (Debian 12, only what is missing),
# builds Faces, and runs every mode (`--mode all`) on 4 ranks, checked against the host reference.
#   no GPU (nvidia-smi shows none): `faces` on the host backend, a 2x2x1 periodic grid of small
#                                   blocks (well under a minute on 2 cores)
#   GPUs:                           `faces_cuda`, the standard small input 15 14 13 12 10 10 100 on
#                                   a 2x2x1 periodic grid, ranks spread over the GPUs
# Usage: scripts/faces.sh [--build-only]
#   BUILD_DIR=...         build elsewhere (default build-faces)
#   MPIX_ST_SKIP_INSTALL=1  use the tools on PATH as they are (machines that are not Debian)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build-faces}


gpu_count() {
  command -v nvidia-smi >/dev/null 2>&1 || { echo 0; return; }
  nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true
}

# NCCL for the nccl mode: the CUDA toolkit's, else the one in PyTorch's pip packages.
nccl_root() {
  [ -n "${NCCL_ROOT:-}" ] && { echo "$NCCL_ROOT"; return; }
  command -v python3 >/dev/null 2>&1 || return 0
  python3 - <<'PY' 2>/dev/null || true
import os, nvidia.nccl
for d in nvidia.nccl.__path__:
    if os.path.exists(os.path.join(d, "include", "nccl.h")):
        print(d)
        break
PY
}

scripts/setup.sh
cmake_args=(-S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release)
root=$(nccl_root)
[ -n "$root" ] && cmake_args+=("-DNCCL_ROOT=$root")
cmake "${cmake_args[@]}" >/dev/null
targets=(faces)
gpus=$(gpu_count)
if [ "$gpus" -gt 0 ] && cmake --build "$build_dir" --target help | grep -q '^faces_cuda:'; then
  targets+=(faces_cuda)
fi
cmake --build "$build_dir" -j "$(nproc)" --target "${targets[@]}"
[ "${1:-}" = "--build-only" ] && exit 0

faces_dir="$build_dir/examples/faces"
if [ "$gpus" -gt 0 ] && [ -x "$faces_dir/faces_cuda" ]; then
  ranks_per_gpu=$(((4 + gpus - 1) / gpus))
  echo "faces.sh: $gpus GPU(s): faces_cuda, 4 ranks, $ranks_per_gpu per GPU"
  MPIX_ST_BACKEND=cuda mpiexec -n 4 "$faces_dir/faces_cuda" --mode all --periodic --ranks-per-gpu "$ranks_per_gpu" \
    2 2 1 15 14 13 12 10 10 100
else
  echo "faces.sh: no GPU: faces on the host backend, 4 ranks"
  MPIX_ST_BACKEND=host mpiexec -n 4 "$faces_dir/faces" --mode all --periodic 2 2 1 4 4 4 6 2 3 25
fi
