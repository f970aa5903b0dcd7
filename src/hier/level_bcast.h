/* Per-level broadcast of the hierarchical Bcast (paper 001, "Bcast", Fig. 4).
 *
 * The hierarchical broadcast runs, from the top level down, one broadcast
 * inside each group of the hierarchy. This file provides that group
 * broadcast over point-to-point messages, with one of three algorithms chosen
 * per level:
 *  - FLAT: the root sends to every member (latency-optimal for tiny groups);
 *  - KNOMIAL: k-nomial tree of radix k on indices relative to the root,
 *    largest subtrees served first;
 *  - SCATTER_ALLGATHER (van de Geijn): binomial scatter of nmembers nearly
 *    equal chunks, then a ring allgather (bandwidth-optimal for large
 *    messages). With fewer bytes than members it runs KNOMIAL instead.
 *
 * A group is a list of ranks of @c comm in ascending order; members[0] is the
 * group's leader. The functions use PMPI_* only (the library's PMPI shim
 * replaces MPI_Bcast) and only point-to-point calls, so they never enter a
 * collective of @c comm: only the members call them.
 */
#ifndef TC_HIER_LEVEL_BCAST_H
#define TC_HIER_LEVEL_BCAST_H

#include <mpi.h>
#include <stddef.h>

#include "base/err.h"
#include "base/wait_mpi.h"

typedef enum {
    TC_HIER_BCAST_FLAT,
    TC_HIER_BCAST_KNOMIAL,
    TC_HIER_BCAST_SCATTER_ALLGATHER,
    TC_HIER_BCAST_LAST
} tc_hier_bcast_alg_t;

/** Largest message the group broadcast sends at once: 1 GiB. Longer transfers
 * are split into pieces of at most this size, so byte counts never exceed
 * INT_MAX. */
#define TC_HIER_BCAST_PIECE_MAX ((size_t)1 << 30)

/**
 * Broadcast @p nbytes contiguous bytes at @p buf from members[root_index] to
 * every member of the group.
 *
 * Called by every member with the same arguments except the contents of
 * @p buf and @p my_index; non-members do not call. Messages between the same
 * pair of ranks are matched in order, so consecutive calls may use the same
 * tag. nbytes == 0 or nmembers == 1 returns at once without communication.
 *
 * @param buf        the data at the root; receives it elsewhere
 * @param nbytes     bytes to broadcast (may exceed INT_MAX)
 * @param members    ranks in @p comm, ascending, @p nmembers of them
 * @param nmembers   group size (>= 1)
 * @param my_index   the caller's index in @p members
 * @param root_index index in @p members of the broadcast's root
 * @param alg        algorithm, the same at every member
 * @param k          radix of KNOMIAL (>= 2); ignored by FLAT, and by
 *                   SCATTER_ALLGATHER unless it falls back to KNOMIAL
 *                   (where k < 2 means 2)
 * @param comm       communicator of the ranks (a private one: fixed tags are
 *                   safe)
 * @param tag        tag of every message
 * @param wait       how to wait for a message, and the timeout (base/wait_mpi.h);
 *                   NULL: the MPI's blocking calls
 * @return TC_OK; TC_ERR_ARG for inconsistent arguments (detected
 *         before any message is sent); or the error code of the failing
 *         PMPI call.
 * Thread-safety: as the PMPI point-to-point calls it makes; concurrent calls
 * on the same @p comm and @p tag must not overlap.
 */
tc_err_t tc_hier_bcast_group(void *buf, size_t nbytes, const int *members, int nmembers,
                             int my_index, int root_index, tc_hier_bcast_alg_t alg, int k,
                             MPI_Comm comm, int tag, const tc_wait_info_t *wait);

/** The group checks of tc_hier_bcast_group and tc_hier_reduce_group, local (no
 * message): the caller is members[my_index] (0 <= my_index < nmembers, checked by
 * the caller), and the @p nmembers members are ascending ranks of @p comm.
 * @return TC_OK; TC_ERR_ARG; or the error of PMPI_Comm_size/_rank. */
tc_err_t tc_hier_members_check(const int *members, int nmembers, int my_index, MPI_Comm comm);

/** Name of @p alg as accepted by tc_hier_bcast_alg_parse ("flat", "knomial",
 * "scatter_allgather"); "?" for a value out of range. */
const char *tc_hier_bcast_alg_name(tc_hier_bcast_alg_t alg);

/** Parse an algorithm name (case-insensitive; "scatter-allgather" is also
 * accepted). @return TC_OK and sets @p *alg on success, TC_ERR_PARSE (and leaves @p *alg
 * unchanged) for an unknown or NULL word. */
tc_err_t tc_hier_bcast_alg_parse(const char *word, tc_hier_bcast_alg_t *alg);

/** Tests only: set the largest piece sent at once (1 <= bytes <=
 * TC_HIER_BCAST_PIECE_MAX; 0 restores the default) so the splitting of long
 * transfers can be exercised with small buffers. Process-global, not
 * thread-safe, and every rank must use the same value. @return the previous
 * value. */
size_t tc_hier_bcast_piece_max_set(size_t bytes);

/** The largest piece sent at once by the per-level algorithms (broadcast and
 * reduction share it): TC_HIER_BCAST_PIECE_MAX unless a test changed it. */
size_t tc_hier_piece_max(void);

#endif /* TC_HIER_LEVEL_BCAST_H */
