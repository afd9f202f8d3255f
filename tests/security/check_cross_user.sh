#!/usr/bin/env bash
# Another local user, and another job of the same user, cannot reach the
# memory of a running job: a 2-rank job (am_put_job, WEFT_SHM=0, so UCX's
# shared memory carries its active messages and puts) runs while
#  - a user of the job owner's group (another uid, the owner's gid),
#  - a user of another group (another uid and gid)
# try to attach every System V segment, open every file of /dev/shm and
# every /proc/PID/{maps,mem,map_files,fd} entry of the ranks (attach_all
# other): every attempt must fail; and a process of the job's own user
# (another job) finds no System V segment of that user to attach
# (attach_all same).
#
#   check_cross_user.sh ATTACKER LAUNCHER... JOB
#
# Needs root (to create the two throwaway users, removed afterwards, and a
# private /dev/shm and System V namespace, so that everything seen there is
# this job's); prints SKIPPED otherwise.
set -uo pipefail
attacker=$1
shift

if [ "$(id -u)" != 0 ]; then
  echo "SKIPPED: needs root to create throwaway users and private namespaces"
  exit 0
fi
for tool in useradd userdel runuser unshare; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIPPED: $tool is missing"
    exit 0
  fi
done
if [ -z "${CROSS_USER_PRIVATE:-}" ]; then
  if ! unshare --mount --ipc true 2>/dev/null; then
    echo "SKIPPED: no mount and IPC namespaces here (unshare --mount --ipc failed)"
    exit 0
  fi
  exec unshare --mount --ipc -- env CROSS_USER_PRIVATE=1 bash -c \
    'mount -t tmpfs -o mode=1777,size=1g tmpfs /dev/shm && exec "$0" "$@"' "$0" "$attacker" "$@"
fi

tag=$$
group_user=weftg$tag   # another uid, the job owner's group
other_user=wefto$tag   # another uid and group
work=$(mktemp -d)
job=
cleanup() {
  [ -n "$job" ] && kill -9 "$job" 2>/dev/null
  userdel "$group_user" 2>/dev/null
  userdel "$other_user" 2>/dev/null
  groupdel "$other_user" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
useradd -M -N -g "$(id -g)" -s /usr/sbin/nologin "$group_user" || exit 1
useradd -M -U -s /usr/sbin/nologin "$other_user" || exit 1
# the attacker runs from a place both users can read
chmod 755 "$work"
cp "$attacker" "$work/attach_all" && chmod 755 "$work/attach_all"

: >"$work/pids"
"$@" "$work/pids" "$work/stop" >"$work/job.out" 2>&1 &
job=$!
for ((i = 0; i < 600 && $(wc -l <"$work/pids") < 2; i++)); do
  sleep 0.1
done
if [ "$(wc -l <"$work/pids")" -lt 2 ]; then
  echo "FAIL: the job did not start" >&2
  cat "$work/job.out" >&2
  exit 1
fi
pids=$(awk '{print $2}' "$work/pids" | tr '\n' ' ')
# the ranges each rank has mapped, for the attackers to try one by one
for pid in $pids; do
  cp "/proc/$pid/maps" "$work/maps.$pid" && chmod 644 "$work/maps.$pid"
done
echo "job ranks: $pids (uid $(id -u), gid $(id -g)); System V segments now:"
ipcs -m | sed -n '4,$p' | sed '/^$/d'

failures=0
for user in "$group_user" "$other_user"; do
  echo "--- $user ($(id -u "$user"):$(id -g "$user")) attacks"
  # shellcheck disable=SC2086
  runuser -u "$user" -- env ATTACH_MAPS_DIR="$work" "$work/attach_all" other $pids | grep -v '^System V segment' |
    sort | uniq -c | sed 's/^ *//' | head -50
  [ "${PIPESTATUS[0]}" -eq 0 ] || failures=$((failures + 1))
done
echo "--- another job of uid $(id -u)"
"$work/attach_all" same "$(id -u)" || failures=$((failures + 1))

touch "$work/stop"
wait "$job"
rc=$?
job=
cat "$work/job.out"
if [ "$rc" -ne 0 ] || grep -q ALTERED "$work/job.out"; then
  echo "FAIL: the job failed (status $rc)" >&2
  failures=$((failures + 1))
fi
if [ "$failures" -gt 0 ]; then
  echo "FAIL: $failures of the attackers reached the job's memory, or the job failed" >&2
  exit 1
fi
echo "no attempt from another user or another job reached the job's memory"
