# The life of a wisdom file: made and saved by the first run, imported by
# the second, survived when corrupt (a warning, fresh plans, the file
# replaced), and never left half-written.  Every run must verify.
#
#   cmake -DCMD=launcher|args|ft|args -DDIR=scratch -DWHERE=env|xdg|home|unusable
#         -P wisdom_test.cmake
#
# WHERE says which setting names the directory: WEFT_FFTW_WISDOM=DIR/env,
# XDG_CACHE_HOME=DIR/xdg (file under DIR/xdg/weft), or HOME=DIR/home (file
# under DIR/home/.cache/weft); "unusable" names a directory that cannot be
# made (below a regular file), which costs a warning and nothing else.  HOME always points into DIR, so that no run
# of this test can write into the real user's cache.
string(REPLACE "|" ";" argv "${CMD}")
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}/home")
set(ENV{HOME} "${DIR}/home")
unset(ENV{WEFT_FFTW_WISDOM})
unset(ENV{XDG_CACHE_HOME})
if(WHERE STREQUAL "env")
  set(ENV{WEFT_FFTW_WISDOM} "${DIR}/env/nested")
  set(cache "${DIR}/env/nested")
elseif(WHERE STREQUAL "xdg")
  set(ENV{XDG_CACHE_HOME} "${DIR}/xdg")
  set(cache "${DIR}/xdg/weft")
elseif(WHERE STREQUAL "home")
  set(cache "${DIR}/home/.cache/weft")
elseif(WHERE STREQUAL "unusable")
  file(TOUCH "${DIR}/file")
  set(ENV{WEFT_FFTW_WISDOM} "${DIR}/file/weft")
else()
  message(FATAL_ERROR "WHERE must be env, xdg or home, not '${WHERE}'")
endif()

# Runs ft; fails unless it verifies and its output matches every regex given.
function(run_ft step)
  execute_process(COMMAND ${argv} ${EXTRA_ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(all "${out}${err}")
  if(NOT rc EQUAL 0 OR NOT all MATCHES "Verification *= VERIFIED")
    message(FATAL_ERROR "${step}: exit status ${rc}, not verified:\n${all}")
  endif()
  foreach(regex IN LISTS ARGN)
    if(NOT all MATCHES "${regex}")
      message(FATAL_ERROR "${step}: output does not match '${regex}':\n${all}")
    endif()
  endforeach()
  message(STATUS "${step}: ok")
endfunction()

function(expect_one_wisdom_file outvar)
  file(GLOB files "${cache}/*")
  list(LENGTH files n)
  if(NOT n EQUAL 1 OR NOT files MATCHES "/ft-[^/]*-fftw-[^/]*\\.wisdom$")
    message(FATAL_ERROR "expected one ft-*.wisdom file in ${cache}, found: ${files}")
  endif()
  set(${outvar} "${files}" PARENT_SCOPE)
endfunction()

if(WHERE STREQUAL "unusable")
  run_ft("unusable directory" "warning: cannot create ${DIR}/file/weft"
         "FFTW wisdom *= measured, not saved")
  return()
endif()

run_ft("first run" "FFTW wisdom *= measured in this run and saved to ${cache}/")
expect_one_wisdom_file(wisdom)
file(SIZE "${wisdom}" size)
if(size EQUAL 0)
  message(FATAL_ERROR "${wisdom} is empty")
endif()

run_ft("second run" "FFTW wisdom *= imported from ${wisdom}")

file(WRITE "${wisdom}" "(fftw-3.3 this is not wisdom\n")
run_ft("corrupt file" "warning: FFTW cannot use the wisdom in ${wisdom}"
       "FFTW wisdom *= measured in this run and saved to ${wisdom}")
expect_one_wisdom_file(replaced)

run_ft("after the corrupt file" "FFTW wisdom *= imported from ${wisdom}")

if(NOT WHERE STREQUAL "env")
  return()
endif()
# A file whose wisdom makes none of this shape's plans keeps it: take the
# file of another shape (padding 1), put it in this shape's place, run
# (measured and saved), then give the result back to the other shape,
# which must still find all of its plans in it.
set(EXTRA_ARGS --pad 1)
run_ft("padding 1" "FFTW wisdom *= measured in this run and saved to")
set(EXTRA_ARGS "")
file(GLOB padded "${cache}/ft-*-pad1-*.wisdom")
file(RENAME "${padded}" "${wisdom}")
run_ft("foreign wisdom" "FFTW wisdom *= measured in this run and saved to ${wisdom}")
file(RENAME "${wisdom}" "${padded}")
set(EXTRA_ARGS --pad 1)
run_ft("foreign wisdom kept" "FFTW wisdom *= imported from ${padded}")
