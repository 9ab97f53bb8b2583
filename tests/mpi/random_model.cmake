# Tests of this topic (see the list at the end of tests/CMakeLists.txt).
