/* Notification trees (paper 000, stage 1): flat, chain, k-ary, k-nomial.
 *
 * The root of a broadcast is known only at call time, so each process keeps
 * its parent and children for all p possible roots (O(p) memory: over all
 * roots a process has p-1 children in total, since each of the p-1 non-roots
 * of each tree has exactly one parent) and looks them up in O(1).
 *
 * Trees are defined on relative ranks v = (rank - root + p) % p; v = 0 is the
 * root. Children are listed largest subtree first, so a forwarded
 * notification reaches the deepest part of the tree earliest.
 */
#ifndef TC_SHM_TREE_H
#define TC_SHM_TREE_H

#include "base/err.h"

/* Values of TC_SHM_TREE (settings.h), in the order of its accepted words. */
typedef enum {
    TC_TREE_FLAT,
    TC_TREE_CHAIN,
    TC_TREE_KARY,
    TC_TREE_KNOMIAL,
    TC_TREE_LAST
} tc_tree_kind_t;

typedef struct tc_shm_tree {
    int p;               /* processes */
    int me;              /* this process's rank */
    tc_tree_kind_t kind; /* TC_TREE_* */
    int arity;           /* k for k-ary and k-nomial (>= 2); ignored otherwise */
    int *parent;         /* [p]: my parent's rank when the root is r; -1 when r == me */
    int *child_start;    /* [p+1]: my children for root r are children[child_start[r] ..
                            child_start[r+1]-1] */
    int *children;       /* ranks (absolute), p-1 entries in total */
} tc_shm_tree_t;

/* Relative-rank definitions (pure; used by the builder and the unit tests).
 * Parent of v (1 <= v < p); -1 for v == 0. */
int tc_shm_tree_parent_rel(tc_tree_kind_t kind, int arity, int p, int v);
/* Children of v, largest subtree first, written to @p out (room for p-1);
 * returns how many. */
int tc_shm_tree_children_rel(tc_tree_kind_t kind, int arity, int p, int v, int *out);

/* Build @p t for process @p me of @p p. Returns TC_OK, or TC_ERR_ARG /
 * TC_ERR_NOMEM (@p t is then empty and tc_shm_tree_free is still safe). */
tc_err_t tc_shm_tree_build(tc_shm_tree_t *t, int p, int me, tc_tree_kind_t kind, int arity);
void tc_shm_tree_free(tc_shm_tree_t *t);

static inline int tc_shm_tree_parent(const tc_shm_tree_t *t, int root)
{
    return t->parent[root];
}

static inline int tc_shm_tree_nchildren(const tc_shm_tree_t *t, int root)
{
    return t->child_start[root + 1] - t->child_start[root];
}

static inline const int *tc_shm_tree_children(const tc_shm_tree_t *t, int root)
{
    return t->children + t->child_start[root];
}

#endif /* TC_SHM_TREE_H */
