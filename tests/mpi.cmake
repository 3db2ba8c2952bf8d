# tests/mpi.cmake — the MPI engine under mpirun (label `mpi`), registered
# when the build has the MPI engine (ANYP_HAVE_MPI) and FindMPI found mpirun:
#   mpi.<example>.<mode>[.<op>].P<P>   every ladder example, mode and op on
#                                     `--engine mpi` at P = 2, 3, 4 (the osc
#                                     component the engine picks: rdma, or sm
#                                     where P exceeds the cores): exit 0,
#                                     stdout "OK\n"
#   mpi.<example>...osc_rdma.P3       the same at P = 3 with `--mca osc rdma`
#                                     (oversubscribed on 2 cores)
#   mpi.pitfall.<name>                the pitfalls that end in a deadlock, a run
#                                     error or a compile error: exactly the
#                                     threads engine's stderr (tests/pitfalls.cmake),
#                                     printed once, exit 1; 13 (one host row written
#                                     by every rank) is the MPI engine's own run error
#   mpi.cli.*                         usage errors: -d against the world size,
#                                     threads-only flags, one process; the cost
#                                     card, modeled time included, and the
#                                     --timeline text, as on threads
#   mpi.engines_agree.P<P>            threads and MPI: bitwise-identical outputs
#                                     and identical cost cards (tests/mpi/engines_agree.cpp)
#   mpi.verbose.*                     --verbose names the osc component, the one
#                                     chosen with --mca and the engine's own
#                                     choice on an oversubscribed node
# Every test runs mpirun as root if need be, oversubscribed (P may exceed the
# cores), with its own TMPDIR (concurrent mpirun jobs would share a session
# directory otherwise). Included from tests/CMakeLists.txt after
# examples.cmake and pitfalls.cmake, whose helpers and lists it uses.

set(ANYP_MPI_TMP ${CMAKE_CURRENT_BINARY_DIR}/mpi_tmp)

# anyp_add_mpi_test(<name> NP <P> EXIT <code> [STDOUT <text>] [STDERR <text>]
#                   [MCA <component>] [ENV <VAR=value>] COMMAND <exe> <args...>)
#   Runs `mpirun -n <P> [--mca osc <component>] <exe> <args...>` through
#   expect_output.cmake. STDOUT/STDERR: the exact text (newlines as \n);
#   STDERR_REGEX: a regex stderr must match.
function(anyp_add_mpi_test name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "NP;EXIT;STDOUT;STDOUT_REGEX;STDERR;STDERR_REGEX;MCA;ENV" "COMMAND")
  set(checks -DEXPECT_EXIT=${arg_EXIT})
  if(DEFINED arg_STDOUT)
    list(APPEND checks "-DEXPECT_STDOUT=${arg_STDOUT}")
  endif()
  if(DEFINED arg_STDERR)
    string(REPLACE "\n" "\\n" stderr "${arg_STDERR}")
    string(REPLACE ";" "\\;" stderr "${stderr}")
    list(APPEND checks "-DEXPECT_STDERR=${stderr}")
  endif()
  if(DEFINED arg_STDOUT_REGEX)
    list(APPEND checks "-DEXPECT_STDOUT_REGEX=${arg_STDOUT_REGEX}")
  endif()
  if(DEFINED arg_STDERR_REGEX)
    list(APPEND checks "-DEXPECT_STDERR_REGEX=${arg_STDERR_REGEX}")
  endif()
  set(mca "")
  if(DEFINED arg_MCA)
    set(mca --mca osc ${arg_MCA})
  endif()
  # A short directory name: Open MPI puts its session sockets under TMPDIR,
  # and a socket path must stay under 108 bytes.
  string(MD5 digest "${name}")
  string(SUBSTRING "${digest}" 0 10 digest)
  set(tmp ${ANYP_MPI_TMP}/${digest})
  file(MAKE_DIRECTORY ${tmp})
  add_test(NAME ${name}
    COMMAND ${CMAKE_COMMAND} ${checks} -P ${ANYP_EXPECT_OUTPUT_SCRIPT}
      -- ${MPIEXEC_EXECUTABLE} -q ${MPIEXEC_NUMPROC_FLAG} ${arg_NP} ${mca} ${arg_COMMAND})
  set_tests_properties(${name} PROPERTIES
    LABELS mpi
    TIMEOUT ${ANYP_EXAMPLE_TEST_TIMEOUT}
    ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1;TMPDIR=${tmp};OMPI_MCA_orte_tmpdir_base=${tmp};${arg_ENV}")
endfunction()

# ---- every example, mode and op at P = 2, 3, 4, and with osc rdma at P = 3 ----------
foreach(example ${ANYP_ANY_P_EXAMPLES} ${ANYP_COLLECTIVE_EXAMPLES})
  foreach(mode ${ANYP_EXAMPLE_MODES_${example}})
    set(ops "-")
    if(DEFINED ANYP_EXAMPLE_OPS_${example})
      set(ops ${ANYP_EXAMPLE_OPS_${example}})
    endif()
    foreach(op ${ops})
      set(args --engine mpi)
      set(base mpi.${example}.${mode})
      if(NOT mode STREQUAL "-")
        list(APPEND args --mode ${mode})
      endif()
      if(NOT op STREQUAL "-")
        list(APPEND args --op ${op})
        string(APPEND base .${op})
      endif()
      foreach(P 2 3 4)
        anyp_add_mpi_test(${base}.P${P} NP ${P} EXIT 0 STDOUT "OK\\n"
          COMMAND $<TARGET_FILE:${example}> ${args})
      endforeach()
      anyp_add_mpi_test(${base}.osc_rdma.P3 NP 3 EXIT 0 STDOUT "OK\\n" MCA rdma
        COMMAND $<TARGET_FILE:${example}> ${args})
    endforeach()
  endforeach()
endforeach()

# ---- the kernels of the second ladder at P = 3 (their math is engine-independent; this
# checks their exchanges on Open MPI's RMA) ---------------------------------------------
foreach(example ${ANYP_KERNEL_EXAMPLES})
  foreach(mode ${ANYP_EXAMPLE_MODES_${example}})
    set(args --engine mpi)
    if(NOT mode STREQUAL "-")
      list(APPEND args --mode ${mode})
    endif()
    anyp_add_mpi_test(mpi.${example}.${mode}.P3 NP 3 EXIT 0 STDOUT "OK\\n"
      COMMAND $<TARGET_FILE:${example}> ${args})
  endforeach()
endforeach()
# Sub-communicator groups on Open MPI's RMA: the 2 x 2 and 2 x 3 grids.
foreach(P 4 6)
  anyp_add_mpi_test(mpi.k6_tp_dp_allreduce.2d.P${P} NP ${P} EXIT 0 STDOUT "OK\\n"
    COMMAND $<TARGET_FILE:k6_tp_dp_allreduce> --engine mpi)
endforeach()

# ---- the pitfalls whose diagnosis is not a race: the threads engine's text ------------
# (The race pitfalls need the race checker, a threads-engine tool.)
set(ANYP_MPI_PITFALL_STDERR_06_negative_peer [=[
run error: rank 0 (device 0), function 'get_step', op pld.system.notify at 06_negative_peer.cpp:41: peer -1 is out of range [0, 3)
  hint: a negative peer usually comes from (r - 1) % P, which C++ truncates to -1 at r = 0; write (r + P - 1) % P
]=])
set(ANYP_MPI_PITFALL_STDERR_08_collectives_out_of_order [=[
run error: rank 1 (device 1), function 'two_collectives', op pld.tensor.broadcast at 08_collectives_out_of_order.cpp:49: collective mismatch on signal 'signal': call #1 on it is pld.tensor.allreduce (Sum, Mesh, data FP32 [1, 64]) in function 'two_collectives' on rank 0, but pld.tensor.broadcast (root 0, data FP32 [1, 64]) in function 'two_collectives' on rank 1; every rank must make the same builtin collective calls on a signal, in the same order
]=])
set(ANYP_MPI_PITFALL_STDERR_09_collective_on_some_ranks [=[
deadlock: no rank can make progress (1 of 3 ranks waiting)
  rank 0: function 'root_broadcast', op pld.tensor.broadcast at 09_collective_on_some_ranks.cpp:45: waits for signal 'signal' cell [1, 0] Ge 1; current value 0; never notified
  ranks 1, 2 (2 ranks): finished
builtin collective calls not entered by every rank:
  collective call #1 on signal 'signal', pld.tensor.broadcast (root 0, data FP32 [1, 64]) in function 'root_broadcast': entered by rank 0; never entered by ranks 1, 2 (finished)
]=])
set(ANYP_MPI_PITFALL_STDERR_11_host_nr_disagrees [=[
compile error: function 'host_nr_disagrees', parameter 'x', dim 0: NR is 4 here, but the rank loop over pld::world_size() runs P = 3 ranks (from the device list) and gives rank r the row x[r]: a tensor sliced by the rank loop needs exactly P rows
  hint: shape the host tensors from the device count
]=])
set(ANYP_MPI_PITFALL_STDERR_12_wait_never_notified [=[
deadlock: no rank can make progress (3 of 3 ranks waiting)
  rank 0: function 'stage_barrier_pull', op pld.system.wait at 12_wait_never_notified.cpp:48: waits for signal 'signal' cell [1, 0] Ge 1; current value 0; never notified
  ranks 1, 2 (2 ranks): function 'stage_barrier_pull', op pld.system.wait at 12_wait_never_notified.cpp:48: waits for signal 'signal' cell [0, 0] Ge 1; current value 0; never notified
]=])
# Which ranks deadlock in pitfall 05 depends on the schedule (on the threads
# engine too): check the report's substance.
anyp_add_mpi_test(mpi.pitfall.05_eq_on_monotonic_cell NP 3 EXIT 1 STDOUT ""
  STDERR_REGEX "^deadlock: no rank can make progress \\([23] of 3 ranks waiting\\).*waits for signal 'signal' cell \\[[0-2], 0\\] Eq 1. current value 2. notified by rank [0-2] \\(2 AtomicAdds totalling \\+2\\).*hint: the cell is already past 1"
  COMMAND $<TARGET_FILE:pitfall_05_eq_on_monotonic_cell> --engine mpi)
anyp_add_mpi_test(mpi.pitfall.05_eq_on_monotonic_cell.fixed NP 3 EXIT 0 STDOUT "OK\\n"
  COMMAND $<TARGET_FILE:pitfall_05_eq_on_monotonic_cell> --engine mpi --fixed)
set(ANYP_MPI_PITFALL_STDERR_13_unsliced_host_store [=[
run error: engine 'mpi': ranks 0 and 1 both wrote host tensor 'y' (from element [0, 0]); on the MPI engine each process holds its own copy of the host tensors during a run, so which write survives would not follow the program's order: give each rank its own part of a host output (slice it by rank, y[r])
]=])
# Blocks of a rank run round-robin in its process: the same report as on threads.
set(ANYP_MPI_PITFALL_STDERR_15_block_count_hard_coded [=[
deadlock: no rank can make progress (3 of 3 ranks waiting)
  rank 0: function 'swap_halves', op pld.system.wait at 15_block_count_hard_coded.cpp:48: waits for signal 'sync' cell [0, 0] Ge 4; current value 2; notified by rank 0 (2 AtomicAdds totalling +2)
  rank 1: function 'swap_halves', op pld.system.wait at 15_block_count_hard_coded.cpp:48: waits for signal 'sync' cell [0, 0] Ge 4; current value 2; notified by rank 1 (2 AtomicAdds totalling +2)
  rank 2: function 'swap_halves', op pld.system.wait at 15_block_count_hard_coded.cpp:48: waits for signal 'sync' cell [0, 0] Ge 4; current value 2; notified by rank 2 (2 AtomicAdds totalling +2)
  rank 0: block 1: function 'swap_halves', op pld.system.wait at 15_block_count_hard_coded.cpp:48: waits for signal 'sync' cell [0, 0] Ge 4; current value 2; notified by rank 0 (2 AtomicAdds totalling +2)
  rank 1: block 1: function 'swap_halves', op pld.system.wait at 15_block_count_hard_coded.cpp:48: waits for signal 'sync' cell [0, 0] Ge 4; current value 2; notified by rank 1 (2 AtomicAdds totalling +2)
  rank 2: block 1: function 'swap_halves', op pld.system.wait at 15_block_count_hard_coded.cpp:48: waits for signal 'sync' cell [0, 0] Ge 4; current value 2; notified by rank 2 (2 AtomicAdds totalling +2)
]=])
foreach(name 06_negative_peer 08_collectives_out_of_order
             09_collective_on_some_ranks 11_host_nr_disagrees 12_wait_never_notified
             13_unsliced_host_store 15_block_count_hard_coded)
  anyp_add_mpi_test(mpi.pitfall.${name} NP 3 EXIT 1 STDOUT "" STDERR "${ANYP_MPI_PITFALL_STDERR_${name}}"
    COMMAND $<TARGET_FILE:pitfall_${name}> --engine mpi)
  anyp_add_mpi_test(mpi.pitfall.${name}.fixed NP 3 EXIT 0 STDOUT "OK\\n"
    COMMAND $<TARGET_FILE:pitfall_${name}> --engine mpi --fixed)
endforeach()

# ---- the command line on the MPI engine ------------------------------------------------
anyp_add_mpi_test(mpi.cli.devices_disagree_with_world NP 3 EXIT 2 STDOUT ""
  STDERR "-d/--device: 2 devices given, but the MPI world has 3 processes (mpirun -n 3); give 3 devices, or none\n"
  COMMAND $<TARGET_FILE:07_dynamic_rank_count> --engine mpi -d 0,1)
anyp_add_mpi_test(mpi.cli.devices_of_world_size NP 3 EXIT 0 STDOUT "OK\\n"
  COMMAND $<TARGET_FILE:07_dynamic_rank_count> --engine mpi -d 4,5,6)
anyp_add_mpi_test(mpi.cli.one_process NP 1 EXIT 2 STDOUT ""
  STDERR "need at least 2 ranks, but the MPI world has 1 process: start the example under mpirun -n P with P >= 2\n"
  COMMAND $<TARGET_FILE:07_dynamic_rank_count> --engine mpi)
anyp_add_mpi_test(mpi.cli.check_races NP 2 EXIT 2 STDOUT ""
  STDERR "--check-races: needs every rank in one process (--engine threads); --engine mpi runs one rank per process\n"
  COMMAND $<TARGET_FILE:07_dynamic_rank_count> --engine mpi --check-races)
anyp_add_mpi_test(mpi.cli.explore NP 2 EXIT 2 STDOUT ""
  STDERR "--explore: needs every rank in one process (--engine threads); --engine mpi runs one rank per process\n"
  COMMAND $<TARGET_FILE:07_dynamic_rank_count> --engine mpi --explore 3)
anyp_add_mpi_test(mpi.cli.bad_flag_printed_once NP 3 EXIT 2 STDOUT ""
  STDERR "The following argument was not expected: --bogus\nrun with --help for usage\n"
  COMMAND $<TARGET_FILE:07_dynamic_rank_count> --engine mpi --bogus)
anyp_add_mpi_test(mpi.cli.unknown_engine_printed_once NP 2 EXIT 2 STDOUT ""
  STDERR "--engine: engine 'bogus' is not available; supported engines: threads, mpi\n"
  COMMAND $<TARGET_FILE:07_dynamic_rank_count> --engine bogus)
anyp_add_mpi_test(mpi.cli.cost_card NP 3 EXIT 0
  STDOUT_REGEX "^OK\ncost card \\(P=3\\)\n  rank   bytes_in  bytes_out    RMA  notify    \\+E   wait    time_us  rounds\n     0        256        256      1       1     0      1      2\\.702       1\n     1        256        256      1       1     0      1      2\\.702       1\n     2        256        256      1       1     0      1      2\\.702       1\n total        768        768      3       3     0      3      2\\.702       1\n\\(time: modeled on a2a3sim, the total is the makespan\\)\nmemory \\(this process, planned before the run\\): [0-9.]+ KiB\n  windows                           544 B  1 rank × 544 B; largest buffer 'src_buf' \\[1, 64\\] FP32, 256 B per rank\n  rank VMs  +[0-9.]+ KiB  1 × [0-9.]+ KiB\n$"
  COMMAND $<TARGET_FILE:07_dynamic_rank_count> --engine mpi --cost)
# A rank's blocks run round-robin in its process: k7's cost card, modeled time
# included, is the threads engine's (the blocks' rows summed per rank).
anyp_add_mpi_test(mpi.cli.cost_card_multi_block NP 3 EXIT 0
  STDOUT_REGEX "^OK\ncost card \\(P=3\\)\n  rank   bytes_in  bytes_out    RMA  notify    \\+E   wait    time_us  rounds\n     0     524288          0     32      40    34     51     55\\.234       7\n     1     524288          0     32      40    34     51     55\\.334       7\n     2     524288          0     32      40    34     51     55\\.332       7\n total    1572864          0     96     120   102    153     55\\.334       7\n\\(time: modeled on a2a3sim, the total is the makespan\\)\nmemory \\(this process, planned before the run\\): [0-9.]+ [KM]iB\n  windows  +[0-9.]+ [KM]iB  1 rank × [0-9.]+ [KM]iB; largest buffer [^\n]*\n  rank VMs  +[0-9.]+ [KM]iB  4 × [0-9.]+ [KM]iB\n$"
  COMMAND $<TARGET_FILE:k7_multi_block> --engine mpi --cost)
# The timeline, printed once: the same text as on the threads engine.
anyp_add_mpi_test(mpi.cli.timeline NP 3 EXIT 0
  STDOUT "OK\\ntimeline (model a2a3sim, P=3): makespan 2.702 us, 1 round\\n  rank   finish_us     busy_us     wait_us  rounds\\n     0       2.702       0.701       2.001       1\\n     1       2.702       0.701       2.001       1\\n     2       2.702       0.701       2.001       1\\ndma engines (4 per rank, issue 0.100 us):\\n  rank   transfers   engine_busy_us   utilisation\\n     0           1            2.101        19.4 %\\n     1           1            2.101        19.4 %\\n     2           1            2.101        19.4 %\\nlinks (shared\\x3b the 6 busiest of 6 ports that carried data):\\n  rank 0 port out: 256 B, busy 0.001 us (0.0 % of the makespan)\\n  rank 0 port in: 256 B, busy 0.001 us (0.0 % of the makespan)\\n  rank 1 port out: 256 B, busy 0.001 us (0.0 % of the makespan)\\n  rank 1 port in: 256 B, busy 0.001 us (0.0 % of the makespan)\\n  rank 2 port out: 256 B, busy 0.001 us (0.0 % of the makespan)\\n  rank 2 port in: 256 B, busy 0.001 us (0.0 % of the makespan)\\ncritical path (7 ops, in time order):\\n       0.000 -      0.100 us  rank 2  local read 256 B of host tensor 'x' (put_step: pl.load)\\n       0.100 -      0.200 us  rank 2  local write 256 B of rank 2's window 'src_buf' (put_step: pl.store)\\n       0.300 -      0.400 us  rank 2  local read 256 B of rank 2's window 'src_buf' (put_step: pld.tensor.put)\\n       0.400 -      2.402 us  rank 2  remote write 256 B of rank 0's window 'dst_buf' (put_step: pld.tensor.put)\\n       0.400 -      2.502 us  rank 0  wait of signal 'signal_buf' cell [0, 0] of rank 0, blocked 2.001 us (put_step: pld.system.wait)\\n       2.502 -      2.602 us  rank 0  local read 256 B of rank 0's window 'dst_buf' (put_step: pl.load)\\n       2.602 -      2.702 us  rank 0  local write 256 B of host tensor 'y' (put_step: pl.store)\\n"
  COMMAND $<TARGET_FILE:07_dynamic_rank_count> --engine mpi --timeline)
# Task records on the MPI engine: each process writes its own rank's.
set(ANYP_MPI_RECORDS ${CMAKE_CURRENT_BINARY_DIR}/task_records/mpi/P3)
file(MAKE_DIRECTORY ${ANYP_MPI_TMP}/records)
add_test(NAME mpi.cli.task_records
  COMMAND ${CMAKE_COMMAND} -DOUTPUT_DIR=${ANYP_MPI_RECORDS} -DP=3
    -P ${CMAKE_CURRENT_LIST_DIR}/expect_task_records.cmake
    -- ${MPIEXEC_EXECUTABLE} -q ${MPIEXEC_NUMPROC_FLAG} 3 $<TARGET_FILE:07_dynamic_rank_count>
    --engine mpi --dep-gen --scope-stats --output-dir ${ANYP_MPI_RECORDS})
set_tests_properties(mpi.cli.task_records PROPERTIES
  LABELS mpi
  TIMEOUT ${ANYP_EXAMPLE_TEST_TIMEOUT}
  ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1;TMPDIR=${ANYP_MPI_TMP}/records;OMPI_MCA_orte_tmpdir_base=${ANYP_MPI_TMP}/records")
foreach(osc rdma sm)
  anyp_add_mpi_test(mpi.verbose.osc_${osc} NP 2 EXIT 0 STDOUT "OK\\n" MCA ${osc}
    STDERR_REGEX "^engine mpi: Open MPI v[0-9.]+, osc component ${osc}, unified memory model, 2 processes\nthe run: [0-9.]+ ms wall on 1 worker, [0-9]+ VM instructions, [0-9]+ parks, [0-9]+ preemptions\n$"
    COMMAND $<TARGET_FILE:07_dynamic_rank_count> --engine mpi --verbose)
endforeach()
# More processes than cores, no component named: the engine asks for sm;
# naming one (rdma) overrides that.
cmake_host_system_information(RESULT ANYP_CORES QUERY NUMBER_OF_LOGICAL_CORES)
math(EXPR ANYP_OVERSUBSCRIBED "${ANYP_CORES} + 1")
anyp_add_mpi_test(mpi.verbose.oversubscribed_default_sm NP ${ANYP_OVERSUBSCRIBED} EXIT 0
  STDOUT "OK\\n"
  STDERR_REGEX "^engine mpi: Open MPI v[0-9.]+, osc component sm, unified memory model, ${ANYP_OVERSUBSCRIBED} processes on ${ANYP_CORES} cores \\(oversubscribed: waits yield the CPU\\)\nthe run: [0-9.]+ ms wall on 1 worker, [0-9]+ VM instructions, [0-9]+ parks, [0-9]+ preemptions\n$"
  COMMAND $<TARGET_FILE:07_dynamic_rank_count> --engine mpi --verbose)
anyp_add_mpi_test(mpi.verbose.oversubscribed_rdma_named NP ${ANYP_OVERSUBSCRIBED} EXIT 0
  STDOUT "OK\\n" MCA rdma
  STDERR_REGEX "^engine mpi: Open MPI v[0-9.]+, osc component rdma, unified memory model, ${ANYP_OVERSUBSCRIBED} processes on ${ANYP_CORES} cores \\(oversubscribed: waits yield the CPU\\)\nthe run: [0-9.]+ ms wall on 1 worker, [0-9]+ VM instructions, [0-9]+ parks, [0-9]+ preemptions\n$"
  COMMAND $<TARGET_FILE:07_dynamic_rank_count> --engine mpi --verbose)

# ---- threads and MPI agree, bit for bit -----------------------------------------------
# (It runs the threads engine's workers in the MPI processes: at P = 4, 5
# MPI runs at MPI_THREAD_FUNNELED, the level for a program with threads of
# its own.)
foreach(P 2 3 4 5)
  set(level "")
  if(P GREATER 3)
    set(level ANYP_MPI_THREAD_LEVEL=funneled)
  endif()
  anyp_add_mpi_test(mpi.engines_agree.P${P} NP ${P} EXIT 0 STDOUT "OK\\n" STDERR "" ENV "${level}"
    COMMAND $<TARGET_FILE:anyp_mpi_engines_agree>)
endforeach()
# Sessions (tests/mpi/sessions_agree.cpp): persistent windows, resets,
# resident tensors and submits give the threads engine's bytes, run by run.
# Funneled: the threads engine's session has a worker thread of its own.
foreach(P 2 3 4)
  anyp_add_mpi_test(mpi.sessions_agree.P${P} NP ${P} EXIT 0 STDOUT "OK\\n" STDERR ""
    ENV ANYP_MPI_THREAD_LEVEL=funneled COMMAND $<TARGET_FILE:anyp_mpi_sessions_agree>)
endforeach()
anyp_add_mpi_test(mpi.cli.bad_thread_level NP 2 EXIT 1 STDOUT ""
  STDERR "anyp mpi engine: ANYP_MPI_THREAD_LEVEL is 'multiple'; it must be single (the default) or funneled\n"
  ENV ANYP_MPI_THREAD_LEVEL=multiple
  COMMAND $<TARGET_FILE:07_dynamic_rank_count> --engine mpi)
