/* Per-level exchange of the hierarchical Allgather(v): one Allgatherv among
 * the members of one group (the top group: the leaders of the levels below)
 * over point-to-point messages on the context's private communicator.
 *
 * Member k contributes a piece of len[k] bytes (possibly 0); the pieces lie
 * back to back in member order in one buffer (off[k + 1] = off[k] + len[k]).
 * On entry the buffer holds this member's own piece, on return every piece.
 * Algorithms, chosen per size class by the model (core/select.c) or
 * TC_HIER_ALLGATHER_TOP:
 *  - RECDBL: recursive doubling, log2 n rounds, each exchanging everything
 *    gathered so far with the partner at distance 2^r (the pieces of an
 *    aligned index range, so one contiguous run of bytes); with a member
 *    count that is not a power of two it runs BRUCK;
 *  - RING: n - 1 rounds, each passing one piece to the next member;
 *  - BRUCK: ceil(log2 n) rounds for any n; member i sends what it holds to
 *    i - 2^r and receives from i + 2^r, its pieces held rotated (its own
 *    first) in a temporary of the total size, rotated into place at the end
 *    (two copies).
 * The message sizes come from len[], identical on every member, so both ends
 * of every message agree on its length; a zero-length message is still sent
 * (it keeps the rounds simple). Members are ascending ranks of @p comm;
 * PMPI_* point-to-point only. The total must fit an int (the caller's rule).
 */
#ifndef TC_HIER_LEVEL_ALLGATHER_H
#define TC_HIER_LEVEL_ALLGATHER_H

#include <mpi.h>
#include <stddef.h>

#include "base/err.h"
#include "base/wait_mpi.h"

typedef enum {
    TC_HIER_ALLGATHER_RECDBL,
    TC_HIER_ALLGATHER_RING,
    TC_HIER_ALLGATHER_BRUCK,
    TC_HIER_ALLGATHER_LAST
} tc_hier_allgather_alg_t;

/** The algorithm's name ("recdbl", "ring", "bruck"; "?" when out of range). */
const char *tc_hier_allgather_alg_name(tc_hier_allgather_alg_t alg);

/** The algorithm that runs for @p alg among @p n members (RECDBL on a
 * non-power-of-two count runs BRUCK). */
tc_hier_allgather_alg_t tc_hier_allgather_alg_effective(tc_hier_allgather_alg_t alg, int n);

/**
 * Allgatherv among the @p n members (see above).
 *
 * @param buf       the pieces back to back, this member's filled in
 * @param off,len   piece k: len[k] bytes at buf + off[k] (n entries each)
 * @param members   ascending ranks of @p comm; this rank is members[my_index]
 * @param alg       the algorithm
 * @param tmp       BRUCK: scratch of off[n-1] + len[n-1] bytes (else unused, may be NULL)
 * @param comm,tag  where the messages go
 * @param wait      how to wait for a message (base/wait_mpi.h); NULL: blocking calls
 * @return TC_OK or the code of a failing MPI call.
 */
tc_err_t tc_hier_allgatherv_group(char *buf, const size_t *off, const size_t *len,
                                  const int *members, int n, int my_index,
                                  tc_hier_allgather_alg_t alg, char *tmp, MPI_Comm comm, int tag,
                                  const tc_wait_info_t *wait);

#endif /* TC_HIER_LEVEL_ALLGATHER_H */
