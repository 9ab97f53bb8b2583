# Tests of this topic (see the list at the end of tests/CMakeLists.txt): the live-window table
# (replay identity) and failing fast behind a watchdog report.

# The table's host side with the real entry count: more than 2^17 windows created and freed beside
# a live one, every entry live, the fault rule (src/backend/window_table.h, kernels/work_items.h).
mpix_unit_test(test_window_table unit/test_window_table.cpp)

