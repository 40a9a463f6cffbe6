# DLC_SASS_ARCHS=sm90a: the configure says which of the manifest's archs get
# no SASS, and every kernel object's nvcc command compiles sm_90a alone
# (one -gencode, arch=compute_90a,code=sm_90a).  It checks the build that
# configure writes (build.ninja) and compiles nothing.
#   cmake -DSRC=... -DWORK=... -DMANIFEST=... "-DOPS=a;b" "-DARCHS=sm80;sm90a" -P check_sass_archs.cmake
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SRC} -B ${WORK} -G Ninja -DDLC_MANIFEST=${MANIFEST}
                        -DDLC_SASS_ARCHS=sm90a -DDLC_BUILD_TESTS=OFF
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configure with DLC_SASS_ARCHS=sm90a failed:\n${out}${err}")
endif()
set(skipped ${ARCHS})
list(REMOVE_ITEM skipped sm90a)
if(skipped)
  string(REPLACE ";" "\\;" want "${skipped}")
  if(NOT out MATCHES "dlckernels holds no SASS for ${want} \\(DLC_SASS_ARCHS=sm90a\\)")
    message(FATAL_ERROR "the configure does not name the archs left out (${skipped}):\n${out}")
  endif()
endif()
file(STRINGS ${WORK}/build.ninja cmds REGEX "nvcc_log\\.cmake")
set(n 0)
foreach(c ${cmds})
  string(REGEX MATCHALL "arch=compute_[0-9a-z]+,code=sm_[0-9a-z]+" gencodes "${c}")
  if(NOT gencodes STREQUAL "arch=compute_90a,code=sm_90a")
    message(FATAL_ERROR "an nvcc command compiles ${gencodes}, not sm_90a alone:\n${c}")
  endif()
  math(EXPR n "${n} + 1")
endforeach()
list(LENGTH OPS nops)
if(NOT n EQUAL nops)
  message(FATAL_ERROR "${n} kernel objects' nvcc commands in build.ninja, for ${nops} ops")
endif()
file(REMOVE_RECURSE ${WORK})
message(STATUS "${n} kernel objects, each compiled for sm_90a alone")
