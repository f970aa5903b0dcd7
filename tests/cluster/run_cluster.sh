#!/bin/sh
# Driver of the emulated-cluster tests (tests/cluster/CMakeLists.txt):
#
#   run_cluster.sh [--hier OPS] [--np N] [--expect REGEX] [--expect-fail REGEX] -- COMMAND...
#
# COMMAND is topocoll-vcluster with its options, the shape and the program.
# Its output is shown in full. Exit 77 (skip) when topocoll-vcluster does
# (no namespaces here). Otherwise passes when:
#   - the job exited 0 (topocoll-vcluster also fails, with 3, when a node
#     left a segment in its /dev/shm), and, with --hier OPS (comma-separated,
#     e.g. bcast,reduce), every rank 0..N-1 printed (TC_STATS=1)
#     "topocoll-stats rank=R op=OP calls=C shm=S hier=H ..." with H > 0 for
#     every OP: the hierarchical path ran across the nodes, no silent
#     fallback to the MPI's own; with --expect REGEX, one line of the output
#     also matches the extended regular expression REGEX;
#   - or, with --expect-fail REGEX, the job failed (any non-zero status, the
#     launcher's timeout 124 included) and one line of its output matches the
#     extended regular expression REGEX.
set -u

ops=
np=
expect_fail=
expect=
while [ $# -gt 0 ]; do
    case $1 in
    --hier) ops=$2; shift 2 ;;
    --np) np=$2; shift 2 ;;
    --expect-fail) expect_fail=$2; shift 2 ;;
    --expect) expect=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "run_cluster.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
done
if [ -n "$ops" ] && [ -z "$np" ]; then
    echo "run_cluster.sh: --hier needs --np" >&2
    exit 2
fi

log=$(mktemp "${TMPDIR:-/tmp}/tc-cluster-log.XXXXXX") || exit 1
trap 'rm -f "$log"' EXIT
"$@" >"$log" 2>&1
rc=$?
cat "$log"
echo "run_cluster.sh: exit status $rc"
if [ "$rc" = 77 ]; then
    exit 77
fi

if [ -n "$expect_fail" ]; then
    if [ "$rc" = 0 ]; then
        echo "run_cluster.sh: FAIL: the job succeeded; it had to fail" >&2
        exit 1
    fi
    if ! grep -Eq -- "$expect_fail" "$log"; then
        echo "run_cluster.sh: FAIL: no line matches '$expect_fail'" >&2
        exit 1
    fi
    echo "run_cluster.sh: failed as expected: $(grep -E -m1 -- "$expect_fail" "$log")"
    exit 0
fi

if [ "$rc" != 0 ]; then
    echo "run_cluster.sh: FAIL: the job exited with $rc" >&2
    exit 1
fi
if [ -n "$expect" ] && ! grep -Eq -- "$expect" "$log"; then
    echo "run_cluster.sh: FAIL: no line matches '$expect'" >&2
    exit 1
fi
[ -n "$ops" ] || exit 0

# The topocoll-stats lines are parsed by the harness's tc_stats.awk
# (tc_stats_n[rank, op], tc_stats_line[rank, op]).
tc_stats_awk=$(dirname "$0")/../harness/tc_stats.awk
awk -v np="$np" -v ops="$ops" "$(cat "$tc_stats_awk")"'
    END {
        nops = split(ops, op, ",")
        bad = 0
        for (r = 0; r < np; r++) {
            for (k = 1; k <= nops; k++) {
                n = tc_stats_n[r, op[k]]
                line = tc_stats_line[r, op[k]]
                if (n != 1) {
                    print "run_cluster.sh: FAIL: rank " r ": " n + 0 " topocoll-stats lines for op=" op[k] " (want 1; TC_STATS=1?)"
                    bad = 1
                } else if (tc_stats_field(line, "hier") + 0 <= 0) {
                    print "run_cluster.sh: FAIL: rank " r " op=" op[k] ": hier=" tc_stats_field(line, "hier") " of " tc_stats_field(line, "calls") " calls: the hierarchical path never ran"
                    bad = 1
                }
            }
        }
        if (!bad)
            print "run_cluster.sh: the hierarchical path ran on every rank for " ops
        exit bad
    }
' "$log"
