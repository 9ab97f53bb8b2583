#!/usr/bin/env bash
# Host time per two-sided call on 2 H200s, one rank per GPU, the machine's Open MPI 4.1.6:
# p2p_bench --host-time (rank 0 the sending calls, rank 1 the receiving ones, 8-byte messages,
# beside one raw kernel launch of one block and NCCL's send and receive), two rounds. Run from the
# repository's root.
set -euo pipefail
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_MCA_osc=sm,pt2pt
out=${OUT_DIR:-bench/results/h200x2-host-time}
mkdir -p "$out"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF \
  -DMPIX_ST_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90
cmake --build build-gpu --target p2p_bench_cuda
for r in 1 2; do
  mpiexec -n 2 env MPIX_ST_BACKEND=cuda build-gpu/examples/bench/p2p_bench_cuda --host-time --json "$out/host_time_$r.json"
done
