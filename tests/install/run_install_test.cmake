# One step of the install tests (tests/install/CMakeLists.txt): cmake -P with
#   STEP  the step; BIN the build tree; SRC this directory; WORK scratch
#   VERSION, CC, CXX (may be empty), PKG_CONFIG, GENERATOR, HAVE_CUDA (1/0),
#   NVCC (may be empty), SANITIZE (extra compile/link flags), and the install
#   dirs LIBDIR INCLUDEDIR BINDIR DATADIR DOCDIR PKGCONFIGDIR CMAKEDIR.
set(P ${WORK}/prefix)
# only what the prefix provides: no stray include paths or pkg-config dirs
foreach(v CPATH C_INCLUDE_PATH CPLUS_INCLUDE_PATH LIBRARY_PATH PKG_CONFIG_PATH DESTDIR CMAKE_PREFIX_PATH)
  unset(ENV{${v}})
endforeach()

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "${what} failed (${rc}):\n  ${cmd}\n${out}${err}")
  endif()
  set(run_out "${out}" PARENT_SCOPE)
  message(STATUS "${what}: ok")
endfunction()

set(cflags -std=c11 -Wall -Wextra -Werror -pedantic ${SANITIZE})

if(STEP STREQUAL "cmake_install_gives_the_distro_layout")
  file(REMOVE_RECURSE ${WORK})
  run("cmake --install" ${CMAKE_COMMAND} --install ${BIN} --prefix ${P})
  set(want
    ${BINDIR}/dlcgen
    ${LIBDIR}/libdlckernels-emu.a ${LIBDIR}/libdlcemu.a
    ${INCLUDEDIR}/dlc/dlc.h ${INCLUDEDIR}/dlc/dlc_ops.h ${INCLUDEDIR}/dlc/dlcemu.h
    ${PKGCONFIGDIR}/dlckernels-emu.pc
    ${CMAKEDIR}/dlckernelsConfig.cmake ${CMAKEDIR}/dlckernelsConfigVersion.cmake ${CMAKEDIR}/dlckernelsTargets.cmake
    ${DATADIR}/dlc/templates/dlc_device.cuh ${DATADIR}/dlc/templates/sm80_contraction.cuh
    ${DATADIR}/dlc/manifests/default.json ${DATADIR}/dlc/manifests/graphs/gemm_bias_relu.json
    ${DOCDIR}/README.md ${DOCDIR}/manifest.md)
  if(HAVE_CUDA)
    list(APPEND want ${LIBDIR}/libdlckernels.a ${PKGCONFIGDIR}/dlckernels.pc)
  endif()
  set(missing)
  foreach(f ${want})
    if(NOT EXISTS ${P}/${f})
      list(APPEND missing ${f})
    endif()
  endforeach()
  if(missing)
    message(FATAL_ERROR "not installed under ${P}: ${missing}")
  endif()
  # nothing the consumers read points back into the build or source tree
  file(GLOB_RECURSE meta ${P}/${CMAKEDIR}/*.cmake ${P}/${PKGCONFIGDIR}/*.pc)
  get_filename_component(srcroot ${SRC}/../.. ABSOLUTE)
  foreach(f ${meta})
    file(READ ${f} s)
    string(REPLACE "${P}" "<prefix>" s "${s}")  # the scratch prefix lies in the build tree
    foreach(tree ${BIN} ${srcroot})
      string(FIND "${s}" "${tree}/" at)
      if(NOT at EQUAL -1)
        message(FATAL_ERROR "${f} refers to ${tree}")
      endif()
    endforeach()
  endforeach()
  # the pkg-config prefix is the one installed to
  set(ENV{PKG_CONFIG_PATH} ${P}/${PKGCONFIGDIR})
  run("pkg-config --variable=prefix" ${PKG_CONFIG} --variable=prefix dlckernels-emu)
  string(STRIP "${run_out}" got)
  if(NOT got STREQUAL P)
    message(FATAL_ERROR "dlckernels-emu.pc has prefix=${got}, installed to ${P}")
  endif()
  run("pkg-config --modversion" ${PKG_CONFIG} --modversion dlckernels-emu)
  string(STRIP "${run_out}" got)
  if(NOT got STREQUAL VERSION)
    message(FATAL_ERROR "dlckernels-emu.pc has version ${got}, not ${VERSION}")
  endif()

elseif(STEP STREQUAL "headers_compile_as_c11_and_cxx_without_cuda")
  set(d ${WORK}/headers)
  file(MAKE_DIRECTORY ${d})
  run("cc -std=c11 <dlc/dlc.h>" ${CC} ${cflags} -I${P}/${INCLUDEDIR} -c ${SRC}/header_only.c -o ${d}/c.o)
  run("cc -M <dlc/dlc.h>" ${CC} -std=c11 -I${P}/${INCLUDEDIR} -M ${SRC}/header_only.c)
  string(REGEX MATCH "[^ ]*cuda[^ ]*" cuda "${run_out}")
  if(cuda)
    message(FATAL_ERROR "<dlc/dlc.h> pulls in a CUDA header: ${cuda}")
  endif()
  if(CXX)
    run("c++ <dlc/dlc.h>" ${CXX} -x c++ -std=c++11 -Wall -Wextra -Werror -pedantic ${SANITIZE}
        -I${P}/${INCLUDEDIR} -c ${SRC}/header_only.c -o ${d}/cxx.o)
  else()
    message(STATUS "no C++ compiler: C++ header check skipped")
  endif()

elseif(STEP STREQUAL "installed_dlcgen_runs_and_its_output_compiles_with_installed_templates")
  run("dlcgen --version" ${P}/${BINDIR}/dlcgen --version)
  if(NOT run_out MATCHES "dlcgen ${VERSION}")
    message(FATAL_ERROR "dlcgen --version says '${run_out}', expected dlcgen ${VERSION}")
  endif()
  # a one-op manifest on the installed example graph, compiled by the
  # installed dlcgen and by nvcc against the installed templates only
  set(d ${WORK}/dlcgen)
  file(MAKE_DIRECTORY ${d}/graphs)
  file(COPY ${P}/${DATADIR}/dlc/manifests/graphs/gemm_bias_relu.json DESTINATION ${d}/graphs)
  file(WRITE ${d}/manifest.json [[{
  "schema": "dlc-manifest/1",
  "archs": ["sm80"],
  "ops": [{"name": "gemm_bias_relu", "graph": "graphs/gemm_bias_relu.json", "dtypes": ["fp16"], "plans": "auto"}]
}
]])
  run("installed dlcgen --manifest" ${P}/${BINDIR}/dlcgen --manifest ${d}/manifest.json --out ${d}/out)
  if(NVCC)
    run("nvcc -ptx with the installed templates" ${NVCC} -std=c++17 -O3 -ptx -arch=sm_80
        -I${P}/${DATADIR}/dlc/templates -I${d}/out/src ${d}/out/kernels/gemm_bias_relu.cu -o ${d}/gemm_bias_relu.ptx)
  else()
    message(STATUS "no nvcc: the compile of dlcgen's output is skipped")
  endif()

elseif(STEP STREQUAL "pkg_config_consumer_runs_gemm_in_emulator")
  set(d ${WORK}/pkg-config)
  file(MAKE_DIRECTORY ${d})
  set(ENV{PKG_CONFIG_PATH} ${P}/${PKGCONFIGDIR})
  set(cases dlckernels-emu:consumer_emu)
  if(HAVE_CUDA)
    list(APPEND cases dlckernels:consumer_cuda)
  endif()
  foreach(c ${cases})
    string(REPLACE ":" ";" c "${c}")
    list(GET c 0 pc)
    list(GET c 1 exe)
    run("pkg-config --cflags --libs ${pc}" ${PKG_CONFIG} --cflags --libs ${pc})
    string(STRIP "${run_out}" flags)
    separate_arguments(flags UNIX_COMMAND "${flags}")
    # the plain command line a user types: cc $(pkg-config --cflags --libs ...)
    run("cc ${exe}.c with pkg-config ${pc}" ${CC} ${cflags} ${SRC}/${exe}.c -o ${d}/${exe} ${flags})
    run("${exe} (pkg-config)" ${d}/${exe} ${VERSION})
    message(STATUS "${run_out}")
  endforeach()

elseif(STEP STREQUAL "find_package_consumer_runs_gemm_in_emulator")
  set(d ${WORK}/find-package)
  file(REMOVE_RECURSE ${d})
  if(HAVE_CUDA)
    set(with_cuda ON)
  else()
    set(with_cuda OFF)
  endif()
  run("configure the find_package consumer" ${CMAKE_COMMAND} -S ${SRC}/cmake_consumer -B ${d} -G ${GENERATOR}
      -DCMAKE_PREFIX_PATH=${P} -DCMAKE_C_COMPILER=${CC} -DWITH_CUDA=${with_cuda}
      -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_BUILD_TYPE=Release
      "-DCMAKE_C_FLAGS=${SANITIZE}" "-DCMAKE_EXE_LINKER_FLAGS=${SANITIZE}")
  file(STRINGS ${d}/CMakeCache.txt dir REGEX "^dlckernels_DIR:")
  string(REGEX REPLACE "^[^=]*=" "" dir "${dir}")
  get_filename_component(dir "${dir}" ABSOLUTE)
  get_filename_component(want ${P}/${CMAKEDIR} ABSOLUTE)
  if(NOT dir STREQUAL want)
    message(FATAL_ERROR "find_package(dlckernels) found ${dir}, not the installed ${want}")
  endif()
  run("build the find_package consumer" ${CMAKE_COMMAND} --build ${d})
  run("consumer_emu (find_package)" ${d}/consumer_emu ${VERSION})
  message(STATUS "${run_out}")
  if(HAVE_CUDA)
    run("consumer_cuda (find_package)" ${d}/consumer_cuda)
    message(STATUS "${run_out}")
  endif()

else()
  message(FATAL_ERROR "unknown STEP '${STEP}'")
endif()
