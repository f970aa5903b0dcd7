/* The inline lines: small messages next to their sequence numbers.
 *
 * A message of up to TC_SHM_BCAST_INLINE_MAX bytes to (or from) process i in
 * bank b skips the queue: it rides in i's ready[b] line (line 0) and, beyond
 * one line's payload, in i's extra inline lines of bank b (layout.h). Line j
 * carries bytes [j w, (j + 1) w) of the message, w = TC_SHM_INLINE_MAX, after
 * its own copy of the sequence number, so every line validates itself: a
 * reader polls the sequence words of all the message's lines in one round,
 * loads with no dependency between them, and their misses overlap (about one
 * cache-line transfer instead of the ready line, then the slot's line).
 *
 * Users: the Bcast of more than one line's payload (bcast_pipelined.c: the
 * parent writes the child's lines; one line's payload or less goes through
 * the broadcast's own ring instead),
 * the Allgather and Gather (allgather.c: each process writes its own), the
 * Scatter (the root writes each receiver's) and the Alltoall (alltoall.c:
 * each process writes its own, every block it sends; one line at most there,
 * see tc_shm_alltoall()). Whoever writes the
 * lines of process i in bank b in a bank use, only that process writes them
 * in that use, and only after its bank wait (WS) saw every process done with
 * the previous use of bank b: a line's sequence number is always that of a
 * use of its bank, so the values only grow, a line holding the awaited number
 * was written in this use, and a payload is never overwritten while it is
 * read. The extra lines hold nothing but such sequence numbers and payloads
 * (no protocol writes anything else there), and ready[b]'s other writers
 * (the queued fragments) stay at or below the bank's fragment count, which
 * every inline use passes.
 *
 * Writer: payload of every line, then tc_shm_inline_seal() from the last line
 * down to line 0 (ready[b], published last: the line the wait helper sleeps
 * on), or tc_shm_inline_publish() for all of them. Reader:
 * tc_shm_inline_wait(), then the payloads.
 */
#ifndef TC_SHM_INLINE_LINES_H
#define TC_SHM_INLINE_LINES_H

#include <stddef.h>
#include <stdint.h>

#include "segment.h"

/* Lines a message of @p nbytes bytes takes (one for 0 bytes). */
static inline int tc_shm_inline_nlines(size_t nbytes)
{
    return nbytes <= TC_SHM_INLINE_MAX
               ? 1
               : (int)((nbytes + TC_SHM_INLINE_MAX - 1) / TC_SHM_INLINE_MAX);
}

/* The payload of line @p j of process @p i's inline lines in bank @p bank
 * (TC_SHM_INLINE_MAX bytes after the sequence number). */
static inline char *tc_shm_inline_payload(const tc_shm_comm_t *s, int i, int bank, int j)
{
    return (char *)(tc_shm_inline_line(s, i, bank, j) + 1);
}

/* Line @p j of process @p i's inline lines in bank @p bank holds @p seq: its
 * payload, written before, is published. Seal line 0 last. */
static inline void tc_shm_inline_seal(const tc_shm_comm_t *s, int i, int bank, int j, uint64_t seq)
{
    tc_atomic_u64_t *line = tc_shm_inline_line(s, i, bank, j);
    if (j > 0)
        /* release: pairs with the acquire in tc_shm_inline_wait() of the
         * reader; publishes this line's payload. */
        tc_store_release_u64(line, seq);
    else
        /* release (seq_cst, and a wake if the reader sleeps on region i):
         * pairs with the acquires in tc_shm_inline_wait() (its poll and its
         * wait helper); also orders the other lines' stores, made before. */
        tc_shm_publish(s, line, i, seq);
}

/* Seal the first @p nlines inline lines of process @p i in bank @p bank (their
 * payloads written before), the last first, line 0 last. */
static inline void tc_shm_inline_publish(const tc_shm_comm_t *s, int i, int bank, int nlines,
                                         uint64_t seq)
{
    for (int j = nlines - 1; j >= 0; j--)
        /* release: pairs with the acquires in tc_shm_inline_wait() of the
         * reader (see tc_shm_inline_seal()). */
        tc_shm_inline_seal(s, i, bank, j, seq);
}

/* Wait until the first @p nlines inline lines of process @p i in bank @p bank
 * hold @p seq (or more). One line: the wait helper on ready[bank], as any
 * fragment. Several: the spin polls every line's sequence word in each
 * round, so the misses overlap; past it the helper waits (yield, futex,
 * timeout and its message naming @p stage and @p peer) on ready[bank], which
 * the writer seals last: its acquire orders the other lines' release stores,
 * made before it, so they hold seq too. (The spin here comes before the
 * helper's own: at most twice TC_SPIN_COUNT polls before the first yield or
 * sleep.) */
static inline void tc_shm_inline_wait(const tc_shm_comm_t *s, int i, int bank, uint64_t seq,
                                      int nlines, const char *stage, int peer)
{
    tc_atomic_u64_t *lines[TC_SHM_BCAST_INLINE_LINES];
    for (int j = 0; j < nlines; j++)
        lines[j] = tc_shm_inline_line(s, i, bank, j);
    for (uint32_t polls = 0; nlines > 1 && polls < s->wait->spin_polls; polls++) {
        uint64_t low = UINT64_MAX;
        for (int j = 0; j < nlines; j++) {
            /* acquire: pairs with the release of line j in
             * tc_shm_inline_seal() of the writer; publishes its payload. */
            uint64_t v = tc_load_acquire_u64(lines[j]);
            low = v < low ? v : low;
        }
        if (low >= seq)
            return;
        tc_cpu_relax();
    }
    /* acquire: pairs with the publication of line 0 in tc_shm_inline_seal()
     * of the writer. (Line 0 named again, not lines[0]: GCC's -O3 cannot see
     * that nlines >= 1 filled it, -Wmaybe-uninitialized.) */
    tc_shm_wait_ge(s, tc_shm_inline_line(s, i, bank, 0), i, seq, stage, peer);
}

#endif /* TC_SHM_INLINE_LINES_H */
