/* Shared-memory Reduce_scatter inside a node (issue 19): the slice scheme of
 * the Allreduce (reduce.c) with the slices cut where the caller's counts say
 * and each process's slice folded straight into its own receive buffer. */
#ifndef TC_SHM_REDUCE_SCATTER_H
#define TC_SHM_REDUCE_SCATTER_H

#include <stddef.h>

#include "base/err.h"
#include "base/redop.h"
#include "segment.h"

/* Reduce_scatter of a message of @p total packed elements (base/redop.h)
 * over the segment's processes: process i receives elements [d_i, d_i + n_i)
 * of the reduction, d_i = n_0 + ... + n_{i-1}; this process's part is
 * elements [@p lo, @p lo + @p n) (the caller has them from the counts: one
 * pass over them, at the entry point).
 * Operands are combined in segment rank order, lower rank left
 * (MPI_Reduce_local order), so non-commutative ops give the rank-ordered
 * result.
 * @p sendbuf: this process's whole message (@p total elements), contiguous;
 * NULL: "in place": the message is at @p recvbuf, and the result is written
 * over its first @p n elements.
 * @p recvbuf: @p n elements of result.
 * Every process of the segment calls it with the same @p total, parts that
 * tile the message in rank order, and the same op->elem.
 * Returns TC_OK, or TC_ERR_NOTSUP (on every process alike, before anything
 * moves) when the segment has no reduce area or an element does not fit in
 * a slot. */
tc_err_t tc_shm_reduce_scatter(tc_shm_comm_t *s, const void *sendbuf, void *recvbuf, size_t total,
                               size_t lo, size_t n, const tc_redop_t *op);

#endif /* TC_SHM_REDUCE_SCATTER_H */
