# Runs nvcc and keeps its stderr (the ptxas -v resource report) in a log.
#   cmake -DNVCC=... -DSRC=... -DOUT=... -DLOG=... "-DFLAGS=a;b;c" [-DOBJCOPY=...] -P nvcc_log.cmake
# With OBJCOPY, the object's FILE symbol is dropped: nvcc names it after its
# temporary file, tmpxft_<pid>_..., which would make every build differ.
execute_process(
  COMMAND ${NVCC} ${FLAGS} -c ${SRC} -o ${OUT}
  RESULT_VARIABLE rc
  ERROR_VARIABLE err
  OUTPUT_VARIABLE out)
file(WRITE ${LOG} "${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nvcc failed on ${SRC}:\n${out}${err}")
endif()
if(OBJCOPY)
  execute_process(COMMAND ${OBJCOPY} --wildcard --strip-symbol=tmpxft_* ${OUT} RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "objcopy failed on ${OUT}:\n${err}")
  endif()
endif()
