# Suite-wide ctest properties by test name, in one place (included by
# tc_test_properties_apply() in cmake/TopocollTesting.cmake, which runs at the
# end of every directory that adds tests through tc_add_unit_test or
# tc_add_mpi_test, after that directory's own set_tests_properties). A test
# added later by any helper that matches a pattern gets the property without
# its definition changing.
#
# tests/run.sh runs ctest with -j (2 x CPUs: MPI tests count PROCESSORS 2, so
# two of them share a 2-core machine). No test may assert a bound on a
# measured time, so sharing the cores changes how long tests take, not
# whether they pass. What cannot share:
#
# TC_TESTS_RUN_SERIAL: tests that look at the whole machine's /dev/shm. A
#   segment exists there between its creation and the moment every process
#   has mapped it; a test running beside them would count another test's
#   segment as its own leftover.
#   - mpi_bcast_churn_*: /dev/shm/topocoll-* must not grow over 1000
#     communicators;
#   - mpi_shm_leftover_check: no topocoll-* entry left after the MPI tests
#     (the cleanup of fixture tc_mpi_shm);
#   - shm_node_cap_*: TC_SHM_MAX_NODE counts every segment on the node, so
#     the test's expected usage (its start plus one segment) is off by any
#     segment of a test running beside it;
#   - shm_kill_churn_*: the named variant plants a stale /dev/shm file and
#     checks that its own next job removes it and says so; any other job
#     creating a named segment beside it (shm_mechanism_named, the numa
#     *_named tests) sweeps the same file first (seen twice in MPICH's suite).
set(TC_TESTS_RUN_SERIAL
    "^(mpi_bcast_churn_np[0-9]+|mpi_shm_leftover_check|shm_node_cap_np[0-9]+|shm_kill_churn_[a-z]+_np[0-9]+)$")

# TC_TESTS_MPI_TIMEOUT_MIN: the least TIMEOUT of an MPI test (label mpi), in
#   seconds; a smaller one set where the test is defined is raised to it. The
#   ctest TIMEOUT only bounds a job that never ends: a wait inside the library
#   that makes no progress already ends after TC_WAIT_TIMEOUT (120 s in the
#   tests) with a message naming stage and peer, and the tests' watchdogs fire
#   on no progress. Meanwhile on a machine loaded by other jobs a 3-8 s
#   broadcast test took over 120 s (load average 38 on 2 cores).
set(TC_TESTS_MPI_TIMEOUT_MIN 300)
