/* Notification trees (paper 000, stage 1): flat, chain, k-ary, k-nomial.
 *
 * Relative ranks v = (rank - root + p) % p, v = 0 is the root:
 *   flat     parent(v) = 0;          children(0) = 1 .. p-1 (ascending)
 *   chain    parent(v) = v - 1;      child(v) = v + 1
 *   k-ary    parent(v) = (v - 1)/k;  children k*v+1 .. k*v+k (ascending)
 *   k-nomial parent(v) = v with its lowest non-zero base-k digit cleared;
 *            children v + d*k^j for every digit position j below v's lowest
 *            non-zero digit (every position for v = 0), d = 1 .. k-1;
 *            listed by descending j, then ascending d.
 * Every child c < p. The orders put the largest subtree first: in the k-ary
 * tree (a complete tree in level order) a lower index never has a smaller
 * subtree; in the k-nomial tree the child v + d*k^j owns the k^j relative
 * ranks c .. c + k^j - 1, so a higher j means a bigger subtree, and for equal j
 * a higher d can only be cut shorter by p. (When p cuts the tree, a high-j
 * child may own fewer ranks than a lower-j one: the order is by full capacity.)
 *
 * Arithmetic on candidate ranks (k*v + k, d*k^j) is done in int64_t: with a
 * large arity it can exceed INT_MAX even when p does not.
 */
#include "tree.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int tc_shm_tree_args_ok(tc_tree_kind_t kind, int arity, int p)
{
    if (p < 1) {
        return 0;
    }
    switch (kind) {
    case TC_TREE_FLAT:
    case TC_TREE_CHAIN:
        return 1;
    case TC_TREE_KARY:
    case TC_TREE_KNOMIAL:
        return arity >= 2;
    default:
        return 0;
    }
}

/* k^j of v's lowest non-zero base-k digit (v >= 1). */
static int64_t tc_shm_knomial_low_place(int64_t k, int64_t v)
{
    int64_t pw = 1;
    while (v % (pw * k) == 0) {
        pw *= k;
    }
    return pw;
}

int tc_shm_tree_parent_rel(tc_tree_kind_t kind, int arity, int p, int v)
{
    if (!tc_shm_tree_args_ok(kind, arity, p) || v <= 0 || v >= p) {
        return -1;
    }
    switch (kind) {
    case TC_TREE_FLAT:
        return 0;
    case TC_TREE_CHAIN:
        return v - 1;
    case TC_TREE_KARY:
        return (v - 1) / arity;
    case TC_TREE_KNOMIAL: {
        int64_t pw = tc_shm_knomial_low_place(arity, v);
        int64_t digit = (v / pw) % arity;
        return (int)(v - digit * pw);
    }
    default:
        return -1;
    }
}

/* Children of v in order; writes at most @p cap of them to @p out (which may
 * be NULL when cap is 0) and returns how many there are in all, so the
 * builder can detect a table that would overflow instead of writing past it. */
static int tc_shm_tree_children_rel_cap(tc_tree_kind_t kind, int arity, int p, int v, int *out,
                                        int cap)
{
    int n = 0;

#define TREE_EMIT(c)                                                                               \
    do {                                                                                           \
        if (n < cap) {                                                                             \
            out[n] = (int)(c);                                                                     \
        }                                                                                          \
        n++;                                                                                       \
    } while (0)

    if (!tc_shm_tree_args_ok(kind, arity, p) || v < 0 || v >= p) {
        return 0;
    }
    switch (kind) {
    case TC_TREE_FLAT:
        if (v == 0) {
            for (int c = 1; c < p; c++) {
                TREE_EMIT(c);
            }
        }
        break;
    case TC_TREE_CHAIN:
        if (v + 1 < p) {
            TREE_EMIT(v + 1);
        }
        break;
    case TC_TREE_KARY: {
        int64_t first = (int64_t)arity * v + 1;
        for (int64_t c = first; c < first + arity && c < p; c++) {
            TREE_EMIT(c);
        }
        break;
    }
    case TC_TREE_KNOMIAL: {
        const int64_t k = arity;
        /* lim: place value of v's lowest non-zero digit; children use the
         * positions below it. For the root: the first power of k >= p. */
        int64_t lim = 1;
        if (v == 0) {
            while (lim < p) {
                lim *= k;
            }
        } else {
            lim = tc_shm_knomial_low_place(k, v);
        }
        for (int64_t pw = lim / k; pw >= 1; pw /= k) {
            for (int64_t d = 1; d < k; d++) {
                int64_t c = v + d * pw;
                if (c >= p) {
                    break;
                }
                TREE_EMIT(c);
            }
        }
        break;
    }
    default:
        break;
    }
#undef TREE_EMIT
    return n;
}

int tc_shm_tree_children_rel(tc_tree_kind_t kind, int arity, int p, int v, int *out)
{
    return tc_shm_tree_children_rel_cap(kind, arity, p, v, out, out ? p - 1 : 0);
}

tc_err_t tc_shm_tree_build(tc_shm_tree_t *t, int p, int me, tc_tree_kind_t kind, int arity)
{
    tc_err_t err = tc_err(TC_ERR_NOMEM);
    if (t == NULL) {
        return tc_err(TC_ERR_ARG);
    }
    memset(t, 0, sizeof(*t));
    if (!tc_shm_tree_args_ok(kind, arity, p) || me < 0 || me >= p) {
        return tc_err(TC_ERR_ARG);
    }

    /* Over all roots, v = me - root runs through 0 .. p-1 once, and the
     * children of all v are the p-1 non-roots: exactly p-1 entries. */
    const int nchild_total = p - 1;
    t->parent = malloc((size_t)p * sizeof(int));
    t->child_start = malloc(((size_t)p + 1) * sizeof(int));
    t->children = malloc((size_t)(nchild_total > 0 ? nchild_total : 1) * sizeof(int));
    if (t->parent == NULL || t->child_start == NULL || t->children == NULL) {
        goto fn_fail;
    }

    int pos = 0;
    for (int root = 0; root < p; root++) {
        int v = me >= root ? me - root : me - root + p;
        int pv = tc_shm_tree_parent_rel(kind, arity, p, v);
        /* relative -> absolute: rank = (v + root) % p, without overflowing int */
        t->parent[root] = pv < 0 ? -1 : (pv < p - root ? pv + root : pv - (p - root));

        t->child_start[root] = pos;
        int *out = t->children + pos;
        int n = tc_shm_tree_children_rel_cap(kind, arity, p, v, out, nchild_total - pos);
        if (n > nchild_total - pos) {
            err = tc_err(TC_ERR_INTERN);
            goto fn_fail; /* cannot happen for a tree; never write past the table */
        }
        for (int i = 0; i < n; i++) {
            out[i] = out[i] < p - root ? out[i] + root : out[i] - (p - root);
        }
        pos += n;
    }
    t->child_start[p] = pos;
    if (pos != nchild_total) {
        err = tc_err(TC_ERR_INTERN);
        goto fn_fail;
    }

    t->p = p;
    t->me = me;
    t->kind = kind;
    t->arity = arity;
    return TC_OK;

fn_fail:
    tc_shm_tree_free(t);
    return err;
}

void tc_shm_tree_free(tc_shm_tree_t *t)
{
    if (t == NULL) {
        return;
    }
    free(t->parent);
    free(t->child_start);
    free(t->children);
    memset(t, 0, sizeof(*t));
}
