# tests/examples.cmake — ctest registrations for the ladder examples
# (ladder.md A.5): every step and mode at several P, plus the command-line
# error cases. Each test runs through tests/expect_output.cmake, which checks
# the exit code and the exact stdout/stderr. Label: `examples`.
#
# The lists of invocations are maintained by the lead; only the helpers and a
# commented sample live here for now.

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

# anyp_add_example_test(<example> <mode> <P>)
#   Test `example.<example>.<mode>.P<P>`: runs the example with
#   `-d 0,1,...,P-1` (plus `--mode <mode>` unless mode is "-") and passes when
#   it exits 0 with stdout exactly "OK\n".
function(anyp_add_example_test example mode P)
  anyp_device_list(${P} devices)
  set(args -d ${devices})
  if(NOT mode STREQUAL "-")
    list(APPEND args --mode ${mode})
  endif()
  set(test_name example.${example}.${mode}.P${P})
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

# ---- sample (the lead fills in the real lists) ---------------------------------
# foreach(P 2 3 4 5 8 64)
#   anyp_add_example_test(01_hello_rank - ${P})
#   foreach(mode put get)
#     anyp_add_example_test(07_dynamic_rank_count ${mode} ${P})
#   endforeach()
# endforeach()
# anyp_add_cli_error_test(cli.01_hello_rank.P1 01_hello_rank "-d;0" 2
#   "need at least 2 devices, got [0]")
