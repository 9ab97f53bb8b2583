#!/bin/bash
# Runs test_setup_death (NP ranks; rank 0 SIGKILLs itself inside MPI_Win_allocate or inside the first
# stream collective's set-up, in the exchange of region handles or in the mapping barrier, while the
# other ranks are in the same call) RUNS times per case and checks each run: no process of the run
# is left, and no /dev/shm/mpixst.<pid>.* segment of any of its processes is left.
#   setup_death.sh MPIEXEC TEST_BINARY NP [RUNS]   (environment: MPIX_ST_BACKEND=host)
set -u
mpiexec=$1 binary=$2 np=$3 runs=${4:-1}
read -r -a preflags <<<"${MPIX_TEST_MPIEXEC_PREFLAGS:-}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 total=0
for phase in window.exchange window.barrier coll.exchange coll.barrier; do
  for run in $(seq 1 "$runs"); do
    total=$((total + 1))
    dir=$work/$phase.$run
    mkdir -p "$dir"
    tag="setup-death-$$-$phase-$run"
    timeout 60 "$mpiexec" "${preflags[@]}" -n "$np" "$binary" --pid-dir="$dir" --phase="${phase%.*}" --at="${phase#*.}" --tag="$tag" \
      >"$dir/out" 2>&1
    status=$?
    ok=1
    [ "$status" = 124 ] && { echo "$phase run $run: mpiexec timed out"; ok=0; }
    [ "$status" = 0 ] && { echo "$phase run $run: the job succeeded, but rank 0 was to die"; ok=0; }
    grep -q "left the call" "$dir/out" && { echo "$phase run $run: a rank left the call"; ok=0; }
    grep -q "dying in" "$dir/out" || { echo "$phase run $run: rank 0 did not die where it was to"; ok=0; }
    sleep 0.5
    if pgrep -f -- "--tag=$tag" >/dev/null; then
      echo "$phase run $run: processes left: $(pgrep -f -- "--tag=$tag" | tr '\n' ' ')"
      pkill -9 -f -- "--tag=$tag"
      ok=0
    fi
    for f in "$dir"/rank*; do
      pid=$(cat "$f")
      left=$(ls /dev/shm 2>/dev/null | grep "^mpixst\.$pid\." || true)
      [ -n "$left" ] && {
        echo "$phase run $run: /dev/shm segments of pid $pid left: $(echo $left | tr '\n' ' ')"
        rm -f /dev/shm/mpixst."$pid".*
        ok=0
      }
    done
    [ "$(ls "$dir"/rank* 2>/dev/null | wc -l)" = "$np" ] || { echo "$phase run $run: not every rank started"; ok=0; }
    if [ $ok = 1 ]; then passed=$((passed + 1)); else sed 's/^/    /' "$dir/out" | tail -20; fi
  done
done
echo "setup_death: $passed/$total runs passed"
[ "$passed" = "$total" ]
