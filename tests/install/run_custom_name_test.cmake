# A library built from another manifest with -DDLC_LIBRARY_NAME=mykernels
# installs beside the default one (issue 38 item 4): a build of this source
# tree from a one-op manifest (rmsnorm, fp16, SASS for sm80 only), its lib
# and dev components installed into a scratch prefix, must give
# libmykernels*.so.0 with that SONAME, include/mykernels/dlc/, mykernels*.pc,
# find_package(mykernels) with mykernels:: targets and share/mykernels/ops.json,
# and nothing named dlckernels or at the default header path; a program built
# with pkg-config and one built with find_package then run the op's query and
# name the manifest.  From CTest:
#   cmake -DROOT=<source tree> -DWORK=<scratch> -DGENERATOR=... -DCC=... -DPKG_CONFIG=...
#         -DHAVE_CUDA=0|1 -DREADELF=... -DLIBDIR=... -P run_custom_name_test.cmake
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/../script_args.cmake)
dlc_script_args(run_custom_name_test.cmake ROOT WORK GENERATOR CC PKG_CONFIG HAVE_CUDA READELF LIBDIR)
include(${CMAKE_CURRENT_LIST_DIR}/install_common.cmake)

set(N mykernels)
set(P ${WORK}/prefix)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/m/graphs)
file(COPY ${ROOT}/manifests/graphs/rmsnorm.json DESTINATION ${WORK}/m/graphs)
file(WRITE ${WORK}/m/mine.json [[{
  "schema": "dlc-manifest/1",
  "description": "one row op, for a library installed under its own name",
  "archs": ["sm80"],
  "ops": [{"name": "rmsnorm", "description": "Y = X / sqrt(mean(X^2) + 1e-6) * gamma", "graph": "graphs/rmsnorm.json",
           "dtypes": ["fp16"], "plans": "auto"}]
}
]])
set(libs ${N}-emu-shared ${N}-emu)
run("configure" ${CMAKE_COMMAND} -S ${ROOT} -B ${WORK}/build -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_C_COMPILER=${CC} -DDLC_MANIFEST=${WORK}/m/mine.json -DDLC_LIBRARY_NAME=${N} -DDLC_BUILD_TESTS=OFF
    -DCMAKE_INSTALL_PREFIX=${P})
set(targets dlckernels-emu-shared dlckernels-emu)
if(HAVE_CUDA)
  list(APPEND targets dlckernels-shared dlckernels)
endif()
run("build" ${CMAKE_COMMAND} --build ${WORK}/build --target ${targets})
foreach(c lib dev)
  run("install ${c}" ${CMAKE_COMMAND} --install ${WORK}/build --component ${c})
endforeach()

set(want ${LIBDIR}/lib${N}-emu.so.0 ${LIBDIR}/lib${N}-emu.so ${LIBDIR}/lib${N}-emu.a ${LIBDIR}/lib${N}-dlcemu.a
    include/${N}/dlc/dlc.h include/${N}/dlc/dlc_ops.h include/${N}/dlc/dlcemu.h ${LIBDIR}/pkgconfig/${N}-emu.pc
    ${LIBDIR}/cmake/${N}/${N}Config.cmake ${LIBDIR}/cmake/${N}/${N}ConfigVersion.cmake
    ${LIBDIR}/cmake/${N}/${N}Targets.cmake share/${N}/ops.json share/${N}/ops.md)
if(HAVE_CUDA)
  list(APPEND want ${LIBDIR}/lib${N}.so.0 ${LIBDIR}/lib${N}.a ${LIBDIR}/pkgconfig/${N}.pc)
endif()
foreach(f ${want})
  if(NOT EXISTS ${P}/${f})
    message(FATAL_ERROR "not installed: ${P}/${f}")
  endif()
endforeach()
# nothing the default library installs: the two go side by side
file(GLOB_RECURSE clash RELATIVE ${P} ${P}/*dlckernels* ${P}/include/dlc/*)
if(clash)
  message(FATAL_ERROR "installed where the default library's files go: ${clash}")
endif()
foreach(so ${N}-emu ${N})
  if(EXISTS ${P}/${LIBDIR}/lib${so}.so.0)
    run("readelf ${so}" ${READELF} -d ${P}/${LIBDIR}/lib${so}.so.0)
    if(NOT run_out MATCHES "SONAME[^\n]*\\[lib${so}\\.so\\.0\\]")
      message(FATAL_ERROR "lib${so}.so.0 has no SONAME lib${so}.so.0:\n${run_out}")
    endif()
  endif()
endforeach()

# a consumer of the library under its name: its build info names the
# manifest, and the query picks the op's kernel (the emulator backend, no
# memory touched: a query launches nothing)
file(WRITE ${WORK}/use.c [[
#include <dlc/dlc.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
int main(void) {
  dlc_launch_info q;
  dlc_status s = dlc_rmsnorm_query(DLC_F16, 4, 64, (void *)(uintptr_t)0x10000, 64, (void *)(uintptr_t)0x20000,
                                   (void *)(uintptr_t)0x30000, 64, NULL, 0, &q);
  const char *bi = dlc_build_info();
  printf("%s: %s %s; %s\n", dlc_status_string(s), q.kernel, q.arch, bi);
  return s == DLC_SUCCESS && strncmp(q.kernel, "dlc_rmsnorm_fp16", 16) == 0 && strstr(bi, "\"mine.json\"") &&
                 strstr(bi, "\"ops\":[\"rmsnorm\"]")
             ? 0
             : 1;
}
]])
set(ENV{PKG_CONFIG_PATH} ${P}/${LIBDIR}/pkgconfig)
run("pkg-config" ${PKG_CONFIG} --cflags --libs ${N}-emu)
string(STRIP "${run_out}" pc)
separate_arguments(pc UNIX_COMMAND "${pc}")
run("cc with pkg-config ${N}-emu" ${CC} -std=c11 -Wall -Werror ${WORK}/use.c ${pc} -o ${WORK}/use_pc)
set(ENV{LD_LIBRARY_PATH} ${P}/${LIBDIR})
run("the pkg-config consumer" ${WORK}/use_pc)
message(STATUS "${run_out}")

file(MAKE_DIRECTORY ${WORK}/cm)
file(WRITE ${WORK}/cm/CMakeLists.txt "cmake_minimum_required(VERSION 3.25)
project(use_${N} C)
find_package(${N} 0.1 REQUIRED COMPONENTS emu)
add_executable(use ${WORK}/use.c)
target_link_libraries(use PRIVATE ${N}::${N}-emu-shared)
")
run("configure the find_package consumer" ${CMAKE_COMMAND} -S ${WORK}/cm -B ${WORK}/cm/build -G ${GENERATOR}
    -DCMAKE_C_COMPILER=${CC} -DCMAKE_PREFIX_PATH=${P})
run("build it" ${CMAKE_COMMAND} --build ${WORK}/cm/build)
run("the find_package consumer" ${WORK}/cm/build/use)
file(REMOVE_RECURSE ${WORK})
