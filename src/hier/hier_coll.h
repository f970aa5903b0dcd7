/* Hierarchical Bcast, Reduce and Allreduce (paper 001, Figs. 3 and 4) over
 * the groups of a communicator's hierarchy (hier.h): one operation per
 * group, shared memory for the group the segment serves, the per-level
 * point-to-point algorithms elsewhere.
 *
 * Any root, without an extra hop: the groups whose unit contains the root
 * (its "chain", a suffix of every rank's bottom-up group list) are handled
 * with the root's representative as their root, the others with their
 * leader. Broadcast: the chain bottom-up, then the other groups top-down.
 * Reduce: the other groups bottom-up (partial results to the leaders), then
 * the chain top-down, ending at the root itself. (The paper sends the data
 * from the root to the global leader first; this schedule is the same
 * spanning tree re-rooted, one transfer shorter.)
 *
 * Data are contiguous bytes (Bcast) or packed element streams (Reduce,
 * Allreduce; base/redop.h). Messages longer than h->segment bytes go through
 * the whole schedule in pieces, so the levels work on different pieces at
 * the same time (a leader forwards piece s while the processes below it
 * already contribute piece s + 1) and temporary buffers stay bounded.
 *
 * Every rank of the communicator calls with the same sizes, root and op.
 * Return TC_OK, the code of a failing MPI call, or TC_ERR_NOMEM.
 */
#ifndef TC_HIER_HIER_COLL_H
#define TC_HIER_HIER_COLL_H

#include <mpi.h>
#include <stddef.h>

#include "base/redop.h"
#include "hier.h"
#include "shm/segment.h"

/** Broadcast @p nbytes bytes at @p buf from @p root (a rank of @p priv).
 * @p shm serves the group marked shm (NULL if none). */
tc_err_t tc_hier_bcast(const tc_hier_t *h, tc_shm_comm_t *shm, MPI_Comm priv, void *buf,
                       size_t nbytes, int root);

/** Reduce op->nelem packed elements to @p root. @p send: this rank's
 * contribution; NULL at the root means it is in @p recv (MPI_IN_PLACE).
 * @p recv: the result at the root (ignored elsewhere). A commutative op is
 * required when the hierarchy has more than one level (the caller checks). */
tc_err_t tc_hier_reduce(tc_hier_t *h, tc_shm_comm_t *shm, MPI_Comm priv, const void *send,
                        void *recv, const tc_redop_t *op, int root);

/** Allreduce: every rank receives the same bits in @p recv. @p send NULL:
 * the contribution is in @p recv. Scheme h->allreduce_scheme (RAB or RB). */
tc_err_t tc_hier_allreduce(tc_hier_t *h, tc_shm_comm_t *shm, MPI_Comm priv, const void *send,
                           void *recv, const tc_redop_t *op);

#endif /* TC_HIER_HIER_COLL_H */
