/* Group hierarchy (paper 001, "Groups"): which processes a rank exchanges data
 * with at each level of the machine, built bottom-up from every process's
 * locality vector.
 *
 * The builder is a pure function of the gathered vectors: every rank calls it
 * with the same @c locs, @c p and @c mask and so derives the same hierarchy
 * (only the @c me-specific part of the result differs). No MPI, no hwloc.
 *
 * Rules (paper 001, with the additions marked "ours"):
 *  - Enabled levels (@c mask) are considered bottom-up. A level where any
 *    process has TC_LOC_UNKNOWN is skipped for everyone (ours: the paper stops
 *    when processes are unbound; we build the hierarchy from the levels that are
 *    known) and reported in @c unknown_mask.
 *  - A unit at level l is named by the id at l together with the ids of every
 *    usable level above l that is enabled, and (ours) of every usable level from
 *    TC_LEVEL_NODE up even when disabled: node and switch levels always nest, so
 *    switching "node" off must not merge NUMA 0 of two different nodes, while a
 *    disabled intra-node level (which may not nest, e.g. several L3 per NUMA
 *    node) does not split the levels below it.
 *  - Participants start as all p ranks. At each level the participants of one
 *    unit form a group led by its lowest rank. A level is active when at least
 *    one of its groups has two or more members; an inactive level changes
 *    nothing. After an active level only the leaders participate further; a
 *    participant alone in its unit stays a participant without a group.
 *  - Top (ours): if more than one participant remains after the last level,
 *    they form one more group at level TC_HIER_LEVEL_TOP, so the groups always
 *    make a spanning tree rooted at rank 0 (e.g. several nodes, no network
 *    file; or mask 0: one flat group of everyone).
 */
#ifndef TC_HIER_GROUPS_H
#define TC_HIER_GROUPS_H

#include <stddef.h>

#include "base/err.h"

#include "locality.h"

/* Level value of the implicit top group of all remaining participants; its
 * bit in tc_hier_groups_t.active_mask is (1u << TC_HIER_LEVEL_TOP). */
#define TC_HIER_LEVEL_TOP TC_LEVEL_LAST

/* Every enabled level plus the top group. */
#define TC_HIER_MAX_GROUPS (TC_LEVEL_LAST + 1)

/* Bits of the levels in TC_LEVEL_CORE..TC_LEVEL_SWITCH4. */
#define TC_HIER_LEVELS_ALL ((1u << TC_LEVEL_LAST) - 1u)

typedef struct tc_hier_group {
    tc_level_t level; /* TC_LEVEL_* or TC_HIER_LEVEL_TOP */
    int size;         /* >= 2 */
    int *members;     /* ascending comm ranks; members[0] is the leader */
    int my_index;     /* position of this rank in members (0: leader) */
    int *owner;       /* tc_hier_groups_build_owners only (else NULL): p entries; owner[x] is
                         the index in members of the member that represents rank x at this
                         level (x itself, or the leader x's lower groups chain up to), or -1
                         when x lies outside this group's unit */
} tc_hier_group_t;

typedef struct tc_hier_groups {
    /* This rank's groups, bottom-up: only groups of size >= 2 it belongs to.
     * group[i].my_index != 0 can only hold for the last one (a non-leader
     * stops participating); the groups above it are its ancestors' business. */
    int nlevels;
    tc_hier_group_t group[TC_HIER_MAX_GROUPS];
    unsigned active_mask;  /* levels active globally (same on every rank), incl. TOP */
    unsigned unknown_mask; /* enabled levels skipped because some rank lacks the id */
} tc_hier_groups_t;

/**
 * Build the group hierarchy and return the groups rank @p me belongs to.
 *
 * @param locs  locality of every rank, indexed by comm rank (p entries)
 * @param p     number of ranks (>= 1)
 * @param me    this rank (0 <= me < p)
 * @param mask  enabled levels: bit l for level l (see tc_hier_levels_parse);
 *              bits at or above TC_LEVEL_LAST are ignored
 * @param out   filled on success; release with tc_hier_groups_free(). On
 *              failure it is left empty (safe to free).
 * @return TC_OK, TC_ERR_ARG for bad arguments, TC_ERR_NOMEM.
 *
 * Deterministic and identical on every rank; O(L p log p) comparisons (of at
 * most L ids each) for L levels, O(p) extra memory. Thread-safe (no shared
 * state).
 */
tc_err_t tc_hier_groups_build(const tc_hier_loc_t *locs, int p, int me, unsigned mask,
                              tc_hier_groups_t *out);

/**
 * tc_hier_groups_build() plus, for each of this rank's groups, the owner map
 * (tc_hier_group_t.owner): how a message from (or a contribution of) any rank
 * x enters the group. The member members[owner[x]] is the one whose subtree
 * (the ranks it represents after the levels below) contains x; following the
 * owners from the top group down reaches x through exactly one member per
 * level. This routes a broadcast from any root and a reduction to any root.
 *
 * Same arguments, result and errors as tc_hier_groups_build(); O(L p) extra
 * time and p ints per group of this rank.
 */
tc_err_t tc_hier_groups_build_owners(const tc_hier_loc_t *locs, int p, int me, unsigned mask,
                                     tc_hier_groups_t *out);

/** Free the member and owner arrays of @p g and reset it to empty. NULL is allowed. */
void tc_hier_groups_free(tc_hier_groups_t *g);

/**
 * Parse a level list (the value of TC_HIER_LEVELS).
 *
 * Words are separated by ',' or '-' and are case-insensitive:
 *  - names: core, l2, l3, numa, package (socket), node, switch1..switch4
 *    (sw1..sw4; "switch" = switch1), "all" (every level), "none" (no level);
 *  - paper 001's codes: CR (core), L2, L3, NM (numa), SK (package), ND (node),
 *    SW (every switch level), e.g. "NM-SK-ND-SW" or "NM-ND-SW".
 * Surrounding blanks around a word are ignored; an empty word is an error.
 *
 * @param text    the list
 * @param mask    on success, bit l set for each level l named
 * @param err     on failure, a message naming the bad word and the accepted
 *                words (may be NULL)
 * @param errlen  size of @p err
 * @return TC_OK, or TC_ERR_PARSE on a bad list (@p mask untouched; @p err says why).
 */
tc_err_t tc_hier_levels_parse(const char *text, unsigned *mask, char *err, size_t errlen);

#endif /* TC_HIER_GROUPS_H */
