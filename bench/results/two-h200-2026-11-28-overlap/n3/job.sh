#!/usr/bin/env bash
# Session 18 job 3: af9cf03 (one element-type dispatch; run group width as a shift: the epoch
# kernel no longer spills) against e700aa1, alternated twice in one job: Faces st --graph packed and
# --datatypes (with and without wrap-around), NCCL in every round; dtype_bench 8-byte blocks;
# Faces with wrap-around and --launch-overlap with the library's own launch overlap on and off;
# gpu tests of datatypes, Faces and the stencil on the head.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
T0=$(date +%s); R=/tmp/n3; mkdir -p $R
{ nvidia-smi -L; nvidia-smi topo -m; nproc; } > $R/machine.txt 2>&1
NG=$(nvidia-smi -L | wc -l)
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF"
rm -rf /tmp/base && mkdir -p /tmp/base && tar xzf .carry/basee70.tgz -C /tmp/base
( cd /tmp/base && cmake -S . -B build $CF -DCMAKE_PREFIX_PATH=$OLDPWD/.carry/doctest > $R/conf-base.txt 2>&1 &&
  cmake --build build -j$(( $(nproc) / 2 )) --target faces_cuda dtype_bench_cuda > $R/build-base.txt 2>&1; echo "base $?" >> $R/builds ) &
cmake -S . -B build $CF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest > $R/configure.txt 2>&1
cmake --build build -j$(nproc) > $R/build.txt 2>&1; echo "new $?" >> $R/builds
wait; cat $R/builds; grep -q "new 0" $R/builds || { tail -40 $R/build.txt; exit 1; }
echo "build $(( $(date +%s) - T0 )) s, $NG GPUs"
run() { local name=$1; shift; timeout 90 "$@" > $R/$name.txt 2>&1; echo "$name rc $? $(( $(date +%s) - T0 )) s"; }
F=build/examples/faces/faces_cuda; FB=/tmp/base/build/examples/faces/faces_cuda
if [ "$NG" -ge 4 ]; then NP=4; G="2 2 1 15 14 13 12 10 10 -100"; else NP=2; G="2 1 1 15 14 13 12 10 10 -100"; fi
M="mpiexec -n $NP --bind-to none"
for i in 1 2; do
  for p in "" "--periodic"; do
    t=$i${p:+p}
    run dt_head_$t $M $F --json $R/dt_head_$t.json --mode st --graph --datatypes $p $G
    run dt_base_$t $M $FB --json $R/dt_base_$t.json --mode st --graph --datatypes $p $G
    run st_head_$t $M $F --json $R/st_head_$t.json --mode st --graph $p $G
    run st_base_$t $M $FB --json $R/st_base_$t.json --mode st --graph $p $G
    run nccl_$t $M $F --json $R/nccl_$t.json --mode nccl --graph $p $G
  done
  run ovp_lib1_$i $M $F --json $R/ovp_lib1_$i.json --mode st --graph --periodic --launch-overlap $G
  run ovp_lib0_$i $M -x MPIX_ST_LAUNCH_OVERLAP=0 $F --json $R/ovp_lib0_$i.json --mode st --graph --periodic --launch-overlap $G
  run nov_lib0_$i $M -x MPIX_ST_LAUNCH_OVERLAP=0 $F --json $R/nov_lib0_$i.json --mode st --graph --periodic $G
done
D=build/examples/bench/dtype_bench_cuda; DB=/tmp/base/build/examples/bench/dtype_bench_cuda
for i in 1 2; do
  run dtb_head_$i mpiexec -n 2 --bind-to none $D --mib 8 --block 8 --json $R/dtb_head_$i.json
  run dtb_base_$i mpiexec -n 2 --bind-to none $DB --mib 8 --block 8 --json $R/dtb_base_$i.json
done
for f in $R/dt_*.txt $R/st_*.txt $R/nccl_*.txt $R/ov*.txt $R/nov*.txt; do echo "$(basename $f) $(grep -h 'mode=.* total' $f | sed -e 's/(100 blocks.*//' -e 's/total_s.*per_exchange_us//')"; done
for f in $R/dtb_*.txt; do echo "$(basename $f)"; grep -h "GB/s" $f | head -4; done
(cd build && timeout $(( 560 - ($(date +%s) - T0) )) ctest -L gpu -R "datatypes|stencil|faces" --output-on-failure --timeout 60) > $R/ctest_gpu.txt 2>&1
echo "ctest rc $? at $(( $(date +%s) - T0 )) s"
grep -E "tests passed|Failed|\*\*\*" $R/ctest_gpu.txt | tail -15
tar czf $OUT/n3.tgz -C $R .
