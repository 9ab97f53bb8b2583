#!/usr/bin/env bash
# 2 H100s, code of e6ba5f4: Faces --datatypes by MPIX_ST_PAIRS_PER_BLOCK; rma_bench puts by
# MPIX_ST_COPY_BLOCK_KIB (16 against the default 64), rounds alternating.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
mkdir -p /tmp/o; O=/tmp/o; rm -f $O/*
nvidia-smi -L > $O/machine.txt; head -2 $O/machine.txt
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest -DMPIX_ST_BUILD_TESTS=OFF"
t0=$(date +%s)
touch kernels/*.cu kernels/*.h
cmake -S . -B build-gpu $cfg > $O/cfg.log 2>&1 && cmake --build build-gpu -j 32 --target faces_cuda rma_bench_cuda > $O/build.log 2>&1; echo "build rc $?"
echo "build: $(( $(date +%s) - t0 )) s"
probe() { name=$1; shift; timeout 60 mpiexec -n 2 --bind-to none "$@" > $O/$name.txt 2>&1; echo "$name rc $? $(grep -E 'total.*per_exchange' $O/$name.txt | sed -E 's/.*mode=([a-z0-9]+).*per_exchange_us avg=([0-9.]+).*/\1=\2/' | tr '\n' ' ')"; }
summ() { f=$1; echo "$(basename $f) $(grep -o 'data_check=[a-zA-Z]*' $f) graph $(grep -E '^graph st: epoch round trip \(' $f | awk '{print $(NF-1)}') nodata $(grep -E 'without data' $f | awk '{print $(NF-1)}') $(grep -E '^put' $f | sed -E 's/copy engine/ce/' | tr -s ' ' | tr '\n' ' ')"; }
F=build-gpu/examples/faces/faces_cuda
for k in 1 2; do
  for ppb in 256 512 1024; do for per in "" "--periodic"; do
    probe "faces_dt_ppb${ppb}${per}_$k" -x MPIX_ST_PAIRS_PER_BLOCK=$ppb $F --mode all --graph --datatypes $per 2 1 1 15 14 13 12 4 5 -100
  done; done
  probe "faces_kib16_$k" -x MPIX_ST_COPY_BLOCK_KIB=16 $F --mode all --graph 2 1 1 15 14 13 12 4 5 -100
  probe "faces_kib64_$k" $F --mode all --graph 2 1 1 15 14 13 12 4 5 -100
  echo "t: $(( $(date +%s) - t0 )) s"
done
for k in 1 2; do for kib in 16 64; do
  timeout 90 mpiexec -n 2 --bind-to none -x MPIX_ST_COPY_BLOCK_KIB=$kib build-gpu/examples/bench/rma_bench_cuda --graph --iters 1000 --host-iters 100 --sizes-mib 1,4,16,64 --put-bytes 262144 --json $O/rma_kib${kib}_$k.json > $O/rma_kib${kib}_$k.txt 2>&1; summ $O/rma_kib${kib}_$k.txt
done; done
echo "total: $(( $(date +%s) - t0 )) s"
cd $O && tar czf $OUT/n11.tgz *.txt *.json 2>/dev/null; ls $OUT
