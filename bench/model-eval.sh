#!/usr/bin/env bash
# model-eval.sh: how often the LogP/LogGP model picks a fast algorithm (issue 4).
#
# On posed machines (TC_LOCALITY_FILE "shape node=P": P ranks, each its own
# node, so one top group of P members runs the message-based per-level
# algorithms), for Bcast, Reduce and Allreduce, every candidate algorithm of
# the top group is forced in turn (TC_HIER_BCAST=top:<alg>, TC_HIER_REDUCE=
# top:<alg>, TC_HIER_ALLREDUCE_TOP=<alg>) and timed with topocoll-bench
# --model (which also gives the model's cost of that candidate through
# TC_Comm_predict). The model's pick is select.c's: the cheapest predicted
# candidate, leaving out scatter_allgather and rsg when P exceeds the CPUs
# (oversubscribed); one run without any override checks
# that the library's table holds that pick.
#
# Fair comparison: candidates that run the identical message pattern at that
# P and size count as one (the pick is right if any of them is within 10% of
# the fastest): k-nomial with k >= P and flat (at P = 2 every radix), binomial
# and flat reduce at P = 2, rsg and binomial when the vector has fewer
# elements than members (the implementation then runs binomial). Their
# measured spread is the noise floor, reported next to the 10% criterion.
# Candidates are timed interleaved: each whole run rotates the order by one,
# so over N >= candidates runs every candidate takes every position.
#
# Parameters: the np=2 file (--logp, or measured now) for every P; with --w,
# for every P above the CPUs a file measured at that P on top of it
# (topocoll-logp oversubscribed measures the scheduler round w only), used
# for the runs at P (off by default: w did not improve the picks here,
# docs/model.md).
# The report also re-evaluates the picks offline, on the same measurements,
# for every combination of the three corrections (rendezvous term E/rdv,
# exclusion of all-member algorithms when oversubscribed, w if measured): the
# first line (none) is the model before them.
#
# usage: bench/model-eval.sh --build DIR [--mpi openmpi|mpich] [--quick]
#                            [--runs N] [--blocks N] [--logp FILE] [--w]
#                            [--out DIR]
#   --build DIR   a CMake build directory (bench/topocoll-bench, tools/topocoll-logp)
#   --mpi M       openmpi (P = 2 4 8, the default) or mpich (P = 2 4: MPICH crawls
#                 when oversubscribed)
#   --quick       P = 2 4 (mpich: 2), sizes 8,16K,1M, 1 run (unless --runs) of 3
#                 blocks (~1 min a run)
#   --runs N      whole runs (default 6: every bcast candidate once in every
#                 position); --blocks N: blocks per size (default 3)
#   --logp FILE   the np=2 TC_LOGP_FILE; default: measured now with topocoll-logp
#                 at np=2 into OUT/logp.txt
#   --w           measure w at every oversubscribed P (topocoll-logp at np=P on top
#                 of the np=2 file) and run P with that file
#   --out DIR     results (default /tmp/model-eval-<mpi>): raw.tsv, report.txt
# A full Open MPI run (6 runs x 3 blocks) takes about 6 minutes on the 2-core CI
# machine (3 runs: 3 minutes at a one-minute load of 1.4-3).
set -euo pipefail

build= mpi=openmpi quick=0 runs=6 runs_given=0 blocks=3 logp= out= measure_w=0
while [ $# -gt 0 ]; do
    case "$1" in
    --build) build=$2; shift 2 ;;
    --mpi) mpi=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --runs) runs=$2 runs_given=1; shift 2 ;;
    --blocks) blocks=$2; shift 2 ;;
    --logp) logp=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --w) measure_w=1; shift ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "model-eval.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
[ -n "$build" ] || { echo "model-eval.sh: --build DIR is required" >&2; exit 2; }
bench=$build/bench/topocoll-bench
logptool=$build/tools/topocoll-logp
[ -x "$bench" ] || { echo "model-eval.sh: $bench not found (build target topocoll-bench)" >&2; exit 2; }
out=${out:-/tmp/model-eval-$mpi}
mkdir -p "$out"

case "$mpi" in
openmpi)
    launch=(mpirun.openmpi -n)
    # Open MPI as root and oversubscribed, through the environment (MPICH's
    # launcher would reject the flags).
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_MCA_rmaps_base_oversubscribe=1
    Ps="2 4 8"
    ;;
mpich)
    launch=(mpiexec.mpich -n)
    Ps="2 4"
    ;;
*) echo "model-eval.sh: --mpi '$mpi': expected openmpi or mpich" >&2; exit 2 ;;
esac
sizes=8,1K,16K,256K,1M
if [ "$quick" = 1 ]; then
    sizes=8,16K,1M blocks=3
    [ "$runs_given" = 1 ] || runs=1
    [ "$mpi" = mpich ] && Ps="2" || Ps="2 4"
fi

if [ -z "$logp" ]; then
    logp=$out/logp.txt
    echo "# measuring LogP parameters: ${launch[*]} 2 $logptool -o $logp"
    "${launch[@]}" 2 "$logptool" -o "$logp" >"$out/logp.log" 2>&1 ||
        { echo "model-eval.sh: topocoll-logp failed, see $out/logp.log" >&2; exit 1; }
fi
cores=$(nproc)
qflag=()
[ "$quick" = 1 ] && qflag=(--quick)
# The file of each P: measured at that P on top of the np=2 file when the
# posed machine is oversubscribed (w), else the np=2 file itself.
declare -A lp
for P in $Ps; do
    lp[$P]=$logp
    if [ "$measure_w" = 1 ] && [ "$P" -gt "$cores" ]; then
        lp[$P]=$out/logp-n$P.txt
        echo "# measuring w at np=$P: TC_LOGP_FILE=$logp ${launch[*]} $P $logptool -o ${lp[$P]}"
        TC_LOGP_FILE=$logp "${launch[@]}" "$P" "$logptool" "${qflag[@]}" -o "${lp[$P]}" \
            >"$out/logp-n$P.log" 2>&1 ||
            { echo "model-eval.sh: topocoll-logp at np=$P failed, see $out/logp-n$P.log" >&2; exit 1; }
    fi
done
unset TC_HIER_BCAST TC_HIER_REDUCE TC_HIER_ALLREDUCE_TOP TC_TUNING_FILE TC_LOCALITY_FILE TC_LOGP TC_LOGP_FILE

# Candidates in select.c's tie-break order (tc_select_candidates).
cands_bcast="knomial:2 knomial:3 knomial:4 knomial:8 flat scatter_allgather"
cands_reduce="binomial flat rsg"
cands_allreduce="recdbl ring"

raw=$out/raw.tsv
printf 'mode\top\tP\tcand\trun\tsize\ttc_us\tmpi_us\ttc_min_us\tmodel_us\n' >"$raw"
t0=$(date +%s)
echo "# $(date -u '+%F %T') uptime:$(uptime | sed 's/.*load/ load/')" | tee "$out/report.txt"
echo "# mpi=$mpi P={$Ps} sizes=$sizes runs=$runs blocks=$blocks cores=$cores np=2 file=$logp" |
    tee -a "$out/report.txt"
for P in $Ps; do
    echo "# P=$P: TC_LOGP_FILE=${lp[$P]}: $(grep -E '^node[[:space:]]' "${lp[$P]}" | cut -d'#' -f1 |
        tr -s ' ')" | tee -a "$out/report.txt"
done

# run MODE OP P CAND RUN [ENV...]: one topocoll-bench launch, rows into raw.tsv.
run() {
    local mode=$1 op=$2 P=$3 cand=$4 r=$5
    shift 5
    local log
    if ! log=$(env TC_LOGP_FILE="${lp[$P]}" "$@" timeout 600 "${launch[@]}" "$P" "$bench" -o "$op" \
        --sizes "$sizes" --blocks "$blocks" --model 2>&1); then
        echo "model-eval.sh: failed: $* ${launch[*]} $P $bench -o $op" >&2
        echo "$log" | tail -5 >&2
        return 0
    fi
    echo "$log" | awk -v m="$mode" -v o="$op" -v P="$P" -v c="$cand" -v r="$r" \
        '!/^#/ && NF >= 9 { printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m, o, P, c, r, $1, $2, $3, $5, $(NF-1) }' >>"$raw"
}

for r in $(seq 1 "$runs"); do
    for P in $Ps; do
        loc=$out/loc-n$P.txt
        printf '# %d posed nodes, one rank each\nshape node=%d\n' "$P" "$P" >"$loc"
        for op in bcast reduce allreduce; do
            eval "cands=\$cands_$op"
            # Interleaved: run r starts the list at its r-th entry (a
            # rotation), so every candidate takes every position over the
            # runs (the first launches after a change of configuration were
            # measured slower; no candidate should always pay that).
            list=($cands auto shm)
            n=${#list[@]}
            for ((i = 0; i < n; i++)); do
                c=${list[$(((i + r - 1) % n))]}
                case $op:$c in
                *:auto) run msg "$op" "$P" auto "$r" TC_LOCALITY_FILE="$loc"; continue ;;
                *:shm) run shm "$op" "$P" auto "$r"; continue ;;
                bcast:*) var=TC_HIER_BCAST val=top:$c ;;
                reduce:*) var=TC_HIER_REDUCE val=top:$c ;;
                allreduce:*) var=TC_HIER_ALLREDUCE_TOP val=$c ;;
                esac
                run msg "$op" "$P" "$c" "$r" TC_LOCALITY_FILE="$loc" "$var=$val"
            done
        done
        echo "# run $r/$runs P=$P done after $(($(date +%s) - t0)) s"
    done
done

lpargs=()
for P in $Ps; do lpargs+=("$P=${lp[$P]}"); done
python3 - "$raw" "$cores" "${lpargs[@]}" <<'PY' | tee -a "$out/report.txt"
import sys, math, statistics as st
from collections import defaultdict
raw, CORES = sys.argv[1], int(sys.argv[2])
FILES = dict(a.split("=", 1) for a in sys.argv[3:])
OPS = ["bcast", "reduce", "allreduce"]
ORDER = {"bcast": ["knomial:2", "knomial:3", "knomial:4", "knomial:8", "flat", "scatter_allgather"],
         "reduce": ["binomial", "flat", "rsg"], "allreduce": ["recdbl", "ring"]}
ALLMEMBER = {"scatter_allgather", "rsg"}  # select.c tc_select_allmember
ELEM = 4  # topocoll-bench's default reduction type: float

def node_row(path):
    """The node row of a TC_LOGP_FILE (L o_s o_r g G [E [rdv [w [X]]]]; logp.c defaults otherwise)."""
    p = dict(L=0.35, o_s=0.07, o_r=0.08, g=0.10, G=0.0002, E=4064.0, rdv=2.6, w=0.0, X=2.0)
    for line in open(path):
        f = line.split("#")[0].split()
        if f and f[0] == "node":
            for k, v in zip(["L", "o_s", "o_r", "g", "G", "E", "rdv", "w", "X"], f[1:]):
                p[k] = float(v)
    return p
PAR = {int(P): node_row(f) for P, f in FILES.items()}

meas, best, mpi, model = defaultdict(list), defaultdict(list), defaultdict(list), {}
for line in open(raw).read().splitlines()[1:]:
    mode, op, P, cand, run, size, tc, mp, tmin, mo = line.split("\t")
    k = (mode, op, int(P), cand, int(size))
    model[k] = float(mo)
    meas[k].append(float(tc)); best[k].append(float(tmin)); mpi[k].append(float(mp))
runs = max((len(v) for v in meas.values()), default=0)
med = {k: st.median(v) for k, v in meas.items()}
mins = {k: st.median(v) for k, v in best.items()}
keys = sorted({(op, P, s) for (mode, op, P, c, s) in med if mode == "msg" and c != "auto"},
              key=lambda x: (OPS.index(x[0]), x[1], x[2]))

def same(op, P, s, a, b):
    """a and b run the identical message pattern at P members and s bytes."""
    if a == b: return True
    def norm(c):
        if op == "bcast" and c.startswith("knomial:") and int(c.split(":")[1]) >= P: return "flat"
        if op == "reduce" and c == "rsg" and s // ELEM < P: c = "binomial"
        if op == "reduce" and P == 2 and c == "flat": return "binomial"
        return c
    return norm(a) == norm(b)
def cls(op, P, s, c): return [x for x in ORDER[op] if same(op, P, s, c, x)]

def argmin(costs, op, over):
    b = None
    for c in ORDER[op]:
        if c not in costs or (over and c in ALLMEMBER): continue
        if b is None or costs[c] < costs[b] * (1 - 1e-9): b = c
    return b

# ---- the LogGP formulas of src/model/cost.c, for the offline variants ----
GAMMA = 6.6667e-05  # TC_MODEL_GAMMA's default
def clog(k, P):
    r, v = 0, 1
    while v < P: v *= k; r += 1
    return r
def costs(op, m, P, p):
    L, os_, or_, g, G, E, rdv = p["L"], p["o_s"], p["o_r"], p["g"], p["G"], p["E"], p["rdv"]
    X = min(max(p["X"], 1.0), 2.0)  # logp.c tc_logp_duplex
    def msg(x, d=1.0): return 0.0 if x <= 0 else os_ + d * (x - 1) * G + L + or_ + (rdv if E > 0 and x > E else 0.0)
    def sg(x): return max(g, os_ + max(x - 1, 0) * G)
    def rg(x): return max(g, or_ + max(x - 1, 0) * G)
    def xx(x): return 0.0 if x <= 0 else max(g, msg(x, X))
    def kn(k): c = min(k, P) - 1; return clog(k, P) * (msg(m) + (c - 1) * sg(m))
    if op == "bcast":
        sa = kn(2) if m < P else sum(msg(m / 2**j) for j in range(1, clog(2, P) + 1)) + (P - 1) * xx(m / P)
        return {"knomial:2": kn(2), "knomial:3": kn(3), "knomial:4": kn(4), "knomial:8": kn(8),
                "flat": msg(m) + (P - 2) * sg(m), "scatter_allgather": sa}
    R = P.bit_length() - 1; P2 = 1 << R
    if op == "reduce":
        fold = 0 if P == P2 else msg(m) + m * GAMMA
        rs = sum(xx(m / 2**j) + m / 2**j * GAMMA for j in range(1, R + 1))
        ga = sum(msg(m / 2**j) for j in range(1, R + 1))
        return {"binomial": clog(2, P) * (msg(m) + m * GAMMA),
                "flat": msg(m) + m * GAMMA + (P - 2) * (rg(m) + m * GAMMA), "rsg": fold + rs + ga}
    fix = 0 if P == P2 else 2 * msg(m) + m * GAMMA
    b = m / P
    return {"recdbl": fix + R * (xx(m) + m * GAMMA), "ring": (P - 1) * (xx(b) + b * GAMMA) + (P - 1) * xx(b)}
def variant_params(P, rdv, w):
    p = dict(PAR[P])
    if not rdv: p["E"] = 0.0
    p["L"] += p["w"] if (w and P > CORES) else 0.0
    return p

def evaluate(T, label, pick, verbose):
    """pick(op, P, s) -> candidate. Strict: the pick itself within 10% of the
    fastest; fair: the fastest of the pick's identical-pattern class."""
    hit = fair = tot = 0; miss = []
    rows = []
    for op, P, s in keys:
        have = [c for c in ORDER[op] if ("msg", op, P, c, s) in T]
        c = pick(op, P, s)
        if not have or c not in have: continue
        tf = min(T[("msg", op, P, x, s)] for x in have)
        fast = min(have, key=lambda x: T[("msg", op, P, x, s)])
        tp = T[("msg", op, P, c, s)]
        tcl = min(T[("msg", op, P, x, s)] for x in cls(op, P, s, c) if x in have)
        ok, okf = tp <= 1.10 * tf, tcl <= 1.10 * tf
        hit += ok; fair += okf; tot += 1
        if not okf: miss.append(f"{op}/{P}/{s}:{c}({tcl / tf:.2f}x {fast})")
        rows.append((op, P, s, fast, tf, c, tp, tcl, ok, okf))
    if verbose:
        print(f"\n## Pick accuracy ({label}); us; class = candidates with the identical message pattern")
        print(f"{'op':9} {'P':>2} {'bytes':>8}  {'fastest':17} {'us':>9}  {'pick':17} {'us':>9} "
              f"{'pick/fast':>9} {'class/fast':>10} ok")
        for op, P, s, fast, tf, c, tp, tcl, ok, okf in rows:
            print(f"{op:9} {P:2d} {s:8d}  {fast:17} {tf:9.2f}  {c:17} {tp:9.2f} {tp/tf:9.2f} "
                  f"{tcl/tf:10.2f} {'yes' if okf else 'NO'}{'' if ok or not okf else ' (class)'}")
    t = max(tot, 1)
    print(f"{label}: within 10% of the fastest {fair}/{tot} = {100.0*fair/t:.1f}% counting the pick's "
          f"identical-pattern class (target >= 90%); the pick itself {hit}/{tot} = {100.0*hit/t:.1f}%")
    return miss

print(f"\n# {runs} whole run(s), candidates interleaved (order rotated per run); each value is the "
      f"median over runs of topocoll-bench's statistic; P > {CORES} is oversubscribed")

# The library's own pick: argmin of its predictions (TC_Comm_predict), select.c's rule.
def lib_pick(op, P, s):
    return argmin({c: model[("msg", op, P, c, s)] for c in ORDER[op] if ("msg", op, P, c, s) in model},
                  op, P > CORES)
misses = evaluate(med, "library's model, median over blocks", lib_pick, True)
evaluate(mins, "library's model, min over blocks (least disturbed block)", lib_pick, True)
bad = [(op, P, s) for op, P, s in keys if ("msg", op, P, "auto", s) in model and lib_pick(op, P, s)
       and abs(model[("msg", op, P, "auto", s)] - model[("msg", op, P, lib_pick(op, P, s), s)])
       > 1e-6 * max(1.0, model[("msg", op, P, "auto", s)])]
print(f"auto (no override) predicts the pick's cost in {len(keys) - len(bad)}/{len(keys)} cases"
      + (f"; differs: {bad}" if bad else ""))

# Noise floor: the spread of candidates that send the very same messages.
spreads = []
for op, P, s in keys:
    seen = set()
    for c in ORDER[op]:
        if c in seen or ("msg", op, P, c, s) not in med: continue
        cl = [x for x in cls(op, P, s, c) if ("msg", op, P, x, s) in med]
        seen.update(cl)
        if len(cl) > 1:
            v = [med[("msg", op, P, x, s)] for x in cl]
            spreads.append((max(v) / min(v), f"{op}/{P}/{s}:{'='.join(cl)}"))
if spreads:
    sp = sorted(x for x, _ in spreads)
    print(f"\n## Noise floor: max/min of the medians of identical-pattern candidates, {len(sp)} groups: "
          f"median {st.median(sp):.2f}, max {sp[-1]:.2f} (the 10% criterion is 1.10)")
    print("   " + " ".join(f"{n}:{x:.2f}" for x, n in sorted(spreads, reverse=True)[:12]))

if misses:
    print("\n## Misses (median statistic, class-aware): model cost vs measured of every candidate (us)")
    for m in misses:
        op, P, rest = m.split("/", 2); P = int(P); s = int(rest.split(":")[0])
        print(f"{op} P={P} {s} B: {m}")
        for c in ORDER[op]:
            k = ("msg", op, P, c, s)
            if k not in med: continue
            r = med[k] / model[k] if model[k] > 0 else math.nan
            print(f"   {c:17} model {model[k]:10.3f}  measured {med[k]:10.2f} (min {mins[k]:10.2f})  "
                  f"measured/model {r:7.1f}{'  (excluded: oversubscribed)' if P > CORES and c in ALLMEMBER else ''}")

# Offline: every combination of the corrections on the same measurements.
def off_pick(rdv, excl, w):
    def f(op, P, s):
        return argmin(costs(op, s, P, variant_params(P, rdv, w)), op, excl and P > CORES)
    return f
full = off_pick(True, True, True)
worst = max((abs(costs(op, s, P, variant_params(P, True, True))[c] - model[("msg", op, P, c, s)])
             / max(model[("msg", op, P, c, s)], 1e-9)
             for (mode, op, P, c, s) in model if mode == "msg" and c != "auto"), default=0)
print(f"\n## The corrections one by one (offline reimplementation of cost.c; max relative difference "
      f"from the library's predictions with all three: {worst:.1e})")
for label, T in (("median", med), ("min", mins)):
    for rdv in (False, True):
        for excl in (False, True):
            for w in (False, True):
                name = "+".join(n for n, on in (("rdv", rdv), ("exclusion", excl), ("w", w)) if on) or "none (the model before)"
                evaluate(T, f"{label:6} {name:24}", off_pick(rdv, excl, w), False)

print("\n## Shared-memory path (P ranks on one node, nothing chosen by the model): predicted vs measured (us)")
print(f"{'op':9} {'P':>2} {'bytes':>8} {'model':>10} {'tc':>10} {'tc_min':>10} {'mpi':>10} {'(model-tc)/tc':>14}")
for k in sorted((k for k in med if k[0] == "shm"), key=lambda k: (OPS.index(k[1]), k[2], k[4])):
    mo, tc = model[k], med[k]
    print(f"{k[1]:9} {k[2]:2d} {k[4]:8d} {mo:10.3f} {tc:10.2f} {mins[k]:10.2f} {st.median(mpi[k]):10.2f} "
          f"{(mo - tc) / tc if mo >= 0 else math.nan:14.3f}")
print("\n## measured/model over every forced message-based case, by P (median, min statistic in brackets)")
for P in sorted({k[2] for k in med if k[0] == "msg"}):
    ks = [k for k in med if k[0] == "msg" and k[2] == P and k[3] != "auto" and model[k] > 0]
    print(f"P={P}: {st.median(med[k] / model[k] for k in ks):.2f} ({st.median(mins[k] / model[k] for k in ks):.2f}) over {len(ks)} cases")
PY
echo "# total $(($(date +%s) - t0)) s; raw data $raw; report $out/report.txt"
