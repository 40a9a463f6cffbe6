# A diagnostic's suggestion, followed: runs dlcgen on the input of a case
# after the change its suggestion asks for (followed/<mode>/<case>.json or
# .dlc, the case's own name) as run_diag.cmake runs the case (graph: the
# front half; manifest: the whole pipeline) and checks that the run succeeds
# with no diagnostic of the case's code.  From CTest:
#   cmake -DDLCGEN=... -DMODE=graph|manifest -DINPUT=<file> -DCODE=E1702 -DWORK=<scratch dir>
#         -P run_followed.cmake
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/../script_args.cmake)
dlc_script_args(run_followed.cmake DLCGEN MODE INPUT CODE WORK)
dlc_fresh_dir(${WORK})
if(MODE STREQUAL "graph")
  set(cmd ${DLCGEN} --graph ${INPUT} --dump=frontend,tiny,indexbook,poly_view --until=poly_view --dump-dir ${WORK}/out
          --diag=json)
else()
  set(cmd ${DLCGEN} --manifest ${INPUT} --out ${WORK}/out --quiet --diag=json)
endif()
execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
string(REPLACE ";" " " shown "${cmd}")
set(ctx "command: ${shown}\nexit status: ${rc}\nstderr:\n${stderr}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the input with the suggestion of ${CODE} followed does not compile\n${ctx}")
endif()
if(stderr MATCHES "\"${CODE}\"")
  message(FATAL_ERROR "the input with the suggestion of ${CODE} followed still reports ${CODE}\n${ctx}")
endif()
