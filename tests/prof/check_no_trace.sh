#!/bin/sh
# The trace points are compiled out of libweft_noprof: its rma, am and ep
# objects reference no prof symbol, while libweft's (built with trace
# points) do -- which shows that the check can fail.
#   check_no_trace.sh NOPROF_OBJDIR PROF_OBJDIR PROF_ON(0|1)
set -u
status=0
for layer in rma/rma.c.o am/am.c.o ep/ep.c.o; do
    noprof="$1/$layer"
    prof="$2/$layer"
    refs=$(nm -u "$noprof" | grep -c weft__prof) || true
    if [ "$refs" -ne 0 ]; then
        echo "FAIL: $noprof references prof symbols:"; nm -u "$noprof" | grep weft__prof
        status=1
    fi
    if [ "$3" = 1 ] && ! nm -u "$prof" | grep -q weft__prof; then
        echo "FAIL: $prof (trace points on) references no prof symbol"
        status=1
    fi
done
[ $status -eq 0 ] && echo "no trace point in libweft_noprof's rma, am, ep"
exit $status
