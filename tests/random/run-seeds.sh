#!/usr/bin/env bash
# Runs the model-based random test (test_random_model) for many seeds, one MPI job per seed and rank
# count, on the host backend. After each job it looks for /dev/shm/mpixst.<pid>.* segments of the
# job's processes (each rank prints its pid): any left is a failure (and is removed). A job that
# runs past --job-timeout is killed and reported as a hang. Prints every failing seed with the
# command that replays it; exits 1 if any seed failed.
#
#   run-seeds.sh --exe PATH [--mpiexec CMD] [--preflags "FLAGS"] [--np "2 3"] (--seeds "1 2 3" | --first S --count N)
#                [--steps N] [--avoid f,g] [--with f,g] [--deadline SEC] [--job-timeout SEC]
#                [--time-limit SEC] [--jobs J] [--log-dir DIR] [--quiet]
#
# --time-limit: start no new job after this many seconds (the run ends with what it finished).
# --jobs: jobs run at once (each takes np processes; mind the cores).
set -uo pipefail

exe="" mpiexec="${MPIEXEC:-mpiexec}" preflags="" nps="2" seeds="" first=1 count=0 steps=200 avoid="" with=""
deadline=60 job_timeout=0 time_limit=0 jobs=1 log_dir="" quiet=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --exe) exe=$2; shift 2 ;;
    --mpiexec) mpiexec=$2; shift 2 ;;
    --preflags) preflags=$2; shift 2 ;;
    --np) nps=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    --first) first=$2; shift 2 ;;
    --count) count=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --avoid) avoid=$2; shift 2 ;;
    --with) with=$2; shift 2 ;;
    --deadline) deadline=$2; shift 2 ;;
    --job-timeout) job_timeout=$2; shift 2 ;;
    --time-limit) time_limit=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --log-dir) log_dir=$2; shift 2 ;;
    --quiet) quiet=1; shift ;;
    *) echo "run-seeds.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -x "$exe" ]] || { echo "run-seeds.sh: --exe must name the built test_random_model" >&2; exit 2; }
if [[ -z "$seeds" ]]; then
  [[ $count -gt 0 ]] || { echo "run-seeds.sh: give --seeds or --count" >&2; exit 2; }
  seeds=$(seq "$first" $((first + count - 1)) | tr '\n' ' ')
fi
[[ $job_timeout -gt 0 ]] || job_timeout=$((deadline * 3 + 120))
export MPIX_ST_BACKEND=host
export MPIX_ST_WATCHDOG_MS=${MPIX_ST_WATCHDOG_MS:-20000}
export MPIX_RANDOM_MPIEXEC="$mpiexec${preflags:+ $preflags}"
read -r -a pre <<<"$preflags"
flags=(--steps "$steps" --deadline "$deadline")
[[ -n "$avoid" ]] && flags+=(--avoid "$avoid")
[[ -n "$with" ]] && flags+=(--with "$with")
own_logs=0
if [[ -z "$log_dir" ]]; then
  log_dir=$(mktemp -d /tmp/mpixst-random.XXXXXX)
  own_logs=1
fi
mkdir -p "$log_dir"
results="$log_dir/results"
: >"$results"

# run_one <np> <seed>: one job; appends "pass|fail <np> <seed> <seconds>" to the results.
run_one() {
  local np=$1 seed=$2 log="$log_dir/np$1.seed$2.log" t0 rc status
  t0=$(date +%s.%N)
  rm -f "$log_dir/report.np$np.seed$seed".*
  MPIX_RANDOM_REPORT="$log_dir/report.np$np.seed$seed" \
    timeout -k 10 "$job_timeout" "$mpiexec" "${pre[@]}" -n "$np" "$exe" --seed "$seed" "${flags[@]}" >"$log" 2>&1
  rc=$?
  # What the ranks reported, where the launcher lost it.
  for f in "$log_dir/report.np$np.seed$seed".*; do
    [[ -e "$f" ]] || continue
    grep -qF "$(head -2 "$f" | tail -1)" "$log" || cat "$f" >>"$log"
    rm -f "$f"
  done
  status=pass
  [[ $rc -eq 0 ]] || status=fail
  if [[ $rc -eq 124 || $rc -eq 137 ]] && ! grep -q "RANDOM-TEST HANG" "$log"; then
    echo "RANDOM-TEST HANG: the job ran past $job_timeout s (killed); seed $seed, $np ranks" >>"$log"
  fi
  # Segments the job's processes left in /dev/shm (none may remain, even after a failure).
  local pids leaked=""
  pids=$(awk '/^RANDOM-TEST-PID/ {print $3}' "$log")
  for p in $pids; do
    for f in /dev/shm/mpixst."$p".*; do
      [[ -e "$f" ]] && leaked+=" ${f#/dev/shm/}" && rm -f "$f"
    done
  done
  if [[ -n "$leaked" ]]; then
    echo "RANDOM-TEST LEAK: seed $seed, $np ranks: segments left in /dev/shm:$leaked" >>"$log"
    status=fail
  fi
  printf '%s %s %s %.1f\n' "$status" "$np" "$seed" "$(echo "$(date +%s.%N) - $t0" | bc)" >>"$results"
  if [[ $status == fail ]]; then
    {
      echo "---- seed $seed, $np ranks: FAILED (exit $rc) ----"
      grep -A4 -E "RANDOM-TEST (FAILURE|HANG|LEAK)" "$log" | grep -v "^--$" | head -30
      if ! grep -q "replay:" "$log"; then
        echo "  replay: MPIX_ST_BACKEND=host MPIX_ST_WATCHDOG_MS=$MPIX_ST_WATCHDOG_MS $MPIX_RANDOM_MPIEXEC -n $np $exe --seed $seed ${flags[*]}"
        tail -5 "$log" | sed 's/^/  | /'
      fi
    } >&2
  elif [[ $quiet -eq 0 ]]; then
    grep -h "PASSED" "$log" || true
  fi
}

start=$(date +%s)
running=0
stopped=0
for seed in $seeds; do
  for np in $nps; do
    if [[ $time_limit -gt 0 && $(($(date +%s) - start)) -ge $time_limit ]]; then
      stopped=1
      break 2
    fi
    run_one "$np" "$seed" &
    running=$((running + 1))
    if [[ $running -ge $jobs ]]; then
      wait -n
      running=$((running - 1))
    fi
  done
done
wait

total=$(wc -l <"$results")
failed=$(grep -c '^fail' "$results")
elapsed=$(($(date +%s) - start))
echo "random test: $total jobs ($(echo $nps | tr ' ' ',') ranks), $((total - failed)) passed, $failed failed, ${elapsed} s$([[ $stopped -eq 1 ]] && echo ", stopped at the time limit")"
if [[ $failed -gt 0 ]]; then
  echo "failing seeds (ranks seed):"
  grep '^fail' "$results" | awk '{print "  " $2 " " $3}'
  echo "replay one: MPIX_ST_BACKEND=host MPIX_ST_WATCHDOG_MS=$MPIX_ST_WATCHDOG_MS $MPIX_RANDOM_MPIEXEC -n <ranks> $exe --seed <seed> ${flags[*]}"
  echo "  (add --verbose to print each step as it runs; --print-plan --ranks <ranks> prints the plan; --steps N cuts it at step N)"
  echo "logs: $log_dir"
  exit 1
fi
[[ $own_logs -eq 1 ]] && rm -rf "$log_dir"
exit 0
