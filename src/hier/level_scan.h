/* Exclusive scan among the members of one group over point-to-point
 * messages on the context's private communicator: the step of the
 * hierarchical Scan and Exscan (core/scan.c) that combines the node totals
 * among one process per node.
 *
 * Recursive doubling (as MPICH's Exscan): in round j each member exchanges
 * its partial (the reduction over the aligned block of 2^j members holding
 * it) with the member whose index differs in bit j, if there is one. The
 * partial of the lower block is always the LEFT operand (tc_redop_apply), so
 * the result is the member-ordered prefix and non-commutative operations are
 * correct. ceil(log2 n) rounds of one message each way.
 *
 * Data are packed element streams (base/redop.h). Members are ranks of
 * @p comm in ascending order; only members call; PMPI_* point-to-point only.
 * Messages longer than 1 GiB are split so counts stay below INT_MAX.
 */
#ifndef TC_HIER_LEVEL_SCAN_H
#define TC_HIER_LEVEL_SCAN_H

#include <mpi.h>
#include <stddef.h>

#include "base/err.h"
#include "base/redop.h"
#include "base/wait_mpi.h"

/**
 * @param total    in: this member's contribution (nelem packed elements)
 * @param result   out at my_index > 0: contributions of members 0 .. my_index-1
 *                 combined in member order; not written at member 0
 * @param scratch  2 * op->elem * nelem bytes, overlapping neither buffer
 * @return TC_OK or the failing PMPI call's error code.
 */
tc_err_t tc_hier_exscan_group(const void *total, void *result, void *scratch, size_t nelem,
                              const tc_redop_t *op, const int *members, int nmembers, int my_index,
                              MPI_Comm comm, int tag, const tc_wait_info_t *wait);

#endif /* TC_HIER_LEVEL_SCAN_H */
