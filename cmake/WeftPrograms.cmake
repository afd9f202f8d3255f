# Programs that the `weft` command runs (benchmarks, applications, tools)
# are built into one directory, ${WEFT_LIBEXEC_BUILD_DIR}, laid out as the
# installed tree is: <prefix>/libexec/weft/<program>.  The toolkit finds
# them in either place by name alone.
set(WEFT_LIBEXEC_BUILD_DIR ${PROJECT_BINARY_DIR}/${CMAKE_INSTALL_LIBEXECDIR}/weft)
set(WEFT_LIBEXEC_INSTALL_DIR ${CMAKE_INSTALL_LIBEXECDIR}/weft)
file(MAKE_DIRECTORY ${WEFT_LIBEXEC_BUILD_DIR})

# weft_program(target): target is one of the programs the CLI runs.
function(weft_program target)
  set_target_properties(${target} PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${WEFT_LIBEXEC_BUILD_DIR}
    LIBRARY_OUTPUT_DIRECTORY ${WEFT_LIBEXEC_BUILD_DIR}
    INSTALL_RPATH "$ORIGIN/../../${CMAKE_INSTALL_LIBDIR};$ORIGIN")
  install(TARGETS ${target} RUNTIME DESTINATION ${WEFT_LIBEXEC_INSTALL_DIR}
                            LIBRARY DESTINATION ${WEFT_LIBEXEC_INSTALL_DIR})
endfunction()

# weft_foreign_program(OUTPUT name CC wrapper SOURCES files... [FLAGS ...] [LIBS ...]):
# a program built with another compiler wrapper (smpicc, mpicc.mpich, oshcc)
# into the same directory.
function(weft_foreign_program)
  cmake_parse_arguments(P "" "OUTPUT;CC" "SOURCES;FLAGS;LIBS" ${ARGN})
  set(out ${WEFT_LIBEXEC_BUILD_DIR}/${P_OUTPUT})
  add_custom_command(OUTPUT ${out}
    COMMAND ${P_CC} -O2 -std=gnu11 ${P_FLAGS} ${P_SOURCES} -o ${out} ${P_LIBS}
    DEPENDS ${P_SOURCES}
    COMMENT "Building ${P_OUTPUT} with ${P_CC}")
  add_custom_target(${P_OUTPUT} ALL DEPENDS ${out})
  install(PROGRAMS ${out} DESTINATION ${WEFT_LIBEXEC_INSTALL_DIR})
endfunction()
