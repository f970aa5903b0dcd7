# Tests of tools/topocoll-logp (included by tests/CMakeLists.txt). Each run uses
# --quick (5 repetitions, 64 KiB..1 MiB) and takes a few seconds.
#
# logp_tool_np2       np=2: a table per level (with the eager-limit scan: E and the
#                     rendezvous step rdv, or no step) and the shm table on stdout, the
#                     summary (the level with E rdv w, and the shm row), the file written
# logp_tool_file_np2  that file: the library's loader reads it, an independent reading
#                     of the text agrees, one level and the shm row measured with
#                     plausible values, every other level keeps its default (test_logp_file)
# logp_tool_shm_np2   --level shm: only the shm row (every parameter line of its table),
#                     logp_tool_file_shm_np2 checks its file (no level measured)
# logp_tool_np1       np=1: a clear message, exit 0, no file
# logp_tool_nolevel_np2  --level switch4 (no such pair without a network file): a clear message (exit 1)
# logp_tool_locfile_np8  Open MPI only (MPICH is too slow oversubscribed): the
#                     posed 2x2x2 machine, --level node measures ranks 0 and 2 only;
#                     8 ranks on a machine with fewer CPUs (CI): oversubscribed, so only w
#                     (token ring of all ranks) is measured and written (test_logp_file
#                     checks the rest kept the defaults and w > 0)
# (No ';' in the regexes: CMake would split them into a list of alternatives.)

add_executable(test_logp_file ${CMAKE_CURRENT_SOURCE_DIR}/logp_tool/test_logp_file.c)
target_link_libraries(test_logp_file PRIVATE topocoll_internal)

set(tc_logp_dir ${CMAKE_CURRENT_BINARY_DIR}/logp_tool)
file(MAKE_DIRECTORY ${tc_logp_dir})

tc_add_mpi_test(logp_tool_np2 topocoll-logp 2 TIMEOUT 60
  ARGS --quick -o ${tc_logp_dir}/np2.txt)
set_tests_properties(logp_tool_np2 PROPERTIES
  FIXTURES_SETUP logp_np2
  PASS_REGULAR_EXPRESSION "# pairs [^\n]*: [a-z0-9]+\\(0,1\\)\n\n## level [a-z0-9]+: ranks 0 and 1, 5 repetitions\n[^\n]*round trip[^\n]*\nparam +median +q1 \\.\\. q3 +min \\.\\. max +unit\nL +[0-9.]+ [^\n]*us\no_s +[0-9.]+ [^\n]*us\no_r +[0-9.]+ [^\n]*us\ng +[0-9.]+ [^\n]*us\nG +[0-9.]+ [^\n]*us/byte\n.*\nping-pong one-way, us: 1024:[0-9.]+ [^\n]*262144:[0-9.]+\n(eager limit E = [0-9]+ bytes [^\n]*rendezvous step rdv = [0-9.]+ us|eager limit: no step)[^\n]*\n.*## shm: flags in shared memory between ranks 0 and 1 .one node., 5 repetitions\n.*## Summary [^\n]*\nlevel +L +o_s +o_r +g +G +E +rdv +w\n[a-z0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9]+ +[0-9.]+ +[0-9.]+\nshm +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+  .flags in shared memory.\nwrote ")
# Fails if logp_tool_np2 did not write a fresh file: remove the old one first.
add_test(NAME logp_tool_clean_np2 COMMAND ${CMAKE_COMMAND} -E rm -f ${tc_logp_dir}/np2.txt)
set_tests_properties(logp_tool_clean_np2 PROPERTIES FIXTURES_SETUP logp_np2_clean LABELS mpi)
set_tests_properties(logp_tool_np2 PROPERTIES FIXTURES_REQUIRED logp_np2_clean)
add_test(NAME logp_tool_file_np2 COMMAND test_logp_file ${tc_logp_dir}/np2.txt 2)
set_tests_properties(logp_tool_file_np2 PROPERTIES
  FIXTURES_REQUIRED logp_np2 TIMEOUT 30 LABELS mpi)

tc_add_mpi_test(logp_tool_shm_np2 topocoll-logp 2 TIMEOUT 60
  ARGS --quick --level shm -o ${tc_logp_dir}/shm2.txt)
set_tests_properties(logp_tool_shm_np2 PROPERTIES
  FIXTURES_SETUP logp_shm2
  PASS_REGULAR_EXPRESSION "\n## shm: flags in shared memory between ranks 0 and 1 .one node., 5 repetitions\n[^\n]*\nparam +median +q1 \\.\\. q3 +min \\.\\. max +unit\nM +[0-9.]+ [^\n]*us\nstore +[0-9.]+ [^\n]*us\ncall +[0-9.]+ [^\n]*us\no_r +[0-9.]+ [^\n]*us\ng_burst +[0-9.]+ [^\n]*us\ng_atomic +[0-9.]+ [^\n]*us\ng_stream +[0-9.]+ [^\n]*us\nG +[0-9.]+ [^\n]*us/byte\n.*## Summary [^\n]*\nlevel +L +o_s +o_r +g +G +E +rdv +w\nshm +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+  .flags in shared memory.\nwrote "
  FAIL_REGULAR_EXPRESSION "## level")
add_test(NAME logp_tool_clean_shm2 COMMAND ${CMAKE_COMMAND} -E rm -f ${tc_logp_dir}/shm2.txt)
set_tests_properties(logp_tool_clean_shm2 PROPERTIES FIXTURES_SETUP logp_shm2_clean LABELS mpi)
set_tests_properties(logp_tool_shm_np2 PROPERTIES FIXTURES_REQUIRED logp_shm2_clean)
add_test(NAME logp_tool_file_shm_np2 COMMAND test_logp_file ${tc_logp_dir}/shm2.txt 2 shm)
set_tests_properties(logp_tool_file_shm_np2 PROPERTIES
  FIXTURES_REQUIRED logp_shm2 TIMEOUT 30 LABELS mpi)

tc_add_mpi_test(logp_tool_np1 topocoll-logp 1 TIMEOUT 30
  ARGS --quick -o ${tc_logp_dir}/np1.txt)
set_tests_properties(logp_tool_np1 PROPERTIES
  PASS_REGULAR_EXPRESSION "topocoll-logp: one process: [^\n]*nothing to measure. no file written"
  FAIL_REGULAR_EXPRESSION "## level")

tc_add_mpi_test(logp_tool_nolevel_np2 topocoll-logp 2 TIMEOUT 30
  ARGS --quick --level switch4 -o ${tc_logp_dir}/nolevel.txt)
set_tests_properties(logp_tool_nolevel_np2 PROPERTIES
  PASS_REGULAR_EXPRESSION "--level switch4: no pair of ranks has that level as closest common unit here. nothing measured, no file written"
  FAIL_REGULAR_EXPRESSION "## level")

if(TOPOCOLL_MPI_FLAVOR STREQUAL "openmpi")
  tc_add_mpi_test(logp_tool_locfile_np8 topocoll-logp 8 TIMEOUT 60
    ENV TC_LOCALITY_FILE=${CMAKE_CURRENT_SOURCE_DIR}/data/locfile-2x2x2.txt
    ARGS --quick --level node -o ${tc_logp_dir}/np8.txt)
  set_tests_properties(logp_tool_locfile_np8 PROPERTIES
    FIXTURES_SETUP logp_np8
    PASS_REGULAR_EXPRESSION "# pairs [^\n]*: package\\(0,1\\) node\\(0,2\\) top\\(0,4\\)\n(# oversubscribed [^\n]*measuring w only[^\n]*\n)?\n## level node: ranks 0 and 2, 5 repetitions\n.*## Summary [^\n]*\nlevel +L +o_s +o_r +g +G +E +rdv +w\nnode +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9]+ +[0-9.]+ +[0-9.]+(  .w measured. the rest from the base.)?\nwrote "
    FAIL_REGULAR_EXPRESSION "## level (package|top)")
  add_test(NAME logp_tool_clean_np8 COMMAND ${CMAKE_COMMAND} -E rm -f ${tc_logp_dir}/np8.txt)
  set_tests_properties(logp_tool_clean_np8 PROPERTIES FIXTURES_SETUP logp_np8_clean LABELS mpi)
  set_tests_properties(logp_tool_locfile_np8 PROPERTIES FIXTURES_REQUIRED logp_np8_clean)
  add_test(NAME logp_tool_file_np8 COMMAND test_logp_file ${tc_logp_dir}/np8.txt 8 node)
  set_tests_properties(logp_tool_file_np8 PROPERTIES
    FIXTURES_REQUIRED logp_np8 TIMEOUT 30 LABELS mpi)
endif()
