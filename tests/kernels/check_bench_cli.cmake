# bench.dlc_bench_takes_an_op_by_its_dims_and_reports_the_dispatch_cost:
# the installed dlc-bench's command line (docs/dlc-bench.1).
#   cmake -DBENCH=<dlc-bench> -P check_bench_cli.cmake
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/../script_args.cmake)
dlc_script_args(check_bench_cli.cmake BENCH)

# bench(<want exit> <out var> args...): runs dlc-bench, stdout and stderr in out
function(bench want out)
  execute_process(COMMAND ${BENCH} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
  if(NOT rc EQUAL want)
    string(REPLACE ";" " " a "${ARGN}")
    message(FATAL_ERROR "dlc-bench ${a}: exit ${rc}, not ${want}:\n${o}${e}")
  endif()
  set(${out} "${o}${e}" PARENT_SCOPE)
endfunction()

# expect(<exit> <regex> args...): dlc-bench's output matches
function(expect want re)
  bench(${want} o ${ARGN})
  if(NOT o MATCHES "${re}")
    string(REPLACE ";" " " a "${ARGN}")
    message(FATAL_ERROR "dlc-bench ${a}: no match for ${re}:\n${o}")
  endif()
endfunction()

# one GEMM shape by its dims: a row for sm80 and one for sm90a, that shape
bench(0 o --model --csv - --op gemm_bias_relu_nt --m 16 --n 4096 --k 4096)
string(REGEX MATCHALL "\ngemm_bias_relu_nt,16x4096x4096,fp16,sm(80|90a),[^\n]*" rows "${o}")
list(LENGTH rows n)
if(NOT n EQUAL 2)
  message(FATAL_ERROR "--op gemm_bias_relu_nt --m 16 --n 4096 --k 4096 gave ${n} rows, not 2:\n${o}")
endif()
# a dim left out keeps the op's first shape's: M = 1024, K = 1024
expect(0 "\ngemm_bias_relu,1024x300x1024,fp16,sm80," --model --csv - --op gemm_bias_relu --n 300)
# the row ops, and the dtype
expect(0 "\nrmsnorm,7x4096,bf16,sm90a," --model --csv - --op rmsnorm --m 7 --n 4096 --dtype bf16)
# --host: a line of figures for each of the op's shapes: the call's dispatch cost and its plan's
expect(0 "\nlayernorm +2048x4096 +fp16 +[0-9]+\\.[0-9] +[0-9]+\\.[0-9]\n" --host --op layernorm)
# usage errors: exit 2, naming what is wrong
expect(2 "no op nope" --host --op nope)
expect(2 "softmax has no dim --q" --model --csv - --op softmax --q 3)
expect(2 "a dim is at least 1" --model --csv - --op attention_causal --s 0)
message(STATUS "dlc-bench's command line: ok")
