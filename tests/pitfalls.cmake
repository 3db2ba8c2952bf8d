# tests/pitfalls.cmake — ctest registrations for the pitfall catalogue
# (examples/pitfalls/NN_name.cpp, built as pitfall_NN_name; docs/pitfalls.md).
# Label: `examples`. For every pitfall:
#   pitfall.<name>.diagnostic  the bug, run with `-d 0,1,2 --check-races --workers 1`
#                              (one worker, so the schedule and the text are stable):
#                              exit 1, nothing on stdout, exactly the expected stderr
#   pitfall.<name>.fixed       `-d 0,1,2 --check-races --fixed --explore 20`: exit 0,
#                              stdout exactly "OK\n", nothing on stderr
#   pitfall.<name>.fixed.P2, .P5  the same at P = 2 and P = 5
# Included from tests/CMakeLists.txt after examples.cmake, whose
# ANYP_EXPECT_OUTPUT_SCRIPT, ANYP_EXAMPLE_TEST_TIMEOUT and anyp_device_list it uses.

set(ANYP_PITFALLS
  01_read_before_wait
  02_overwrite_while_reading
  03_restage_broadcast_target
  04_notify_before_put
  05_eq_on_monotonic_cell
  06_negative_peer
  07_ring_signal_transposed
  08_collectives_out_of_order
  09_collective_on_some_ranks
  10_data_and_signal_one_buffer
  11_host_nr_disagrees
  12_wait_never_notified
  13_unsliced_host_store
  14_atomic_and_plain_store
  15_block_count_hard_coded
)

# anyp_add_pitfall_diagnostic_test(<name> <expected_stderr>)
#   Test `pitfall.<name>.diagnostic`. <expected_stderr> is the whole stderr,
#   final newline included (a bracket argument keeps it verbatim).
function(anyp_add_pitfall_diagnostic_test name expected_stderr)
  # Newlines travel as the two characters \n (expect_output.cmake turns them
  # back), and a ';' would split the -D argument in two when it expands.
  string(REPLACE "\n" "\\n" expected_stderr "${expected_stderr}")
  string(REPLACE ";" "\\;" expected_stderr "${expected_stderr}")
  set(stderr_check "-DEXPECT_STDERR=${expected_stderr}")
  add_test(NAME pitfall.${name}.diagnostic
    COMMAND ${CMAKE_COMMAND}
      -DEXPECT_EXIT=1
      -DEXPECT_STDOUT=
      ${stderr_check}
      -P ${ANYP_EXPECT_OUTPUT_SCRIPT}
      -- $<TARGET_FILE:pitfall_${name}> -d 0,1,2 --check-races --workers 1)
  set_tests_properties(pitfall.${name}.diagnostic PROPERTIES
    LABELS examples
    TIMEOUT ${ANYP_EXAMPLE_TEST_TIMEOUT})
endfunction()

# ---- the fixed programs: OK under the race checker and 20 PCT schedules --------
foreach(name ${ANYP_PITFALLS})
  foreach(P 3 2 5)
    anyp_device_list(${P} devices)
    set(test_name pitfall.${name}.fixed)
    if(NOT P EQUAL 3)
      string(APPEND test_name .P${P})
    endif()
    add_test(NAME ${test_name}
      COMMAND ${CMAKE_COMMAND}
        -DEXPECT_EXIT=0
        "-DEXPECT_STDOUT=OK\\n"
        -DEXPECT_STDERR=
        -P ${ANYP_EXPECT_OUTPUT_SCRIPT}
        -- $<TARGET_FILE:pitfall_${name}> -d ${devices} --check-races --fixed --explore 20)
    set_tests_properties(${test_name} PROPERTIES
      LABELS examples
      TIMEOUT ${ANYP_EXAMPLE_TEST_TIMEOUT})
  endforeach()
endforeach()

# ---- the bugs: each one's own diagnostic, verbatim ------------------------------

# 01_read_before_wait: a race report: the pull and the neighbour's staging.
anyp_add_pitfall_diagnostic_test(01_read_before_wait [=[
race report: 2 op pairs access the same elements from two ranks with no happens-before order (at least one writes)
  race 1: window 'src_buf' of rank 1, elements [0, 0:64]
    first:  read by rank 0 (device 0), function 'get_step', op pld.tensor.get at 01_read_before_wait.cpp:46
    second: write by rank 1 (device 1), function 'get_step', op pl.store at 01_read_before_wait.cpp:40
    missing: no wait on rank 1 observed a notify that rank 0 issued after its read; rank 1 never synchronised with rank 0
  race 2: window 'src_buf' of rank 0, elements [0, 0:64]
    first:  write by rank 0 (device 0), function 'get_step', op pl.store at 01_read_before_wait.cpp:40
    second: read by rank 2 (device 2), function 'get_step', op pld.tensor.get at 01_read_before_wait.cpp:46
    missing: no wait on rank 2 observed a notify that rank 0 issued after its write; rank 2 never synchronised with rank 0

]=])

# 02_overwrite_while_reading: a race report: round 2's restaging and the neighbour's round-1 pull.
anyp_add_pitfall_diagnostic_test(02_overwrite_while_reading [=[
race report: 2 op pairs access the same elements from two ranks with no happens-before order (at least one writes)
  race 1: window 'data' of rank 0, elements [0, 0:64]
    first:  read by rank 2 (device 2), function 'ring_rounds', op pld.tile.remote_load at 02_overwrite_while_reading.cpp:56
    second: write by rank 0 (device 0), function 'ring_rounds', op pl.store at 02_overwrite_while_reading.cpp:53
    missing: no wait on rank 0 observed a notify that rank 2 issued after its read; rank 0 never synchronised with rank 2
  race 2: window 'data' of rank 2, elements [0, 0:64]
    first:  write by rank 2 (device 2), function 'ring_rounds', op pl.store at 02_overwrite_while_reading.cpp:53
    second: read by rank 1 (device 1), function 'ring_rounds', op pld.tile.remote_load at 02_overwrite_while_reading.cpp:56
    missing: no wait on rank 1 observed a notify that rank 2 issued after its write; rank 1 last synchronised with rank 2 through its function 'ring_rounds', op pld.system.notify at 02_overwrite_while_reading.cpp:54, which came before the write

]=])

# 03_restage_broadcast_target: a race report: the root's restaging and the broadcast's pulls.
anyp_add_pitfall_diagnostic_test(03_restage_broadcast_target [=[
race report: 2 op pairs access the same elements from two ranks with no happens-before order (at least one writes)
  race 1: window 'data' of rank 0, elements [0, 0:64]
    first:  read by rank 2 (device 2), function 'broadcast_rounds', op pld.tensor.broadcast at 03_restage_broadcast_target.cpp:55
    second: write by rank 0 (device 0), function 'broadcast_rounds', op pl.store at 03_restage_broadcast_target.cpp:53
    missing: no wait on rank 0 observed a notify that rank 2 issued after its read; rank 0 last synchronised with rank 2 through its function 'broadcast_rounds', op pld.tensor.broadcast at 03_restage_broadcast_target.cpp:55, which came before the read
  race 2: window 'data' of rank 0, elements [0, 0:64]
    first:  write by rank 0 (device 0), function 'broadcast_rounds', op pl.store at 03_restage_broadcast_target.cpp:53
    second: read by rank 1 (device 1), function 'broadcast_rounds', op pld.tensor.broadcast at 03_restage_broadcast_target.cpp:55
    missing: no wait on rank 1 observed a notify that rank 0 issued after its write; rank 1 last synchronised with rank 0 through its function 'broadcast_rounds', op pld.tensor.broadcast at 03_restage_broadcast_target.cpp:55, which came before the write

]=])

# 04_notify_before_put: a race report: the put and the neighbour's read.
anyp_add_pitfall_diagnostic_test(04_notify_before_put [=[
race report: 1 op pair accesses the same elements from two ranks with no happens-before order (at least one writes)
  race 1: window 'dst' of rank 1, elements [0, 0:64]
    first:  write by rank 0 (device 0), function 'put_step', op pld.tensor.put at 04_notify_before_put.cpp:43
    second: read by rank 1 (device 1), function 'put_step', op pl.load at 04_notify_before_put.cpp:46
    missing: no wait on rank 1 observed a notify that rank 0 issued after its write; rank 1 last synchronised with rank 0 through its function 'put_step', op pld.system.notify at 04_notify_before_put.cpp:42, which came before the write

]=])

# 05_eq_on_monotonic_cell: the deadlock report, with the "already past 1" hint.
anyp_add_pitfall_diagnostic_test(05_eq_on_monotonic_cell [=[
deadlock: no rank can make progress (2 of 3 ranks waiting)
  ranks 0, 1 (2 ranks): function 'two_barriers', op pld.system.wait at 05_eq_on_monotonic_cell.cpp:52: waits for signal 'signal' cell [2, 0] Eq 1; current value 2; notified by rank 2 (2 AtomicAdds totalling +2)
    hint: the cell is already past 1; if it counts AtomicAdd credits it only grows, so Eq can never hold again: wait with Ge, or use a fresh cell (row) per round
  rank 2: finished
]=])

# 06_negative_peer: a run error on rank 0: peer -1, with the (r + P - 1) % P hint.
anyp_add_pitfall_diagnostic_test(06_negative_peer [=[
run error: rank 0 (device 0), function 'get_step', op pld.system.notify at 06_negative_peer.cpp:41: peer -1 is out of range [0, 3)
  hint: a negative peer usually comes from (r - 1) % P, which C++ truncates to -1 at r = 0; write (r + P - 1) % P
]=])

# 07_ring_signal_transposed: a compile error: the ring's signal shape.
anyp_add_pitfall_diagnostic_test(07_ring_signal_transposed [=[
compile error: function 'ring_allreduce' (incore), op pld.tensor.allreduce at 07_ring_signal_transposed.cpp:34: the Ring signal must be [2 * (P - 1), P] (or PyPTO's [2 * (P - 1) + 1, P], or [P, 1]) INT32, which is [4, 3] at P = 3, got [3, 4]
]=])

# 08_collectives_out_of_order: a run error: collective mismatch on the shared signal.
anyp_add_pitfall_diagnostic_test(08_collectives_out_of_order [=[
run error: rank 1 (device 1), function 'two_collectives', op pld.tensor.broadcast at 08_collectives_out_of_order.cpp:49: collective mismatch on signal 'signal': call #1 on it is pld.tensor.allreduce (Sum, Mesh, data FP32 [1, 64]) in function 'two_collectives' on rank 0, but pld.tensor.broadcast (root 0, data FP32 [1, 64]) in function 'two_collectives' on rank 1; every rank must make the same builtin collective calls on a signal, in the same order
]=])

# 09_collective_on_some_ranks: the deadlock report, ending with the call ranks 1, 2 never entered.
anyp_add_pitfall_diagnostic_test(09_collective_on_some_ranks [=[
deadlock: no rank can make progress (1 of 3 ranks waiting)
  rank 0: function 'root_broadcast', op pld.tensor.broadcast at 09_collective_on_some_ranks.cpp:45: waits for signal 'signal' cell [1, 0] Ge 1; current value 0; never notified
  ranks 1, 2 (2 ranks): finished
builtin collective calls not entered by every rank:
  collective call #1 on signal 'signal', pld.tensor.broadcast (root 0, data FP32 [1, 64]) in function 'root_broadcast': entered by rank 0; never entered by ranks 1, 2 (finished)
]=])

# 10_data_and_signal_one_buffer: a compile error: data and signal view one window buffer.
anyp_add_pitfall_diagnostic_test(10_data_and_signal_one_buffer [=[
compile error: function 'allreduce_kernel' (incore), op pld.tensor.allreduce at 10_data_and_signal_one_buffer.cpp:33: the data and the signal are views of one window buffer 'scratch'; a collective's windows must be distinct buffers
]=])

# 12_wait_never_notified: the deadlock report: every wait "never notified".
# 11_host_nr_disagrees: a compile error naming the host tensor, NR and P.
anyp_add_pitfall_diagnostic_test(11_host_nr_disagrees [=[
compile error: function 'host_nr_disagrees', parameter 'x', dim 0: NR is 4 here, but the rank loop over pld::world_size() runs P = 3 ranks (from the device list) and gives rank r the row x[r]: a tensor sliced by the rank loop needs exactly P rows
  hint: shape the host tensors from the device count
]=])

anyp_add_pitfall_diagnostic_test(12_wait_never_notified [=[
deadlock: no rank can make progress (3 of 3 ranks waiting)
  rank 0: function 'stage_barrier_pull', op pld.system.wait at 12_wait_never_notified.cpp:48: waits for signal 'signal' cell [1, 0] Ge 1; current value 0; never notified
  ranks 1, 2 (2 ranks): function 'stage_barrier_pull', op pld.system.wait at 12_wait_never_notified.cpp:48: waits for signal 'signal' cell [0, 0] Ge 1; current value 0; never notified
]=])

# 13_unsliced_host_store: a race report on host tensor 'y'.
anyp_add_pitfall_diagnostic_test(13_unsliced_host_store [=[
race report: 1 op pair accesses the same elements from two ranks with no happens-before order (at least one writes)
  race 1: host tensor 'y', elements [0, 0:64]
    first:  write by rank 1 (device 1), function 'sum_to_host', op pl.store at 13_unsliced_host_store.cpp:39
    second: write by rank 2 (device 2), function 'sum_to_host', op pl.store at 13_unsliced_host_store.cpp:39
    missing: no wait on rank 2 observed a notify that rank 1 issued after its write; rank 2 last synchronised with rank 1 through its function 'sum_to_host', op pld.tensor.allreduce at 13_unsliced_host_store.cpp:38, which came before the write

]=])

# 14_atomic_and_plain_store: a race report: atomic add vs write.
anyp_add_pitfall_diagnostic_test(14_atomic_and_plain_store [=[
race report: 2 op pairs access the same elements from two ranks with no happens-before order (at least one writes)
  race 1: window 'acc' of rank 1, elements [0, 0:64]
    first:  atomic add by rank 0 (device 0), function 'accumulate', op pld.tile.remote_store at 14_atomic_and_plain_store.cpp:60
    second: write by rank 1 (device 1), function 'accumulate', op pl.store at 14_atomic_and_plain_store.cpp:47
    missing: no wait on rank 1 observed a notify that rank 0 issued after its atomic add; rank 1 never synchronised with rank 0
  race 2: window 'acc' of rank 0, elements [0, 0:64]
    first:  write by rank 0 (device 0), function 'accumulate', op pl.store at 14_atomic_and_plain_store.cpp:47
    second: atomic add by rank 1 (device 1), function 'accumulate', op pld.tile.remote_store at 14_atomic_and_plain_store.cpp:60
    missing: no wait on rank 1 observed a notify that rank 0 issued after its write; rank 1 never synchronised with rank 0

]=])

# 15_block_count_hard_coded: the deadlock report: every block of every rank waits
# (block 1's waits on the lines "rank r: block 1: ...").
anyp_add_pitfall_diagnostic_test(15_block_count_hard_coded [=[
deadlock: no rank can make progress (3 of 3 ranks waiting)
  rank 0: function 'swap_halves', op pld.system.wait at 15_block_count_hard_coded.cpp:48: waits for signal 'sync' cell [0, 0] Ge 4; current value 2; notified by rank 0 (2 AtomicAdds totalling +2)
  rank 1: function 'swap_halves', op pld.system.wait at 15_block_count_hard_coded.cpp:48: waits for signal 'sync' cell [0, 0] Ge 4; current value 2; notified by rank 1 (2 AtomicAdds totalling +2)
  rank 2: function 'swap_halves', op pld.system.wait at 15_block_count_hard_coded.cpp:48: waits for signal 'sync' cell [0, 0] Ge 4; current value 2; notified by rank 2 (2 AtomicAdds totalling +2)
  rank 0: block 1: function 'swap_halves', op pld.system.wait at 15_block_count_hard_coded.cpp:48: waits for signal 'sync' cell [0, 0] Ge 4; current value 2; notified by rank 0 (2 AtomicAdds totalling +2)
  rank 1: block 1: function 'swap_halves', op pld.system.wait at 15_block_count_hard_coded.cpp:48: waits for signal 'sync' cell [0, 0] Ge 4; current value 2; notified by rank 1 (2 AtomicAdds totalling +2)
  rank 2: block 1: function 'swap_halves', op pld.system.wait at 15_block_count_hard_coded.cpp:48: waits for signal 'sync' cell [0, 0] Ge 4; current value 2; notified by rank 2 (2 AtomicAdds totalling +2)
]=])
