#!/usr/bin/env bash
# run-comparison.sh — build libtopocoll for Open MPI and MPICH, run topocoll-bench
# for each operation (TC_Bcast, TC_Reduce, TC_Allreduce against the MPI's own
# collective; for bcast also the raw two-process copy pipeline as the bandwidth
# reference) with and without --off-cache, and summarise the tc/mpi time ratios,
# one table per operation.
#
#   bench/run-comparison.sh [--np N] [--runs R] [--quick] [--mpi openmpi|mpich|both]
#                           [--ops bcast,reduce,allreduce] [--type float|double|int]
#                           [--reduce-op sum|max] [--results DIR] [--build-root DIR]
#                           [--contend N]
#
# Writes into DIR (default results/ under the repository root):
#   <op>-<mpi>-np<N>-<cache|offcache>-run<k>.{txt,csv,png}   one per run
#   build-<mpi>.log                                            configure + build log
#   summary.txt                                                the final tables
# Build directories: build-openmpi and build-mpich under the repository root
# (Release). As root, missing dependencies are installed with apt-get.
set -euo pipefail

NP=2
RUNS=1
OPS=bcast,reduce,allreduce
RTYPE=float
ROP=sum
QUICK=0
CONTEND=0
MPIS=both
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RESULTS=$REPO/results
BUILD_ROOT=$REPO
SUMMARY_SIZES="4 64 1024 8192 65536 1048576 16777216"
RAW_SIZES="1048576 2097152 4194304 8388608 16777216"

usage() {
    sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'
    cat <<EOF
Options:
  --np N        processes per run (default 2; MPICH is very slow oversubscribed)
  --runs R      repeat every run R times; the summary shows the median ratio (default 1)
  --quick       fewer blocks per size (a smoke run, not a measurement)
  --ops LIST    comma-separated operations among bcast, reduce, allreduce
                (default all three)
  --type T      element type of reduce and allreduce: float, double or int
                (default float)
  --reduce-op O reduction of reduce and allreduce: sum or max (default sum)
  --mpi M       openmpi, mpich or both (default both)
  --results D   output directory (default results/ under the repository root)
  --build-root D  where build-openmpi/ and build-mpich/ go (default the repository root)
  --contend N   N CPU-bound helper processes per node beside the ranks during every
                run (topocoll-bench --contend N, whose blocks then last 50 ms or
                more, many time slices: docs/bench.md; default 0)
  -h, --help    this help
EOF
}

die() {
    echo "run-comparison: $*" >&2
    exit 1
}

while [ $# -gt 0 ]; do
    case "$1" in
    --np)
        [ $# -ge 2 ] || die "--np needs a value"
        NP=$2
        shift 2
        ;;
    --runs)
        [ $# -ge 2 ] || die "--runs needs a value"
        RUNS=$2
        shift 2
        ;;
    --quick)
        QUICK=1
        shift
        ;;
    --contend)
        [ $# -ge 2 ] || die "--contend needs a value"
        CONTEND=$2
        shift 2
        ;;
    --ops)
        [ $# -ge 2 ] || die "--ops needs a value"
        OPS=$2
        shift 2
        ;;
    --type)
        [ $# -ge 2 ] || die "--type needs a value"
        RTYPE=$2
        shift 2
        ;;
    --reduce-op)
        [ $# -ge 2 ] || die "--reduce-op needs a value"
        ROP=$2
        shift 2
        ;;
    --mpi)
        [ $# -ge 2 ] || die "--mpi needs a value"
        MPIS=$2
        shift 2
        ;;
    --results)
        [ $# -ge 2 ] || die "--results needs a value"
        RESULTS=$2
        shift 2
        ;;
    --build-root)
        [ $# -ge 2 ] || die "--build-root needs a value"
        BUILD_ROOT=$2
        shift 2
        ;;
    -h | --help)
        usage
        exit 0
        ;;
    *) die "unknown option '$1' (--help for the list)" ;;
    esac
done
[[ $NP =~ ^[1-9][0-9]*$ ]] || die "--np '$NP': expected a positive integer"
[[ $CONTEND =~ ^[0-9]+$ ]] || die "--contend '$CONTEND': expected a non-negative integer"
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "--runs '$RUNS': expected a positive integer"
case "$MPIS" in
openmpi | mpich) MPI_LIST=$MPIS ;;
both) MPI_LIST="openmpi mpich" ;;
*) die "--mpi '$MPIS': expected openmpi, mpich or both" ;;
esac
OP_LIST=
for op in ${OPS//,/ }; do
    case "$op" in
    bcast | reduce | allreduce) [[ " $OP_LIST " == *" $op "* ]] || OP_LIST="$OP_LIST $op" ;;
    *) die "--ops: unknown operation '$op' (known: bcast, reduce, allreduce)" ;;
    esac
done
OP_LIST=${OP_LIST# }
[ -n "$OP_LIST" ] || die "--ops '$OPS': no operation"
case "$RTYPE" in float | double | int) ;; *) die "--type '$RTYPE': expected float, double or int" ;; esac
case "$ROP" in sum | max) ;; *) die "--reduce-op '$ROP': expected sum or max" ;; esac

# Open MPI refuses to run as root or oversubscribed without these. They go
# through the environment because MPICH's launcher rejects Open MPI's flags.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export HYDRA_LAUNCHER=fork

# ---------------------------------------------------------------------------
# Dependencies
missing=()
for m in $MPI_LIST; do
    command -v "mpicc.$m" >/dev/null 2>&1 || missing+=("mpicc.$m")
done
for c in cmake gcc make pkg-config; do
    command -v "$c" >/dev/null 2>&1 || missing+=("$c")
done
if command -v pkg-config >/dev/null 2>&1; then
    pkg-config --exists hwloc || missing+=("hwloc (pkg-config)")
fi
[ -e /usr/include/numa.h ] || missing+=("numa.h")
command -v gnuplot >/dev/null 2>&1 || missing+=("gnuplot")
if [ ${#missing[@]} -gt 0 ]; then
    PKGS=(libopenmpi-dev openmpi-bin libmpich-dev mpich libhwloc-dev libnuma-dev cmake gnuplot-nox
        gcc make pkg-config)
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "== installing dependencies (missing: ${missing[*]})"
        apt-get update
        DEBIAN_FRONTEND=noninteractive apt-get install -y "${PKGS[@]}"
    elif [ "${missing[*]}" = "gnuplot" ]; then
        echo "== gnuplot not found: no PNG plots (install gnuplot-nox)"
    else
        die "missing: ${missing[*]}; as root run: apt-get install -y ${PKGS[*]}"
    fi
fi

# ---------------------------------------------------------------------------
# Build
mkdir -p "$RESULTS"
declare -A LAUNCHER
for m in $MPI_LIST; do
    b=$BUILD_ROOT/build-$m
    log=$RESULTS/build-$m.log
    echo "== building for $m in $b (log: $log)"
    if ! { cmake -S "$REPO" -B "$b" -DTOPOCOLL_MPI="$m" -DCMAKE_BUILD_TYPE=Release \
        -DTOPOCOLL_BUILD_TESTS=OFF &&
        cmake --build "$b" -j"$(nproc)" --target topocoll-bench; } >"$log" 2>&1; then
        tail -n 30 "$log" >&2
        die "build for $m failed (full log: $log)"
    fi
    l=$(sed -n 's/^MPIEXEC_EXECUTABLE:[A-Z]*=//p' "$b/CMakeCache.txt")
    if [ -z "$l" ]; then
        case $m in
        openmpi) l=mpirun.openmpi ;;
        mpich) l=mpiexec.mpich ;;
        esac
    fi
    LAUNCHER[$m]=$l
done

# ---------------------------------------------------------------------------
# Runs
# 20 blocks: the median then shrugs off a few blocks disturbed by other load
if [ "$QUICK" = 1 ]; then COMMON_ARGS=(--blocks 3); else COMMON_ARGS=(--blocks 20); fi
[ "$CONTEND" -gt 0 ] && COMMON_ARGS+=(--contend "$CONTEND")
if [ "$NP" -gt 2 ] && [[ " $MPI_LIST " == *" mpich "* ]]; then
    echo "== note: MPICH is very slow oversubscribed (np=$NP on $(nproc) cores)"
fi

# bench_args OP: the topocoll-bench arguments of one operation
bench_args() {
    case $1 in
    bcast)
        BENCH_ARGS=(-o bcast -m 4:16M)
        [ "$NP" -ge 2 ] && BENCH_ARGS+=(--raw)
        ;;
    *) BENCH_ARGS=(-o "$1" -m 4:16M --type "$RTYPE" --op "$ROP") ;;
    esac
    BENCH_ARGS+=("${COMMON_ARGS[@]}")
}

failed=0
t_start=$(date +%s)
for ((run = 1; run <= RUNS; run++)); do
    for op in $OP_LIST; do
        bench_args "$op"
        for m in $MPI_LIST; do
            for mode in cache offcache; do
                base=$RESULTS/$op-$m-np$NP-$mode-run$run
                args=("${BENCH_ARGS[@]}" --csv "$base.csv" --plot "$base.png")
                [ $mode = offcache ] && args+=(--off-cache)
                echo
                echo "== run $run/$RUNS: $op, $m, np=$NP, $mode"
                if ! timeout 1200 "${LAUNCHER[$m]}" -n "$NP" \
                    "$BUILD_ROOT/build-$m/bench/topocoll-bench" "${args[@]}" 2>&1 |
                    tee "$base.txt"; then
                    echo "== run failed: $op $m $mode (see $base.txt)" >&2
                    failed=1
                fi
            done
        done
    done
done

# ---------------------------------------------------------------------------
# Summary: median over runs of one CSV column at each size.
human() {
    awk -v n="$1" 'BEGIN {
        if (n >= 1048576) printf "%dMiB", n / 1048576;
        else if (n >= 1024) printf "%dKiB", n / 1024;
        else printf "%dB", n }'
}

# median_col OP MPI MODE SIZE EXPR: EXPR is an awk expression over the CSV fields
median_col() {
    local op=$1 m=$2 mode=$3 size=$4 expr=$5 f
    for f in "$RESULTS"/"$op"-"$m"-np"$NP"-"$mode"-run*.csv; do
        [ -e "$f" ] || continue
        awk -F, -v s="$size" 'NR > 1 && $3 == s { v = '"$expr"'; if (v == v + 0) print v }' "$f"
    done | sort -g | awk '{ v[NR] = $1 }
        END { if (NR == 0) { printf "%7s", "-"; exit }
              m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
              printf "%7.3f", m }'
}

# table OP TITLE SIZES EXPR
table() {
    local op=$1 title=$2 sizes=$3 expr=$4 m mode s
    echo "$title"
    printf "%-20s" "MPI"
    for s in $sizes; do printf "%7s" "$(human "$s")"; done
    echo
    for m in $MPI_LIST; do
        for mode in cache offcache; do
            if [ $mode = offcache ]; then printf "%-20s" "$m off-cache"; else printf "%-20s" "$m"; fi
            for s in $sizes; do median_col "$op" "$m" "$mode" "$s" "$expr"; done
            echo
        done
    done
}

{
    echo
    echo "== summary: np=$NP, contend=$CONTEND, $RUNS run(s), median over runs; $(date -u '+%Y-%m-%d %H:%M UTC')"
    for op in $OP_LIST; do
        case $op in
        bcast) M=Bcast what="" ;;
        reduce) M=Reduce what=" ($RTYPE, $ROP, root 0)" ;;
        allreduce) M=Allreduce what=" ($RTYPE, $ROP)" ;;
        esac
        echo
        # shellcheck disable=SC2016 # awk expressions, expanded by awk
        table "$op" "TC_$M time / MPI_$M time$what (< 1: TC_$M faster)" "$SUMMARY_SIZES" '$6'
        if [ "$op" = bcast ] && [ "$NP" -ge 2 ]; then
            echo
            # shellcheck disable=SC2016
            table bcast "TC_Bcast bandwidth / raw 2-process copy pipeline (target >= 0.80 from 1 MiB)" \
                "$RAW_SIZES" '($4 > 0 && $9 != "") ? $9 / $4 : "x"'
        fi
    done
    echo "results in $RESULTS; wall time $(($(date +%s) - t_start)) s for the runs"
} | tee "$RESULTS/summary.txt"

exit $failed
