#!/usr/bin/env bash
# The test command: installs dependencies, builds, and runs the CPU test suites with real MPI
# processes, as a matrix of legs, each in a build directory of its own:
#   mpich    MPICH, everything built (host, plus the CUDA and HIP plugins where their compilers
#            exist), the full CPU suite: ctest -LE gpu                               (build-test)
#   openmpi  Open MPI (installed here by setup.sh), the mpi-labelled suite without the inter-node
#            tests, which the mpich leg runs: ctest -L mpi -LE internode
#                                                                             (build-test-openmpi)
#   noofi    MPICH without libfabric (-DMPIX_ST_OFI=OFF), the single-node suite: ctest -LE gpu
#                                                                               (build-test-noofi)
#   rma_suite  MPICH's test/mpi/rma, from the installed MPICH's source package, with libmpixst
#            linked before the MPI: a test that passes plain must pass interposed (the plain build
#            runs only what fails interposed); the tests of scripts/mpich-rma-long.txt only on
#            demand (scripts/mpich-rma-suite.sh --long)
#                                                (scripts/mpich-rma-suite.sh, build-test-rma-suite)
#   rma_suite_openmpi  the same tests built and run with Open MPI  (build-test-rma-suite-openmpi)
#   hip      the HIP plugin compiles wherever hipcc exists (in build-test)
#   sanitize scripts/sanitize.sh all: ASan+UBSan build of the core and host backend running the
#            mpi-labelled suite, TSan build running the host-stream, doorbell-agent and
#            throttle-budget unit tests                                  (build-asan, build-tsan)
# Which legs:
#   MPIX_ST_CI_LEGS=mpich,openmpi,...  these legs, in this order (`all`: every leg; .ci/run's default)
#   MPIX_ST_MPI=mpich|openmpi          otherwise: one MPI's leg (default mpich), plus hip after mpich
# Other settings:
#   BUILD_DIR=...        the mpich leg's build directory (default build-test); others get a suffix
#   MPIX_ST_CTEST_J=n    ctest's parallelism (default 1)
#   MPIX_ST_CMAKE_ARGS   more CMake arguments for every leg (e.g. -DMPIX_ST_CUDA=OFF)
# GPU tests (ctest label `gpu`) are built by the mpich leg but left out; run them on a GPU machine
# with: ctest --test-dir build-test -L gpu
#
# Adding a leg: write leg_<name> (configure_and_build, then run_ctest) and add <name> to all_legs.
set -euo pipefail
cd "$(dirname "$0")/.."
all_legs=(mpich openmpi noofi hip rma_suite rma_suite_openmpi sanitize)

build_root=${BUILD_DIR:-build-test}
ctest_j=${MPIX_ST_CTEST_J:-1}

# configure_and_build <dir> <mpich|openmpi> [cmake arguments...]: the MPI is named explicitly
# (Debian's suffixed wrappers and launcher where they exist: plain mpicc may be either MPI).
configure_and_build() {
  local dir=$1 mpi=$2
  shift 2
  local mpi_args=(-DMPIX_ST_MPI="$mpi")
  if command -v "mpicc.$mpi" >/dev/null 2>&1; then
    mpi_args+=(-DMPI_C_COMPILER="$(command -v "mpicc.$mpi")" -DMPI_CXX_COMPILER="$(command -v "mpicxx.$mpi")"
               -DMPIEXEC_EXECUTABLE="$(command -v "mpiexec.$mpi")")
  fi
  local extra=()
  read -r -a extra <<<"${MPIX_ST_CMAKE_ARGS:-}"
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${mpi_args[@]}" "$@" "${extra[@]}"
  cmake --build "$dir" -j "$(nproc)"
}

# run_ctest <dir> [ctest arguments...]
run_ctest() {
  local dir=$1
  shift
  (cd "$dir" && ctest "$@" --output-on-failure --timeout 300 -j "$ctest_j")
}

leg_mpich() {
  configure_and_build "$build_root" mpich
  run_ctest "$build_root" -LE gpu
}

# The CPU legs below build no GPU plugin: the mpich leg covers them.
no_plugins=(-DMPIX_ST_CUDA=OFF -DMPIX_ST_HIP=OFF)

leg_openmpi() {
  scripts/setup.sh openmpi
  configure_and_build "$build_root-openmpi" openmpi "${no_plugins[@]}"
  # The inter-node suites exercise libfabric, which the mpich leg covers; here they would double
  # the leg's time on CI's two cores.
  run_ctest "$build_root-openmpi" -L mpi -LE internode
}

leg_noofi() {
  configure_and_build "$build_root-noofi" mpich -DMPIX_ST_OFI=OFF "${no_plugins[@]}"
  run_ctest "$build_root-noofi" -LE gpu
}

# The HIP backend must at least compile wherever hipcc exists (the mpich leg's build directory).
leg_hip() {
  if ! command -v hipcc >/dev/null 2>&1; then
    echo "test.sh: no hipcc, nothing to check"
    return 0
  fi
  [ -f "$build_root/build.ninja" ] || cmake -S . -B "$build_root" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DMPIX_ST_MPI=mpich -DMPIX_ST_HIP=ON
  cmake --build "$build_root" -j "$(nproc)" --target mpixst_hip
  if [ ! -f "$build_root/libmpixst_hip.so" ]; then
    echo "test.sh: hipcc is present but the HIP backend was not built" >&2
    return 1
  fi
}

# MPICH's own RMA tests with libmpixst linked before the MPI, on the host backend: every test that
# passes plain must pass interposed (scripts/mpich-rma-suite.sh; the library of the mpich leg's build).
leg_rma_suite() {
  if [ ! -f "$build_root/libmpixst.so" ]; then
    [ -f "$build_root/build.ninja" ] || configure_and_build "$build_root" mpich
    cmake --build "$build_root" -j "$(nproc)" --target mpixst
  fi
  scripts/mpich-rma-suite.sh --lib "$build_root" --work "$build_root-rma-suite" --jobs "$(nproc)"
}

# The same tests built and run with Open MPI (the library of the openmpi leg's build).
leg_rma_suite_openmpi() {
  scripts/setup.sh openmpi
  if [ ! -f "$build_root-openmpi/libmpixst.so" ]; then
    [ -f "$build_root-openmpi/build.ninja" ] || configure_and_build "$build_root-openmpi" openmpi "${no_plugins[@]}"
    cmake --build "$build_root-openmpi" -j "$(nproc)" --target mpixst
  fi
  scripts/mpich-rma-suite.sh --mpi openmpi --lib "$build_root-openmpi" --work "$build_root-rma-suite-openmpi" \
    --jobs "$(nproc)"
}

# Sanitizer builds (MPICH, no GPU plugins): scripts/sanitize.sh prints each part's build and test time.
leg_sanitize() {
  local mpi_flags=""
  if command -v mpicc.mpich >/dev/null 2>&1; then
    mpi_flags="-DMPIX_ST_MPI=mpich -DMPI_C_COMPILER=$(command -v mpicc.mpich) -DMPI_CXX_COMPILER=$(command -v mpicxx.mpich) -DMPIEXEC_EXECUTABLE=$(command -v mpiexec.mpich)"
  fi
  MPI_FLAGS="$mpi_flags" JOBS="$(nproc)" scripts/sanitize.sh all
}

if [ -n "${MPIX_ST_CI_LEGS:-}" ]; then
  if [ "$MPIX_ST_CI_LEGS" = all ]; then
    legs=("${all_legs[@]}")
  else
    IFS=', ' read -r -a legs <<<"$MPIX_ST_CI_LEGS"
  fi
else
  case "${MPIX_ST_MPI:-mpich}" in
    mpich) legs=(mpich hip) ;;
    openmpi) legs=(openmpi) ;;
    *) echo "test.sh: MPIX_ST_MPI=${MPIX_ST_MPI} is not mpich or openmpi" >&2; exit 2 ;;
  esac
fi
for leg in "${legs[@]}"; do
  if ! declare -F "leg_$leg" >/dev/null; then
    echo "test.sh: unknown leg '$leg' (known: ${all_legs[*]})" >&2
    exit 2
  fi
done

scripts/setup.sh
summary=()
failed=0
total_start=$SECONDS
for leg in "${legs[@]}"; do
  echo "==== test.sh: leg $leg"
  start=$SECONDS
  set +e
  (set -e; "leg_$leg")
  rc=$?
  set -e
  seconds=$((SECONDS - start))
  result=passed
  if [ "$rc" -ne 0 ]; then
    result="FAILED (exit $rc)"
    failed=1
  fi
  summary+=("$(printf '%-10s %-18s %4d min %02d s' "$leg" "$result" $((seconds / 60)) $((seconds % 60)))")
  echo "==== test.sh: leg $leg $result after ${seconds} s"
done
total=$((SECONDS - total_start))
echo "==== test.sh: legs"
printf '  %s\n' "${summary[@]}"
printf '  %-10s %-18s %4d min %02d s\n' total "" $((total / 60)) $((total % 60))
exit "$failed"
