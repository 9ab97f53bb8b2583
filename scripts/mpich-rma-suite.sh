#!/usr/bin/env bash
# MPICH's own RMA conformance tests (test/mpi/rma of the installed MPICH's Debian source package),
# run with libmpixst linked before the MPI, on the host backend. A library layered through PMPI must
# not change what a program that never calls its extensions sees: a test that passes plain must pass
# interposed. The plain build runs only the tests that fail interposed (to tell a regression from a
# test the MPI itself fails here), so the suite costs one pass when everything agrees.
#
# Usage: scripts/mpich-rma-suite.sh --lib <dir of libmpixst.so> [options]
#   --mpi mpich|openmpi  the MPI whose wrappers build the tests (default mpich); the tests are always
#                        MPICH's, from the source package of the installed mpich
#   --work DIR           where sources and builds go (default build-mpich-rma)
#   --jobs N             tests run N at a time (default: nproc)
#   --tests REGEX        only tests whose name matches (default: all of rma/testlist)
#   --skip FILE          tests left out because they fail or hang plain with this MPI on this kind of
#                        machine: one "name np [args]  # reason" line each (default
#                        scripts/mpich-rma-skip.txt, with --mpi openmpi scripts/mpich-rma-skip-openmpi.txt)
#   --long               with MPICH, also the tests of scripts/mpich-rma-long.txt (over 40 s each on
#                        2 cores; CI leaves them out, their ranks spin in the MPI's accumulate paths)
#   --full               every test, both builds, nothing skipped (on demand: it finds the tests that
#                        fail plain, for the skip list)
# Exit status: 0 when every test that passes plain passes interposed, 1 otherwise.
# The source comes from Debian's archive with apt's ordinary client and a deb-src list of the
# script's own (the system's apt configuration is not touched); nothing of it enters the repository.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
mpi=mpich
work=build-mpich-rma
jobs=$(nproc)
filter=.
lib=""
skip=""
full=0
long=0
while [ $# -gt 0 ]; do
  case "$1" in
    --lib) lib=$2; shift 2 ;;
    --mpi) mpi=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --tests) filter=$2; shift 2 ;;
    --skip) skip=$2; shift 2 ;;
    --long) long=1; shift ;;
    --full) full=1; shift ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
    *) echo "mpich-rma-suite.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
long_list=""  # Open MPI runs the whole list in about 6 minutes here
if [ "$mpi" = mpich ]; then long_list=scripts/mpich-rma-long.txt; fi
if [ -z "$skip" ]; then
  skip=scripts/mpich-rma-skip.txt
  if [ "$mpi" = openmpi ]; then skip=scripts/mpich-rma-skip-openmpi.txt; fi
fi
[ -n "$lib" ] && [ -f "$lib/libmpixst.so" ] || { echo "mpich-rma-suite.sh: --lib must name the folder of libmpixst.so" >&2; exit 2; }
lib=$(cd "$lib" && pwd)
mkdir -p "$work"
work=$(cd "$work" && pwd)
mpicc=$(command -v "mpicc.$mpi" || command -v mpicc)
mpiexec=$(command -v "mpiexec.$mpi" || command -v mpiexec)
launch=("$mpiexec")
[ "$mpi" = openmpi ] && launch+=(--oversubscribe) && [ "$(id -u)" -eq 0 ] && launch+=(--allow-run-as-root)

# 1. The source package of the installed MPICH, fetched once.
version=$(dpkg-query -W -f='${source:Version}' mpich)
upstream=${version%%-*}
src=$work/mpich-$upstream
if [ ! -f "$src/test/mpi/configure" ]; then
  apt_dir=$work/apt
  mkdir -p "$apt_dir/lists/partial"
  codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
  echo "deb-src http://deb.debian.org/debian $codename main" >"$apt_dir/sources.list"
  apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
            -o "Dir::State::Lists=$apt_dir/lists" -o APT::Sandbox::User=root)
  apt-get "${apt_opts[@]}" -qq update
  (cd "$apt_dir" && apt-get "${apt_opts[@]}" -qq source --download-only "mpich=$version")
  tar -C "$work" -xJf "$apt_dir/mpich_$upstream.orig.tar.xz" "mpich-$upstream/test/mpi"
fi

# 2. Two builds of test/mpi/rma: plain, and with libmpixst before the MPI (the wrapper puts -lmpi last).
build() {  # build <dir> <extra LIBS>
  local dir=$1 libs=$2
  if [ ! -f "$dir/Makefile" ]; then
    mkdir -p "$dir"
    (cd "$dir" && "$src/test/mpi/configure" -q CC="$mpicc" MPICC="$mpicc" --disable-fortran --disable-cxx \
       --disable-romio --disable-spawn --disable-ft-tests --disable-perftest --disable-checkfaulttolerance \
       MPIEXEC="$mpiexec" >configure.log 2>&1) || { tail -30 "$dir/configure.log"; return 1; }
  fi
  make -s -C "$dir/util" -j "$jobs" >"$dir/util-build.log" 2>&1 || { tail -30 "$dir/util-build.log"; return 1; }
  local dtp_flags=()
  if [ "$mpi" = openmpi ]; then
    # Open MPI's mpi.h turns the MPI-1 name MPI_Type_hvector, which dtpools still calls, into a
    # compile-time error: build dtpools without those declarations and link a forwarder to
    # MPI_Type_create_hvector (same arguments) into the tests.
    dtp_flags=(CPPFLAGS=-DOMPI_OMIT_MPI1_COMPAT_DECLS=1)
    printf '%s\n' '#include <mpi.h>' \
      'int MPI_Type_hvector(int n, int len, MPI_Aint stride, MPI_Datatype old, MPI_Datatype *out) {' \
      '  return MPI_Type_create_hvector(n, len, stride, old, out);' '}' >"$dir/mpi1_hvector.c"
    "$mpicc" -DOMPI_OMIT_MPI1_COMPAT_DECLS=1 -c "$dir/mpi1_hvector.c" -o "$dir/mpi1_hvector.o"
    libs="$dir/mpi1_hvector.o $libs"
  fi
  make -s -C "$dir/dtpools" -j "$jobs" "${dtp_flags[@]}" >"$dir/dtpools-build.log" 2>&1 || { tail -30 "$dir/dtpools-build.log"; return 1; }
  make -s -C "$dir/rma" -j "$jobs" LIBS="$libs" >"$dir/rma-build.log" 2>&1 || { tail -30 "$dir/rma-build.log"; return 1; }
}
echo "mpich-rma-suite.sh: MPICH $version test/mpi/rma, built with $mpicc"
build "$work/interposed" "-L$lib -Wl,--no-as-needed -lmpixst -Wl,--as-needed"
if ! LD_LIBRARY_PATH=$lib ldd "$work/interposed/rma/winname" | grep "libmpixst.so.* => $lib/" >/dev/null; then
  echo "mpich-rma-suite.sh: the interposed build does not load libmpixst" >&2
  exit 1
fi

# 3. The test list: "name np [timeLimit=s] [arg=...] [env=...] [xfail=...]"; configure's @...@ lines
# (large tests) stay out, as MPICH's runtests leaves them out by default.
list=$work/tests.txt
grep -Ev '^\s*(#|$)|@' "$src/test/mpi/rma/testlist.in" | awk -v re="$filter" '$1 ~ re' >"$list"
if [ "$full" = 0 ] && [ -f "$skip" ]; then
  sed -e 's/\s*#.*//' -e '/^\s*$/d' "$skip" | grep -vxF -f - "$list" >"$list.run" || true
  echo "mpich-rma-suite.sh: $(( $(wc -l <"$list") - $(wc -l <"$list.run") )) test(s) of $skip left out (they fail plain here)"
  mv "$list.run" "$list"
fi
if [ "$full" = 0 ] && [ "$long" = 0 ] && [ -n "$long_list" ]; then
  sed -e 's/\s*#.*//' -e '/^\s*$/d' "$long_list" | grep -vxF -f - "$list" >"$list.run" || true
  echo "mpich-rma-suite.sh: $(( $(wc -l <"$list") - $(wc -l <"$list.run") )) long test(s) of $long_list left out (--long runs them)"
  mv "$list.run" "$list"
fi

# run_one <build dir> <line>: prints "pass|fail|hang <seconds> <line>"; the log beside the build.
run_one() {
  local dir=$1 line=$2 name np limit=180 args=() envs=() word
  read -r name np rest <<<"$line"
  for word in ${rest:-}; do
    case "$word" in
      timeLimit=*) limit=${word#timeLimit=} ;;
      arg=*) args+=("${word#arg=}") ;;
      env=*) envs+=("${word#env=}") ;;
    esac
  done
  local log="$dir/logs/$(echo "$line" | tr -c 'A-Za-z0-9_=.-' '_').log" start=$SECONDS rc=0
  mkdir -p "$dir/logs"
  # Open MPI's launchers, started side by side, race for one session directory under TMPDIR.
  local tmp
  tmp=$(mktemp -d "$dir/tmp.XXXXXX")
  (cd "$dir/rma" && env TMPDIR="$tmp" MPIX_ST_BACKEND=host LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "${envs[@]}" timeout -k 5 "$limit" \
     "${launch[@]}" -n "$np" "./$name" "${args[@]}") >"$log" 2>&1 || rc=$?
  rm -rf "$tmp"
  local verdict=fail
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then verdict=hang
  elif [ "$rc" -eq 0 ] && grep -q "No Errors" "$log"; then verdict=pass
  fi
  echo "$verdict $((SECONDS - start)) $line"
}
export -f run_one
export launch_str="${launch[*]}" lib

run_list() {  # run_list <build dir> <list file> <results file>
  local dir=$1 in=$2 out=$3
  # The launcher array travels to the subshells as a string (bash exports no arrays).
  tr '\n' '\0' <"$in" | xargs -0 -P "$jobs" -I{} bash -c 'launch=($launch_str); run_one "$0" "$1"' "$dir" {} \
    | sort -k3 >"$out"
}

start=$SECONDS
run_list "$work/interposed" "$list" "$work/interposed.txt"
# A test that fails or hangs interposed runs once more (ranks outnumber CI's two cores, and some of
# MPICH's tests are timing-sensitive there): only a second failure counts. Both logs are kept.
if [ "$full" = 0 ] && grep -qv '^pass ' "$work/interposed.txt"; then
  grep -v '^pass ' "$work/interposed.txt" | cut -d' ' -f3- >"$work/retry.txt"
  mkdir -p "$work/interposed/logs/first"
  cp "$work"/interposed/logs/*.log "$work/interposed/logs/first/" 2>/dev/null || true
  run_list "$work/interposed" "$work/retry.txt" "$work/retried.txt"
  { grep '^pass ' "$work/interposed.txt" || true; cat "$work/retried.txt"; } | sort -k3 >"$work/interposed.merged"
  mv "$work/interposed.merged" "$work/interposed.txt"
  echo "mpich-rma-suite.sh: $(wc -l <"$work/retry.txt") test(s) run again interposed, $(grep -c '^pass ' "$work/retried.txt" || true) passed the second time"
fi
if [ "$full" = 1 ]; then cp "$list" "$work/to-check.txt"
else grep -v '^pass ' "$work/interposed.txt" | cut -d' ' -f3- >"$work/to-check.txt" || true; fi
echo "mpich-rma-suite.sh: interposed: $(grep -c '^pass ' "$work/interposed.txt") of $(wc -l <"$list") pass ($((SECONDS - start)) s)"

failed=0
if [ -s "$work/to-check.txt" ]; then
  build "$work/plain" ""
  run_list "$work/plain" "$work/to-check.txt" "$work/plain.txt"
  while read -r verdict seconds line; do
    plain=$(awk -v l="$line" '{ v=$1; $1=""; $2=""; sub(/^  /, ""); if ($0 == l) print v }' "$work/plain.txt")
    if [ "$plain" != pass ]; then
      echo "  $verdict interposed, $plain plain (not a difference): $line"
    else
      echo "  $verdict interposed, pass plain: $line   log: $work/interposed/logs/"
      failed=1
    fi
  done < <(grep -v '^pass ' "$work/interposed.txt")
  if [ "$full" = 1 ]; then
    echo "mpich-rma-suite.sh: failing plain (candidates for $skip):"
    grep -v '^pass ' "$work/plain.txt" | awk '{ v=$1; t=$2; $1=""; $2=""; sub(/^  /, ""); printf "  %s  # %s plain after %s s\n", $0, v, t }'
  fi
fi
echo "mpich-rma-suite.sh: $([ $failed = 0 ] && echo "no test that passes plain fails interposed" || echo "DIFFERENCES above") ($((SECONDS - start)) s)"
exit $failed
