/* Shared-memory Scan and Exscan inside a node (issue 19): a rank-ordered
 * chain of prefixes through the segment, pipelined by fragments. */
#ifndef TC_SHM_SCAN_H
#define TC_SHM_SCAN_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "base/redop.h"
#include "segment.h"

/* Inclusive (@p exclusive false: process i receives d_0 op ... op d_i) or
 * exclusive (process i > 0 receives d_0 op ... op d_{i-1}; process 0's
 * receive buffer is not touched) prefix reduction of @p nelem packed
 * elements (base/redop.h) over the segment's processes, in segment rank
 * order, the lower rank the left operand: non-commutative ops give MPI's
 * result.
 * @p sendbuf: this process's contribution, contiguous packed elements; NULL:
 * "in place", the contribution is in @p recvbuf and the result replaces it.
 * Every process calls with the same nelem, op->elem and exclusive.
 * Returns TC_OK, or TC_ERR_NOTSUP (on every process alike, before anything
 * moves) when the segment has no reduce area or an element does not fit in
 * a slot. */
/* Whether a message of @p m bytes runs in rounds rather than the chain
 * (scan.c): p >= TC_SHM_SCAN_TREE_MIN (> 0) and m at most one slot; then
 * always for messages of one inline line, and for larger ones when the
 * model's rounds cost (model/cost_shm_coll.h, in units of t with
 * t_w = tw_over_t t and gamma = t) is below the chain's at the fragment
 * size the chain would use. The same on every process. */
bool tc_shm_scan_rounds(const tc_shm_comm_t *s, size_t m);

tc_err_t tc_shm_scan(tc_shm_comm_t *s, const void *sendbuf, void *recvbuf, size_t nelem,
                     const tc_redop_t *op, bool exclusive);

/* tc_shm_scan() on contiguous elements of a basic type combined by @p lp's
 * loops (core/scan.c's direct path), without a tc_redop_t: the same
 * decisions, protocol, state and bits as tc_shm_scan() on a tc_redop_t of
 * those loops, so processes calling either with the same message meet. */
tc_err_t tc_shm_scan_loops(tc_shm_comm_t *s, const void *sendbuf, void *recvbuf, size_t nelem,
                           const tc_redop_loops_t *lp, bool exclusive);

#endif /* TC_SHM_SCAN_H */
