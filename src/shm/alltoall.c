/* Alltoall(v) through the segment, with the Bcast's queues and sequence
 * numbers (bcast_pipelined.c, allgather.c; one writer per cache line, see
 * layout.h).
 *
 * Bank b of process i's queue (S/q buffers of f bytes) is cut into p - 1
 * slots of W bytes (whole cache lines), one per destination j != i, slot
 * index j < i ? j : j - 1. In bank use u (bank b = u % q), every process
 * copies the next W bytes of each of its p - 1 outgoing blocks into its own
 * slots, announces them all with ONE store to its own ready[i][b] line, then
 * reads its own slot out of every other process's bank b:
 *
 *   all, bank use u:  wait until done[k] >= u - q + 1 for every k     (WS)
 *                     copy the chunk of each block to j into slot j
 *                     ready[me][b] = base + 1                          (N)
 *                     for each other i:
 *                         wait ready[i][b] >= base + 1, copy slot me   (W)
 *                     done[me] = u + 1                                 (A)
 *
 * base = bank_frags[b] before the use, and bank_frags[b] = base + 1 after it
 * on every process, so the ready lines of bank b only grow and the Bcast,
 * the Allgather family and this operation share one sequence of bank uses
 * (the argument of allgather.c: a writer of bank b in use u + q has seen
 * every process done with use u). So p - 1 blocks cost one notification per
 * writer per bank use, read by the p - 1 others, not p - 1 messages.
 *
 * Blocks larger than W take several bank uses; every process makes the same
 * number, the largest block's. Alltoall: known everywhere. Alltoallv: each
 * process knows only its own blocks, so in the first bank use every writer
 * also puts its largest outgoing block's size into its ready line (next to
 * the sequence number, published by the same store); every process reads
 * every other's line in that use, so after it all know the largest block of
 * all. A process with nothing to send or receive still makes the uses.
 *
 * Run-ahead (issue 13): while this process's waits keep meeting CPU-bound
 * processes (tc_wait_contended()), a call of several bank uses publishes up
 * to q - 1 uses ahead of the one it reads, so a peer that was off its CPU
 * finds up to a whole queue waiting instead of one bank, and the call costs
 * one hand-over per queue, not one per bank. Otherwise it publishes use k
 * just before reading it, as above (the whole queue in flight costs cache:
 * the lockstep keeps a chunk warm between its copy in and out). Local: the
 * peers need not agree, since it holds for any ahead <= q - 1:
 *
 *   publish use x (x <= k + ahead, ahead <= q - 1, k the use read next):
 *       WS for x needs done[i] >= x - q + 1 <= k for every i;
 *       bank x % q was last used in x - q < k, done by this process, so
 *       bank_frags[x % q] is the base of x, as for the readers of x.
 *   deadlock freedom: let d be the lowest done of all, process P at d.
 *       P publishing any x <= d + q - 1 waits for done >= x - q + 1 <= d:
 *       never blocks. P reading use d from R: R publishes use d before it
 *       reads it, and its WS for d needs done >= d - q + 1: satisfied, so
 *       R can always publish d. So the lowest process always moves.
 *
 * Alltoallv learns the number of uses in the first, so it runs ahead only
 * from the second on. The ahead value comes from tc_shm_a2a_ahead() (a
 * test hook may choose it instead: the tests cannot make contention).
 *
 * Alltoall with (p - 1) blocks of at most TC_SHM_INLINE_MAX bytes in all:
 * the blocks ride in the writer's ready line, back to back in slot order
 * (tc_shm_a2a_inline() is written for its inline lines, inline_lines.h, but
 * takes one line: more did not pay, see tc_shm_alltoall()).
 *
 * An Alltoall whose blocks lie back to back in both buffers (contiguous
 * predefined types) takes tc_shm_alltoall_contig(): the same bank uses,
 * lines and sequence numbers, without the io callbacks, and at p = 2 without
 * any loop over peers (tc_shm_a2a_pair). Processes on either function meet.
 */
#include "alltoall.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "base/wait.h"
#include "copy.h"
#include "inline_lines.h"

/* Slot of destination @p j in a bank of writer @p i. */
static inline int tc_shm_a2a_index(int i, int j)
{
    return j < i ? j : j - 1;
}

static inline size_t tc_shm_a2a_send(const tc_shm_a2a_sizes_t *sz, int j)
{
    return sz->send ? sz->send[j] : sz->uniform;
}
static inline size_t tc_shm_a2a_recv(const tc_shm_a2a_sizes_t *sz, int j)
{
    return sz->recv ? sz->recv[j] : sz->uniform;
}
static inline size_t tc_shm_a2a_min(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* Bytes of one bank of a queue. */
static inline size_t tc_shm_a2a_bank_span(const tc_shm_comm_t *s)
{
    return (size_t)(s->layout.S / s->layout.q) * s->layout.f;
}

size_t tc_shm_a2a_slot(const tc_shm_comm_t *s)
{
    if (s->p < 2)
        return 0;
    return (tc_shm_a2a_bank_span(s) / (size_t)(s->p - 1)) &
           ~(s->layout.line - 1); /* a power of two */
}

uint64_t (*tc_shm_a2a_test_ahead)(const tc_shm_comm_t *s);

/* Bank uses a call of @p nuses uses publishes ahead of the one it reads
 * (the header's run-ahead): q - 1 while this process's waits keep meeting
 * CPU-bound processes, else 0. */
static uint64_t tc_shm_a2a_ahead(const tc_shm_comm_t *s, uint64_t nuses)
{
    const uint64_t most = (uint64_t)s->layout.q - 1;
    if (nuses < 2 || most == 0)
        return 0;
    const uint64_t ahead = tc_shm_a2a_test_ahead ? tc_shm_a2a_test_ahead(s)
                           : tc_wait_contended() ? most
                                                 : 0;
    return ahead < most ? ahead : most;
}

/* Alltoall, every block of this process in its inline lines (m bytes each,
 * the block to j at tc_shm_a2a_index(me, j) m of their byte stream). */
static void tc_shm_a2a_inline(tc_shm_comm_t *s, size_t m, const tc_shm_ag_io_t *io)
{
    const int p = s->p, me = s->rank;
    const uint64_t u = s->uses;
    const int bank = (int)(u % (uint64_t)s->layout.q);
    const uint64_t seq = s->bank_frags[bank] + 1;
    const int nlines = tc_shm_inline_nlines((size_t)(p - 1) * m);
    tc_shm_bank_wait_free(s, u, "shm alltoall: wait for a bank to be released");
    for (int d = 1; d < p; d++) {
        const int j = (me + d) % p;
        tc_shm_ag_lines_put(s, io, j, me, bank, (size_t)tc_shm_a2a_index(me, j) * m, m);
    }
    /* release (line 0 seq_cst): pairs with the acquires in
     * tc_shm_inline_wait() below in the readers; publishes the payload
     * written just above. */
    tc_shm_inline_publish(s, me, bank, nlines, seq);
    for (int d = 1; d < p; d++) {
        const int i = (me + d) % p;
        /* acquire: pairs with the publication above in process i. */
        tc_shm_inline_wait(s, i, bank, seq, nlines, "shm alltoall: wait for a block", i);
        tc_shm_ag_lines_get(s, io, i, i, bank, (size_t)tc_shm_a2a_index(i, me) * m, m);
    }
    s->bank_frags[bank] = seq;
    tc_shm_bank_done(s, u);
}

/* tc_shm_a2a_inline() for blocks at sbuf + j m and rbuf + j m: the blocks to
 * 0..me-1 and to me+1..p-1 are two runs of the send buffer and of the line
 * (slot order, tc_shm_a2a_index), so two copies put them all; the same bank
 * use, line and sequence number. */
static void tc_shm_a2a_inline_contig(tc_shm_comm_t *s, const char *sbuf, char *rbuf, size_t m)
{
    const int p = s->p, me = s->rank;
    const uint64_t u = s->uses;
    const int bank = (int)(u % (uint64_t)s->layout.q);
    const uint64_t seq = s->bank_frags[bank] + 1;
    const size_t below = (size_t)me * m, all = (size_t)(p - 1) * m;
    tc_shm_bank_wait_free(s, u, "shm alltoall: wait for a bank to be released");
    tc_atomic_u64_t *line = tc_shm_ready(s, me, bank);
    char *payload = (char *)(line + 1); /* tc_shm_inline_payload(s, me, bank, 0) */
    tc_shm_copy_small(payload, sbuf, below, false);
    tc_shm_copy_small(payload + below, sbuf + below + m, all - below, false);
    /* release (seq_cst): pairs with the acquire below in the readers (and
     * with tc_shm_inline_wait()'s, as tc_shm_inline_publish() of one line);
     * publishes the payload written just above. */
    tc_shm_publish(s, line, me, seq);
    for (int d = 1, i = me + 1; d < p; d++, i++) {
        if (i == p)
            i = 0;
        tc_atomic_u64_t *theirs = tc_shm_ready(s, i, bank);
        /* acquire: pairs with the publication above in process i. */
        tc_shm_wait_ge(s, theirs, i, seq, "shm alltoall: wait for a block", i);
        tc_shm_copy_small(rbuf + (size_t)i * m,
                          (const char *)(theirs + 1) + (size_t)tc_shm_a2a_index(i, me) * m, m,
                          false);
    }
    s->bank_frags[bank] = seq;
    tc_shm_bank_done(s, u);
}

/* tc_shm_alltoall_contig() of two processes: one block each way, in the
 * ready line's payload (m <= TC_SHM_INLINE_MAX) or at slot 0 of the bank
 * (the slot is the whole bank: never too small), so no loop over the
 * destinations, the sources or the slot indices (issue 19). The same bank
 * uses, lines and sequence numbers. */
static void tc_shm_a2a_pair(tc_shm_comm_t *s, const char *sbuf, char *rbuf, size_t m)
{
    const int me = s->rank, peer = 1 - me, q = s->layout.q;
    const bool inl = m <= TC_SHM_INLINE_MAX;
    const size_t bank_span = inl ? 0 : tc_shm_a2a_bank_span(s);
    const size_t w = inl ? m : tc_shm_a2a_slot(s);
    const char *out = sbuf + (size_t)peer * m;
    char *in = rbuf + (size_t)peer * m;
    const uint64_t u0 = s->uses, nuses = (m + w - 1) / w;
    const uint64_t ahead = tc_shm_a2a_ahead(s, nuses);
    uint64_t published = 0;
    for (uint64_t k = 0; k < nuses; k++) {
        for (; published < nuses && published <= k + ahead; published++) {
            const uint64_t u = u0 + published;
            const int bank = (int)(u % (uint64_t)q);
            const size_t done = (size_t)published * w;
            /* WS of tc_shm_bank_wait_free(), one peer. */
            if (u >= (uint64_t)q && s->seen_done[peer] < u - (uint64_t)q + 1)
                /* acquire: pairs with the publication of done (A) in
                 * tc_shm_bank_done() of the peer. */
                s->seen_done[peer] =
                    tc_shm_wait_ge(s, tc_shm_done(s, peer), peer, u - (uint64_t)q + 1,
                                   "shm alltoall: wait for a bank to be released", peer);
            tc_atomic_u64_t *line = tc_shm_ready(s, me, bank);
            tc_shm_copy_small(inl ? (char *)(line + 1)
                                  : tc_shm_queue(s, me) + (size_t)bank * bank_span,
                              out + done, tc_shm_a2a_min(m - done, w), false);
            /* release (seq_cst): pairs with the acquire below in the peer;
             * publishes the payload or the slot written just above. */
            tc_shm_publish(s, line, me, s->bank_frags[bank] + 1);
        }
        const uint64_t u = u0 + k;
        const int bank = (int)(u % (uint64_t)q);
        const uint64_t seq = s->bank_frags[bank] + 1;
        const size_t done = (size_t)k * w;
        tc_atomic_u64_t *theirs = tc_shm_ready(s, peer, bank);
        /* acquire: pairs with the publication above in the peer. */
        tc_shm_wait_ge(s, theirs, peer, seq,
                       inl ? "shm alltoall: wait for a block" : "shm alltoall: wait for a chunk",
                       peer);
        tc_shm_copy_small(in + done,
                          inl ? (const char *)(theirs + 1)
                              : tc_shm_queue(s, peer) + (size_t)bank * bank_span,
                          tc_shm_a2a_min(m - done, w), false);
        s->bank_frags[bank] = seq;
        tc_shm_bank_done(s, u);
    }
    if (sbuf != rbuf)
        tc_shm_copy_small(rbuf + (size_t)me * m, sbuf + (size_t)me * m, m, true);
}

/* The bank uses of tc_shm_alltoall() (blocks larger than the inline
 * lines): through @p io, or, @p io NULL, straight from and into the blocks
 * at sbuf + j m and rbuf + j m (m = sz->uniform, tc_shm_alltoall_contig()).
 * Inlined into both, so each gets its copies; the bank uses, lines and
 * sequence numbers are the sizes' only, so processes on either meet. */
static inline __attribute__((always_inline)) tc_err_t tc_shm_a2a_banks(tc_shm_comm_t *s,
                                                                       const tc_shm_a2a_sizes_t *sz,
                                                                       const tc_shm_ag_io_t *io,
                                                                       const char *sbuf, char *rbuf)
{
    const int p = s->p, me = s->rank;
    const bool v = sz->send != NULL;
    const size_t m = sz->uniform;
    const size_t w = tc_shm_a2a_slot(s);
    if (w == 0)
        return tc_err(TC_ERR_NOTSUP); /* p and the layout are the same everywhere */
    const int q = s->layout.q;
    const size_t bank_span = tc_shm_a2a_bank_span(s);
    /* The largest block: Alltoall's is known; Alltoallv's is agreed in the
     * first use, starting from our own largest outgoing one. */
    uint64_t largest = m;
    for (int j = 0; v && j < p; j++)
        if (j != me && sz->send[j] > largest)
            largest = sz->send[j];
    const uint64_t mine_largest = largest;
    const uint64_t u0 = s->uses;
    uint64_t nuses = v ? 1 : (largest + w - 1) / w;
    uint64_t ahead = v ? 0 : tc_shm_a2a_ahead(s, nuses), published = 0;
    for (uint64_t k = 0; k < nuses; k++) {
        /* Publish uses up to k + ahead (the header: never past q - 1). */
        for (; published < nuses && published <= k + ahead; published++) {
            const size_t done = (size_t)published * w;
            const uint64_t u = u0 + published;
            const int bank = (int)(u % (uint64_t)q);
            tc_shm_bank_wait_free(s, u, "shm alltoall: wait for a bank to be released");
            char *slots = tc_shm_queue(s, me) + (size_t)bank * bank_span;
            for (int d = 1, j = me + 1; d < p; d++, j++) {
                if (j == p)
                    j = 0;
                const size_t n = tc_shm_a2a_send(sz, j);
                char *slot = slots + (size_t)tc_shm_a2a_index(me, j) * w;
                if (!io)
                    tc_shm_copy_small(slot, sbuf + (size_t)j * m + done,
                                      tc_shm_a2a_min(m - done, w), false);
                else if (n > done)
                    io->put(io->state, j, done, slot, tc_shm_a2a_min(n - done, w));
            }
            tc_atomic_u64_t *line = tc_shm_ready(s, me, bank);
            if (v && published == 0)
                memcpy((char *)(line + 1), &mine_largest, sizeof mine_largest);
            /* release (seq_cst): pairs with the acquire below in the readers;
             * publishes the slots (and, first use of an Alltoallv, the size in
             * the line) written above. */
            tc_shm_publish(s, line, me, s->bank_frags[bank] + 1);
        }
        const size_t done = (size_t)k * w;
        const uint64_t u = u0 + k;
        const int bank = (int)(u % (uint64_t)q);
        const uint64_t base = s->bank_frags[bank];
        /* W: starting after us, so that the processes do not all read the
         * same queue at once. */
        for (int d = 1, i = me + 1; d < p; d++, i++) {
            if (i == p)
                i = 0;
            tc_atomic_u64_t *other = tc_shm_ready(s, i, bank);
            /* acquire: pairs with the publication above in process i. */
            tc_shm_wait_ge(s, other, i, base + 1, "shm alltoall: wait for a chunk", i);
            if (v && k == 0) {
                uint64_t theirs;
                memcpy(&theirs, (const char *)(other + 1), sizeof theirs);
                largest = theirs > largest ? theirs : largest;
            }
            const size_t n = tc_shm_a2a_recv(sz, i);
            const char *slot =
                tc_shm_queue(s, i) + (size_t)bank * bank_span + (size_t)tc_shm_a2a_index(i, me) * w;
            if (!io)
                tc_shm_copy_small(rbuf + (size_t)i * m + done, slot, tc_shm_a2a_min(m - done, w),
                                  false);
            else if (n > done)
                io->get(io->state, i, done, slot, tc_shm_a2a_min(n - done, w));
        }
        s->bank_frags[bank] = base + 1;
        tc_shm_bank_done(s, u);
        if (v && k == 0) {
            s->a2av_largest = largest; /* the same on every process */
            if (largest > w) {
                nuses = (largest + w - 1) / w;
                ahead = tc_shm_a2a_ahead(s, nuses);
            }
        }
    }
    return TC_OK;
}

tc_err_t tc_shm_alltoall_contig(tc_shm_comm_t *s, const char *sbuf, char *rbuf, size_t m)
{
    const int p = s->p, me = s->rank;
    if (p < 2 || m == 0)
        return TC_OK; /* as tc_shm_alltoall() */
    if (p == 2) {
        tc_shm_a2a_pair(s, sbuf, rbuf, m);
        return TC_OK;
    }
    if (m <= TC_SHM_INLINE_MAX / (size_t)(p - 1)) {
        tc_shm_a2a_inline_contig(s, sbuf, rbuf, m);
    } else {
        const tc_shm_a2a_sizes_t sz = {.uniform = m};
        const tc_err_t rc = tc_shm_a2a_banks(s, &sz, NULL, sbuf, rbuf);
        if (rc != TC_OK)
            return rc;
    }
    if (sbuf != rbuf)
        tc_shm_copy_small(rbuf + (size_t)me * m, sbuf + (size_t)me * m, m, true);
    return TC_OK;
}

tc_err_t tc_shm_alltoall(tc_shm_comm_t *s, const tc_shm_a2a_sizes_t *sz, const tc_shm_ag_io_t *io)
{
    const int p = s->p;
    const bool v = sz->send != NULL;
    if (p < 2 || (!v && sz->uniform == 0))
        return TC_OK; /* the same on every process: nothing moves, no bank use */
    /* One line only: measured at np = 2 (Open MPI, loaded machine), 128-byte
     * blocks in three inline lines took 0.146 us at best against 0.123 for
     * the ready line and the slot, and 64 bytes in two lines gained nothing. */
    if (!v && sz->uniform <= TC_SHM_INLINE_MAX / (size_t)(p - 1)) {
        tc_shm_a2a_inline(s, sz->uniform, io);
        return TC_OK;
    }
    return tc_shm_a2a_banks(s, sz, io, NULL, NULL);
}
