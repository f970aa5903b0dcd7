/* The contribution-slot protocol of the shared-memory reductions (reduce.c
 * describes it: publish P, wait W, wait-free WF, finish D), shared by the
 * Reduce/Allreduce of reduce.c and the Reduce_scatter of reduce_scatter.c.
 * Internal to src/shm: static inline helpers, one copy for both. */
#ifndef TC_SHM_REDUCE_PROTO_H
#define TC_SHM_REDUCE_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "copy.h"
#include "segment.h"

/* Fragments a receiver publishes ahead of the one it combines, so its own
 * copy-in of the next fragments overlaps its peers' (at most slots - 1). */
#define TC_RED_LOOKAHEAD 2

static inline tc_atomic_u64_t *tc_red_line(const tc_shm_comm_t *s, int i, int which)
{
    return (tc_atomic_u64_t *)(void *)(s->base + tc_shm_layout_rline(&s->layout, i, which));
}
/* Fragment k's place in a ring of rslots: k mod rslots, a mask when they
 * are a power of two (the automatic count's usual case), not a 64-bit
 * division (tens of cycles) on every small call's path. */
static inline int tc_red_ring_pos(const tc_shm_comm_t *s, uint64_t k)
{
    const uint64_t n = (uint64_t)s->layout.rslots;
    return (int)((n & (n - 1)) == 0 ? k & (n - 1) : k % n);
}
/* Whether the segment's reduction ring is fixed (every node with at most
 * as many of the communicator's processes as CPUs), rather than one whose
 * writers choose their slots from a deeper ring (reduce_slots.c). The same
 * on every process: it is the layout's. */
static inline bool tc_red_fixed_ring(const tc_shm_comm_t *s)
{
    return s->layout.rdepth == s->layout.rslots;
}
/* The slot of process i's fragment k: its ring position on the fixed ring
 * (layout.rdepth == layout.rslots), else the slot i chose and wrote in its
 * slot_of[] before publishing (reduce_slots.c). Read only between i's
 * publication of k (acquired) and this process's D of k: i rewrites the
 * entry only for fragment k + rslots, once every process has finished k. */
static inline int tc_red_slot(const tc_shm_comm_t *s, int i, uint64_t k)
{
    const int pos = tc_red_ring_pos(s, k);
    if (tc_red_fixed_ring(s))
        return pos;
    return (int)((const uint32_t *)(const void *)(s->base +
                                                  tc_shm_layout_rslot_of(&s->layout, i)))[pos];
}
static inline char *tc_red_contrib(const tc_shm_comm_t *s, int i, uint64_t k)
{
    return s->base + tc_shm_layout_rcontrib(&s->layout, i, tc_red_slot(s, i, k));
}
static inline char *tc_red_result(const tc_shm_comm_t *s, int i, uint64_t k)
{
    return s->base + tc_shm_layout_rresult(&s->layout, i, tc_red_slot(s, i, k));
}
static inline size_t tc_red_min(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* Wait until *line (a line of region @p i) >= want; returns the value read.
 * acquire: pairs with the publication (tc_shm_publish, a seq_cst store that
 * is also a release) of the line's writer, named at each caller, so what it
 * wrote before is visible. */
static inline uint64_t tc_red_wait(const tc_shm_comm_t *s, tc_atomic_u64_t *line, int i,
                                   uint64_t want, const char *stage, int peer)
{
    return tc_shm_wait_ge(s, line, i, want, stage, peer);
}

/* WF: slot k of a ring of n may be rewritten once every other process has
 * finished fragment k - n, as each published in its line at @p off in its
 * region (rdone, rdone_inline, pdone; @p seen: the values last read, so a
 * satisfied wait needs no read of the peer's line). */
static inline void tc_red_wait_free_at(tc_shm_comm_t *s, uint64_t k, uint64_t n, size_t off,
                                       uint64_t *seen)
{
    if (k < n)
        return;
    const uint64_t need = k - n + 1;
    for (int i = 0; i < s->p; i++) {
        if (i == s->rank || seen[i] >= need)
            continue;
        /* acquire (in tc_red_wait): pairs with the release of rdone /
         * rdone_inline in tc_red_finish(), or of pdone in
         * tc_red_finish_packed(): i's reads of our slot happen before we
         * overwrite it. */
        tc_atomic_u64_t *done =
            (tc_atomic_u64_t *)(void *)(s->base + tc_shm_layout_region(&s->layout, i) + off);
        seen[i] = tc_red_wait(s, done, i, need, "shm reduce: wait for a slot to be released", i);
    }
}
/* The same for the rdone (@p which TC_SHM_RLINE_DONE) or rdone_inline line. */
static inline void tc_red_wait_free(tc_shm_comm_t *s, uint64_t k, uint64_t n, int which,
                                    uint64_t *seen)
{
    tc_red_wait_free_at(s, k, n, s->layout.rctrl_off + (size_t)which * s->layout.line, seen);
}

/* Writer-chosen slots (reduce_slots.c): the depth of this call, and
 * the claim of a slot for fragment k. */
void tc_red_call_begin_slow(tc_shm_comm_t *s, bool may_deepen);
int tc_red_claim_slot(tc_shm_comm_t *s, uint64_t k);
/* Test hook: the depth of the next call (layout.rdepth..layout.rslots),
 * instead of the contention signal; NULL: the signal. */
extern uint64_t (*tc_red_test_depth)(const tc_shm_comm_t *s);

/* At the start of every reduction call that uses the slots: how many
 * fragments this process's writes may keep in flight during it (its
 * publications' WF waits for fragment k - depth), all the slots while
 * contended if @p may_deepen, else rdepth. Fixed ring: all of them. */
static inline void tc_red_call_begin(tc_shm_comm_t *s, bool may_deepen)
{
    if (!tc_red_fixed_ring(s))
        tc_red_call_begin_slow(s, may_deepen);
}

/* WF, then the slot: where this process writes its fragment k (its
 * contribution, a partial, a prefix), free of every reader's fragment
 * k - depth and before. */
static inline char *tc_red_claim(tc_shm_comm_t *s, uint64_t k)
{
    if (tc_red_fixed_ring(s)) {
        tc_red_wait_free(s, k, (uint64_t)s->layout.rslots, TC_SHM_RLINE_DONE, s->seen_rdone);
        return tc_red_contrib(s, s->rank, k);
    }
    return s->base + tc_shm_layout_rcontrib(&s->layout, s->rank, tc_red_claim_slot(s, k));
}

/* D: this process is done with fragment k (every read of peers' slots for
 * it is over). */
static inline void tc_red_finish(tc_shm_comm_t *s, int which, uint64_t k)
{
    /* release: pairs with the acquire in tc_red_wait_free() of a publisher. */
    tc_shm_publish(s, tc_red_line(s, s->rank, which), s->rank, k + 1);
}

/* How often a Reduce to a root publishes its D of the inline lines: after
 * every TC_RED_INLINE_DONE_EVERY-th inline fragment (k + 1 a multiple of it),
 * not after each. Its writers (the non-roots) run ahead of its reader (the
 * root, which folds); once they are the ring's TC_SHM_REDUCE_INLINE_SLOTS
 * fragments ahead, each reads the root's rdone_inline at every call, and
 * every store the root then makes to it is one more cache-line transfer on
 * the slower side's path. Published every eighth fragment, it moves once per
 * eight calls (np 2, 4-56 B, both MPIs: 0.87-1.00x the time alone, 0.85-0.90x
 * beside busy processes but one noisy cell; in
 * docs/measurements/five-runs-2026-11-27.md). The other users of the inline
 * lines (Allreduce, Reduce_scatter, the scans) publish after every
 * fragment: more often is always allowed, and there it measured no faster.
 * A writer of fragment k waits (WF) for rdone_inline >= k - n + 1 (n the
 * ring): a process that has finished every fragment before k has published
 * at least the multiple of E at or below k, i.e. >= k - E + 1 >= k - n + 1
 * for E <= n, so a wait never needs a fragment the writer has not yet
 * published, and the ring's deadlock argument holds; the scans' tree asks
 * for fragment k + 1's WF during fragment k (scan.c), hence E < n. */
#define TC_RED_INLINE_DONE_EVERY 8
_Static_assert(TC_RED_INLINE_DONE_EVERY >= 1 &&
                   TC_RED_INLINE_DONE_EVERY < TC_SHM_REDUCE_INLINE_SLOTS,
               "a reader's published inline D must reach every writer's WF bound");

/* D of inline fragment k of a Reduce or Allreduce: a Reduce to a root
 * (@p rooted) publishes it at every TC_RED_INLINE_DONE_EVERY-th fragment,
 * an Allreduce at every one. */
static inline void tc_red_finish_inline(tc_shm_comm_t *s, uint64_t k, bool rooted)
{
    if (!rooted || (k + 1) % TC_RED_INLINE_DONE_EVERY == 0)
        tc_red_finish(s, TC_SHM_RLINE_DONE_INLINE, k);
}

/* The packed ring (layout.h): process i's entry for packed call k, and D
 * of packed call k, published at every TC_RED_PACKED_DONE_EVERY-th call: a
 * writer of call k waits (WF) for pdone >= k - TC_SHM_PACKED_RING + 1, and
 * a process that has finished every call before k has published at least
 * the multiple of E at or below k, >= k - E + 1, enough for E <= the ring
 * (the argument of TC_RED_INLINE_DONE_EVERY). Published every 16th call,
 * the root's pdone line moves once per four entry lines it reads. */
#define TC_RED_PACKED_DONE_EVERY 16
_Static_assert(TC_RED_PACKED_DONE_EVERY >= 1 && TC_RED_PACKED_DONE_EVERY <= TC_SHM_PACKED_RING,
               "a published packed D must reach every writer's WF bound");
static inline tc_atomic_u64_t *tc_red_pentry(const tc_shm_comm_t *s, int i, uint64_t k)
{
    return (tc_atomic_u64_t *)(void *)(s->base + tc_shm_layout_pentry(
                                                     &s->layout, i, (int)(k % TC_SHM_PACKED_RING)));
}
static inline void tc_red_finish_packed(tc_shm_comm_t *s, uint64_t k)
{
    if ((k + 1) % TC_RED_PACKED_DONE_EVERY != 0)
        return;
    tc_atomic_u64_t *pdone =
        (tc_atomic_u64_t *)(void *)(s->base + tc_shm_layout_pdone(&s->layout, s->rank));
    /* release: pairs with the acquire in tc_red_wait_free_at() of a writer of
     * the packed ring. */
    tc_shm_publish(s, pdone, s->rank, k + 1);
}

/* P: fragment k of this process's contribution into its slot, copied as
 * @p copy chose (copy.h). */
static inline void tc_red_publish(tc_shm_comm_t *s, uint64_t k, const char *src, size_t len,
                                  const tc_shm_copy_choice_t *copy)
{
    tc_shm_copy(copy, tc_red_claim(s, k), src, len);
    /* release: pairs with the acquire in tc_red_contribution(). */
    tc_shm_publish(s, tc_red_line(s, s->rank, TC_SHM_RLINE_SEQ), s->rank, k + 1);
}

/* W: process i's fragment k. */
static inline const char *tc_red_contribution(const tc_shm_comm_t *s, int i, uint64_t k)
{
    /* acquire (in tc_red_wait): pairs with the release in tc_red_publish() of i. */
    tc_red_wait(s, tc_red_line(s, i, TC_SHM_RLINE_SEQ), i, k + 1,
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
static inline void tc_red_fold(const tc_shm_comm_t *s, uint64_t k, const char *own, size_t skip,
                               char *acc, size_t n, const tc_redop_t *op)
{
    const int p = s->p;
    tc_redop_apply3(op, tc_red_operand(s, p - 2, k, own, skip),
                    tc_red_operand(s, p - 1, k, own, skip), acc, n);
    for (int i = p - 3; i >= 0; i--)
        tc_redop_apply(op, tc_red_operand(s, i, k, own, skip), acc, n);
}

#endif /* TC_SHM_REDUCE_PROTO_H */
