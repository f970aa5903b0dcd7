/* Hierarchical collectives (see hier_coll.h). */
#include "hier_coll.h"
#include "base/tags.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Index of this rank's first group whose unit contains @p root: the groups
 * from there up form the root's chain (a unit containing the root is inside
 * every larger unit of this rank). */
static int tc_hier_chain_start(const tc_hier_t *h, int root)
{
    int j = h->nlevels;
    while (j > 0 && h->level[j - 1].owner[root] >= 0)
        j--;
    return j;
}

static tc_err_t tc_hier_group_bcast(const tc_hier_t *h, tc_shm_comm_t *shm, MPI_Comm priv,
                                    const tc_hier_level_t *l, void *buf, size_t n, int root_index)
{
    if (l->shm) {
        tc_shm_bcast_pipelined(shm, buf, n, root_index, NULL);
        return TC_OK;
    }
    return tc_hier_bcast_group(buf, n, l->members, l->size, l->my_index, root_index,
                               tc_hier_level_bcast_alg(h, l, n), tc_hier_level_bcast_k(h, l, n),
                               priv, TC_TAG_HIER_BCAST, h->msg_wait);
}

static tc_err_t tc_hier_bcast_piece(const tc_hier_t *h, tc_shm_comm_t *shm, MPI_Comm priv,
                                    void *buf, size_t n, int root)
{
    tc_err_t rc = TC_OK;
    const int j = tc_hier_chain_start(h, root);
    /* The chain bottom-up: each group from the member holding the data. */
    for (int i = j; i < h->nlevels && rc == TC_OK; i++)
        rc = tc_hier_group_bcast(h, shm, priv, &h->level[i], buf, n, h->level[i].owner[root]);
    /* Then the other groups top-down from their leaders. */
    for (int i = j - 1; i >= 0 && rc == TC_OK; i--)
        rc = tc_hier_group_bcast(h, shm, priv, &h->level[i], buf, n, 0);
    return rc;
}

tc_err_t tc_hier_bcast(const tc_hier_t *h, tc_shm_comm_t *shm, MPI_Comm priv, void *buf,
                       size_t nbytes, int root)
{
    const size_t seg = h->segment ? h->segment : nbytes;
    tc_err_t rc = TC_OK;
    for (size_t off = 0; off < nbytes && rc == TC_OK; off += seg) {
        size_t n = nbytes - off < seg ? nbytes - off : seg;
        rc = tc_hier_bcast_piece(h, shm, priv, (char *)buf + off, n, root);
    }
    return rc;
}

/* Reduction buffers of one rank for one piece: the partial result `cur`
 * moves between the two temporaries (paper 001, Fig. 3: pointer swaps
 * instead of copies) and ends in `out` where a result is due. */
typedef struct tc_hier_rbufs {
    const char *cur; /* this rank's current partial (may be the user's send buffer) */
    char *out;       /* where the final result goes (NULL: nowhere) */
    char *t[2];      /* temporaries of one piece */
} tc_hier_rbufs_t;

static char *tc_hier_rbufs_other(const tc_hier_rbufs_t *b, const char *avoid)
{
    return b->t[0] != avoid ? b->t[0] : b->t[1];
}

/* One group's reduction of the piece to @p root_index. @p final: the result
 * is this rank's final one (goes to b->out). Returns TC_OK; *done is
 * set when this rank contributed and is not the root (its part is over). */
static tc_err_t tc_hier_group_reduce(const tc_hier_t *h, tc_shm_comm_t *shm, MPI_Comm priv,
                                     const tc_hier_level_t *l, tc_hier_rbufs_t *b, size_t nelem,
                                     const tc_redop_t *op, int root_index, bool final, bool *done)
{
    const size_t nb = nelem * op->elem;
    const bool am_root = l->my_index == root_index;
    tc_err_t rc = TC_OK;
    *done = !am_root;
    if (l->shm) {
        char *dst = NULL;
        if (am_root)
            dst = final && b->out ? b->out : tc_hier_rbufs_other(b, b->cur);
        /* TC_ERR_NOTSUP (an element larger than a slot) is excluded by the
         * caller; here, after other levels moved data, it cannot be a fallback. */
        if ((rc = tc_shm_reduce(shm, dst == b->cur ? NULL : b->cur, dst, nelem, op, root_index)) !=
            TC_OK)
            return rc;
        if (am_root)
            b->cur = dst;
        return TC_OK;
    }
    /* Point to point: in place on a writable buffer, with one scratch. */
    char *w = am_root && final && b->out ? b->out : tc_hier_rbufs_other(b, b->out);
    if (w == b->t[0] || w == b->t[1]) {
        /* A temporary: prefer the one cur already is. */
        if (b->cur == b->t[0] || b->cur == b->t[1])
            w = (char *)b->cur;
    }
    if (w != b->cur)
        memcpy(w, b->cur, nb);
    char *scratch = tc_hier_rbufs_other(b, w);
    rc = tc_hier_reduce_group(w, scratch, nelem, op, l->members, l->size, l->my_index, root_index,
                              tc_hier_level_reduce_alg(h, l, nb, op->commutative), priv,
                              TC_TAG_HIER_REDUCE, h->msg_wait);
    b->cur = w;
    return rc;
}

/* Reduce one piece to @p root; the result lands in b->out at the root. */
static tc_err_t tc_hier_reduce_piece(const tc_hier_t *h, tc_shm_comm_t *shm, MPI_Comm priv,
                                     tc_hier_rbufs_t *b, size_t nelem, const tc_redop_t *op,
                                     int root)
{
    const int n = h->nlevels, j = tc_hier_chain_start(h, root);
    tc_err_t rc = TC_OK;
    bool done = false;
    /* The other groups bottom-up to their leaders, then the chain top-down
     * to the member holding the root. */
    for (int s = 0; s < n && !done && rc == TC_OK; s++) {
        const int i = s < j ? s : n - 1 - (s - j);
        const tc_hier_level_t *l = &h->level[i];
        const int root_index = s < j ? 0 : l->owner[root];
        rc = tc_hier_group_reduce(h, shm, priv, l, b, nelem, op, root_index, s == n - 1, &done);
    }
    if (rc == TC_OK && h->rank == root && b->cur != b->out)
        memcpy(b->out, b->cur, nelem * op->elem);
    return rc;
}

/* Temporaries for pieces of at most @p nb bytes (two, back to back), from
 * the hierarchy's scratch, grown when a larger piece first needs it. */
static tc_err_t tc_hier_rbufs_alloc(tc_hier_t *h, tc_hier_rbufs_t *b, size_t nb)
{
    if (h->scratch_bytes < 2 * nb || !h->scratch) {
        char *grown = realloc(h->scratch, 2 * (nb ? nb : 1));
        if (!grown)
            return tc_err(TC_ERR_NOMEM);
        h->scratch = grown;
        h->scratch_bytes = 2 * (nb ? nb : 1);
    }
    b->t[0] = h->scratch;
    b->t[1] = h->scratch + nb;
    return TC_OK;
}

static size_t tc_hier_piece_elems(const tc_hier_t *h, const tc_redop_t *op, size_t nelem)
{
    size_t per = h->segment ? h->segment / op->elem : nelem;
    if (per == 0)
        per = 1;
    return per < nelem ? per : nelem;
}

tc_err_t tc_hier_reduce(tc_hier_t *h, tc_shm_comm_t *shm, MPI_Comm priv, const void *send,
                        void *recv, const tc_redop_t *op, int root)
{
    const size_t nelem = op->nelem, e = op->elem;
    if (nelem == 0)
        return TC_OK;
    const size_t per = tc_hier_piece_elems(h, op, nelem);
    tc_hier_rbufs_t b;
    tc_err_t rc = tc_hier_rbufs_alloc(h, &b, per * e);
    const bool at_root = h->rank == root;
    for (size_t first = 0; first < nelem && rc == TC_OK; first += per) {
        const size_t n = nelem - first < per ? nelem - first : per;
        char *out = at_root ? (char *)recv + first * e : NULL;
        b.cur = send ? (const char *)send + first * e : out;
        b.out = out;
        rc = tc_hier_reduce_piece(h, shm, priv, &b, n, op, root);
    }
    return rc;
}

/* ReduceAllreduceBcast for one piece: partial results up to the top group's
 * members, an allreduce among them, the result down again. */
static tc_err_t tc_hier_allreduce_rab_piece(const tc_hier_t *h, tc_shm_comm_t *shm, MPI_Comm priv,
                                            tc_hier_rbufs_t *b, size_t nelem, const tc_redop_t *op)
{
    const int n = h->nlevels;
    const size_t nb = nelem * op->elem;
    const bool in_top = n > 0 && (int)h->level[n - 1].level == tc_hier_top_level(h);
    const int below = in_top ? n - 1 : n; /* groups under the top one */
    tc_err_t rc = TC_OK;
    int reached = 0;
    bool done = false;
    for (int i = 0; i < below && !done && rc == TC_OK; i++, reached++)
        rc = tc_hier_group_reduce(h, shm, priv, &h->level[i], b, nelem, op, 0, false, &done);
    if (rc != TC_OK)
        return rc;
    if (!done && in_top) {
        const tc_hier_level_t *l = &h->level[n - 1];
        if (b->cur != b->out)
            memcpy(b->out, b->cur, nb);
        b->cur = b->out;
        if (l->shm) {
            if ((rc = tc_shm_reduce(shm, NULL, b->out, nelem, op, -1)) != TC_OK)
                return rc; /* as in tc_hier_group_reduce() */
        } else {
            rc = tc_hier_allreduce_group(b->out, tc_hier_rbufs_other(b, b->out), nelem, op,
                                         l->members, l->size, l->my_index,
                                         tc_hier_top_allreduce_alg(h, nb, op->commutative), priv,
                                         TC_TAG_HIER_ALLREDUCE, h->msg_wait);
        }
    } else if (!done && b->cur != b->out) {
        memcpy(b->out, b->cur, nb); /* no top group above us: we hold the total */
    }
    /* Down again through every group this rank reduced in, from its leader. */
    for (int i = reached - 1; i >= 0 && rc == TC_OK; i--)
        rc = tc_hier_group_bcast(h, shm, priv, &h->level[i], b->out, nb, 0);
    return rc;
}

tc_err_t tc_hier_allreduce(tc_hier_t *h, tc_shm_comm_t *shm, MPI_Comm priv, const void *send,
                           void *recv, const tc_redop_t *op)
{
    const size_t nelem = op->nelem, e = op->elem;
    if (nelem == 0)
        return TC_OK;
    const size_t per = tc_hier_piece_elems(h, op, nelem);
    tc_hier_rbufs_t b;
    tc_err_t rc = tc_hier_rbufs_alloc(h, &b, per * e);
    for (size_t first = 0; first < nelem && rc == TC_OK; first += per) {
        const size_t n = nelem - first < per ? nelem - first : per;
        char *out = (char *)recv + first * e;
        b.cur = send ? (const char *)send + first * e : out;
        b.out = out;
        if (h->allreduce_scheme == TC_HIER_ALLREDUCE_RB) {
            rc = tc_hier_reduce_piece(h, shm, priv, &b, n, op, 0);
            if (rc == TC_OK)
                rc = tc_hier_bcast_piece(h, shm, priv, out, n * e, 0);
        } else {
            rc = tc_hier_allreduce_rab_piece(h, shm, priv, &b, n, op);
        }
    }
    return rc;
}
