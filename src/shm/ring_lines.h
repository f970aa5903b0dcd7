/* The run-ahead ring: small messages to one reader each, in lines of their
 * own, so a writer can run far ahead of a slow reader.
 *
 * Every process i has TC_SHM_BCAST_RING lines bring[k] and one line bdone
 * (layout.h). Ring calls are numbered over the segment (r = 0, 1, 2, ...;
 * every process counts them alike: s->ring_uses); call r uses line
 * k = r % R of its readers, R = TC_SHM_BCAST_RING, with the sequence number
 * r + 1, the payload (at most TC_SHM_INLINE_MAX bytes) after it:
 *
 *   writer of i's line (a Bcast's parent of i, a Scatter's root):
 *       wait until bdone[i] >= r - R + 1                                (WR)
 *       payload, then bring[i][k] = r + 1 (release)                     (N)
 *   i, if it reads in call r: wait bring[i][k] >= r + 1, read           (W)
 *   everyone, at the end of call r: bdone[me] = r + 1                   (A)
 *
 * Only process i reads its lines, and every process publishes bdone after
 * every ring call (whether it read or wrote or neither), so bdone[i] >=
 * r - R + 1 says i has finished call r - R: the line's previous message,
 * whoever wrote it, has been read (A after the read; the acquire in WR
 * orders that read before our writes). Successive writers of a line are
 * ordered the same way, values only grow (by R per use of the line), so a
 * line holding r + 1 or more was written for call r, and nothing else
 * writes these lines. A writer waits for its readers only, never for the
 * whole node, and at most R calls behind: a Bcast or Scatter root runs up
 * to R calls ahead of a descheduled reader, as the MPIs' eager messages let
 * their roots do, where the banks allow q bank uses.
 *
 * Deadlock freedom as for the banks: a writer in call r waits only for a
 * reader to finish call r - R, which every process reaches after calls it
 * has already made.
 *
 * Users: tc_shm_bcast_pipelined() (messages of at most TC_SHM_INLINE_MAX
 * bytes) and tc_shm_scatter() (blocks of at most that).
 */
#ifndef TC_SHM_RING_LINES_H
#define TC_SHM_RING_LINES_H

#include <stdint.h>

#include "segment.h"

/* The line of process @p i for ring call @p r. */
static inline tc_atomic_u64_t *tc_shm_ring_line(const tc_shm_comm_t *s, int i, uint64_t r)
{
    return tc_shm_bring(s, i, (int)(r % (uint64_t)TC_SHM_BCAST_RING));
}

/* WR: process @p i has finished ring call r - R, so its line for call
 * @p r may be written. @p stage names the wait in the timeout message. */
static inline void tc_shm_ring_wait_free(tc_shm_comm_t *s, int i, uint64_t r, const char *stage)
{
    if (r < (uint64_t)TC_SHM_BCAST_RING)
        return;
    const uint64_t need = r - (uint64_t)TC_SHM_BCAST_RING + 1;
    if (s->seen_bdone[i] >= need)
        return;
    /* acquire: pairs with the publication of bdone (A) in
     * tc_shm_ring_finish() of process i: its read of the line we are about
     * to overwrite happens before our writes. */
    s->seen_bdone[i] = tc_shm_wait_ge(s, tc_shm_bdone(s, i), i, need, stage, i);
}

/* N: the payload of @p i's line for call @p r is written; publish it. */
static inline void tc_shm_ring_publish(const tc_shm_comm_t *s, int i, uint64_t r)
{
    /* release (seq_cst, and a wake if i sleeps): pairs with the acquire in
     * tc_shm_ring_wait() of process i; publishes the payload written
     * before. */
    tc_shm_publish(s, tc_shm_ring_line(s, i, r), i, r + 1);
}

/* W: wait until this process's line for call @p r holds its message;
 * returns the payload. @p stage and @p peer (the writer) name the wait in
 * the timeout message. */
static inline const char *tc_shm_ring_wait(const tc_shm_comm_t *s, uint64_t r, const char *stage,
                                           int peer)
{
    tc_atomic_u64_t *line = tc_shm_ring_line(s, s->rank, r);
    /* acquire: pairs with tc_shm_ring_publish() of the writer. */
    tc_shm_wait_ge(s, line, s->rank, r + 1, stage, peer);
    return (const char *)(line + 1);
}

/* A: this process has finished the current ring call (its read, if any,
 * is over); the next call is the next ring call. */
static inline void tc_shm_ring_finish(tc_shm_comm_t *s)
{
    const uint64_t r = s->ring_uses++;
    /* release (seq_cst): pairs with the acquire in tc_shm_ring_wait_free()
     * of the writers of our lines in call r + R. */
    tc_shm_publish(s, tc_shm_bdone(s, s->rank), s->rank, r + 1);
}

#endif /* TC_SHM_RING_LINES_H */
