# Which MPI implementation FindMPI found, from its mpi.h: mpich (MPICH and its derivatives: Cray
# MPICH, Intel MPI, MVAPICH), openmpi, or unknown. Used when building (recorded in mpixstConfig.cmake
# and mpixst.pc) and by mpixstConfig.cmake (the consumer's MPI must be the same kind).
function(mpixst_mpi_flavor out)
  set(flavor unknown)
  foreach(dir IN LISTS MPI_C_HEADER_DIR MPI_C_INCLUDE_DIRS MPI_C_COMPILER_INCLUDE_DIRS)
    if(dir AND EXISTS "${dir}/mpi.h")
      file(STRINGS "${dir}/mpi.h" defs REGEX "^#[ \t]*define[ \t]+(OMPI_MAJOR_VERSION|MPICH_VERSION)[ \t]")
      if(defs MATCHES "OMPI_MAJOR_VERSION")
        set(flavor openmpi)
      elseif(defs MATCHES "MPICH_VERSION")
        set(flavor mpich)
      endif()
      break()
    endif()
  endforeach()
  set(${out} ${flavor} PARENT_SCOPE)
endfunction()
