#!/usr/bin/env bash
# contend-compare.sh — TC vs the MPI's own collectives under CPU contention, for two
# builds of the library ("before" and "after"), with the same topocoll-bench binary
# (the after build's; its --contend forks the busy helpers) and the before build's
# libtopocoll.so put first with LD_LIBRARY_PATH (the bench's RUNPATH comes after it).
# Runs alternate before/after per operation, so drifts of the machine hit both.
#
#   bench/contend-compare.sh MPI BEFORE_BUILD AFTER_BUILD [REPS] [CONTEND] [BLOCKS] [SIZES]
#   e.g. bench/contend-compare.sh openmpi /tmp/main/build-openmpi build-ompi 1 2 5
# MPI: openmpi or mpich. Output: the raw topocoll-bench lines, prefixed by the build.
# Extra environment (e.g. TC_STATS=1, TC_WAIT=yield) is passed to the ranks.
set -euo pipefail
MPI=$1 BEFORE=$2 AFTER=$3 REPS=${4:-1} CONTEND=${5:-2} BLOCKS=${6:-5} SIZES=${7:-4,8K,64K,1M}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
bench=$AFTER/bench/topocoll-bench
for ((rep = 1; rep <= REPS; rep++)); do
    for op in bcast allreduce; do
        for build in before after; do
            if [ $build = before ]; then lib=$BEFORE/src; else lib=$AFTER/src; fi
            if [ "$MPI" = openmpi ]; then
                launch=(mpirun.openmpi -np 2 --bind-to core -x LD_LIBRARY_PATH="$lib")
                for v in TC_STATS TC_WAIT TC_SPIN_COUNT; do
                    [ -n "${!v:-}" ] && launch+=(-x "$v")
                done
            else
                launch=(env LD_LIBRARY_PATH="$lib" mpiexec.mpich -n 2 -bind-to core)
            fi
            echo "== $build rep $rep: $op $MPI contend=$CONTEND $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
            timeout 900 "${launch[@]}" "$bench" -o "$op" --sizes "$SIZES" --blocks "$BLOCKS" \
                --contend "$CONTEND" 2>&1 | grep -v '^# \(us per\|topocoll-bench\|total\)' |
                sed "s/^/$build /"
        done
    done
done
