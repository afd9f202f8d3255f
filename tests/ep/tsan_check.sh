#!/bin/sh
# The threaded endpoint-pool tests under ThreadSanitizer: builds weft and
# those tests with -fsanitize=thread in a build directory of its own, then
# runs them on 2 ranks through UCX (WEFT_SHM=0) and through the direct
# path.  UCX and MPI are not instrumented; tsan.supp drops reports inside
# them (see there) and any other report fails.
#   tsan_check.sh SOURCE_DIR BUILD_DIR MPIEXEC [MPIEXEC_FLAGS...]
set -eu
src=$1 build=$2 mpiexec=$3
shift 3
cmake -S "$src" -B "$build" -DWEFT_SANITIZE=thread -DWEFT_BUILD_BENCH=OFF -DWEFT_BUILD_APPS=OFF \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo > "$build.configure.log" 2>&1 ||
    { cat "$build.configure.log"; exit 1; }
cmake --build "$build" -j 2 --target test_pool_threads test_pool_bad_input > "$build.build.log" 2>&1 ||
    { tail -40 "$build.build.log"; exit 1; }
export TSAN_OPTIONS="suppressions=$src/tests/ep/tsan.supp:halt_on_error=1:exitcode=66:report_signal_unsafe=0"
for shm in 0 1; do
    echo "== test_pool_threads 2 threads, WEFT_SHM=$shm"
    "$mpiexec" -np 2 "$@" -x TSAN_OPTIONS -x WEFT_SHM=$shm "$build/tests/ep/test_pool_threads" 2
done
echo "== test_pool_bad_input"
"$mpiexec" -np 2 "$@" -x TSAN_OPTIONS "$build/tests/ep/test_pool_bad_input"
echo "ThreadSanitizer: no report in weft's frames"
