#!/usr/bin/env bash
# Session 17 job 6 (4 x H200): 351d63b (derived-datatype pieces as short runs, 32-bit thread cursor,
# grid sized by runs) against 2f4cdcf, alternated twice in one job, Faces 2x2x1 --datatypes with
# and without wrap-around, packed st and NCCL in the same rounds; dtype_bench; gpu tests of
# datatypes, Faces --datatypes and the stencil.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
T0=$(date +%s); R=/tmp/m6; mkdir -p $R
{ nvidia-smi -L; nvidia-smi topo -m; nproc; } > $R/machine.txt 2>&1
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF"
rm -rf /tmp/base && mkdir -p /tmp/base && tar xzf .carry/base2f4.tgz -C /tmp/base
( cd /tmp/base && cmake -S . -B build $CF -DCMAKE_PREFIX_PATH=$OLDPWD/.carry/doctest > $R/conf-base.txt 2>&1 &&
  cmake --build build -j16 --target faces_cuda dtype_bench_cuda > $R/build-base.txt 2>&1; echo "base $?" >> $R/builds ) &
cmake -S . -B build $CF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest > $R/configure.txt 2>&1
cmake --build build -j48 > $R/build.txt 2>&1; echo "new $?" >> $R/builds
wait; cat $R/builds; grep -q "new 0" $R/builds || { tail -40 $R/build.txt; exit 1; }
echo "build $(( $(date +%s) - T0 )) s"
run() { local name=$1; shift; timeout 60 "$@" > $R/$name.txt 2>&1; echo "$name rc $? $(( $(date +%s) - T0 )) s"; }
F=build/examples/faces/faces_cuda; FB=/tmp/base/build/examples/faces/faces_cuda
G="2 2 1 15 14 13 12 10 10 -100"
for i in 1 2; do
  for p in "" "--periodic"; do
    t=$i${p:+p}
    run st_runs_$t mpiexec -n 4 --bind-to none $F --json $R/st_runs_$t.json --mode st --graph --datatypes $p $G
    run st_base_$t mpiexec -n 4 --bind-to none $FB --json $R/st_base_$t.json --mode st --graph --datatypes $p $G
    run st_packed_$t mpiexec -n 4 --bind-to none $F --json $R/st_packed_$t.json --mode st --graph $p $G
    run nccl_$t mpiexec -n 4 --bind-to none $F --json $R/nccl_$t.json --mode nccl --graph $p $G
  done
done
D=build/examples/bench/dtype_bench_cuda; DB=/tmp/base/build/examples/bench/dtype_bench_cuda
for b in 1024 8; do
  run dt_runs_$b mpiexec -n 2 --bind-to none $D --mib $(( b < 64 ? 8 : 64 )) --block $b --json $R/dt_runs_$b.json
  run dt_base_$b mpiexec -n 2 --bind-to none $DB --mib $(( b < 64 ? 8 : 64 )) --block $b --json $R/dt_base_$b.json
done
for f in $R/st_*.txt $R/nccl_*.txt; do echo "$(basename $f) $(grep -h 'mode=.* total' $f | sed -e 's/(100 blocks.*//' -e 's/total_s.*per_exchange_us//')"; done
for f in $R/dt_*.txt; do echo "$(basename $f)"; grep -h "GB/s" $f; done
(cd build && timeout $(( 335 - ($(date +%s) - T0) )) ctest -L gpu -R "datatypes|stencil" --output-on-failure --timeout 60) > $R/ctest_gpu.txt 2>&1
echo "ctest rc $? at $(( $(date +%s) - T0 )) s"
grep -E "tests passed|Failed|\*\*\*" $R/ctest_gpu.txt | tail -15
tar czf $OUT/m6.tgz -C $R .
