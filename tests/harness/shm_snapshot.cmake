# /dev/shm leftover check around the MPI tests (ctest fixture tc_mpi_shm).
#
#   cmake -DMODE=before -DSTATE=<file> -P shm_snapshot.cmake   (FIXTURES_SETUP)
#   cmake -DMODE=after  -DSTATE=<file> -P shm_snapshot.cmake   (FIXTURES_CLEANUP)
#
# "before" records the /dev/shm/topocoll-* entries that exist already;
# "after" fails if any other such entry exists. Segments are unlinked right
# after every process mapped them, so one may exist for an instant while a
# test of another directory runs in parallel: new entries get 10 s to vanish
# (the check is RUN_SERIAL, tests/ctest_properties.cmake: nothing else runs
# beside it, but a busy machine may still be tearing down a finished job).
if(NOT MODE OR NOT STATE)
  message(FATAL_ERROR "shm_snapshot.cmake: -DMODE=before|after -DSTATE=<file> required")
endif()
file(GLOB now LIST_DIRECTORIES true /dev/shm/topocoll-*)

if(MODE STREQUAL "before")
  file(WRITE "${STATE}" "${now}")
  list(LENGTH now n)
  message("recorded ${n} pre-existing /dev/shm/topocoll-* entries: ${now}")
  return()
endif()

set(before "")
if(EXISTS "${STATE}")
  file(READ "${STATE}" before)
else()
  message("no snapshot ${STATE}: comparing against an empty /dev/shm")
endif()
foreach(try RANGE 100)
  file(GLOB now LIST_DIRECTORIES true /dev/shm/topocoll-*)
  set(new ${now})
  if(before)
    list(REMOVE_ITEM new ${before})
  endif()
  if(NOT new)
    break()
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E sleep 0.1)
endforeach()
if(new)
  message(FATAL_ERROR "FAIL: /dev/shm entries left behind by the MPI tests: ${new}")
endif()
message("PASS: no new /dev/shm/topocoll-* entries")
