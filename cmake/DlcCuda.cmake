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
