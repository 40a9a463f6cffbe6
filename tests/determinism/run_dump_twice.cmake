# Every stage dumped twice gives the same bytes (spec §1: the pipeline is
# deterministic; a dump diff is how a change is reviewed).  Runs dlcgen
# twice on one input with --dump=all, into two directories, and requires
# the same exit status, the same standard output and error, and the same
# files with the same bytes.  A graph compiles for sm80 and sm90a, so that
# both back halves dump; a manifest writes its code and its dumps under
# --out.  Inputs that dlcgen refuses are compared the same way: their
# diagnostics must not change either.
#   cmake -DDLCGEN=... -DINPUT=... -DMODE=graph|manifest -DWORK=... -P run_dump_twice.cmake
foreach(v DLCGEN INPUT MODE WORK)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "run_dump_twice.cmake: -D${v}=... is required")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK})
foreach(run a b)
  set(dir ${WORK}/${run})
  file(MAKE_DIRECTORY ${dir})
  if(MODE STREQUAL "graph")
    set(args --graph ${INPUT} --arch sm80,sm90a --dump=all --dump-dir ${dir}/dumps --diag=json)
  else()
    set(args --manifest ${INPUT} --out ${dir}/out --dump=all --diag=json --quiet)
  endif()
  execute_process(COMMAND ${DLCGEN} ${args} WORKING_DIRECTORY ${dir} RESULT_VARIABLE rc_${run}
                  OUTPUT_VARIABLE out_${run} ERROR_VARIABLE err_${run})
  # the diagnostics name the input by the path given, the same in both runs
  file(GLOB_RECURSE files_${run} RELATIVE ${dir} LIST_DIRECTORIES false ${dir}/*)
  list(SORT files_${run})
endforeach()
if(NOT rc_a STREQUAL rc_b)
  message(FATAL_ERROR "exit status ${rc_a}, then ${rc_b}")
endif()
if(rc_a GREATER 1)
  message(FATAL_ERROR "dlcgen exited ${rc_a} (usage or internal error):\n${err_a}")
endif()
if(NOT out_a STREQUAL out_b)
  message(FATAL_ERROR "standard output differs between two runs")
endif()
if(NOT err_a STREQUAL err_b)
  message(FATAL_ERROR "standard error differs between two runs:\n--- first\n${err_a}\n--- second\n${err_b}")
endif()
if(NOT files_a STREQUAL files_b)
  message(FATAL_ERROR "the runs wrote different files:\n${files_a}\n---\n${files_b}")
endif()
list(LENGTH files_a n)
if(n GREATER 0)
  # one diff for the whole trees (diffutils), not a process a file
  execute_process(COMMAND diff -r -q ${WORK}/a ${WORK}/b RESULT_VARIABLE same OUTPUT_VARIABLE what ERROR_VARIABLE what)
  if(NOT same EQUAL 0)
    message(FATAL_ERROR "the two runs' files differ:\n${what}")
  endif()
endif()
if(rc_a EQUAL 0 AND n EQUAL 0)
  message(FATAL_ERROR "dlcgen succeeded and wrote no dump")
endif()
file(REMOVE_RECURSE ${WORK})
message(STATUS "exit ${rc_a}, ${n} files, identical")
