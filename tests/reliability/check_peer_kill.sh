#!/usr/bin/env bash
# Kill points: runs test_peer_kill RUNS times (seeds SEED0, SEED0+1, ...),
# each time on NP ranks of which one SIGKILLs itself in the middle of the
# others' operations to it.  mpirun --enable-recovery lets the survivors
# live on.  A run passes when every survivor prints PASS within the hang
# bound, and nothing of the job is left in /dev/shm nor as a System V
# segment.  Prints the detection times (last good operation to the dead
# rank -> its error) and a summary line.
#
# usage: check_peer_kill.sh RUNS SEED0 NP EXE MPIEXEC [MPIEXEC FLAGS...]
# The transport comes from the environment (UCX_TLS, WEFT_SHM,
# WEFT_TIMEOUT_MS), passed on to every rank, and so does PEER_KILL_QUIESCE
# (test_peer_kill.c).
set -uo pipefail
runs=$1 seed0=$2 np=$3 exe=$4
shift 4
mpiexec=("$@")
hang_s=${PEER_KILL_HANG_S:-60}
envflags=()
for v in WEFT_UCX_TLS UCX_TLS WEFT_SHM WEFT_TIMEOUT_MS WEFT_PROGRESS_THREAD PEER_KILL_QUIESCE; do
  [ -n "${!v+x}" ] && envflags+=(-x "$v")
done

# Files of other jobs come and go; one counts as left only if it is still
# there 2 s after the run and was not there before it.
shm_listing() { ls -A /dev/shm | grep -E '^(weft-|ucx|sem\.ucx)' | sort || true; }
sysv_listing() { ipcs -m 2>/dev/null | awk '$1 ~ /^0x/ && $6 == 0 {print $2}' | sort || true; }

fails=0 passed=0 detect=()
for ((i = 0; i < runs; i++)); do
  seed=$((seed0 + i))
  shm_before=$(shm_listing)
  sysv_before=$(sysv_listing)
  out=$(timeout -k 5 "$hang_s" "${mpiexec[@]}" --enable-recovery "${envflags[@]}" -np "$np" \
        "$exe" "$seed" 2>&1)
  rc=$?
  npass=$(grep -c '^PASS' <<<"$out")
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    echo "seed $seed: HANG (killed after ${hang_s} s)"; echo "$out" | tail -20
    fails=$((fails + 1)); continue
  fi
  if [ "$npass" -ne $((np - 1)) ]; then
    echo "seed $seed: $npass of $((np - 1)) survivors passed (mpirun status $rc)"
    echo "$out" | grep -v '^PASS' | tail -20
    fails=$((fails + 1)); continue
  fi
  sleep 0.3
  left=$(comm -13 <(echo "$shm_before") <(shm_listing))
  if [ -n "$left" ]; then sleep 2; left=$(comm -13 <(echo "$shm_before") <(shm_listing)); fi
  sysv_left=$(comm -13 <(echo "$sysv_before") <(sysv_listing))
  if [ -n "$left" ] || [ -n "$sysv_left" ]; then
    echo "seed $seed: left in /dev/shm: ${left:-none}; System V segments with no process: ${sysv_left:-none}"
    fails=$((fails + 1)); continue
  fi
  passed=$((passed + 1))
  while read -r us; do detect+=("$us"); done < <(awk '/^PASS/ {print $5}' <<<"$out")
done

if [ ${#detect[@]} -gt 0 ]; then
  printf '%s\n' "${detect[@]}" | sort -n | awk '
    { v[NR] = $1 }
    END { printf "detection (us, %d survivors): min %d median %d p90 %d max %d\n",
          NR, v[1], v[int((NR + 1) / 2)], v[int(NR * 0.9 + 0.999)], v[NR] }'
fi
echo "kill points survived: $passed of $runs (WEFT_UCX_TLS=${WEFT_UCX_TLS:-${UCX_TLS:-default}} WEFT_SHM=${WEFT_SHM:-1} WEFT_TIMEOUT_MS=${WEFT_TIMEOUT_MS:-0}); nothing left in /dev/shm"
[ "$fails" -eq 0 ]
