#!/usr/bin/env bash
# 2 of 4 H100s: auto (two-shot ll on 2 ranks), ll forced and simple forced, 64 KiB-2 MiB; gpu tests np2.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
mkdir -p /tmp/o17; O=/tmp/o17; rm -rf $O/*
nvidia-smi -L > $O/machine.txt; head -1 $O/machine.txt
echo 'the working tree of eb3400f' > $O/commit.txt
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest"
t0=$(date +%s)
touch kernels/*.cu kernels/*.h
cmake -S . -B build-gpu $cfg > $O/cfg.log 2>&1 && cmake --build build-gpu -j 16 --target coll_bench_cuda test_collectives_cuda test_enqueue_api_cuda mpixst_cuda > $O/build.log 2>&1; echo "build rc $? $(( $(date +%s) - t0 )) s"; tail -1 $O/build.log
pack() { cd $O && tar czf $OUT/n17.tgz * 2>/dev/null; cd - > /dev/null; }
cb() { # label np colls min max step [env...]
  local l=$1 np=$2 colls=$3 mn=$4 mx=$5 st=$6; shift 6
  env "$@" timeout 80 mpiexec -n $np --bind-to none build-gpu/examples/bench/coll_bench_cuda --colls $colls --impls mpixst,vendor --graph --iters 50 --warmup 5 --min-bytes $mn --max-bytes $mx --step $st --json $O/$l.json > $O/$l.txt 2>&1; echo "$l rc $? $(( $(date +%s) - t0 )) s"; grep -c " NO" $O/$l.txt
}
ALL=allreduce,reduce,bcast,allgather,alltoall
cb mid2_auto 2 $ALL 65536 2097152 2
cb mid2_ll 2 $ALL 65536 2097152 2 MPIX_ST_COLL_PROTOCOL=ll
cb mid2_simple 2 $ALL 65536 2097152 2 MPIX_ST_COLL_PROTOCOL=simple
cb mid2_auto2 2 $ALL 65536 2097152 2
pack
timeout 100 ctest --test-dir build-gpu -L gpu -LE internode -R "collectives|enqueue" -E np4 -j2 --timeout 60 > $O/ctest2.txt 2>&1; echo "ctest np2 rc $? $(( $(date +%s) - t0 )) s"; grep -E "tests passed|Failed|Timeout" $O/ctest2.txt
timeout 60 ctest --test-dir build-gpu -L gpu -LE internode -R "collectives.*np4" -j1 --timeout 50 > $O/ctest4.txt 2>&1; echo "ctest np4 rc $? $(( $(date +%s) - t0 )) s"; grep -E "tests passed|Failed|Timeout" $O/ctest4.txt
pack
echo "total: $(( $(date +%s) - t0 )) s"
