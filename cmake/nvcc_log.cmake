# Runs nvcc and keeps its stderr (the ptxas -v resource report) in a log.
#   cmake -DNVCC=... -DSRC=... -DOUT=... -DLOG=... "-DFLAGS=a;b;c" -P nvcc_log.cmake
execute_process(
  COMMAND ${NVCC} ${FLAGS} -c ${SRC} -o ${OUT}
  RESULT_VARIABLE rc
  ERROR_VARIABLE err
  OUTPUT_VARIABLE out)
file(WRITE ${LOG} "${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nvcc failed on ${SRC}:\n${out}${err}")
endif()
