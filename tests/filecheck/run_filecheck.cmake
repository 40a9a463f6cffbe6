# Runs `dlcgen --graph GRAPH --dtype DTYPE [--bind B]... --dump=STAGE
# --until=STAGE` (the later stages do not run) and pipes the dump into
# FileCheck with --check-prefix=PREFIX (and --implicit-check-not=NOT when
# given).  Usage, from CTest:
#   cmake -DDLCGEN=... -DFILECHECK=... -DGRAPH=... -DDTYPE=fp16 -DSTAGE=tiny
#         -DCHECK_FILE=... -DPREFIX=TINY [-DNOT=pattern] [-DBIND=D=64|...]
#         [-DARCH=sm80,sm90a] -P run_filecheck.cmake
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/../script_args.cmake)
dlc_script_args(run_filecheck.cmake DLCGEN FILECHECK GRAPH DTYPE STAGE CHECK_FILE PREFIX)
set(binds)
if(DEFINED BIND)
  string(REPLACE "|" ";" bl "${BIND}")
  foreach(b ${bl})
    list(APPEND binds --bind ${b})
  endforeach()
endif()
if(DEFINED ARCH)
  list(APPEND binds --arch ${ARCH})
endif()
set(extra)
if(DEFINED NOT)
  list(APPEND extra "--implicit-check-not=${NOT}")
endif()
execute_process(
  COMMAND ${DLCGEN} --graph ${GRAPH} --dtype ${DTYPE} ${binds} --dump=${STAGE} --until=${STAGE}
  COMMAND ${FILECHECK} ${CHECK_FILE} --check-prefix=${PREFIX} --dump-input=fail ${extra}
  RESULTS_VARIABLE rcs
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err)
list(GET rcs 0 rc_dlcgen)
list(GET rcs 1 rc_filecheck)
if(NOT rc_dlcgen EQUAL 0)
  message(FATAL_ERROR "dlcgen --graph ${GRAPH} --dump=${STAGE} exited with ${rc_dlcgen}:\n${err}")
endif()
if(NOT rc_filecheck EQUAL 0)
  message(FATAL_ERROR "FileCheck ${CHECK_FILE} --check-prefix=${PREFIX} failed:\n${out}${err}")
endif()
