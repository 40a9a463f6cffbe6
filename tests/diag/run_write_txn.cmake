# A manifest run whose writing fails replaces none of an earlier run's
# outputs, and one that stops before emission leaves them alone.  From CTest:
#   cmake -DDLCGEN=... -DMANIFEST=<manifest> -DWORK=<scratch dir> -P run_write_txn.cmake
# 1. a first run writes WORK/out;
# 2. a run with --until=plan succeeds and changes nothing there;
# 3. a run of the same manifest for one arch only (its outputs differ)
#    meets a directory where its last output, src/dlc_ops.def, goes: it must
#    exit 1 with E0003 and leave every other file as the first run wrote it,
#    with no temporaries behind.
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/../script_args.cmake)
dlc_script_args(run_write_txn.cmake DLCGEN MANIFEST WORK)
dlc_fresh_dir(${WORK})
set(out ${WORK}/out)

execute_process(COMMAND ${DLCGEN} --manifest ${MANIFEST} --out ${out} --quiet RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the first run failed (${rc}):\n${err}")
endif()
file(GLOB_RECURSE before RELATIVE ${out} ${out}/*)
foreach(f ${before})
  file(SHA256 ${out}/${f} h_${f})
endforeach()

function(check_unchanged what)
  file(GLOB_RECURSE after RELATIVE ${out} ${out}/*)
  if(NOT "${after}" STREQUAL "${before}")
    message(FATAL_ERROR "${what} changed the file list:\nbefore: ${before}\nafter: ${after}")
  endif()
  foreach(f ${before})
    file(SHA256 ${out}/${f} h)
    if(NOT h STREQUAL h_${f})
      message(FATAL_ERROR "${what} rewrote ${f}")
    endif()
  endforeach()
endfunction()

execute_process(COMMAND ${DLCGEN} --manifest ${MANIFEST} --out ${out} --quiet --until=plan RESULT_VARIABLE rc
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the --until=plan run failed (${rc}):\n${err}")
endif()
check_unchanged("the --until=plan run")

# the same ops for sm80 alone: the graph paths are made absolute
get_filename_component(mdir ${MANIFEST} DIRECTORY)
file(READ ${MANIFEST} m)
string(REGEX REPLACE "\"archs\": *\\[[^]]*\\]" "\"archs\": [\"sm80\"]" m "${m}")
string(REPLACE "\"graph\": \"" "\"graph\": \"${mdir}/" m "${m}")
file(WRITE ${WORK}/sm80.json "${m}")
file(REMOVE ${out}/src/dlc_ops.def)
file(MAKE_DIRECTORY ${out}/src/dlc_ops.def)
list(REMOVE_ITEM before src/dlc_ops.def)

execute_process(COMMAND ${DLCGEN} --manifest ${WORK}/sm80.json --out ${out} --quiet --diag=json RESULT_VARIABLE rc
                ERROR_VARIABLE err)
if(NOT rc EQUAL 1 OR NOT err MATCHES "E0003")
  message(FATAL_ERROR "expected exit status 1 with E0003, got ${rc}:\n${err}")
endif()
check_unchanged("the failed run")
