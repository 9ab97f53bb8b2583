# Tests of this topic (see the list at the end of tests/CMakeLists.txt).

# Handle lifetimes (host backend): host streams, host graphs and MPIX_Stream objects destroyed
# twice, used after destroy, destroyed with a capture open or work queued, destroyed or synchronised
# from their own task: an error class through MPI_COMM_SELF's handler and a message naming the call,
# never a crash or a hang; handle values are never handed out again. The short watchdog ends the
# queued epoch whose peer never comes.
mpix_mpi_program(handle_lifetimes HOST_ONLY)
mpix_mpi_runs(handle_lifetimes NP 2 3 WATCHDOG_MS 500 TIMEOUT 60)
