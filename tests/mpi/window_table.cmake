# Tests of this topic (see the list at the end of tests/CMakeLists.txt): the live-window table
# (replay identity) and failing fast behind a watchdog report.

# The table's host side with the real entry count: more than 2^17 windows created and freed beside
# a live one, every entry live, the fault rule (src/backend/window_table.h, kernels/work_items.h).
mpix_unit_test(test_window_table unit/test_window_table.cpp)

# A captured graph of a window that stays alive replays byte for byte while 66,000 windows (more
# than the table's 65,536 entries) are created and freed beside it; a freed window's graph stays
# refused when a new window holds its entry. About 20 to 40 s with MPICH on 2 cores; bounded at
# 100 s of window creation where the MPI or a sanitizer build is slower. The short run (4,096
# windows, every one reusing the last freed entry) is the one for GPUs.
mpix_mpi_program(window_identity)
mpix_mpi_runs(window_identity NP 2 NO_GPU ARGS --max-seconds=100 TIMEOUT 300)
mpix_mpi_runs(window_identity SUFFIX short NP 2 GPU_NP 2 ARGS --cycles=4096 --max-seconds=60)

# Failing fast: 500 stream epochs queued toward a stopped peer (SIGSTOP) fail within 3 watchdog
# periods with one report, not one 2 s watchdog per waiting list (1,000 of them); an epoch enqueued
# after the report was taken waits its own watchdog. The same for 100 queued stream allreduces,
# behind the communicator's fault word.
mpix_mpi_program(fail_fast)
mpix_mpi_runs(fail_fast NP 2 GPU_NP 2 WATCHDOG_MS 2000)
mpix_mpi_runs(fail_fast SUFFIX collectives NP 2 GPU_NP 2 WATCHDOG_MS 2000 ARGS --epochs=0 --collectives=100)
