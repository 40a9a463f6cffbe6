# Runs the libFuzzer target for SECONDS from the seed corpus (issue 12).
#   cmake -DFUZZER=<fuzz_pipeline> -DSEEDS=<tests/fuzz/corpus> -DDICT=<tests/fuzz/dlc.dict>
#         -DWORK=<scratch dir> -DSECONDS=60 -P run_libfuzzer.cmake
# New inputs go to WORK/corpus (the seeds stay as they are), a failing input
# to WORK/crash-* (or leak-*, timeout-*, oom-*).  The seed is fixed, so a run
# explores the same way on the same code; to fuzz longer or differently, run
# the binary by hand (docs/testing.md).
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/../script_args.cmake)
dlc_script_args(run_libfuzzer.cmake FUZZER SEEDS DICT WORK SECONDS)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/corpus)
execute_process(COMMAND ${FUZZER} -max_total_time=${SECONDS} -seed=1 -dict=${DICT} -max_len=16384 -timeout=60
                        -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix=${WORK}/ ${WORK}/corpus ${SEEDS}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
string(REGEX MATCH "number_of_executed_units: *([0-9]+)" _ "${out}")
set(runs "${CMAKE_MATCH_1}")
string(REGEX MATCH "DONE +cov: *([0-9]+)" _ "${out}")
set(cov "${CMAKE_MATCH_1}")
if(NOT rc EQUAL 0)
  file(GLOB found ${WORK}/crash-* ${WORK}/leak-* ${WORK}/timeout-* ${WORK}/oom-* ${WORK}/slow-unit-*)
  string(LENGTH "${out}" n)
  if(n GREATER 12000)
    math(EXPR from "${n} - 12000")
    string(SUBSTRING "${out}" ${from} -1 out)
  endif()
  message(FATAL_ERROR "libFuzzer failed (${rc}) after ${runs} runs; the input: ${found}\n"
                      "reproduce with: ${FUZZER} <that file>\n${out}")
endif()
file(GLOB seeds ${SEEDS}/*)
list(LENGTH seeds nseeds)
if(NOT runs OR runs LESS_EQUAL nseeds)
  message(FATAL_ERROR "libFuzzer ran only ${runs} inputs (the seeds are ${nseeds}):\n${out}")
endif()
message("libFuzzer: ${runs} runs in ${SECONDS} s, ${cov} coverage points, nothing found")
