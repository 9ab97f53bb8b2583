# Tests of this topic (see the list at the end of tests/CMakeLists.txt).
# HPE's spelling: ping-pong of every size class, rings with many iterations in flight, self,
# MPI_PROC_NULL, zero bytes, truncation, host completion (MPI_Wait/Test/Waitall, MPI_Get_count).
mpix_mpi_program(queue_basic)
mpix_mpi_runs(queue_basic NP 2 3 4)
