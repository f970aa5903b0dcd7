# Suite-wide ctest properties by test name, in one place (included by
# tc_test_properties_apply() in cmake/TopocollTesting.cmake, which runs at the
# end of every directory that adds tests through tc_add_unit_test or
# tc_add_mpi_test, after that directory's own set_tests_properties). A test
# added later by any helper that matches a pattern gets the property without
# its definition changing.
#
# tests/run.sh runs ctest with -j 2 x CPUs (MPICH, TSan) or 3 x CPUs (the
# Open MPI suites): MPI tests count PROCESSORS 2 (3 at np >= 5, set by
# tc_add_mpi_test), so two or three of them share a 2-core machine. No test may assert a bound on a
# measured time, so sharing the cores changes how long tests take, not
# whether they pass. What cannot share:
#
# TC_TESTS_RUN_SERIAL: tests that count what the whole machine holds. Nothing
#   else of the suite runs beside them (ctest starts them last).
#   - mpi_shm_leftover_check: no topocoll-* entry left after the MPI tests
#     (the cleanup of fixture tc_mpi_shm);
#   - shm_node_cap_*: TC_SHM_MAX_NODE counts every segment on the node (memfd
#     ones too), so the test's expected usage (its start plus one segment) is
#     off by any segment of a test running beside it;
#   - shm_kill_churn_named_*: plants a stale /dev/shm file and checks that its
#     own next job removes it and says so; the creator of ANY segment (memfd
#     too: segment.c sweeps stale named files before it chooses the mechanism)
#     beside it sweeps the file first (seen in a clean-clone CI run at -j 6
#     with the test only under the tc_shm_named lock).
set(TC_TESTS_RUN_SERIAL "^(mpi_shm_leftover_check|shm_node_cap_np[0-9]+|shm_kill_churn_named_np[0-9]+)$")

# TC_TESTS_SHM_NAMED: tests that make named /dev/shm segments or count the
#   /dev/shm/topocoll-* entries, under one RESOURCE_LOCK (tc_shm_named): one
#   at a time, beside any other test (segments are memfd ones by default: they
#   have no name in /dev/shm).
#   - shm_kill_churn_named_* (also serial, above): the named tests must not
#     run beside it either;
#   - mpi_bcast_churn_*: /dev/shm/topocoll-* must not grow over 1000
#     communicators.
#   shm_kill_churn_memfd_* needs no lock: it counts only files and mappings of
#   its own jobs' pids.
set(TC_TESTS_SHM_NAMED
    "^(shm_kill_churn_named_np[0-9]+|shm_mechanism_named[a-z0-9_]*|numa_placement_[a-z]+_named_np[0-9]+|mpi_bcast_churn_np[0-9]+)$")

# TC_TESTS_WAITING: tests that spend most of their time asleep, waiting for a
#   timeout to fire (the library's TC_WAIT_TIMEOUT, a launcher's timeout, a
#   measurement window): PROCESSORS 1 instead of 2, so a test that computes
#   runs beside them. The waits themselves are unchanged.
#   - mpi_bcast_timeout_*: TC_WAIT_TIMEOUT=5 must fire (about 5 s);
#   - cluster_kill_rank_*: a killed rank, TC_WAIT_TIMEOUT=3, then (Open MPI in
#     recovery mode) the launcher's own 20 s timeout;
#   - rma_idle_*: the helper thread's CPU time over 3 s of sleep.
set(TC_TESTS_WAITING "^(mpi_bcast_timeout_.*|cluster_kill_rank_.*|rma_idle_np[0-9]+)$")

# TC_TESTS_COST: pairs of a name regex and a COST (seconds, the longest a
#   clean-clone CI run measured on either MPI or ASan, idle machine). A fresh
#   build directory has no ctest cost data, and ctest then starts tests in
#   the order they were defined: a 20-40 s test defined last (tests/build,
#   tests/cluster) ran alone at the end of every suite while the other core
#   idled. With a COST, the longest start first. ctest sorts by COST only
#   within a dependency level, and the tests that require fixture tc_mpi_shm
#   form a level that starts before the others: a test listed here gets that
#   fixture too (its leftover check then also runs after it). Once a build
#   directory has cost data of its own (Testing/Temporary/CTestCostData.txt),
#   ctest uses the measured times instead.
set(TC_TESTS_COST
    "^build_cacheline_[0-9]+$" 33
    "^ctx_cache_np3$" 40
    "^cluster_kill_rank_" 21
    "^shm_kill_churn_(named|memfd)_np[0-9]+$" 12
    "^reduce_2x2x2_np8$" 20
    "^shm_reduce_(tree_)?slots2_np4$" 16
    "^mpi_allgather_np8(_hier)?$" 16
    "^mpi_allgather_np3_shm_off$" 14
    "^hier_level_reduce_np[58]$" 13
    "^tc_pmpi_bcast_c_large_np2$" 12
    "^reduce_np8$" 12
    "^(mpi_bcast_np3_shm_off|rs_multinode_np4|scan_multinode_np4)$" 11
    "^(mpi_bcast_2x2x2_np8|mpi_bcast_uneven_np4|mpi_bcast_agree_np5_mixed)$" 10
    "^(mpi_bcast_np4_kary2_q2_S8_f12k|barrier_shm_off_np3)$" 9
    "^(mpi_bcast_2x2x2_np8_(shm_numa|shm_none)|mpi_bcast_agree_np3_segment_fails_rank1)$" 8
    "^(mpi_bcast_np3_stream_q1_S4_f12k|race_free_uneven_np4)$" 8
    "^(mpi_bcast_timeout_.*|reduce_np5|mpi_bcast_np5_kary3_q2_S4_f4k)$" 7)

# TC_TESTS_MPI_TIMEOUT_MIN: the least TIMEOUT of an MPI test (label mpi), in
#   seconds; a smaller one set where the test is defined is raised to it. The
#   ctest TIMEOUT only bounds a job that never ends: a wait inside the library
#   that makes no progress already ends after TC_WAIT_TIMEOUT (120 s in the
#   tests) with a message naming stage and peer, and the tests' watchdogs fire
#   on no progress. Meanwhile on a machine loaded by other jobs a 3-8 s
#   broadcast test took over 120 s (load average 38 on 2 cores).
set(TC_TESTS_MPI_TIMEOUT_MIN 300)
