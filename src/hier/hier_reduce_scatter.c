/* Hierarchical Reduce_scatter (see hier_reduce_scatter.h). */
#include "hier_reduce_scatter.h"
#include "base/tags.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "level_bcast.h"
#include "level_reduce.h"
#include "shm/allgather.h"

/* Transfers in pieces of at most tc_hier_piece_max() bytes (MPI int
 * counts); both ends derive the length, so they agree on the pieces, and a
 * zero-length transfer sends nothing. */
static size_t rs_piece(size_t len, size_t off)
{
    return len - off < tc_hier_piece_max() ? len - off : tc_hier_piece_max();
}

static tc_err_t rs_send(MPI_Comm comm, const tc_wait_info_t *wait, const char *buf, size_t len,
                        int dest)
{
    for (size_t off = 0; off < len; off += tc_hier_piece_max()) {
        const int rc =
            tc_wait_mpi_send(buf + off, (int)rs_piece(len, off), dest, TC_TAG_HIER_RS_DOWN, comm,
                             wait, "hier reduce_scatter: send a member its block");
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return TC_OK;
}

static tc_err_t rs_recv(MPI_Comm comm, const tc_wait_info_t *wait, char *buf, size_t len, int src)
{
    for (size_t off = 0; off < len; off += tc_hier_piece_max()) {
        const int rc =
            tc_wait_mpi_recv(buf + off, (int)rs_piece(len, off), src, TC_TAG_HIER_RS_DOWN, comm,
                             wait, "hier reduce_scatter: receive my block");
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return TC_OK;
}

/* Send slen bytes to dest while receiving rlen from src, piece k with piece
 * k (level_reduce.c's exchange: each step a Sendrecv, a lone Send or a lone
 * Recv, mirrored at the peers). */
static tc_err_t rs_exchange(MPI_Comm comm, const tc_wait_info_t *wait, const char *sbuf,
                            size_t slen, int dest, char *rbuf, size_t rlen, int src)
{
    for (size_t off = 0; off < slen || off < rlen; off += tc_hier_piece_max()) {
        const int ns = off < slen ? (int)rs_piece(slen, off) : 0;
        const int nr = off < rlen ? (int)rs_piece(rlen, off) : 0;
        int rc;
        if (ns > 0 && nr > 0)
            rc = tc_wait_mpi_sendrecv(sbuf + off, ns, dest, rbuf + off, nr, src, TC_TAG_HIER_RS_TOP,
                                      comm, wait, "hier reduce_scatter: exchange at the top");
        else if (ns > 0)
            rc = tc_wait_mpi_send(sbuf + off, ns, dest, TC_TAG_HIER_RS_TOP, comm, wait,
                                  "hier reduce_scatter: exchange at the top (send)");
        else
            rc = tc_wait_mpi_recv(rbuf + off, nr, src, TC_TAG_HIER_RS_TOP, comm, wait,
                                  "hier reduce_scatter: exchange at the top (receive)");
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return TC_OK;
}

/* Member m's share of group @p l's unit (the blocks of the ranks x with
 * owner[x] == m, bytes[x] each) into parts[m]. */
static void rs_parts(const tc_hier_level_t *l, const size_t *bytes, int p, size_t *parts)
{
    for (int m = 0; m < l->size; m++)
        parts[m] = 0;
    for (int x = 0; x < p; x++)
        if (l->owner[x] >= 0)
            parts[l->owner[x]] += bytes[x];
}

/* The unit's blocks, ascending ranks at @p src, regrouped by member into
 * @p dst (each member's blocks in ascending rank order: its own layout one
 * level down); at[m] is where member m's share starts. When the blocks are
 * grouped already (each member's ranks contiguous, zero-length blocks
 * aside) nothing is copied and @p src is returned; else @p dst. @p run:
 * l->size entries of scratch. */
static const char *rs_regroup(const tc_hier_level_t *l, const size_t *bytes, int p,
                              const size_t *parts, size_t *at, size_t *run, const char *src,
                              char *dst)
{
    size_t off = 0;
    bool grouped = true;
    int last = 0;
    for (int m = 0; m < l->size; m++) {
        at[m] = run[m] = off;
        off += parts[m];
    }
    for (int x = 0; x < p && grouped; x++) {
        const int m = l->owner[x];
        if (m < 0 || bytes[x] == 0)
            continue;
        grouped = m >= last;
        last = m;
    }
    if (grouped)
        return src;
    for (int x = 0; x < p; x++) {
        const int m = l->owner[x];
        if (m < 0 || bytes[x] == 0)
            continue;
        memcpy(dst + run[m], src, bytes[x]);
        run[m] += bytes[x];
        src += bytes[x];
    }
    return dst;
}

/* The segment's scatter of member shares laid out at base + at[j]. */
typedef struct {
    const char *base;
    const size_t *at;
    char *dst;
} rs_io_t;

static void rs_put(void *state, int j, size_t off, char *dst, size_t n)
{
    const rs_io_t *io = state;
    memcpy(dst, io->base + io->at[j] + off, n);
}

static void rs_get(void *state, int j, size_t off, const char *src, size_t n)
{
    (void)j;
    const rs_io_t *io = state;
    memcpy(io->dst + off, src, n);
}

static void rs_shm_scatter(tc_shm_comm_t *shm, const tc_hier_level_t *l, const size_t *parts,
                           const char *base, const size_t *at, char *dst)
{
    size_t max = 0;
    for (int m = 1; m < l->size; m++)
        max = parts[m] > max ? parts[m] : max;
    rs_io_t st = {base, at, dst};
    const tc_shm_ag_io_t io = {rs_put, rs_get, &st};
    const tc_shm_ag_sizes_t sz = {parts, 0, max};
    tc_shm_scatter(shm, &sz, 0, &io);
}

/* Two temporaries of nb bytes, back to back, in the hierarchy's scratch. */
static tc_err_t rs_scratch(tc_hier_t *h, size_t nb)
{
    if (h->scratch && h->scratch_bytes >= 2 * nb)
        return TC_OK;
    char *grown = realloc(h->scratch, 2 * nb);
    if (!grown)
        return tc_err(TC_ERR_NOMEM);
    h->scratch = grown;
    h->scratch_bytes = 2 * nb;
    return TC_OK;
}

tc_err_t tc_hier_reduce_scatter(tc_hier_t *h, tc_shm_comm_t *shm, MPI_Comm priv, const void *send,
                                void *recv, const int *counts, int stride, size_t scale,
                                const tc_redop_t *op)
{
    const int p = h->p, me = h->rank, n = h->nlevels;
    const size_t e = op->elem, nb = op->nelem * e;
    if (nb == 0)
        return TC_OK;
    size_t *arr = malloc(4 * sizeof(size_t) * (size_t)p);
    if (!arr)
        return tc_err(TC_ERR_NOMEM);
    size_t *bytes = arr, *parts = arr + p, *at = arr + 2 * p, *run = arr + 3 * p;
    for (int x = 0; x < p; x++)
        bytes[x] = (size_t)counts[(size_t)x * (size_t)stride] * scale * e;
    tc_err_t rc = rs_scratch(h, nb);
    if (rc != TC_OK) {
        free(arr);
        return rc;
    }
    char *const W = h->scratch, *const S = h->scratch + nb, *const out = recv;
    const char *cur = send ? send : recv;
    const bool in_top = n > 0 && (int)h->level[n - 1].level == tc_hier_top_level(h);
    const int below = in_top ? n - 1 : n;
    int stop = -1; /* the group where this rank is not the leader, if below the top */

    /* 1. Up: the whole message to the leader of each group below the top. */
    for (int i = 0; i < below && stop < 0 && rc == TC_OK; i++) {
        const tc_hier_level_t *l = &h->level[i];
        const bool leader = l->my_index == 0;
        if (l->shm) {
            /* (A segment serves the lowest groups only: cur is W at most in
             * place at the leader.) */
            rc = tc_shm_reduce(shm, leader && cur == W ? NULL : cur, leader ? W : NULL, op->nelem,
                               op, 0);
        } else {
            if (cur != W)
                memcpy(W, cur, nb);
            rc = tc_hier_reduce_group(W, S, op->nelem, op, l->members, l->size, l->my_index, 0,
                                      tc_hier_level_reduce_alg(h, l, nb, 1), priv,
                                      TC_TAG_HIER_RS_UP, h->msg_wait);
        }
        if (leader)
            cur = W;
        else
            stop = i; /* this rank's share comes back down from this group's leader */
    }
    if (rc != TC_OK) {
        free(arr);
        return rc;
    }

    /* 2. The share this rank holds: received from the leader of the group
     * where it stopped, or reduce-scattered among the top group, or (no top
     * group above it) the whole message. */
    const char *mine = cur;
    int down = below - 1;
    if (stop >= 0) {
        const int i = stop;
        const tc_hier_level_t *l = &h->level[i];
        rs_parts(l, bytes, p, parts);
        char *dst = i == 0 ? out : W; /* at the bottom: its own block only */
        if (l->shm)
            rs_shm_scatter(shm, l, parts, NULL, at, dst);
        else if (parts[l->my_index] > 0)
            rc = rs_recv(priv, h->msg_wait, dst, parts[l->my_index], l->members[0]);
        mine = dst;
        down = i - 1;
    } else if (in_top) {
        const tc_hier_level_t *l = &h->level[n - 1];
        const int k = l->my_index, size = l->size;
        rs_parts(l, bytes, p, parts);
        /* Writable, grouped by member: our share is folded in place. */
        char *t = (char *)rs_regroup(l, bytes, p, parts, at, run, cur, S);
        if (t != W && t != S) {
            memcpy(W, cur, nb);
            t = W;
        }
        char *rb = t == W ? S : W;
        for (int s = 1; s < size && rc == TC_OK; s++) {
            const int to = (k + s) % size, from = (k - s + size) % size;
            rc = rs_exchange(priv, h->msg_wait, t + at[to], parts[to], l->members[to], rb, parts[k],
                             l->members[from]);
            if (rc == TC_OK && parts[k] > 0)
                tc_redop_apply(op, rb, t + at[k], parts[k] / e);
        }
        mine = t + at[k];
    }

    /* 3. Down: each group this rank leads gets its members' shares. */
    for (int j = down; j >= 0 && rc == TC_OK; j--) {
        const tc_hier_level_t *l = &h->level[j];
        rs_parts(l, bytes, p, parts);
        char *other = mine >= S && mine < S + nb ? W : S;
        const char *g = rs_regroup(l, bytes, p, parts, at, run, mine, other);
        if (l->shm) {
            rs_shm_scatter(shm, l, parts, g, at, NULL);
        } else {
            for (int m = 1; m < l->size && rc == TC_OK; m++)
                if (parts[m] > 0)
                    rc = rs_send(priv, h->msg_wait, g + at[m], parts[m], l->members[m]);
        }
        mine = g + at[0];
    }
    if (rc == TC_OK && mine != out && bytes[me] > 0)
        memmove(out, mine, bytes[me]);
    free(arr);
    return rc;
}
