# Shared by the test scripts that CTest runs as `cmake -D... -P <script>`.
#   dlc_script_args(<script name> VAR...): every -D variable the script needs
#     is set, or a fatal error names the script and the variable.
#   dlc_fresh_dir(<dir>): the scratch directory, empty.
function(dlc_script_args script)
  foreach(v ${ARGN})
    if(NOT DEFINED ${v})
      message(FATAL_ERROR "${script}: ${v} is not set")
    endif()
  endforeach()
endfunction()

function(dlc_fresh_dir dir)
  file(REMOVE_RECURSE ${dir})
  file(MAKE_DIRECTORY ${dir})
endfunction()
