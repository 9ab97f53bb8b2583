#!/usr/bin/env bash
# Session 16 job 2 (4 x H200): issue 14/12/13 figures on H200s: coll_bench vs NCCL and MPI, 4 and 2 ranks; Faces 2x2x1.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
T0=$(date +%s); R=/tmp/r2; mkdir -p $R
nvidia-smi -L > $R/machine.txt; nvidia-smi topo -m >> $R/machine.txt 2>&1
cmake --build build -j16 --target coll_bench_cuda faces_cuda > $R/build.txt 2>&1 || { tail -40 $R/build.txt; exit 1; }
echo "build $(( $(date +%s) - T0 )) s"
B=build/examples/bench/coll_bench_cuda; F=build/examples/faces/faces_cuda
run() { local name=$1; shift; timeout 150 "$@" > $R/$name.txt 2>&1; echo "$name rc $? $(( $(date +%s) - T0 )) s"; }
C=allreduce,reduce,bcast,allgather,alltoall
for n in 4 2; do
  run small$n mpiexec -n $n --bind-to none $B --colls $C --impls mpixst,vendor,mpi --graph --auto-only --iters 50 --warmup 5 --min-bytes 8 --max-bytes 65536 --step 4 --json $R/small$n.json
  run large$n mpiexec -n $n --bind-to none $B --colls $C --impls mpixst,vendor,mpi --graph --auto-only --iters 20 --warmup 3 --min-bytes 262144 --max-bytes 268435456 --step 4 --json $R/large$n.json
done
for v in "" "--datatypes" "--periodic" "--periodic --datatypes"; do
  tag=$(echo "faces$v" | tr -d ' -')
  run $tag mpiexec -n 4 --bind-to none $F --json $R/$tag.json --mode all --graph $v 2 2 1 15 14 13 12 10 10 -100
done
grep -h "per exchange\|st \|nccl\|rma " $R/faces*.txt | head -40
tar czf $OUT/r2.tgz -C $R .
