# shellcheck shell=bash
# Shell functions of the benchmark drivers (scripts/bench-*.sh), sourced by them, not run alone.
# A driver writes its output as a run folder that scripts/perf-report.py reads:
#   bench_init DIR         the run folder (created; refused when it already holds a run.json) and a
#                          fresh command.sh in it
#   bench_run CMD ...      appends CMD to command.sh and runs it (environment through `env VAR=...`)
#   bench_build DIR T ...  configures the build directory DIR (the values of its CMake cache when it
#                          has one, else a Release build with Ninja and $CMAKE_ARGS) and builds
#                          the targets T, both through bench_run
#   bench_manifest TITLE [ARGS ...]
#                          writes run.json (scripts/perf-report.py --manifest: machine, GPUs, MPI,
#                          date and commit as found here; ARGS add to or override them), then prints
#                          the run's tables

bench_init() {
  bench_out=$1
  if [ -e "$bench_out/run.json" ]; then
    echo "$(basename "$0"): $bench_out already holds a run (run.json); name another with OUT_DIR" >&2
    exit 1
  fi
  mkdir -p "$bench_out"
  printf '#!/usr/bin/env bash\n# Run from the repository'"'"'s root.\nset -euo pipefail\n' > "$bench_out/command.sh"
  chmod +x "$bench_out/command.sh"
}

bench_run() {
  printf '%q ' "$@" | sed 's/ $//' >> "$bench_out/command.sh"
  echo >> "$bench_out/command.sh"
  "$@"
}

# The cache values that shape a build, as -D arguments.
bench_cache_args() {
  local cache=$1/CMakeCache.txt key
  for key in CMAKE_BUILD_TYPE MPIX_ST_MPI MPIX_ST_OFI MPIX_ST_CUDA MPIX_ST_HIP CMAKE_CUDA_ARCHITECTURES NCCL_ROOT; do
    sed -n "s/^$key:[A-Z]*=\(..*\)$/-D$key=\1/p" "$cache"
  done
}

bench_build() {
  local dir=$1
  shift
  local args=()
  if [ -f "$dir/CMakeCache.txt" ]; then
    mapfile -t args < <(bench_cache_args "$dir")
  else
    scripts/setup.sh
    args=(-G Ninja -DCMAKE_BUILD_TYPE=Release)
    # shellcheck disable=SC2206  # CMAKE_ARGS is a list of arguments
    args+=(${CMAKE_ARGS:-})
  fi
  bench_run cmake -S . -B "$dir" "${args[@]}" >/dev/null
  bench_run cmake --build "$dir" --target "$@"
}

bench_manifest() {
  local title=$1
  shift
  python3 scripts/perf-report.py --manifest "$bench_out" --title "$title" "$@"
  python3 scripts/perf-report.py --runs "$bench_out" --output -
}
