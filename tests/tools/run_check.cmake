# Runs one topocoll-logp command and checks its output (cmake -P script, used by
# tests/tools/CMakeLists.txt).
#
#   cmake -DCMD_FILE=F -DPASS_FILE=F [-DFAIL_REGEX=R] [-DEXPECT_RC=N] [-DTRIES=N]
#         -P run_check.cmake
#
# CMD_FILE   the command (launcher, -n, N, tool, arguments) as a CMake list
# PASS_FILE  the expected output as a CMake list of regex pieces; their
#            concatenation must match somewhere in stdout+stderr. Pieces
#            should end at line ends: on a mismatch the script names the first
#            piece the output stops matching at, which says which line is off.
# FAIL_REGEX the output must not match it
# EXPECT_RC  the command's exit code (default 0)
# TRIES      attempts (default 1). topocoll-logp measures time: a value that
#            comes out of range under load may change what is printed. With
#            TRIES 2, a mismatch is printed in full with its reason and the
#            command runs once more; the test passes only if that run matches.
#            The first run's output stays in the log for whoever reads it.
cmake_minimum_required(VERSION 3.16)
foreach(v CMD_FILE PASS_FILE)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "run_check.cmake: -D${v}=... missing")
  endif()
endforeach()
if(NOT DEFINED EXPECT_RC)
  set(EXPECT_RC 0)
endif()
if(NOT DEFINED TRIES)
  set(TRIES 1)
endif()
file(READ "${CMD_FILE}" cmd)
file(READ "${PASS_FILE}" pieces)

# check_output(OUT RC RESULT-VAR): "" when it passes, else the reason.
function(check_output out rc result)
  if(NOT rc STREQUAL EXPECT_RC)
    set(${result} "exit code ${rc}, expected ${EXPECT_RC}" PARENT_SCOPE)
    return()
  endif()
  if(DEFINED FAIL_REGEX AND out MATCHES "${FAIL_REGEX}")
    set(${result} "the output matches the forbidden '${FAIL_REGEX}'" PARENT_SCOPE)
    return()
  endif()
  set(prefix "")
  set(k 0)
  foreach(p IN LISTS pieces)
    math(EXPR k "${k} + 1")
    string(APPEND prefix "${p}")
    if(NOT out MATCHES "${prefix}")
      set(${result} "expected piece ${k} not found after the ones before it: '${p}'"
          PARENT_SCOPE)
      return()
    endif()
  endforeach()
  set(${result} "" PARENT_SCOPE)
endfunction()

foreach(try RANGE 1 ${TRIES})
  execute_process(COMMAND ${cmd} OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE rc)
  check_output("${out}" "${rc}" why)
  if(why STREQUAL "")
    message("${out}")
    if(try GREATER 1)
      message("run_check: attempt ${try} of ${TRIES} matched (the earlier one did not: above)")
    endif()
    return()
  endif()
  message("${out}")
  message("run_check: attempt ${try} of ${TRIES}: ${why}")
endforeach()
message(FATAL_ERROR "run_check: no attempt matched")
