# Helpers to register tests.  Multi-rank tests run under the launcher of
# the MPI weft is built with (MPIEXEC_EXECUTABLE, WEFT_MPI_FLAVOR from the
# top-level CMakeLists.txt).  Open MPI needs to be told it may run as root
# and oversubscribe the cores (the tests are functional, never timed);
# MPICH's Hydra oversubscribes by itself.

set(WEFT_MPIEXEC_FLAGS "")
if(WEFT_MPI_FLAVOR STREQUAL "openmpi")
  set(WEFT_MPIEXEC_FLAGS --oversubscribe --bind-to none)
endif()
set(WEFT_TEST_ENV OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
                  OMPI_MCA_rmaps_base_oversubscribe=1)
list(APPEND WEFT_TEST_ENV ${WEFT_SANITIZER_ENV})  # cmake/WeftSanitizers.cmake
# A multi-rank test fails on UCX's warning of a setting no transport uses:
# weft makes settings of UCX's own only for the transports [WEFT_]UCX_TLS lets
# in.  Tests choose weft's transports with WEFT_UCX_TLS, which leaves the
# MPI's own alone (MPICH runs over UCX too; docs/settings.md).
set(WEFT_TEST_FAIL_REGEX "UCX  WARN  invalid configuration")

# weft_add_test(NAME name COMMAND exe args... [ENV VAR=value ...] [TIMEOUT s] [LABELS l...])
function(weft_add_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "COMMAND;ENV;LABELS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  add_test(NAME ${T_NAME} COMMAND ${T_COMMAND})
  set_tests_properties(${T_NAME} PROPERTIES TIMEOUT ${T_TIMEOUT}
                       ENVIRONMENT "${WEFT_TEST_ENV};${T_ENV}" LABELS "${T_LABELS}")
endfunction()

# weft_add_mpi_test(NAME name NP n COMMAND exe args... [ENV VAR=value ...] [TIMEOUT s] [LABELS l...]
#                   [RECOVERY])
# ENV variables are exported to every rank (-x for Open MPI, -genv for MPICH).
function(weft_add_mpi_test)
  cmake_parse_arguments(T "RECOVERY" "NAME;NP;TIMEOUT" "COMMAND;ENV;LABELS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 180)
  endif()
  set(_envflags "")
  foreach(kv IN LISTS T_ENV)
    if(WEFT_MPI_FLAVOR STREQUAL "openmpi")
      list(APPEND _envflags -x ${kv})
    else()
      string(REPLACE "=" ";" _kv "${kv}")
      list(APPEND _envflags -genv ${_kv})
    endif()
  endforeach()
  set(_recovery "")
  set(_fail "${WEFT_TEST_FAIL_REGEX}")
  if(T_RECOVERY AND NOT WEFT_MPI_FLAVOR STREQUAL "openmpi")
    # Only Open MPI's mpirun keeps a job alive past a failed rank
    # (--enable-recovery); elsewhere the test is reported as skipped.
    weft_add_skipped_test(${T_NAME} "needs a launcher that survives a failed rank \
(Open MPI's mpirun --enable-recovery); ${WEFT_MPI_FLAVOR}'s has none")
    return()
  endif()
  if(T_RECOVERY)
    # The job survives a rank that dies or is declared failed.  mpirun then
    # exits with 0 even when a rank calls MPI_Abort (every failed check
    # does) or dies of a signal: the output says whether the test passed.
    set(_recovery --enable-recovery)
    set(_fail "MPI_ABORT was invoked;FAIL: ;Caught signal;${WEFT_TEST_FAIL_REGEX}")
  endif()
  add_test(NAME ${T_NAME}
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${T_NP} ${WEFT_MPIEXEC_FLAGS}
                   ${_envflags} ${_recovery} ${T_COMMAND})
  set_tests_properties(${T_NAME} PROPERTIES TIMEOUT ${T_TIMEOUT} PROCESSORS ${T_NP}
                       ENVIRONMENT "${WEFT_TEST_ENV};${T_ENV}" LABELS "mpi;${T_LABELS}"
                       FAIL_REGULAR_EXPRESSION "${_fail}")
endfunction()

# weft_add_path_tests(area name [args...]): builds tests/<area>/<name>.c and
# runs it with 2 and 4 ranks on one node -- the direct path (.shm) -- and
# over TCP (WEFT_UCX_TLS=tcp,self, the direct path off so that UCX carries it all).
function(weft_add_path_tests area name)
  add_executable(${name} ${name}.c)
  target_link_libraries(${name} PRIVATE weft)
  foreach(np 2 4)
    weft_add_mpi_test(NAME ${area}.${name}.np${np}.shm NP ${np} COMMAND $<TARGET_FILE:${name}> ${ARGN})
    weft_add_mpi_test(NAME ${area}.${name}.np${np}.tcp NP ${np} COMMAND $<TARGET_FILE:${name}> ${ARGN}
                      ENV WEFT_UCX_TLS=tcp,self WEFT_SHM=0)
  endforeach()
endfunction()

# weft_add_skipped_test(name reason): a test that cannot run with this MPI
# or machine, reported by CTest as skipped with its reason.
function(weft_add_skipped_test name reason)
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} -E echo "SKIPPED: ${reason}")
  set_tests_properties(${name} PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED: " LABELS skipped)
endfunction()
