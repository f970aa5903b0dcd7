/* Block order inside one group of the hierarchy, for the gathering
 * collectives: which ranks each member represents (its subtree: itself and
 * the ranks its lower groups gathered into it, from the group's owner map,
 * hier.h), and the byte stream of a member's blocks in a rank-ordered buffer.
 *
 * The buffer R holds block x (bytes[x] bytes) at prefix[x], back to back in
 * rank order. Member k's stream is the blocks of its ranks in ascending rank
 * order; with contiguous placement (ranks 0..3 on node 0, 4..7 on node 1)
 * each stream is one run of R, with round-robin placement or a split
 * communicator it is scattered over R and copied block by block. Both ends
 * of a transfer compute the same streams from the same owner map (identical
 * on every member of the group), so they agree on every length.
 *
 * Pure (no MPI); for the Gather(v)/Scatter(v) of the hierarchy too.
 */
#ifndef TC_HIER_GROUP_BLOCKS_H
#define TC_HIER_GROUP_BLOCKS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"

typedef struct tc_hier_gblocks {
    int n;           /* members */
    int *ord;        /* the unit's ranks, member by member, ascending within a member */
    int *start;      /* [n + 1]: member k's ranks are ord[start[k] .. start[k + 1]) */
    size_t *len;     /* [n]: bytes of member k's stream */
    size_t *off;     /* [n]: where member k's stream starts when the streams lie back to back
                        in member order */
    bool *contig;    /* [n]: member k's ranks are consecutive: its stream is one run of R */
    bool rank_order; /* the streams back to back are R itself (from its first rank of the
                        unit): every stream contiguous, in member order */
} tc_hier_gblocks_t;

/**
 * The members' streams of a group of @p n members whose owner map is @p owner
 * (p entries: owner[x] = index of the member representing rank x, -1 outside
 * the unit) for blocks of @p bytes[x] bytes.
 * @return TC_OK or TC_ERR_NOMEM (@p g then empty; free it anyway).
 */
tc_err_t tc_hier_gblocks_init(tc_hier_gblocks_t *g, const int *owner, int p, int n,
                              const size_t *bytes);
void tc_hier_gblocks_free(tc_hier_gblocks_t *g);

/** Where member k's stream starts in R when it is one run (contig[k]). */
static inline size_t tc_hier_gblocks_at(const tc_hier_gblocks_t *g, int k, const size_t *prefix)
{
    return g->start[k] < g->start[k + 1] ? prefix[g->ord[g->start[k]]] : 0;
}

/** Bytes [off, off + len) of member @p k's stream: out of R into @p buf
 * (@p to_r false) or from @p buf into R (@p to_r true). */
void tc_hier_gblocks_copy(const tc_hier_gblocks_t *g, int k, char *r, const size_t *prefix,
                          const size_t *bytes, size_t off, char *buf, size_t len, bool to_r);

#endif /* TC_HIER_GROUP_BLOCKS_H */
