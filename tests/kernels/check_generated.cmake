# generated/ is dlcgen's output for manifests/default.json, byte for byte:
# regenerate into a scratch directory (with the manifest's absolute path, from
# another directory: the output must not depend on either) and compare every
# file.
file(REMOVE_RECURSE ${SCRATCH})
get_filename_component(elsewhere ${SCRATCH} DIRECTORY)
execute_process(COMMAND ${DLCGEN} --quiet --manifest ${SRC}/manifests/default.json --out ${SCRATCH}
                WORKING_DIRECTORY ${elsewhere} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "dlcgen failed (${rc}):\n${err}")
endif()
execute_process(COMMAND diff -r ${SRC}/generated ${SCRATCH} RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0)
  string(SUBSTRING "${out}" 0 4000 out)
  message(FATAL_ERROR "generated/ differs from dlcgen's output for manifests/default.json; run\n"
                      "  dlcgen --manifest manifests/default.json --out generated\n"
                      "from the source directory and commit the result.\n${out}")
endif()
