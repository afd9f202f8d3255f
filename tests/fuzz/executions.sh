#!/usr/bin/env bash
# Prints how many inputs each fuzz test of the last CTest run in BUILD
# executed (libFuzzer's final statistics), and fails when a fuzz test ran
# none, which would mean it did not fuzz at all.
set -euo pipefail
log="${1:?usage: executions.sh BUILD_DIR}/Testing/Temporary/LastTest.log"
awk '/^[0-9]+\/[0-9]+ Test: fuzz\.fuzz_[a-z_]+$/ { t = $3 }
     /stat::number_of_executed_units:/ && t { n[t] = $2; t = "" }
     END { bad = 0
           for (k in n) { printf "%-28s %12d executions\n", k, n[k]; if (n[k] == 0) bad = 1 }
           if (length(n) == 0) { print "no fuzz test ran"; bad = 1 }
           exit bad }' "$log" | sort
