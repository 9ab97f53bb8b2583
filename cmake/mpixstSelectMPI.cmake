# Which MPI the library, tests and examples build against, and how tests launch it.
#
#   MPIX_ST_MPI=auto     (default) MPICH where Debian's mpicc.mpich exists (with both MPICH and Open MPI
#                        installed, Debian's plain `mpicc` may be Open MPI's), else whatever FindMPI finds
#   MPIX_ST_MPI=mpich    mpicc.mpich / mpicxx.mpich / mpiexec.mpich, else mpicc / mpicxx / mpiexec
#   MPIX_ST_MPI=openmpi  mpicc.openmpi / mpicxx.openmpi / mpiexec.openmpi, else mpicc / mpicxx / mpiexec
# MPI_C_COMPILER, MPI_CXX_COMPILER and MPIEXEC_EXECUTABLE given on the command line win over all of
# this. The environment variable MPIX_ST_MPI gives the default of the cache variable. The MPI found
# is checked: an MPIX_ST_MPI it does not match is an error (a build directory keeps the MPI it was
# configured with: use a fresh one to switch).
#
# Sets MPIX_ST_MPI_FLAVOR (mpich, openmpi or other) and, for Open MPI, adds the launcher flags the
# tests need to MPIEXEC_PREFLAGS: --oversubscribe (tests run up to 8 ranks on 2 cores) and, when
# configured as root (CI containers), --allow-run-as-root.
set(_mpix_mpi_default auto)
if(DEFINED ENV{MPIX_ST_MPI} AND NOT "$ENV{MPIX_ST_MPI}" STREQUAL "")
  set(_mpix_mpi_default "$ENV{MPIX_ST_MPI}")
endif()
set(MPIX_ST_MPI ${_mpix_mpi_default} CACHE STRING "MPI to build against: auto, mpich or openmpi")
set_property(CACHE MPIX_ST_MPI PROPERTY STRINGS auto mpich openmpi)
if(NOT MPIX_ST_MPI MATCHES "^(auto|mpich|openmpi)$")
  message(FATAL_ERROR "MPIX_ST_MPI=${MPIX_ST_MPI}: expected auto, mpich or openmpi")
endif()

# The compiler wrappers and launcher of one flavour: Debian's suffixed names first, then plain ones.
function(_mpix_pick_mpi flavor plain_fallback)
  set(found TRUE)
  foreach(tool IN ITEMS mpicc mpicxx mpiexec)
    set(names ${tool}.${flavor})
    if(plain_fallback)
      list(APPEND names ${tool})
    endif()
    find_program(_mpix_${tool} NAMES ${names} NO_CACHE)
    if(NOT _mpix_${tool})
      set(found FALSE)
    endif()
  endforeach()
  if(NOT found)
    set(_mpix_picked FALSE PARENT_SCOPE)
    return()
  endif()
  if(NOT DEFINED MPI_C_COMPILER)
    set(MPI_C_COMPILER ${_mpix_mpicc} CACHE FILEPATH "MPI C compiler wrapper")
  endif()
  if(NOT DEFINED MPI_CXX_COMPILER)
    set(MPI_CXX_COMPILER ${_mpix_mpicxx} CACHE FILEPATH "MPI C++ compiler wrapper")
  endif()
  if(NOT DEFINED MPIEXEC_EXECUTABLE)
    set(MPIEXEC_EXECUTABLE ${_mpix_mpiexec} CACHE FILEPATH "MPI launcher")
  endif()
  set(_mpix_picked TRUE PARENT_SCOPE)
endfunction()

if(NOT DEFINED MPI_C_COMPILER)
  if(MPIX_ST_MPI STREQUAL "auto")
    _mpix_pick_mpi(mpich FALSE)
  else()
    _mpix_pick_mpi(${MPIX_ST_MPI} TRUE)
    if(NOT _mpix_picked)
      message(FATAL_ERROR "MPIX_ST_MPI=${MPIX_ST_MPI}: no mpicc/mpicxx/mpiexec (.${MPIX_ST_MPI}) found; "
                          "install it or give MPI_C_COMPILER, MPI_CXX_COMPILER and MPIEXEC_EXECUTABLE")
    endif()
  endif()
elseif(NOT DEFINED MPIEXEC_EXECUTABLE AND MPI_C_COMPILER MATCHES "\\.(mpich|openmpi)$")
  # A suffixed wrapper names its launcher: FindMPI would take the plain `mpiexec` beside it.
  find_program(MPIEXEC_EXECUTABLE NAMES mpiexec.${CMAKE_MATCH_1})
endif()

set(MPI_DETERMINE_LIBRARY_VERSION TRUE)
find_package(MPI REQUIRED COMPONENTS C)

# The flavour: from the library's version string, else from the launcher's --version.
set(MPIX_ST_MPI_FLAVOR other)
set(_mpix_version_text "${MPI_C_LIBRARY_VERSION_STRING}")
if(_mpix_version_text STREQUAL "" AND MPIEXEC_EXECUTABLE)
  execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _mpix_version_text
                  ERROR_VARIABLE _mpix_version_text TIMEOUT 30)
endif()
if(_mpix_version_text MATCHES "Open MPI|OpenRTE")
  set(MPIX_ST_MPI_FLAVOR openmpi)
elseif(_mpix_version_text MATCHES "MPICH|HYDRA")
  set(MPIX_ST_MPI_FLAVOR mpich)
endif()
if(NOT MPIX_ST_MPI STREQUAL "auto" AND NOT MPIX_ST_MPI STREQUAL MPIX_ST_MPI_FLAVOR)
  message(FATAL_ERROR "MPIX_ST_MPI=${MPIX_ST_MPI}, but the MPI found (${MPI_C_COMPILER}) is ${MPIX_ST_MPI_FLAVOR}; "
                      "use a fresh build directory, or give MPI_C_COMPILER/MPI_CXX_COMPILER/MPIEXEC_EXECUTABLE")
endif()

if(MPIX_ST_MPI_FLAVOR STREQUAL "openmpi")
  set(_mpix_flags --oversubscribe)
  execute_process(COMMAND id -u OUTPUT_VARIABLE _mpix_uid OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(_mpix_uid STREQUAL "0")
    list(APPEND _mpix_flags --allow-run-as-root)
  endif()
  foreach(flag IN LISTS _mpix_flags)
    if(NOT flag IN_LIST MPIEXEC_PREFLAGS)
      list(APPEND MPIEXEC_PREFLAGS ${flag})  # a normal variable, shadowing FindMPI's cache entry
    endif()
  endforeach()
endif()

# Open MPI's and MPICH's C++ bindings (removed from MPI-3) stay out of every C++ translation unit:
# Debian's Open MPI would otherwise pull in MPI::Comm and friends, which then fail to link.
add_compile_definitions(OMPI_SKIP_MPICXX=1 MPICH_SKIP_MPICXX=1)

string(REGEX REPLACE "\n.*" "" _mpix_version_line "${_mpix_version_text}")
message(STATUS "mpix-st MPI: ${MPIX_ST_MPI_FLAVOR} (${_mpix_version_line}); ${MPI_C_COMPILER}; "
               "${MPIEXEC_EXECUTABLE} ${MPIEXEC_PREFLAGS}")
