#!/usr/bin/env bash
# Faces 2x2x1, communication only, every mode, --graph, two rounds; coll_bench on 4 ranks, small and
# large sizes, NCCL eager and replayed beside. One rank per GPU. Run from the repository's root.
set -euo pipefail
export NCCL_NVLS_ENABLE=0 OMPI_MCA_osc=sm,pt2pt
out=${OUT_DIR:-bench/results/h200x4-faces-coll}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF \
  -DMPIX_ST_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90
cmake --build build --target faces_cuda coll_bench_cuda
F=build/examples/faces/faces_cuda
B=build/examples/bench/coll_bench_cuda
M="mpiexec -n 4 --bind-to none"
G="2 2 1 15 14 13 12 10 10 -100"
for i in 1 2; do
  for v in "" "--datatypes" "--periodic" "--launch-overlap" "--datatypes --launch-overlap"; do
    t=faces$(echo "$v" | tr -d ' -')_$i
    $M $F --json "$out/$t.json" --mode all --graph $v $G
  done
done
C=allreduce,reduce,bcast,allgather,alltoall
$M $B --colls $C --impls mpixst,vendor,mpi --graph --auto-only --iters 50 --warmup 5 \
  --min-bytes 8 --max-bytes 65536 --step 4 --json "$out/small4.json"
$M $B --colls $C --impls mpixst,vendor --graph --auto-only --iters 20 --warmup 3 \
  --min-bytes 262144 --max-bytes 268435456 --step 4 --json "$out/large4.json"
