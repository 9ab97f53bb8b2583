# ctest install.consumer: installs the build tree into a fresh prefix, builds tests/install/consumer
# against it as an application would (CMake find_package(mpixst), and a Makefile with pkg-config
# and plain cc), and runs both with mpiexec on 2 ranks (host backend: stream-triggered epochs
# between the ranks, data checked). Works with the MPI the build was configured with.
#   cmake -DBUILD_DIR= -DWORK_DIR= -DCONSUMER_DIR= -DLIBDIR= -DINCLUDEDIR= -DMANDIR= -DMPI_FLAVOR=
#         -DMPIEXEC= -DNP_FLAG= [-DPREFLAGS=a|b] [-DPOSTFLAGS=a|b] -DC_COMPILER= -DGENERATOR=
#         -DPKG_CONFIG= -DMAKE= [-DOTHER_MPICC=<mpicc of another MPI kind>] -P install_test.cmake
cmake_minimum_required(VERSION 3.22)
foreach(var BUILD_DIR WORK_DIR CONSUMER_DIR LIBDIR INCLUDEDIR MANDIR MPIEXEC NP_FLAG C_COMPILER GENERATOR)
  if(NOT ${var})
    message(FATAL_ERROR "install_test.cmake: ${var} is not set")
  endif()
endforeach()
string(REPLACE "|" ";" PREFLAGS "${PREFLAGS}")
string(REPLACE "|" ";" POSTFLAGS "${POSTFLAGS}")

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${ARGN}\n${out}\n${err}")
  endif()
  set(run_output "${out}${err}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}/make")
set(prefix "${WORK_DIR}/prefix")

# ---- the install tree ----
run("cmake --install" ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")
foreach(f ${LIBDIR}/libmpixst.so ${INCLUDEDIR}/mpix/mpix_st.h ${LIBDIR}/pkgconfig/mpixst.pc
          ${LIBDIR}/cmake/mpixst/mpixstConfig.cmake ${LIBDIR}/cmake/mpixst/mpixstConfigVersion.cmake
          ${LIBDIR}/cmake/mpixst/mpixstTargets.cmake ${LIBDIR}/cmake/mpixst/mpixstMPIFlavor.cmake
          ${MANDIR}/man3/MPIX_Win_post_stream.3 ${MANDIR}/man3/MPIX_Host_stream_create.3 ${MANDIR}/man7/mpixst.7)
  if(IS_ABSOLUTE "${f}")
    message(FATAL_ERROR "install_test.cmake: absolute install directories are not supported here (${f})")
  endif()
  if(NOT EXISTS "${prefix}/${f}")
    message(FATAL_ERROR "the install tree lacks ${f}")
  endif()
endforeach()
message(STATUS "installed into ${prefix}")

# ---- consumer 1: CMake find_package(mpixst), no MPI hints: the package names its own MPI ----
run("configuring the CMake consumer" ${CMAKE_COMMAND} -S "${CONSUMER_DIR}" -B "${WORK_DIR}/cmake" -G "${GENERATOR}"
    "-DCMAKE_PREFIX_PATH=${prefix}" "-DCMAKE_C_COMPILER=${C_COMPILER}" -DCMAKE_BUILD_TYPE=Release)
if(NOT run_output MATCHES "built with ${MPI_FLAVOR} ")
  message(FATAL_ERROR "find_package(mpixst) should report the build's MPI (${MPI_FLAVOR}):\n${run_output}")
endif()
string(REGEX MATCH "consumer: [^\n]*" line "${run_output}")
message(STATUS "${line}")
run("building the CMake consumer" ${CMAKE_COMMAND} --build "${WORK_DIR}/cmake")

# An MPI of the other kind, chosen by the project itself, is refused at find_package.
if(OTHER_MPICC)
  execute_process(COMMAND ${CMAKE_COMMAND} -S "${CONSUMER_DIR}" -B "${WORK_DIR}/cmake-other" -G "${GENERATOR}"
                          "-DCMAKE_PREFIX_PATH=${prefix}" "-DCMAKE_C_COMPILER=${C_COMPILER}" "-DMPI_C_COMPILER=${OTHER_MPICC}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 0 OR NOT "${out}${err}" MATCHES "mpixst was built with ${MPI_FLAVOR}")
    message(FATAL_ERROR "find_package(mpixst) accepted the MPI of ${OTHER_MPICC} (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "find_package(mpixst) refuses ${OTHER_MPICC}, as it should")
endif()

# ---- consumer 2: Makefile with pkg-config and plain cc ----
if(NOT PKG_CONFIG)
  message(FATAL_ERROR "pkg-config was not found at configure time")
endif()
set(ENV{PKG_CONFIG_PATH} "${prefix}/${LIBDIR}/pkgconfig:$ENV{PKG_CONFIG_PATH}")
run("pkg-config --libs mpixst" ${PKG_CONFIG} --libs mpixst)
string(STRIP "${run_output}" libs)
message(STATUS "pkg-config --libs mpixst: ${libs}")
string(FIND "${libs}" "-lmpixst" at)
if(at LESS 0)
  message(FATAL_ERROR "pkg-config --libs mpixst lacks -lmpixst: ${libs}")
endif()
string(SUBSTRING "${libs}" 0 ${at} before)
if(before MATCHES "(-l|/lib)(mpi|mpich|mpi_[a-z]*)( |\\.|$)")
  message(FATAL_ERROR "pkg-config --libs mpixst puts the MPI library before -lmpixst (its PMPI interposition "
                      "then loses): ${libs}")
endif()
string(SUBSTRING "${libs}" ${at} -1 after)
if(NOT after MATCHES "(-l|/lib)(mpi|mpich|mpi_[a-z]*)( |\\.|$)" AND NOT MPI_FLAVOR STREQUAL "unknown")
  message(FATAL_ERROR "pkg-config --libs mpixst names no MPI library: ${libs}")
endif()
run("pkg-config --variable=mpi_flavor mpixst" ${PKG_CONFIG} --variable=mpi_flavor mpixst)
string(STRIP "${run_output}" pc_flavor)
if(NOT pc_flavor STREQUAL MPI_FLAVOR)
  message(FATAL_ERROR "mpixst.pc records MPI '${pc_flavor}', the build used '${MPI_FLAVOR}'")
endif()
if(NOT MAKE)
  message(FATAL_ERROR "make was not found at configure time")
endif()
run("building the Makefile consumer" ${MAKE} -f "${CONSUMER_DIR}/Makefile" "CC=${C_COMPILER}" "PKG_CONFIG=${PKG_CONFIG}"
    WORKING_DIRECTORY "${WORK_DIR}/make")

# ---- run both on 2 ranks ----
set(ENV{MPIX_ST_BACKEND} host)
if(MPI_FLAVOR STREQUAL "openmpi")
  # Open MPI refuses root and more ranks than cores unless told; these only affect Open MPI.
  set(ENV{OMPI_ALLOW_RUN_AS_ROOT} 1)
  set(ENV{OMPI_ALLOW_RUN_AS_ROOT_CONFIRM} 1)
  set(ENV{OMPI_MCA_rmaps_base_oversubscribe} 1)
endif()
foreach(exe cmake/consumer make/consumer)
  execute_process(COMMAND ${MPIEXEC} ${NP_FLAG} 2 ${PREFLAGS} "${WORK_DIR}/${exe}" ${POSTFLAGS}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "rank 0 OK" OR NOT out MATCHES "rank 1 OK")
    message(FATAL_ERROR "${exe} on 2 ranks failed (${rc}):\n${out}\n${err}")
  endif()
  string(REGEX MATCH "consumer: rank 0 [^\n]*" line "${out}")
  message(STATUS "${exe}: ${line}")
endforeach()
message(STATUS "install.consumer: both consumers built against ${prefix} and ran")
