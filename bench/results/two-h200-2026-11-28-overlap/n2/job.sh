# Session 18 job 2 (2 x H200, the build of job 1 kept): the whole gpu label.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
cmake --build build -j32 && (cd build && timeout 560 ctest -L gpu --output-on-failure --timeout 90)
