#!/usr/bin/env bash
# 4 GPUs, HEAD: every non-internode gpu test natively on 4 GPUs; Faces 2x2x1 (packed and
# --datatypes, periodic and not, graph) with st, rma, nccl, p2p in each run.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
mkdir -p /tmp/o; O=/tmp/o; rm -rf $O/*
{ nvidia-smi -L; nvidia-smi topo -m; nproc; nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1; } > $O/machine.txt 2>&1; head -4 $O/machine.txt
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest"
t0=$(date +%s)
touch kernels/*.cu kernels/*.h
cmake -S . -B build-gpu $cfg > $O/cfg.log 2>&1 && cmake --build build-gpu -j 16 > $O/build.log 2>&1; echo "build rc $? $(( $(date +%s) - t0 )) s"; tail -3 $O/build.log
git log --oneline -1 > $O/commit.txt
timeout 150 ctest --test-dir build-gpu -L gpu -LE internode -E np4 -j2 --timeout 60 > $O/ctest_np2.txt 2>&1; echo "ctest np2 rc $?"; grep -E "tests passed|Failed|Timeout|Not Run" $O/ctest_np2.txt
timeout 100 ctest --test-dir build-gpu -L gpu -LE internode -R np4 -j1 --timeout 60 > $O/ctest_np4.txt 2>&1; echo "ctest np4 rc $?"; grep -E "tests passed|Failed|Timeout|Not Run" $O/ctest_np4.txt
echo "tests done: $(( $(date +%s) - t0 )) s"
F=build-gpu/examples/faces/faces_cuda
run_faces() { # name, args...
  local n=$1; shift
  timeout 60 mpiexec -n 4 --bind-to none $F --json $O/faces_$n.json "$@" > $O/faces_$n.txt 2>&1; echo "faces $n rc $? $(( $(date +%s) - t0 )) s"
  grep -E "mode=.*per_exchange_us" $O/faces_$n.txt | sed -E 's/.*mode=([a-z0-9]+).*per_exchange_us avg=([0-9.]+).*/  \1 \2/' | tr '\n' ' '; echo
}
for r in 1 2; do
run_faces comm_$r --mode all --graph 2 2 1 15 14 13 12 10 10 -100
run_faces comm_per_$r --mode all --graph --periodic 2 2 1 15 14 13 12 10 10 -100
run_faces dt_comm_$r --mode all --graph --datatypes 2 2 1 15 14 13 12 10 10 -100
run_faces dt_comm_per_$r --mode all --graph --datatypes --periodic 2 2 1 15 14 13 12 10 10 -100
done
run_faces sums --mode all --graph 2 2 1 15 14 13 12 10 10 100
run_faces sums_per --mode all --graph --periodic 2 2 1 15 14 13 12 10 10 100
echo "total: $(( $(date +%s) - t0 )) s"
cd $O && tar czf $OUT/n1.tgz * 2>/dev/null; ls $OUT
