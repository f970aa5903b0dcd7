/* Writer-chosen reduction slots (issue 13): a process's ring of reduction
 * slots may be larger than what it uses, so that it can run far ahead
 * while its peers are off their CPUs, without paying for the larger ring in
 * cache when they are not.
 *
 * On the fixed ring (layout.rdepth == layout.rslots, every node with at
 * least a CPU per process unless TC_SHM_REDUCE_SLOTS_CONTENDED says
 * otherwise) fragment K lives in slot K % rslots of its writer, and a
 * writer's WF waits for every process to finish K - rslots (reduce.c).
 * Where layout.rdepth < layout.rslots, each writer chooses its slots:
 *
 *   depth:  at the start of each reduction call, d = rslots while this
 *           process's waits keep meeting CPU-bound processes
 *           (tc_wait_contended(): yields keep losing the CPU for a time
 *           slice), else rdepth; a test hook may choose instead. Local: the
 *           peers need not agree. Reduce_scatter stays at rdepth: on 2 CPUs
 *           at np 4 its own ranks' long folds alone meet enough slices, and
 *           deep it took 2-3x the time at 4-16 MiB, where beside busy
 *           processes it already took at most half the MPI's own.
 *   claim K (before writing fragment K, instead of the fixed ring's WF):
 *           wait until every other process's rdone >= K - w + 1       (WF)
 *           (w = d, or rslots in reduce.c's slice scheme, see below)
 *           release the slots of this process's fragments every process,
 *           itself included, has finished (rdone read so far, our own rdone)
 *           take the fixed ring's slot K % rdepth if it is not in flight
 *           (so a process at rdepth uses the fixed ring's slots, in its
 *           order), else the slot released last (warm in cache), else a
 *           slot never used; slot_of[K % rslots] = slot
 *   publish K as before (rseq = K + 1, a release); a reader of K reads
 *           slot_of[K % rslots] of the writer after acquiring rseq.
 *
 * Why it holds:
 *  - One writer per slot, readers only between the publication and their
 *    D: a slot is taken again only once every process's rdone passed the
 *    fragment it held (the acquire of the WF, or of the reread below, pairs
 *    with the release in tc_red_finish(); our own rdone is program order).
 *  - slot_of[K % rslots] is rewritten only for fragment K + rslots, whose WF
 *    (d <= rslots) needs every process to have finished K: nobody reads the
 *    entry of K any more.
 *  - A slot is always there: after the WF every process's rdone is at least
 *    K - w + 1, and so is ours (each caller claims fragment K only once it
 *    has finished K - w: the bounds of reduce.c, reduce_scatter.c and
 *    scan.c), so at most w - 1 of our fragments are in flight and at least
 *    rslots - w + 1 slots are free or never used.
 *  - Deadlock freedom is the fixed ring's argument with w for rslots: the
 *    callers' blocking run-ahead bounds (lookaheads, the tree's lag) are
 *    computed from rdepth, which no d is below, and their non-blocking
 *    extra publications check the WF of this call's d first. The slice
 *    scheme's bounds (lookahead, copy-out lag, extra publications) follow
 *    each process's own d, and there every WF waits for the whole ring:
 *    each process's bounds stay within rslots - 1 whatever the others'.
 *    A depth that changes between calls only changes how long a WF waits
 *    for fragments of earlier calls, which every process finishes from
 *    publications already made.
 *
 * Cost where it is off: nothing (tc_red_call_begin and tc_red_claim test
 * one field). Where it is on: one entry of slot_of[] per publication and
 * per read, and a reread of the peers' rdone when no released slot is at
 * hand (it keeps the slots in use few when the peers keep up).
 */
#include <stdint.h>

#include "base/log.h"
#include "base/wait.h"
#include "reduce_proto.h"

uint64_t (*tc_red_test_depth)(const tc_shm_comm_t *s);

void tc_red_call_begin_slow(tc_shm_comm_t *s, bool may_deepen)
{
    const uint64_t lo = (uint64_t)s->layout.rdepth, hi = (uint64_t)s->layout.rslots;
    uint64_t d = tc_red_test_depth                   ? tc_red_test_depth(s)
                 : may_deepen && tc_wait_contended() ? hi
                                                     : lo;
    s->rdepth_call = s->rwf_call = d < lo ? lo : d > hi ? hi : d;
}

/* The lowest rdone of every process: ours from our own line, the others'
 * as last read, or, with @p reread, read again now. */
static uint64_t tc_red_done_min(tc_shm_comm_t *s, bool reread)
{
    /* relaxed: our own line, written only by this thread of ours. */
    uint64_t lim = tc_load_relaxed_u64(tc_red_line(s, s->rank, TC_SHM_RLINE_DONE));
    for (int i = 0; i < s->p; i++) {
        if (i == s->rank)
            continue;
        if (reread) {
            /* acquire: pairs with the release of rdone in i's
             * tc_red_finish(): its reads of the slots we release happen
             * before we rewrite them. */
            uint64_t v = tc_load_acquire_u64(tc_red_line(s, i, TC_SHM_RLINE_DONE));
            if (v > s->seen_rdone[i])
                s->seen_rdone[i] = v;
        }
        if (s->seen_rdone[i] < lim)
            lim = s->seen_rdone[i];
    }
    return lim;
}

/* A slot's state (s->rstate[slot]): never used, released, or holding a
 * fragment of ours in flight; STACKED: it is on the stack of released
 * slots (perhaps taken since: the stack is cleaned as it is popped). */
enum { TC_RSLOT_NEW = 0, TC_RSLOT_FREE = 1, TC_RSLOT_BUSY = 2, TC_RSLOT_STACKED = 4 };

/* Our claimed fragments below @p lim (finished by everyone) give their
 * slots back, oldest first, so the one released last ends on top. */
static void tc_red_release(tc_shm_comm_t *s, uint64_t lim)
{
    const uint64_t n = (uint64_t)s->layout.rslots;
    while (s->rq_head != s->rq_tail && s->rq_frag[s->rq_head % n] < lim) {
        const int slot = s->rq_slot[s->rq_head % n];
        if (s->rstate[slot] & TC_RSLOT_STACKED) {
            s->rstate[slot] = TC_RSLOT_STACKED | TC_RSLOT_FREE;
        } else {
            s->rstate[slot] = TC_RSLOT_STACKED | TC_RSLOT_FREE;
            s->rfree[s->rfree_n++] = slot;
        }
        s->rq_head++;
    }
}

/* A released (or never used) slot for fragment k: first the fixed ring's
 * slot k % rdepth, so a process that stays at rdepth uses exactly the
 * fixed ring's slots in its order; else the slot released last (warm in
 * cache); with @p fresh, else one never used. -1: none. */
static int tc_red_take(tc_shm_comm_t *s, uint64_t k, bool fresh)
{
    const uint64_t d = (uint64_t)s->layout.rdepth;
    const int pref = (int)((d & (d - 1)) == 0 ? k & (d - 1) : k % d);
    if ((s->rstate[pref] & 3) != TC_RSLOT_BUSY)
        return pref;
    while (s->rfree_n > 0) {
        const int slot = s->rfree[--s->rfree_n];
        s->rstate[slot] &= (unsigned char)~TC_RSLOT_STACKED;
        if ((s->rstate[slot] & 3) == TC_RSLOT_FREE)
            return slot;
    }
    for (; fresh && s->rfresh < s->layout.rslots; s->rfresh++)
        if (s->rstate[s->rfresh] == TC_RSLOT_NEW)
            return s->rfresh++;
    return -1;
}

int tc_red_claim_slot(tc_shm_comm_t *s, uint64_t k)
{
    const uint64_t n = (uint64_t)s->layout.rslots;
    tc_red_wait_free(s, k, s->rwf_call, TC_SHM_RLINE_DONE, s->seen_rdone);
    tc_red_release(s, tc_red_done_min(s, false));
    int slot = tc_red_take(s, k, false);
    if (slot < 0) {
        /* Before a slot never used (cold, and more of them in cache): have
         * the peers finished more since we last read? */
        tc_red_release(s, tc_red_done_min(s, true));
        slot = tc_red_take(s, k, true);
    }
    if (slot < 0) {
        /* Excluded by the bounds above (header comment): a caller claimed
         * a fragment rdepth or more past its own rdone. */
        tc_log(TC_LOG_ERROR,
               "shm reduce: no free slot for fragment %llu (rank %d, %llu in flight, rdone %llu)",
               (unsigned long long)k, s->rank, (unsigned long long)(s->rq_tail - s->rq_head),
               (unsigned long long)tc_red_done_min(s, true));
        PMPI_Abort(MPI_COMM_WORLD, 1);
        return 0;
    }
    s->rstate[slot] = (unsigned char)((s->rstate[slot] & TC_RSLOT_STACKED) | TC_RSLOT_BUSY);
    uint32_t *slot_of = (uint32_t *)(void *)(s->base + tc_shm_layout_rslot_of(&s->layout, s->rank));
    /* Plain store: published by the release of rseq that follows the
     * fragment's write (tc_red_publish() and the others' publications). */
    slot_of[tc_red_ring_pos(s, k)] = (uint32_t)slot;
    s->rq_frag[s->rq_tail % n] = k;
    s->rq_slot[s->rq_tail % n] = slot;
    s->rq_tail++;
    return slot;
}
