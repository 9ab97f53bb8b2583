#!/usr/bin/env bash
# 2 GPUs: the launch trace with stamps written at the launch's end (tests, Faces st traced and not:
# what tracing costs), Faces against NCCL, and the copy grid's block size (16, 8, 4 KiB) by trace.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
O=/tmp/o22; mkdir -p $O; rm -rf $O/*
{ nvidia-smi -L; nvidia-smi topo -m; nproc; nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1; } > $O/machine.txt 2>&1; head -2 $O/machine.txt
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest"
t0=$(date +%s)
cat .carry/commit22.txt > $O/commit.txt
pack() { cd $O && tar czf $OUT/n22.tgz * 2>/dev/null; cd - > /dev/null; }
B=build-gpu/examples/bench
F=build-gpu/examples/faces/faces_cuda
G="2 1 1 15 14 13 12 10 10"
# name, trace(0/1), args...
run_faces() {
  local n=$1 tr=$2; shift 2
  if [ "$tr" = 1 ]; then mkdir -p $O/tr_$n; export MPIX_ST_TRACE=$O/tr_$n/t; else unset MPIX_ST_TRACE; fi
  timeout 60 mpiexec -n 2 --bind-to none $F --json $O/faces_$n.json "$@" > $O/faces_$n.txt 2>&1; echo "faces $n rc $? $(( $(date +%s) - t0 )) s"
  unset MPIX_ST_TRACE
  grep -E "mode=.*per_exchange_us" $O/faces_$n.txt | sed -E 's/.*mode=([a-z0-9]+).*per_exchange_us avg=([0-9.]+).*/  \1 \2/' | tr '\n' ' '; echo
  if [ "$tr" = 1 ]; then python3 scripts/trace-summary.py $O/tr_$n/t.*.csv --skip 200 --json $O/tr_$n/summary.json > $O/tr_$n/summary.txt 2>&1; cat $O/tr_$n/summary.txt; fi
}
coll() { # name, timeout, args...
  local n=$1 t=$2; shift 2
  timeout $t mpiexec -n 2 --bind-to none $B/coll_bench_cuda --json $O/coll_$n.json "$@" > $O/coll_$n.txt 2>&1; echo "coll $n rc $? $(( $(date +%s) - t0 )) s"
}
touch kernels/*.cu kernels/*.h
cmake -S . -B build-gpu $cfg > $O/cfg.log 2>&1 && cmake --build build-gpu -j 16 > $O/build.log 2>&1; echo "build rc $? $(( $(date +%s) - t0 )) s"; tail -3 $O/build.log
timeout 90 ctest --test-dir build-gpu -L gpu -LE internode -R "launch_trace|graph_merge|faces.st" -E np4 -j2 --timeout 60 > $O/ctest_np2.txt 2>&1; echo "ctest np2 rc $? $(( $(date +%s) - t0 )) s"; grep -E "tests passed|Failed|Timeout|Not Run|\*\*\*" $O/ctest_np2.txt
pack
run_faces all_packed 0 --mode all --graph $G -100
run_faces all_dt 0 --mode all --graph --datatypes $G -100
pack
run_faces st_off_1 0 --mode st --graph $G -100
run_faces st_on_1 1 --mode st --graph $G -100
run_faces st_off_2 0 --mode st --graph $G -100
run_faces st_on_2 1 --mode st --graph $G -100
run_faces dt_on 1 --mode st --graph --datatypes $G -100
pack
for kib in 8 4; do
  export MPIX_ST_COPY_BLOCK_KIB=$kib
  run_faces kib${kib}_on 1 --mode st --graph $G -100
  run_faces kib${kib}_off 0 --mode st --graph $G -100
  run_faces kib${kib}_dt_off 0 --mode st --graph --datatypes $G -100
  unset MPIX_ST_COPY_BLOCK_KIB
  pack
done
run_faces st_off_3 0 --mode st --graph $G -100
run_faces dt_off_3 0 --mode st --graph --datatypes $G -100
echo "total: $(( $(date +%s) - t0 )) s"
pack; ls $OUT
