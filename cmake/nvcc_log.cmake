# Runs nvcc and keeps its stderr (the ptxas -v resource report) in a log.
#   cmake -DNVCC=... -DSRC=... -DOUT=... -DLOG=... "-DFLAGS=a;b;c" [-DDIR=...] [-DLAUNCHER=...]
#         [-DOBJCOPY=...] -P nvcc_log.cmake
# DIR: the directory nvcc runs in (SRC and FLAGS' paths may be relative to
# it); LAUNCHER: a compiler launcher (ccache) that runs nvcc.
# With OBJCOPY, the object's FILE symbol is dropped: nvcc names it after its
# temporary file, tmpxft_<pid>_...cudafe1.cpp (a launcher that runs nvcc's
# steps itself names it otherwise, <name>.cudafe1.cpp), which would make
# every build differ.
if(NOT DIR)
  set(DIR .)
endif()
execute_process(
  COMMAND ${LAUNCHER} ${NVCC} ${FLAGS} -c ${SRC} -o ${OUT}
  WORKING_DIRECTORY ${DIR}
  RESULT_VARIABLE rc
  ERROR_VARIABLE err
  OUTPUT_VARIABLE out)
file(WRITE ${LOG} "${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nvcc failed on ${SRC}:\n${out}${err}")
endif()
if(OBJCOPY)
  execute_process(COMMAND ${OBJCOPY} --wildcard --strip-symbol=tmpxft_* --strip-symbol=*.cudafe1.cpp ${OUT}
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "objcopy failed on ${OUT}:\n${err}")
  endif()
endif()
