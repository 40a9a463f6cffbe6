# Locates nvcc for the parts of the build that produce PTX or SASS.
# DLC_NVCC is the nvcc executable ("" when no CUDA toolkit is installed).
find_program(DLC_NVCC nvcc
  HINTS ENV CUDA_PATH ENV CUDA_HOME /usr/local/cuda
  PATH_SUFFIXES bin)
if(DLC_NVCC)
  execute_process(COMMAND ${DLC_NVCC} --version OUTPUT_VARIABLE _dlc_nvcc_ver)
  string(REGEX MATCH "release ([0-9]+\\.[0-9]+)" _m "${_dlc_nvcc_ver}")
  set(DLC_NVCC_VERSION ${CMAKE_MATCH_1})
  message(STATUS "dlc: nvcc ${DLC_NVCC_VERSION} at ${DLC_NVCC}")
  get_filename_component(_dlc_cuda_bin ${DLC_NVCC} DIRECTORY)
  get_filename_component(CUDAToolkit_ROOT ${_dlc_cuda_bin} DIRECTORY)
  find_package(CUDAToolkit REQUIRED)  # cudart for libdlckernels and the GPU example
else()
  message(STATUS "dlc: nvcc not found; PTX-based tests and the kernel library are disabled")
endif()

# A compiler launcher for the build's nvcc commands, as CMake's own
# CMAKE_CUDA_COMPILER_LAUNCHER is for CUDA targets (and from the variable of
# that name in the environment when it is not set): e.g. ccache, which
# .ci/run uses so that the builds of one run compile each kernel once
# (docs/testing.md).  The kernels' commands run in their generated
# directory with relative paths, so that the same source compiled in
# another build tree is the same command.
if(NOT DEFINED CMAKE_CUDA_COMPILER_LAUNCHER AND DEFINED ENV{CMAKE_CUDA_COMPILER_LAUNCHER})
  set(CMAKE_CUDA_COMPILER_LAUNCHER "$ENV{CMAKE_CUDA_COMPILER_LAUNCHER}" CACHE STRING
      "Launcher for the nvcc commands (e.g. ccache)")
endif()
set(DLC_NVCC_LAUNCHER ${CMAKE_CUDA_COMPILER_LAUNCHER})
if(DLC_NVCC AND DLC_NVCC_LAUNCHER)
  message(STATUS "dlc: nvcc runs through ${DLC_NVCC_LAUNCHER}")
endif()
# nvcc's --threads for the kernel libraries' objects: the archs of one op
# compile in parallel, so that the longest op does not hold the build to one
# core (0: as many threads as the machine has CPUs; 1: one arch at a time).
set(DLC_NVCC_THREADS 0 CACHE STRING "nvcc --threads for the kernel libraries' SASS (0: one a CPU, 1: serial)")
