/* The hierarchy of one communicator (paper 001), built once when its context
 * is created and read-only afterwards: this rank's groups bottom-up, the
 * algorithm each group runs, and which group (if any) is served by the
 * shared-memory segment.
 *
 * Construction (collective over the context's private communicator):
 *  1. locality of this process: a row of TC_LOCALITY_FILE (by rank in
 *     MPI_COMM_WORLD) if set; otherwise hwloc (binding -> core .. package,
 *     masked by the levels that nest on this machine; unbound -> below-node
 *     levels unknown, warned once), node id = lowest MPI_COMM_WORLD rank on
 *     this node (MPI_COMM_TYPE_SHARED), switches from
 *     TC_NETWORK_TOPOLOGY_FILE by processor name (a bad file: message with
 *     file:line, no switch levels);
 *  2. PMPI_Allgather of the vectors; rank 0's settings (TC_HIER_LEVELS, the
 *     per-level algorithm lists, TC_HIER_SHM_LEVEL, ...) are broadcast and
 *     used by every rank (a rank whose own settings differ says so at
 *     verbosity >= 1), so every rank builds the same hierarchy;
 *  3. the shared-memory level: the highest enabled intra-node level up to
 *     "node" (TC_HIER_SHM_LEVEL=auto) whose units lie within one real node;
 *     the levels below it are dropped from the mask, so its groups hold every
 *     rank of their unit; one segment per such group (created by the
 *     context, all-or-nothing over the communicator);
 *  4. tc_hier_groups_build() plus, per group, the owner map used to route
 *     a broadcast from (or a reduction to) any root.
 */
#ifndef TC_HIER_HIER_H
#define TC_HIER_HIER_H

#include <mpi.h>
#include <stddef.h>

#include "hier/groups.h"
#include "hier/level_bcast.h"
#include "hier/level_reduce.h"
#include "hier/locality.h"

/* How TC_Allreduce combines the levels (paper 001). */
typedef enum {
    TC_HIER_ALLREDUCE_RAB, /* ReduceAllreduceBcast: reduce up to the top group, allreduce
                              among its members, broadcast down */
    TC_HIER_ALLREDUCE_RB,  /* ReduceBcast: reduce to rank 0, broadcast from it */
    TC_HIER_ALLREDUCE_SCHEME_LAST
} tc_hier_allreduce_scheme_t;

typedef struct tc_hier_level {
    tc_level_t level;   /* TC_LEVEL_* or TC_HIER_LEVEL_TOP */
    int size;           /* >= 2 */
    const int *members; /* ascending ranks of the communicator; members[0] leads */
    int my_index;       /* this rank's index in members */
    int *owner;         /* [p]: index in members of the member whose subtree (the ranks it
                           represents at this level) holds rank x; -1 when x lies outside
                           this group's unit */
    int shm;            /* served by the segment: its ranks are members[0..size-1] */
    int bcast_auto;     /* choose by message size (TC_HIER_LARGE) */
    tc_hier_bcast_alg_t bcast;
    int bcast_k; /* radix of KNOMIAL */
    int reduce_auto;
    tc_hier_reduce_alg_t reduce;
} tc_hier_level_t;

typedef struct tc_hier {
    int p, rank;
    int nlevels; /* this rank's groups, bottom-up */
    tc_hier_level_t level[TC_HIER_MAX_GROUPS];
    unsigned enabled_mask; /* TC_HIER_LEVELS after agreement */
    unsigned active_mask;  /* levels with a group somewhere (incl. TC_HIER_LEVEL_TOP) */
    unsigned unknown_mask; /* enabled levels skipped: some rank lacks the id */
    int shm_level;         /* the shared-memory level, or -1 */
    int single_shm;        /* the whole communicator is one shared-memory group */
    tc_hier_allreduce_scheme_t allreduce_scheme;
    int allreduce_top_auto;
    tc_hier_allreduce_alg_t allreduce_top;
    size_t large;   /* TC_HIER_LARGE: auto picks scatter_allgather / rsg / ring from here */
    size_t segment; /* TC_HIER_SEGMENT: large messages go level by level in pieces */
    tc_hier_groups_t groups; /* owns the member arrays */
    tc_hier_loc_t *locs;     /* every rank's locality (for reports); p entries */
    /* Temporaries of the hierarchical reductions (hier_coll.c), kept between
     * calls and grown on demand so the call path does not allocate; one
     * collective at a time per communicator (MPI's rule) makes this safe. */
    char *scratch;
    size_t scratch_bytes;
} tc_hier_t;

/* Algorithm a level uses for a message of @p nbytes (resolves "auto"). */
static inline tc_hier_bcast_alg_t tc_hier_level_bcast_alg(const tc_hier_t *h,
                                                          const tc_hier_level_t *l, size_t nbytes)
{
    if (!l->bcast_auto)
        return l->bcast;
    return nbytes >= h->large && l->size > 2 ? TC_HIER_BCAST_SCATTER_ALLGATHER
                                             : TC_HIER_BCAST_KNOMIAL;
}
static inline tc_hier_reduce_alg_t tc_hier_level_reduce_alg(const tc_hier_t *h,
                                                            const tc_hier_level_t *l, size_t nbytes,
                                                            int commutative)
{
    tc_hier_reduce_alg_t a =
        l->reduce_auto
            ? (nbytes >= h->large && l->size > 2 ? TC_HIER_REDUCE_RSG : TC_HIER_REDUCE_BINOMIAL)
            : l->reduce;
    return a == TC_HIER_REDUCE_RSG && !commutative ? TC_HIER_REDUCE_BINOMIAL : a;
}
static inline tc_hier_allreduce_alg_t tc_hier_top_allreduce_alg(const tc_hier_t *h, size_t nbytes,
                                                                int commutative)
{
    tc_hier_allreduce_alg_t a =
        h->allreduce_top_auto
            ? (nbytes >= h->large ? TC_HIER_ALLREDUCE_RING : TC_HIER_ALLREDUCE_RECDBL)
            : h->allreduce_top;
    return a == TC_HIER_ALLREDUCE_RING && !commutative ? TC_HIER_ALLREDUCE_RECDBL : a;
}

#endif /* TC_HIER_HIER_H */
