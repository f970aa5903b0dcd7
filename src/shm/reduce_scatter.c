/* Shared-memory Reduce_scatter and Reduce_scatter_block inside a node
 * (issue 19).
 *
 * The Allreduce's slice scheme (reduce.c) already is this operation: every
 * process publishes its whole contribution, fragment by fragment, in its
 * contribution slots (P), and folds its own part of each fragment from all p
 * slots (W) in rank order. Here the parts are where the caller's counts put
 * them (process i: elements [d_i, d_i + n_i) of the message, d_i the sum of
 * the counts before it), and each process folds straight into its receive
 * buffer: no result slot, no copy-out, and a fragment that holds none of a
 * process's elements costs it no wait at all (it only finishes it, D).
 *
 * The sequence numbers are the Allreduce's (red_frags, red_inline, rseq,
 * rdone): the protocol state of the segment stays one, whichever reduction
 * runs, since every process sees every reduction with the same byte count.
 * Deadlock freedom is reduce.c's argument for the slice scheme: publishing
 * fragment j + ahead (ahead <= slots - 1) waits for fragments <= j - 1 only.
 *
 * The fold is reduce.c's: acc = d[p-2] op d[p-1], then acc = d[i] op acc
 * for i = p-3 .. 0 (lower rank left), so non-commutative operations give
 * the rank-ordered result.
 *
 * In place (sendbuf NULL) the message and the result share the receive
 * buffer: result element x is written when the fragment holding message
 * element d_me + x >= x is folded, after every fragment up to that one has
 * been published, so the fold never overwrites a part of the message not yet
 * copied into a slot; the process's own operand is then read from its slot
 * (still unchanged: it is rewritten only when fragment k + slots is
 * published, after k is finished).
 *
 * A process does not copy its own part of the message into its slots
 * (nobody else reads it; on two processes that halves the copy-in), except
 * in place, where its fold reads its operand from there.
 *
 * Messages of at most TC_SHM_INLINE_MAX bytes travel whole in each
 * process's inline line, as in reduce.c's direct scheme.
 */
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "params.h"
#include "reduce_proto.h"
#include "reduce_scatter.h"

/* Process i's message in its inline line at @p line (fragment k; our own
 * line is ours to read: published by us just before). */
static inline const char *tc_rs_inline_operand(const tc_shm_comm_t *s, int i, const char *line,
                                               uint64_t k)
{
    if (i != s->rank)
        /* acquire (in tc_red_wait): pairs with i's release in tc_rs_inline(). */
        tc_red_wait(s, (tc_atomic_u64_t *)(uintptr_t)line, i, k + 1,
                    "shm reduce_scatter: wait for a peer's contribution", i);
    return line + sizeof(uint64_t);
}

/* P for fragment k (bytes [off, off + len) of the message at @p mine),
 * except the bytes [skip_lo, skip_hi) of the message: our own part, which
 * nobody else reads (only when the send buffer is ours to read from: in
 * place, the fold reads our operand from the slot). */
static void tc_rs_publish(tc_shm_comm_t *s, uint64_t k, const char *mine, size_t off, size_t len,
                          size_t skip_lo, size_t skip_hi, const tc_shm_copy_choice_t *copy)
{
    char *slot = tc_red_claim(s, k);
    const size_t end = off + len;
    const size_t a = skip_lo > off ? skip_lo : off, b = skip_hi < end ? skip_hi : end;
    if (a >= b) {
        tc_shm_copy(copy, slot, mine + off, len);
    } else {
        if (a > off)
            tc_shm_copy(copy, slot, mine + off, a - off);
        if (end > b)
            tc_shm_copy(copy, slot + (b - off), mine + b, end - b);
    }
    /* release: pairs with the acquire in tc_red_contribution() of the
     * readers (reduce_proto.h). */
    tc_shm_publish(s, tc_red_line(s, s->rank, TC_SHM_RLINE_SEQ), s->rank, k + 1);
}

/* Messages of at most one line's payload (@p nbytes): every process
 * publishes its message in its inline line, then folds its @p n elements
 * from element @p lo of every line straight into @p out. Every operand is
 * read from a line, ours too (in place, out is our message: the fold
 * overwrites nothing it reads). */
static void tc_rs_inline(tc_shm_comm_t *s, const char *mine, size_t nbytes, char *out, size_t lo,
                         size_t n, const tc_redop_t *op)
{
    const int p = s->p, me = s->rank;
    const uint64_t k = s->red_inline;
    const int which = TC_SHM_RLINE_INLINE0 + (int)(k % TC_SHM_REDUCE_INLINE_SLOTS);
    /* Process i's line `which` is i regions after process 0's: the layout's
     * offsets read once (the atomics below make the compiler read them
     * again at every use otherwise). */
    const char *const line0 = (const char *)tc_red_line(s, 0, which);
    const size_t region = s->layout.region_size;

    tc_red_wait_free(s, k, TC_SHM_REDUCE_INLINE_SLOTS, TC_SHM_RLINE_DONE_INLINE, s->seen_rdone + p);
    tc_atomic_u64_t *line = (tc_atomic_u64_t *)(uintptr_t)(line0 + (size_t)me * region);
    memcpy(line + 1, mine, nbytes);
    /* release: pairs with the acquire in the others' tc_rs_inline_operand(). */
    tc_shm_publish(s, line, me, k + 1);
    if (n > 0) {
        const size_t skip = lo * op->elem;
        tc_redop_apply3(
            op, tc_rs_inline_operand(s, p - 2, line0 + (size_t)(p - 2) * region, k) + skip,
            tc_rs_inline_operand(s, p - 1, line0 + (size_t)(p - 1) * region, k) + skip, out, n);
        for (int i = p - 3; i >= 0; i--)
            tc_redop_apply(op, tc_rs_inline_operand(s, i, line0 + (size_t)i * region, k) + skip,
                           out, n);
    }
    s->red_inline = k + 1;
    tc_red_finish(s, TC_SHM_RLINE_DONE_INLINE, k);
}

tc_err_t tc_shm_reduce_scatter(tc_shm_comm_t *s, const void *sendbuf, void *recvbuf, size_t total,
                               size_t lo, size_t n, const tc_redop_t *op)
{
    const size_t e = op->elem;
    const int p = s->p, me = s->rank;
    if (s->layout.rslots == 0 || e == 0 || e > s->rfrag_default)
        return tc_err(TC_ERR_NOTSUP);
    const size_t hi = lo + n, nbytes = total * e;
    if (total == 0)
        return TC_OK;
    const char *mine = sendbuf ? sendbuf : recvbuf;
    char *out = recvbuf;
    if (p == 1) {
        if (sendbuf)
            memcpy(out, mine, nbytes);
        return TC_OK;
    }
    if (nbytes <= TC_SHM_INLINE_MAX) {
        tc_rs_inline(s, mine, nbytes, out, lo, n, op);
        return TC_OK;
    }

    tc_red_call_begin(s, false); /* never deeper: reduce_slots.c */
    const uint64_t base = s->red_frags;
    tc_shm_copy_choice_t copy;
    tc_shm_copy_begin(&copy, s->reduce_copy, TC_SHM_COPY_USE_REDUCE, nbytes);
    if (nbytes <= TC_SHM_MIN_FRAGMENT && nbytes <= s->rfrag_default) {
        /* One fragment (the rule below never cuts less than the smaller of
         * TC_SHM_MIN_FRAGMENT and a slot): the loop's steps for nfrag = 1,
         * without its bookkeeping. */
        tc_rs_publish(s, base, mine, 0, nbytes, sendbuf ? lo * e : 0, sendbuf ? hi * e : 0, &copy);
        if (n > 0)
            tc_red_fold(s, base, sendbuf ? mine : tc_red_contrib(s, me, base), lo * e, out, n, op);
        tc_red_finish(s, TC_SHM_RLINE_DONE, base);
        s->red_frags = base + 1;
        tc_shm_copy_end(&copy);
        return TC_OK;
    }

    /* Paper 000's fragment rule, per message, in whole elements (reduce.c). */
    const uint64_t slots = s->rdepth_call; /* the ring, or this call's part of it */
    size_t f = tc_shm_params_fragment_for(nbytes, s->tw_over_t, s->rfrag_call) / e * e;
    if (f == 0)
        f = e;
    const uint64_t nfrag = (nbytes + f - 1) / f;
    /* How far publishing runs ahead of folding. A process's own part is a
     * run of consecutive fragments that it publishes without a copy; with
     * the Allreduce's short lookahead it would fold that run before copying
     * the later parts the others wait for, and the processes would take
     * turns (on two processes: one copies while the other folds, then the
     * other way round). When the whole message fits in the ring, nobody
     * ever waits for a slot: publish as far as the ring allows, so every
     * process copies the others' parts first and all fold together
     * (np 2, 64 KiB blocks: 12.7 -> 9.5 us). Larger messages keep the short
     * lookahead, which keeps a fragment in cache between its copy and its
     * folds (running ahead there doubled the time at 1 MiB blocks). */
    uint64_t ahead = nfrag <= slots ? slots - 1 : TC_RED_LOOKAHEAD;
    if (ahead > slots - 1)
        ahead = slots - 1;
    uint64_t published = 0;

    for (uint64_t j = 0; j < nfrag; j++) {
        const uint64_t k = base + j;
        const size_t off = (size_t)j * f, len = tc_red_min(f, nbytes - off);
        while (published < nfrag && published <= j + ahead) {
            const size_t poff = (size_t)published * f;
            tc_rs_publish(s, base + published, mine, poff, tc_red_min(f, nbytes - poff),
                          sendbuf ? lo * e : 0, sendbuf ? hi * e : 0, &copy);
            published++;
        }
        /* Our elements [lo, hi) within this fragment's [f0, f1). */
        const size_t f0 = off / e, f1 = (off + len) / e;
        const size_t a = lo > f0 ? lo : f0, b = hi < f1 ? hi : f1;
        if (a < b) {
            const char *own = sendbuf ? mine + off : tc_red_contrib(s, me, k);
            tc_red_fold(s, k, own, (a - f0) * e, out + (a - lo) * e, b - a, op);
        }
        tc_red_finish(s, TC_SHM_RLINE_DONE, k);
    }
    s->red_frags = base + nfrag;
    tc_shm_copy_end(&copy);
    return TC_OK;
}
