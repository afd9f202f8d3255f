#!/usr/bin/env bash
# Kills ranks of test_shm_kill and checks that no weft shared-memory file
# (/dev/shm/weft-*) is left.
#
#   check_shm_kill.sh MODE NP LAUNCHER... PROGRAM
#
#   mapped   the last rank kills itself once its segments are mapped
#   steps    every rank in turn kills itself before each of its steps in
#            weft_seg_alloc and weft_finalize (the steps are counted by a
#            run without a kill first)
#   outside  a sibling process SIGKILLs a random rank at a random time
#            while the ranks allocate and free segments (SHM_KILL_TRIALS
#            runs, 8 by default)
#
# As root the whole check runs in a mount namespace of its own with a
# fresh /dev/shm, so every file there is this job's.  Otherwise the
# listings before and after are compared: files of other weft jobs running
# at the same time come and go within milliseconds, so a file counts as
# left only if it is still there 2 s later.
set -uo pipefail
mode=$1 np=$2
shift 2

if [ "$(id -u)" = 0 ] && [ -z "${SHM_KILL_PRIVATE:-}" ] && unshare --mount true 2>/dev/null; then
  exec unshare --mount -- env SHM_KILL_PRIVATE=1 bash -c \
    'mount -t tmpfs -o mode=1777,size=1g tmpfs /dev/shm && exec "$0" "$@"' "$0" "$mode" "$np" "$@"
fi
if [ -n "${SHM_KILL_PRIVATE:-}" ]; then
  echo "private /dev/shm: every file there is this check's"
  grace=0
else
  grace=2
fi

listing() { ls -A /dev/shm | grep '^weft-' | sort || true; }
before=$(listing)
failures=0

# check_left WHAT: fail if a weft file appeared since the start
check_left() {
  sleep "$grace"
  local left
  left=$(comm -13 <(echo "$before") <(listing))
  if [ -n "$left" ]; then
    echo "FAIL: $1 left weft files in /dev/shm: $left" >&2
    failures=$((failures + 1))
    # later runs are judged on their own files
    before=$(listing)
  fi
}

case $mode in
mapped)
  SHM_KILL_STEP=mapped "$@"
  rc=$?
  if [ "$rc" -eq 0 ]; then
    echo "FAIL: the job exited normally: the rank was not killed" >&2
    exit 1
  fi
  check_left "a rank killed after mapping"
  ;;
steps)
  out=$("$@") || { echo "FAIL: the run without a kill failed" >&2; exit 1; }
  nsteps=$(echo "$out" | sed -n 's/.*steps: \([0-9]*\).*/\1/p' | sort -n | tail -1)
  if [ -z "$nsteps" ] || [ "$nsteps" -lt 1 ]; then
    echo "FAIL: no steps counted: $out" >&2
    exit 1
  fi
  echo "each rank makes up to $nsteps steps"
  killed=0
  for ((r = 0; r < np; r++)); do
    for ((s = 1; s <= nsteps; s++)); do
      SHM_KILL_RANK=$r SHM_KILL_STEP=$s "$@" >/dev/null 2>&1
      rc=$?
      [ "$rc" -ne 0 ] && killed=$((killed + 1))
      check_left "rank $r killed at step $s (status $rc)"
    done
  done
  echo "$killed of $((np * nsteps)) runs were killed"
  # a step count that varies by a step or two may leave a kill unreached,
  # but most must be reached for the check to mean anything
  if [ "$killed" -lt $((np * nsteps * 3 / 4)) ]; then
    echo "FAIL: too few runs were killed" >&2
    failures=$((failures + 1))
  fi
  ;;
outside)
  trials=${SHM_KILL_TRIALS:-8}
  pids=$(mktemp)
  for ((t = 1; t <= trials; t++)); do
    : >"$pids"
    SHM_KILL_LOOP=20 SHM_KILL_PIDS=$pids "$@" >/dev/null 2>&1 &
    job=$!
    for ((i = 0; i < 200 && $(wc -l <"$pids") < np; i++)); do sleep 0.05; done
    if [ "$(wc -l <"$pids")" -lt "$np" ]; then
      echo "FAIL: trial $t: the ranks did not start" >&2
      kill -9 "$job" 2>/dev/null
      failures=$((failures + 1))
      continue
    fi
    # a random rank, after a random 0-1.5 s of allocating and freeing
    victim=$(awk -v r=$((RANDOM % np)) '$1 == r {print $2}' "$pids")
    sleep "$(awk -v s=$RANDOM 'BEGIN {printf "%.3f", s % 1500 / 1000}')"
    kill -KILL "$victim"
    wait "$job"
    rc=$?
    echo "trial $t: rank pid $victim killed from outside, job status $rc"
    check_left "trial $t (a rank killed from outside)"
  done
  rm -f "$pids"
  ;;
*)
  echo "unknown mode $mode" >&2
  exit 2
  ;;
esac

if [ "$failures" -gt 0 ]; then
  exit 1
fi
echo "no weft file left in /dev/shm ($mode)"
