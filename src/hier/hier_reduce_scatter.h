/* Hierarchical Reduce_scatter (issue 19) over the groups of a communicator's
 * hierarchy (hier.h), for a commutative operation:
 *
 *  1. up: the whole message is reduced in each group below the top one to
 *     its leader (the segment's reduction in the group it serves, the
 *     level's point-to-point algorithm elsewhere), as TC_Reduce does;
 *  2. top: the members of the top group, each holding its unit's partial
 *     result, reduce-scatter it: member k ends with the blocks of the ranks
 *     its subtree holds (owner[x] == k), the others' partials for them
 *     folded in (pairwise exchange: n - 1 steps, one Sendrecv each);
 *  3. down: each leader scatters its unit's blocks to its group's members,
 *     each member receiving the blocks of the ranks it represents, level by
 *     level to the bottom (through the segment in the group it serves).
 *
 * Ranks need not be contiguous per group: a leader holds its unit's blocks
 * in ascending rank order, and before scattering (or exchanging, at the top)
 * it regroups them by member (each member's blocks in ascending rank order
 * again, which is that member's own layout one level down); when each
 * member's ranks are contiguous the regrouping is the identity and nothing
 * is copied. Every length derives from the counts and the owner maps, which
 * every process has, so both ends of every transfer agree.
 *
 * Every rank of the communicator calls with the same counts and op.
 * @p send: this rank's whole message (op->nelem packed elements), NULL when
 * it is in @p recv (in place: the result then overwrites its start).
 * @p recv: this rank's block, counts[rank * stride] * scale packed elements.
 * The caller checks: op commutative, an element no larger than a reduce slot
 * of the segment (when one serves a group).
 * Returns TC_OK, TC_ERR_NOMEM, or the failing MPI call's code.
 */
#ifndef TC_HIER_HIER_REDUCE_SCATTER_H
#define TC_HIER_HIER_REDUCE_SCATTER_H

#include <mpi.h>
#include <stddef.h>

#include "base/redop.h"
#include "hier.h"
#include "shm/segment.h"

tc_err_t tc_hier_reduce_scatter(tc_hier_t *h, tc_shm_comm_t *shm, MPI_Comm priv, const void *send,
                                void *recv, const int *counts, int stride, size_t scale,
                                const tc_redop_t *op);

#endif /* TC_HIER_HIER_REDUCE_SCATTER_H */
