# Runs dlcgen under valgrind and checks its exit status: EXPECT (0 or 1)
# when valgrind found nothing, 99 when it found an error or a definite or
# indirect leak.  From CTest:
#   cmake -DVALGRIND=... -DDLCGEN=... -DWORK=<scratch dir> -DEXPECT=1
#         -DARGS=<|-separated dlcgen arguments; @OUT@ is WORK/out> -P run_valgrind.cmake
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
string(REPLACE "|" ";" args "${ARGS}")
string(REPLACE "@OUT@" "${WORK}/out" args "${args}")
execute_process(
  COMMAND ${VALGRIND} --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect
          -q ${DLCGEN} ${args}
  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(rc EQUAL 99)
  message(FATAL_ERROR "valgrind reports errors or leaks:\n${err}")
endif()
if(NOT rc EQUAL EXPECT)
  message(FATAL_ERROR "dlcgen exited with ${rc}, expected ${EXPECT}:\n${err}")
endif()
file(REMOVE_RECURSE ${WORK})
