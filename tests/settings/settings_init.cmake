# One run of test_settings_init (tests/mpi/settings_init.cpp) with one setting in the environment:
#   cmake -DMPIEXEC=... -DNP_FLAG=-n -DNP=2 [-DPREFLAGS=a;b] -DPROGRAM=... -DVAR=MPIX_ST_... -DVALUE=...
#         -DEXPECT=refused|accepted -P settings_init.cmake
# refused: the job must exit non-zero, print the library's message naming the variable, the value
# and what it accepts ("VAR=VALUE: expected ..."), and no rank may get past MPI_Init.
# accepted: every rank gets past MPI_Init and the job exits 0.
cmake_minimum_required(VERSION 3.22)
foreach(v MPIEXEC NP_FLAG NP PROGRAM VAR EXPECT)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "settings_init.cmake: -D${v}=... missing")
  endif()
endforeach()
set(ENV{MPIX_ST_BACKEND} host)
set(ENV{${VAR}} "${VALUE}")
execute_process(COMMAND ${MPIEXEC} ${NP_FLAG} ${NP} ${PREFLAGS} ${PROGRAM}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
set(all "${out}${err}")
message("${VAR}=${VALUE}: exit ${rc}\n${all}")
string(FIND "${all}" "MPI_Init returned" returned)
if(EXPECT STREQUAL "accepted")
  if(NOT rc EQUAL 0 OR returned EQUAL -1)
    message(FATAL_ERROR "${VAR}=${VALUE} should be accepted: the job must get past MPI_Init and exit 0")
  endif()
  return()
endif()
if(rc EQUAL 0)
  message(FATAL_ERROR "${VAR}=${VALUE}: the job exited 0; MPI_Init should have refused the setting")
endif()
if(NOT returned EQUAL -1)
  message(FATAL_ERROR "${VAR}=${VALUE}: a rank got past MPI_Init")
endif()
string(FIND "${all}" "mpix-st: ${VAR}=${VALUE}: expected " named)
if(named EQUAL -1)
  message(FATAL_ERROR "${VAR}=${VALUE}: no message \"mpix-st: ${VAR}=${VALUE}: expected ...\"")
endif()
