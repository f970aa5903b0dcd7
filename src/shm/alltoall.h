/* Alltoall(v) inside one segment: every process writes its p - 1 outgoing
 * blocks into its own queue, one slot per destination, announces them with
 * one store to its ready line per bank use, and reads its own block out of
 * every other process's queue. See alltoall.c for the protocol,
 * docs/alltoall.md for the design.
 */
#ifndef TC_SHM_ALLTOALL_H
#define TC_SHM_ALLTOALL_H

#include <stddef.h>
#include <stdint.h>

#include "allgather.h"
#include "base/err.h"
#include "segment.h"

/* Block sizes. Alltoall: @p send and @p recv NULL, every block has
 * @p uniform bytes (the same on every process). Alltoallv: send[j] is the
 * bytes of this process's block to segment rank j, recv[j] of its block
 * from j (each process knows only its own; the largest block, which sets
 * the number of bank uses, is agreed inside the first bank use). */
typedef struct tc_shm_a2a_sizes {
    const size_t *send, *recv;
    size_t uniform;
} tc_shm_a2a_sizes_t;

/* Alltoall(v) of the segment's processes. @p io's put(j, off, dst, n) gives
 * bytes [off, off + n) of the block to j, get(j, off, src, n) takes bytes of
 * the block from j (tc_shm_ag_io_t; for one j, calls come with increasing
 * off). Moves the other processes' blocks only: the caller copies its own
 * block to itself (or not, for MPI_IN_PLACE). In place is safe: in every bank
 * use all of this process's outgoing bytes of the use are copied in before
 * any incoming byte of the same positions is written. Returns TC_OK, or
 * TC_ERR_NOTSUP (on every process alike, before anything moves) when a bank
 * cannot hold one cache line per destination. */
tc_err_t tc_shm_alltoall(tc_shm_comm_t *s, const tc_shm_a2a_sizes_t *sz, const tc_shm_ag_io_t *io);

/* tc_shm_alltoall() of an Alltoall whose blocks lie back to back in both
 * buffers: block j of @p m bytes at @p sbuf + j m (out) and @p rbuf + j m
 * (in; @p sbuf == @p rbuf for MPI_IN_PLACE). The same bank uses, lines and
 * sequence numbers as tc_shm_alltoall() with sz->uniform = @p m, so it meets
 * a process that calls that one (another datatype of the same signature);
 * no io callbacks, short blocks copied inline. Moves this process's own
 * block too, unless @p sbuf == @p rbuf (in place), and only on success;
 * returns TC_OK or TC_ERR_NOTSUP as tc_shm_alltoall(). */
tc_err_t tc_shm_alltoall_contig(tc_shm_comm_t *s, const char *sbuf, char *rbuf, size_t m);

/* Bytes of one block moved per bank use: a bank split into p - 1 slots of
 * whole cache lines (0: not possible, or p < 2). For the model: uses =
 * ceil(block / slot). */
size_t tc_shm_a2a_slot(const tc_shm_comm_t *s);

/* Test hook: when set, how many bank uses ahead of the one it reads a call
 * publishes (alltoall.c's run-ahead; clamped to q - 1), instead of the
 * contention signal. Tests only (tests/core/a2a_ahead.c). */
extern uint64_t (*tc_shm_a2a_test_ahead)(const tc_shm_comm_t *s);

#endif /* TC_SHM_ALLTOALL_H */
