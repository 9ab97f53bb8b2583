#!/usr/bin/env bash
# The long run of the model-based random test (tests/random/, doc/guide/reliability-random-test.md):
# many seeds, on N ranks each, on the host backend, within a time bound; prints every failing seed
# with the command that replays it.
#
#   scripts/random-test.sh [--build DIR] [--seeds N] [--first S] [--np "2 3 4"] [--steps N]
#                          [--time-limit SEC] [--jobs J] [--avoid f,g] [--with f,g] [--ci-avoid]
#                          [--deadline SEC] [--log-dir DIR]
#
#   --build DIR      build directory with test_random_model (default build-h4, else build-test);
#                    the target is built first
#   --seeds N        seeds to run (default 100), from --first (default 1); each seed runs once per
#                    rank count of --np (default "2 3 4")
#   --steps N        steps of each plan before its teardown (default 200)
#   --time-limit S   start no job after S seconds (default: none)
#   --jobs J         jobs at once (default: cores / 4, at least 1: each job is up to 4 ranks with
#                    their stream threads)
#   --avoid, --with  feature groups left out / added (test_random_model --list-features); with
#                    neither, every group is drawn, open findings included
#   --ci-avoid       leave out the groups CI leaves out (the open findings of notes in
#                    tests/mpi/random_model.cmake)
# Examples:
#   scripts/random-test.sh --seeds 10000 --np "2 3 4" --jobs 8 --time-limit 36000
#   scripts/random-test.sh --seeds 100 --np 3 --ci-avoid
set -euo pipefail
cd "$(dirname "$0")/.."
build="" seeds=100 first=1 nps="2 3 4" steps=200 time_limit=0 jobs=0 avoid="" with="" ci_avoid=0 deadline=60 log_dir=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    --first) first=$2; shift 2 ;;
    --np) nps=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --time-limit) time_limit=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --avoid) avoid=$2; shift 2 ;;
    --with) with=$2; shift 2 ;;
    --ci-avoid) ci_avoid=1; shift ;;
    --deadline) deadline=$2; shift 2 ;;
    --log-dir) log_dir=$2; shift 2 ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "random-test.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [[ -z "$build" ]]; then
  for d in build-h4 build-test; do
    [[ -f "$d/CMakeCache.txt" ]] && build=$d && break
  done
fi
[[ -n "$build" && -f "$build/CMakeCache.txt" ]] || {
  echo "random-test.sh: no build directory (configure one, e.g. cmake -S . -B build-h4 -G Ninja -DMPIX_ST_CUDA=OFF -DMPIX_ST_HIP=OFF)" >&2
  exit 2
}
cmake --build "$build" --target test_random_model -j "$(nproc)" >/dev/null
exe="$build/tests/test_random_model"
mpiexec=$(sed -n 's/^MPIEXEC_EXECUTABLE:FILEPATH=//p' "$build/CMakeCache.txt")
[[ -n "$mpiexec" ]] || mpiexec=mpiexec
if [[ $ci_avoid -eq 1 ]]; then
  ci=$(sed -n 's/^set(random_ci_avoid "\(.*\)")/\1/p' tests/mpi/random_model.cmake)
  avoid="${avoid:+$avoid,}$ci"
fi
[[ $jobs -gt 0 ]] || jobs=$(( $(nproc) / 4 > 0 ? $(nproc) / 4 : 1 ))
args=(--exe "$exe" --mpiexec "$mpiexec" --np "$nps" --first "$first" --count "$seeds" --steps "$steps"
      --deadline "$deadline" --jobs "$jobs" --quiet)
[[ $time_limit -gt 0 ]] && args+=(--time-limit "$time_limit")
[[ -n "$avoid" ]] && args+=(--avoid "$avoid")
[[ -n "$with" ]] && args+=(--with "$with")
[[ -n "$log_dir" ]] && args+=(--log-dir "$log_dir")
echo "random test: seeds $first..$((first + seeds - 1)), ranks $nps, $steps steps, $jobs jobs at once${avoid:+, avoiding $avoid}"
exec tests/random/run-seeds.sh "${args[@]}"
