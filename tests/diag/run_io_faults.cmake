# All-or-nothing generation (issue 12, defects 5 and 6): a run that fails at
# any write, rename, removal or index update leaves every file of the
# earlier run byte-identical, with no temporaries, backups or directories
# left behind.  From CTest:
#   cmake -DDLCGEN=... -DIO=<tests/diag/io> -DWORK=<scratch dir> -DCASE=<case> -P run_io_faults.cmake
# CASE is one of
#   every_step      DLCGEN_TEST_FAIL_IO=any:N for N = 1, 2, ... until the run
#                   succeeds: every step of the transaction fails once;
#   readonly_top    the output folder is read-only, its subfolders writable;
#   index_is_dir    dlcgen.outputs is a (non-empty) directory;
#   index_unreadable  dlcgen.outputs has mode 000;
#   planted_symlink symlinks planted at the temporary and backup names
#                   (DLCGEN_TEST_TEMP_NAMES=sequential makes them known) are
#                   neither followed nor removed.
# The permission cases run dlcgen as user nobody when the test runs as root
# (root ignores permissions), through setpriv.
# The earlier run compiles IO/before.json; the failing run IO/after.json with
# --dump=plan, which changes one op, removes one (a stale output), adds one
# and creates the dumps/ directories.
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/../script_args.cmake)
dlc_script_args(run_io_faults.cmake DLCGEN IO WORK CASE)
dlc_fresh_dir(${WORK})
set(out ${WORK}/out)
set(after_args --manifest ${IO}/after.json --out ${out} --quiet --dump=plan --diag=json)

# root: run as nobody, on files nobody owns
execute_process(COMMAND id -u OUTPUT_VARIABLE uid OUTPUT_STRIP_TRAILING_WHITESPACE)
set(as_user "")
if(uid STREQUAL "0" AND CASE MATCHES "readonly_top|index_unreadable")
  find_program(SETPRIV setpriv)
  if(NOT SETPRIV)
    message("run_io_faults.cmake: running as root without setpriv: permissions cannot be tested")
    return()
  endif()
  set(as_user ${SETPRIV} --reuid=65534 --regid=65534 --clear-groups)
endif()

function(dlcgen_run rc_var err_var)
  execute_process(COMMAND ${as_user} ${DLCGEN} ${ARGN} RESULT_VARIABLE rc ERROR_VARIABLE err)
  set(${rc_var} ${rc} PARENT_SCOPE)
  set(${err_var} "${err}" PARENT_SCOPE)
endfunction()

# the expected result of the second run, in a directory of its own
execute_process(COMMAND ${DLCGEN} --manifest ${IO}/after.json --out ${WORK}/expect --quiet --dump=plan
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the run of after.json into a fresh directory failed (${rc}):\n${err}")
endif()

# the earlier run
execute_process(COMMAND ${DLCGEN} --manifest ${IO}/before.json --out ${out} --quiet RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the first run failed (${rc}):\n${err}")
endif()
if(as_user)
  execute_process(COMMAND chown -R 65534:65534 ${out})
endif()

# a snapshot of every entry under out (hidden ones and directories too)
function(snapshot var)
  file(GLOB_RECURSE entries LIST_DIRECTORIES true RELATIVE ${out} ${out}/* ${out}/.*)
  list(SORT entries)
  set(s "")
  foreach(f ${entries})
    if(IS_DIRECTORY ${out}/${f})
      string(APPEND s "${f}/\n")
    else()
      file(SHA256 ${out}/${f} h)
      string(APPEND s "${f} ${h}\n")
    endif()
  endforeach()
  set(${var} "${s}" PARENT_SCOPE)
endfunction()
snapshot(before)

function(check_unchanged what)
  snapshot(now)
  if(NOT now STREQUAL before)
    message(FATAL_ERROR "${what} changed the earlier outputs:\nbefore:\n${before}\nafter:\n${now}")
  endif()
endfunction()

function(check_failed what rc err)
  if(NOT rc EQUAL 1 OR NOT err MATCHES "E0003")
    message(FATAL_ERROR "${what}: expected exit status 1 with E0003, got ${rc}:\n${err}")
  endif()
  check_unchanged("${what}")
endfunction()

# out now holds exactly what after.json gives, and nothing else
function(check_succeeded what)
  file(GLOB_RECURSE got LIST_DIRECTORIES true RELATIVE ${out} ${out}/* ${out}/.*)
  file(GLOB_RECURSE want LIST_DIRECTORIES true RELATIVE ${WORK}/expect ${WORK}/expect/* ${WORK}/expect/.*)
  list(SORT got)
  list(SORT want)
  if(NOT got STREQUAL want)
    message(FATAL_ERROR "${what}: the outputs are not those of after.json:\ngot: ${got}\nwant: ${want}")
  endif()
  foreach(f ${want})
    if(NOT IS_DIRECTORY ${out}/${f})
      file(SHA256 ${out}/${f} h1)
      file(SHA256 ${WORK}/expect/${f} h2)
      if(NOT h1 STREQUAL h2)
        message(FATAL_ERROR "${what}: ${f} differs from after.json's")
      endif()
    endif()
  endforeach()
endfunction()

if(CASE STREQUAL "every_step")
  set(seen "")
  set(nsteps 0)
  foreach(n RANGE 1 500)
    execute_process(COMMAND ${CMAKE_COMMAND} -E env DLCGEN_TEST_FAIL_IO=any:${n} ${DLCGEN} ${after_args}
                    RESULT_VARIABLE rc ERROR_VARIABLE err)
    if(rc EQUAL 0)
      break()
    endif()
    set(nsteps ${n})
    check_failed("the run failing at step ${n}" "${rc}" "${err}")
    foreach(step "create a temporary file beside" "write" "back up" "rename the new file onto"
                 "remove the stale output")
      if(err MATCHES "cannot ${step} ")
        list(APPEND seen "${step}")
      endif()
    endforeach()
    if(err MATCHES "cannot [a-z ]+ '[^']*dlcgen.outputs'")
      list(APPEND seen index)
    endif()
  endforeach()
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the run still fails after 500 injected failures:\n${err}")
  endif()
  list(REMOVE_DUPLICATES seen)
  message("${nsteps} steps failed one at a time (${seen}); then the run succeeded")
  list(LENGTH seen nseen)
  if(nseen LESS 6)
    message(FATAL_ERROR "not every kind of step failed: only ${seen}")
  endif()
  check_succeeded("the run without a failure")
elseif(CASE STREQUAL "readonly_top")
  # without --dump: the run creates nothing in the top folder but its index
  file(CHMOD ${out} PERMISSIONS OWNER_READ OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
  dlcgen_run(rc err --manifest ${IO}/after.json --out ${out} --quiet --diag=json)
  file(CHMOD ${out} DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE)
  check_failed("the run into a read-only folder with writable subfolders" "${rc}" "${err}")
elseif(CASE STREQUAL "index_is_dir")
  file(REMOVE ${out}/dlcgen.outputs)
  file(WRITE ${out}/dlcgen.outputs/keep "")
  snapshot(before)
  dlcgen_run(rc err ${after_args})
  check_failed("the run with a directory at dlcgen.outputs" "${rc}" "${err}")
elseif(CASE STREQUAL "index_unreadable")
  execute_process(COMMAND chmod 000 ${out}/dlcgen.outputs)
  dlcgen_run(rc err ${after_args})
  file(CHMOD ${out}/dlcgen.outputs PERMISSIONS OWNER_READ OWNER_WRITE)
  check_failed("the run with an unreadable dlcgen.outputs" "${rc}" "${err}")
elseif(CASE STREQUAL "planted_symlink")
  # at the first temporary or backup name of every output: links to a
  # victim file and to a file that must not come to exist
  file(WRITE ${WORK}/victim "victim\n")
  file(GLOB_RECURSE want RELATIVE ${WORK}/expect ${WORK}/expect/*)
  file(GLOB_RECURSE had RELATIVE ${out} ${out}/*)
  list(APPEND want ${had})
  list(REMOVE_DUPLICATES want)
  set(links "")
  foreach(f ${want})
    get_filename_component(d ${f} DIRECTORY)
    get_filename_component(b ${f} NAME)
    if(d)
      set(d "${d}/")
    endif()
    file(MAKE_DIRECTORY ${out}/${d})
    file(CREATE_LINK ${WORK}/victim ${out}/${d}.${b}.dlcgen-000000 SYMBOLIC)
    file(CREATE_LINK ${WORK}/must_not_exist ${out}/${d}.${b}.dlcgen-000001 SYMBOLIC)
    list(APPEND links ${d}.${b}.dlcgen-000000 ${d}.${b}.dlcgen-000001)
  endforeach()
  execute_process(COMMAND ${CMAKE_COMMAND} -E env DLCGEN_TEST_TEMP_NAMES=sequential ${DLCGEN} ${after_args}
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the run beside planted links failed (${rc}):\n${err}")
  endif()
  file(READ ${WORK}/victim v)
  if(NOT v STREQUAL "victim\n" OR EXISTS ${WORK}/must_not_exist)
    message(FATAL_ERROR "a planted symlink was followed")
  endif()
  foreach(l ${links})
    if(NOT IS_SYMLINK ${out}/${l})
      message(FATAL_ERROR "the planted symlink ${l} was removed or replaced")
    endif()
    file(REMOVE ${out}/${l})
  endforeach()
  check_succeeded("the run beside planted links")
else()
  message(FATAL_ERROR "run_io_faults.cmake: unknown CASE ${CASE}")
endif()
