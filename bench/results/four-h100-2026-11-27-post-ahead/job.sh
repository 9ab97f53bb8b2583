#!/usr/bin/env bash
# 4 GPUs: Faces st with two windows posted one exchange ahead (--st-windows 2, the new default)
# against one window (--st-windows 1), same binary, alternating; gpu tests of the epoch paths.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
mkdir -p /tmp/o18; O=/tmp/o18; rm -rf $O/*
{ nvidia-smi -L; nvidia-smi topo -m; nproc; nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1; } > $O/machine.txt 2>&1; head -4 $O/machine.txt
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest"
t0=$(date +%s)
cat .carry/commit18.txt > $O/commit.txt
pack() { cd $O && tar czf $OUT/n18.tgz * 2>/dev/null; cd - > /dev/null; }
if [ ! -x build-gpu/examples/faces/faces_cuda ] || [ "$1" = build ]; then
  touch kernels/*.cu kernels/*.h
  cmake -S . -B build-gpu $cfg > $O/cfg.log 2>&1 && cmake --build build-gpu -j 16 > $O/build.log 2>&1; echo "build rc $? $(( $(date +%s) - t0 )) s"; tail -3 $O/build.log
fi
F=build-gpu/examples/faces/faces_cuda
run_faces() { # name, args...
  local n=$1; shift
  timeout 60 mpiexec -n 4 --bind-to none $F --json $O/faces_$n.json "$@" > $O/faces_$n.txt 2>&1; echo "faces $n rc $? $(( $(date +%s) - t0 )) s"
  grep -E "mode=.*per_exchange_us" $O/faces_$n.txt | sed -E 's/.*mode=([a-z0-9]+).*per_exchange_us avg=([0-9.]+).*/  \1 \2/' | tr '\n' ' '; echo
}
G="2 2 1 15 14 13 12 10 10"
if [ "$1" = build ]; then
  timeout 200 ctest --test-dir build-gpu -L gpu -LE internode -R "graph|random_epochs|datatypes|faces|epochs|watchdog" -E np4 -j2 --timeout 60 > $O/ctest_np2.txt 2>&1; echo "ctest np2 rc $?"; grep -E "tests passed|Failed|Timeout|Not Run" $O/ctest_np2.txt
  timeout 120 ctest --test-dir build-gpu -L gpu -LE internode -R "(graph|random_epochs|faces).*np4" -j1 --timeout 60 > $O/ctest_np4.txt 2>&1; echo "ctest np4 rc $?"; grep -E "tests passed|Failed|Timeout|Not Run" $O/ctest_np4.txt
  echo "tests done: $(( $(date +%s) - t0 )) s"; pack
  for r in 1; do
    run_faces comm_w2_$r --mode all --graph --st-windows 2 $G -100
    run_faces comm_w1_$r --mode all --graph --st-windows 1 $G -100
    run_faces dt_w2_$r --mode all --graph --datatypes --st-windows 2 $G -100
    run_faces dt_w1_$r --mode all --graph --datatypes --st-windows 1 $G -100
  done
  pack
else
  for r in 2 3; do
    run_faces comm_w2_$r --mode all --graph --st-windows 2 $G -100
    run_faces comm_w1_$r --mode all --graph --st-windows 1 $G -100
    run_faces dt_w2_$r --mode all --graph --datatypes --st-windows 2 $G -100
    run_faces dt_w1_$r --mode all --graph --datatypes --st-windows 1 $G -100
    run_faces per_w2_$r --mode all --graph --periodic --st-windows 2 $G -100
    run_faces per_w1_$r --mode all --graph --periodic --st-windows 1 $G -100
    pack
  done
  run_faces dtper_w2 --mode all --graph --datatypes --periodic --st-windows 2 $G -100
  run_faces dtper_w1 --mode all --graph --datatypes --periodic --st-windows 1 $G -100
  run_faces sums_w2 --mode all --graph --st-windows 2 $G 100
  run_faces sums_w1 --mode all --graph --st-windows 1 $G 100
  run_faces sumsper_w2 --mode all --graph --periodic --st-windows 2 $G 100
  run_faces eager_w2 --mode all --st-windows 2 $G -100
  run_faces eager_w1 --mode all --st-windows 1 $G -100
  pack
fi
echo "total: $(( $(date +%s) - t0 )) s"
pack; ls $OUT
