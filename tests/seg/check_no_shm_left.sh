#!/usr/bin/env bash
# Runs a weft program and checks that no file it created stays in /dev/shm.
# Open MPI's own vader_segment.* files are left out: the MPI runtime owns and
# removes them, and other MPI jobs on the machine create them at any time.
set -euo pipefail
listing() { ls -A /dev/shm | grep -v '^vader_segment\.' | sort || true; }
before=$(listing)
"$@"
after=$(listing)
left=$(comm -13 <(echo "$before") <(echo "$after"))
if [ -n "$left" ]; then
  echo "files left in /dev/shm: $left" >&2
  exit 1
fi
echo "nothing left in /dev/shm"
