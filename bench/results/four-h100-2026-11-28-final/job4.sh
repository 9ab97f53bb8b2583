#!/usr/bin/env bash
# Job 4: mpix-st against the MPI's own collectives (host-staged: this Open MPI's collectives fault
# on device buffers) and NCCL, 4 and 2 ranks, 8 B-128 MiB.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
T0=$(date +%s); R=/tmp/r; mkdir -p $R
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest > $R/configure.txt 2>&1
cmake --build build -j16 --target coll_bench_cuda > $R/build.txt 2>&1 || { tail -40 $R/build.txt; exit 1; }
echo "build $(( $(date +%s) - T0 )) s"
B=build/examples/bench/coll_bench_cuda
for n in 4 2; do
  MPIX_ST_BACKEND=cuda timeout 70 mpiexec -n $n --bind-to none $B --impls mpixst,vendor,mpi --auto-only --graph \
    --iters 20 --warmup 3 --min-bytes 8 --max-bytes 134217728 --step 8 --json $R/vs_mpi$n.json > $R/vs_mpi$n.txt 2>&1
  echo "vs_mpi$n rc $? $(( $(date +%s) - T0 )) s"
done
tar czf $OUT/r.tgz -C $R .
