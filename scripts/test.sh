#!/usr/bin/env bash
# The test command: installs dependencies, builds everything (host backend, plus the CUDA and HIP
# plugins where their compilers exist), and runs the CPU test suite with real MPI processes.
# GPU tests (ctest label `gpu`) are built but left out here; run them on a GPU machine with
#   ctest --test-dir build-test -L gpu
#   BUILD_DIR=...   build elsewhere (default build-test)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build_dir=${BUILD_DIR:-build-test}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build_dir" -j "$(nproc)"
# The HIP backend must at least compile wherever hipcc exists.
if command -v hipcc >/dev/null 2>&1 && [ ! -f "$build_dir/libmpixst_hip.so" ]; then
  echo "test.sh: hipcc is present but the HIP backend was not built" >&2
  exit 1
fi
cd "$build_dir"
ctest -LE gpu --output-on-failure --timeout 300
