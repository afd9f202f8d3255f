#!/usr/bin/env bash
# Runs a weft program and checks that no file it created stays in /dev/shm.
set -euo pipefail
before=$(ls -A /dev/shm | sort)
"$@"
after=$(ls -A /dev/shm | sort)
left=$(comm -13 <(echo "$before") <(echo "$after"))
if [ -n "$left" ]; then
  echo "files left in /dev/shm: $left" >&2
  exit 1
fi
echo "nothing left in /dev/shm"
