#!/bin/bash
# Runs test_kill_peer (3 ranks, rank 1 SIGKILLs itself during an epoch) RUNS times and checks each
# run: every survivor's watchdog error named the dead peer, no process of the run is left, and no
# /dev/shm/mpixst.<pid>.* segment of any of its processes is left.
#   kill_peer.sh MPIEXEC TEST_BINARY [RUNS]   (environment: MPIX_ST_BACKEND=host, MPIX_ST_WATCHDOG_MS)
set -u
mpiexec=$1 binary=$2 runs=${3:-1}
# The launcher flags the build chose (Open MPI: --oversubscribe, --allow-run-as-root), one string.
read -r -a preflags <<<"${MPIX_TEST_MPIEXEC_PREFLAGS:-}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
for run in $(seq 1 "$runs"); do
  dir=$work/$run
  mkdir -p "$dir"
  tag="kill-peer-$$-$run"
  timeout 120 "$mpiexec" "${preflags[@]}" -n 3 "$binary" --pid-dir="$dir" --tag="$tag" >"$dir/out" 2>&1
  status=$?
  ok=1
  for r in 0 2; do
    grep -q "REPORT OK" "$dir/result$r" 2>/dev/null || { echo "run $run: rank $r did not report the dead peer"; ok=0; }
  done
  [ "$status" = 124 ] && { echo "run $run: mpiexec timed out"; ok=0; }
  sleep 0.5
  if pgrep -f -- "--tag=$tag" >/dev/null; then
    echo "run $run: processes left: $(pgrep -f -- "--tag=$tag" | tr '\n' ' ')"
    pkill -9 -f -- "--tag=$tag"
    ok=0
  fi
  for f in "$dir"/rank*; do
    pid=$(cat "$f")
    left=$(ls /dev/shm 2>/dev/null | grep "^mpixst\.$pid\." || true)
    [ -n "$left" ] && { echo "run $run: /dev/shm segments of pid $pid left: $left"; rm -f /dev/shm/mpixst."$pid".*; ok=0; }
  done
  [ "$(ls "$dir"/rank* | wc -l)" = 3 ] || { echo "run $run: not every rank started"; ok=0; }
  if [ $ok = 1 ]; then passed=$((passed + 1)); else sed 's/^/    /' "$dir/out" "$dir"/result* 2>/dev/null; fi
  [ "$run" = 1 ] && sed 's/^/  first run, /' "$dir"/result0 2>/dev/null
done
echo "kill_peer: $passed/$runs runs passed"
[ "$passed" = "$runs" ]
