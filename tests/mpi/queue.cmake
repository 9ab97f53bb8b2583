# Tests of this topic (see the list at the end of tests/CMakeLists.txt).
# HPE's spelling: ping-pong of every size class, rings with many iterations in flight, self,
# MPI_PROC_NULL, zero bytes, truncation, host completion (MPI_Wait/Test/Waitall, MPI_Get_count).
mpix_mpi_program(queue_basic)
mpix_mpi_runs(queue_basic NP 2 3 4)
# MPICH's spelling on a stream communicator: halo exchange (Isend/Irecv/Waitall_enqueue, stream
# operations counted), blocking calls with stream-filled statuses and truncation reported by the next
# call, MPIX_Wait_enqueue, MPI_Wait/Waitany/Waitsome/Testall on the host.
mpix_mpi_program(queue_mpich)
mpix_mpi_runs(queue_mpich NP 2 3 4)
