# Runs the layout pass and pipes its dump (and the diagnostics, after it)
# into FileCheck --check-prefix=PREFIX.  MODE graph: `dlcgen --graph INPUT
# --dump=layout --until=layout ARGS`; MODE manifest: `dlcgen --manifest INPUT
# --out WORK --dump=layout --until=layout`, then every layout.json under
# WORK/dumps, in name order.  Usage, from CTest:
#   cmake -DDLCGEN=... -DFILECHECK=... -DMODE=graph -DINPUT=... -DWORK=...
#         -DCHECK_FILE=... -DPREFIX=... [-DARGS=a|b] -P run_layout_check.cmake
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/../script_args.cmake)
dlc_script_args(run_layout_check.cmake DLCGEN FILECHECK MODE INPUT WORK CHECK_FILE PREFIX)
if(NOT DEFINED STAGE)
  set(STAGE layout)
endif()
dlc_fresh_dir(${WORK})
set(args)
if(DEFINED ARGS)
  string(REPLACE "|" ";" args "${ARGS}")
endif()
if(MODE STREQUAL "graph")
  execute_process(COMMAND ${DLCGEN} --graph ${INPUT} --dump=${STAGE} --until=${STAGE} ${args}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_VARIABLE err)
else()
  execute_process(COMMAND ${DLCGEN} --manifest ${INPUT} --out ${WORK}/out --quiet --dump=${STAGE} --until=${STAGE} ${args}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_VARIABLE err)
  file(GLOB_RECURSE dumps ${WORK}/out/dumps/*/layout.json)
  list(SORT dumps)
  foreach(d ${dumps})
    file(READ ${d} t)
    string(APPEND text "${t}")
  endforeach()
endif()
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "dlcgen exited with ${rc}:\n${err}")
endif()
file(WRITE ${WORK}/dump.txt "${text}\n== diagnostics ==\n${err}")
execute_process(COMMAND ${FILECHECK} ${CHECK_FILE} --check-prefix=${PREFIX} --input-file=${WORK}/dump.txt --dump-input=fail
                RESULT_VARIABLE frc OUTPUT_VARIABLE out ERROR_VARIABLE ferr)
if(NOT frc EQUAL 0)
  message(FATAL_ERROR "FileCheck ${CHECK_FILE} --check-prefix=${PREFIX} failed:\n${out}${ferr}")
endif()
