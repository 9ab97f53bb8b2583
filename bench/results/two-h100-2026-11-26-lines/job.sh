#!/usr/bin/env bash
# Line puts on 2 GPUs: build, rma_bench --graph with lines on/off (same binary), gpu tests.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
mkdir -p /tmp/o; O=/tmp/o
nvidia-smi -L > $O/machine.txt; nvidia-smi topo -m >> $O/machine.txt 2>&1; head -3 $O/machine.txt
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest"
t0=$(date +%s)
cmake -S . -B build-gpu $cfg > $O/cfg.log 2>&1 || { tail -30 $O/cfg.log; exit 1; }
cmake --build build-gpu -j 64 > $O/build.log 2>&1 || { grep -E "error|FAILED" -A3 $O/build.log | head -30; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"; git log --oneline -1
run() { timeout 90 mpiexec -n 2 --bind-to none "$@"; }
R="--graph --iters 2000 --host-iters 300 --sizes-mib 64"
for round in 1 2; do
  run build-gpu/examples/bench/rma_bench_cuda $R --json $O/rma_lines_$round.json > $O/rma_lines_$round.txt 2>&1; echo "lines $round rc $?"
  run -x MPIX_ST_LINE_PUT_BYTES=0 build-gpu/examples/bench/rma_bench_cuda $R --json $O/rma_direct_$round.json > $O/rma_direct_$round.txt 2>&1; echo "direct $round rc $?"
done
for f in lines_1 direct_1; do echo "== $f"; grep -vE "^ *$" $O/rma_$f.txt | head -40; done
for f in lines_2 direct_2; do echo "== $f"; grep -iE "ratio|graph|eager|host" $O/rma_$f.txt | head -20; done
echo "bench: $(( $(date +%s) - t0 )) s"
timeout 300 ctest --test-dir build-gpu -L gpu -LE internode -E np4 -j1 --timeout 100 > $O/ctest2.txt 2>&1; echo "ctest rc $?"; tail -4 $O/ctest2.txt; grep -E "Failed|Timeout|Not Run" $O/ctest2.txt
echo "total: $(( $(date +%s) - t0 )) s"
cd $O && tar czf $OUT/n2.tgz * 2>/dev/null; ls $OUT
