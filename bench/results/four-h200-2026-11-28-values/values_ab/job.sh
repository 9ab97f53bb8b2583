#!/usr/bin/env bash
# Session 19 job 3 (4 x H200): the epoch kernel's values loaded once at its start (cursor-relative
# values of waits, signals and trailing waits into shared memory, each wait's flag beside its
# value, the live-window word during the launch overlap) against 68bd68c, alternated twice in one
# job: Faces 2x2x1 st --graph packed, --datatypes, --periodic, NCCL in every round; rma_bench
# --graph on 2 ranks; one traced st run each.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
T0=$(date +%s); R=/tmp/q1; mkdir -p $R
{ nvidia-smi -L; nvidia-smi topo -m; nproc; } > $R/machine.txt 2>&1
NG=$(nvidia-smi -L | wc -l)
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF"
rm -rf /tmp/base && mkdir -p /tmp/base && tar xzf .carry/base68b.tgz -C /tmp/base
( cd /tmp/base && cmake -S . -B build $CF -DCMAKE_PREFIX_PATH=$OLDPWD/.carry/doctest > $R/conf-base.txt 2>&1 &&
  cmake --build build -j$(( $(nproc) / 2 )) --target faces_cuda rma_bench_cuda > $R/build-base.txt 2>&1; echo "base $?" >> $R/builds ) &
cmake -S . -B build $CF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest > $R/configure.txt 2>&1
cmake --build build -j$(nproc) > $R/build.txt 2>&1; echo "new $?" >> $R/builds
wait; cat $R/builds; grep -q "new 0" $R/builds || { tail -40 $R/build.txt; exit 1; }
echo "build $(( $(date +%s) - T0 )) s, $NG GPUs"
run() { local name=$1; shift; timeout 90 "$@" > $R/$name.txt 2>&1; echo "$name rc $? $(( $(date +%s) - T0 )) s"; }
F=build/examples/faces/faces_cuda; FB=/tmp/base/build/examples/faces/faces_cuda
if [ "$NG" -ge 4 ]; then NP=4; G="2 2 1 15 14 13 12 10 10 -100"; else NP=2; G="2 1 1 15 14 13 12 10 10 -100"; fi
M="mpiexec -n $NP --bind-to none"
for i in 1 2; do
  for v in "" "--datatypes" "--periodic"; do
    t=$(echo "$v" | tr -d ' -')_$i
    run new$t $M $F --json $R/new$t.json --mode st --graph $v $G
    run base$t $M $FB --json $R/base$t.json --mode st --graph $v $G
    run nccl$t $M $F --json $R/nccl$t.json --mode nccl --graph $v $G
  done
done
RB=build/examples/bench/rma_bench_cuda; RBB=/tmp/base/build/examples/bench/rma_bench_cuda
for i in 1 2; do
  run rma_new_$i mpiexec -n 2 --bind-to none $RB --graph --json $R/rma_new_$i.json
  run rma_base_$i mpiexec -n 2 --bind-to none $RBB --graph --json $R/rma_base_$i.json
done
for b in new base; do
  mkdir -p $R/tr_$b; FF=$F; [ $b = base ] && FF=$FB
  run tr_$b $M -x MPIX_ST_TRACE=$R/tr_$b/t $FF --mode st --graph $G
  python3 scripts/trace-summary.py $R/tr_$b/t.*.csv --skip 200 > $R/tr_$b/summary.txt 2>&1; rm -f $R/tr_$b/t.*.csv
done
for f in $R/new*.txt $R/base*.txt $R/nccl*.txt; do echo "$(basename $f) $(grep -h 'mode=.* total' $f | sed -e 's/(100 blocks.*//' -e 's/total_s.*per_exchange_us//')"; done
for f in $R/rma_*.txt; do echo "== $(basename $f)"; grep -iE "graph|ratio|floor|round" $f | head -12; done
for b in new base; do echo "== $b"; head -8 $R/tr_$b/summary.txt; done
tar czf $OUT/q1.tgz -C $R .
