# Runs an MPI job with TC_STATS=1 (set by ctest) and checks that the
# shared-memory path was taken.
#
#   cmake -DLAUNCHER=... -DNPFLAG=-n -DNP=2 -DEXE=... [-DARGS="--a 1"]
#         -DOPS="reduce@@allreduce" [-DHARD_TIMEOUT=120] [-DUSED=shm|hier]
#         [-DRACE=some|none] -P check_stats_shm.cmake
#
# Passes when the job exits 0 and, for every rank 0..NP-1 and every op in OPS
# ('@@'-separated: a ';' would split the -D argument inside add_test), the
# library printed "topocoll-stats rank=R op=OP calls=C shm=S hier=H ..."
# with S > 0 (H > 0 with USED=hier), and, with RACE, its pmpi_race count is
# > 0 (some: the race against the MPI's own handed it calls) or 0 (none).
# A missing line fails too: a fallback that counted nothing must not pass.
foreach(v LAUNCHER NPFLAG NP EXE OPS)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "check_stats_shm.cmake: -D${v}=... missing")
  endif()
endforeach()
if(NOT USED)
  set(USED shm)
endif()
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
    if(all MATCHES
       "topocoll-stats rank=${r} op=${op} calls=([0-9]+) shm=([0-9]+) hier=([0-9]+) [^\n]* pmpi_race=([0-9]+)")
      set(calls ${CMAKE_MATCH_1})
      set(race ${CMAKE_MATCH_4})
      if(USED STREQUAL "hier")
        set(used ${CMAKE_MATCH_3})
      else()
        set(used ${CMAKE_MATCH_2})
      endif()
      if(used EQUAL 0)
        list(APPEND bad "rank ${r} op=${op}: ${USED}=0 of ${calls} calls")
      endif()
      if(RACE STREQUAL "some" AND race EQUAL 0)
        list(APPEND bad "rank ${r} op=${op}: pmpi_race=0 of ${calls} calls (the race never ran)")
      elseif(RACE STREQUAL "none" AND NOT race EQUAL 0)
        list(APPEND bad "rank ${r} op=${op}: pmpi_race=${race} of ${calls} calls (must not race)")
      endif()
    else()
      list(APPEND bad "rank ${r} op=${op}: no topocoll-stats line")
    endif()
  endforeach()
endforeach()
if(bad)
  string(REPLACE ";" "\n  " bad "${bad}")
  message(FATAL_ERROR "FAIL: the paths taken are not the expected ones:\n  ${bad}")
endif()
message("${USED} path used by every rank for: ${ops} (race: ${RACE})")
