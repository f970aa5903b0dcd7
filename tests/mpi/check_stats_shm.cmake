# Runs an MPI job with TC_STATS=1 (set by ctest) and checks that the
# shared-memory path was taken.
#
#   cmake -DLAUNCHER=... -DNPFLAG=-n -DNP=2 -DEXE=... [-DARGS="--a 1"]
#         -DOPS="reduce@@allreduce" [-DHARD_TIMEOUT=120] -P check_stats_shm.cmake
#
# Passes when the job exits 0 and, for every rank 0..NP-1 and every op in OPS
# ('@@'-separated: a ';' would split the -D argument inside add_test), the
# library printed "topocoll-stats rank=R op=OP calls=C shm=S ..." with S > 0.
# A missing line fails too: a fallback that counted nothing must not pass.
foreach(v LAUNCHER NPFLAG NP EXE OPS)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "check_stats_shm.cmake: -D${v}=... missing")
  endif()
endforeach()
if(NOT HARD_TIMEOUT)
  set(HARD_TIMEOUT 120)
endif()
separate_arguments(args UNIX_COMMAND "${ARGS}")
string(REPLACE "@@" ";" ops "${OPS}")

execute_process(
  COMMAND ${LAUNCHER} ${NPFLAG} ${NP} ${EXE} ${args}
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err
  RESULT_VARIABLE rc
  TIMEOUT ${HARD_TIMEOUT})
message("---- job stdout ----\n${out}\n---- job stderr ----\n${err}\n---- exit: ${rc}")
if(NOT rc STREQUAL "0")
  message(FATAL_ERROR "FAIL: the job exited with ${rc}")
endif()

set(all "${out}\n${err}")
math(EXPR last "${NP} - 1")
set(bad "")
foreach(op IN LISTS ops)
  foreach(r RANGE ${last})
    if(all MATCHES "topocoll-stats rank=${r} op=${op} calls=([0-9]+) shm=([0-9]+) ")
      if(CMAKE_MATCH_2 EQUAL 0)
        list(APPEND bad "rank ${r} op=${op}: shm=0 of ${CMAKE_MATCH_1} calls")
      endif()
    else()
      list(APPEND bad "rank ${r} op=${op}: no topocoll-stats line")
    endif()
  endforeach()
endforeach()
if(bad)
  string(REPLACE ";" "\n  " bad "${bad}")
  message(FATAL_ERROR "FAIL: the shared-memory path was not used:\n  ${bad}")
endif()
message("shm path used by every rank for: ${ops}")
