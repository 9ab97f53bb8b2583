#!/usr/bin/env bash
# Session 20 job 1 (4 x H200): the line hint (a target polls a line put's first data line with its
# header only while the last line put from that origin was one line) against 22923bd, alternated
# in one job: rma_bench --graph on 2 ranks (8-byte puts travel as lines) three times each, Faces
# 2x1x1 (2 ranks) and 2x2x1 (4 ranks) st --graph packed and periodic, NCCL in every round.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
T0=$(date +%s); R=/tmp/s1; mkdir -p $R
{ nvidia-smi -L; nvidia-smi topo -m; nproc; } > $R/machine.txt 2>&1
NG=$(nvidia-smi -L | wc -l)
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF"
rm -rf /tmp/base && mkdir -p /tmp/base && tar xzf .carry/base229.tgz -C /tmp/base
( cd /tmp/base && cmake -S . -B build $CF -DCMAKE_PREFIX_PATH=$OLDPWD/.carry/doctest > $R/conf-base.txt 2>&1 &&
  cmake --build build -j$(( $(nproc) / 2 )) --target faces_cuda rma_bench_cuda > $R/build-base.txt 2>&1; echo "base $?" >> $R/builds ) &
cmake -S . -B build $CF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest > $R/configure.txt 2>&1
cmake --build build -j$(nproc) > $R/build.txt 2>&1; echo "new $?" >> $R/builds
wait; cat $R/builds; grep -q "new 0" $R/builds || { tail -40 $R/build.txt; exit 1; }
echo "build $(( $(date +%s) - T0 )) s, $NG GPUs"
run() { local name=$1; shift; timeout 90 "$@" > $R/$name.txt 2>&1; echo "$name rc $? $(( $(date +%s) - T0 )) s"; }
RB=build/examples/bench/rma_bench_cuda; RBB=/tmp/base/build/examples/bench/rma_bench_cuda
F=build/examples/faces/faces_cuda; FB=/tmp/base/build/examples/faces/faces_cuda
for i in 1 2 3; do
  run rma_new_$i mpiexec -n 2 --bind-to none $RB --graph --json $R/rma_new_$i.json
  run rma_base_$i mpiexec -n 2 --bind-to none $RBB --graph --json $R/rma_base_$i.json
done
G2="2 1 1 15 14 13 12 10 10 -100"; G4="2 2 1 15 14 13 12 10 10 -100"
for i in 1 2; do
  for c in 2 4; do
    [ $c -gt $NG ] && continue
    G=$G2; [ $c = 4 ] && G=$G4
    for v in "" "--periodic"; do
      t=${c}r$(echo "$v" | tr -d ' -')_$i; M="mpiexec -n $c --bind-to none"
      run new$t $M $F --json $R/new$t.json --mode st --graph $v $G
      run base$t $M $FB --json $R/base$t.json --mode st --graph $v $G
      run nccl$t $M $F --json $R/nccl$t.json --mode nccl --graph $v $G
    done
  done
done
for f in $R/rma_*.txt; do echo "$(basename $f) $(grep -E 'graph (floor|st: epoch round trip)|ratio graph st / graph floor' $f | awk '{print $(NF-1)}' | tr '\n' ' ')"; done
for f in $R/new*.txt $R/base*.txt $R/nccl*.txt; do echo "$(basename $f) $(grep -h 'mode=.* total' $f | sed -e 's/(100 blocks.*//' -e 's/total_s.*per_exchange_us//')"; done
tar czf $OUT/s1.tgz -C $R .
