# The README's first program must be a program that is built and run:
# its first ```c block has to be examples/first.c, byte for byte.
#
#   cmake -DREADME=README.md -DPROGRAM=examples/first.c -P check_readme.cmake
#
# The block is the text between a line that is exactly ```c and the next
# line that starts with ```.  On a difference the block is written beside
# the build (README_first_program.c) and compared with diff, if there is one.
cmake_minimum_required(VERSION 3.25)
foreach(var README PROGRAM)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_readme.cmake: -D${var}=<file> is required")
  endif()
  if(NOT EXISTS "${${var}}")
    message(FATAL_ERROR "check_readme.cmake: ${var} ${${var}} does not exist")
  endif()
endforeach()

file(READ "${README}" readme)
file(READ "${PROGRAM}" program)

# A leading newline lets the first line of the file open a block too.
set(text "\n${readme}")
set(open "\n```c\n")
string(FIND "${text}" "${open}" start)
if(start EQUAL -1)
  message(FATAL_ERROR "${README} has no ```c block: its first program should be "
                      "${PROGRAM}, pasted in a ```c block")
endif()
string(LENGTH "${open}" open_len)
math(EXPR start "${start} + ${open_len}")
string(SUBSTRING "${text}" ${start} -1 rest)
# The block's last line keeps its newline; the closing fence follows it.
if(rest MATCHES "^```")
  set(block "")
else()
  string(FIND "${rest}" "\n```" end)
  if(end EQUAL -1)
    message(FATAL_ERROR "${README}: the first ```c block is never closed")
  endif()
  math(EXPR end "${end} + 1")
  string(SUBSTRING "${rest}" 0 ${end} block)
endif()

if(NOT "${block}" STREQUAL "${program}")
  get_filename_component(name "${README}" NAME_WE)
  set(copy "${CMAKE_CURRENT_BINARY_DIR}/${name}_first_program.c")
  file(WRITE "${copy}" "${block}")
  find_program(DIFF diff)
  if(DIFF)
    execute_process(COMMAND ${DIFF} -u "${PROGRAM}" "${copy}" OUTPUT_VARIABLE diff_text)
    message(NOTICE "${diff_text}")
  endif()
  # one unwrapped line for the tests of this check (CMake wraps the error)
  message(STATUS "first program differs: ${name}")
  message(FATAL_ERROR "The first ```c block of ${README} (written to ${copy}) differs "
                      "from ${PROGRAM}: paste ${PROGRAM} into the README as it is.")
endif()
message(STATUS "The first ```c block of ${README} is ${PROGRAM}")
