/* Message-based barriers (paper 003) among a set of processes of a
 * communicator, with zero-byte point-to-point messages (PMPI only).
 *
 * The set is given as a member list, so the same code serves a whole
 * communicator and a hierarchy level's group (e.g. the leaders of the
 * shared-memory groups): members[i] is the communicator rank of member i,
 * NULL meaning members[i] = i for i < n. Every member calls with the same
 * alg, members, n, arity and tag; @p me is the caller's index in members.
 * All messages of one call use @p tag on @p comm (the context's private
 * communicator), so barriers and other collectives there do not mix;
 * successive barriers on the same tag are ordered by MPI's non-overtaking
 * rule and by each algorithm's structure.
 *
 * Correct for every n >= 1 (n = 1 returns at once), not only powers of two.
 * Returns TC_OK, TC_ERR_ARG for bad arguments (before any message),
 * TC_ERR_NOMEM, or the MPI error code of the failed call. */
#ifndef TC_BARRIER_MSG_BARRIER_H
#define TC_BARRIER_MSG_BARRIER_H

#include <mpi.h>

#include "barrier.h"
#include "base/err.h"
#include "base/wait_mpi.h"

/* @p arity: children per node for TC_BARRIER_TREE (>= 2; ignored by the
 * others). @p wait: how to wait for a message, and the timeout
 * (base/wait_mpi.h); NULL: the MPI's blocking calls. */
tc_err_t tc_msg_barrier(tc_barrier_alg_t alg, MPI_Comm comm, const int *members, int n, int me,
                        int arity, int tag, const tc_wait_info_t *wait);

#endif /* TC_BARRIER_MSG_BARRIER_H */
