# tests/expect_task_records.cmake — runs a program with --dep-gen and
# --scope-stats (the command after `--`, which writes under OUTPUT_DIR) and
# checks that it exits 0 and that every rank 0 .. P - 1 wrote its first
# dispatch's records: deps.json naming the rank and its tasks, and
# scope_stats/scope_stats.jsonl. Registered by anyp_add_task_records_test
# (tests/examples.cmake) and the MPI tests (tests/mpi.cmake).
#
#   cmake -DOUTPUT_DIR=/tmp/t -DP=3 -P tests/expect_task_records.cmake -- \
#         build/release/examples/07_dynamic_rank_count -d 0,1,2 --dep-gen \
#         --scope-stats --output-dir /tmp/t
cmake_minimum_required(VERSION 3.25)

set(CMD "")
set(_after_dashes FALSE)
math(EXPR _last "${CMAKE_ARGC} - 1")
foreach(_i RANGE 0 ${_last})
  if(_after_dashes)
    list(APPEND CMD "${CMAKE_ARGV${_i}}")
  elseif("${CMAKE_ARGV${_i}}" STREQUAL "--")
    set(_after_dashes TRUE)
  endif()
endforeach()

file(REMOVE_RECURSE "${OUTPUT_DIR}")
execute_process(COMMAND ${CMD} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "expect_task_records: exit ${code}\nstdout:\n${out}\nstderr:\n${err}")
endif()
math(EXPR _last_rank "${P} - 1")
foreach(r RANGE 0 ${_last_rank})
  set(dir "${OUTPUT_DIR}/dfx_outputs/rank${r}/d0")
  file(READ "${dir}/deps.json" deps)
  string(FIND "${deps}" "{\"rank\": ${r}, \"dispatch\": 0, \"function\": " at)
  string(FIND "${deps}" "\"deps\": [" task)
  if(NOT at EQUAL 0 OR task EQUAL -1)
    message(FATAL_ERROR "expect_task_records: ${dir}/deps.json is not rank ${r}'s with a task:\n${deps}")
  endif()
  file(READ "${dir}/scope_stats/scope_stats.jsonl" stats)
  string(FIND "${stats}" "\"scope\": \"dispatch\", \"tasks\": " line)
  if(line EQUAL -1)
    message(FATAL_ERROR "expect_task_records: ${dir}/scope_stats/scope_stats.jsonl:\n${stats}")
  endif()
endforeach()
