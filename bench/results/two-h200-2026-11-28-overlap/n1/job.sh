#!/usr/bin/env bash
# Session 18 job 1: Faces --launch-overlap (Faces' own kernels launched with programmatic dependent
# launch) on and off, st --graph (packed, --datatypes) and nccl --graph alternated twice in one job;
# one traced st run each way. NG = GPUs of the machine (grid 2x1x1 on 2, 2x2x1 on 4).
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
T0=$(date +%s); R=/tmp/n1; mkdir -p $R
{ nvidia-smi -L; nvidia-smi topo -m; nproc; git log --oneline -1; } > $R/machine.txt 2>&1
NG=$(nvidia-smi -L | wc -l)
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF"
cmake -S . -B build $CF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest > $R/configure.txt 2>&1
cmake --build build -j$(nproc) > $R/build.txt 2>&1 || { tail -40 $R/build.txt; exit 1; }
echo "build $(( $(date +%s) - T0 )) s, $NG GPUs"
run() { local name=$1; shift; timeout 90 "$@" > $R/$name.txt 2>&1; echo "$name rc $? $(( $(date +%s) - T0 )) s"; }
F=build/examples/faces/faces_cuda
if [ "$NG" -ge 4 ]; then NP=4; G="2 2 1 15 14 13 12 10 10 -100"; else NP=2; G="2 1 1 15 14 13 12 10 10 -100"; fi
M="mpiexec -n $NP --bind-to none"
for i in 1 2; do
  for ov in "" "--launch-overlap"; do
    t=$i${ov:+o}
    run st_$t $M $F --json $R/st_$t.json --mode st --graph $ov $G
    run nccl_$t $M $F --json $R/nccl_$t.json --mode nccl --graph $ov $G
    run dt_$t $M $F --json $R/dt_$t.json --mode st --graph --datatypes $ov $G
    run stp_$t $M $F --json $R/stp_$t.json --mode st --graph --periodic $ov $G
    run ncclp_$t $M $F --json $R/ncclp_$t.json --mode nccl --graph --periodic $ov $G
  done
done
for ov in "" "--launch-overlap"; do
  t=tr${ov:+o}; mkdir -p $R/$t
  run st_$t $M -x MPIX_ST_TRACE=$R/$t/t $F --mode st --graph $ov $G
  python3 scripts/trace-summary.py $R/$t/t.*.csv --skip 200 > $R/$t/summary.txt 2>&1; rm -f $R/$t/t.*.csv
done
for f in $R/st_*.txt $R/nccl*.txt $R/dt_*.txt $R/stp_*.txt; do echo "$(basename $f) $(grep -h 'mode=.* total' $f | sed -e 's/(100 blocks.*//' -e 's/total_s.*per_exchange_us//') $(grep -ho 'launch-overlap: [a-z]*' $f)"; done
for t in tr tro; do echo "== $t"; head -30 $R/$t/summary.txt; done
tar czf $OUT/n1.tgz -C $R .
