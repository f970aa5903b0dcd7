/* Hierarchical Gather(v) and Scatter(v) over the groups of a communicator's
 * hierarchy (hier.h): one gather (scatter) inside each group, through the
 * segment for the group it serves, point-to-point messages elsewhere.
 *
 * Any root, on the Reduce's schedule (hier_coll.c): Gather runs the groups
 * whose unit does not contain the root bottom-up, each to its leader, which
 * then holds the blocks of its whole unit; then the root's chain top-down,
 * each group to the member representing the root's unit (its "collector"),
 * ending at the root itself. In a chain group the leader, when it is not the
 * collector, hands on everything it collected above (the blocks outside the
 * group's unit) with its own unit's. Scatter is the mirror: the chain
 * bottom-up from the root, then the other groups top-down from their
 * leaders.
 *
 * A process's blocks travel as one stream: the blocks of the ranks it
 * holds, in ascending rank order, so block order is right for any placement
 * (round-robin, split communicators). Both ends of every transfer derive the
 * rank list from the group's owner map. Block sizes: a Gather's and
 * Scatter's are known everywhere; for the v-variants only the root knows
 * them, so a transfer whose receiver is not the root carries the sizes of
 * its blocks first (a sizes message, or a sizes round through the segment),
 * and a segment's largest stream (which every member must know) is
 * broadcast by the group's root. No decision depends on anything a process
 * does not know.
 *
 * Every rank of the communicator calls with the same root, v and (Gather,
 * Scatter) block size. Returns TC_OK, the code of a failing MPI call, or
 * TC_ERR_NOMEM (a process failing an allocation after the others started
 * returns it; the others may then wait, as for a process that skips the
 * call).
 */
#ifndef TC_HIER_LEVEL_GATHER_H
#define TC_HIER_LEVEL_GATHER_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "hier.h"
#include "shm/segment.h"

/* The user's blocks, as byte streams. At the root block y is rank y's place
 * in the receive (Gather) or send (Scatter) buffer, any y but the root's
 * own; elsewhere only the process's own block (y == its rank). */
typedef struct tc_hier_ga_io {
    /* Bytes [off, off + n) of block y -> dst. */
    void (*read)(void *state, int y, size_t off, char *dst, size_t n);
    /* src -> bytes [off, off + n) of block y; for one y, increasing off,
     * off 0 starting over. */
    void (*write)(void *state, int y, size_t off, const char *src, size_t n);
    /* Block y's bytes in one piece, or NULL (not contiguous). */
    char *(*addr)(void *state, int y);
    void *state;
} tc_hier_ga_io_t;

/* An io for a process whose buffers could not be prepared: it still takes
 * part (the others are in the collective already), with zeros out and
 * nothing in. */
void tc_hier_ga_read_zeros(void *state, int y, size_t off, char *dst, size_t n);
void tc_hier_ga_write_nothing(void *state, int y, size_t off, const char *src, size_t n);
char *tc_hier_ga_addr_none(void *state, int y);

/* One call's sizes: @p bytes (the root of a v-variant: every rank's block,
 * p entries; NULL otherwise), @p mine this process's block, @p v whether
 * non-roots know only their own block. For a Gather or Scatter every block
 * has @p mine bytes. */
typedef struct tc_hier_ga_sizes {
    const size_t *bytes;
    size_t mine;
    bool v;
} tc_hier_ga_sizes_t;

/** Gather every block to @p root (a rank of @p priv). The root's own block
 * is the caller's (placed or not, MPI_IN_PLACE). @p shm serves the group
 * marked shm (NULL if none). */
tc_err_t tc_hier_gather(const tc_hier_t *h, tc_shm_comm_t *shm, MPI_Comm priv,
                        const tc_hier_ga_sizes_t *sz, int root, const tc_hier_ga_io_t *io);

/** Scatter block y from @p root to rank y. The root's own block is the
 * caller's. */
tc_err_t tc_hier_scatter(const tc_hier_t *h, tc_shm_comm_t *shm, MPI_Comm priv,
                         const tc_hier_ga_sizes_t *sz, int root, const tc_hier_ga_io_t *io);

#endif /* TC_HIER_LEVEL_GATHER_H */
