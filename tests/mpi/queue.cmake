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
# MPI's order per source and tag: 11 tags (some sharing channels), 6 messages each to every rank and
# itself in one start, receives posted in another order across channels; both spellings.
mpix_mpi_program(queue_order)
mpix_mpi_runs(queue_order NP 2 3 4)
# Soak: 10^4 messages per rank, byte-exact, both spellings, 1000 messages in flight per synchronisation.
mpix_mpi_program(queue_soak)
mpix_mpi_runs(queue_soak NP 2 4)
# Misuse of every call: error classes, messages naming the call, no message number taken.
mpix_mpi_program(queue_misuse)
mpix_mpi_runs(queue_misuse NP 2 3)
