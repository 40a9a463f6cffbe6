# libdlckernels.a: SASS for every manifest arch, no PTX (fatbin_scan), and
# the entry points (nm).
execute_process(COMMAND ${SCAN} ${LIB} ${ARCHS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${out}${err}")
endif()
find_program(NM nm REQUIRED)
execute_process(COMMAND ${NM} -g --defined-only ${LIB} OUTPUT_VARIABLE syms)
foreach(op ${OPS})
  if(NOT syms MATCHES " T dlc_${op}\n")
    message(FATAL_ERROR "dlc_${op} is not defined in ${LIB}")
  endif()
endforeach()
message(STATUS "${out}entry points: ${OPS}")
