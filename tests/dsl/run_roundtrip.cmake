# Round trip of one graph through the DSL.  From CTest:
#   cmake -DDLCGEN=... -DGRAPH=<.json or .dlc> -DWORK=<scratch dir> [-DDLC=<.dlc beside GRAPH>]
#         -P run_roundtrip.cmake
# Checks:
#   - `dlcgen --decompile --graph GRAPH` succeeds;
#   - the Frontend dump of the decompiled text (saved as WORK/<name>.dlc, so
#     that the graph keeps its name) equals GRAPH's;
#   - decompiling that text again gives the same text;
#   - with DLC, the Frontend dump of DLC equals GRAPH's too.
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/../script_args.cmake)
dlc_script_args(run_roundtrip.cmake DLCGEN GRAPH WORK)
dlc_fresh_dir(${WORK})

function(frontend_dump graph out)
  execute_process(COMMAND ${DLCGEN} --graph ${graph} --dtype bf16 --dump=frontend --until=frontend
                  RESULT_VARIABLE rc OUTPUT_VARIABLE dump ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "dlcgen --graph ${graph} --dump=frontend exited with ${rc}:\n${err}")
  endif()
  set(${out} "${dump}" PARENT_SCOPE)
endfunction()

function(decompile graph out)
  execute_process(COMMAND ${DLCGEN} --decompile --graph ${graph}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "dlcgen --decompile --graph ${graph} exited with ${rc}:\n${err}")
  endif()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

function(must_equal a b what)
  if(NOT a STREQUAL b)
    file(WRITE ${WORK}/expected.txt "${a}")
    file(WRITE ${WORK}/actual.txt "${b}")
    execute_process(COMMAND diff -u ${WORK}/expected.txt ${WORK}/actual.txt OUTPUT_VARIABLE d)
    message(FATAL_ERROR "${what}:\n${d}")
  endif()
endfunction()

get_filename_component(name ${GRAPH} NAME_WE)
frontend_dump(${GRAPH} original)
decompile(${GRAPH} text)
set(dlc ${WORK}/${name}.dlc)
file(WRITE ${dlc} "${text}")
frontend_dump(${dlc} again)
must_equal("${original}" "${again}" "the Frontend dump of the decompiled ${GRAPH} (${dlc}) differs")
decompile(${dlc} text2)
must_equal("${text}" "${text2}" "decompiling the decompiled ${GRAPH} does not give the same text")
if(DEFINED DLC)
  frontend_dump(${DLC} beside)
  must_equal("${original}" "${beside}" "the Frontend dump of ${DLC} differs from that of ${GRAPH}")
endif()
file(REMOVE_RECURSE ${WORK})
