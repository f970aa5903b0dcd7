/* Per-level reduction of the hierarchical Reduce and Allreduce (paper 001,
 * "Reduce", Fig. 3; "Allreduce"): one reduction inside one group of the
 * hierarchy over point-to-point messages on the context's private
 * communicator.
 *
 * Reduce to one member, chosen per level:
 *  - FLAT: every member sends to the root, which combines in member order;
 *  - BINOMIAL: binomial tree; for a commutative op rotated to end at the root,
 *    for a non-commutative one built on indices 0..n-1 (contiguous index
 *    ranges per subtree, so member order holds) with one extra message from
 *    member 0 to the root;
 *  - RSG (Rabenseifner): reduce-scatter by recursive halving, then a binomial
 *    gather of the pieces to the root (bandwidth-optimal for large messages;
 *    with fewer elements than members it runs BINOMIAL).
 * Allreduce among the members (the top level of ReduceAllreduceBcast):
 *  - RECDBL: recursive doubling; with a non-power-of-two member count the
 *    extra members first fold into a partner and get the result back at the end;
 *  - RING: ring reduce-scatter then ring allgather (large messages).
 *
 * Data are packed element streams (see base/redop.h): @p nelem elements of
 * op->elem bytes, combined with tc_redop_apply(). Every combination passes
 * the partial of the lower member indices as the LEFT operand (`in`), so
 * FLAT, BINOMIAL and RECDBL give the member-ordered result (non-commutative
 * ops are fine for them); RSG and RING need a commutative op (the functions
 * return TC_ERR_OP otherwise, before any message). The allreduce functions
 * give bitwise-identical results at every member: each element of the result
 * is computed by one expression evaluated the same way everywhere (RECDBL:
 * both partners combine (lower, higher) in that order; RING: each block is
 * reduced once and then copied).
 *
 * Members are ranks of @p comm in ascending order, members[0] the leader.
 * Only members call; PMPI_* point-to-point only (never a collective on
 * @p comm). Consecutive calls may reuse @p tag (messages between a pair are
 * matched in order). Messages longer than TC_HIER_BCAST_PIECE_MAX bytes are
 * split so counts stay below INT_MAX (tc_hier_piece_max(), shared with the
 * group broadcast).
 */
#ifndef TC_HIER_LEVEL_REDUCE_H
#define TC_HIER_LEVEL_REDUCE_H

#include <mpi.h>
#include <stddef.h>

#include "base/err.h"
#include "base/redop.h"
#include "base/wait_mpi.h"

typedef enum {
    TC_HIER_REDUCE_FLAT,
    TC_HIER_REDUCE_BINOMIAL,
    TC_HIER_REDUCE_RSG,
    TC_HIER_REDUCE_LAST
} tc_hier_reduce_alg_t;

typedef enum {
    TC_HIER_ALLREDUCE_RECDBL,
    TC_HIER_ALLREDUCE_RING,
    TC_HIER_ALLREDUCE_LAST
} tc_hier_allreduce_alg_t;

/**
 * Reduce the members' contributions to members[root_index].
 *
 * @param buf        in: this member's contribution (nelem packed elements);
 *                   out at the root: the reduction over all members in member
 *                   order; elsewhere: clobbered (used as scratch)
 * @param scratch    op->elem * nelem bytes of scratch, not overlapping @p buf
 * @param nelem      elements (same at every member)
 * @param op         the operand description (same op and elem everywhere)
 * @param members    ascending ranks of @p comm, @p nmembers of them
 * @param my_index   the caller's index in @p members
 * @param root_index index of the root in @p members
 * @param alg        algorithm, the same at every member
 * @param comm       the communicator of the ranks (a private one)
 * @param tag        tag of every message
 * @param wait       how to wait for a message, and the timeout (base/wait_mpi.h);
 *                   NULL: the MPI's blocking calls
 * @return TC_OK; TC_ERR_ARG / TC_ERR_OP for bad arguments (before any
 *         message); or the failing PMPI call's error code.
 * nelem == 0 or nmembers == 1 returns at once.
 */
tc_err_t tc_hier_reduce_group(void *buf, void *scratch, size_t nelem, const tc_redop_t *op,
                              const int *members, int nmembers, int my_index, int root_index,
                              tc_hier_reduce_alg_t alg, MPI_Comm comm, int tag,
                              const tc_wait_info_t *wait);

/**
 * Allreduce among the members: on return @p buf holds, at every member, the
 * same bits: the reduction over all members' contributions.
 * Arguments as tc_hier_reduce_group() (no root).
 */
tc_err_t tc_hier_allreduce_group(void *buf, void *scratch, size_t nelem, const tc_redop_t *op,
                                 const int *members, int nmembers, int my_index,
                                 tc_hier_allreduce_alg_t alg, MPI_Comm comm, int tag,
                                 const tc_wait_info_t *wait);

/** Names as accepted by the parsers: "flat", "binomial", "rsg"; "recdbl",
 * "ring"; "?" when out of range. */
const char *tc_hier_reduce_alg_name(tc_hier_reduce_alg_t alg);
const char *tc_hier_allreduce_alg_name(tc_hier_allreduce_alg_t alg);
/** Parse a name (case-insensitive). @return TC_OK and sets *alg, or TC_ERR_PARSE. */
tc_err_t tc_hier_reduce_alg_parse(const char *word, tc_hier_reduce_alg_t *alg);
tc_err_t tc_hier_allreduce_alg_parse(const char *word, tc_hier_allreduce_alg_t *alg);

#endif /* TC_HIER_LEVEL_REDUCE_H */
