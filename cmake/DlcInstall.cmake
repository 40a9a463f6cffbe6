# Install rules: dlc ships like a distro library (GNUInstallDirs layout).
#
#   bin/dlcgen                                  the compiler
#   lib/libdlckernels.a                         SASS kernels + dispatch + CUDA backend
#   lib/libdlckernels-emu.a, lib/libdlcemu.a    the same API in the PTX emulator
#   lib/libdlckernels.so.0, lib/libdlckernels-emu.so.0 (and .so.0.x.y, .so)
#                                               the same as shared libraries
#   include/dlc/{dlc.h,dlc_ops.h,dlcemu.h}      public headers (dlc_ops.h is generated)
#   lib/pkgconfig/{dlckernels,dlckernels-emu}.pc
#   lib/cmake/dlckernels/                       find_package(dlckernels): dlc::dlckernels,
#                                               dlc::dlckernels-emu, dlc::dlcemu (static),
#                                               dlc::dlckernels-shared, dlc::dlckernels-emu-shared
#   share/dlckernels/{ops.json,ops.md}          the operator catalogue dlcgen wrote
#   share/dlc/templates/*.cuh                   what dlcgen's .cu files include
#   share/dlc/manifests/                        default.json and its graphs
#   share/man/man1/dlcgen.1                     dlcgen's manual page
#   share/doc/dlc/                              README and docs/*.md, and api/html when
#                                               the docs target was built
#
# Components (cmake --install --component C): dlcgen (bin, man page,
# templates, manifests), lib (the shared libraries' .so.MAJOR), dev (static
# libraries, .so links, headers, pkg-config, CMake package), doc.
#
# DLC_LIBRARY_NAME=N (default dlckernels) renames the installed library, so
# that the libraries of two manifests install side by side (their lib and
# dev components; dlcgen and the docs are the same for both): libN.a,
# libN-emu.a, libN-dlcemu.a, libN.so.0, libN-emu.so.0, the headers in
# include/N/dlc/, N.pc and N-emu.pc, find_package(N) with targets N::N,
# N::N-emu, N::dlcemu, N::N-shared, N::N-emu-shared, and share/N/ops.json.
#
# Included from the top-level CMakeLists.txt after libkernels/, so that it sees
# the targets dlcgen, dlcemu and (with nvcc) dlckernels and dlckernels-emu.
# Only the library of ${DLC_MANIFEST} is installed; test libraries made with
# dlc_add_kernel_library() (dlcextra, ...) are not.
include_guard(GLOBAL)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(_n ${DLC_LIBRARY_NAME})
set(DLC_PC_NAME ${_n})  # (the .pc and Config templates' @DLC_PC_NAME@)
if(_n STREQUAL "dlckernels")
  set(DLC_INSTALL_NS dlc)  # dlc::dlckernels
  set(DLC_INSTALL_EMUCORE dlcemu)
  set(DLC_INSTALL_HEADERDIR ${CMAKE_INSTALL_INCLUDEDIR})
else()
  set(DLC_INSTALL_NS ${_n})  # mykernels::mykernels
  set(DLC_INSTALL_EMUCORE ${_n}-dlcemu)
  set(DLC_INSTALL_HEADERDIR ${CMAKE_INSTALL_INCLUDEDIR}/${_n})
endif()
set(DLC_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/${_n} CACHE STRING
    "Where the library's CMake package is installed (relative to the prefix)")
set(DLC_INSTALL_PKGCONFIGDIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig CACHE STRING
    "Where the pkg-config files are installed (relative to the prefix)")
set(DLC_INSTALL_TEMPLATEDIR ${CMAKE_INSTALL_DATADIR}/dlc/templates)

# the compiler, and the templates its output includes
install(TARGETS dlcgen RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT dlcgen)
install(FILES ${PROJECT_SOURCE_DIR}/docs/dlcgen.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT dlcgen)
file(GLOB _dlc_templates CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/templates/*.cuh)
install(FILES ${_dlc_templates} DESTINATION ${DLC_INSTALL_TEMPLATEDIR} COMPONENT dlcgen)
# the default manifest and its graphs: the starting point for a user's own
install(FILES ${PROJECT_SOURCE_DIR}/manifests/default.json DESTINATION ${CMAKE_INSTALL_DATADIR}/dlc/manifests
        COMPONENT dlcgen)
file(GLOB _dlc_graphs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/manifests/graphs/*.json)
install(FILES ${_dlc_graphs} DESTINATION ${CMAKE_INSTALL_DATADIR}/dlc/manifests/graphs COMPONENT dlcgen)

# documentation
file(GLOB _dlc_docs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/*.md)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${_dlc_docs} DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT doc)
# the API reference, when `cmake --build build --target docs` made it
install(DIRECTORY ${CMAKE_BINARY_DIR}/docs/api/html DESTINATION ${CMAKE_INSTALL_DOCDIR}/api COMPONENT doc OPTIONAL)

# libraries and headers
set(_dlc_export_targets dlcemu)
install(FILES ${PROJECT_SOURCE_DIR}/include/dlc/dlcemu.h DESTINATION ${DLC_INSTALL_HEADERDIR}/dlc COMPONENT dev)
# the installed names (the build tree's stay dlckernels*, which the tests use)
set_target_properties(dlcemu PROPERTIES OUTPUT_NAME ${DLC_INSTALL_EMUCORE})
foreach(_t dlckernels dlckernels-emu dlckernels-shared dlckernels-emu-shared)
  if(TARGET ${_t})
    string(REPLACE "dlckernels" "${_n}" _out ${_t})
    string(REGEX REPLACE "-shared$" "" _file ${_out})
    set_target_properties(${_t} PROPERTIES OUTPUT_NAME ${_file} EXPORT_NAME ${_out})
    if(NOT _n STREQUAL "dlckernels")
      target_include_directories(${_t} INTERFACE $<INSTALL_INTERFACE:${DLC_INSTALL_HEADERDIR}>)
    endif()
  endif()
endforeach()
if(TARGET dlckernels-emu)
  list(APPEND _dlc_export_targets dlckernels-emu)
  # dlc_ops.h: the entry points dlcgen generated for ${DLC_MANIFEST}
  get_directory_property(_dlc_gen DIRECTORY ${PROJECT_SOURCE_DIR}/libkernels DEFINITION dlckernels_GEN)
  install(FILES ${PROJECT_SOURCE_DIR}/include/dlc/dlc.h ${_dlc_gen}/include/dlc/dlc_ops.h
          DESTINATION ${DLC_INSTALL_HEADERDIR}/dlc COMPONENT dev)
  # the operator catalogue dlcgen wrote with them, as data and as a page
  install(FILES ${_dlc_gen}/ops.json ${_dlc_gen}/docs/ops.md DESTINATION ${CMAKE_INSTALL_DATADIR}/${_n} COMPONENT dev)
endif()
set(DLC_INSTALL_HAVE_CUDA OFF)
if(TARGET dlckernels)
  list(APPEND _dlc_export_targets dlckernels)
  set(DLC_INSTALL_HAVE_CUDA ON)
endif()
# (the kernel libraries carry $<INSTALL_INTERFACE:include> themselves; dlcemu's
# include directory is a build-tree path, so it gets INCLUDES DESTINATION)
list(REMOVE_ITEM _dlc_export_targets dlcemu)
install(TARGETS dlcemu EXPORT dlckernelsTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
  INCLUDES DESTINATION ${DLC_INSTALL_HEADERDIR})
if(_dlc_export_targets)
  install(TARGETS ${_dlc_export_targets} EXPORT dlckernelsTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
endif()
# the shared libraries: libX.so.MAJOR.MINOR.PATCH and libX.so.MAJOR (lib),
# libX.so (dev)
set(_dlc_shared)
foreach(_t dlckernels-emu-shared dlckernels-shared)
  if(TARGET ${_t})
    list(APPEND _dlc_shared ${_t})
  endif()
endforeach()
if(_dlc_shared)
  install(TARGETS ${_dlc_shared} EXPORT dlckernelsTargets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT lib NAMELINK_COMPONENT dev)
endif()

# CMake package
install(EXPORT dlckernelsTargets NAMESPACE ${DLC_INSTALL_NS}:: FILE ${_n}Targets.cmake DESTINATION ${DLC_INSTALL_CMAKEDIR}
        COMPONENT dev)
set(DLC_CUDA_ROOT_HINT "")
if(DLC_INSTALL_HAVE_CUDA)
  get_filename_component(DLC_CUDA_ROOT_HINT "${CUDAToolkit_BIN_DIR}" DIRECTORY)
endif()
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/dlckernelsConfig.cmake.in
  ${CMAKE_BINARY_DIR}/dlc-install/${_n}Config.cmake
  INSTALL_DESTINATION ${DLC_INSTALL_CMAKEDIR})
# docs/install.md's ABI policy: a MINOR release only adds, so a request for
# 0.1 is met by 0.2 but not by 1.0 (the SONAME's MAJOR), also in 0.x
write_basic_package_version_file(${CMAKE_BINARY_DIR}/dlc-install/${_n}ConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/dlc-install/${_n}Config.cmake
              ${CMAKE_BINARY_DIR}/dlc-install/${_n}ConfigVersion.cmake
        DESTINATION ${DLC_INSTALL_CMAKEDIR} COMPONENT dev)

# pkg-config files, made at configure time for ${CMAKE_INSTALL_PREFIX}.
# ${libdir} and ${includedir} are relative to ${prefix} when the GNUInstallDirs
# are; `cmake --install --prefix P` then rewrites the prefix= line of the
# installed copies to P.
set(_dlc_pc_dir_LIBDIR ${CMAKE_INSTALL_LIBDIR})
set(_dlc_pc_dir_INCLUDEDIR ${DLC_INSTALL_HEADERDIR})
foreach(_v LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${_dlc_pc_dir_${_v}}")
    set(DLC_PC_${_v} "${_dlc_pc_dir_${_v}}")
  else()
    set(DLC_PC_${_v} "\${prefix}/${_dlc_pc_dir_${_v}}")
  endif()
endforeach()
set(DLC_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
set(_dlc_pcs)
if(TARGET dlckernels-emu)
  list(APPEND _dlc_pcs dlckernels-emu)
endif()
if(DLC_INSTALL_HAVE_CUDA)
  # where cudart_static was found (the build links the same one)
  set(DLC_PC_CUDA_LIBDIR "${CUDAToolkit_LIBRARY_DIR}")
  if(CUDA_cudart_static_LIBRARY)
    get_filename_component(DLC_PC_CUDA_LIBDIR "${CUDA_cudart_static_LIBRARY}" DIRECTORY)
  endif()
  list(APPEND _dlc_pcs dlckernels)
endif()
foreach(_tpl ${_dlc_pcs})
  string(REPLACE "dlckernels" "${_n}" _pc ${_tpl})
  configure_file(${CMAKE_CURRENT_LIST_DIR}/${_tpl}.pc.in ${CMAKE_BINARY_DIR}/dlc-install/${_pc}.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/dlc-install/${_pc}.pc DESTINATION ${DLC_INSTALL_PKGCONFIGDIR} COMPONENT dev)
  # install time: point prefix= at the prefix actually installed to
  install(CODE "set(_dlc_pc \"${DLC_INSTALL_PKGCONFIGDIR}/${_pc}.pc\")\nset(_dlc_pc_prefix \"${DLC_PC_PREFIX}\")" COMPONENT dev)
  install(CODE [[
    if(NOT IS_ABSOLUTE "${_dlc_pc}")
      set(_dlc_pc "${CMAKE_INSTALL_PREFIX}/${_dlc_pc}")
    endif()
    set(_dlc_pc "$ENV{DESTDIR}${_dlc_pc}")
    if(NOT CMAKE_INSTALL_PREFIX STREQUAL _dlc_pc_prefix AND EXISTS "${_dlc_pc}")
      file(READ "${_dlc_pc}" _dlc_s)
      string(REGEX REPLACE "(^|\n)prefix=[^\n]*" "\\1prefix=${CMAKE_INSTALL_PREFIX}" _dlc_s "${_dlc_s}")
      file(WRITE "${_dlc_pc}" "${_dlc_s}")
    endif()]] COMPONENT dev)
endforeach()
