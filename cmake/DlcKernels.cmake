# dlc_add_kernel_library(<name> MANIFEST <file> [ARCHS_FROM_MANIFEST] [EMU_ONLY] [SHARED])
#
# Runs dlcgen on a manifest at build time into ${CMAKE_BINARY_DIR}/<name>-gen
# and builds from its output:
#   <name>      (unless EMU_ONLY) the kernels as SASS for every manifest arch
#               (-gencode arch=compute_XX,code=sm_XX: no PTX is embedded), or
#               for those of them DLC_SASS_ARCHS lists when it is set, the
#               dispatch and the CUDA backend;
#   <name>-emu  the same entry points on the kernels' sm_80 PTX (and, when the
#               manifest lists sm90a, their sm_90a PTX for DLC_EMU_ARCH=sm90a),
#               run by the PTX emulator.
#   <name>-null the same entry points on a backend that records the launch
#               instead of making it (libkernels/backend_null.c), for tests
#               and bench/dispatch_cost; not installed.
# With SHARED also <name>-shared and <name>-emu-shared: the same libraries as
# lib<name>.so.MAJOR and lib<name>-emu.so.MAJOR (the emulator linked in),
# exporting only the public symbols (cmake/dlckernels{,-emu}.map).  Every
# object is position-independent, so the kernels are compiled once for both.
# Sets <name>_PTXAS_LOGS (the ptxas -v report of each op's .cu), <name>_NVCC_FLAGS
# (the kernel objects' nvcc flags, without the include paths), <name>_GEN
# (the dlcgen output directory), <name>_OPS, <name>_ARCHS (the manifest's) and
# <name>_SASS_ARCHS (those with SASS) in the parent scope.
include_guard(GLOBAL)

function(dlc_add_kernel_library name)
  cmake_parse_arguments(K "EMU_ONLY;SHARED" "MANIFEST" "" ${ARGN})
  set(gen ${CMAKE_BINARY_DIR}/${name}-gen)
  set(bin ${CMAKE_CURRENT_BINARY_DIR}/${name}-build)
  # the ops and archs of the manifest name the generated files (so an edit
  # of the manifest configures again)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${K_MANIFEST})
  file(READ ${K_MANIFEST} m)
  string(JSON nops ERROR_VARIABLE e1 LENGTH "${m}" ops)
  string(JSON narchs ERROR_VARIABLE e2 LENGTH "${m}" archs)
  if(e1 OR e2 OR nops EQUAL 0 OR narchs EQUAL 0)
    message(FATAL_ERROR "dlc: ${K_MANIFEST} has no ops or archs (dlcgen --manifest on it says why)")
  endif()
  math(EXPR last "${nops} - 1")
  set(ops)
  foreach(i RANGE ${last})
    string(JSON op GET "${m}" ops ${i} name)
    list(APPEND ops ${op})
  endforeach()
  math(EXPR last "${narchs} - 1")
  set(gencode)
  set(archs)       # the manifest's: the dispatch's rows and the emulator's PTX
  set(sass_archs)  # those the library holds SASS for
  set(skipped)
  foreach(i RANGE ${last})
    string(JSON arch GET "${m}" archs ${i})
    list(APPEND archs ${arch})
    # DLC_SASS_ARCHS (a developer's build, e.g. the sanitizer preset): SASS
    # for those archs alone
    if(DLC_SASS_ARCHS AND NOT arch IN_LIST DLC_SASS_ARCHS)
      list(APPEND skipped ${arch})
      continue()
    endif()
    string(REPLACE "sm" "" num ${arch})
    list(APPEND gencode -gencode arch=compute_${num},code=sm_${num})
    list(APPEND sass_archs ${arch})
  endforeach()
  if(NOT sass_archs)
    message(FATAL_ERROR "dlc: DLC_SASS_ARCHS (${DLC_SASS_ARCHS}) names none of ${K_MANIFEST}'s archs (${archs})")
  endif()
  if(skipped AND NOT K_EMU_ONLY)
    message(STATUS "dlc: ${name} holds no SASS for ${skipped} (DLC_SASS_ARCHS=${DLC_SASS_ARCHS}): "
                   "its calls on those GPUs fail with DLC_ERROR_LAUNCH_FAILED")
  endif()

  set(gen_files ${gen}/src/dlc_dispatch.c ${gen}/src/dlc_params.h ${gen}/src/dlc_ops.def ${gen}/src/dlc_entries.c
                ${gen}/include/dlc/dlc_ops.h ${gen}/docs/ops.md ${gen}/ops.json)
  foreach(op ${ops})
    list(APPEND gen_files ${gen}/kernels/${op}.cu)
  endforeach()
  get_filename_component(mdir ${K_MANIFEST} DIRECTORY)
  file(GLOB_RECURSE graphs CONFIGURE_DEPENDS ${mdir}/*.json ${mdir}/*.dlc)
  # dlcgen rewrites only changed files; as byproducts Ninja sees that
  # (restat), so editing one op recompiles that op's kernels alone
  add_custom_command(
    OUTPUT ${gen}/dlcgen.stamp
    BYPRODUCTS ${gen_files}
    COMMAND dlcgen --manifest ${K_MANIFEST} --out ${gen} --dump=all
    COMMAND ${CMAKE_COMMAND} -E touch ${gen}/dlcgen.stamp
    DEPENDS dlcgen ${K_MANIFEST} ${graphs}
    COMMENT "dlcgen: compiling ${K_MANIFEST}"
    VERBATIM)
  add_custom_target(${name}_generate DEPENDS ${gen}/dlcgen.stamp)

  file(GLOB templates CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/templates/*.cuh)
  # Every nvcc command of a kernel runs in ${gen} and names its inputs
  # relative to it (kernels/<op>.cu, src/, the templates), so that the same
  # generated source in another build tree (the sanitizer build, the Debian
  # package's, another library of the same manifest) is the same command,
  # which a compiler launcher (CMAKE_CUDA_COMPILER_LAUNCHER) then runs once.
  # The inputs are the DEPENDS below: the kernel includes only the templates
  # and src/dlc_params.h (besides the toolkit's headers), so these commands
  # need no depfile.
  file(RELATIVE_PATH templates_rel ${gen} ${PROJECT_SOURCE_DIR}/templates)
  set(inc -I${templates_rel} -Isrc)
  # ccache caches only commands with -c; nvcc then compiles to the last
  # phase option, -ptx, and writes the PTX that -ptx alone writes
  set(ptx_phase -ptx)
  if(DLC_NVCC_LAUNCHER)
    set(ptx_phase -c -ptx)
  endif()
  set(sass_flags -std=c++17 -O3 -Xcompiler=-fPIC -Xptxas=-v --threads ${DLC_NVCC_THREADS} ${gencode})
  set(objs)
  set(ptx_c)
  set(logs)
  foreach(op ${ops})
    set(cu ${gen}/kernels/${op}.cu)
    if(NOT K_EMU_ONLY)
      set(obj ${bin}/${op}.o)
      set(log ${bin}/${op}.ptxas.log)
      add_custom_command(
        OUTPUT ${obj} ${log}
        COMMAND ${CMAKE_COMMAND} -E make_directory ${bin}
        COMMAND ${CMAKE_COMMAND} -DNVCC=${DLC_NVCC} "-DLAUNCHER=${DLC_NVCC_LAUNCHER}" -DDIR=${gen}
                -DSRC=kernels/${op}.cu -DOUT=${obj} -DLOG=${log} -DOBJCOPY=${CMAKE_OBJCOPY}
                "-DFLAGS=${sass_flags};${inc}"
                -P ${PROJECT_SOURCE_DIR}/cmake/nvcc_log.cmake
        DEPENDS ${cu} ${gen}/src/dlc_params.h ${templates} ${name}_generate
        COMMENT "nvcc ${op}.cu for ${sass_archs} (SASS only)"
        VERBATIM)
      list(APPEND objs ${obj})
      list(APPEND logs ${log})
    endif()
    set(ptx ${bin}/ptx/${op}.sm_80.ptx)
    add_custom_command(
      OUTPUT ${ptx}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${bin}/ptx
      COMMAND ${DLC_NVCC_LAUNCHER} ${DLC_NVCC} ${ptx_phase} -arch=sm_80 -std=c++17 -O3 ${inc} -o ${ptx} kernels/${op}.cu
      WORKING_DIRECTORY ${gen}
      DEPENDS ${cu} ${gen}/src/dlc_params.h ${templates} ${name}_generate
      COMMENT "nvcc -ptx -arch=sm_80 ${op}.cu (for the emulator)"
      VERBATIM)
    set(c ${bin}/ptx/${op}_ptx.c)
    add_custom_command(
      OUTPUT ${c}
      COMMAND ${CMAKE_COMMAND} -DIN=${ptx} -DOUT=${c} -DSYMBOL=dlc__ptx_${op} -P ${PROJECT_SOURCE_DIR}/cmake/embed_text.cmake
      DEPENDS ${ptx} ${PROJECT_SOURCE_DIR}/cmake/embed_text.cmake
      COMMENT "embedding ${op}.sm_80.ptx"
      VERBATIM)
    list(APPEND ptx_c ${c})
    # the rows built for sm90a run their own sm_90a PTX under DLC_EMU_ARCH=sm90a
    # (the sm90a skeleton's kernels exist there alone); without sm90a in the
    # manifest no row has the bit, and the symbol is empty
    set(c90 ${bin}/ptx/${op}_ptx90.c)
    if("sm90a" IN_LIST archs)
      set(ptx90 ${bin}/ptx/${op}.sm_90a.ptx)
      add_custom_command(
        OUTPUT ${ptx90}
        COMMAND ${CMAKE_COMMAND} -E make_directory ${bin}/ptx
        COMMAND ${DLC_NVCC_LAUNCHER} ${DLC_NVCC} ${ptx_phase} -arch=sm_90a -std=c++17 -O3 ${inc} -o ${ptx90} kernels/${op}.cu
        WORKING_DIRECTORY ${gen}
        DEPENDS ${cu} ${gen}/src/dlc_params.h ${templates} ${name}_generate
        COMMENT "nvcc -ptx -arch=sm_90a ${op}.cu (for the emulator)"
        VERBATIM)
      add_custom_command(
        OUTPUT ${c90}
        COMMAND ${CMAKE_COMMAND} -DIN=${ptx90} -DOUT=${c90} -DSYMBOL=dlc__ptx90_${op} -P ${PROJECT_SOURCE_DIR}/cmake/embed_text.cmake
        DEPENDS ${ptx90} ${PROJECT_SOURCE_DIR}/cmake/embed_text.cmake
        COMMENT "embedding ${op}.sm_90a.ptx"
        VERBATIM)
    else()
      file(WRITE ${c90}.in "/* no sm90a in the manifest: no sm_90a PTX */\nconst char dlc__ptx90_${op}[] = \"\";\n")
      configure_file(${c90}.in ${c90} COPYONLY)
    endif()
    list(APPEND ptx_c ${c90})
  endforeach()
  set_source_files_properties(${gen_files} PROPERTIES GENERATED TRUE)

  # dlc_build_info()'s "sass_archs" of the CUDA libraries: those their
  # kernels were compiled for (fewer than the manifest's with DLC_SASS_ARCHS)
  set(sass_json "")
  set(sep "")
  foreach(a ${sass_archs})
    string(APPEND sass_json "${sep}\\\"${a}\\\"")
    set(sep ",")
  endforeach()
  set(sass_c ${bin}/sass_archs.c)
  file(WRITE ${sass_c}.in "/* the archs ${name} holds SASS for (cmake/DlcKernels.cmake) */\nconst char dlc__sass_archs[] = \"[${sass_json}]\";\n")
  configure_file(${sass_c}.in ${sass_c} COPYONLY)

  set(rt ${PROJECT_SOURCE_DIR}/libkernels)
  set(libs ${name}-emu)
  add_library(${name}-emu STATIC ${rt}/runtime.c ${rt}/plan.c ${rt}/plan_direct.c ${rt}/backend_emu.c ${gen}/src/dlc_dispatch.c ${ptx_c})
  target_link_libraries(${name}-emu PUBLIC dlcemu)
  if(NOT K_EMU_ONLY)
    set_source_files_properties(${objs} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
    add_library(${name} STATIC ${rt}/runtime.c ${rt}/plan.c ${rt}/backend_cuda.c ${gen}/src/dlc_dispatch.c ${sass_c} ${objs})
    target_link_libraries(${name} PUBLIC CUDA::cudart_static stdc++)
    list(APPEND libs ${name})
  endif()
  if(K_SHARED)
    add_library(${name}-emu-shared SHARED ${rt}/runtime.c ${rt}/plan.c ${rt}/plan_direct.c ${rt}/backend_emu.c ${gen}/src/dlc_dispatch.c ${ptx_c})
    # the whole emulator, so that its API (dlcemu_mem_alloc, ...) is there too
    target_link_libraries(${name}-emu-shared PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,dlcemu>" Threads::Threads m)
    set(maps ${name}-emu-shared:dlckernels-emu.map)
    list(APPEND libs ${name}-emu-shared)
    if(NOT K_EMU_ONLY)
      add_library(${name}-shared SHARED ${rt}/runtime.c ${rt}/plan.c ${rt}/backend_cuda.c ${gen}/src/dlc_dispatch.c ${sass_c} ${objs})
      target_link_libraries(${name}-shared PRIVATE CUDA::cudart_static stdc++)
      list(APPEND maps ${name}-shared:dlckernels.map)
      list(APPEND libs ${name}-shared)
    endif()
    foreach(m ${maps})
      string(REPLACE ":" ";" m ${m})
      list(GET m 0 lib)
      list(GET m 1 map)
      string(REGEX REPLACE "-shared$" "" out ${lib})
      set_target_properties(${lib} PROPERTIES OUTPUT_NAME ${out} EXPORT_NAME ${out}-shared
        VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
        LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/${map})
      target_link_options(${lib} PRIVATE -Wl,--version-script=${PROJECT_SOURCE_DIR}/cmake/${map})
      if(NOT DLC_SANITIZE)  # (the sanitizer runtimes come with the executable)
        target_link_options(${lib} PRIVATE -Wl,-z,defs)
      endif()
    endforeach()
  endif()
  # the entry points on a backend that records instead of launching (tests
  # and bench/dispatch_cost; not installed)
  add_library(${name}-null STATIC EXCLUDE_FROM_ALL ${rt}/runtime.c ${rt}/plan.c ${rt}/plan_direct.c ${rt}/backend_null.c ${gen}/src/dlc_dispatch.c)
  target_include_directories(${name}-null PUBLIC ${rt})
  foreach(lib ${libs} ${name}-null)
    add_dependencies(${lib} ${name}_generate)
    target_include_directories(${lib}
      PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<BUILD_INTERFACE:${gen}/include> $<INSTALL_INTERFACE:include>
      PRIVATE ${rt} ${gen}/src)
    target_compile_options(${lib} PRIVATE ${DLC_WARNINGS})
  endforeach()
  set(${name}_PTXAS_LOGS ${logs} PARENT_SCOPE)
  set(${name}_NVCC_FLAGS ${sass_flags} PARENT_SCOPE)
  set(${name}_GEN ${gen} PARENT_SCOPE)
  set(${name}_OPS ${ops} PARENT_SCOPE)
  set(${name}_ARCHS ${archs} PARENT_SCOPE)
  set(${name}_SASS_ARCHS ${sass_archs} PARENT_SCOPE)
endfunction()
