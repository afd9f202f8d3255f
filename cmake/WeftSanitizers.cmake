# Instrumented builds for CI (the Makefile's check-sanitizers, check-tsan
# and check-fuzz targets; each uses a build directory of its own):
#
#   -DWEFT_SANITIZE=address,undefined   AddressSanitizer + UBSan
#   -DWEFT_SANITIZE=thread              ThreadSanitizer
#   -DWEFT_FUZZ=ON                      (clang) coverage for libFuzzer, and the
#                                       fuzz targets of tests/fuzz
#
# Everything weft compiles is instrumented; UCX, hwloc and MPI are not, so
# reports in their frames are filtered by tests/sanitizers/*.supp.
set(WEFT_SANITIZE "" CACHE STRING "Sanitizers to build with (-fsanitize=...), e.g. address,undefined")
option(WEFT_FUZZ "Build the libFuzzer targets of tests/fuzz (clang)" OFF)
set(WEFT_FUZZ_SECONDS 20 CACHE STRING "How long each fuzz test of CTest searches")

if(WEFT_SANITIZE)
  add_compile_options(-fsanitize=${WEFT_SANITIZE} -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${WEFT_SANITIZE})
  if(WEFT_SANITIZE MATCHES "undefined")
    # A UBSan report fails the test instead of scrolling past.
    add_compile_options(-fno-sanitize-recover=undefined)
  endif()
endif()
if(WEFT_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "WEFT_FUZZ needs clang (cmake -DCMAKE_C_COMPILER=clang)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

# What the tests of an instrumented build run with (cmake/WeftTesting.cmake
# adds it to every test): third-party reports filtered by library, any
# other report fatal.
set(WEFT_SANITIZER_ENV "")
if(WEFT_SANITIZE OR WEFT_FUZZ)
  set(_supp ${PROJECT_SOURCE_DIR}/tests/sanitizers)
  set(WEFT_SANITIZER_ENV
    "LD_PRELOAD=${PROJECT_BINARY_DIR}/tests/sanitizers/libweft_keep_loaded.so"
    # UCX, MPI and libc have no frame pointers: unwind slowly but fully, or
    # their leaks show truncated stacks that name no library.
    "ASAN_OPTIONS=fast_unwind_on_malloc=0"
    "LSAN_OPTIONS=suppressions=${_supp}/lsan.supp:print_suppressions=0"
    "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1"
    "TSAN_OPTIONS=suppressions=${_supp}/tsan.supp:halt_on_error=1:second_deadlock_stack=1")
endif()
