#!/bin/bash
# Sanitizer builds of the core library and the host backend (no GPU plugins, no examples):
#   build-asan  ASan + UBSan; runs the mpi-labelled suite (SANITIZE_ASAN_TESTS: a ctest -R regex
#               to run part of it, SANITIZE_ASAN_LABEL to change the label, default mpi)
#   build-tsan  TSan; runs the host-stream, doorbell-agent (ofi.unit) and throttle-budget unit tests
# Suppressions (tests/sanitizers/*.supp) name only the MPI library's own reports. Each part's
# time is printed. Usage: scripts/sanitize.sh [asan|tsan|all] (default all). MPI_FLAGS passes
# more cmake arguments (e.g. the MPICH compilers when Open MPI is the default).
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
jobs=${JOBS:-2}
supp=$PWD/tests/sanitizers
common=(-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMPIX_ST_CUDA=OFF -DMPIX_ST_HIP=OFF
        -DMPIX_ST_BUILD_EXAMPLES=OFF ${MPI_FLAGS:-})
status=0

if [ "$what" = asan ] || [ "$what" = all ]; then
  start=$(date +%s)
  flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
  cmake -S . -B build-asan "${common[@]}" -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
        -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
  cmake --build build-asan -j "$jobs"
  built=$(date +%s)
  # Processes are started by mpiexec (not instrumented): the runtime is found through the
  # instrumented programs themselves. detect_odr_violation: the test programs and the library
  # both carry doctest/xdev inline variables.
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:detect_odr_violation=0:halt_on_error=1"
  # MPICH's MPI_Init loads hwloc's pci plugin, and through it libpciaccess, which parses pci.ids
  # (1.3 MB) in many small allocations: 8-9 s per process under ASan, about 1,200 s of the leg's
  # 3,000 (an MPI_Init-only test took 9 s instead of 0.4 s). It also leaked: libpciaccess keeps
  # those names in heap memory held by its globals and is dlclose()d when MPICH destroys its
  # topology, so LeakSanitizer saw ~900 KB per process without a module to suppress. Without the
  # pci component (HWLOC_COMPONENTS=-pci on the ctest run below) neither happens. What it costs:
  # hwloc finds no PCI devices here, so the NIC choice's hwloc path is covered by its unit test on
  # a recorded topology (unit.test_nic_choice), not in this run.
  export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS="suppressions=$supp/ubsan.supp:print_stacktrace=1:halt_on_error=1"
  args=(-L "${SANITIZE_ASAN_LABEL:-mpi}" --output-on-failure)
  [ -n "${SANITIZE_ASAN_TESTS:-}" ] && args+=(-R "$SANITIZE_ASAN_TESTS")
  # Left out of the ASan run (SANITIZE_ASAN_EXCLUDE replaces this ctest -E regex; empty: none):
  #  - mpi.watchdog.vnode2.np4: its 300 ms watchdog is a timing limit; 4 instrumented ranks on 2
  #    cores missed it once in two runs here (a legitimate epoch after the watchdog cases).
  #  - mpi.collectives.vnode2.np4 and mpi.collectives.channels.vnode2.np4: 4 instrumented ranks on
  #    2 cores, each with a stream thread and a doorbell agent polling the sockets provider: once in
  #    three runs here (the channels variant once in CI) one inter-node epoch of a collective was
  #    not done within the 20 s watchdog (14-68 s a run otherwise). The uninstrumented legs run
  #    both; ASan runs vnode2.np3 and vnode1.np4.
  exclude=${SANITIZE_ASAN_EXCLUDE-'^mpi\.(watchdog|collectives|collectives\.channels)\.vnode2\.np4$'}
  [ -n "$exclude" ] && args+=(-E "$exclude")
  HWLOC_COMPONENTS=-pci ctest --test-dir build-asan "${args[@]}" || status=1
  end=$(date +%s)
  echo "sanitize: ASan+UBSan build $((built - start)) s, tests $((end - built)) s"
fi

if [ "$what" = tsan ] || [ "$what" = all ]; then
  start=$(date +%s)
  flags="-fsanitize=thread -fno-omit-frame-pointer"
  cmake -S . -B build-tsan "${common[@]}" -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
        -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=thread" >/dev/null
  cmake --build build-tsan -j "$jobs" --target test_host_stream test_triggered_budget test_ofi_unit
  built=$(date +%s)
  # history_size=7: stacks of writes made long before (the provider's, see tsan.supp) must be restored
  # for the suppression to match them.
  export TSAN_OPTIONS="suppressions=$supp/tsan.supp:halt_on_error=1:second_deadlock_stack=1:history_size=7"
  ctest --test-dir build-tsan -R '^(unit\.test_host_stream|unit\.test_triggered_budget|ofi\.unit)$' \
        --output-on-failure || status=1
  end=$(date +%s)
  echo "sanitize: TSan build $((built - start)) s, tests $((end - built)) s"
fi
exit $status
