# File names reach the generated comments (the manifest's name in every
# header, the graph's path in each .cu); they must not end, nest or splice a
# comment (issue 12, defect 7).  From CTest:
#   cmake -DDLCGEN=... -DGRAPH=<a graph .json> -DWORK=<scratch dir> -P run_comment_escape.cmake
# The manifest is named `m<newline>#define DLC_INJECTED ??=\.json` (a trigraph) and its graph
# `d*/g<newline>#define DLC_INJECTED<newline>\.json`: the outputs must hold no line
# that starts with #define DLC_INJECTED, and as many comment openings as closings.
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/../script_args.cmake)
dlc_script_args(run_comment_escape.cmake DLCGEN GRAPH WORK)
dlc_fresh_dir(${WORK})
file(READ ${GRAPH} g)
file(WRITE "${WORK}/d*/g\n#define DLC_INJECTED\n\\.json" "${g}")
set(manifest "${WORK}/m\n#define DLC_INJECTED ??=\\.json")
file(WRITE "${manifest}" [=[
{"schema": "dlc-manifest/1", "archs": ["sm80"],
 "ops": [{"name": "gemm_bias_relu", "graph": "d*/g\n#define DLC_INJECTED\n\\.json", "dtypes": ["fp16"], "plans": "auto"}]}
]=])
execute_process(COMMAND ${DLCGEN} --manifest ${manifest} --out ${WORK}/out --quiet RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "dlcgen failed (${rc}):\n${err}")
endif()
file(GLOB_RECURSE outs ${WORK}/out/*.cu ${WORK}/out/*.h ${WORK}/out/*.c ${WORK}/out/*.def)
list(LENGTH outs n)
if(n LESS 6)
  message(FATAL_ERROR "expected six outputs, found ${outs}")
endif()
set(escaped_graph 0)
set(escaped_manifest 0)
foreach(f ${outs})
  file(READ ${f} text)
  if(text MATCHES "\n#define DLC_INJECTED")
    message(FATAL_ERROR "${f}: a file name broke out of a comment:\n${text}")
  endif()
  string(REGEX MATCHALL "/\\*" open "${text}")
  string(REGEX MATCHALL "\\*/" close "${text}")
  list(LENGTH open no)
  list(LENGTH close nc)
  if(NOT no EQUAL nc)
    message(FATAL_ERROR "${f}: ${no} comment openings but ${nc} closings")
  endif()
  if(text MATCHES "d\\*\\\\x2fg\\\\x0a#define DLC_INJECTED\\\\x0a\\\\x5c\\.json")
    math(EXPR escaped_graph "${escaped_graph} + 1")
  endif()
  if(text MATCHES "m\\\\x0a#define DLC_INJECTED \\?\\\\x3f=\\\\x5c\\.json")
    math(EXPR escaped_manifest "${escaped_manifest} + 1")
  endif()
endforeach()
# the manifest in all six headers, the graph in the .cu
if(NOT escaped_manifest EQUAL 6 OR NOT escaped_graph EQUAL 1)
  message(FATAL_ERROR "the manifest is named in escaped form in ${escaped_manifest} outputs (want 6), the graph in ${escaped_graph} (want 1)")
endif()
