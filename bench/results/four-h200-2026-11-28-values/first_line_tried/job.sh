#!/usr/bin/env bash
# Session 19 job 5 (2 x H200): a line put's first data line polled with its header (one load less
# after the header arrived for puts up to 8 bytes) against 728a048, alternated twice in one job:
# rma_bench --graph (8-byte puts travel as lines), Faces 2x1x1 st --graph, NCCL beside; then the
# gpu tests of epochs, lines and replays on the new code until the time runs out.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
T0=$(date +%s); R=/tmp/r1; mkdir -p $R
{ nvidia-smi -L; nvidia-smi topo -m; nproc; } > $R/machine.txt 2>&1
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF"
rm -rf /tmp/base && mkdir -p /tmp/base && tar xzf .carry/base728.tgz -C /tmp/base
( cd /tmp/base && cmake -S . -B build $CF -DCMAKE_PREFIX_PATH=$OLDPWD/.carry/doctest > $R/conf-base.txt 2>&1 &&
  cmake --build build -j$(( $(nproc) / 2 )) --target faces_cuda rma_bench_cuda > $R/build-base.txt 2>&1; echo "base $?" >> $R/builds ) &
cmake -S . -B build $CF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest > $R/configure.txt 2>&1
cmake --build build -j$(nproc) > $R/build.txt 2>&1; echo "new $?" >> $R/builds
wait; cat $R/builds; grep -q "new 0" $R/builds || { tail -40 $R/build.txt; exit 1; }
echo "build $(( $(date +%s) - T0 )) s"
run() { local name=$1; shift; timeout 60 "$@" > $R/$name.txt 2>&1; echo "$name rc $? $(( $(date +%s) - T0 )) s"; }
RB=build/examples/bench/rma_bench_cuda; RBB=/tmp/base/build/examples/bench/rma_bench_cuda
F=build/examples/faces/faces_cuda; FB=/tmp/base/build/examples/faces/faces_cuda
M="mpiexec -n 2 --bind-to none"; G="2 1 1 15 14 13 12 10 10 -100"
for i in 1 2; do
  run rma_new_$i $M $RB --graph --json $R/rma_new_$i.json
  run rma_base_$i $M $RBB --graph --json $R/rma_base_$i.json
  run st_new_$i $M $F --json $R/st_new_$i.json --mode st --graph $G
  run st_base_$i $M $FB --json $R/st_base_$i.json --mode st --graph $G
  run nccl_$i $M $F --json $R/nccl_$i.json --mode nccl --graph $G
done
for f in $R/rma_*.txt; do echo "$(basename $f) $(grep -E 'graph (floor|st: epoch round trip)|ratio graph st / graph floor' $f | awk '{print $(NF-1)}' | tr '\n' ' ')"; done
for f in $R/st_*.txt $R/nccl_*.txt; do echo "$(basename $f) $(grep -h 'mode=.* total' $f | sed -e 's/(100 blocks.*//' -e 's/total_s.*per_exchange_us//')"; done
(cd build && timeout $(( 320 - ($(date +%s) - T0) )) ctest -L gpu -R "random_epochs.*np2|graph_replay.*np2|graph_merge|special_epochs.np2|many_epochs.np2|watchdog|launch_trace|faces.st.2x1x1" --output-on-failure --timeout 60) > $R/ctest_gpu.txt 2>&1
echo "ctest rc $? at $(( $(date +%s) - T0 )) s"
grep -E "tests passed|Failed|\*\*\*|Test +#" $R/ctest_gpu.txt | tail -30
tar czf $OUT/r1.tgz -C $R .
