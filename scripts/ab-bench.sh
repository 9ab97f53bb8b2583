#!/usr/bin/env bash
# ab-bench.sh: an A/B benchmark of two commits, written as a run folder that scripts/perf-report.py
# reads. Run with --help for the interface.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: scripts/ab-bench.sh --base <commit> --head <commit> --out <dir> [options] -- <command ...>

Builds <base> and <head>, each from `git archive` of the commit into a source tree and a build
directory of its own, then runs <command> from each build directory, alternating the two builds for
N rounds (odd rounds base first, even rounds head first), and writes the run folder <dir>:
  <dir>/base-<i>/, <dir>/head-<i>/  round i of each build: stdout.txt (standard output and error)
                                    and whatever the command wrote into $AB_OUT (its JSON results)
  <dir>/command.sh                  this invocation, with both commits as full hashes
  <dir>/run.json                    the manifest: machine, GPUs, MPI, date, commits, rounds, files
                                    (written by scripts/perf-report.py --manifest)

options:
  --base COMMIT        the reference build (A)
  --head COMMIT        the build measured against it (B)
  --out DIR            the run folder, e.g. bench/results/<run>; absent or empty
  --rounds N           rounds of each build (default 2)
  --cmake-args "..."   more CMake arguments for both builds, split at spaces
                       (e.g. "-DMPIX_ST_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90"); the builds are
                       Release unless these say otherwise
  --targets "..."      build only these targets, split at spaces (default: everything)
  --work DIR           where the source trees and build directories go (default
                       /tmp/ab-bench-<base>-<head>); a second call with the same commits reuses
                       them, so nothing is rebuilt
  --jobs N             build parallelism (default: the number of cores)
  --timeout S          stop a round's command after S seconds (default 0: no limit)
  --title TEXT         the run's title in run.json (default "A/B: <base> against <head>")
  --machine TEXT       the machine as run.json names it (default: detected cores and GPUs)
  -h, --help           this text

The command runs in the build directory of each side with these in its environment:
  AB_OUT    an empty directory for the round's files (absolute path): write JSON results there
  AB_SIDE   base or head        AB_ROUND  1..N
  AB_COMMIT the side's commit   AB_SRC    the side's source tree
and the text {AB_OUT} in any argument is replaced by that directory, so `--json {AB_OUT}/x.json`
needs no shell around the command. (Open MPI's mpiexec hands environment variables to the ranks
only when named with -x.)

Exit status: 0 when every round's command succeeded, 1 when a build failed, 2 for a usage error,
3 when a round's command failed (the other rounds still run and the run folder is written).

Example, the host backend on 2 ranks:
  scripts/ab-bench.sh --base HEAD~1 --head HEAD --rounds 2 --targets faces \
    --cmake-args "-DMPIX_ST_CUDA=OFF -DMPIX_ST_HIP=OFF -DMPIX_ST_BUILD_TESTS=OFF" \
    --out bench/results/ab-faces-host -- \
    env MPIX_ST_BACKEND=host mpiexec -n 2 ./examples/faces/faces --mode all \
      --json {AB_OUT}/faces.json 2 1 1 4 4 4 6 2 3 25
On GPUs, e.g. -- mpiexec -n 4 ./examples/faces/faces_cuda --mode all --graph \
      --json {AB_OUT}/faces.json 2 2 1 15 14 13 12 10 10 -100
EOF
}

die() { echo "ab-bench.sh: $*" >&2; exit 2; }

# The whole run is one function, so bash has read it all before it starts (the file may change
# under a long run).
main() {
  base="" head="" out="" rounds=2 cmake_args_text="" targets_text="" work="" jobs="" timeout_s=0 title="" machine=""
  while [ $# -gt 0 ]; do
    case $1 in
      -h|--help) usage; exit 0 ;;
      --base) base=${2:?}; shift 2 ;;
      --head) head=${2:?}; shift 2 ;;
      --out) out=${2:?}; shift 2 ;;
      --rounds) rounds=${2:?}; shift 2 ;;
      --cmake-args) cmake_args_text=${2?}; shift 2 ;;
      --targets) targets_text=${2?}; shift 2 ;;
      --work) work=${2:?}; shift 2 ;;
      --jobs) jobs=${2:?}; shift 2 ;;
      --timeout) timeout_s=${2:?}; shift 2 ;;
      --title) title=${2:?}; shift 2 ;;
      --machine) machine=${2:?}; shift 2 ;;
      --) shift; break ;;
      *) usage >&2; die "unknown argument '$1'" ;;
    esac
  done
  if [ -z "$base" ] || [ -z "$head" ] || [ -z "$out" ]; then usage >&2; die "--base, --head and --out are required"; fi
  [ $# -gt 0 ] || { usage >&2; die "no command after --"; }
  [[ $rounds =~ ^[1-9][0-9]*$ ]] || die "--rounds takes a positive number"
  [[ $timeout_s =~ ^[0-9]+$ ]] || die "--timeout takes seconds"
  command=("$@")
  read -r -a cmake_args <<< "$cmake_args_text"
  read -r -a targets <<< "$targets_text"
  jobs=${jobs:-$(nproc)}

  repo=$(cd "$(dirname "$0")/.." && pwd)
  cd "$repo"
  base_sha=$(git rev-parse --verify --quiet "$base^{commit}") || die "no commit '$base'"
  head_sha=$(git rev-parse --verify --quiet "$head^{commit}") || die "no commit '$head'"
  work=${work:-/tmp/ab-bench-${base_sha:0:7}-${head_sha:0:7}}
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
  [ -z "$(ls -A "$out")" ] || die "$out is not empty"
  mkdir -p "$work"
  work=$(cd "$work" && pwd)

  # prepare <side> <sha>: the source tree from git archive (kept when it already holds <sha>), configured
  # and built in its own directory; logs in <work>/<side>/{configure,build}.txt
  prepare() {
    local side=$1 sha=$2 dir=$work/$1
    if [ ! -f "$dir/commit" ] || [ "$(cat "$dir/commit")" != "$sha" ]; then
      if [ -e "$dir" ] && [ ! -f "$dir/commit" ]; then
        echo "ab-bench.sh: $dir exists and was not made by ab-bench.sh; choose another --work" >&2
        exit 2
      fi
      rm -rf "$dir"
      mkdir -p "$dir/src"
      git archive --format=tar "$sha" | tar -x -C "$dir/src"
      echo "$sha" > "$dir/commit"
    fi
    local generator=()
    if [ ! -f "$dir/build/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
    local build_cmd=(cmake --build "$dir/build" -j "$jobs")
    [ ${#targets[@]} -gt 0 ] && build_cmd+=(--target "${targets[@]}")
    echo "ab-bench.sh: building $side (${sha:0:7}) in $dir/build"
    if ! cmake -S "$dir/src" -B "$dir/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "${cmake_args[@]}" \
         > "$dir/configure.txt" 2>&1; then
      tail -n 30 "$dir/configure.txt" >&2
      echo "ab-bench.sh: configuring $side failed ($dir/configure.txt)" >&2
      exit 1
    fi
    if ! "${build_cmd[@]}" > "$dir/build.txt" 2>&1; then
      tail -n 30 "$dir/build.txt" >&2
      echo "ab-bench.sh: building $side failed ($dir/build.txt)" >&2
      exit 1
    fi
  }

  prepare base "$base_sha"
  prepare head "$head_sha"

  # command.sh: this invocation, replayable from the repository's root
  {
    echo '#!/usr/bin/env bash'
    echo 'set -euo pipefail'
    line=(scripts/ab-bench.sh --base "$base_sha" --head "$head_sha" --rounds "$rounds")
    [ -n "$cmake_args_text" ] && line+=(--cmake-args "$cmake_args_text")
    [ -n "$targets_text" ] && line+=(--targets "$targets_text")
    [ "$timeout_s" != 0 ] && line+=(--timeout "$timeout_s")
    case $out/ in
      "$repo"/*) line+=(--out "$(realpath --relative-to="$repo" "$out")" --) ;;
      *) line+=(--out "$out" --) ;;
    esac
    printf '%q ' "${line[@]}" "${command[@]}" | sed 's/ $//'
    echo
  } > "$out/command.sh"
  chmod +x "$out/command.sh"

  status=0
  round_args=()
  for ((i = 1; i <= rounds; i++)); do
    order=(base head)
    [ $((i % 2)) = 0 ] && order=(head base)
    for side in "${order[@]}"; do
      sha=$base_sha
      [ "$side" = head ] && sha=$head_sha
      dir=$out/$side-$i
      mkdir -p "$dir"
      args=()
      for a in "${command[@]}"; do args+=("${a//\{AB_OUT\}/$dir}"); done
      [ "$timeout_s" != 0 ] && args=(timeout "$timeout_s" "${args[@]}")
      echo "ab-bench.sh: round $i, $side (${sha:0:7})"
      rc=0
      (cd "$work/$side/build" &&
         AB_OUT=$dir AB_SIDE=$side AB_ROUND=$i AB_COMMIT=$sha AB_SRC=$work/$side/src "${args[@]}") \
        > "$dir/stdout.txt" 2>&1 || rc=$?
      if [ "$rc" != 0 ]; then
        echo "ab-bench.sh: round $i, $side: exit status $rc ($dir/stdout.txt)" >&2
        status=3
      fi
      round_args+=(--round-status "$side" "$i" "$rc")
    done
  done

  manifest=(python3 "$repo/scripts/perf-report.py" --manifest "$out"
            --title "${title:-A/B: ${base_sha:0:7} against ${head_sha:0:7}}"
            --commit "${head_sha:0:7}" --base "$base_sha" --head "$head_sha" --rounds "$rounds"
            --run-command "$(printf '%q ' "${command[@]}" | sed 's/ $//')")
  [ -n "$machine" ] && manifest+=(--machine "$machine")
  [ -n "$cmake_args_text" ] && manifest+=(--cmake-args "$cmake_args_text")
  "${manifest[@]}" "${round_args[@]}"
  echo "ab-bench.sh: wrote $out (python3 scripts/perf-report.py --runs $out --output - prints its tables)"
  exit $status
}

main "$@"
