#!/bin/sh
# Instructions and PMPI_* calls per call of TC_* and of the MPI's own, at np=1,
# under callgrind (issue 16; docs/measurements/dispatch-2026-11-25.md).
#   [OPS='bcast reduce'] bench/dispatch-count.sh BUILD_DIR openmpi|mpich [N]
# Runs bench/dispatch-loop for N and 2N calls and prints, per operation and
# implementation, (Ir(2N) - Ir(N)) / N: the warm-up and MPI_Init/Finalize
# cancel out. "pmpi" is the number of PMPI_* functions entered per call from
# inside run_loop that the MPI did not call itself (TC's own calls to the MPI,
# or 1 for the MPI side).
set -eu
build=$1
mpi=$2
n=${3:-20000}
loop=$build/bench/dispatch-loop
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
case $mpi in
openmpi)
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_MCA_rmaps_base_oversubscribe=1
    launch="mpirun.openmpi -np 1" ;;
mpich) launch="mpiexec.mpich -n 1" ;;
*) echo "usage: $0 BUILD_DIR openmpi|mpich [N]" >&2; exit 2 ;;
esac
ir() { # op impl count -> total Ir under run_loop; callgrind file kept as $tmp/cg.$4
    $launch valgrind --tool=callgrind --toggle-collect='run_loop*' --compress-strings=no \
        --callgrind-out-file="$tmp/cg.$4" "$loop" "$1" "$2" "$3" >/dev/null 2>&1
    callgrind_annotate "$tmp/cg.$4" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",","",$1); print $1}'
}
pmpi() { # callgrind file -> PMPI_* calls made by the library or by run_loop itself
    awk '/^fn=/ {caller = substr($0, 4)} /^cfn=/ {callee = substr($0, 5)}
         /^calls=/ { split($1, a, "=")
                     if (callee ~ /^P?MPI_/ && caller ~ /^(TC_|tc_|run_loop)/) s += a[2] }
         END {print s + 0}' "$1"
}
printf '%-10s %-4s %10s %8s\n' op impl Ir/call pmpi/call
for op in ${OPS:-bcast reduce allreduce barrier}; do
    for impl in tc mpi; do
        a=$(ir $op $impl "$n" a)
        b=$(ir $op $impl $((2 * n)) b)
        pa=$(pmpi "$tmp/cg.a")
        pb=$(pmpi "$tmp/cg.b")
        awk -v a="$a" -v b="$b" -v pa="$pa" -v pb="$pb" -v n="$n" -v op=$op -v impl=$impl \
            'BEGIN {printf "%-10s %-4s %10.1f %8.2f\n", op, impl, (b - a) / n, (pb - pa) / n}'
    done
done
