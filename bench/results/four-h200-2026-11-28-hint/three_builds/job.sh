#!/usr/bin/env bash
# Session 20 job 3 (4 x H200): three builds alternated in one job. base = 22923bd; fix = 22923bd
# with the epoch kernel's start loads issued before any shared-memory store (fixonly.patch);
# new = the working tree (that, plus the line hint). rma_bench --graph on 2 ranks, Faces 2x1x1
# (2 ranks) and 2x2x1 (4 ranks) st --graph, NCCL in every round; then the whole gpu label on new.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
T0=$(date +%s); R=/tmp/s3; mkdir -p $R
{ nvidia-smi -L; nvidia-smi topo -m; nproc; } > $R/machine.txt 2>&1
NG=$(nvidia-smi -L | wc -l); J=$(( $(nproc) / 4 ))
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF"
for b in base fix; do
  tgz=.carry/base229.tgz; [ $b = fix ] && tgz=.carry/basefix.tgz
  rm -rf /tmp/$b && mkdir -p /tmp/$b && tar xzf $tgz -C /tmp/$b
  ( cd /tmp/$b && cmake -S . -B build $CF -DCMAKE_PREFIX_PATH=$OLDPWD/.carry/doctest > $R/conf-$b.txt 2>&1 &&
    cmake --build build -j$J --target faces_cuda rma_bench_cuda > $R/build-$b.txt 2>&1; echo "$b $?" >> $R/builds ) &
done
cmake -S . -B build $CF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest > $R/configure.txt 2>&1
cmake --build build -j$(( 2 * J )) > $R/build.txt 2>&1; echo "new $?" >> $R/builds
wait; cat $R/builds; grep -q "new 0" $R/builds || { tail -40 $R/build.txt; exit 1; }
echo "build $(( $(date +%s) - T0 )) s, $NG GPUs"
run() { local name=$1; shift; timeout 90 "$@" > $R/$name.txt 2>&1; echo "$name rc $? $(( $(date +%s) - T0 )) s"; }
dir() { [ $1 = new ] && echo build || echo /tmp/$1/build; }
for i in 1 2; do
  for b in new fix base; do run rma_${b}_$i mpiexec -n 2 --bind-to none $(dir $b)/examples/bench/rma_bench_cuda --graph --json $R/rma_${b}_$i.json; done
done
G2="2 1 1 15 14 13 12 10 10 -100"; G4="2 2 1 15 14 13 12 10 10 -100"
for i in 1 2; do
  for c in 2 4; do
    [ $c -gt $NG ] && continue
    G=$G2; [ $c = 4 ] && G=$G4; M="mpiexec -n $c --bind-to none"
    for b in new fix base; do run ${b}${c}r_$i $M $(dir $b)/examples/faces/faces_cuda --json $R/${b}${c}r_$i.json --mode st --graph $G; done
    run nccl${c}r_$i $M build/examples/faces/faces_cuda --json $R/nccl${c}r_$i.json --mode nccl --graph $G
  done
done
for f in $R/rma_*.txt; do echo "$(basename $f) $(grep -E 'graph (floor|st: epoch round trip)|ratio graph st / graph floor' $f | awk '{print $(NF-1)}' | tr '\n' ' ')"; done
for f in $R/new*.txt $R/fix*.txt $R/base*.txt $R/nccl*.txt; do echo "$(basename $f) $(grep -h 'mode=.* total' $f | sed -e 's/(100 blocks.*//' -e 's/total_s.*per_exchange_us//')"; done
(cd build && timeout $(( 590 - ($(date +%s) - T0) )) ctest -L gpu --output-on-failure --timeout 90 -j1) > $R/ctest_gpu.txt 2>&1
echo "ctest rc $? at $(( $(date +%s) - T0 )) s"
grep -E "tests passed|Failed|\*\*\*|Total Test" $R/ctest_gpu.txt | tail -15
tar czf $OUT/s3.tgz -C $R .
