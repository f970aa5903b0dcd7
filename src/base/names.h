/* The words a user writes for hierarchy levels and collective algorithms: one
 * table each, for every module that prints or parses them (hier: TC_HIER_LEVELS,
 * the locality file, the per-level algorithms; model: the LogP file, the
 * tuning file; barrier: the message barriers).
 *
 * Base layer: includes nothing of ours. Header-only (static inline), so a
 * parser that is compiled alone (the fuzzed locality-file parser) needs no
 * other object.
 */
#ifndef TC_BASE_NAMES_H
#define TC_BASE_NAMES_H

#include <stddef.h>
#include <string.h>

/* ---- hierarchy levels ---------------------------------------------------- */

/* Levels bottom-up, in the order of hier/locality.h's tc_level_t and
 * model/logp.h's tc_model_level_t (those enums index this table). */
#define TC_BASE_LEVEL_COUNT 10

/* Name of level @p level ("core", "l2", "l3", "numa", "package", "node",
 * "switch1".."switch4"); NULL when out of range. */
static inline const char *tc_base_level_name(int level)
{
    static const char *const names[TC_BASE_LEVEL_COUNT] = {
        "core", "l2", "l3", "numa", "package", "node", "switch1", "switch2", "switch3", "switch4",
    };
    return level >= 0 && level < TC_BASE_LEVEL_COUNT ? names[level] : NULL;
}

/* Level index 4 ("package") also answers to this word. */
#define TC_BASE_LEVEL_PACKAGE_ALIAS "socket"
#define TC_BASE_LEVEL_PACKAGE       4

/* 1 when the @p n bytes at @p s spell @p word (ASCII case ignored when
 * @p icase). */
static inline int tc_base_word_eq(const char *s, size_t n, const char *word, int icase)
{
    if (strlen(word) != n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        int a = (unsigned char)s[i], b = (unsigned char)word[i];
        if (icase) {
            a = a >= 'A' && a <= 'Z' ? a - 'A' + 'a' : a;
            b = b >= 'A' && b <= 'Z' ? b - 'A' + 'a' : b;
        }
        if (a != b)
            return 0;
    }
    return 1;
}

/* Index of the level named by the @p n bytes at @p s (a name of
 * tc_base_level_name, or "socket" for "package"); -1 if none. */
static inline int tc_base_level_index(const char *s, size_t n, int icase)
{
    for (int l = 0; l < TC_BASE_LEVEL_COUNT; l++)
        if (tc_base_word_eq(s, n, tc_base_level_name(l), icase))
            return l;
    if (tc_base_word_eq(s, n, TC_BASE_LEVEL_PACKAGE_ALIAS, icase))
        return TC_BASE_LEVEL_PACKAGE;
    return -1;
}

/* ---- algorithms ---------------------------------------------------------- */

/* Operations, in the order of model/tuning.h's tc_tuning_op_t. */
enum {
    TC_BASE_OP_BCAST,
    TC_BASE_OP_REDUCE,
    TC_BASE_OP_ALLREDUCE,
    TC_BASE_OP_BARRIER,
    TC_BASE_OP_LAST
};

/* Most algorithms of one operation. */
#define TC_BASE_ALG_MAX 5

/* Algorithms per operation, in the order of the modules' enums:
 *   bcast     hier/level_bcast.h  tc_hier_bcast_alg_t      (3)
 *   reduce    hier/level_reduce.h tc_hier_reduce_alg_t     (3)
 *   allreduce hier/level_reduce.h tc_hier_allreduce_alg_t  (2)
 *   barrier   barrier/barrier.h   tc_barrier_alg_t         (5) */
#define TC_BASE_ALGS_BCAST     3
#define TC_BASE_ALGS_REDUCE    3
#define TC_BASE_ALGS_ALLREDUCE 2
#define TC_BASE_ALGS_BARRIER   5

/* Name of algorithm @p alg of operation @p op (e.g. "scatter_allgather");
 * NULL when out of range. */
static inline const char *tc_base_alg_name(int op, int alg)
{
    static const char *const names[TC_BASE_OP_LAST][TC_BASE_ALG_MAX] = {
        [TC_BASE_OP_BCAST] = {"flat", "knomial", "scatter_allgather"},
        [TC_BASE_OP_REDUCE] = {"flat", "binomial", "rsg"},
        [TC_BASE_OP_ALLREDUCE] = {"recdbl", "ring"},
        [TC_BASE_OP_BARRIER] = {"central", "tree", "dissemination", "tournament", "pairwise"},
    };
    if (op < 0 || op >= TC_BASE_OP_LAST || alg < 0 || alg >= TC_BASE_ALG_MAX)
        return NULL;
    return names[op][alg];
}

/* Index of the algorithm of @p op named @p word (ASCII case ignored); -1 if
 * none. */
static inline int tc_base_alg_index(int op, const char *word)
{
    for (int a = 0; a < TC_BASE_ALG_MAX; a++) {
        const char *name = tc_base_alg_name(op, a);
        if (name && tc_base_word_eq(word, strlen(word), name, 1))
            return a;
    }
    return -1;
}

#endif /* TC_BASE_NAMES_H */
