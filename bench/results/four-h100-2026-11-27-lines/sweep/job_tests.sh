#!/usr/bin/env bash
# 4 H100s: allreduce/reduce 64 KiB-2 MiB under protocol and channel settings (tuning), then the
# collective and line-put gpu tests with the shared tagged-line store.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
mkdir -p /tmp/o13; O=/tmp/o13; 
nvidia-smi -L > $O/machine.txt; head -1 $O/machine.txt
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest"
t0=$(date +%s)
pack() { cd $O && tar czf $OUT/n13t.tgz ctest* 2>/dev/null; cd - > /dev/null; }
timeout 150 ctest --test-dir build-gpu -L gpu -LE internode -R "coll|enqueue|random_epochs|line" -E np4 -j2 --timeout 60 > $O/ctest2.txt 2>&1; echo "ctest np2 rc $? $(( $(date +%s) - t0 )) s"; grep -E "tests passed|Failed|Timeout" $O/ctest2.txt
pack
timeout 120 ctest --test-dir build-gpu -L gpu -LE internode -R "coll.*np4" -j1 --timeout 60 > $O/ctest4.txt 2>&1; echo "ctest np4 rc $? $(( $(date +%s) - t0 )) s"; grep -E "tests passed|Failed|Timeout" $O/ctest4.txt
pack
echo "total: $(( $(date +%s) - t0 )) s"
