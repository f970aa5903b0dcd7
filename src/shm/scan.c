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
 * lines instead of the slots, the same chain.
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "params.h"
#include "reduce_proto.h"
#include "scan.h"

/* Fragment k (@p len bytes, @p n elements) of the chain: @p own this
 * process's contribution, @p out its result; @p in_line: the inline lines
 * rather than the slots. */
static void tc_scan_step(tc_shm_comm_t *s, uint64_t k, const char *own, char *out, size_t n,
                         size_t len, const tc_redop_t *op, bool exclusive, bool in_line)
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
        if (in_line)
            tc_red_wait_free(s, k, TC_SHM_REDUCE_INLINE_SLOTS, done, s->seen_rdone + p);
        else
            tc_red_wait_free(s, k, (uint64_t)s->layout.rslots, done, s->seen_rdone);
        tc_atomic_u64_t *line = tc_red_line(s, me, seq);
        char *mine = in_line ? (char *)(line + 1) : tc_red_contrib(s, me, k);
        if (first)
            memcpy(mine, own, len);
        else
            tc_redop_apply3(op, prev, own, mine, n);
        /* release: pairs with the acquire of the next process above. */
        tc_shm_publish(s, line, me, k + 1);
        if (!exclusive && !(first && out == own)) /* process 0 in place: already there */
            memcpy(out, mine, len);
    } else if (!exclusive) {
        tc_redop_apply3(op, prev, own, out, n); /* out may be own (in place) */
    }
    if (exclusive && !first)
        memcpy(out, prev, len); /* after the fold read own, which out may be */
    tc_red_finish(s, done, k);
}

tc_err_t tc_shm_scan(tc_shm_comm_t *s, const void *sendbuf, void *recvbuf, size_t nelem,
                     const tc_redop_t *op, bool exclusive)
{
    const size_t e = op->elem, nbytes = nelem * e;
    if (s->layout.rslots == 0 || e == 0 || e > s->layout.rslot_bytes)
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
    if (nbytes <= TC_SHM_INLINE_MAX) {
        tc_scan_step(s, s->red_inline, own, out, nelem, nbytes, op, exclusive, true);
        s->red_inline++;
        return TC_OK;
    }
    /* Paper 000's fragment rule, per message, in whole elements (reduce.c):
     * the chain fills in p - 1 fragment times, so smaller fragments than a
     * slot pay off. */
    size_t f = tc_shm_params_fragment_for(nbytes, s->tw_over_t, s->layout.rslot_bytes) / e * e;
    if (f == 0)
        f = e;
    const uint64_t nfrag = (nbytes + f - 1) / f, base = s->red_frags;
    for (uint64_t j = 0; j < nfrag; j++) {
        const size_t off = (size_t)j * f, len = tc_red_min(f, nbytes - off);
        tc_scan_step(s, base + j, own + off, out ? out + off : NULL, len / e, len, op, exclusive,
                     false);
    }
    s->red_frags = base + nfrag;
    return TC_OK;
}
