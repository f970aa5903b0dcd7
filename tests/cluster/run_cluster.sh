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

awk -v np="$np" -v ops="$ops" '
    function field(line, key,    n, i, kv, f) {
        n = split(line, f, " ")
        for (i = 1; i <= n; i++) {
            split(f[i], kv, "=")
            if (kv[1] == key)
                return kv[2]
        }
        return ""
    }
    /^topocoll-stats rank=/ {
        key = field($0, "rank") " " field($0, "op")
        seen[key]++
        hier[key] = field($0, "hier")
        calls[key] = field($0, "calls")
    }
    END {
        nops = split(ops, op, ",")
        bad = 0
        for (r = 0; r < np; r++) {
            for (k = 1; k <= nops; k++) {
                key = r " " op[k]
                if (seen[key] != 1) {
                    print "run_cluster.sh: FAIL: rank " r ": " seen[key] + 0 " topocoll-stats lines for op=" op[k] " (want 1; TC_STATS=1?)"
                    bad = 1
                } else if (hier[key] + 0 <= 0) {
                    print "run_cluster.sh: FAIL: rank " r " op=" op[k] ": hier=" hier[key] " of " calls[key] " calls: the hierarchical path never ran"
                    bad = 1
                }
            }
        }
        if (!bad)
            print "run_cluster.sh: the hierarchical path ran on every rank for " ops
        exit bad
    }
' "$log"
