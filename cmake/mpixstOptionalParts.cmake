# Which optional parts this build has, from the options (CMakeLists.txt) and what is installed:
#   CUDA plugin   a CUDA compiler (the language is enabled here, at the top level, for every target)
#   HIP plugin    hipcc and libamdhip64; MPIX_ST_HIP_ARCHS defaults to gfx90a, plus gfx942 where
#                 hipcc knows it
#   libfabric     pkg-config's libfabric (PkgConfig::libfabric): the transport across nodes
#   hwloc         pkg-config's hwloc (PkgConfig::hwloc), with the transport only: where each NIC
#                 sits; mpix_st_nic_locality names the source of the NIC places either way
# Sets MPIX_ST_WITH_CUDA, MPIX_ST_WITH_HIP, libfabric_FOUND and hwloc_FOUND.

# ---- CUDA ----
set(MPIX_ST_WITH_CUDA FALSE)
if(NOT MPIX_ST_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 80 90)
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(MPIX_ST_WITH_CUDA TRUE)
  elseif(MPIX_ST_CUDA STREQUAL "ON")
    message(FATAL_ERROR "MPIX_ST_CUDA=ON but no CUDA compiler was found")
  endif()
endif()

# ---- HIP: kernels through hipcc, the backend through the C++ compiler ----
set(MPIX_ST_WITH_HIP FALSE)
if(NOT MPIX_ST_HIP STREQUAL "OFF")
  find_program(HIPCC hipcc)
  find_library(AMDHIP64 amdhip64)
  if(HIPCC AND AMDHIP64)
    if(NOT MPIX_ST_HIP_ARCHS)
      set(MPIX_ST_HIP_ARCHS gfx90a)
      file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/hip_probe.hip "__global__ void k() {}\n")
      execute_process(COMMAND ${HIPCC} -x hip --offload-arch=gfx942 -c ${CMAKE_CURRENT_BINARY_DIR}/hip_probe.hip
                              -o ${CMAKE_CURRENT_BINARY_DIR}/hip_probe.o
                      RESULT_VARIABLE gfx942_rc OUTPUT_QUIET ERROR_QUIET)
      if(gfx942_rc EQUAL 0)
        list(APPEND MPIX_ST_HIP_ARCHS gfx942)
      endif()
    endif()
    set(MPIX_ST_WITH_HIP TRUE)
  elseif(MPIX_ST_HIP STREQUAL "ON")
    message(FATAL_ERROR "MPIX_ST_HIP=ON but hipcc or libamdhip64 was not found")
  endif()
endif()

# ---- libfabric ----
if(NOT MPIX_ST_OFI STREQUAL "OFF")
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(libfabric QUIET IMPORTED_TARGET libfabric)
  endif()
  if(libfabric_FOUND)
    message(STATUS "mpix-st libfabric transport: libfabric ${libfabric_VERSION}")
  elseif(MPIX_ST_OFI STREQUAL "ON")
    message(FATAL_ERROR "MPIX_ST_OFI=ON but pkg-config found no libfabric")
  endif()
endif()

# ---- hwloc ----
set(mpix_st_nic_locality src/topo/nic_locality_absent.cpp)
if(libfabric_FOUND AND NOT MPIX_ST_HWLOC STREQUAL "OFF")
  pkg_check_modules(hwloc QUIET IMPORTED_TARGET hwloc)
  if(hwloc_FOUND)
    set(mpix_st_nic_locality src/topo/nic_locality.cpp)
    message(STATUS "mpix-st NIC placement: hwloc ${hwloc_VERSION}")
  elseif(MPIX_ST_HWLOC STREQUAL "ON")
    message(FATAL_ERROR "MPIX_ST_HWLOC=ON but pkg-config found no hwloc")
  endif()
endif()
