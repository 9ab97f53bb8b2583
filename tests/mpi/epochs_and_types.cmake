# Tests of this topic (see the list at the end of tests/CMakeLists.txt).

# Epochs of different kinds on one window: MPI_Win_fence, MPI_Win_lock and MPI_Win_lock_all after
# stream epochs still queued on their stream (they wait for them: data checked byte for byte), and
# the refusals inside open active-target and lock epochs, each naming the call and what to use
# (epoch_mixing.cpp). --watchdog: a fence whose window's stream work is held back past the watchdog
# reports instead of hanging.
mpix_mpi_program(epoch_mixing HOST_ONLY)
mpix_mpi_runs(epoch_mixing NP 2 3 4)
mpix_mpi_runs(epoch_mixing SUFFIX watchdog NP 2 3 ARGS --watchdog WATCHDOG_MS 1000 TIMEOUT 60)
# Datatypes refused before any flattening work, within 1 s each: 2^30 blocks outside a 4 KiB
# window or piled on one byte, on either side of puts, gets and accumulates of both modes; types
# never committed; and a 2^22 + 1 element struct array that must still move (datatype_limits.cpp).
mpix_mpi_program(datatype_limits HOST_ONLY)
mpix_mpi_runs(datatype_limits NP 2 3)
