# tests/expect_output.cmake — runs one command and checks its exit code and
# its exact stdout (and optionally stderr). Used by the example and CLI tests
# registered in tests/examples.cmake; usable by hand:
#
#   cmake -DEXPECT_STDOUT=OK\\n -DEXPECT_EXIT=0 -P tests/expect_output.cmake -- \
#         build/release/examples/07_dynamic_rank_count -d 0,1,2 --mode put
#
# Variables (-D...=...):
#   CMD              the command as a CMake list; if not given, every argument
#                    after `--` is the command (preferred: no ';' escaping).
#   EXPECT_EXIT      the expected exit code (default 0).
#   EXPECT_STDOUT    if defined, stdout must equal it exactly (defined but
#                    empty: stdout must be empty).
#   EXPECT_STDERR    if defined, stderr must equal it exactly.
#   EXPECT_STDOUT_REGEX  if defined, stdout must match this regex.
#   EXPECT_STDERR_REGEX  if defined, stderr must match this regex.
# In EXPECT_STDOUT / EXPECT_STDERR the two characters `\n` stand for a
# newline, so "OK\n" is written -DEXPECT_STDOUT=OK\\n in CMake code, and
# the four characters `\x3b` for a semicolon (at which CMake would split
# the argument into a list).
#
# Passes (exit 0) when everything matches; otherwise prints the command, what
# was expected and what it got, and fails.
cmake_minimum_required(VERSION 3.25)

# ---- the command -------------------------------------------------------------
if(NOT DEFINED CMD)
  set(CMD "")
  set(_after_dashes FALSE)
  math(EXPR _last "${CMAKE_ARGC} - 1")
  foreach(_i RANGE 0 ${_last})
    if(_after_dashes)
      string(REPLACE ";" "\\;" _arg "${CMAKE_ARGV${_i}}")
      list(APPEND CMD "${_arg}")
    elseif("${CMAKE_ARGV${_i}}" STREQUAL "--")
      set(_after_dashes TRUE)
    endif()
  endforeach()
endif()
if(CMD STREQUAL "")
  message(FATAL_ERROR "expect_output.cmake: no command (give -DCMD=... or arguments after --)")
endif()
if(NOT DEFINED EXPECT_EXIT)
  set(EXPECT_EXIT 0)
endif()

function(_unescape_newlines var)
  string(REPLACE "\\n" "\n" _value "${${var}}")
  string(REPLACE "\\x3b" ";" _value "${_value}")
  set(${var} "${_value}" PARENT_SCOPE)
endfunction()

execute_process(
  COMMAND ${CMD}
  RESULT_VARIABLE actual_exit
  OUTPUT_VARIABLE actual_stdout
  ERROR_VARIABLE actual_stderr)

# ---- the checks --------------------------------------------------------------
set(problems "")
if(NOT "${actual_exit}" STREQUAL "${EXPECT_EXIT}")
  string(APPEND problems "  exit code: expected ${EXPECT_EXIT}, got ${actual_exit}\n")
endif()
if(DEFINED EXPECT_STDOUT)
  _unescape_newlines(EXPECT_STDOUT)
  if(NOT "${actual_stdout}" STREQUAL "${EXPECT_STDOUT}")
    string(APPEND problems "  stdout differs: expected [${EXPECT_STDOUT}]\n")
  endif()
endif()
if(DEFINED EXPECT_STDERR)
  _unescape_newlines(EXPECT_STDERR)
  if(NOT "${actual_stderr}" STREQUAL "${EXPECT_STDERR}")
    string(APPEND problems "  stderr differs: expected [${EXPECT_STDERR}]\n")
  endif()
endif()
if(DEFINED EXPECT_STDOUT_REGEX)
  if(NOT "${actual_stdout}" MATCHES "${EXPECT_STDOUT_REGEX}")
    string(APPEND problems "  stdout does not match regex [${EXPECT_STDOUT_REGEX}]\n")
  endif()
endif()
if(DEFINED EXPECT_STDERR_REGEX)
  if(NOT "${actual_stderr}" MATCHES "${EXPECT_STDERR_REGEX}")
    string(APPEND problems "  stderr does not match regex [${EXPECT_STDERR_REGEX}]\n")
  endif()
endif()

list(JOIN CMD " " cmd_text)
if(problems STREQUAL "")
  message("PASS: ${cmd_text}")
else()
  message(NOTICE
    "FAIL: ${cmd_text}\n${problems}"
    "---- exit code: ${actual_exit}\n"
    "---- stdout:\n${actual_stdout}\n"
    "---- stderr:\n${actual_stderr}\n"
    "---- end")
  message(FATAL_ERROR "expect_output.cmake: the command did not behave as expected (see above)")
endif()
