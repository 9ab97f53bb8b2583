# Tests of this topic (see the list at the end of tests/CMakeLists.txt).
# The model-based random test (tests/random/, doc/guide/reliability-random-test.md): plans of the
# library's calls, legal and illegal, drawn from a seed on every rank and checked against a
# reference model: the error class of every call, window and result bytes at every
# synchronisation, a per-step deadline, no /dev/shm segment left behind by the job's processes.
add_executable(test_random_model random/runner.cpp random/generator.cpp random/rounds.cpp random/colls.cpp
                                 random/model.cpp random/types.cpp)
target_link_libraries(test_random_model PRIVATE mpixst ${CMAKE_DL_LIBS})
target_compile_options(test_random_model PRIVATE -Wall -Wextra)

# The CI run: fixed seeds on 2 and 3 ranks (20 and 12), 200 steps each, with the feature groups of open findings
# left out (notes: random_findings.md; each has a regression case below, DISABLED until its fix
# lands: then enable the case and drop the group from random_ci_avoid, so CI draws it again).
# The seeds are ones that pass with the groups left out. MPICH only: the plans draw windows the
# library does not manage, which Open MPI's one-sided components may not create in containers.
set(random_ci_avoid "eager_replay_coll")
set(random_ci_seeds_np2 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20)
set(random_ci_seeds_np3 1 2 3 4 5 6 7 8 9 10 11 12)
set(random_ci_steps 200)
string(REPLACE ";" " " random_preflags "${MPIEXEC_PREFLAGS}")
set(random_runner ${CMAKE_CURRENT_SOURCE_DIR}/random/run-seeds.sh --exe $<TARGET_FILE:test_random_model>
    --mpiexec ${MPIEXEC_EXECUTABLE} --deadline 60 --quiet)
if(random_preflags)
  list(APPEND random_runner --preflags "${random_preflags}")
endif()
if(MPIX_ST_MPI_FLAVOR STREQUAL "mpich")
  foreach(np 2 3)
    string(REPLACE ";" " " random_seed_list "${random_ci_seeds_np${np}}")
    add_test(NAME mpi.random_model.np${np}
             COMMAND ${random_runner} --np ${np} --seeds "${random_seed_list}" --steps ${random_ci_steps}
                     --avoid ${random_ci_avoid})
    set_tests_properties(mpi.random_model.np${np} PROPERTIES LABELS mpi TIMEOUT 900
      ENVIRONMENT "MPIX_ST_BACKEND=host;MPIX_ST_WATCHDOG_MS=${MPIX_TEST_WATCHDOG_MS}")
  endforeach()

  # Regression cases of the findings: name, ranks, seed, steps, groups left out (the other open
  # findings). A case is disabled until its fix lands; then it is ENABLED.
  function(random_finding name np seed steps avoid)
    cmake_parse_arguments(F "ENABLED" "" "" ${ARGN})
    set(extra)
    if(avoid)
      set(extra --avoid ${avoid})
    endif()
    add_test(NAME mpi.random_model.finding.${name}
             COMMAND ${random_runner} --np ${np} --seeds ${seed} --steps ${steps} ${extra})
    set(disabled TRUE)
    if(F_ENABLED)
      set(disabled FALSE)
    endif()
    set_tests_properties(mpi.random_model.finding.${name} PROPERTIES LABELS mpi TIMEOUT 300 DISABLED ${disabled}
      ENVIRONMENT "MPIX_ST_BACKEND=host;MPIX_ST_WATCHDOG_MS=${MPIX_TEST_WATCHDOG_MS}")
  endfunction()
  # F1 (decided: the library refuses, the man pages say so, the model expects the refusal): a stream
  # post closed by MPI_Win_wait, a host post by MPIX_Win_wait_stream.
  random_finding(mixed_close 3 102 200 eager_replay_coll,replay_freed ENABLED)
  # F2 (fixed): MPI_Comm_free after replays of captured collectives freed memory a queued collective
  # used. Plans reach the sequence rarely: the regression case is the sequence itself.
  add_executable(test_random_case_comm_free random/case_comm_free_after_replay.cpp)
  target_link_libraries(test_random_case_comm_free PRIVATE mpixst)
  target_compile_options(test_random_case_comm_free PRIVATE -Wall -Wextra)
  add_test(NAME mpi.random_model.finding.comm_free_after_replay
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 3 ${MPIEXEC_PREFLAGS}
                   $<TARGET_FILE:test_random_case_comm_free> ${MPIEXEC_POSTFLAGS})
  set_tests_properties(mpi.random_model.finding.comm_free_after_replay PROPERTIES LABELS mpi TIMEOUT 120
    ENVIRONMENT "MPIX_ST_BACKEND=host;MPIX_ST_WATCHDOG_MS=${MPIX_TEST_WATCHDOG_MS}")
  # F5 (decided: not allowed): one rank runs a graph's collectives eagerly while the others launch
  # it. The man pages said any mix was allowed; they now require the same calls, captured or
  # enqueued, and graphs launched alike (a replay is no call the library sees: the call board's
  # numbers part and the communicator fails). The group stays out of CI: the model does not predict
  # which call first reports the failure. The case is kept, disabled, for the day replays count.
  random_finding(eager_replay_coll 3 4 200 "")
  # F6 (fixed): a graph launched after its window was freed, on another stream than it was
  # captured on: the launch stream's synchronisation said "a stream wait timed out" instead of
  # MPI_ERR_WIN (the report went to the capture stream).
  random_finding(replay_freed 3 142 200 eager_replay_coll ENABLED)
  # F8 (model bugs, fixed in the generator): a launch after the window was freed expected
  # MPI_ERR_WIN on ranks that had captured none of its epochs, and a launch step given up for a
  # synchronisation first left errors expected on some ranks' streams (seeds 1103, 1173, 1175 on 4
  # ranks, found by the long run).
  random_finding(stale_launch 4 1173 200 eager_replay_coll ENABLED)
endif()
