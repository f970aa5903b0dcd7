#!/usr/bin/env bash
# model-eval.sh: how often the LogP/LogGP model picks a fast algorithm (issue 4).
#
# On posed machines (TC_LOCALITY_FILE "shape node=P": P ranks, each its own
# node, so one top group of P members runs the message-based per-level
# algorithms), for Bcast, Reduce and Allreduce, every candidate algorithm of
# the top group is forced in turn (TC_HIER_BCAST=top:<alg>, TC_HIER_REDUCE=
# top:<alg>, TC_HIER_ALLREDUCE_TOP=<alg>) and timed with topocoll-bench
# --model (which also gives the model's cost of that candidate through
# TC_Comm_predict). The model's pick is the cheapest predicted candidate
# (select.c's tie rule); one run without any override checks that the
# library's table holds that pick. Per (op, P, size): the fastest measured
# candidate (median over whole runs of topocoll-bench's median over blocks),
# the pick, and whether the pick is within 10% of the fastest; then the
# overall percentage (issue 4's target: >= 90%) and every miss with the
# model's cost and the measured time of each candidate. The same P ranks on
# one node (the shared-memory path, where nothing is chosen by the model)
# give predicted vs measured times only.
#
# usage: bench/model-eval.sh --build DIR [--mpi openmpi|mpich] [--quick]
#                            [--runs N] [--blocks N] [--logp FILE] [--out DIR]
#   --build DIR   a CMake build directory (bench/topocoll-bench, tools/topocoll-logp)
#   --mpi M       openmpi (P = 2 4 8, the default) or mpich (P = 2 4: MPICH crawls
#                 when oversubscribed)
#   --quick       P = 2 4 (mpich: 2), sizes 8,16K,1M, 1 run of 3 blocks (~2 min)
#   --runs N      whole runs (default 5); --blocks N: blocks per size (default 3)
#   --logp FILE   TC_LOGP_FILE to use; default: measured now with topocoll-logp at
#                 np=2 into OUT/logp.txt
#   --out DIR     results (default /tmp/model-eval-<mpi>): raw.tsv, report.txt
#   --sched-us LIST  also re-predict every candidate with a per-message scheduler
#                 delay w added to the top group's L (TC_LOGP="node:L=L+w", no new
#                 timing: the same measurements) for each w in LIST (e.g. 2,10,50),
#                 and report the pick accuracy each w would give (the proposed
#                 oversubscription correction, docs/model.md)
# A full Open MPI run (5 runs x 3 blocks) takes about 10-15 minutes on an idle 2-core
# machine (~20 when other jobs load it); --sched-us adds ~1 minute per w.
set -euo pipefail

build= mpi=openmpi quick=0 runs=5 blocks=3 logp= out= sched=
while [ $# -gt 0 ]; do
    case "$1" in
    --build) build=$2; shift 2 ;;
    --mpi) mpi=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --runs) runs=$2; shift 2 ;;
    --blocks) blocks=$2; shift 2 ;;
    --logp) logp=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --sched-us) sched=$2; shift 2 ;;
    -h | --help) sed -n '2,36p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
    sizes=8,16K,1M runs=1 blocks=3
    [ "$mpi" = mpich ] && Ps="2" || Ps="2 4"
fi

if [ -z "$logp" ]; then
    logp=$out/logp.txt
    echo "# measuring LogP parameters: ${launch[*]} 2 $logptool -o $logp"
    "${launch[@]}" 2 "$logptool" -o "$logp" >"$out/logp.log" 2>&1 ||
        { echo "model-eval.sh: topocoll-logp failed, see $out/logp.log" >&2; exit 1; }
fi
export TC_LOGP_FILE=$logp
unset TC_HIER_BCAST TC_HIER_REDUCE TC_HIER_ALLREDUCE_TOP TC_TUNING_FILE TC_LOCALITY_FILE TC_LOGP

# Candidates in select.c's tie-break order (tc_select_candidates).
cands_bcast="knomial:2 knomial:3 knomial:4 knomial:8 flat scatter_allgather"
cands_reduce="binomial flat rsg"
cands_allreduce="recdbl ring"

raw=$out/raw.tsv
printf 'mode\top\tP\tcand\trun\tsize\ttc_us\tmpi_us\ttc_min_us\tmodel_us\n' >"$raw"
t0=$(date +%s)
echo "# $(date -u '+%F %T') uptime:$(uptime | sed 's/.*load/ load/')" | tee "$out/report.txt"
echo "# mpi=$mpi P={$Ps} sizes=$sizes runs=$runs blocks=$blocks TC_LOGP_FILE=$logp" |
    tee -a "$out/report.txt"

# run MODE OP P CAND RUN [ENV...]: one topocoll-bench launch, rows into raw.tsv.
# (bench_args: more topocoll-bench options, e.g. for prediction-only runs.)
bench_args=()
run() {
    local mode=$1 op=$2 P=$3 cand=$4 r=$5
    shift 5
    local log
    if ! log=$(env "$@" timeout 600 "${launch[@]}" "$P" "$bench" -o "$op" --sizes "$sizes" \
        --blocks "$blocks" --model "${bench_args[@]}" 2>&1); then
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
            # A new order every run: the first launches after a change of
            # configuration were measured slower (processes of the previous
            # job still leaving), and no candidate should always pay that.
            for c in $(printf '%s\n' $cands auto shm | shuf --random-source=<(yes "$r$P$op")); do
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

# Predictions only (one untimed-quality call per size): the model with a
# scheduler delay w per message at the top group's level (node: the posed
# nodes lie on one real node).
if [ -n "$sched" ]; then
    L=$(awk '$1 == "node" { print $2 }' "$logp")
    L=${L:-0.35}
    bench_args=(-i 1 -x 0)
    saved_blocks=$blocks blocks=1
    for w in ${sched//,/ }; do
        Lw=$(awk -v a="$L" -v b="$w" 'BEGIN { printf "%.6g", a + b }')
        for P in $Ps; do
            loc=$out/loc-n$P.txt
            for op in bcast reduce allreduce; do
                eval "cands=\$cands_$op"
                for c in $cands; do
                    case $op in
                    bcast) var=TC_HIER_BCAST val=top:$c ;;
                    reduce) var=TC_HIER_REDUCE val=top:$c ;;
                    allreduce) var=TC_HIER_ALLREDUCE_TOP val=$c ;;
                    esac
                    run "w$w" "$op" "$P" "$c" 0 TC_LOCALITY_FILE="$loc" "$var=$val" \
                        TC_LOGP="node:L=$Lw"
                done
            done
        done
        echo "# predictions with w = $w us (node L = $Lw) done after $(($(date +%s) - t0)) s"
    done
    blocks=$saved_blocks
    bench_args=()
fi

python3 - "$raw" "$cands_bcast" "$cands_reduce" "$cands_allreduce" <<'PY' | tee -a "$out/report.txt"
import sys, math, statistics as st
from collections import defaultdict
raw, cands = sys.argv[1], {"bcast": sys.argv[2].split(), "reduce": sys.argv[3].split(),
                           "allreduce": sys.argv[4].split()}
OPS = ["bcast", "reduce", "allreduce"]
meas, best, mpi, model = defaultdict(list), defaultdict(list), defaultdict(list), {}
for line in open(raw).read().splitlines()[1:]:
    mode, op, P, cand, run, size, tc, mp, tmin, mo = line.split("\t")
    k = (mode, op, int(P), cand, int(size))
    model[k] = float(mo)
    if mode.startswith("w"): continue  # prediction-only runs (--sched-us)
    meas[k].append(float(tc)); best[k].append(float(tmin)); mpi[k].append(float(mp))
runs = max((len(v) for v in meas.values()), default=0)
med = {k: st.median(v) for k, v in meas.items()}
mins = {k: st.median(v) for k, v in best.items()}
keys = sorted({(op, P, s) for (mode, op, P, c, s) in med if mode == "msg"},
              key=lambda x: (OPS.index(x[0]), x[1], x[2]))
def pick_of(op, P, s, mode="msg"):
    """select.c's argmin: a later candidate must be cheaper by a relative 1e-9."""
    b = None
    for c in cands[op]:
        v = model.get((mode, op, P, c, s), -1)
        if v < 0: continue
        if b is None or v < model[(mode, op, P, b, s)] * (1 - 1e-9): b = c
    return b
def ties(op, P, s, pick, mode="msg"):
    v = model[(mode, op, P, pick, s)]
    return [c for c in cands[op] if (mode, op, P, c, s) in model
            and abs(model[(mode, op, P, c, s)] - v) <= 1e-9 * max(1.0, v)]
def evaluate(T, label, verbose, mode="msg"):
    hits = hits_tie = total = 0
    misses = []
    if verbose:
        print(f"\n## Pick accuracy ({label}), message-based top group of P posed nodes; us")
        print(f"{'op':9} {'P':>2} {'bytes':>8}  {'fastest':17} {'us':>9}  {'pick':17} {'us':>9} "
              f"{'pick/fast':>9} ok   model_tied_with_pick")
    for op, P, s in keys:
        have = [c for c in cands[op] if ("msg", op, P, c, s) in T]
        pick = pick_of(op, P, s, mode)
        if not have or pick is None: continue
        fast = min(have, key=lambda c: T[("msg", op, P, c, s)])
        tf, tp = T[("msg", op, P, fast, s)], T[("msg", op, P, pick, s)]
        tied = ties(op, P, s, pick, mode)
        ok = tp <= 1.10 * tf
        ok_tie = min(T[("msg", op, P, c, s)] for c in tied) <= 1.10 * tf
        hits += ok; hits_tie += ok_tie; total += 1
        if not ok: misses.append((op, P, s, have))
        if verbose:
            print(f"{op:9} {P:2d} {s:8d}  {fast:17} {tf:9.2f}  {pick:17} {tp:9.2f} {tp/tf:9.2f} "
                  f"{'yes' if ok else 'NO ':4} {','.join(c for c in tied if c != pick)}")
    pct = 100.0 * hits / max(total, 1)
    print(f"{label}: pick within 10% of the fastest in {hits}/{total} = {pct:.1f}% (target >= 90%); "
          f"counting candidates the model ties with the pick (the same messages, e.g. every "
          f"k-nomial and flat at P=2) as the pick: {hits_tie}/{total} = {100.0*hits_tie/max(total,1):.1f}%")
    return misses
print(f"\n# {runs} whole run(s); each value is the median over runs of topocoll-bench's statistic")
misses = evaluate(med, "median over blocks", True)
evaluate(mins, "min over blocks (the least disturbed block)", True)
# The library's table must hold the model's pick: the auto run predicts the pick's cost.
bad = [(op, P, s) for op, P, s in keys if ("msg", op, P, "auto", s) in model and pick_of(op, P, s)
       and abs(model[("msg", op, P, "auto", s)] - model[("msg", op, P, pick_of(op, P, s), s)])
       > 1e-6 * max(1.0, model[("msg", op, P, "auto", s)])]
print(f"auto (no override) predicts the argmin's cost in {len(keys) - len(bad)}/{len(keys)} cases"
      + (f"; differs: {bad}" if bad else ""))
if misses:
    print("\n## Misses (median statistic): model cost vs measured of every candidate (us)")
    for op, P, s, have in misses:
        print(f"{op} P={P} {s} B:")
        for c in have:
            k = ("msg", op, P, c, s)
            r = med[k] / model[k] if model[k] > 0 else math.nan
            print(f"   {c:17} model {model[k]:10.3f}  measured {med[k]:10.2f} (min {mins[k]:10.2f})  measured/model {r:7.1f}")
wmodes = sorted({k[0] for k in model if k[0].startswith("w")}, key=lambda m: float(m[1:]))
if wmodes:
    print("\n## Proposed correction: a scheduler delay w per message (top group's L + w), same measurements")
    for wm in wmodes:
        evaluate(med, f"w = {wm[1:]} us, median", False, wm)
        evaluate(mins, f"w = {wm[1:]} us, min", False, wm)
    for wm in wmodes:
        picks = [f"{op}/{P}/{s}:{pick_of(op, P, s, wm)}" for op, P, s in keys
                 if pick_of(op, P, s, wm) != pick_of(op, P, s)]
        print(f"w = {wm[1:]} us changes the pick in: {' '.join(picks) if picks else 'none'}")
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
# Proposed corrections, re-evaluated offline on the same measurements: cost.c's
# LogGP formulas reimplemented here (first checked against the library's own
# predictions), then (rdv) one 8-byte round trip added to every message above
# the MPI's eager limit (4 KiB: Open MPI's vader; the rendezvous handshake LogGP
# leaves out), (w) a scheduler delay per message added to L when P exceeds the
# cores, and (exclusion) scatter_allgather and rsg, whose every step needs all
# members running, left out of the argmin when P exceeds the cores.
echo
echo "## Proposed corrections (offline, same measurements; GAMMA = the default TC_MODEL_GAMMA)"
python3 - "$raw" "$logp" "$(nproc)" <<'PY' | tee -a "$out/report.txt"
import sys, math, statistics as st
from collections import defaultdict
raw, logp, CORES = sys.argv[1], sys.argv[2], int(sys.argv[3])
P_ = {}
for line in open(logp):
    w = line.split()
    if w and w[0] == "node": P_ = dict(L=float(w[1]), o_s=float(w[2]), o_r=float(w[3]), g=float(w[4]), G=float(w[5]))
GAMMA = 6.6667e-05
def clog(k, P):
    r, v = 0, 1
    while v < P: v *= k; r += 1
    return r
def flog2(P): return P.bit_length() - 1
def costs(op, m, P, p, rdv=0.0, E=4096):
    L, os_, or_, g, G = p["L"], p["o_s"], p["o_r"], p["g"], p["G"]
    def msg(x): return 0.0 if x <= 0 else os_ + (x - 1) * G + L + or_ + (rdv if x > E else 0.0)
    def sg(x): return max(g, os_ + max(x - 1, 0) * G)
    def rg(x): return max(g, or_ + max(x - 1, 0) * G)
    def xx(x): return max(g, msg(x))
    def kn(k): c = min(k, P) - 1; return clog(k, P) * (msg(m) + (c - 1) * sg(m))
    if op == "bcast":
        sa = kn(2) if m < P else sum(msg(m / 2**j) for j in range(1, clog(2, P) + 1)) + (P - 1) * xx(m / P)
        return {"knomial:2": kn(2), "knomial:3": kn(3), "knomial:4": kn(4), "knomial:8": kn(8),
                "flat": msg(m) + (P - 2) * sg(m), "scatter_allgather": sa}
    R, P2 = flog2(P), 1 << flog2(P)
    if op == "reduce":
        fold = 0 if P == P2 else msg(m) + m * GAMMA
        rs = sum(xx(m / 2**j) + m / 2**j * GAMMA for j in range(1, R + 1))
        ga = sum(msg(m / 2**j) for j in range(1, R + 1))
        return {"binomial": clog(2, P) * (msg(m) + m * GAMMA),
                "flat": msg(m) + m * GAMMA + (P - 2) * (rg(m) + m * GAMMA), "rsg": fold + rs + ga}
    fix = 0 if P == P2 else 2 * msg(m) + m * GAMMA
    b = m / P
    return {"recdbl": fix + R * (xx(m) + m * GAMMA),
            "ring": (P - 1) * (xx(b) + b * GAMMA) + (P - 1) * xx(b)}
ORDER = {"bcast": ["knomial:2", "knomial:3", "knomial:4", "knomial:8", "flat", "scatter_allgather"],
         "reduce": ["binomial", "flat", "rsg"], "allreduce": ["recdbl", "ring"]}
meas, mins, model = defaultdict(list), defaultdict(list), {}
for line in open(raw).read().splitlines()[1:]:
    mode, op, P, c, run, s, tc, mp, tmin, mo = line.split("\t")
    if mode != "msg" or c == "auto": continue
    k = (op, int(P), c, int(s)); model[k] = float(mo)
    meas[k].append(float(tc)); mins[k].append(float(tmin))
med = {k: st.median(v) for k, v in meas.items()}; mn = {k: st.median(v) for k, v in mins.items()}
worst = max(abs(costs(op, s, P, P_)[c] - v) / max(v, 1e-9) for (op, P, c, s), v in model.items())
print(f"reimplementation vs the library's predictions: max relative difference {worst:.2e}")
keys = sorted({(op, P, s) for (op, P, c, s) in med})
def acc(T, rdv, w, cores=CORES, Ps=None):
    hit = tot = 0; miss = []
    for op, P, s in keys:
        if Ps and P not in Ps: continue
        p = dict(P_); p["L"] += w if P > cores else 0.0
        cs = costs(op, s, P, p, rdv)
        pick = None
        for c in ORDER[op]:
            if pick is None or cs[c] < cs[pick] * (1 - 1e-9): pick = c
        fast = min(ORDER[op], key=lambda c: T[(op, P, c, s)])
        ok = T[(op, P, pick, s)] <= 1.10 * T[(op, P, fast, s)]
        hit += ok; tot += 1
        if not ok: miss.append(f"{op}/{P}/{s}:{pick}({T[(op, P, pick, s)] / T[(op, P, fast, s)]:.2f}x {fast})")
    return hit, tot, miss
rtt = 2 * (P_["o_s"] + P_["L"] + P_["o_r"])
print(f"node row: {P_}; rendezvous term = one 8-byte round trip 2(o_s+L+o_r) = {rtt:.3f} us")
for label, T in (("median", med), ("min", mn)):
    for rdv in (0.0, rtt):
        for w in (0.0, 1.0, 2.0, 5.0, 10.0, 20.0):
            h, t, miss = acc(T, rdv, w)
            h2, t2, _ = acc(T, rdv, w, Ps={2})
            print(f"{label:6} rdv {rdv:5.2f} w {w:5.1f}: {h}/{t} = {100*h/t:5.1f}%   P=2 only {h2}/{t2}")
    h, t, miss = acc(T, rtt, 5.0)
    print(f"{label} misses with rdv + w=5: " + " ".join(miss))
print(f"\n# + oversubscribed (P > {CORES} cores): scatter_allgather and rsg left out of the argmin")
def acc2(T, rdv, w, cores=CORES, excl=("scatter_allgather", "rsg")):
    hit = tot = 0; miss = []
    for op, P, s in keys:
        p = dict(P_); over = P > cores
        if over: p["L"] += w
        cs = costs(op, s, P, p, rdv)
        pick = None
        for c in ORDER[op]:
            if over and (c in excl): continue
            if pick is None or cs[c] < cs[pick] * (1 - 1e-9): pick = c
        fast = min(ORDER[op], key=lambda c: T[(op, P, c, s)])
        ok = T[(op, P, pick, s)] <= 1.10 * T[(op, P, fast, s)]
        hit += ok; tot += 1
        if not ok: miss.append(f"{op}/{P}/{s}:{pick}({T[(op, P, pick, s)] / T[(op, P, fast, s)]:.2f}x {fast})")
    return hit, tot, miss
for label, T in (("median", med), ("min", mn)):
    for rdv in (0.0, rtt):
        for w in (0.0, 2.0, 5.0, 10.0):
            h, t, miss = acc2(T, rdv, w)
            print(f"{label:6} rdv {rdv:5.2f} w {w:5.1f}: {h}/{t} = {100*h/t:5.1f}%")
    h, t, miss = acc2(T, rtt, 5.0)
    print(f"{label} misses (rdv, w=5, exclusion): " + " ".join(miss))
PY
echo "# total $(($(date +%s) - t0)) s; raw data $raw; report $out/report.txt"
