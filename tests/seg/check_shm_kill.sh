#!/usr/bin/env bash
# Runs test_shm_kill (which SIGKILLs a rank once its segments are mapped)
# and checks that no weft shared-memory file (/dev/shm/weft-*) is left.
# Files of other weft jobs running at the same time come and go within
# milliseconds; a file counts as left only if it is still there 2 s later.
set -uo pipefail
listing() { ls -A /dev/shm | grep '^weft-' | sort || true; }
before=$(listing)
"$@"
rc=$?
if [ "$rc" -eq 0 ]; then
  echo "the job exited normally: the rank was not killed" >&2
  exit 1
fi
sleep 2
left=$(comm -13 <(echo "$before") <(listing))
if [ -n "$left" ]; then
  echo "weft files left in /dev/shm after a rank was killed: $left" >&2
  exit 1
fi
echo "the job died (status $rc) and left no weft file in /dev/shm"
