#!/usr/bin/env bash
# 2 GPUs: the early first poll and the spread copy grid, each against its switch in one binary
# (MPIX_ST_EARLY_POLL=0, MPIX_ST_COPY_SPREAD_BLOCKS=0), alternating; the epoch gpu suites.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
O=/tmp/o23; mkdir -p $O; rm -rf $O/*
{ nvidia-smi -L; nvidia-smi topo -m; nproc; nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1; } > $O/machine.txt 2>&1; head -2 $O/machine.txt
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest"
t0=$(date +%s)
cat .carry/commit23.txt > $O/commit.txt
pack() { cd $O && tar czf $OUT/n23.tgz * 2>/dev/null; cd - > /dev/null; }
B=build-gpu/examples/bench
F=build-gpu/examples/faces/faces_cuda
G="2 1 1 15 14 13 12 10 10"
run_faces() { # name, env assignment or -, args...
  local n=$1 e=$2; shift 2
  env ${e/#-/X=1} timeout 60 mpiexec -n 2 --bind-to none $F --json $O/faces_$n.json "$@" > $O/faces_$n.txt 2>&1; local rc=$?
  echo "faces $n rc $rc $(( $(date +%s) - t0 )) s: $(grep -E 'mode=.*per_exchange_us' $O/faces_$n.txt | sed -E 's/.*mode=([a-z0-9]+).*per_exchange_us avg=([0-9.]+).*/\1 \2/' | tr '\n' ' ')"
}
touch kernels/*.cu kernels/*.h
cmake -S . -B build-gpu $cfg > $O/cfg.log 2>&1 && cmake --build build-gpu -j 16 > $O/build.log 2>&1; echo "build rc $? $(( $(date +%s) - t0 )) s"; tail -2 $O/build.log
timeout 100 ctest --test-dir build-gpu -L gpu -LE internode -R "graph|random_epochs|faces.st|datatypes|epochs|watchdog|launch_trace|put_get" -E np4 -j2 --timeout 60 > $O/ctest_np2.txt 2>&1; echo "ctest np2 rc $? $(( $(date +%s) - t0 )) s"; grep -E "tests passed|Failed|Timeout|Not Run|\*\*\*" $O/ctest_np2.txt
pack
for r in 1 2; do
  run_faces packed_new_$r - --mode st --graph $G -100
  run_faces packed_noearly_$r MPIX_ST_EARLY_POLL=0 --mode st --graph $G -100
  run_faces packed_nospread_$r MPIX_ST_COPY_SPREAD_BLOCKS=0 --mode st --graph $G -100
  run_faces per_new_$r - --mode st --graph --periodic $G -100
  run_faces per_nospread_$r MPIX_ST_COPY_SPREAD_BLOCKS=0 --mode st --graph --periodic $G -100
  run_faces dt_new_$r - --mode st --graph --datatypes $G -100
  run_faces dt_noearly_$r MPIX_ST_EARLY_POLL=0 --mode st --graph --datatypes $G -100
  pack
done
for e in - MPIX_ST_EARLY_POLL=0; do
  n=new; [ "$e" = - ] || n=noearly
  env ${e/#-/X=1} timeout 60 mpiexec -n 2 --bind-to none $B/rma_bench_cuda --graph --iters 2000 --host-iters 100 --sizes-mib 1 --json $O/rma_$n.json > $O/rma_$n.txt 2>&1; echo "rma $n: $(grep -E 'graph st: epoch round trip \(|graph floor' $O/rma_$n.txt | tr -s ' ' | tr '\n' '|')"
done
run_faces all_new - --mode all --graph $G -100
echo "total: $(( $(date +%s) - t0 )) s"
pack; ls $OUT
