#!/usr/bin/env bash
# Session 17 job 5 (one H200), after the grid is sized by runs again and the thread cursor counts in 32 bits: the derived-datatype walker alone. Faces 1x1x1 with wrap-around: every
# face, edge and corner is a put to this rank itself, so the epoch's data is the walker's copies and
# no link. Short runs (MPIX_ST_DTYPE_RUNS=1, default) against a run a piece (=0) and against 2f4cdcf
# (pairs), alternated twice; packed st beside them.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
T0=$(date +%s); R=/tmp/m5; mkdir -p $R
{ nvidia-smi -L; nvidia-smi topo -m; nproc; } > $R/machine.txt 2>&1
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF"
rm -rf /tmp/base && mkdir -p /tmp/base && tar xzf .carry/base2f4.tgz -C /tmp/base
( cd /tmp/base && cmake -S . -B build $CF -DCMAKE_PREFIX_PATH=$OLDPWD/.carry/doctest > $R/conf-base.txt 2>&1 &&
  cmake --build build -j8 --target faces_cuda > $R/build-base.txt 2>&1; echo "base $?" >> $R/builds ) &
cmake -S . -B build $CF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest > $R/configure.txt 2>&1
cmake --build build -j10 --target faces_cuda test_datatypes_cuda > $R/build.txt 2>&1; echo "new $?" >> $R/builds
wait; cat $R/builds; grep -q "new 0" $R/builds || { tail -40 $R/build.txt; exit 1; }
echo "build $(( $(date +%s) - T0 )) s"
run() { local name=$1; shift; timeout 100 "$@" > $R/$name.txt 2>&1; echo "$name rc $? $(( $(date +%s) - T0 )) s"; }
F=build/examples/faces/faces_cuda; FB=/tmp/base/build/examples/faces/faces_cuda
G="1 1 1 15 14 13 12 10 10 -100"
for i in 1 2; do
  run st_runs_$i mpiexec -n 1 --bind-to none -x MPIX_ST_DTYPE_RUNS=1 $F --json $R/st_runs_$i.json --mode st --graph --datatypes --periodic $G
  run st_pieces_$i mpiexec -n 1 --bind-to none -x MPIX_ST_DTYPE_RUNS=0 $F --json $R/st_pieces_$i.json --mode st --graph --datatypes --periodic $G
  run st_base_$i mpiexec -n 1 --bind-to none $FB --json $R/st_base_$i.json --mode st --graph --datatypes --periodic $G
  run st_packed_$i mpiexec -n 1 --bind-to none $F --json $R/st_packed_$i.json --mode st --graph --periodic $G
  run nccl_$i mpiexec -n 1 --bind-to none $F --json $R/nccl_$i.json --mode nccl --graph --periodic $G
done
for f in $R/st_*.txt $R/nccl_*.txt; do echo "$(basename $f) $(grep -h 'mode=.* total\|passed' $f | sed 's/(100 blocks.*//' | tr '\n' ' ')"; done
(cd build && timeout 150 ctest -L gpu -R "gpu.datatypes.np2|gpu.datatypes.np3" --output-on-failure --timeout 70) > $R/ctest_gpu.txt 2>&1
echo "ctest rc $?"; grep -E "tests passed|Failed|\*\*\*" $R/ctest_gpu.txt | tail
tar czf $OUT/m5.tgz -C $R .
