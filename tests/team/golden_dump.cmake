# Runs weft_topo_dump under the MPI launcher and compares its JSON with a
# golden file.  Variables: LAUNCH (launcher and its flags joined by '|',
# with NP standing for the number of ranks), NP, DUMP, GOLDEN.  The machine
# is in the environment (WEFT_TOPO_*), set by the test.
string(REPLACE "|" ";" LAUNCH "${LAUNCH}")
list(TRANSFORM LAUNCH REPLACE "^NP$" "${NP}")
execute_process(COMMAND ${LAUNCH} ${DUMP} OUTPUT_VARIABLE out ERROR_VARIABLE err
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "weft_topo_dump failed (${rc}):\n${err}")
endif()
file(READ ${GOLDEN} want)
if(NOT out STREQUAL want)
  message(FATAL_ERROR "weft_topo_dump output differs from ${GOLDEN}:\n${out}")
endif()
