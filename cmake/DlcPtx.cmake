# DlcPtx.cmake: compile CUDA sources to PTX with nvcc at build time.
#
#   dlc_add_ptx(<out_var>
#               SOURCE <file.cu>
#               ARCH <sm_80 | sm_90a | ...>
#               [NAME <base name>]          # default: the source's name without extension
#               [OUTPUT_DIR <dir>]          # default: ${CMAKE_CURRENT_BINARY_DIR}/ptx
#               [OPTIONS <nvcc option>...]  # e.g. -O3 -lineinfo -DTILE=64
#               [DEPENDS <file>...])        # extra dependencies besides the headers nvcc reports
#
# Adds a custom command producing <OUTPUT_DIR>/<NAME>.<ARCH>.ptx and sets
# <out_var> to its path; list the outputs in a target (add_custom_target or a
# target's sources) to build them.  Header dependencies come from nvcc's
# depfile.  Needs DLC_NVCC (cmake/DlcCuda.cmake); without it this is a fatal
# error, so callers guard with if(DLC_NVCC).
include_guard(GLOBAL)

function(dlc_add_ptx out_var)
  cmake_parse_arguments(PTX "" "SOURCE;ARCH;NAME;OUTPUT_DIR" "OPTIONS;DEPENDS" ${ARGN})
  if(NOT DLC_NVCC)
    message(FATAL_ERROR "dlc_add_ptx: nvcc was not found (DLC_NVCC is empty)")
  endif()
  if(NOT PTX_SOURCE OR NOT PTX_ARCH)
    message(FATAL_ERROR "dlc_add_ptx: SOURCE and ARCH are required")
  endif()
  if(PTX_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "dlc_add_ptx: unexpected arguments: ${PTX_UNPARSED_ARGUMENTS}")
  endif()
  get_filename_component(src "${PTX_SOURCE}" ABSOLUTE)
  if(NOT PTX_NAME)
    get_filename_component(PTX_NAME "${src}" NAME_WE)
  endif()
  if(NOT PTX_OUTPUT_DIR)
    set(PTX_OUTPUT_DIR "${CMAKE_CURRENT_BINARY_DIR}/ptx")
  endif()
  set(out "${PTX_OUTPUT_DIR}/${PTX_NAME}.${PTX_ARCH}.ptx")
  add_custom_command(
    OUTPUT "${out}"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${PTX_OUTPUT_DIR}"
    COMMAND "${DLC_NVCC}" -ptx "-arch=${PTX_ARCH}" ${PTX_OPTIONS} -MD -MF "${out}.d" -o "${out}" "${src}"
    DEPENDS "${src}" ${PTX_DEPENDS}
    DEPFILE "${out}.d"
    COMMENT "nvcc -ptx -arch=${PTX_ARCH} ${PTX_NAME}"
    VERBATIM)
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()
