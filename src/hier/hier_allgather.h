/* Hierarchical Allgather(v) over the groups of a communicator's hierarchy
 * (hier.h), paper 001's schedule for a gather-everything operation:
 *
 *  1. up: in every group below the top one, the members' blocks go to the
 *     group's leader (its lowest rank): through the segment (shm/allgather.c's
 *     Gather) where the segment serves the group, else point to point (each
 *     member sends its stream, the leader receives them all at once);
 *  2. the top group's members (the leaders of the levels below) exchange what
 *     they gathered: recursive doubling, ring or Bruck (level_allgather.h),
 *     per size class from the model or TC_HIER_ALLGATHER_TOP; the segment's
 *     Allgather if the segment serves the top group;
 *  3. down: every leader broadcasts the whole result in its groups, top-down:
 *     the segment's pipelined Bcast (the members may copy the stream straight
 *     into their receive buffers), or the level's broadcast algorithm.
 *
 * The data are a rank-ordered buffer R: block x (bytes[x] bytes, the same
 * array on every rank) at prefix[x], back to back; prefix[p] is the total.
 * Block order: a member's part in a group is the stream of the blocks of the
 * ranks it represents (group_blocks.h), so ranks that are not contiguous per
 * node (round-robin placement, split communicators) land at their places.
 * Every decision rests on bytes[] and the hierarchy, which every rank has.
 */
#ifndef TC_HIER_HIER_ALLGATHER_H
#define TC_HIER_HIER_ALLGATHER_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "hier.h"
#include "shm/segment.h"

/* Tag on the private communicator (no other traffic uses it). */

/**
 * Scratch of the hierarchy (kept between calls) for an Allgather of
 * @p total bytes: at least 3 * total bytes, of which the first total bytes
 * are free for the caller's R (tc_hier_allgatherv() uses the rest).
 * @return the scratch, or NULL (out of memory).
 */
char *tc_hier_allgather_scratch(tc_hier_t *h, size_t total);

/**
 * Allgatherv over the hierarchy (see above). Every rank of the communicator
 * calls it with the same @p bytes.
 *
 * @param r        R (prefix[p] bytes), this rank's block filled in; every block on
 *                 return unless *delivered
 * @param bytes    block sizes, p entries
 * @param prefix   p + 1 entries: prefix[x] = bytes[0] + ... + bytes[x - 1]; the total
 *                 (prefix[p]) must fit an int
 * @param deliver  NULL, or how a member of a segment group that has no other group
 *                 takes the result: the stream of R (every block in rank order, its own
 *                 included) is handed to deliver->scatter piece by piece instead of
 *                 written to R (*delivered then set)
 * @return TC_OK, TC_ERR_NOMEM, or the code of a failing MPI call.
 */
tc_err_t tc_hier_allgatherv(tc_hier_t *h, tc_shm_comm_t *shm, MPI_Comm priv, char *r,
                            const size_t *bytes, const size_t *prefix,
                            const tc_shm_copier_t *deliver, bool *delivered);

#endif /* TC_HIER_HIER_ALLGATHER_H */
