# The launch trace on Faces st: cmake -DMPIEXEC=.. -DNP_FLAG=.. -DPREFLAGS=.. -DFACES=path
#   -DPYTHON=python3 -DSUMMARY=scripts/trace-summary.py -DOUT=dir -P run_faces_trace_test.cmake
# Runs Faces st, captured, on 2 ranks with MPIX_ST_TRACE=<OUT>/t; passes when each rank wrote its
# file and the summary finds the merged launches of posting ahead (post, complete and wait in
# one: every part) with phases of each, in its table and in its JSON.
file(REMOVE_RECURSE "${OUT}")
file(MAKE_DIRECTORY "${OUT}")
separate_arguments(pre UNIX_COMMAND "${PREFLAGS}")
execute_process(COMMAND ${CMAKE_COMMAND} -E env "MPIX_ST_TRACE=${OUT}/t" ${MPIEXEC} ${NP_FLAG} 2 ${pre} ${FACES}
                        --mode st --graph 2 1 1 3 2 2 3 1 2 -16
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "faces exited with ${rc}")
endif()
file(GLOB traces "${OUT}/t.*.csv")
list(LENGTH traces n)
if(NOT n EQUAL 2)
  message(FATAL_ERROR "expected a trace file per rank, found ${n}: ${traces}")
endif()
execute_process(COMMAND ${PYTHON} ${SUMMARY} ${traces} --skip 4 --json "${OUT}/summary.json"
                RESULT_VARIABLE rc OUTPUT_VARIABLE table ERROR_VARIABLE err)
message("${table}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "trace-summary.py exited with ${rc}")
endif()
set(merged "lead+waits+ops+signals+trail+counts")
string(FIND "${table}" "${merged}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the summary has no '${merged}' launches")
endif()
file(READ "${OUT}/summary.json" json)
foreach(phase IN ITEMS wait data signal trail finish launch)
  string(JSON count ERROR_VARIABLE bad GET "${json}" groups "${merged}" ${phase} n)
  if(bad OR count LESS 1)
    message(FATAL_ERROR "summary.json: no '${phase}' figures for the merged launches (${bad})")
  endif()
endforeach()
