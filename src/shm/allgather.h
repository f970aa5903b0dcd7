/* Allgather(v) inside one segment: every process copies its block into its
 * own queue once, every process copies the others' blocks out (see
 * allgather.c for the protocol, docs/allgather.md for the design).
 */
#ifndef TC_SHM_ALLGATHER_H
#define TC_SHM_ALLGATHER_H

#include <stddef.h>

#include "segment.h"

/* How blocks get in and out of the user's buffers: each block is a byte
 * stream (its type signature's bytes), visited in order, in pieces. */
typedef struct tc_shm_ag_io {
    /* This process's block: bytes [off, off + n) of it -> dst. */
    void (*put)(void *state, size_t off, char *dst, size_t n);
    /* Block @p j (a segment rank, never the caller's own): src -> bytes
     * [off, off + n) of it. For one j, calls come with increasing off. */
    void (*get)(void *state, int j, size_t off, const char *src, size_t n);
    void *state;
} tc_shm_ag_io_t;

/* Allgather over the segment's processes: block j has @p bytes[j] bytes
 * (@p bytes NULL: every block has @p uniform bytes). Every process calls it
 * with the same block sizes (they are the receive counts, which MPI
 * requires to match everywhere). Moves the other processes' blocks only:
 * the caller places its own block in its receive buffer itself (or not, for
 * MPI_IN_PLACE). Uses the Bcast's queues, bank uses and ready/done lines
 * (bcast_pipelined.c), so both protocols share one sequence of bank uses. */
void tc_shm_allgather(tc_shm_comm_t *s, const size_t *bytes, size_t uniform,
                      const tc_shm_ag_io_t *io);

#endif /* TC_SHM_ALLGATHER_H */
