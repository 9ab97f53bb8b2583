#!/usr/bin/env bash
# Session 16 job 7 (same warm machine as job 6, its build of 563c094's code): mpix-st against the
# MPI's own collectives (host-staged) and NCCL, 8 B-256 KiB, 4 and 2 ranks.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
mkdir -p /tmp/r7
for n in 4 2; do
  timeout 100 mpiexec -n $n --bind-to none build/examples/bench/coll_bench_cuda --colls allreduce,reduce,bcast,allgather,alltoall \
    --impls mpixst,vendor,mpi --graph --auto-only --iters 100 --warmup 5 --min-bytes 8 --max-bytes 262144 --step 4 \
    --json /tmp/r7/vsmpi$n.json > /tmp/r7/vsmpi$n.txt 2>&1
done
