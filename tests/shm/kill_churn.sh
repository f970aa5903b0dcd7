#!/bin/bash
# SIGKILL a random rank at a random instant (0-200 ms after every rank has
# started) while tc_shmtest_kill_churn creates, uses and frees communicators,
# then, once the job has ended, check that nothing of it survives:
#   - no process of the job (found by a tag in its environment) is alive,
#     so none maps memfd:topocoll (checked in /proc/*/maps as well);
#   - memfd: no /dev/shm/topocoll-<pid>-* of any of the job's pids;
#   - named: a file a killed creator left is removed by the next job (one
#     more, unkilled job runs at the end, after a stale file of a dead
#     `sleep` was planted as well), and nothing is left after it.
# Only files named after this job's pids count: other test runs on the
# machine create their own topocoll-* segments.
#
#   kill_churn.sh --launcher L --np N --exe CHURN [--trials T] [--mech memfd|named]
#                 [--seconds S]
# Exit 0: every trial clean; 1: a leftover or a job that did not end.
set -u
launcher= np=3 exe= trials=5 mech=memfd seconds=3
while [ $# -gt 0 ]; do
  case "$1" in
    --launcher) launcher=$2; shift 2 ;;
    --np) np=$2; shift 2 ;;
    --exe) exe=$2; shift 2 ;;
    --trials) trials=$2; shift 2 ;;
    --mech) mech=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    *) echo "kill_churn.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$launcher" ] && [ -x "$exe" ] || { echo "kill_churn.sh: --launcher and --exe needed" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export TC_TEST_NP=$np TC_SHM_MECHANISM=$mech TC_VERBOSE=1

work=$(mktemp -d "${TMPDIR:-/tmp}/tc-killchurn.XXXXXX")
trap 'rm -rf "$work"' EXIT
failed=0 killed=0 left_named=0
declare -a all_pids=()

# Processes whose environment holds $1 (the job's own: launcher, ranks,
# helpers). Listed only if still there with a command line a moment later:
# the scan's own short-lived pipeline processes do not count.
tagged() {
  local p
  for p in $(grep -laF "$1" /proc/[0-9]*/environ 2>/dev/null | sed 's|^/proc/||; s|/environ$||'); do
    [ "$p" = "$$" ] && continue
    sleep 0.1
    alive "$p" && grep -qaF "$1" "/proc/$p/environ" 2>/dev/null && echo "$p"
  done
}

# Alive: exists and is not a zombie (a zombie has released its memory; the
# ranks are reparented when the launcher ends and may wait to be reaped).
alive() {
  local st
  st=$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# /dev/shm files named after any of the given pids.
files_of() {
  local p
  for p in "$@"; do ls -1 /dev/shm 2>/dev/null | grep -E "^topocoll-$p-" | sed 's|^|/dev/shm/|'; done
}

# Run one job; $1 = trial label, $2 = 1 to kill a rank. Sets job_pids.
run_job() {
  local label=$1 kill_one=$2 dir="$work/$1" tag="TC_KILLCHURN_TAG=$$-$1-$RANDOM"
  mkdir -p "$dir"
  env "$tag" TC_KILL_PIDDIR="$dir" "$launcher" -np "$np" "$exe" "$seconds" >"$dir/out" 2>&1 &
  local lpid=$! t=0 n
  while :; do
    n=$(ls "$dir" | grep -c '\.pid$')
    [ "$n" -ge "$np" ] && break
    if ! kill -0 $lpid 2>/dev/null || [ $t -ge 600 ]; then
      echo "kill_churn.sh: $label: the job did not start ($n of $np pids)" >&2
      cat "$dir/out" >&2; failed=$((failed + 1)); wait $lpid 2>/dev/null; job_pids=(); return
    fi
    sleep 0.1; t=$((t + 1))
  done
  job_pids=($(cat "$dir"/*.pid))
  all_pids+=("${job_pids[@]}")
  if [ "$kill_one" = 1 ]; then
    sleep "$(printf '0.%03d' $((RANDOM % 201)))"
    local victim=$((RANDOM % np))
    kill -9 "$(cat "$dir/$victim.pid")" 2>/dev/null && killed=$((killed + 1))
  fi
  # Wait for the job to end (the launcher tears the others down).
  t=0
  while kill -0 $lpid 2>/dev/null && [ $t -lt 1200 ]; do sleep 0.1; t=$((t + 1)); done
  if kill -0 $lpid 2>/dev/null; then
    echo "kill_churn.sh: $label: the job did not end within 120 s" >&2
    failed=$((failed + 1)); kill -9 $lpid "${job_pids[@]}" 2>/dev/null
  fi
  wait $lpid 2>/dev/null
  local rc=$?
  if [ "$kill_one" = 0 ] && [ $rc -ne 0 ]; then
    echo "kill_churn.sh: $label: the unkilled job failed ($rc)" >&2; cat "$dir/out" >&2
    failed=$((failed + 1))
  fi
  sleep 0.2
  local survivors p
  survivors=$(tagged "${tag%%=*}=${tag#*=}")
  for p in "${job_pids[@]}"; do
    alive "$p" && ! [[ " $survivors " == *" $p "* ]] && survivors="$survivors $p"
  done
  if [ -n "${survivors// /}" ]; then
    echo "kill_churn.sh: $label: processes of the job survive:$survivors" >&2
    for p in $survivors; do tr "\0" " " <"/proc/$p/cmdline" 2>/dev/null >&2; echo >&2; done
    for p in $survivors; do grep -H 'memfd:topocoll' "/proc/$p/maps" 2>/dev/null >&2; done
    failed=$((failed + 1)); kill -9 $survivors 2>/dev/null
  fi
}

for i in $(seq 1 "$trials"); do
  run_job "trial$i" 1
  left=$(files_of "${job_pids[@]}")
  if [ -n "$left" ]; then
    if [ "$mech" = memfd ]; then
      echo "kill_churn.sh: trial$i (memfd): left $left" >&2; failed=$((failed + 1))
    else
      left_named=$((left_named + 1))
      echo "kill_churn.sh: trial$i (named): the killed job left $left (the next job must remove it)"
    fi
  fi
done

if [ "$mech" = named ]; then
  # A stale file whose creator is certainly dead: a `sleep` killed here.
  sleep 60 & spid=$!
  kill -9 $spid; wait $spid 2>/dev/null
  planted=/dev/shm/topocoll-$spid-killchurn$RANDOM
  head -c 8192 /dev/zero >"$planted"
  all_pids+=("$spid")
  run_job final 0
  if [ -e "$planted" ]; then
    echo "kill_churn.sh: the planted stale $planted was not removed" >&2; failed=$((failed + 1))
    rm -f "$planted"
  fi
  grep -q "removed the stale segment /dev/shm/topocoll-$spid-" "$work/final/out" ||
    { echo "kill_churn.sh: the removal of $planted was not reported" >&2; failed=$((failed + 1)); }
fi
left=$(files_of "${all_pids[@]}")
if [ -n "$left" ]; then
  echo "kill_churn.sh: left in /dev/shm at the end: $left" >&2; failed=$((failed + 1))
  rm -f $left
fi
maps=$(grep -l 'memfd:topocoll' /proc/[0-9]*/maps 2>/dev/null | while read -r m; do
  p=${m#/proc/}; p=${p%/maps}
  for q in "${all_pids[@]}"; do [ "$p" = "$q" ] && echo "$p"; done
done)
[ -z "$maps" ] || { echo "kill_churn.sh: job pids still map memfd:topocoll: $maps" >&2; failed=$((failed + 1)); }

echo "kill_churn.sh: $mech, np $np, $trials trials, $killed ranks killed, $left_named named files left by a killed job (removed by the next), $failed failures"
[ $failed -eq 0 ]
