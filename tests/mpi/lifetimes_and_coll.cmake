# Tests of this topic (see the list at the end of tests/CMakeLists.txt).

# Handle lifetimes (host backend): host streams, host graphs and MPIX_Stream objects destroyed
# twice, used after destroy, destroyed with a capture open or work queued, destroyed or synchronised
# from their own task: an error class through MPI_COMM_SELF's handler and a message naming the call,
# never a crash or a hang; handle values are never handed out again. The short watchdog ends the
# queued epoch whose peer never comes.
mpix_mpi_program(handle_lifetimes HOST_ONLY)
mpix_mpi_runs(handle_lifetimes NP 2 3 WATCHDOG_MS 500 TIMEOUT 60)

# A rank killed inside set-up (setup_death.sh): rank 0 SIGKILLs itself inside MPI_Win_allocate and
# inside the first stream collective on a communicator while the other ranks wait for a late rank
# in the same call; after mpiexec has ended the job, no /dev/shm/mpixst.<pid>.* segment of any rank
# is left (segments are anonymous; named ones only where /proc/<pid>/fd cannot be used).
mpix_mpi_program(setup_death HOST_ONLY)
string(REPLACE ";" " " setup_death_preflags "${MPIEXEC_PREFLAGS}")
foreach(np 2 3)
  add_test(NAME mpi.setup_death.np${np} COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/setup_death.sh ${MPIEXEC_EXECUTABLE}
           $<TARGET_FILE:test_setup_death> ${np} 2)
  set_tests_properties(mpi.setup_death.np${np} PROPERTIES LABELS mpi TIMEOUT 300
    ENVIRONMENT "MPIX_ST_BACKEND=host;MPIX_ST_WATCHDOG_MS=5000;MPIX_TEST_MPIEXEC_PREFLAGS=${setup_death_preflags}")
endforeach()

# Stream collectives after a call refused on one rank only (a NULL buffer, a bad root, a negative
# count, a destroyed stream, in a communicator's first call or a later one) or on every rank, and
# counts that differ between ranks: the communicator keeps working after refusals on every rank;
# otherwise every later call on every rank is refused (MPI_ERR_OTHER, naming the refused call and
# the rank), never success with wrong values. The short watchdog ends the calls the other ranks had
# enqueued. `--measure` (not run here) prints the host cost of a call.
mpix_mpi_program(coll_after_error HOST_ONLY)
mpix_mpi_runs(coll_after_error NP 2 3 4 WATCHDOG_MS 1500 TIMEOUT 120 ENV MPIX_ST_COLL_SCRATCH_KIB=16)
# Across virtual nodes (every peer remote; two ranks a node): refused on every rank, and the
# communicator keeps working.
if(TARGET mpixst_ofi)
  mpix_vnode_run(coll_after_error 2 1 ENV "MPIX_ST_COLL_SCRATCH_KIB=16")
  mpix_vnode_run(coll_after_error 4 2 ENV "MPIX_ST_COLL_SCRATCH_KIB=16")
endif()

# Error codes: distinct messages of one class get distinct codes (a ring of 64 per class), a kept
# code reads its own message after later errors, the same message gets the same code.
mpix_mpi_program(error_codes HOST_ONLY)
mpix_mpi_runs(error_codes NP 2)
