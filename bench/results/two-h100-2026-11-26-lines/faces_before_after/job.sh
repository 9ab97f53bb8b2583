#!/usr/bin/env bash
# Faces on 2 H100s: the code before line puts (e696495, .carry/base) against HEAD, same job,
# communication only and with wrap-around, every mode --graph; rounds alternate the builds.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
mkdir -p /tmp/o; O=/tmp/o; rm -f $O/*
nvidia-smi -L > $O/machine.txt; head -2 $O/machine.txt
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest -DMPIX_ST_BUILD_TESTS=OFF"
t0=$(date +%s)
touch kernels/*.cu kernels/*.h
(cmake -S . -B build-gpu $cfg > $O/cfg.log 2>&1 && cmake --build build-gpu -j 16 --target faces_cuda > $O/build.log 2>&1; echo "head build rc $?") &
(cmake -S .carry/base -B build-base $cfg > $O/cfg_base.log 2>&1 && cmake --build build-base -j 16 --target faces_cuda > $O/build_base.log 2>&1; echo "base build rc $?") &
wait
echo "builds: $(( $(date +%s) - t0 )) s"
probe() { name=$1; shift; timeout 60 mpiexec -n 2 --bind-to none "$@" > $O/$name.txt 2>&1; echo "$name rc $? $(grep -E 'total.*per_exchange' $O/$name.txt | sed -E 's/.*mode=([a-z0-9]+).*per_exchange_us avg=([0-9.]+).*/\1=\2/' | tr '\n' ' ')"; }
for k in 1 2; do for per in "" "--periodic"; do
  probe "head${per}_$k" build-gpu/examples/faces/faces_cuda --mode all --graph $per 2 1 1 15 14 13 12 4 5 -100
  probe "base${per}_$k" build-base/examples/faces/faces_cuda --mode all --graph $per 2 1 1 15 14 13 12 4 5 -100
done; done
echo "total: $(( $(date +%s) - t0 )) s"
cd $O && tar czf $OUT/n7.tgz *.txt 2>/dev/null; ls $OUT
