# Tests of this topic (see the list at the end of tests/CMakeLists.txt).
# HPE's spelling: ping-pong of every size class, rings with many iterations in flight, self,
# MPI_PROC_NULL, zero bytes, truncation, host completion (MPI_Wait/Test/Waitall, MPI_Get_count).
mpix_mpi_program(queue_basic)
mpix_mpi_runs(queue_basic NP 2 3 4)
# MPIX_ST_P2P_SLOT_KIB: a 64 KiB message travels whole in a mailbox, one byte more in chunks.
mpix_mpi_runs(queue_basic SUFFIX slot_kib NP 2 GPU_NP 2 ARGS --slot-kib=64 ENV MPIX_ST_P2P_SLOT_KIB=64)
# Messages longer than a mailbox, in chunks through it: exchanges (sends started before receives),
# long and mailbox-sized messages on one channel, shorter and longer than the receive (truncation
# with nothing written, the channel intact after it), to itself, blocking and host-completed sends,
# derived types of several pieces refused; with the default mailbox (2 lanes on the host backend,
# 16 on GPUs), with 1 KiB ones (one lane), with 64 KiB ones (8 lanes), and in one lane.
mpix_mpi_program(queue_large)
mpix_mpi_runs(queue_large NP 2 3)
mpix_mpi_runs(queue_large SUFFIX slot1 NP 2 4 GPU_NP 2 ENV MPIX_ST_P2P_SLOT_KIB=1)
mpix_mpi_runs(queue_large SUFFIX lanes8 NP 2 ENV MPIX_ST_P2P_SLOT_KIB=64)
mpix_mpi_runs(queue_large SUFFIX lanes1 NP 2 GPU_NP 2 ENV MPIX_ST_P2P_LANES=1)
mpix_mpi_runs(queue_large SUFFIX mailbox NP 2 3 GPU_NP 2 ENV MPIX_ST_P2P_DIRECT=off)
# Direct pulls of long messages (the receiver reads the send buffer): every message must take them.
mpix_mpi_program(queue_direct)
mpix_mpi_runs(queue_direct NP 2 3 ENV MPIX_ST_P2P_DIRECT=require)
# Ranks that disagree on the mailbox size or on the lanes: the first two-sided call fails on every
# rank, naming what differs (host backend: the check is backend-independent).
mpix_mpi_program(queue_agreement)
mpix_mpi_runs(queue_agreement SUFFIX lanes NP 2 NO_GPU ARGS --differ=lanes)
mpix_mpi_runs(queue_agreement SUFFIX slot NP 2 NO_GPU ARGS --differ=slot)
# MPICH's spelling on a stream communicator: halo exchange (Isend/Irecv/Waitall_enqueue, stream
# operations counted), blocking calls with stream-filled statuses and truncation reported by the next
# call, MPIX_Wait_enqueue, MPI_Wait/Waitany/Waitsome/Testall on the host.
mpix_mpi_program(queue_mpich)
mpix_mpi_runs(queue_mpich NP 2 3 4)
# MPI's order per source and tag: 11 tags (some sharing channels), 6 messages each to every rank and
# itself in one start, receives posted in another order across channels; both spellings.
mpix_mpi_program(queue_order)
mpix_mpi_runs(queue_order NP 2 3 4)
# Graph capture: a block of both spellings' calls (11 messages per rank, 7 on one channel) captured
# once, replayed as the next messages between eager blocks, byte-exact, a start and its wait one
# node (stream operations counted); a replayed ping-pong; one-way traffic beyond a channel's
# mailboxes in captured blocking calls; operations on the wrong side of a capture's edge refused.
# nomerge: every call its own node.
mpix_mpi_program(queue_graph)
mpix_mpi_runs(queue_graph NP 2 3)
mpix_mpi_runs(queue_graph SUFFIX nomerge NP 2 GPU_NP 2 ENV MPIX_ST_GRAPH_MERGE=0)
# Derived datatypes (vector, indexed, resized struct, one displaced block) on either side or both,
# several messages in flight, both spellings, byte-exact against MPI_Pack/MPI_Unpack, gaps kept;
# shorter, longer and uncommitted cases.
mpix_mpi_program(queue_datatypes)
mpix_mpi_runs(queue_datatypes NP 2 3)
# A rank that never comes to a communicator's first (collective) call: the others get an error
# within the watchdog, not a hang; so does that rank when it comes late.
mpix_mpi_program(queue_absent_rank)
mpix_mpi_runs(queue_absent_rank NP 2 3 WATCHDOG_MS 2000)
# A hundred send lists enqueued behind a stream held by a receive that its sender makes only after
# a barrier: the host never waits for the stream below the triggered-operation budget.
mpix_mpi_program(queue_lists_ahead)
mpix_mpi_runs(queue_lists_ahead NP 2)
# One-way traffic of one channel beyond its 8 mailboxes, sends and receives grouped differently on
# the two sides: the sender only waits for the receiver (lists hold one round of a channel).
mpix_mpi_program(queue_misaligned_lists)
mpix_mpi_runs(queue_misaligned_lists NP 2 4 WATCHDOG_MS 10000)
# Across virtual nodes (the messages through the inter-node transport, libfabric's sockets
# provider): every peer on another node, and nodes of two ranks (node-local and remote peers in one
# list); a captured call toward another node is refused.
if(TARGET mpixst_ofi)
  foreach(t queue_basic queue_order queue_datatypes queue_mpich)
    mpix_vnode_run(${t} 2 1 GPU)
    mpix_vnode_run(${t} 4 2)
  endforeach()
  mpix_vnode_run(queue_soak 3 1)
  mpix_vnode_run(queue_lists_ahead 2 1)
  mpix_vnode_run(queue_misaligned_lists 2 1)
  # Throttled: a budget of 64 triggered operations, far fewer than the messages in flight.
  mpix_vnode_run(queue_soak 2 1 SUFFIX throttled ENV "MPIX_ST_THROTTLE=adaptive;MPIX_ST_TRIGGERED_OPS_MAX=64")
  mpix_vnode_run(queue_graph 2 1 SUFFIX across_nodes ARGS --across-nodes)
  # Messages longer than a mailbox between nodes (a doorbell per message; 1 KiB mailboxes: chunks
  # of 512 bytes, up to 19 of them a message).
  mpix_vnode_run(queue_large 2 1 GPU ARGS --across-nodes)
  mpix_vnode_run(queue_large 4 2 ARGS --across-nodes)
  mpix_vnode_run(queue_large 2 1 GPU SUFFIX slot1 ARGS --across-nodes ENV MPIX_ST_P2P_SLOT_KIB=1)
endif()
# Soak: 10^4 messages per rank, byte-exact, both spellings, 1000 messages in flight per synchronisation.
mpix_mpi_program(queue_soak)
mpix_mpi_runs(queue_soak NP 2 4)
# Misuse of every call: error classes, messages naming the call, no message number taken.
mpix_mpi_program(queue_misuse)
mpix_mpi_runs(queue_misuse NP 2 3)
# Programs written from HPE's and MPICH's documentation, in C99, built unchanged against the header
# (only their device lines differ between the host and CUDA builds). GCC 12 takes MPI_STATUSES_IGNORE
# passed as an MPI_Status[] parameter (MPI_Waitall's, MPIX_Waitall_enqueue's) for an overflow.
foreach(doc queue_doc_hpe queue_doc_mpich)
  add_executable(test_${doc} mpi/${doc}.c)
  target_link_libraries(test_${doc} PRIVATE mpixst MPI::MPI_C)
  set_target_properties(test_${doc} PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
  target_compile_options(test_${doc} PRIVATE -Wall -Wextra $<$<C_COMPILER_ID:GNU>:-Wno-stringop-overflow>)
  if(TARGET xdev_cuda)
    add_executable(test_${doc}_cuda mpi/${doc}.c)
    target_link_libraries(test_${doc}_cuda PRIVATE mpixst MPI::MPI_C CUDA::cudart)
    set_target_properties(test_${doc}_cuda PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
    target_compile_options(test_${doc}_cuda PRIVATE -Wall -Wextra $<$<C_COMPILER_ID:GNU>:-Wno-stringop-overflow>)
    target_compile_definitions(test_${doc}_cuda PRIVATE MPIX_TEST_CUDA)
  endif()
  mpix_mpi_runs(${doc} NP 2 3)
endforeach()
# Host time and stream operations per call, beside the host backend's stream task; 8-byte ping-pong.
mpix_mpi_program(queue_overhead)
mpix_mpi_runs(queue_overhead NP 2)
# A rank killed before it sends: survivors' MPI_Wait fails cleanly (watchdog), no process and no
# /dev/shm segment left (tests/mpi/kill_peer.sh checks the run, as for mpi.kill_peer).
mpix_mpi_program(queue_kill_peer HOST_ONLY)
add_test(NAME mpi.queue_kill_peer.np3 COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/kill_peer.sh ${MPIEXEC_EXECUTABLE}
         $<TARGET_FILE:test_queue_kill_peer> 1)
string(REPLACE ";" " " queue_kill_peer_preflags "${MPIEXEC_PREFLAGS}")
set_tests_properties(mpi.queue_kill_peer.np3 PROPERTIES LABELS mpi TIMEOUT 300
  ENVIRONMENT "MPIX_ST_BACKEND=host;MPIX_ST_WATCHDOG_MS=1000;MPIX_TEST_MPIEXEC_PREFLAGS=${queue_kill_peer_preflags}")
# The same with every rank on a virtual node of its own (the messages through the network).
if(TARGET mpixst_ofi)
  add_test(NAME mpi.queue_kill_peer.vnode1.np3 COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/kill_peer.sh ${MPIEXEC_EXECUTABLE}
           $<TARGET_FILE:test_queue_kill_peer> 1)
  set_tests_properties(mpi.queue_kill_peer.vnode1.np3 PROPERTIES LABELS "mpi;internode" TIMEOUT 300 RUN_SERIAL TRUE
    ENVIRONMENT "MPIX_ST_BACKEND=host;MPIX_ST_WATCHDOG_MS=1000;MPIX_ST_VNODE_SIZE=1;${MPIX_TEST_SOCKETS_ENV};MPIX_TEST_MPIEXEC_PREFLAGS=${queue_kill_peer_preflags}")
endif()
