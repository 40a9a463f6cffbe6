# nvcc gives the same object for the same kernel source and flags, compiled
# twice, each time in another directory.  .ci/run's later builds (the
# Debian packages', twice; the sanitizer build's) take their kernel objects
# from the first build's compile through ccache, and the package test
# compares two builds' .deb files: that comparison then shows nvcc's own
# determinism only through this test.  It compiles the smallest kernel
# source of the library, with the library's flags, through the library's
# own wrapper (cmake/nvcc_log.cmake, which drops nvcc's temporary file name),
# with no launcher.
#   cmake -DNVCC=... -DGEN=... -DTEMPLATES=... -DWORK=... -DOBJCOPY=... "-DFLAGS=..." -DWRAPPER=... -P check_nvcc_twice.cmake
file(GLOB sources ${GEN}/kernels/*.cu)
set(best "")
foreach(s ${sources})
  file(SIZE ${s} n)
  if(NOT best OR n LESS best_n)
    set(best ${s})
    set(best_n ${n})
  endif()
endforeach()
if(NOT best)
  message(FATAL_ERROR "no kernel source in ${GEN}/kernels")
endif()
get_filename_component(name ${best} NAME)
file(REMOVE_RECURSE ${WORK})
foreach(run a b)
  set(d ${WORK}/${run}/gen)
  file(MAKE_DIRECTORY ${d}/kernels ${d}/src)
  file(COPY ${best} DESTINATION ${d}/kernels)
  file(COPY ${GEN}/src/dlc_params.h DESTINATION ${d}/src)
  execute_process(COMMAND ${CMAKE_COMMAND} -DNVCC=${NVCC} -DDIR=${d} -DSRC=kernels/${name} -DOUT=${WORK}/${run}/k.o
                          -DLOG=${WORK}/${run}/k.log -DOBJCOPY=${OBJCOPY} "-DFLAGS=${FLAGS};-I${TEMPLATES};-Isrc"
                          -P ${WRAPPER}
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nvcc failed on ${name} in ${d}")
  endif()
endforeach()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${WORK}/a/k.o ${WORK}/b/k.o RESULT_VARIABLE same)
if(NOT same EQUAL 0)
  message(FATAL_ERROR "${name}: two nvcc compiles with the same flags gave different objects (${WORK}/a/k.o, ${WORK}/b/k.o)")
endif()
file(SIZE ${WORK}/a/k.o n)
file(REMOVE_RECURSE ${WORK})
message(STATUS "${name}: two compiles, the same ${n}-byte object")
