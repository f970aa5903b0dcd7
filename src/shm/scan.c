/* Shared-memory Scan and Exscan inside a node (issue 19): a chain in rank
 * order, pipelined by fragments.
 *
 * Process i's prefix P_i = d_0 op ... op d_i goes to process i + 1 through
 * i's contribution slots (reduce.c's ring and sequence numbers: fragment K
 * in slot K % reduce_slots, announced by rseq = K + 1):
 *   process 0:      WF; slot = d_0; rseq = K + 1
 *   process i:      W on rseq[i-1]; WF; slot = P_{i-1} op d_i; rseq = K + 1
 *   process p - 1:  W on rseq[p-2]; its result only (nobody reads a slot of it)
 *   everyone:       D (rdone = K + 1) once it has read what it needed of K.
 * The lower rank is always the left operand, so non-commutative ops give
 * MPI's result. Scan's result is the process's own prefix (copied out of its
 * slot after the publication, so the next process starts one copy earlier;
 * the last process folds straight into its receive buffer); Exscan's is the
 * previous prefix, copied out of the previous process's slot (in place, after
 * the fold has read the contribution it overwrites). Process 0 of an Exscan
 * receives nothing.
 *
 * Each slot has one reader (the next process), but WF waits for every
 * process's rdone as in reduce.c, so the sequence numbers stay those of the
 * other reductions on the segment. Deadlock freedom: publishing fragment K
 * waits for fragments <= K - slots, which the readers finish after reading
 * publications made earlier; a process's fragment K needs only the previous
 * process's fragment K, so by induction along the chain every fragment is
 * published.
 *
 * The chain's latency is p - 1 hops plus the fragments in flight: right for
 * the few processes of one node (a rank-ordered tree for many is later
 * work). Messages of at most TC_SHM_INLINE_MAX bytes travel in the inline
 * lines instead of the slots, the same chain, except where the writers
 * choose their slots from a deeper ring (tc_scan_any).
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "copy.h"
#include "params.h"
#include "reduce_proto.h"
#include "scan.h"

/* The folds of the chain and the rounds: through @p op (any operation the
 * library reduces), or, @p op NULL, through a basic type's loops @p lp
 * alone (tc_shm_scan_loops: the same loops tc_redop_init() puts in op, so
 * the same bits). out = left op right, out may be right; inout = in op
 * inout. */
static inline void tc_scan_fold3(const tc_redop_t *op, const tc_redop_loops_t *lp, const char *left,
                                 const char *right, char *out, size_t n)
{
    if (op)
        tc_redop_apply3(op, left, right, out, n);
    else if (out == right)
        lp->f2(left, out, n);
    else
        lp->f3(left, right, out, n);
}
static inline void tc_scan_fold(const tc_redop_t *op, const tc_redop_loops_t *lp, const char *in,
                                char *inout, size_t n)
{
    if (op)
        tc_redop_apply(op, in, inout, n);
    else
        lp->f2(in, inout, n);
}

/* Fragment k (@p len bytes, @p n elements) of the chain: @p own this
 * process's contribution, @p out its result; @p in_line: the inline lines
 * rather than the slots; folds through @p op, or @p lp (tc_scan_fold3).
 * Inlined into its two callers, so each gets the fold it passes. */
static inline __attribute__((always_inline)) void
tc_scan_step_any(tc_shm_comm_t *s, uint64_t k, const char *own, char *out, size_t n, size_t len,
                 const tc_redop_t *op, const tc_redop_loops_t *lp, bool exclusive, bool in_line)
{
    const int p = s->p, me = s->rank;
    const bool first = me == 0, last = me == p - 1;
    const int seq =
        in_line ? TC_SHM_RLINE_INLINE0 + (int)(k % TC_SHM_REDUCE_INLINE_SLOTS) : TC_SHM_RLINE_SEQ;
    const int done = in_line ? TC_SHM_RLINE_DONE_INLINE : TC_SHM_RLINE_DONE;
    const char *prev = NULL;
    if (!first) {
        tc_atomic_u64_t *line = tc_red_line(s, me - 1, seq);
        /* acquire (in tc_red_wait): pairs with the release of the previous
         * process's publication below: its prefix is in place. */
        tc_red_wait(s, line, me - 1, k + 1, "shm scan: wait for the previous rank's prefix",
                    me - 1);
        prev = in_line ? (const char *)(line + 1) : tc_red_contrib(s, me - 1, k);
    }
    if (!last) {
        tc_atomic_u64_t *line = tc_red_line(s, me, seq);
        char *mine;
        if (in_line) {
            tc_red_wait_free(s, k, TC_SHM_REDUCE_INLINE_SLOTS, done, s->seen_rdone + p);
            mine = (char *)(line + 1);
        } else {
            mine = tc_red_claim(s, k);
        }
        if (first)
            tc_shm_copy_small(mine, own, len, false);
        else
            tc_scan_fold3(op, lp, prev, own, mine, n);
        /* release: pairs with the acquire of the next process above. */
        tc_shm_publish(s, line, me, k + 1);
        if (!exclusive && !(first && out == own)) /* process 0 in place: already there */
            tc_shm_copy_small(out, mine, len, false);
    } else if (!exclusive) {
        tc_scan_fold3(op, lp, prev, own, out, n); /* out may be own (in place) */
    }
    if (exclusive && !first)
        tc_shm_copy_small(out, prev, len, false); /* after the fold read own, which out may be */
    tc_red_finish(s, done, k);
}

/* A message of at most one line (@p in_line) or one slot in ceil(log2 p)
 * rounds (Hillis-Steele; header comment). Round r (sequence number
 * base + r, distance d = 2^r): process i publishes its partial T_i (the
 * operands of processes i - 2^r + 1 .. i) if i + d < p reads it; reads
 * T_{i-d} if i >= d and folds it on the left: T_i = T_{i-d} op T_i, which
 * then lives in i's slot for the next round if i + 2d < p reads it, else in
 * @p out (Scan). Exscan keeps E_i = T_{i-d} op E_i in @p out instead (the
 * partials read so far: processes i - 2^(r+1) + 1 .. i - 1), so process 0
 * never writes it. The lower ranks' partial is always the left operand.
 * Every round is one fragment of the ring (WF before writing a slot, D after
 * reading): round r waits only for rounds < r of other processes, and a
 * process's round r needs only round r of the process d below it. Folds
 * through @p op or @p lp, inlined as tc_scan_step_any. */
static inline __attribute__((always_inline)) void
tc_scan_tree_any(tc_shm_comm_t *s, const char *own, char *out, size_t n, size_t len,
                 const tc_redop_t *op, const tc_redop_loops_t *lp, bool exclusive, bool in_line)
{
    const int p = s->p, me = s->rank;
    const uint64_t base = in_line ? s->red_inline : s->red_frags;
    const uint64_t ring = in_line ? TC_SHM_REDUCE_INLINE_SLOTS : (uint64_t)s->layout.rslots;
    const int done = in_line ? TC_SHM_RLINE_DONE_INLINE : TC_SHM_RLINE_DONE;
    uint64_t *seen = in_line ? s->seen_rdone + p : s->seen_rdone;
    int rounds = 0;
    while ((1 << rounds) < p)
        rounds++;
        /* Where this process's slot or line of fragment k is. */
#define TC_SCAN_SLOT(i, k)                                                                         \
    (in_line                                                                                       \
         ? (char *)(tc_red_line(s, (i),                                                            \
                                TC_SHM_RLINE_INLINE0 + (int)((k) % TC_SHM_REDUCE_INLINE_SLOTS)) +  \
                    1)                                                                             \
         : tc_red_contrib(s, (i), (k)))
#define TC_SCAN_SEQ(i, k)                                                                          \
    tc_red_line(s, (i),                                                                            \
                in_line ? TC_SHM_RLINE_INLINE0 + (int)((k) % TC_SHM_REDUCE_INLINE_SLOTS)           \
                        : TC_SHM_RLINE_SEQ)
    const char *cur = own; /* T_me */
    bool have = false;     /* Exscan: out holds E_me */
    if (me + 1 < p) {
        char *slot;
        if (in_line) {
            tc_red_wait_free(s, base, ring, done, seen);
            slot = TC_SCAN_SLOT(me, base);
        } else {
            slot = tc_red_claim(s, base);
        }
        memcpy(slot, own, len);
        cur = slot;
    }
    for (int r = 0; r < rounds; r++) {
        const uint64_t k = base + (uint64_t)r;
        const int d = 1 << r;
        if (me + d < p) /* release: pairs with the acquire of process me + d below. */
            tc_shm_publish(s, TC_SCAN_SEQ(me, k), me, k + 1);
        /* T_me's home after this round: the next round's slot if someone
         * reads it there, else out (Scan), else nowhere (Exscan). */
        char *next = NULL;
        if (me + 2 * d < p && r + 1 < rounds) {
            if (in_line) {
                tc_red_wait_free(s, k + 1, ring, done, seen);
                next = TC_SCAN_SLOT(me, k + 1);
            } else {
                next = tc_red_claim(s, k + 1);
            }
        } else if (!exclusive) {
            next = out;
        }
        if (me >= d) {
            /* acquire (in tc_red_wait): pairs with the release above of
             * process me - d. */
            tc_red_wait(s, TC_SCAN_SEQ(me - d, k), me - d, k + 1,
                        "shm scan: wait for a lower rank's partial", me - d);
            const char *left = TC_SCAN_SLOT(me - d, k);
            if (exclusive) {
                if (have)
                    tc_scan_fold(op, lp, left, out, n);
                else
                    memcpy(out, left, len);
                have = true;
            }
            if (next == cur)
                tc_scan_fold(op, lp, left, next, n); /* out in place */
            else if (next)
                tc_scan_fold3(op, lp, left, cur, next, n);
        } else if (next && next != cur) {
            memcpy(next, cur, len);
        }
        if (next)
            cur = next;
        tc_red_finish(s, done, k);
    }
#undef TC_SCAN_SLOT
#undef TC_SCAN_SEQ
    if (in_line)
        s->red_inline = base + (uint64_t)rounds;
    else
        s->red_frags = base + (uint64_t)rounds;
}

/* tc_shm_scan_rounds() for a message of more than one inline line that
 * may run in rounds: the model decides. */
static __attribute__((noinline)) bool tc_scan_rounds_model(const tc_shm_comm_t *s, size_t m)
{
    int rounds = 0;
    while ((1 << rounds) < s->p)
        rounds++;
    const size_t f = tc_shm_params_fragment_for(m, s->tw_over_t, s->rfrag_default);
    const double tw = s->tw_over_t, md = (double)m, x = (double)(f < m ? f : m),
                 nfrag = (double)((m + f - 1) / f);
    /* In units of t, gamma taken as t: m t + R (t_w + m (2t + gamma))
     * against 2 x t + (p - 2 + nfrag) (t_w + x (t + gamma)). */
    const double cost_rounds = md + rounds * (tw + 3.0 * md);
    const double cost_chain = 2.0 * x + ((double)s->p - 2.0 + nfrag) * (tw + 2.0 * x);
    return cost_rounds < cost_chain;
}

/* tc_shm_scan_rounds(), its common answers inline. */
static inline bool tc_scan_rounds(const tc_shm_comm_t *s, size_t m)
{
    if (s->scan_tree_min <= 0 || s->p < s->scan_tree_min || s->p < 2 || m > s->rfrag_default)
        return false;
    if (m <= TC_SHM_INLINE_MAX)
        return true;
    return tc_scan_rounds_model(s, m);
}

bool tc_shm_scan_rounds(const tc_shm_comm_t *s, size_t m)
{
    return tc_scan_rounds(s, m);
}

/* The rounds (@p rounds), or the chain of several fragments: out of line,
 * so the common calls' path stays short (either fold, as tc_scan_any). */
static __attribute__((noinline)) void tc_scan_long(tc_shm_comm_t *s, const char *own, char *out,
                                                   size_t nelem, size_t e, const tc_redop_t *op,
                                                   const tc_redop_loops_t *lp, bool exclusive,
                                                   bool rounds, bool in_line)
{
    const size_t nbytes = nelem * e;
    if (rounds) {
        tc_scan_tree_any(s, own, out, nelem, nbytes, op, lp, exclusive, in_line);
        return;
    }
    /* Paper 000's fragment rule, per message, in whole elements (reduce.c):
     * the chain fills in p - 1 fragment times, so smaller fragments than a
     * slot pay off. */
    size_t f = tc_shm_params_fragment_for(nbytes, s->tw_over_t, s->rfrag_default) / e * e;
    if (f == 0)
        f = e;
    const uint64_t nfrag = (nbytes + f - 1) / f, base = s->red_frags;
    for (uint64_t j = 0; j < nfrag; j++) {
        const size_t off = (size_t)j * f, len = tc_red_min(f, nbytes - off);
        tc_scan_step_any(s, base + j, own + off, out ? out + off : NULL, len / e, len, op, lp,
                         exclusive, false);
    }
    s->red_frags = base + nfrag;
}

/* tc_shm_scan() folding through @p op, or (@p op NULL) tc_shm_scan_loops()
 * through @p lp; @p e the element's bytes. Inlined into both, so each gets
 * its fold; the decisions are the message size's only. */
static inline __attribute__((always_inline)) tc_err_t
tc_scan_any(tc_shm_comm_t *s, const void *sendbuf, void *recvbuf, size_t nelem, size_t e,
            const tc_redop_t *op, const tc_redop_loops_t *lp, bool exclusive)
{
    const size_t nbytes = nelem * e;
    if (s->layout.rslots == 0 || e == 0 || e > s->rfrag_default)
        return tc_err(TC_ERR_NOTSUP);
    if (nelem == 0)
        return TC_OK;
    const char *own = sendbuf ? sendbuf : recvbuf;
    char *out = recvbuf;
    if (s->p == 1) {
        if (!exclusive && sendbuf)
            memcpy(out, own, nbytes);
        return TC_OK;
    }
    /* One line's message travels in the inline lines, but where the writers
     * choose their slots from a deeper ring (a node with more processes than
     * CPUs: !tc_red_fixed_ring) it takes a slot like a larger one.
     * A chain runs back to back only as far as process 0 may run ahead of
     * the last, and when the processes take turns on the CPUs that is
     * the ring's depth: 16 inline lines, against the deep ring's 128 slots
     * at np 4 while contended. Measured at np 4 on 2 CPUs, Open MPI, 4 B, 5
     * runs: 56 -> 18 us a call beside two busy processes, 1.57 -> 0.84 us
     * alone (docs/shm.md). The same on every process: the layout is the
     * segment's. */
    const bool in_line = nbytes <= TC_SHM_INLINE_MAX && tc_red_fixed_ring(s);
    if (!in_line)
        tc_red_call_begin(s, true); /* the slots' depth for this call (reduce_slots.c) */
    if (tc_scan_rounds(s, nbytes)) {
        tc_scan_long(s, own, out, nelem, e, op, lp, exclusive, true, in_line);
    } else if (in_line) {
        tc_scan_step_any(s, s->red_inline, own, out, nelem, nbytes, op, lp, exclusive, true);
        s->red_inline++;
    } else if (nbytes <= TC_SHM_MIN_FRAGMENT && nbytes <= s->rfrag_default) {
        /* One fragment whatever the fragment rule says (its fragment is at
         * least TC_SHM_MIN_FRAGMENT or the slot): no sqrt, no loop. */
        tc_scan_step_any(s, s->red_frags, own, out, nelem, nbytes, op, lp, exclusive, false);
        s->red_frags++;
    } else {
        tc_scan_long(s, own, out, nelem, e, op, lp, exclusive, false, false);
    }
    return TC_OK;
}

tc_err_t tc_shm_scan(tc_shm_comm_t *s, const void *sendbuf, void *recvbuf, size_t nelem,
                     const tc_redop_t *op, bool exclusive)
{
    return tc_scan_any(s, sendbuf, recvbuf, nelem, op->elem, op, NULL, exclusive);
}

tc_err_t tc_shm_scan_loops(tc_shm_comm_t *s, const void *sendbuf, void *recvbuf, size_t nelem,
                           const tc_redop_loops_t *lp, bool exclusive)
{
    return tc_scan_any(s, sendbuf, recvbuf, nelem, lp->elem, NULL, lp, exclusive);
}
