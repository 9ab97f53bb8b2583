#!/usr/bin/env bash
# Job 2: collective kernels of every path inlined (new) against 52e5d96 (base), built side by side.
export NCCL_NVLS_ENABLE=0 HWLOC_COMPONENTS=-opencl OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=sm,pt2pt
T0=$(date +%s)
{ nvidia-smi -L; nproc; git log --oneline -1; git status --short | head -30; } > $OUT/machine.txt 2>&1
CFG="-G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ST_MPI=openmpi -DMPIX_ST_OFI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DMPIX_ST_HIP=OFF -DCMAKE_PREFIX_PATH=$PWD/.carry/doctest"
mkdir -p /tmp/base && tar xzf .carry/base52.tgz -C /tmp/base
( cmake -S /tmp/base -B /tmp/base/build $CFG > $OUT/base_configure.txt 2>&1 && \
  /usr/bin/time -f "base build %e s" cmake --build /tmp/base/build -j8 --target coll_bench_cuda > $OUT/base_build.txt 2>&1 ) &
cmake -S . -B build $CFG > $OUT/configure.txt 2>&1
/usr/bin/time -f "new build %e s" cmake --build build -j12 > $OUT/build.txt 2>&1 || { tail -40 $OUT/build.txt; exit 1; }
tail -1 $OUT/build.txt
wait
tail -1 $OUT/base_build.txt
echo "builds done $(( $(date +%s) - T0 )) s"
NEW=build/examples/bench/coll_bench_cuda; BASE=/tmp/base/build/examples/bench/coll_bench_cuda
A="--colls allreduce,reduce,bcast,allgather,alltoall --impls mpixst,vendor --graph --auto-only --iters 50 --warmup 5"
M4="--min-bytes 65536 --max-bytes 16777216 --step 2"
for i in 1 2; do
  for v in base new; do
    bin=$NEW; [ $v = base ] && bin=$BASE
    MPIX_ST_BACKEND=cuda mpiexec -n 4 --bind-to none $bin $A $M4 --json $OUT/mid4_${v}_$i.json > $OUT/mid4_${v}_$i.txt 2>&1
  done
done
echo "mid4 done $(( $(date +%s) - T0 )) s"
for v in base new; do
  bin=$NEW; [ $v = base ] && bin=$BASE
  MPIX_ST_BACKEND=cuda mpiexec -n 2 --bind-to none $bin $A --min-bytes 8 --max-bytes 16777216 --step 4 --json $OUT/all2_${v}.json > $OUT/all2_${v}.txt 2>&1
done
echo "all2 done $(( $(date +%s) - T0 )) s"
(cd build && timeout $(( 590 - ($(date +%s) - T0) )) ctest -L gpu -R "collectives|local_memory|coll|enqueue" --output-on-failure --timeout 120) > $OUT/ctest.txt 2>&1
echo "ctest rc $? at $(( $(date +%s) - T0 )) s"
grep -E "tests passed|Failed|\*\*\*|Not Run" $OUT/ctest.txt | tail -12
python3 scripts/compare-coll.py $OUT/mid4_base_1.json $OUT/mid4_new_1.json $OUT/mid4_base_2.json $OUT/mid4_new_2.json 2>&1 | head -8
python3 scripts/compare-coll.py $OUT/all2_base.json $OUT/all2_new.json 2>&1 | head -8
