# One diagnostics test: runs dlcgen on a bad input and checks what the user
# sees.  From CTest:
#   cmake -DDLCGEN=... -DMODE=graph|manifest|usage -DWORK=<scratch dir>
#         [-DINPUT=<file>] [-DCODE=E1001] [-DRC=1] [-DDIAG=json|text]
#         [-DOUT_UNDER_FILE=ON] [-DARGS=<|-separated arguments: the command line
#         for MODE=usage, added to it for MODE=graph>]
#         -P run_diag.cmake
# Checks:
#   - the exit status (RC: 1 for errors, 0 for warnings, 2 for usage errors);
#   - CODE appears; with DIAG=json, stderr is one JSON document whose every
#     diagnostic carries code, kind, severity, at, why and suggestion (why and
#     suggestion not empty); with DIAG=text, the text form of CODE;
#   - after an error, nothing was written to the --dump-dir / --out directory.
cmake_minimum_required(VERSION 3.25)
foreach(v DLCGEN MODE WORK)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "run_diag.cmake: ${v} is not set")
  endif()
endforeach()
if(NOT DEFINED RC)
  set(RC 1)
endif()
if(NOT DEFINED DIAG)
  set(DIAG json)
endif()

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(out ${WORK}/out)
if(OUT_UNDER_FILE)
  # a regular file where a directory is needed: the output cannot be created
  file(WRITE ${WORK}/file "")
  set(out ${WORK}/file/out)
endif()

string(REPLACE "|" ";" args "${ARGS}")
string(REPLACE "@OUT@" "${out}" args "${args}")
if(MODE STREQUAL "graph")
  # the front half only: its codes are what these cases are about
  set(cmd ${DLCGEN} --graph ${INPUT} --dump=frontend,tiny,indexbook,poly_view --until=poly_view --dump-dir ${out}
          --diag=${DIAG} ${args})
elseif(MODE STREQUAL "manifest")
  set(cmd ${DLCGEN} --manifest ${INPUT} --out ${out} --quiet --diag=${DIAG})
elseif(MODE STREQUAL "usage")
  set(cmd ${DLCGEN} ${args})
else()
  message(FATAL_ERROR "run_diag.cmake: unknown MODE ${MODE}")
endif()
execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
string(REPLACE ";" " " shown "${cmd}")
set(ctx "command: ${shown}\nexit status: ${rc}\nstderr:\n${stderr}")

if(NOT rc STREQUAL "${RC}")
  message(FATAL_ERROR "expected exit status ${RC}\n${ctx}")
endif()

if(MODE STREQUAL "usage")
  if(NOT stderr MATCHES "^dlcgen: [^\n]+")
    message(FATAL_ERROR "a usage error is one line 'dlcgen: <problem>' on stderr\n${ctx}")
  endif()
elseif(DIAG STREQUAL "json")
  string(JSON n ERROR_VARIABLE jerr LENGTH "${stderr}" diagnostics)
  if(jerr)
    message(FATAL_ERROR "stderr is not a JSON document with a diagnostics list: ${jerr}\n${ctx}")
  endif()
  if(n EQUAL 0)
    message(FATAL_ERROR "no diagnostics\n${ctx}")
  endif()
  math(EXPR last "${n} - 1")
  set(found OFF)
  foreach(i RANGE ${last})
    foreach(key code kind severity at why suggestion)
      string(JSON type ERROR_VARIABLE jerr TYPE "${stderr}" diagnostics ${i} ${key})
      if(jerr OR NOT type STREQUAL "STRING")
        message(FATAL_ERROR "diagnostic ${i} has no string '${key}'\n${ctx}")
      endif()
    endforeach()
    foreach(key why suggestion)
      string(JSON value GET "${stderr}" diagnostics ${i} ${key})
      if(value STREQUAL "")
        message(FATAL_ERROR "diagnostic ${i} has an empty '${key}'\n${ctx}")
      endif()
    endforeach()
    string(JSON code GET "${stderr}" diagnostics ${i} code)
    string(JSON severity GET "${stderr}" diagnostics ${i} severity)
    if(code STREQUAL "${CODE}")
      set(found ON)
    endif()
    if(NOT (code MATCHES "^E[0-9][0-9][0-9][0-9]$" AND severity STREQUAL "error") AND
       NOT (code MATCHES "^W[0-9][0-9][0-9][0-9]$" AND severity STREQUAL "warning"))
      message(FATAL_ERROR "diagnostic ${i}: code ${code} with severity ${severity}\n${ctx}")
    endif()
  endforeach()
  if(NOT found)
    message(FATAL_ERROR "expected a diagnostic with code ${CODE}\n${ctx}")
  endif()
else()
  if(NOT stderr MATCHES "dlcgen: (error|warning) ${CODE} [A-Za-z]+ at [^\n]+: [^\n]+\n  suggestion: [^\n]+")
    message(FATAL_ERROR "expected '${CODE}' in the text form 'dlcgen: error CODE Kind at WHERE: WHY\\n  suggestion: ...'\n${ctx}")
  endif()
endif()

# An error writes nothing: no dump directory, no output directory.
if(NOT RC STREQUAL "0")
  file(GLOB_RECURSE written LIST_DIRECTORIES true "${WORK}/*")
  list(REMOVE_ITEM written "${WORK}/file")
  if(written)
    message(FATAL_ERROR "a failed run wrote: ${written}\n${ctx}")
  endif()
endif()
if(NOT stdout STREQUAL "")
  message(FATAL_ERROR "nothing goes to stdout when dumps go to a directory\n${ctx}\nstdout:\n${stdout}")
endif()
file(REMOVE_RECURSE ${WORK})
