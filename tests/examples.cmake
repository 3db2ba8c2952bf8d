# tests/examples.cmake — ctest registrations for the ladder examples
# (docs/ladder-steps.md §4): every step and mode at several P, plus the command-line
# error cases. Each test runs through tests/expect_output.cmake, which checks
# the exit code and the exact stdout/stderr. Label: `examples`.
#
# Steps 01-07 are registered first, then steps 08-16.

set(ANYP_EXPECT_OUTPUT_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/expect_output.cmake)
# Seconds before ctest kills one example run (a deadlock must not eat CI time).
set(ANYP_EXAMPLE_TEST_TIMEOUT 300 CACHE STRING "ctest timeout of one example test, in seconds")

# "0,1,...,P-1" into `out_var`.
function(anyp_device_list P out_var)
  if(P LESS 1)
    set(${out_var} "" PARENT_SCOPE)
    return()
  endif()
  set(devices "0")
  if(P GREATER 1)
    math(EXPR last "${P} - 1")
    foreach(i RANGE 1 ${last})
      string(APPEND devices ",${i}")
    endforeach()
  endif()
  set(${out_var} "${devices}" PARENT_SCOPE)
endfunction()

# anyp_add_example_test(<example> <mode> <P> [OP <op>] [TAG <tag> EXTRA <args...>])
#   Test `example.<example>.<mode>.P<P>` (with OP: `example.<example>.<mode>.<op>.P<P>`;
#   with TAG, `.<tag>` before `.P<P>`): runs the example with
#   `-d 0,1,...,P-1` (plus `--mode <mode>` unless mode is "-", plus
#   `--op <op>` when given, plus the EXTRA arguments) and passes when it
#   exits 0 with stdout exactly "OK\n".
function(anyp_add_example_test example mode P)
  cmake_parse_arguments(PARSE_ARGV 3 arg "" "OP;TAG" "EXTRA")
  anyp_device_list(${P} devices)
  set(args -d ${devices})
  set(test_name example.${example}.${mode})
  if(NOT mode STREQUAL "-")
    list(APPEND args --mode ${mode})
  endif()
  if(DEFINED arg_OP)
    list(APPEND args --op ${arg_OP})
    string(APPEND test_name .${arg_OP})
  endif()
  if(DEFINED arg_TAG)
    string(APPEND test_name .${arg_TAG})
  endif()
  list(APPEND args ${arg_EXTRA})
  string(APPEND test_name .P${P})
  add_test(NAME ${test_name}
    COMMAND ${CMAKE_COMMAND}
      -DEXPECT_EXIT=0
      "-DEXPECT_STDOUT=OK\\n"
      -P ${ANYP_EXPECT_OUTPUT_SCRIPT}
      -- $<TARGET_FILE:${example}> ${args})
  set_tests_properties(${test_name} PROPERTIES
    LABELS examples
    TIMEOUT ${ANYP_EXAMPLE_TEST_TIMEOUT})
endfunction()

# anyp_add_cli_error_test(<name> <example> <args> <expected_exit> <expected_stderr>)
#   Test `<name>`: runs the example with <args> (a ;-list, e.g. "-d;0") and
#   passes when it exits with <expected_exit>, prints nothing on stdout, and
#   prints exactly <expected_stderr> followed by one newline on stderr.
#   An empty <expected_stderr> ("") skips the stderr check.
function(anyp_add_cli_error_test name example args expected_exit expected_stderr)
  set(stderr_check "")
  if(NOT expected_stderr STREQUAL "")
    # Newlines travel as the two characters \n (expect_output.cmake turns them back).
    string(REPLACE "\n" "\\n" expected_stderr "${expected_stderr}")
    # A ';' would split the -D argument in two when ${stderr_check} expands.
    string(REPLACE ";" "\\;" expected_stderr "${expected_stderr}")
    set(stderr_check "-DEXPECT_STDERR=${expected_stderr}\\n")
  endif()
  add_test(NAME ${name}
    COMMAND ${CMAKE_COMMAND}
      -DEXPECT_EXIT=${expected_exit}
      -DEXPECT_STDOUT=
      ${stderr_check}
      -P ${ANYP_EXPECT_OUTPUT_SCRIPT}
      -- $<TARGET_FILE:${example}> ${args})
  set_tests_properties(${name} PROPERTIES
    LABELS examples
    TIMEOUT ${ANYP_EXAMPLE_TEST_TIMEOUT})
endfunction()

# anyp_add_compile_only_test(<example> <mode> <P>)
#   Test `example.<example>.<mode>.compile_only.P<P>`: runs the example with
#   `-d 0,...,P-1 --compile-only --output-dir <build>/compile_only/...` and
#   passes when it exits 0, prints exactly "compile_only done: <dir>\n" on
#   stdout and nothing on stderr.
function(anyp_add_compile_only_test example mode P)
  anyp_device_list(${P} devices)
  set(output_dir ${CMAKE_CURRENT_BINARY_DIR}/compile_only/${example}/${mode}/P${P})
  set(args -d ${devices} --compile-only --output-dir ${output_dir})
  if(NOT mode STREQUAL "-")
    list(APPEND args --mode ${mode})
  endif()
  set(test_name example.${example}.${mode}.compile_only.P${P})
  add_test(NAME ${test_name}
    COMMAND ${CMAKE_COMMAND}
      -DEXPECT_EXIT=0
      "-DEXPECT_STDOUT=compile_only done: ${output_dir}\\n"
      -DEXPECT_STDERR=
      -P ${ANYP_EXPECT_OUTPUT_SCRIPT}
      -- $<TARGET_FILE:${example}> ${args})
  set_tests_properties(${test_name} PROPERTIES
    LABELS examples
    TIMEOUT ${ANYP_EXAMPLE_TEST_TIMEOUT})
endfunction()

# anyp_add_task_records_test(<example> <mode> <P>)
#   Test `example.<example>.<mode>.task_records.P<P>`: runs the example with
#   `-d 0,...,P-1 --dep-gen --scope-stats --output-dir <build>/task_records/...`
#   and checks every rank's records (tests/expect_task_records.cmake).
function(anyp_add_task_records_test example mode P)
  anyp_device_list(${P} devices)
  set(output_dir ${CMAKE_CURRENT_BINARY_DIR}/task_records/${example}/${mode}/P${P})
  set(args -d ${devices} --dep-gen --scope-stats --output-dir ${output_dir})
  if(NOT mode STREQUAL "-")
    list(APPEND args --mode ${mode})
  endif()
  set(test_name example.${example}.${mode}.task_records.P${P})
  add_test(NAME ${test_name}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT_DIR=${output_dir} -DP=${P}
      -P ${CMAKE_CURRENT_LIST_DIR}/expect_task_records.cmake
      -- $<TARGET_FILE:${example}> ${args})
  set_tests_properties(${test_name} PROPERTIES
    LABELS examples
    TIMEOUT ${ANYP_EXAMPLE_TEST_TIMEOUT})
endfunction()

# ---- every step and mode at several P ------------------------------------------
# Steps 01-07 run at any P >= 2 (docs/ladder-steps.md §3) and are cheap, so each
# also runs at P = 256.
set(ANYP_EXAMPLE_MODES_01_hello_rank -)
set(ANYP_EXAMPLE_MODES_02_programming_model -)
set(ANYP_EXAMPLE_MODES_03_window_buffer -)
set(ANYP_EXAMPLE_MODES_04_barrier hand builtin)
set(ANYP_EXAMPLE_MODES_05_remote_load_store load store)
set(ANYP_EXAMPLE_MODES_06_put_get put get)
set(ANYP_EXAMPLE_MODES_07_dynamic_rank_count put get)
set(ANYP_ANY_P_EXAMPLES
  01_hello_rank 02_programming_model 03_window_buffer 04_barrier
  05_remote_load_store 06_put_get 07_dynamic_rank_count)
foreach(example ${ANYP_ANY_P_EXAMPLES})
  foreach(mode ${ANYP_EXAMPLE_MODES_${example}})
    foreach(P 2 3 4 5 8 64 256)
      anyp_add_example_test(${example} ${mode} ${P})
    endforeach()
  endforeach()
  # Every step exits 2 at P = 1 (docs/ladder-steps.md §4).
  anyp_add_cli_error_test(cli.${example}.P1 ${example} "-d;0" 2
    "need at least 2 devices, got [0]")
endforeach()

# ---- the command line (src/cli/example_cli.cpp), on step 07 ---------------------
anyp_add_cli_error_test(cli.07_dynamic_rank_count.duplicate_device 07_dynamic_rank_count
  "-d;0,0" 2 "-d/--device: device 0 is listed twice")
anyp_add_cli_error_test(cli.07_dynamic_rank_count.negative_device 07_dynamic_rank_count
  "-d;-1,0" 2 "-d/--device: device id -1 is negative")
anyp_add_cli_error_test(cli.07_dynamic_rank_count.not_a_number 07_dynamic_rank_count
  "-d;a,b" 2 "-d/--device: 'a' is not a device id (a non-negative integer)")
anyp_add_cli_error_test(cli.07_dynamic_rank_count.real_hardware 07_dynamic_rank_count
  "-p;a2a3" 2
  "platform 'a2a3' is real Ascend hardware, which anyp does not drive; supported platforms: a2a3sim, a5sim")
anyp_add_cli_error_test(cli.07_dynamic_rank_count.unknown_platform 07_dynamic_rank_count
  "-p;foo" 2 "unknown platform 'foo'; supported platforms: a2a3sim, a5sim")
anyp_add_cli_error_test(cli.07_dynamic_rank_count.bad_mode 07_dynamic_rank_count
  "--mode;bogus" 2 "--mode: 'bogus' is not one of put, get")
# `-d ''`: an empty list element vanishes when a list expands into arguments
# (the helpers' ${args}, expect_output.cmake's execute_process(COMMAND ${CMD})),
# so a shell supplies the empty argument here.
add_test(NAME cli.07_dynamic_rank_count.empty_devices
  COMMAND ${CMAKE_COMMAND}
    -DEXPECT_EXIT=2
    -DEXPECT_STDOUT=
    "-DEXPECT_STDERR=-d/--device: empty device list\\n"
    -P ${ANYP_EXPECT_OUTPUT_SCRIPT}
    -- sh -c "exec \"$0\" -d ''" $<TARGET_FILE:07_dynamic_rank_count>)
set_tests_properties(cli.07_dynamic_rank_count.empty_devices PROPERTIES
  LABELS examples
  TIMEOUT ${ANYP_EXAMPLE_TEST_TIMEOUT})

# ---- --compile-only: one artifact directory per P --------------------------------
anyp_add_compile_only_test(07_dynamic_rank_count put 3)

# ---- --dep-gen / --scope-stats: every rank's task records -------------------------
anyp_add_task_records_test(07_dynamic_rank_count put 3)
anyp_add_task_records_test(k7_multi_block blocks 5)

# ---- steps 08-16 ------------------------------------------------------------------
# Every step, mode and (steps 11, 14) --op at P = 2, 3, 4, 5, 8, plus large P.
# Steps 09 and 10 need SIZE % (8*P) == 0, i.e. P divides 120 (docs/ladder-steps.md §3):
# they run at P = 2, 3, 4, 5, 6, 8 and, as their large P, at 24 and 120
# (64 does not divide 120). The others also run at 64 and 256, except the
# builtin ring of step 11, which stops at 64: a limit set when the builtin ring
# ran a full-mesh barrier every round (4(P-1)^2 notifies per rank, about a
# minute at 256); it now sends 2P-1 (docs/collectives.md §3.3).
set(ANYP_EXAMPLE_MODES_08_allreduce_mesh -)
set(ANYP_EXAMPLE_MODES_09_allreduce_two_phase -)
set(ANYP_EXAMPLE_MODES_10_allreduce_ring -)
set(ANYP_EXAMPLE_MODES_11_allreduce_reveal mesh ring)
set(ANYP_EXAMPLE_MODES_12_broadcast hand builtin)
set(ANYP_EXAMPLE_MODES_13_allgather hand builtin)
set(ANYP_EXAMPLE_MODES_14_reduce_scatter hand builtin)
set(ANYP_EXAMPLE_MODES_15_all_to_all hand builtin)
set(ANYP_EXAMPLE_MODES_16_putting_it_together shared separate)
set(ANYP_EXAMPLE_OPS_11_allreduce_reveal sum max min prod)
set(ANYP_EXAMPLE_OPS_14_reduce_scatter sum max min prod)
set(ANYP_EXAMPLE_P_09_allreduce_two_phase 2 3 4 5 6 8 24 120)
set(ANYP_EXAMPLE_P_10_allreduce_ring 2 3 4 5 6 8 24 120)
set(ANYP_COLLECTIVE_EXAMPLES
  08_allreduce_mesh 09_allreduce_two_phase 10_allreduce_ring 11_allreduce_reveal
  12_broadcast 13_allgather 14_reduce_scatter 15_all_to_all 16_putting_it_together)
foreach(example ${ANYP_COLLECTIVE_EXAMPLES})
  if(DEFINED ANYP_EXAMPLE_P_${example})
    set(ranks ${ANYP_EXAMPLE_P_${example}})
  else()
    set(ranks 2 3 4 5 8 64 256)
  endif()
  foreach(mode ${ANYP_EXAMPLE_MODES_${example}})
    foreach(P ${ranks})
      if(example STREQUAL "11_allreduce_reveal" AND mode STREQUAL "ring" AND P GREATER 64)
        continue()
      endif()
      if(DEFINED ANYP_EXAMPLE_OPS_${example})
        foreach(op ${ANYP_EXAMPLE_OPS_${example}})
          anyp_add_example_test(${example} ${mode} ${P} OP ${op})
        endforeach()
      else()
        anyp_add_example_test(${example} ${mode} ${P})
      endif()
    endforeach()
  endforeach()
  # Every step exits 2 at P = 1 (docs/ladder-steps.md §4).
  anyp_add_cli_error_test(cli.${example}.P1 ${example} "-d;0" 2
    "need at least 2 devices, got [0]")
endforeach()

# Steps 09 and 10: P must divide 120, checked before compiling, so also under
# --compile-only (docs/ladder-steps.md §3). P = 7 and P = 16 do not divide 120.
foreach(example 09_allreduce_two_phase 10_allreduce_ring)
  foreach(P 7 16)
    anyp_device_list(${P} devices)
    set(message "SIZE=960 cannot be split into 32-byte-aligned chunks for P=${P}: need SIZE % (8*P) == 0 (P must divide 120)")
    anyp_add_cli_error_test(cli.${example}.P${P} ${example} "-d;${devices}" 2 "${message}")
    anyp_add_cli_error_test(cli.${example}.compile_only.P${P} ${example}
      "-d;${devices};--compile-only" 2 "${message}")
  endforeach()
  anyp_add_compile_only_test(${example} - 6)
endforeach()

# --op is only on steps 11 and 14; the other steps refuse it.
anyp_add_cli_error_test(cli.14_reduce_scatter.bad_op 14_reduce_scatter
  "--op;avg" 2 "--op: 'avg' is not one of sum, max, min, prod")
anyp_add_cli_error_test(cli.12_broadcast.no_op_flag 12_broadcast "--op;sum" 2 "")

# ---- no false race reports: every step, mode and op, race-checked -------------------
# A cheap slice of scripts/race_sweep.sh (which runs P = 2..16 with 100
# schedules each): at P = 3 and 4, the checker on, the calibration schedule
# plus 10 PCT schedules, and every run must print OK. Label `examples`.
foreach(example ${ANYP_ANY_P_EXAMPLES} ${ANYP_COLLECTIVE_EXAMPLES})
  foreach(mode ${ANYP_EXAMPLE_MODES_${example}})
    foreach(P 3 4)
      if(DEFINED ANYP_EXAMPLE_OPS_${example})
        foreach(op ${ANYP_EXAMPLE_OPS_${example}})
          anyp_add_example_test(${example} ${mode} ${P} OP ${op} TAG checked
            EXTRA --check-races --explore 10)
        endforeach()
      else()
        anyp_add_example_test(${example} ${mode} ${P} TAG checked
          EXTRA --check-races --explore 10)
      endif()
    endforeach()
  endforeach()
endforeach()

# ---- step 11's logarithmic allreduces and Auto (collectives.md §3.3a-d) -------------
# Not in ANYP_EXAMPLE_MODES_11_allreduce_reveal, so that the step's mesh x ring x
# op x P grid above stays what it was: each mode at odd and even P with every
# op at P = 5, race-checked at P = 3 and 4; tests/runtime/log_allreduce_test.cpp
# checks them bit-exactly at P = 2..17 and large P.
foreach(mode recursive_doubling rabenseifner tree auto)
  foreach(P 2 3 8 64)
    anyp_add_example_test(11_allreduce_reveal ${mode} ${P} OP sum)
  endforeach()
  foreach(op max min prod)
    anyp_add_example_test(11_allreduce_reveal ${mode} 5 OP ${op})
  endforeach()
  foreach(P 3 4)
    anyp_add_example_test(11_allreduce_reveal ${mode} ${P} OP sum TAG checked
      EXTRA --check-races --explore 10)
  endforeach()
endforeach()

# --explain-collectives: the call, what Auto ran and five candidates, fastest
# first (exact text under an alpha-beta model: tests/runtime/timeline_fidelity_test.cpp;
# CMake's regexes have no {n}, hence the repeats);
# --cost and --timeline end with the Auto choice.
set(candidate "    +[0-9]+\\.[0-9][0-9][0-9] us  [A-Za-z]+(  <- runs)?\n")
set(auto_call "per_rank: pld\\.tensor\\.allreduce \\(Sum, [A-Za-z]+, data FP32 \\[1, 960\\]\\)")
anyp_device_list(8 devices)
foreach(form run compile_only)
  set(args -d ${devices} --mode auto --explain-collectives)
  set(first "OK")
  if(form STREQUAL "compile_only")
    set(out ${CMAKE_CURRENT_BINARY_DIR}/compile_only/11_allreduce_reveal/explain)
    list(APPEND args --compile-only --output-dir ${out})
    set(first "compile_only done: [^\n]+")
  endif()
  add_test(NAME cli.11_allreduce_reveal.explain_collectives.${form}
    COMMAND ${CMAKE_COMMAND}
      "-DEXPECT_STDOUT_REGEX=^${first}\ncollectives \\(model a2a3sim, P=8\\): per call, the algorithm it runs and each candidate's modeled time, fastest first\n  ${auto_call}: runs [A-Za-z]+ \\(chosen by Auto\\)\n${candidate}${candidate}${candidate}${candidate}${candidate}$"
      -DEXPECT_STDERR=
      -P ${ANYP_EXPECT_OUTPUT_SCRIPT}
      -- $<TARGET_FILE:11_allreduce_reveal> ${args})
  set_tests_properties(cli.11_allreduce_reveal.explain_collectives.${form} PROPERTIES
    LABELS examples TIMEOUT ${ANYP_EXAMPLE_TEST_TIMEOUT})
endforeach()
set(chosen " [A-Za-z]+ [0-9]+\\.[0-9][0-9][0-9] us,")
foreach(flag cost timeline)
  add_test(NAME cli.11_allreduce_reveal.auto_choice.${flag}
    COMMAND ${CMAKE_COMMAND}
      "-DEXPECT_STDOUT_REGEX=\n${auto_call}: Auto chose [A-Za-z]+:${chosen}${chosen}${chosen}${chosen} [A-Za-z]+ [0-9.]+ us\n$"
      -DEXPECT_STDERR=
      -P ${ANYP_EXPECT_OUTPUT_SCRIPT}
      -- $<TARGET_FILE:11_allreduce_reveal> -d ${devices} --mode auto --${flag})
  set_tests_properties(cli.11_allreduce_reveal.auto_choice.${flag} PROPERTIES
    LABELS examples TIMEOUT ${ANYP_EXAMPLE_TEST_TIMEOUT})
endforeach()

# ---- the second ladder: real kernels (examples/kernels/, issue 11) -------------------
# Every kernel and mode at P = 2, 3, 4, 5, 8 and 16 (k6, the 2-D groups: also 6, 9, 12); race-checked under 10 PCT
# schedules at P = 3, 4 and 5. k1_tp_mlp splits F = 960 into tile-row shards,
# so P must divide 120: P = 7 and 16 exit 2 (also under --compile-only).
set(ANYP_EXAMPLE_MODES_k1_tp_mlp mesh ring)
set(ANYP_EXAMPLE_MODES_k2_allgather_gemm overlap bulk)
set(ANYP_EXAMPLE_MODES_k3_gemm_reduce_scatter overlap bulk)
set(ANYP_EXAMPLE_MODES_k4_moe -)
set(ANYP_EXAMPLE_MODES_k5_ring_attention -)
set(ANYP_EXAMPLE_MODES_k6_tp_dp_allreduce 2d flat)
set(ANYP_EXAMPLE_MODES_k7_multi_block blocks one)
foreach(example ${ANYP_KERNEL_EXAMPLES})
  set(ranks 2 3 4 5 8 16)
  if(example STREQUAL "k1_tp_mlp")
    set(ranks 2 3 4 5 6 8 24)
  elseif(example STREQUAL "k6_tp_dp_allreduce")  # the 2-D grids 2x2, 2x3, 2x4, 3x3, 3x4, 4x4
    set(ranks 2 3 4 5 6 8 9 12 16)
  endif()
  foreach(mode ${ANYP_EXAMPLE_MODES_${example}})
    foreach(P ${ranks})
      anyp_add_example_test(${example} ${mode} ${P})
    endforeach()
    foreach(P 3 4 5)
      anyp_add_example_test(${example} ${mode} ${P} TAG checked EXTRA --check-races --explore 10)
    endforeach()
  endforeach()
  anyp_add_cli_error_test(cli.${example}.P1 ${example} "-d;0" 2
    "need at least 2 devices, got [0]")
endforeach()
foreach(P 7 16)
  anyp_device_list(${P} devices)
  set(message "F=960 cannot be split into 32-byte-aligned shards for P=${P}: need F % (8*P) == 0 (P must divide 120)")
  anyp_add_cli_error_test(cli.k1_tp_mlp.P${P} k1_tp_mlp "-d;${devices}" 2 "${message}")
  anyp_add_cli_error_test(cli.k1_tp_mlp.compile_only.P${P} k1_tp_mlp
    "-d;${devices};--compile-only" 2 "${message}")
endforeach()

# Out of memory, refused before the run (issue 22): the builtin ring
# allreduce at P = 1024 under a 4 GiB address-space limit needs 16 GiB (its
# [2(P - 1), P] signal on every rank, and the notify record beside it). Not
# under the sanitizers, whose shadow memory needs more address space than
# the limit leaves.
if(NOT ANYP_SANITIZE)
  anyp_device_list(1024 devices_1024)
  add_test(NAME example.11_allreduce_reveal.ring.address_limit_4GiB.P1024
    COMMAND ${CMAKE_COMMAND}
      -DEXPECT_EXIT=1
      -DEXPECT_STDOUT=
      "-DEXPECT_STDERR_REGEX=^run error: out of memory: this run needs about 16\\.0 GiB and 4\\.0 GiB is available \\(the address-space limit \\(ulimit -v: 4\\.0 GiB\\) less the process's size \\([0-9.]+ MiB\\)\\); it needs 16\\.0 GiB: windows 8\\.0 GiB \\(1024 ranks × 8\\.0 MiB; largest buffer 'signal' \\[2046, 1024\\] INT32, 8\\.0 MiB per rank\\), notify record 8\\.0 GiB .*; run at a smaller P\n$"
      -P ${ANYP_EXPECT_OUTPUT_SCRIPT}
      -- sh -c "ulimit -v 4194304 && exec \"$0\" \"$@\""
         $<TARGET_FILE:11_allreduce_reveal> --mode ring -d ${devices_1024})
  set_tests_properties(example.11_allreduce_reveal.ring.address_limit_4GiB.P1024 PROPERTIES
    LABELS examples TIMEOUT ${ANYP_EXAMPLE_TEST_TIMEOUT})
endif()

# ---- --verify: every schedule up to equivalence (docs/race-checker.md §7) ----------
# Exact lines: the traces, schedules and pruned choices are deterministic.
# tests/python/test_verify.py runs every example and mode at P = 2 and 3 in
# both front-ends; tests/runtime/verify_schedules_test.cpp counts traces of
# programs counted by hand.
function(anyp_add_verify_test example mode P expected)
  anyp_device_list(${P} devices)
  set(args -d ${devices} --verify --verify-budget 1000)
  if(NOT mode STREQUAL "-")
    list(APPEND args --mode ${mode})
  endif()
  set(test_name example.${example}.${mode}.verify.P${P})
  add_test(NAME ${test_name}
    COMMAND ${CMAKE_COMMAND}
      -DEXPECT_EXIT=0
      "-DEXPECT_STDOUT=OK\\n${expected}, no deadlock, no race, golden holds\\n"
      -DEXPECT_STDERR=
      -P ${ANYP_EXPECT_OUTPUT_SCRIPT}
      -- $<TARGET_FILE:${example}> ${args})
  set_tests_properties(${test_name} PROPERTIES LABELS examples TIMEOUT ${ANYP_EXAMPLE_TEST_TIMEOUT})
endfunction()
anyp_add_verify_test(04_barrier hand 3 "verified: 1 trace (1 schedule run, 30 pruned)")
anyp_add_verify_test(10_allreduce_ring - 3 "verified: 1 trace (1 schedule run, 60 pruned)")
anyp_add_verify_test(11_allreduce_reveal mesh 3 "verified: 1 trace (1 schedule run, 53 pruned)")
anyp_add_verify_test(16_putting_it_together shared 3
  "verified: 1 trace (1 schedule run, 111 pruned)")
anyp_add_verify_test(k5_ring_attention - 3 "verified: 1 trace (1 schedule run, 56 pruned)")
anyp_add_verify_test(k7_multi_block blocks 3 "verified: 1 trace (1 schedule run, 11518 pruned)")

# The README's --verify command, exactly as it shows it.
add_test(NAME example.16_putting_it_together.readme_verify
  COMMAND ${CMAKE_COMMAND}
    -DEXPECT_EXIT=0
    "-DEXPECT_STDOUT=OK\nverified: 1 trace (1 schedule run, 111 pruned), no deadlock, no race, golden holds\n"
    -DEXPECT_STDERR=
    -P ${ANYP_EXPECT_OUTPUT_SCRIPT}
    -- $<TARGET_FILE:16_putting_it_together> -d 0,1,2 --verify)
set_tests_properties(example.16_putting_it_together.readme_verify PROPERTIES
  LABELS examples TIMEOUT ${ANYP_EXAMPLE_TEST_TIMEOUT})
