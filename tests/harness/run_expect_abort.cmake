# Runs an MPI job that must fail with given words in its output.
#
#   cmake -DLAUNCHER=... -DNPFLAG=-n -DNP=2 -DEXE=... [-DARGS="--a 1 --b 2"]
#         -DEXPECT="timed out@@bcast" [-DHARD_TIMEOUT=60] -P run_expect_abort.cmake
#
# (ARGS is split like a shell command line and EXPECT on '@@': a ';' would
# split the -D argument itself inside add_test.)
#
# Passes when the job exits non-zero on its own and one line of its output
# (stdout or stderr, in lower case) matches every EXPECT regular expression
# (write them in lower case). Fails when the
# job succeeds, when a word is missing, or when the driver had to kill the
# job after HARD_TIMEOUT seconds (a hang is exactly what the test is about).
# The environment (TC_*, Open MPI settings, TC_TEST_NP) comes from ctest.
foreach(v LAUNCHER NPFLAG NP EXE EXPECT)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "run_expect_abort.cmake: -D${v}=... missing")
  endif()
endforeach()
if(NOT HARD_TIMEOUT)
  set(HARD_TIMEOUT 60)
endif()
separate_arguments(args UNIX_COMMAND "${ARGS}")
string(REPLACE "@@" ";" expect "${EXPECT}")

execute_process(
  COMMAND ${LAUNCHER} ${NPFLAG} ${NP} ${EXE} ${args}
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err
  RESULT_VARIABLE rc
  TIMEOUT ${HARD_TIMEOUT})
message("---- job stdout ----\n${out}\n---- job stderr ----\n${err}\n---- exit: ${rc}")

if(rc STREQUAL "77")
  # cmake -P cannot exit 77 before CMake 3.29: the test's
  # SKIP_REGULAR_EXPRESSION matches this line instead.
  message("TC_TEST_SKIPPED: the job reported it cannot run here (exit 77)")
  return()
endif()
if(rc MATCHES "[Tt]ime" OR NOT rc MATCHES "^-?[0-9]+$")
  message(FATAL_ERROR "FAIL: the job did not end by itself within ${HARD_TIMEOUT} s (${rc})")
endif()
if(rc EQUAL 0)
  message(FATAL_ERROR "FAIL: the job succeeded but must have aborted")
endif()
string(TOLOWER "${out}\n${err}" all)
# Make the text a safe CMake list: ';' separates, brackets group.
string(REPLACE ";" "," all "${all}")
string(REPLACE "[" "(" all "${all}")
string(REPLACE "]" ")" all "${all}")
string(REPLACE "\n" ";" lines "${all}")
set(found "")
foreach(line IN LISTS lines)
  set(ok TRUE)
  foreach(re IN LISTS expect)
    if(NOT line MATCHES "${re}")
      set(ok FALSE)
      break()
    endif()
  endforeach()
  if(ok)
    set(found "${line}")
    break()
  endif()
endforeach()
if(NOT found)
  message(FATAL_ERROR "FAIL: the job failed (exit ${rc}) but no line of its output matches all of ${EXPECT}")
endif()
message("PASS: the job aborted (exit ${rc}); this line matches ${EXPECT}:\n${found}")
