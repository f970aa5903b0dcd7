/* Allgather(v), Gather(v) and Scatter(v) inside one segment: every process
 * copies its block into its own queue once, every process (Allgather) or
 * the root (Gather) copies the others' blocks out; Scatter: the root copies
 * each block into its receiver's queue. See allgather.c for the protocol,
 * docs/allgather.md for the design.
 */
#ifndef TC_SHM_ALLGATHER_H
#define TC_SHM_ALLGATHER_H

#include <stddef.h>

#include "segment.h"

/* How blocks get in and out of the user's buffers: each block is a byte
 * stream (its type signature's bytes), visited in order, in pieces. */
typedef struct tc_shm_ag_io {
    /* Block @p j (this process's own; any but the root's for a Scatter's
     * root): bytes [off, off + n) of it -> dst. */
    void (*put)(void *state, int j, size_t off, char *dst, size_t n);
    /* Block @p j (another process's; this process's own in a Scatter): src
     * -> bytes [off, off + n) of it. For one j, calls come with increasing
     * off. */
    void (*get)(void *state, int j, size_t off, const char *src, size_t n);
    void *state;
} tc_shm_ag_io_t;

/* An io for a process whose buffers could not be prepared: it still takes
 * part (the others are in the collective already), with zeros out and
 * nothing in. */
void tc_shm_ag_put_zeros(void *state, int j, size_t off, char *dst, size_t n);
void tc_shm_ag_get_nothing(void *state, int j, size_t off, const char *src, size_t n);

/* Block sizes: block j has bytes[j] bytes (@p bytes NULL: every block has
 * @p uniform bytes); @p max is the largest, the same on every process. A
 * process that reads no other block (a Gather's non-root, a Scatter's
 * non-root) may pass bytes NULL and its own block's size as uniform. */
typedef struct tc_shm_ag_sizes {
    const size_t *bytes;
    size_t uniform;
    size_t max;
} tc_shm_ag_sizes_t;

/* Allgather (@p root -1) or Gather to segment rank @p root: every process
 * but the root copies its block into its own queue; every process (the root
 * only) copies the others' blocks out. Moves the other processes' blocks
 * only: the caller places its own block in its receive buffer itself (or
 * not, for MPI_IN_PLACE). Uses the Bcast's queues, bank uses and ready/done
 * lines (bcast_pipelined.c), so the protocols share one sequence of bank
 * uses. */
void tc_shm_allgather(tc_shm_comm_t *s, const tc_shm_ag_sizes_t *sz, int root,
                      const tc_shm_ag_io_t *io);

/* Scatter from segment rank @p root: the root copies block j into process
 * j's queue (and announces it in j's ready line), process j copies it out.
 * The root's own block is the caller's. */
void tc_shm_scatter(tc_shm_comm_t *s, const tc_shm_ag_sizes_t *sz, int root,
                    const tc_shm_ag_io_t *io);

/* The inline lines (inline_lines.h) of process @p i in bank @p bank as one
 * byte stream, line k's payload holding its bytes [k w, (k + 1) w),
 * w = TC_SHM_INLINE_MAX: its bytes [at, at + n) from bytes [0, n) of block
 * @p blk (io->put), or into them (io->get), in increasing order. The caller
 * publishes (tc_shm_inline_publish) or waits (tc_shm_inline_wait). */
void tc_shm_ag_lines_put(const tc_shm_comm_t *s, const tc_shm_ag_io_t *io, int blk, int i, int bank,
                         size_t at, size_t n);
void tc_shm_ag_lines_get(const tc_shm_comm_t *s, const tc_shm_ag_io_t *io, int blk, int i, int bank,
                         size_t at, size_t n);

/* Bytes of one block moved per bank use when the largest block has @p max
 * bytes (for the model: uses = ceil(max / chunk)). */
size_t tc_shm_ag_chunk(const tc_shm_comm_t *s, size_t max);

#endif /* TC_SHM_ALLGATHER_H */
