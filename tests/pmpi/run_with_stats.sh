#!/bin/sh
# Per-rank driver for the PMPI drop-in tests:
#   mpiexec -n NP sh run_with_stats.sh PROGRAM [ARGS...]
# Environment: TC_PMPI_PRELOAD (path of libtopocoll_pmpi.so), TC_TEST_NP.
#
# Runs PROGRAM (one MPI process; it inherits the launcher's environment) with
# LD_PRELOAD=$TC_PMPI_PRELOAD and TC_STATS=1, and checks this process's
# output: the program's line "tc-pmpi-test rank=R [bcasts=N] [reduces=N]
# [allreduces=N] [barriers=N] errors=E" and the library's "topocoll-stats rank=R op=OP
# calls=C shm=S ... pmpi=P ..." lines. Passes only if the program passed and,
# for each count the program reports:
#   bcasts=N,     C == N (every MPI_Bcast, MPI_Allgather(v), MPI_Gather(v),
#   allgathers=N, MPI_Scatter(v) was intercepted), P == 0 and every
#   allgathervs=N, (likewise gathers=, gathervs=, scatters=, scattervs=,
#                 alltoalls=, alltoallvs=)
#                 pmpi_* counter is 0 (no fallback), S > 0 when NP >= 2 (the
#                 shared-memory path ran; with TC_PMPI_EXPECT_PATH=hier, set by
#                 the emulated-cluster tests, H > 0: the hierarchical path ran);
#   reduces=N,    when N > 0: an op=reduce / op=allreduce / op=barrier line
#   allreduces=N, with C >= N (every call the program made reached the library; ">=" and
#   barriers=N    no path asserted, so an algorithm that counts an inner call
#                 or takes any path - shm, hier, trivial, pmpi_* - still passes;
#                 with TC_PMPI_EXPECT_PATH=hier: and H > 0).
#   reduce_scatter_blocks=N, reduce_scatters=N, scans=N, exscans=N: as reduces=N, and S > 0 when
#                 NP >= 2 (the shared-memory path ran; not checked with
#                 TC_PMPI_EXPECT_PATH=hier, where they go to the MPI's own).
#   large_counts=N: the pmpi_large_count counters of all this process's
#                 lines add up to N (MPI_*_c calls handed to the MPI's own
#                 because a count is beyond INT_MAX; 0: none was).
# The launcher fails if any rank fails, so every rank is checked. The preload
# is set here rather than for the whole test so that the launcher, this shell
# and awk do not load the library.
set -u

if [ -z "${TC_PMPI_PRELOAD:-}" ] || [ ! -f "$TC_PMPI_PRELOAD" ]; then
    echo "run_with_stats.sh: TC_PMPI_PRELOAD='${TC_PMPI_PRELOAD:-}' is not a file" >&2
    exit 1
fi

log=$(mktemp "${TMPDIR:-/tmp}/tc-pmpi-log.XXXXXX") || exit 1
trap 'rm -f "$log"' EXIT

# The program's output goes through tee, not into a file shown afterwards:
# when a rank aborts, the launcher SIGKILLs every rank, this shell included,
# and held-back output would be lost (so would $log, which lives in TMPDIR).
# Its exit status follows as a last line. An ASan build's runtime must come
# first in the library list, which a preloaded instrumented shim breaks
# harmlessly; other builds ignore ASAN_OPTIONS.
{
    LD_PRELOAD="$TC_PMPI_PRELOAD${LD_PRELOAD:+:$LD_PRELOAD}" TC_STATS=1 \
        ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
        "$@" 2>&1
    echo "tc-pmpi-exit-status $?"
} | tee "$log"

# The topocoll-stats lines are parsed by the harness's tc_stats.awk (this
# process's lines: tc_stats_nop[op], tc_stats_lineop[op]).
tc_stats_awk=$(dirname "$0")/../harness/tc_stats.awk
awk -v np="${TC_TEST_NP:-0}" -v path="${TC_PMPI_EXPECT_PATH:-shm}" "$(cat "$tc_stats_awk")"'
    /^tc-pmpi-exit-status / { prog_rc = $2; next }
    /^tc-pmpi-test / {
        nprog++
        rank = tc_stats_field($0, "rank")
        want["bcast"] = tc_stats_field($0, "bcasts")
        want["reduce"] = tc_stats_field($0, "reduces")
        want["allreduce"] = tc_stats_field($0, "allreduces")
        want["barrier"] = tc_stats_field($0, "barriers")
        want["reduce_scatter_block"] = tc_stats_field($0, "reduce_scatter_blocks")
        want["reduce_scatter"] = tc_stats_field($0, "reduce_scatters")
        want["scan"] = tc_stats_field($0, "scans")
        want["exscan"] = tc_stats_field($0, "exscans")
        want["allgather"] = tc_stats_field($0, "allgathers")
        want["allgatherv"] = tc_stats_field($0, "allgathervs")
        want["gather"] = tc_stats_field($0, "gathers")
        want["gatherv"] = tc_stats_field($0, "gathervs")
        want["scatter"] = tc_stats_field($0, "scatters")
        want["scatterv"] = tc_stats_field($0, "scattervs")
        want["alltoall"] = tc_stats_field($0, "alltoalls")
        want["alltoallv"] = tc_stats_field($0, "alltoallvs")
        want_large = tc_stats_field($0, "large_counts")
    }
    END {
        if (prog_rc == "") { print "run_with_stats.sh: no exit status from the program"; exit 1 }
        if (prog_rc != 0) { print "run_with_stats.sh: the program exited with " prog_rc; exit prog_rc }
        if (nprog != 1) { print "run_with_stats.sh: expected one tc-pmpi-test line, got " nprog + 0; exit 1 }
        if (want["bcast"] == "" && want["reduce"] == "" && want["allreduce"] == "" && want["barrier"] == "" && want["reduce_scatter_block"] == "" && want["reduce_scatter"] == "" && want["scan"] == "" && want["exscan"] == "" && want["allgather"] == "" && want["allgatherv"] == "" && want["gather"] == "" && want["scatter"] == "" && want["alltoall"] == "" && want["alltoallv"] == "" && want_large == "") {
            print "run_with_stats.sh: the program reported no call counts"; exit 1
        }
        bad = ""; summary = ""; checked = 0
        nops = split("bcast reduce allreduce barrier reduce_scatter_block reduce_scatter scan exscan allgather allgatherv gather gatherv scatter scatterv alltoall alltoallv", ops, " ")
        for (k = 1; k <= nops; k++) {
            op = ops[k]
            if (want[op] == "" || (op != "bcast" && want[op] + 0 == 0))
                continue
            if (tc_stats_nop[op] != 1) {
                bad = bad " expected one topocoll-stats op=" op " line, got " tc_stats_nop[op] + 0 " (was the library used?);"
                continue
            }
            s = tc_stats_lineop[op]
            checked++
            if (tc_stats_field(s, "rank") != rank) bad = bad " " op ": rank mismatch;"
            if (op == "bcast" || op ~ /^(allgatherv?|gatherv?|scatterv?|alltoallv?)$/) {
                if (tc_stats_field(s, "calls") + 0 != want[op] + 0) bad = bad " " op ": calls=" tc_stats_field(s, "calls") " != " want[op] " calls made;"
                split("pmpi pmpi_multinode pmpi_shm_off pmpi_no_segment pmpi_intercomm", keys, " ")
                for (j in keys) {
                    v = tc_stats_field(s, keys[j])
                    if (v == "" || v + 0 != 0) bad = bad " " op ": " keys[j] "=" v " (want 0);"
                }
                if (np + 0 >= 2 && tc_stats_field(s, path) + 0 <= 0) bad = bad " " op ": " path "=" tc_stats_field(s, path) " (want > 0);"
            } else if (tc_stats_field(s, "calls") + 0 < want[op] + 0) {
                bad = bad " " op ": calls=" tc_stats_field(s, "calls") " < " want[op] " calls made;"
            } else if (path == "hier" && tc_stats_field(s, "hier") + 0 <= 0) {
                bad = bad " " op ": hier=" tc_stats_field(s, "hier") " (want > 0);"
            } else if (op ~ /^(reduce_scatter|scan|exscan)/ && path == "shm" && np + 0 >= 2 && tc_stats_field(s, "shm") + 0 <= 0) {
                bad = bad " " op ": shm=" tc_stats_field(s, "shm") " (want > 0: the library path ran);"
            }
            summary = summary " " op ": " want[op] " calls, stats calls=" tc_stats_field(s, "calls") " shm=" tc_stats_field(s, "shm") " hier=" tc_stats_field(s, "hier") " trivial=" tc_stats_field(s, "trivial") " pmpi=" tc_stats_field(s, "pmpi") ";"
        }
        if (want_large != "") {
            large = 0
            for (k = 1; k <= nops; k++)
                if (tc_stats_nop[ops[k]] > 0)
                    large += tc_stats_field(tc_stats_lineop[ops[k]], "pmpi_large_count")
            if (large != want_large + 0) bad = bad " pmpi_large_count=" large " in all, want " want_large ";"
            checked++
            summary = summary " large counts to the MPI: " large ";"
        }
        if (bad == "" && checked == 0) bad = " nothing to check (all counts 0);"
        if (bad != "") { print "run_with_stats.sh: rank " rank ":" bad; exit 1 }
        print "run_with_stats.sh: rank " rank ": " (want_large + 0 > 0 ? "as expected:" : "all through the library:") summary
    }
' "$log"
