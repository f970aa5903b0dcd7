/* Building a communicator's hierarchy (paper 001; the design is in hier.h):
 * the settings it follows (TC_HIER*, from the tunables table), the parser of
 * the per-level algorithm lists, and the collective construction itself.
 *
 * Per process, once: hwloc's self locality and the levels that nest on this
 * machine, the processor name, the network file and the locality file are
 * loaded at the first construction and cached (none of it is on a
 * collective's call path).
 */
#ifndef TC_HIER_HIER_BUILD_H
#define TC_HIER_HIER_BUILD_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "hier.h"

/* One level's algorithm from TC_HIER_BCAST / TC_HIER_REDUCE. */
typedef struct tc_hier_alg_choice {
    int32_t is_auto; /* not named: chosen per size (tuning file, model, TC_HIER_LARGE rule) */
    int32_t alg;     /* tc_hier_bcast_alg_t or tc_hier_reduce_alg_t; meaningful when !is_auto */
    int32_t k;       /* radix of a k-nomial broadcast (2 unless given) */
} tc_hier_alg_choice_t;

typedef enum { TC_HIER_LIST_BCAST, TC_HIER_LIST_REDUCE, TC_HIER_LIST_LAST } tc_hier_list_kind_t;

/* Radix bounds of "knomial:k". */
#define TC_HIER_KNOMIAL_K_MIN 2
#define TC_HIER_KNOMIAL_K_MAX 1024

/**
 * Parse a per-level algorithm list (TC_HIER_BCAST or TC_HIER_REDUCE).
 *
 * Syntax: comma-separated entries, case-insensitive, blanks around words
 * ignored:
 *   - `level:alg[:k]`: that level uses alg; level is a name accepted by
 *     tc_hier_levels_parse() (core, l2, l3, numa, package or socket, node,
 *     switch1..switch4, sw1..sw4, all, the paper's codes; several joined by
 *     '-' name several levels) or `top` (the group of what remains above the
 *     last level);
 *   - `alg[:k]` alone: every level uses alg;
 *   - `auto` alone (or an empty list): every level chooses by size.
 * Entries apply left to right, a later one overriding an earlier one for the
 * levels it names; a level not named is auto. Algorithms: bcast `flat`,
 * `knomial[:k]` (2 <= k <= 1024, default 2), `scatter_allgather`, `auto`;
 * reduce `flat`, `binomial`, `rsg`, `auto`. Only knomial takes `:k`.
 * Example: "numa:flat,node:knomial:4,switch1:scatter_allgather".
 *
 * @param text    the list (NULL: all auto)
 * @param kind    which algorithms are accepted
 * @param var     the variable's name, for the message
 * @param choice  indexed by level (TC_LEVEL_* and TC_HIER_LEVEL_TOP); always
 *                filled: on error every entry is auto
 * @param err     on error: one message naming @p var, the value and the bad
 *                word, and what is accepted (may be NULL)
 * @param errlen  size of @p err
 * @return TC_OK, or TC_ERR_PARSE on a bad list (@p err says why; TC_ERR_ARG for a bad @p kind).
 *
 * Pure and thread-safe.
 */
tc_err_t tc_hier_alglist_parse(const char *text, tc_hier_list_kind_t kind, const char *var,
                               tc_hier_alg_choice_t choice[TC_HIER_MAX_GROUPS], char *err,
                               size_t errlen);

/* tc_hier_settings_t.shm_level besides TC_LEVEL_L2..TC_LEVEL_NODE. */
#define TC_HIER_SHM_AUTO (-2)
#define TC_HIER_SHM_NONE (-1)

/* Everything a rank's environment says about the hierarchy. Rank 0's copy is
 * broadcast at construction and used by every rank. Fixed-size, no pointers,
 * no padding (it travels as bytes). */
typedef struct tc_hier_settings {
    uint64_t large;           /* TC_HIER_LARGE */
    uint64_t segment;         /* TC_HIER_SEGMENT */
    int32_t enabled;          /* TC_HIER */
    uint32_t levels;          /* TC_HIER_LEVELS as a level mask */
    int32_t shm_level;        /* TC_HIER_SHM_LEVEL: TC_HIER_SHM_AUTO, _NONE, or a level L2..NODE */
    int32_t allreduce_scheme; /* tc_hier_allreduce_scheme_t */
    int32_t allreduce_top_auto; /* TC_HIER_ALLREDUCE_TOP=auto */
    int32_t allreduce_top;      /* tc_hier_allreduce_alg_t when not auto */
    int32_t allgather_top_auto; /* TC_HIER_ALLGATHER_TOP=auto */
    int32_t allgather_top;      /* tc_hier_allgather_alg_t when not auto */
    tc_hier_alg_choice_t bcast[TC_HIER_MAX_GROUPS];
    tc_hier_alg_choice_t reduce[TC_HIER_MAX_GROUPS];
} tc_hier_settings_t;

/**
 * This process's settings from the tunables (read once per process; a bad
 * TC_HIER_LEVELS, TC_HIER_BCAST or TC_HIER_REDUCE gets one message on stderr
 * naming the variable and the bad word, and its default is used).
 * Thread-safe.
 */
void tc_hier_settings_get(tc_hier_settings_t *s);

/**
 * Build the hierarchy of a communicator (collective over @p priv; see
 * hier.h for the steps).
 *
 * Locality: a row of TC_LOCALITY_FILE (by MPI_COMM_WORLD rank) when every
 * rank could read its row; otherwise hwloc (levels known and nesting; an
 * unbound process knows none below the node, said once at TC_VERBOSE >= 1),
 * the node named by the lowest MPI_COMM_WORLD rank on it, and switches from
 * TC_NETWORK_TOPOLOGY_FILE by processor name. With TC_HIER=0 only the real
 * node level is used and neither file is read.
 *
 * The shared-memory level (h->shm_level) is chosen but no segment is made:
 * the caller creates it over the groups of that level (tc_hier_shm_index())
 * and then sets tc_hier_level_t.shm and h->single_shm.
 *
 * @param out          the hierarchy, or NULL (on every rank alike) when
 *                     there is none: TC_HIER=0 on a communicator spanning
 *                     several real nodes, or a local failure on some rank
 *                     (said at TC_VERBOSE >= 1). Free with tc_hier_free().
 * @param priv         the context's private communicator (size >= 1)
 * @param node         the processes of @p priv on this node
 *                     (MPI_COMM_TYPE_SHARED)
 * @param shm_allowed  agreed over @p priv: 0 means no shared-memory level
 *                     (TC_SHM=0)
 * @param comm_name    for messages
 * @return TC_OK, or the error code of a failing PMPI call (then
 *         *out is NULL).
 *
 * Every rank gets the same hierarchy (rank 0's settings, the gathered
 * vectors, a deterministic builder); only the rank-specific parts differ.
 * Thread-safe for different communicators.
 */
tc_err_t tc_hier_create(tc_hier_t **out, MPI_Comm priv, MPI_Comm node, int shm_allowed,
                        const char *comm_name);

/** Release a hierarchy; NULL is allowed. */
void tc_hier_free(tc_hier_t *h);

/** Index in h->level of this rank's group at the shared-memory level, or -1
 * (no shared-memory level, or this rank is alone in its unit there). */
int tc_hier_shm_index(const tc_hier_t *h);

/**
 * Fill every decision table of @p h (tc_hier_level_t.bcast_tab ...,
 * tc_hier_t.allreduce_tab) from the explicit settings (TC_HIER_BCAST,
 * TC_HIER_REDUCE, TC_HIER_ALLREDUCE_TOP: why = override) and, for the levels
 * they leave on auto, the TC_HIER_LARGE rule (why = rule): k-nomial /
 * binomial / recursive doubling below it, scatter_allgather / rsg (groups of
 * more than two) / ring from it. tc_hier_create() calls it; core/select.c
 * then replaces the auto entries with the tuning file's and the model's
 * choices. Pure.
 */
void tc_hier_tables_rule(tc_hier_t *h);

/** Text of the algorithms a level uses, e.g. "bcast knomial:4; reduce auto
 * (binomial, rsg from 16K)" (the runs of its decision table over the sizes,
 * "[file]" after choices from TC_TUNING_FILE) or "shared memory (segment)";
 * for reports (topocoll-info). */
void tc_hier_level_describe(const tc_hier_t *h, const tc_hier_level_t *l, char *buf, size_t len);

/** The top group's allreduce in the same form: "ring" or "auto (recdbl,
 * ring from 64K)". */
void tc_hier_top_allreduce_describe(const tc_hier_t *h, char *buf, size_t len);

/** The top group's Allgather exchange in the same form (size classes of the
 * whole result): "ring" or "auto (recdbl, ring from 64K)". */
void tc_hier_top_allgather_describe(const tc_hier_t *h, char *buf, size_t len);

/** "rule", "override", "file", "model". */
const char *tc_hier_why_name(tc_hier_why_t why);

/** Bytes as "512", "64K", "1M", "16G" (exact multiples only get a suffix). */
void tc_hier_size_format(uint64_t bytes, char *buf, size_t len);

/** Name of a tc_hier_settings_t.shm_level value ("auto", "none", "numa"...). */
const char *tc_hier_shm_level_name(int shm_level);

#endif /* TC_HIER_HIER_BUILD_H */
