# What the install test scripts share: an environment that holds only what a
# prefix provides (no stray include paths, pkg-config or CMake package
# dirs), and run(what cmd...), which fails the test naming the command and
# its output, and leaves the output in run_out.
foreach(v CPATH C_INCLUDE_PATH CPLUS_INCLUDE_PATH LIBRARY_PATH PKG_CONFIG_PATH DESTDIR CMAKE_PREFIX_PATH)
  unset(ENV{${v}})
endforeach()

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "${what} failed (${rc}):\n  ${cmd}\n${out}${err}")
  endif()
  set(run_out "${out}" PARENT_SCOPE)
  message(STATUS "${what}: ok")
endfunction()
