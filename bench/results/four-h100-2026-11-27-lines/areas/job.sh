#!/usr/bin/env bash
# 4 H100s: larger line areas (new) against the build before (base), alternating; forced ll on the
# movement collectives; 2-rank runs; collective gpu tests.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
mkdir -p /tmp/o14; O=/tmp/o14; rm -rf $O/*
nvidia-smi -L > $O/machine.txt; head -1 $O/machine.txt
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest"
t0=$(date +%s)
rm -rf .carry/base5 && mkdir -p .carry/base5 && git archive HEAD~1 | tar x -C .carry/base5
touch kernels/*.cu kernels/*.h
(cmake -S .carry/base5 -B build-base $cfg -DMPIX_ST_BUILD_TESTS=OFF > $O/cfg_base.log 2>&1 && cmake --build build-base -j 8 --target coll_bench_cuda > $O/build_base.log 2>&1; echo "base build rc $? $(( $(date +%s) - t0 )) s") &
cmake -S . -B build-gpu $cfg > $O/cfg.log 2>&1 && cmake --build build-gpu -j 12 --target coll_bench_cuda test_collectives_cuda test_enqueue_api_cuda mpixst_cuda > $O/build.log 2>&1; echo "build rc $? $(( $(date +%s) - t0 )) s"; tail -1 $O/build.log
wait
git log --oneline -1 > $O/commit.txt; git status --short >> $O/commit.txt
pack() { cd $O && tar czf $OUT/n14.tgz * 2>/dev/null; cd - > /dev/null; }
cb() { # build label np colls min max step [env...]
  local b=$1 l=$2 np=$3 colls=$4 mn=$5 mx=$6 st=$7; shift 7
  env "$@" timeout 80 mpiexec -n $np --bind-to none $b/examples/bench/coll_bench_cuda --colls $colls --impls mpixst,vendor --graph --iters 50 --warmup 5 --min-bytes $mn --max-bytes $mx --step $st --json $O/$l.json > $O/$l.txt 2>&1; echo "$l rc $? $(( $(date +%s) - t0 )) s"; grep -c " NO" $O/$l.txt
}
ALL=allreduce,reduce,bcast,allgather,alltoall
for k in 1 2; do
  cb build-gpu mid4_new_$k 4 $ALL 65536 4194304 2
  cb build-base mid4_base_$k 4 $ALL 65536 4194304 2
  pack
done
cb build-gpu ll4_new 4 bcast,allgather,alltoall 65536 4194304 2 MPIX_ST_COLL_PROTOCOL=ll
cb build-gpu small4_new 4 $ALL 8 65536 4
cb build-base small4_base 4 $ALL 8 65536 4
pack
cb build-gpu mid2_new 2 $ALL 65536 4194304 2
cb build-base mid2_base 2 $ALL 65536 4194304 2
pack
timeout 100 ctest --test-dir build-gpu -L gpu -LE internode -R "collectives|enqueue" -E np4 -j2 --timeout 60 > $O/ctest2.txt 2>&1; echo "ctest np2 rc $? $(( $(date +%s) - t0 )) s"; grep -E "tests passed|Failed|Timeout" $O/ctest2.txt
timeout 60 ctest --test-dir build-gpu -L gpu -LE internode -R "collectives.*np4" -j1 --timeout 50 > $O/ctest4.txt 2>&1; echo "ctest np4 rc $? $(( $(date +%s) - t0 )) s"; grep -E "tests passed|Failed|Timeout" $O/ctest4.txt
pack
echo "total: $(( $(date +%s) - t0 )) s"
