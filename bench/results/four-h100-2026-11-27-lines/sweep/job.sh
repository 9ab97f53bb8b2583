#!/usr/bin/env bash
# 4 H100s: allreduce/reduce 64 KiB-2 MiB under protocol and channel settings (tuning), then the
# collective and line-put gpu tests with the shared tagged-line store.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
mkdir -p /tmp/o13; O=/tmp/o13; rm -rf $O/*
nvidia-smi -L > $O/machine.txt; head -1 $O/machine.txt
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest"
t0=$(date +%s)
touch kernels/*.cu kernels/*.h
cmake -S . -B build-gpu $cfg > $O/cfg.log 2>&1 && cmake --build build-gpu -j 16 > $O/build.log 2>&1; echo "build rc $? $(( $(date +%s) - t0 )) s"; tail -2 $O/build.log
git log --oneline -1 > $O/commit.txt; git status --short >> $O/commit.txt
pack() { cd $O && tar czf $OUT/n13.tgz * 2>/dev/null; cd - > /dev/null; }
B=build-gpu/examples/bench/coll_bench_cuda
run() { # label env...
  local l=$1; shift
  env "$@" timeout 90 mpiexec -n 4 --bind-to none $B --colls allreduce,reduce --impls mpixst,vendor --graph --iters 50 --warmup 5 --min-bytes 65536 --max-bytes 2097152 --step 2 --json $O/$l.json > $O/$l.txt 2>&1; echo "$l rc $? $(( $(date +%s) - t0 )) s"
}
run auto1 X=1
run ll64 MPIX_ST_COLL_PROTOCOL=ll
run ll128 MPIX_ST_COLL_PROTOCOL=ll MPIX_ST_COLL_LL_CHANNELS=128
run ll128k4 MPIX_ST_COLL_PROTOCOL=ll MPIX_ST_COLL_LL_CHANNELS=128 MPIX_ST_COLL_LL_CHANNEL_KIB=4
run ll64k4 MPIX_ST_COLL_PROTOCOL=ll MPIX_ST_COLL_LL_CHANNEL_KIB=4
pack
run simple16 MPIX_ST_COLL_PROTOCOL=simple
run simple8 MPIX_ST_COLL_PROTOCOL=simple MPIX_ST_COLL_CHANNEL_KIB=8
run simple32 MPIX_ST_COLL_PROTOCOL=simple MPIX_ST_COLL_CHANNEL_KIB=32
run simple64 MPIX_ST_COLL_PROTOCOL=simple MPIX_ST_COLL_CHANNEL_KIB=64
run auto2 X=2
pack
echo "total: $(( $(date +%s) - t0 )) s"
