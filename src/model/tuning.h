/* The user tuning file (TC_TUNING_FILE): fixed algorithm choices per
 * operation, hierarchy level and message size that take precedence over the
 * LogP model (but not over an explicit TC_HIER_BCAST / TC_HIER_REDUCE /
 * TC_HIER_ALLREDUCE_TOP / TC_BARRIER / TC_SHM_BARRIER setting).
 *
 * Pure parser: C + libc, includes nothing of ours. Its level, operation and
 * algorithm numbers follow the library's enums (core/select.c checks that
 * with _Static_assert).
 *
 * Format, one entry per line, '#' starts a comment, blank lines ignored,
 * words separated by blanks, case-insensitive:
 *
 *     <op> <level> <min-bytes> <alg>[:k]
 *
 *   op         bcast, reduce, allreduce, barrier
 *   level      core, l2, l3, numa, package (or socket), node, switch1..switch4
 *              (the group of that level), top (the group above the highest
 *              level), shm (the shared-memory segment: barrier only), all
 *              (every level and top: bcast and reduce only). allreduce takes
 *              top only (the per-level allreduce runs in the top group);
 *              barrier takes shm and top only.
 *   min-bytes  the entry applies from this message size on: a decimal
 *              number with an optional suffix K, M, G or T (binary: 1K =
 *              1024), at most 2^50; barrier entries take 0 only (a barrier
 *              has no size).
 *   alg        bcast: flat, knomial[:k] (2 <= k <= 1024, default 2),
 *              scatter_allgather; reduce: flat, binomial, rsg; allreduce:
 *              recdbl, ring; barrier: central, tree[:n] (2 <= n <= 64,
 *              default: TC_BARRIER_ARITY / TC_SHM_BARRIER_ARITY),
 *              dissemination, tournament, pairwise.
 *
 * For a message of m bytes at a level, the entry of that operation and
 * level with the largest min-bytes <= m applies; below the smallest
 * min-bytes (or with no entry) the model chooses. A later line with the same
 * op, level and min-bytes replaces the earlier one.
 *
 * A bad line is reported as "<file>:<line>: <what is wrong>; line ignored"
 * and skipped; the other lines apply.
 *
 * Example:
 *     # the leaf switches: k-nomial 4 for small messages, then scatter+allgather
 *     bcast   switch1  0    knomial:4
 *     bcast   switch1  256K scatter_allgather
 *     reduce  all      1M   rsg
 *     allreduce top    0    recdbl
 *     barrier shm      0    tree:8
 */
#ifndef TC_MODEL_TUNING_H
#define TC_MODEL_TUNING_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

typedef enum {
    TC_TUNING_OP_BCAST,
    TC_TUNING_OP_REDUCE,
    TC_TUNING_OP_ALLREDUCE,
    TC_TUNING_OP_BARRIER,
    TC_TUNING_OP_LAST
} tc_tuning_op_t;

/* Levels 0 .. TC_TUNING_LEVEL_TOP - 1 are hier/locality.h's tc_level_t (core
 * .. switch4); TOP is hier/groups.h's TC_HIER_LEVEL_TOP. */
#define TC_TUNING_LEVEL_TOP  10
#define TC_TUNING_LEVEL_SHM  11
#define TC_TUNING_LEVEL_LAST 12

/* Largest min-bytes accepted (2^50). */
#define TC_TUNING_MAX_BYTES ((uint64_t)1 << 50)

/* Most entries a file holds ("all" counts as 11). */
#define TC_TUNING_MAX_ENTRIES 256

/* Algorithm numbers per op (the library's enums, in this order):
 *  bcast     flat 0, knomial 1, scatter_allgather 2   (hier/level_bcast.h)
 *  reduce    flat 0, binomial 1, rsg 2                  (hier/level_reduce.h)
 *  allreduce recdbl 0, ring 1                           (hier/level_reduce.h)
 *  barrier   central 0, tree 1, dissemination 2, tournament 3, pairwise 4
 *            (barrier/barrier.h) */
typedef struct tc_tuning_entry {
    uint64_t min_bytes;
    int32_t op;    /* tc_tuning_op_t */
    int32_t level; /* 0 .. TC_TUNING_LEVEL_LAST - 1 */
    int32_t alg;
    int32_t k; /* knomial radix or tree arity; 0 when not given (tree: the configured arity) */
} tc_tuning_entry_t;

/* Fixed size, no pointers, no padding: it travels between ranks as bytes. */
typedef struct tc_tuning {
    int32_t n;    /* entries used */
    int32_t nbad; /* lines ignored */
    tc_tuning_entry_t e[TC_TUNING_MAX_ENTRIES];
} tc_tuning_t;

/* Called once per bad line with "<name>:<line>: ...; line ignored". */
typedef void (*tc_tuning_report_fn)(void *arg, const char *msg);

/** Empty table (no entry: the model decides everything). */
void tc_tuning_init(tc_tuning_t *t);

/**
 * Parse @p text (the file's contents; @p name for messages) into @p t
 * (replaced). Bad lines are reported through @p report (may be NULL) and
 * skipped. @return the number of bad lines (0: all good). Pure, thread-safe.
 */
int tc_tuning_parse(tc_tuning_t *t, const char *text, const char *name, tc_tuning_report_fn report,
                    void *arg);

/**
 * Read and parse the file @p path (at most 1 MiB). An unreadable or too
 * large file is reported ("<path>: cannot read: <reason>; no tuning file is
 * used") and gives an empty table and TC_ERR_SYS (the errno as cause) or
 * TC_ERR_PARSE; otherwise as tc_tuning_parse(), and TC_ERR_PARSE when some
 * line was bad (t->nbad of them, skipped), TC_OK when none was.
 */
tc_err_t tc_tuning_load_file(tc_tuning_t *t, const char *path, tc_tuning_report_fn report,
                             void *arg);

/**
 * The entry for @p op at @p level with the largest min_bytes <= @p nbytes,
 * or NULL (no entry applies: the model decides).
 */
const tc_tuning_entry_t *tc_tuning_lookup(const tc_tuning_t *t, tc_tuning_op_t op, int level,
                                          uint64_t nbytes);

/** Names as the file spells them ("bcast", "switch1", "top", "shm",
 * "scatter_allgather"...); "?" when out of range. */
const char *tc_tuning_op_name(tc_tuning_op_t op);
const char *tc_tuning_level_name(int level);
const char *tc_tuning_alg_name(tc_tuning_op_t op, int alg);

#endif /* TC_MODEL_TUNING_H */
