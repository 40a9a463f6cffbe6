# dlc-bench-gpu is installable (issue 38 item 7): it loads cuBLASLt at run
# time, so neither libcublasLt nor a shared CUDA runtime is among its NEEDED
# libraries (readelf -d), and it parses its arguments before touching CUDA:
# a bad op is a usage error (exit 2) on a machine without a GPU too.
#   cmake -DBENCH=<dlc-bench-gpu> -DREADELF=<readelf> -P check_bench_gpu.cmake
execute_process(COMMAND ${READELF} -d ${BENCH} RESULT_VARIABLE rc OUTPUT_VARIABLE dyn ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "readelf -d ${BENCH}: ${err}")
endif()
string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*" needed "${dyn}")
if(NOT needed)
  message(FATAL_ERROR "readelf -d lists no NEEDED library:\n${dyn}")
endif()
foreach(lib libcublasLt libcudart libcublas)
  if(needed MATCHES "${lib}\\.so")
    message(FATAL_ERROR "dlc-bench-gpu needs ${lib}:\n${needed}")
  endif()
endforeach()
execute_process(COMMAND ${BENCH} --host --op no_such_op RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "no op no_such_op")
  message(FATAL_ERROR "dlc-bench-gpu --host --op no_such_op: exit ${rc}, not the usage error 2:\n${out}${err}")
endif()
message(STATUS "dlc-bench-gpu: ${needed}")
