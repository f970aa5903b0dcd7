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
#include <stdint.h>

#include "base/wait_mpi.h"
#include "groups.h"
#include "level_allgather.h"
#include "level_bcast.h"
#include "level_reduce.h"
#include "locality.h"

/* How TC_Allreduce combines the levels (paper 001). */
typedef enum {
    TC_HIER_ALLREDUCE_RAB, /* ReduceAllreduceBcast: reduce up to the top group, allreduce
                              among its members, broadcast down */
    TC_HIER_ALLREDUCE_RB,  /* ReduceBcast: reduce to rank 0, broadcast from it */
    TC_HIER_ALLREDUCE_SCHEME_LAST
} tc_hier_allreduce_scheme_t;

/* Message-size classes of the decision tables: class 0 is 0 bytes, class c
 * (1 <= c < TC_HIER_SIZE_CLASSES - 1) is [2^(c-1), 2^c) bytes, the last class
 * everything from 2^40 bytes. A class's algorithm is the one chosen for its
 * smallest size, 2^(c-1) bytes. */
#define TC_HIER_SIZE_CLASSES 42

/* The class of @p nbytes: its bit length, capped. */
static inline int tc_hier_size_class(size_t nbytes)
{
    if (nbytes == 0)
        return 0;
    int c = 64 - __builtin_clzll((unsigned long long)nbytes);
    return c < TC_HIER_SIZE_CLASSES ? c : TC_HIER_SIZE_CLASSES - 1;
}

/* Why a decision-table entry holds its algorithm (reports only). */
typedef enum {
    TC_HIER_WHY_RULE,     /* the TC_HIER_LARGE threshold rule (TC_HIER_MODEL=0, or no table
                             was computed: a hierarchy built without a context) */
    TC_HIER_WHY_OVERRIDE, /* the level is named in TC_HIER_BCAST / TC_HIER_REDUCE /
                             TC_HIER_ALLREDUCE_TOP */
    TC_HIER_WHY_FILE,     /* an entry of TC_TUNING_FILE */
    TC_HIER_WHY_MODEL,    /* argmin of the LogGP costs (core/select.c) */
    TC_HIER_WHY_LAST
} tc_hier_why_t;

typedef struct tc_hier_level {
    tc_level_t level;   /* TC_LEVEL_* or TC_HIER_LEVEL_TOP */
    int size;           /* >= 2 */
    const int *members; /* ascending ranks of the communicator; members[0] leads */
    int my_index;       /* this rank's index in members */
    int *owner;         /* [p]: index in members of the member whose subtree (the ranks it
                           represents at this level) holds rank x; -1 when x lies outside
                           this group's unit */
    int shm;            /* served by the segment: its ranks are members[0..size-1] */
    /* The explicit settings (TC_HIER_BCAST / TC_HIER_REDUCE) of this level. */
    int bcast_auto; /* not named: the tables below decide by size */
    tc_hier_bcast_alg_t bcast;
    int bcast_k; /* radix of KNOMIAL when named; else the default radix 2 */
    int reduce_auto;
    tc_hier_reduce_alg_t reduce;
    /* Decision tables by size class (tc_hier_size_class), identical on every
     * rank: filled from the explicit setting or the TC_HIER_LARGE rule when
     * the hierarchy is built, then (core/select.c, at context creation) from
     * TC_TUNING_FILE and the LogGP model for the levels not named. */
    int model_level; /* LogP parameters the model used: a model/logp.h level */
    uint8_t bcast_tab[TC_HIER_SIZE_CLASSES];     /* tc_hier_bcast_alg_t */
    uint16_t bcast_k_tab[TC_HIER_SIZE_CLASSES];  /* radix (knomial, scatter_allgather's
                                                    fallback below P bytes) */
    uint8_t reduce_tab[TC_HIER_SIZE_CLASSES];    /* commutative op */
    uint8_t reduce_nc_tab[TC_HIER_SIZE_CLASSES]; /* non-commutative op: never RSG */
    uint8_t bcast_why[TC_HIER_SIZE_CLASSES];     /* tc_hier_why_t */
    uint8_t reduce_why[TC_HIER_SIZE_CLASSES];    /* tc_hier_why_t */
    uint8_t reduce_nc_why[TC_HIER_SIZE_CLASSES]; /* tc_hier_why_t */
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
    int allreduce_top_auto; /* TC_HIER_ALLREDUCE_TOP=auto: the table decides */
    tc_hier_allreduce_alg_t allreduce_top;
    /* The top group's allreduce by size class (commutative op; a
     * non-commutative one always runs RECDBL). */
    uint8_t allreduce_tab[TC_HIER_SIZE_CLASSES]; /* tc_hier_allreduce_alg_t */
    uint8_t allreduce_why[TC_HIER_SIZE_CLASSES]; /* tc_hier_why_t */
    /* The top group's exchange of the hierarchical Allgather(v), by size
     * class of the whole result (hier_allgather.h); TC_HIER_ALLGATHER_TOP. */
    int allgather_top_auto;
    tc_hier_allgather_alg_t allgather_top;
    uint8_t allgather_tab[TC_HIER_SIZE_CLASSES]; /* tc_hier_allgather_alg_t */
    uint8_t allgather_why[TC_HIER_SIZE_CLASSES]; /* tc_hier_why_t */
    int model;               /* the tables' auto entries come from the model (else the rule) */
    double gamma;            /* reduction cost the model used, us per byte */
    size_t large;            /* TC_HIER_LARGE: threshold of the rule (TC_HIER_MODEL=0) */
    size_t segment;          /* TC_HIER_SEGMENT: large messages go level by level in pieces */
    size_t a2a_aggregate;    /* TC_HIER_A2A_AGGREGATE: Alltoall blocks aggregated per node */
    tc_hier_groups_t groups; /* owns the member arrays */
    tc_hier_loc_t *locs;     /* every rank's locality (for reports); p entries */
    /* Temporaries of the hierarchical reductions (hier_coll.c), kept between
     * calls and grown on demand so the call path does not allocate; one
     * collective at a time per communicator (MPI's rule) makes this safe. */
    char *scratch;
    size_t scratch_bytes;
    /* How the message levels wait (base/wait_mpi.h): the context's, NULL for
     * a hierarchy built without one (the MPI's blocking calls). */
    const tc_wait_info_t *msg_wait;
} tc_hier_t;

/* The level of the top group: the highest active one (a switch level when one
 * switch holds every node), -1 if none. */
static inline int tc_hier_top_level(const tc_hier_t *h)
{
    int top = -1;
    for (int l = 0; l <= TC_HIER_LEVEL_TOP; l++)
        if (h->active_mask & (1u << l))
            top = l;
    return top;
}

/* Algorithm a level uses for a message of @p nbytes: one table lookup. */
static inline tc_hier_bcast_alg_t tc_hier_level_bcast_alg(const tc_hier_t *h,
                                                          const tc_hier_level_t *l, size_t nbytes)
{
    (void)h;
    return (tc_hier_bcast_alg_t)l->bcast_tab[tc_hier_size_class(nbytes)];
}
/* Radix of the level's k-nomial broadcast (and of scatter_allgather's
 * k-nomial fallback) for a message of @p nbytes. */
static inline int tc_hier_level_bcast_k(const tc_hier_t *h, const tc_hier_level_t *l, size_t nbytes)
{
    (void)h;
    return l->bcast_k_tab[tc_hier_size_class(nbytes)];
}
/* A non-commutative op never gets RSG (it splits the vector by member
 * index); RSG with fewer elements than members runs binomial inside
 * tc_hier_reduce_group(). */
static inline tc_hier_reduce_alg_t tc_hier_level_reduce_alg(const tc_hier_t *h,
                                                            const tc_hier_level_t *l, size_t nbytes,
                                                            int commutative)
{
    (void)h;
    const int c = tc_hier_size_class(nbytes);
    return (tc_hier_reduce_alg_t)(commutative ? l->reduce_tab[c] : l->reduce_nc_tab[c]);
}
static inline tc_hier_allreduce_alg_t tc_hier_top_allreduce_alg(const tc_hier_t *h, size_t nbytes,
                                                                int commutative)
{
    tc_hier_allreduce_alg_t a =
        (tc_hier_allreduce_alg_t)h->allreduce_tab[tc_hier_size_class(nbytes)];
    return a == TC_HIER_ALLREDUCE_RING && !commutative ? TC_HIER_ALLREDUCE_RECDBL : a;
}

/* The top group's Allgather exchange for a result of @p nbytes in all. */
static inline tc_hier_allgather_alg_t tc_hier_top_allgather_alg(const tc_hier_t *h, size_t nbytes)
{
    return (tc_hier_allgather_alg_t)h->allgather_tab[tc_hier_size_class(nbytes)];
}

#endif /* TC_HIER_HIER_H */
