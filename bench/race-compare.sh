#!/usr/bin/env bash
# The race against the MPI's own (src/core/race.h), on and off, np = 2:
#   bench/race-compare.sh [RUNS] [OUTDIR]      (after building build-openmpi and build-mpich)
# For RUNS whole runs, for Allreduce float sum, Allreduce double max (never raced: its
# columns show the noise), Reduce float sum and Bcast, race on (default TC_PMPI_RACE_MIN)
# then off (TC_PMPI_RACE_MIN=0), Open MPI then MPICH. Summary:
#   python3 bench/race-summary.py OUTDIR
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-5}; out=${2:-race-out}; sizes=${SIZES:-64K,256K,1M,4M,16M}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
for r in $(seq 1 "$runs"); do
 for spec in "allreduce float sum" "allreduce double max" "reduce float sum" "bcast byte x"; do
  set -- $spec; op=$1; ty=$2; ro=$3
  a="-o $op --sizes $sizes --blocks 10"
  [ "$op" != bcast ] && a="$a --type $ty --op $ro"
  for mode in race norace; do
   env=""; [ $mode = norace ] && env="TC_PMPI_RACE_MIN=0"
   env $env mpirun.openmpi -n 2 "$root/build-openmpi/bench/topocoll-bench" $a \
       > "$out/ompi-$mode-$op-$ty-$ro-r$r.txt" 2>&1
   env $env mpiexec.mpich -n 2 "$root/build-mpich/bench/topocoll-bench" $a \
       > "$out/mpich-$mode-$op-$ty-$ro-r$r.txt" 2>&1
  done
 done
done
