#!/usr/bin/env bash
# 2 H100s, code of e6ba5f4 (one system fence per multi-block list): 4-rank gpu tests under MPS,
# Faces communication only by MPIX_ST_COPY_BLOCK_KIB, Faces --datatypes, rma_bench 256 KiB put by block size.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
mkdir -p /tmp/o; O=/tmp/o; rm -f $O/*
nvidia-smi -L > $O/machine.txt; head -2 $O/machine.txt
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest"
t0=$(date +%s)
touch kernels/*.cu kernels/*.h
cmake -S . -B build-gpu $cfg > $O/cfg.log 2>&1 && cmake --build build-gpu -j 32 > $O/build.log 2>&1; echo "build rc $?"
echo "build: $(( $(date +%s) - t0 )) s"
probe() { name=$1; shift; timeout 60 mpiexec -n 2 --bind-to none "$@" > $O/$name.txt 2>&1; echo "$name rc $? $(grep -E 'total.*per_exchange' $O/$name.txt | sed -E 's/.*mode=([a-z0-9]+).*per_exchange_us avg=([0-9.]+).*/\1=\2/' | tr '\n' ' ')"; }
summ() { f=$1; echo "$(basename $f) $(grep -o 'data_check=[a-zA-Z]*' $f) graph $(grep -E '^graph st: epoch round trip \(' $f | awk '{print $(NF-1)}') nodata $(grep -E 'without data' $f | awk '{print $(NF-1)}') floor $(grep -E '^graph floor' $f | awk '{print $(NF-1)}') $(grep -E '^put' $f | tr '\n' ' ')"; }
F=build-gpu/examples/faces/faces_cuda
for k in 1 2; do
  for kib in 16 64; do for per in "" "--periodic"; do
    probe "faces_kib${kib}${per}_$k" -x MPIX_ST_COPY_BLOCK_KIB=$kib $F --mode all --graph $per 2 1 1 15 14 13 12 4 5 -100
  done; done
  for per in "" "--periodic"; do probe "faces_dt${per}_$k" $F --mode all --graph --datatypes $per 2 1 1 15 14 13 12 4 5 -100; done
  echo "t: $(( $(date +%s) - t0 )) s"
done
for kib in 16 64; do
  timeout 90 mpiexec -n 2 --bind-to none -x MPIX_ST_COPY_BLOCK_KIB=$kib build-gpu/examples/bench/rma_bench_cuda --graph --iters 2000 --host-iters 300 --sizes-mib 1,16 --put-bytes 262144 --json $O/rma_kib$kib.json > $O/rma_kib$kib.txt 2>&1; summ $O/rma_kib$kib.txt
done
echo "t: $(( $(date +%s) - t0 )) s"
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps_pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps_log; mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d
timeout 240 ctest --test-dir build-gpu -L gpu -LE internode -R np4 -j1 --timeout 100 > $O/ctest4_mps.txt 2>&1; echo "ctest np4 rc $?"; tail -3 $O/ctest4_mps.txt; grep -E "Failed|Timeout" $O/ctest4_mps.txt
echo quit | nvidia-cuda-mps-control
echo "total: $(( $(date +%s) - t0 )) s"
cd $O && tar czf $OUT/n10.tgz *.txt *.json 2>/dev/null; ls $OUT
