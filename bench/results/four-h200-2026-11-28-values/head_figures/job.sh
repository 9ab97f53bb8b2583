#!/usr/bin/env bash
# Session 19 job 2 (4 x H200, after p1's build): Faces 2x2x1 communication only, --mode all --graph,
# packed, --datatypes, --periodic, each with and without --launch-overlap, two rounds; coll_bench
# 4 ranks with NCCL replayed, small and large.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
T0=$(date +%s); R=/tmp/p2; mkdir -p $R
{ nvidia-smi -L; nvidia-smi topo -m; nproc; } > $R/machine.txt 2>&1
cmake --build build -j$(nproc) > $R/build.txt 2>&1 || { tail -40 $R/build.txt; exit 1; }
run() { local name=$1; shift; timeout 120 "$@" > $R/$name.txt 2>&1; echo "$name rc $? $(( $(date +%s) - T0 )) s"; }
F=build/examples/faces/faces_cuda; B=build/examples/bench/coll_bench_cuda
G="2 2 1 15 14 13 12 10 10 -100"; M="mpiexec -n 4 --bind-to none"
for i in 1 2; do
  for v in "" "--datatypes" "--periodic" "--launch-overlap" "--datatypes --launch-overlap"; do
    t=faces$(echo "$v" | tr -d ' -')_$i
    run $t $M $F --json $R/$t.json --mode all --graph $v $G
  done
done
C=allreduce,reduce,bcast,allgather,alltoall
run small4 $M $B --colls $C --impls mpixst,vendor,mpi --graph --auto-only --iters 50 --warmup 5 --min-bytes 8 --max-bytes 65536 --step 4 --json $R/small4.json
run large4 $M $B --colls $C --impls mpixst,vendor --graph --auto-only --iters 20 --warmup 3 --min-bytes 262144 --max-bytes 268435456 --step 4 --json $R/large4.json
for f in $R/faces*.txt; do echo "$(basename $f)"; grep -h 'mode=.* total' $f | sed -e 's/(100 blocks.*//' -e 's/total_s.*per_exchange_us//'; done
tar czf $OUT/p2.tgz -C $R .
