#!/usr/bin/env bash
# Session 17 job 2: derived-datatype pieces walked as runs (MPIX_ST_DTYPE_RUNS=1, default) against a
# run a piece (=0) and against 2f4cdcf (pairs), alternated twice in one job; packed st and NCCL in
# the same runs; dtype_bench; the gpu tests of datatypes, Faces, stencil and graphs.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
T0=$(date +%s); R=/tmp/m2; mkdir -p $R
{ nvidia-smi -L; nvidia-smi topo -m; nproc; } > $R/machine.txt 2>&1
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF"
rm -rf /tmp/base && mkdir -p /tmp/base && tar xzf .carry/base2f4.tgz -C /tmp/base
( cd /tmp/base && cmake -S . -B build $CF -DCMAKE_PREFIX_PATH=$OLDPWD/.carry/doctest > $R/conf-base.txt 2>&1 &&
  cmake --build build -j20 --target faces_cuda dtype_bench_cuda > $R/build-base.txt 2>&1; echo "base $?" >> $R/builds ) &
cmake -S . -B build $CF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest > $R/configure.txt 2>&1
cmake --build build -j44 > $R/build.txt 2>&1; echo "new $?" >> $R/builds
wait; cat $R/builds; grep -q "new 0" $R/builds || { tail -40 $R/build.txt; exit 1; }
echo "build $(( $(date +%s) - T0 )) s"
run() { local name=$1; shift; timeout 100 "$@" > $R/$name.txt 2>&1; echo "$name rc $? $(( $(date +%s) - T0 )) s"; }
F=build/examples/faces/faces_cuda; FB=/tmp/base/build/examples/faces/faces_cuda
G="2 2 1 15 14 13 12 10 10 -100"
for i in 1 2; do
  for p in "" "--periodic"; do
    t=$i${p:+p}
    run all_runs_$t mpiexec -n 4 --bind-to none -x MPIX_ST_DTYPE_RUNS=1 $F --json $R/all_runs_$t.json --mode all --graph --datatypes $p $G
    run st_pieces_$t mpiexec -n 4 --bind-to none -x MPIX_ST_DTYPE_RUNS=0 $F --json $R/st_pieces_$t.json --mode st --graph --datatypes $p $G
    run st_base_$t mpiexec -n 4 --bind-to none $FB --json $R/st_base_$t.json --mode st --graph --datatypes $p $G
    run st_packed_$t mpiexec -n 4 --bind-to none $F --json $R/st_packed_$t.json --mode st --graph $p $G
  done
done
D=build/examples/bench/dtype_bench_cuda; DB=/tmp/base/build/examples/bench/dtype_bench_cuda
for b in 1024 8; do
  run dt_runs_$b mpiexec -n 2 --bind-to none -x MPIX_ST_DTYPE_RUNS=1 $D --mib 64 --block $b --json $R/dt_runs_$b.json
  run dt_pieces_$b mpiexec -n 2 --bind-to none -x MPIX_ST_DTYPE_RUNS=0 $D --mib 64 --block $b --json $R/dt_pieces_$b.json
  run dt_base_$b mpiexec -n 2 --bind-to none $DB --mib 64 --block $b --json $R/dt_base_$b.json
done
grep -h "mode=st total\|mode=nccl total" $R/all_runs_*.txt | sed 's/(100 blocks.*//'
for f in $R/st_*.txt; do echo "$(basename $f) $(grep -h 'mode=st total' $f | sed 's/(100 blocks.*//')"; done
grep -h "GB/s\|ratio" $R/dt_*.txt | head -40
(cd build && timeout $(( 590 - ($(date +%s) - T0) )) ctest -L gpu -R "datatype|faces|stencil|graph" --output-on-failure --timeout 120) > $R/ctest_gpu.txt 2>&1
echo "ctest rc $? at $(( $(date +%s) - T0 )) s"
grep -E "tests passed|Failed|\*\*\*" $R/ctest_gpu.txt | tail -15
tar czf $OUT/m2.tgz -C $R .
