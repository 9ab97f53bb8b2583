#!/usr/bin/env bash
# 4 GPUs: small collectives after the freed flags are polled together (wait_all), NCCL replayed
# beside them; the collective gpu suites.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
O=/tmp/o26; mkdir -p $O
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest"
t0=$(date +%s)
pack() { cd $O && tar czf $OUT/n26_$1.tgz $1 2>/dev/null; cd - > /dev/null; }
B=build-gpu/examples/bench
coll() { # dir, name, ranks, timeout, args...
  local d=$1 n=$2 np=$3 t=$4; shift 4
  timeout $t mpiexec -n $np --bind-to none $B/coll_bench_cuda --json $O/$d/coll_$n.json "$@" > $O/$d/coll_$n.txt 2>&1; echo "coll $n rc $? $(( $(date +%s) - t0 )) s"
}
ALL="--colls allreduce,reduce,bcast,allgather,alltoall --impls mpixst,vendor --graph"
d=job1; mkdir -p $O/$d; cat .carry/commit26.txt > $O/$d/commit.txt
{ nvidia-smi -L; nvidia-smi topo -m; nproc; nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1; } > $O/$d/machine.txt 2>&1; head -4 $O/$d/machine.txt
touch kernels/*.cu kernels/*.h
cmake -S . -B build-gpu $cfg > $O/$d/cfg.log 2>&1 && cmake --build build-gpu -j 16 --target mpixst mpixst_cuda coll_bench_cuda test_collectives_cuda test_enqueue_api_cuda > $O/$d/build.log 2>&1; echo "build rc $? $(( $(date +%s) - t0 )) s"; tail -1 $O/$d/build.log
grep -i "spill\|warning" $O/$d/build.log | head -5
coll $d small4_1 4 60 $ALL --iters 50 --warmup 5 --min-bytes 8 --max-bytes 65536 --step 2
pack $d
timeout 120 ctest --test-dir build-gpu -L gpu -R "collectives|enqueue_api" -E vnode -j1 --timeout 60 > $O/$d/ctest_coll.txt 2>&1; echo "ctest coll rc $? $(( $(date +%s) - t0 )) s"; grep -E "tests passed|Failed|Timeout|Not Run|\*\*\*" $O/$d/ctest_coll.txt
pack $d
coll $d small2_1 2 60 $ALL --iters 50 --warmup 5 --min-bytes 8 --max-bytes 65536 --step 2
coll $d small4_2 4 60 $ALL --iters 50 --warmup 5 --min-bytes 8 --max-bytes 65536 --step 2
echo "total: $(( $(date +%s) - t0 )) s"
pack $d; ls $OUT
