#!/usr/bin/env bash
# Line puts by size on 2 H100s: rma_bench --graph --put-bytes 8/64/256 with lines on and off
# (the same binary), alternating.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
mkdir -p /tmp/o; O=/tmp/o
nvidia-smi -L > $O/machine.txt; head -2 $O/machine.txt
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest"
t0=$(date +%s)
touch examples/bench/rma_bench.cpp  # a warm machine keeps build-gpu; the copied source may look older
cmake -S . -B build-gpu $cfg > $O/cfg.log 2>&1 || { tail -30 $O/cfg.log; exit 1; }
cmake --build build-gpu -j 64 > $O/build.log 2>&1 || { grep -E "error|FAILED" -A3 $O/build.log | head -30; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"
run() { timeout 90 mpiexec -n 2 --bind-to none "$@"; }
R="--graph --iters 2000 --host-iters 300 --sizes-mib 1"
for b in 8 64 256; do
  run build-gpu/examples/bench/rma_bench_cuda $R --put-bytes $b --json $O/rma_lines_$b.json > $O/rma_lines_$b.txt 2>&1; echo "lines $b rc $?"
  run -x MPIX_ST_LINE_PUT_BYTES=0 build-gpu/examples/bench/rma_bench_cuda $R --put-bytes $b --json $O/rma_direct_$b.json > $O/rma_direct_$b.txt 2>&1; echo "direct $b rc $?"
done
for b in 8 64 256; do for m in lines direct; do echo "== $m $b: $(grep -E 'data_check' $O/rma_${m}_$b.txt | sed 's/.*data_check=//')"; grep -E "graph st: epoch|graph floor|ratio graph st / (graph floor|host)|^st: epoch|raw epoch: 3|host-driven" $O/rma_${m}_$b.txt; done; done
echo "total: $(( $(date +%s) - t0 )) s"
cd $O && tar czf $OUT/n4.tgz * 2>/dev/null; ls $OUT
