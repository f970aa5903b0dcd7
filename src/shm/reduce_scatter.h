/* Shared-memory Reduce_scatter inside a node (issue 19): the slice scheme of
 * the Allreduce (reduce.c) with the slices cut where the caller's counts say
 * and each process's slice folded straight into its own receive buffer. */
#ifndef TC_SHM_REDUCE_SCATTER_H
#define TC_SHM_REDUCE_SCATTER_H

#include <stddef.h>

#include "base/err.h"
#include "base/redop.h"
#include "segment.h"

/* Reduce_scatter of a message of packed elements (base/redop.h) over the
 * segment's processes: process i receives elements [d_i, d_i + n_i) of the
 * reduction, n_i = counts[i * stride] * scale and d_i = n_0 + ... + n_{i-1}
 * (stride 0: every process gets counts[0] * scale, a Reduce_scatter_block).
 * Operands are combined in segment rank order, lower rank left
 * (MPI_Reduce_local order), so non-commutative ops give the rank-ordered
 * result.
 * @p sendbuf: this process's whole message (sum of n_i elements), contiguous;
 * NULL: "in place": the message is at @p recvbuf, and the result is written
 * over its first n_me elements.
 * @p recvbuf: n_me elements of result.
 * Every process of the segment calls it with the same counts, stride, scale
 * and op->elem.
 * Returns TC_OK, or TC_ERR_NOTSUP (on every process alike, before anything
 * moves) when the segment has no reduce area or an element does not fit in
 * a slot. */
tc_err_t tc_shm_reduce_scatter(tc_shm_comm_t *s, const void *sendbuf, void *recvbuf,
                               const int *counts, int stride, size_t scale, const tc_redop_t *op);

#endif /* TC_SHM_REDUCE_SCATTER_H */
