/* Hierarchical Allgather(v) (hier_allgather.h). */
#include "hier_allgather.h"
#include "base/tags.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "group_blocks.h"
#include "level_allgather.h"
#include "level_bcast.h"
#include "shm/allgather.h"

char *tc_hier_allgather_scratch(tc_hier_t *h, size_t total)
{
    const size_t need = 3 * (total ? total : 1);
    if (!h->scratch || h->scratch_bytes < need) {
        char *grown = realloc(h->scratch, need);
        if (!grown)
            return NULL;
        h->scratch = grown;
        h->scratch_bytes = need;
    }
    return h->scratch;
}

/* The segment's io for a group's streams: the members' streams in R. */
typedef struct tc_hag_io {
    const tc_hier_gblocks_t *g;
    char *r;
    const size_t *prefix, *bytes;
} tc_hag_io_t;

static void tc_hag_put(void *state, int j, size_t off, char *dst, size_t n)
{
    const tc_hag_io_t *s = state;
    tc_hier_gblocks_copy(s->g, j, s->r, s->prefix, s->bytes, off, dst, n, false);
}

static void tc_hag_get(void *state, int j, size_t off, const char *src, size_t n)
{
    const tc_hag_io_t *s = state;
    tc_hier_gblocks_copy(s->g, j, s->r, s->prefix, s->bytes, off, (char *)(uintptr_t)src, n, true);
}

/* Through the segment: the Gather to the leader (@p root 0) or, in a top
 * group the segment serves, the Allgather (@p root -1). The segment's ranks
 * are the group's members in order (hier.h). */
static void tc_hag_shm(tc_shm_comm_t *shm, const tc_hier_gblocks_t *g, char *r,
                       const size_t *prefix, const size_t *bytes, int root)
{
    tc_hag_io_t st = {g, r, prefix, bytes};
    tc_shm_ag_io_t io = {tc_hag_put, tc_hag_get, &st};
    tc_shm_ag_sizes_t sz = {g->len, 0, 0};
    for (int k = 0; k < g->n; k++)
        sz.max = g->len[k] > sz.max ? g->len[k] : sz.max;
    tc_shm_allgather(shm, &sz, root, &io);
}

/* Point to point: every member sends its stream to the leader, which
 * receives them all at once (into R where a stream is one run of it, else
 * into @p stage, copied to R afterwards). */
static tc_err_t tc_hag_p2p_gather(const tc_hier_level_t *l, const tc_hier_gblocks_t *g, char *r,
                                  const size_t *prefix, const size_t *bytes, MPI_Comm priv,
                                  const tc_wait_info_t *wait)
{
    const int me = l->my_index;
    tc_err_t rc = TC_OK;
    if (me != 0) {
        if (g->len[me] == 0)
            return TC_OK;
        char *tmp = NULL;
        const char *src = r + tc_hier_gblocks_at(g, me, prefix);
        if (!g->contig[me]) {
            if (!(tmp = malloc(g->len[me])))
                return tc_err(TC_ERR_NOMEM);
            tc_hier_gblocks_copy(g, me, r, prefix, bytes, 0, tmp, g->len[me], false);
            src = tmp;
        }
        rc = tc_wait_mpi_send(src, (int)g->len[me], l->members[0], TC_TAG_HIER_ALLGATHER, priv,
                              wait, "hier allgather: send my blocks to the leader");
        free(tmp);
        return rc;
    }
    size_t staged = 0;
    for (int k = 1; k < g->n; k++)
        staged += g->contig[k] ? 0 : g->len[k];
    MPI_Request *req = malloc((size_t)g->n * sizeof *req);
    char *stage = staged ? malloc(staged) : NULL;
    if (!req || (staged && !stage)) {
        rc = tc_err(TC_ERR_NOMEM);
        goto fn_exit;
    }
    int nreq = 0;
    size_t at = 0;
    for (int k = 1; k < g->n && rc == TC_OK; k++) {
        if (g->len[k] == 0)
            continue;
        char *dst = r + tc_hier_gblocks_at(g, k, prefix);
        if (!g->contig[k]) {
            dst = stage + at;
            at += g->len[k];
        }
        rc = PMPI_Irecv(dst, (int)g->len[k], MPI_BYTE, l->members[k], TC_TAG_HIER_ALLGATHER, priv,
                        &req[nreq++]);
    }
    const int rc_wait =
        tc_wait_mpi_all(nreq, req, wait, "hier allgather: receive the members' blocks",
                        nreq > 0 ? l->members[1] : -1);
    rc = rc == TC_OK ? rc_wait : rc;
    at = 0;
    for (int k = 1; k < g->n && rc == TC_OK; k++) {
        if (g->contig[k] || g->len[k] == 0)
            continue;
        tc_hier_gblocks_copy(g, k, r, prefix, bytes, 0, stage + at, g->len[k], true);
        at += g->len[k];
    }
fn_exit:
    free(req);
    free(stage);
    return rc;
}

/* The top group's exchange: the streams back to back in member order (R
 * itself when they already lie so, else the scratch t), then into R. */
static tc_err_t tc_hag_exchange(const tc_hier_t *h, tc_shm_comm_t *shm, MPI_Comm priv,
                                const tc_hier_level_t *l, const tc_hier_gblocks_t *g, char *r,
                                const size_t *prefix, const size_t *bytes, char *t, char *tmp)
{
    const int me = l->my_index;
    const size_t total = prefix[h->p];
    if (l->shm) {
        tc_hag_shm(shm, g, r, prefix, bytes, -1);
        return TC_OK;
    }
    char *buf = g->rank_order ? r + tc_hier_gblocks_at(g, 0, prefix) : t;
    if (!g->rank_order)
        tc_hier_gblocks_copy(g, me, r, prefix, bytes, 0, buf + g->off[me], g->len[me], false);
    tc_err_t rc = tc_hier_allgatherv_group(buf, g->off, g->len, l->members, l->size, me,
                                           tc_hier_top_allgather_alg(h, total), tmp, priv,
                                           TC_TAG_HIER_ALLGATHER, h->msg_wait);
    for (int k = 0; k < g->n && rc == TC_OK && !g->rank_order; k++)
        if (k != me)
            tc_hier_gblocks_copy(g, k, r, prefix, bytes, 0, buf + g->off[k], g->len[k], true);
    return rc;
}

tc_err_t tc_hier_allgatherv(tc_hier_t *h, tc_shm_comm_t *shm, MPI_Comm priv, char *r,
                            const size_t *bytes, const size_t *prefix,
                            const tc_shm_copier_t *deliver, bool *delivered)
{
    const int n = h->nlevels;
    const size_t total = prefix[h->p];
    *delivered = false;
    if (n == 0 || total == 0)
        return TC_OK;
    char *scratch = tc_hier_allgather_scratch(h, total);
    if (!scratch)
        return tc_err(TC_ERR_NOMEM);
    /* r may be the scratch's first third (the caller's R). */
    char *t = scratch + total, *tmp = scratch + 2 * total;
    const bool in_top = (int)h->level[n - 1].level == tc_hier_top_level(h);
    const int below = in_top ? n - 1 : n;
    tc_hier_gblocks_t g;
    tc_err_t rc = TC_OK;
    int reached = 0;
    /* Up: a non-leader's last group is the one it sends in (groups.h). */
    for (int i = 0; i < below && rc == TC_OK; i++) {
        const tc_hier_level_t *l = &h->level[i];
        if ((rc = tc_hier_gblocks_init(&g, l->owner, h->p, l->size, bytes)) != TC_OK)
            break;
        if (l->shm)
            tc_hag_shm(shm, &g, r, prefix, bytes, 0);
        else
            rc = tc_hag_p2p_gather(l, &g, r, prefix, bytes, priv, h->msg_wait);
        tc_hier_gblocks_free(&g);
        reached = i + 1;
        if (l->my_index != 0)
            break;
    }
    if (rc == TC_OK && in_top) {
        const tc_hier_level_t *l = &h->level[n - 1];
        if ((rc = tc_hier_gblocks_init(&g, l->owner, h->p, l->size, bytes)) == TC_OK)
            rc = tc_hag_exchange(h, shm, priv, l, &g, r, prefix, bytes, t, tmp);
        tc_hier_gblocks_free(&g);
    }
    /* Down: the whole result from each group's leader, top-down. */
    for (int i = reached - 1; i >= 0 && rc == TC_OK; i--) {
        const tc_hier_level_t *l = &h->level[i];
        if (l->shm) {
            const bool direct = deliver && i == 0 && l->my_index != 0;
            tc_shm_bcast_pipelined(shm, direct ? NULL : r, total, 0, direct ? deliver : NULL);
            *delivered = direct;
        } else {
            rc = tc_hier_bcast_group(
                r, total, l->members, l->size, l->my_index, 0, tc_hier_level_bcast_alg(h, l, total),
                tc_hier_level_bcast_k(h, l, total), priv, TC_TAG_HIER_ALLGATHER, h->msg_wait);
        }
    }
    return rc;
}
