# API documentation of the public headers with Doxygen (optional).
#   docs    target: HTML for dlc.h, dlc_ops.h (the manifest's entry points)
#           and dlcemu.h in ${CMAKE_BINARY_DIR}/docs/api/html
#   docs.public_headers_are_documented    test: fails on any Doxygen warning,
#           such as an undocumented function, member or parameter
include_guard(GLOBAL)
find_package(Doxygen QUIET)
if(NOT DOXYGEN_FOUND)
  message(STATUS "dlc: Doxygen not found; no docs target")
  return()
endif()

# the entry points of the library this build makes, else the committed ones
if(TARGET dlckernels_generate)
  set(_dlc_ops_h ${CMAKE_BINARY_DIR}/dlckernels-gen/include/dlc/dlc_ops.h)
else()
  set(_dlc_ops_h ${PROJECT_SOURCE_DIR}/generated/include/dlc/dlc_ops.h)
endif()
set(DLC_DOCS_INPUT "${PROJECT_SOURCE_DIR}/include/dlc/dlc.h ${PROJECT_SOURCE_DIR}/include/dlc/dlcemu.h ${_dlc_ops_h}")

set(DLC_DOCS_OUT ${CMAKE_BINARY_DIR}/docs/api)
set(DLC_DOCS_WARN_AS_ERROR NO)
configure_file(${CMAKE_CURRENT_LIST_DIR}/Doxyfile.in ${CMAKE_BINARY_DIR}/docs/Doxyfile @ONLY)
add_custom_target(docs COMMAND ${DOXYGEN_EXECUTABLE} ${CMAKE_BINARY_DIR}/docs/Doxyfile
                  WORKING_DIRECTORY ${CMAKE_BINARY_DIR}/docs COMMENT "Doxygen: API docs in ${DLC_DOCS_OUT}/html"
                  VERBATIM)
if(TARGET dlckernels_generate)
  add_dependencies(docs dlckernels_generate)
endif()

if(DLC_BUILD_TESTS)
  set(DLC_DOCS_OUT ${CMAKE_BINARY_DIR}/docs/check)
  set(DLC_DOCS_WARN_AS_ERROR FAIL_ON_WARNINGS)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/Doxyfile.in ${CMAKE_BINARY_DIR}/docs/Doxyfile.check @ONLY)
  add_test(NAME docs.public_headers_are_documented
           COMMAND ${DOXYGEN_EXECUTABLE} ${CMAKE_BINARY_DIR}/docs/Doxyfile.check
           WORKING_DIRECTORY ${CMAKE_BINARY_DIR}/docs)
  set_tests_properties(docs.public_headers_are_documented PROPERTIES LABELS "docs;manifest")
endif()
