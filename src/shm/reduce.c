/* Shared-memory Reduce and Allreduce inside a node (issue 3; the queues of
 * paper 000 used the other way round, as paper 001 asks for the intra-node
 * reduction).
 *
 * Every process places its contribution, fragment by fragment, in its own
 * contribution slots (a ring of reduce_slots slots in its own region, so the
 * pages are on its NUMA node); the combining processes read the peers' slots
 * directly. Fragments are numbered globally over all reductions on the
 * segment (K = 0, 1, ...; slot K % reduce_slots), identically on every
 * process, since all see every reduction with the same byte count.
 *
 *   publish K:   wait until rdone[i] >= K - slots + 1 for every i       (WF)
 *                copy the fragment into contrib[K % slots]; rseq = K + 1  (P)
 *   combine K:   wait rseq[i] >= K + 1 (W), read contrib[i][K % slots]
 *   finish K:    rdone = K + 1                                           (D)
 *
 * Two ways to combine a fragment, chosen per message (same on every process):
 *  - direct: the receiving processes (the root of a Reduce; everyone in an
 *    Allreduce) fold all p contributions themselves. Least latency, and the
 *    only choice on two processes (a fold of two operands is one pass).
 *  - slice (p > 2 and fragments of at least TC_SHM_REDUCE_SLICE_MIN bytes):
 *    process i folds slice i of the fragment from all p slots into its own
 *    result slot and announces it (rres = K + 1); receivers then copy the p
 *    slices out. The reduction work is spread over all processes.
 * Both fold in rank order, right to left: acc = d[p-2] op d[p-1], then
 * acc = d[i] op acc for i = p-3 .. 0 (MPI_Reduce_local order: the lower
 * rank is the left operand). So non-commutative ops give the rank-ordered
 * result, and every receiver of an Allreduce evaluates the same expression on
 * the same bits: results are bitwise identical everywhere.
 *
 * Messages of at most TC_SHM_INLINE_MAX bytes travel inside a cache line next
 * to their sequence number (a ring of TC_SHM_REDUCE_INLINE_SLOTS lines per
 * process, recycled under rdone_inline like the slots under rdone): a
 * receiver moves one line per peer.
 *
 * What the root of a Reduce does not need, it skips: it never publishes its
 * own contribution in the direct scheme (it reads its send buffer), except
 * to stage it when MPI_IN_PLACE lets the fold overwrite it.
 */
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "params.h"
#include "segment.h"

/* Fragments a receiver publishes ahead of the one it combines, so its own
 * copy-in of the next fragments overlaps its peers' (at most slots - 1). */
#define TC_RED_LOOKAHEAD 2

static inline tc_atomic_u64_t *tc_red_line(const tc_shm_comm_t *s, int i, int which)
{
    return (tc_atomic_u64_t *)(void *)(s->base + tc_shm_layout_rline(&s->layout, i, which));
}
static inline char *tc_red_contrib(const tc_shm_comm_t *s, int i, uint64_t k)
{
    return s->base + tc_shm_layout_rcontrib(&s->layout, i, (int)(k % (uint64_t)s->layout.rslots));
}
static inline char *tc_red_result(const tc_shm_comm_t *s, int i, uint64_t k)
{
    return s->base + tc_shm_layout_rresult(&s->layout, i, (int)(k % (uint64_t)s->layout.rslots));
}
static inline size_t tc_red_min(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* Wait until *line >= want; returns the value read (acquire). */
static inline uint64_t tc_red_wait(const tc_shm_comm_t *s, tc_atomic_u64_t *line, uint64_t want,
                                   const char *stage, int peer)
{
    /* acquire: pairs with the release store of the line's writer (named at
     * each caller), so what it wrote before is visible. */
    uint64_t v = tc_load_acquire_u64(line);
    if (v >= want)
        return v;
    tc_waiter_t w;
    tc_waiter_init(&w, s->wait, stage, peer);
    while ((v = tc_load_acquire_u64(line)) < want)
        tc_waiter_pause(&w);
    return v;
}

/* WF: slot k of a ring of n may be rewritten once every other process has
 * finished fragment k - n (@p which: the rdone or rdone_inline line; @p seen:
 * the values last read, so a satisfied wait needs no read of the peer's
 * line). */
static void tc_red_wait_free(tc_shm_comm_t *s, uint64_t k, uint64_t n, int which, uint64_t *seen)
{
    if (k < n)
        return;
    const uint64_t need = k - n + 1;
    for (int i = 0; i < s->p; i++) {
        if (i == s->rank || seen[i] >= need)
            continue;
        /* acquire (in tc_red_wait): pairs with the release of rdone /
         * rdone_inline in tc_red_finish(): i's reads of our slot happen
         * before we overwrite it. */
        seen[i] = tc_red_wait(s, tc_red_line(s, i, which), need,
                              "shm reduce: wait for a slot to be released", i);
    }
}

/* D: this process is done with fragment k (every read of peers' slots for
 * it is over). */
static inline void tc_red_finish(tc_shm_comm_t *s, int which, uint64_t k)
{
    /* release: pairs with the acquire in tc_red_wait_free() of a publisher. */
    tc_store_release_u64(tc_red_line(s, s->rank, which), k + 1);
}

/* P: fragment k of this process's contribution into its slot. */
static void tc_red_publish(tc_shm_comm_t *s, uint64_t k, const char *src, size_t len)
{
    tc_red_wait_free(s, k, (uint64_t)s->layout.rslots, TC_SHM_RLINE_DONE, s->seen_rdone);
    memcpy(tc_red_contrib(s, s->rank, k), src, len);
    /* release: pairs with the acquire in tc_red_contribution(). */
    tc_store_release_u64(tc_red_line(s, s->rank, TC_SHM_RLINE_SEQ), k + 1);
}

/* W: process i's fragment k. */
static inline const char *tc_red_contribution(const tc_shm_comm_t *s, int i, uint64_t k)
{
    /* acquire (in tc_red_wait): pairs with the release in tc_red_publish() of i. */
    tc_red_wait(s, tc_red_line(s, i, TC_SHM_RLINE_SEQ), k + 1,
                "shm reduce: wait for a peer's contribution", i);
    return tc_red_contrib(s, i, k);
}

/* Where operand i of fragment k (bytes [off, off + len) of the message)
 * starts, @p skip bytes into the fragment. */
static inline const char *tc_red_operand(const tc_shm_comm_t *s, int i, uint64_t k, const char *own,
                                         size_t skip)
{
    return (i == s->rank ? own : tc_red_contribution(s, i, k)) + skip;
}

/* acc = d[0] op d[1] op ... op d[p-1] over @p n elements starting @p skip
 * bytes into fragment k, folded right to left (rank order). */
static void tc_red_fold(const tc_shm_comm_t *s, uint64_t k, const char *own, size_t skip, char *acc,
                        size_t n, const tc_redop_t *op)
{
    const int p = s->p;
    tc_redop_apply3(op, tc_red_operand(s, p - 2, k, own, skip),
                    tc_red_operand(s, p - 1, k, own, skip), acc, n);
    for (int i = p - 3; i >= 0; i--)
        tc_redop_apply(op, tc_red_operand(s, i, k, own, skip), acc, n);
}

/* Messages of at most one line's payload. */
static void tc_red_inline(tc_shm_comm_t *s, const char *mine, char *recvbuf, size_t nelem,
                          const tc_redop_t *op, int root)
{
    const int p = s->p, me = s->rank;
    const size_t nbytes = nelem * op->elem;
    const uint64_t k = s->red_inline;
    const int which = TC_SHM_RLINE_INLINE0 + (int)(k % TC_SHM_REDUCE_INLINE_SLOTS);
    const bool receives = root < 0 || me == root;

    if (!(root >= 0 && me == root)) {
        tc_red_wait_free(s, k, TC_SHM_REDUCE_INLINE_SLOTS, TC_SHM_RLINE_DONE_INLINE,
                         s->seen_rdone + p);
        tc_atomic_u64_t *line = tc_red_line(s, me, which);
        memcpy(line + 1, mine, nbytes);
        /* release: pairs with the acquire in the receivers' wait below;
         * publishes the payload written just above. */
        tc_store_release_u64(line, k + 1);
    }
    if (receives) {
        alignas(16) char acc[TC_SHM_INLINE_MAX];
        const char *d[2];
        for (int j = 0; j < 2; j++) {
            int i = p - 2 + j;
            if (i == me) {
                d[j] = mine;
            } else {
                tc_atomic_u64_t *line = tc_red_line(s, i, which);
                /* acquire (in tc_red_wait): pairs with i's release above. */
                tc_red_wait(s, line, k + 1, "shm reduce: wait for a peer's contribution", i);
                d[j] = (const char *)(line + 1);
            }
        }
        tc_redop_apply3(op, d[0], d[1], acc, nelem);
        for (int i = p - 3; i >= 0; i--) {
            const char *src = mine;
            if (i != me) {
                tc_atomic_u64_t *line = tc_red_line(s, i, which);
                tc_red_wait(s, line, k + 1, "shm reduce: wait for a peer's contribution", i);
                src = (const char *)(line + 1);
            }
            tc_redop_apply(op, src, acc, nelem);
        }
        memcpy(recvbuf, acc, nbytes);
    }
    s->red_inline = k + 1;
    tc_red_finish(s, TC_SHM_RLINE_DONE_INLINE, k);
}

int tc_shm_reduce(tc_shm_comm_t *s, const void *sendbuf, void *recvbuf, size_t nelem,
                  const tc_redop_t *op, int root)
{
    const size_t e = op->elem, nbytes = nelem * e;
    const int p = s->p, me = s->rank;
    const bool receives = root < 0 || me == root;
    if (s->layout.rslots == 0 || e == 0 || e > s->layout.rslot_bytes)
        return -1;
    if (nelem == 0)
        return 0;
    const char *mine = sendbuf ? sendbuf : recvbuf;
    if (p == 1) {
        if (sendbuf && receives)
            memcpy(recvbuf, sendbuf, nbytes);
        return 0;
    }
    if (nbytes <= TC_SHM_INLINE_MAX) {
        tc_red_inline(s, mine, recvbuf, nelem, op, root);
        return 0;
    }

    /* Paper 000's fragment rule, per message: sqrt(m t_w / t), in whole
     * elements, at most a slot. */
    const uint64_t slots = (uint64_t)s->layout.rslots;
    size_t f = tc_shm_params_fragment_for(nbytes, s->tw_over_t, s->layout.rslot_bytes) / e * e;
    if (f == 0)
        f = e;
    const uint64_t nfrag = (nbytes + f - 1) / f;
    const bool slice = p > 2 && f >= s->reduce_slice_min;
    /* The root of a direct Reduce reads its own send buffer, unless
     * MPI_IN_PLACE: then the fold would overwrite it, so it stages it. */
    const bool publishes = !(root == me && !slice && sendbuf);
    const bool stage_own = publishes && !sendbuf;
    /* Publishing fragment j + ahead waits for everyone to finish fragment
     * j + ahead - slots; ahead <= slots - 1 keeps that at or below j - 1,
     * which never waits on us (deadlock-free). */
    uint64_t ahead = receives || slice ? TC_RED_LOOKAHEAD : slots - 1;
    if (ahead > slots - 1)
        ahead = slots - 1;
    const uint64_t base = s->red_frags;
    uint64_t published = 0;

    for (uint64_t j = 0; j < nfrag; j++) {
        const uint64_t k = base + j;
        const size_t off = (size_t)j * f, len = tc_red_min(f, nbytes - off), n = len / e;
        while (publishes && published < nfrag && published <= j + ahead) {
            size_t poff = (size_t)published * f;
            tc_red_publish(s, base + published, mine + poff, tc_red_min(f, nbytes - poff));
            published++;
        }
        /* Our own operand: the send buffer, or the staged copy. */
        const char *own = stage_own ? tc_red_contrib(s, me, k) : mine + off;
        char *out = receives ? (char *)recvbuf + off : NULL;
        if (!slice) {
            if (receives)
                tc_red_fold(s, k, own, 0, out, n, op);
        } else {
            const size_t lo = n * (size_t)me / (size_t)p, hi = n * (size_t)(me + 1) / (size_t)p;
            char *res = tc_red_result(s, me, k);
            if (hi > lo)
                tc_red_fold(s, k, own, lo * e, res + lo * e, hi - lo, op);
            /* release: pairs with the acquire of the receivers below. */
            tc_store_release_u64(tc_red_line(s, me, TC_SHM_RLINE_RES), k + 1);
            if (receives) {
                for (int i = 0; i < p; i++) {
                    const size_t ilo = n * (size_t)i / (size_t)p;
                    const size_t ihi = n * (size_t)(i + 1) / (size_t)p;
                    if (ihi == ilo)
                        continue;
                    const char *r = res;
                    if (i != me) {
                        /* acquire (in tc_red_wait): pairs with i's release
                         * of rres above: its slice is complete. */
                        tc_red_wait(s, tc_red_line(s, i, TC_SHM_RLINE_RES), k + 1,
                                    "shm reduce: wait for a peer's slice", i);
                        r = tc_red_result(s, i, k);
                    }
                    memcpy(out + ilo * e, r + ilo * e, (ihi - ilo) * e);
                }
            }
        }
        tc_red_finish(s, TC_SHM_RLINE_DONE, k);
    }
    s->red_frags = base + nfrag;
    return 0;
}
