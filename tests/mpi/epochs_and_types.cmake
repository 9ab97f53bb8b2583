# Tests of this topic (see the list at the end of tests/CMakeLists.txt).

# Datatypes refused before any flattening work, within 1 s each: 2^30 blocks outside a 4 KiB
# window or piled on one byte, on either side of puts, gets and accumulates of both modes; types
# never committed; and a 2^22 + 1 element struct array that must still move (datatype_limits.cpp).
mpix_mpi_program(datatype_limits HOST_ONLY)
mpix_mpi_runs(datatype_limits NP 2 3)
