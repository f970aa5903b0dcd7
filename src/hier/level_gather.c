/* Hierarchical Gather(v) and Scatter(v) (see level_gather.h).
 *
 * Held blocks: a process other than the root keeps the blocks it collected
 * (Gather) or received for the processes below it (Scatter) in one buffer,
 * in ascending rank order (pos[y]); its own block stays in the user's
 * buffer, and the root reads and writes the user's buffers only (io). The
 * stream of a rank list is the concatenation of its blocks; it goes over the
 * wire in one piece when the blocks lie back to back (the usual case:
 * contiguous types, ranks contiguous per node), else through a staging copy.
 *
 * In a group, member k's ranks are those with owner[y] == k; in a chain
 * group the ranks outside the group's unit go with the leader (member 0),
 * which holds them (Gather: it was the collector one level up) or receives
 * them (Scatter: it distributes them one level up).
 */
#include "level_gather.h"
#include "base/tags.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "level_bcast.h"
#include "shm/allgather.h"

typedef struct tc_hg_cursor {
    int i;       /* index in list */
    size_t boff; /* offset in block list[i] */
    size_t soff; /* offset in the stream */
} tc_hg_cursor_t;

typedef struct tc_hg {
    const tc_hier_t *h;
    tc_shm_comm_t *shm;
    MPI_Comm priv;
    const tc_hier_ga_io_t *io;
    int p, me, root;
    bool v, at_root;
    size_t mine;
    size_t *bytes; /* [p] block sizes this process knows (every one at the root) */
    size_t *pos;   /* [p] a held block's place in buf */
    char *have;    /* [p] held in buf */
    char *buf;
    /* The current group: member k's ranks are list[start[k] .. start[k + 1]). */
    int *list;           /* [p] */
    int *start;          /* [p + 1] */
    size_t *tot;         /* [p] per member: its stream's bytes */
    tc_hg_cursor_t *cur; /* [p] per member */
    uint64_t *szs;       /* [2 p + 2] sizes in transit */
    char *mem;
} tc_hg_t;

static tc_err_t tc_hg_init(tc_hg_t *g, const tc_hier_t *h, tc_shm_comm_t *shm, MPI_Comm priv,
                           const tc_hier_ga_sizes_t *sz, int root, const tc_hier_ga_io_t *io)
{
    const size_t p = (size_t)h->p;
    *g = (tc_hg_t){.h = h, .shm = shm, .priv = priv, .io = io, .p = h->p, .me = h->rank};
    g->root = root;
    g->v = sz->v;
    g->at_root = h->rank == root;
    g->mine = sz->mine;
    size_t need = p * (3 * sizeof(size_t) + sizeof(tc_hg_cursor_t)) +
                  (2 * p + 2) * sizeof(uint64_t) + (2 * p + 1) * sizeof(int) + p;
    if (!(g->mem = malloc(need)))
        return tc_err(TC_ERR_NOMEM);
    char *m = g->mem;
    g->bytes = (size_t *)(void *)m, m += p * sizeof(size_t);
    g->pos = (size_t *)(void *)m, m += p * sizeof(size_t);
    g->tot = (size_t *)(void *)m, m += p * sizeof(size_t);
    g->szs = (uint64_t *)(void *)m, m += (2 * p + 2) * sizeof(uint64_t);
    g->cur = (tc_hg_cursor_t *)(void *)m, m += p * sizeof(tc_hg_cursor_t);
    g->list = (int *)(void *)m, m += p * sizeof(int);
    g->start = (int *)(void *)m, m += (p + 1) * sizeof(int);
    g->have = m;
    memset(g->have, 0, p);
    for (size_t y = 0; y < p; y++)
        g->bytes[y] = sz->bytes && g->at_root ? sz->bytes[y] : sz->mine;
    return TC_OK;
}

static void tc_hg_free(tc_hg_t *g)
{
    free(g->buf);
    free(g->mem);
}

void tc_hier_ga_read_zeros(void *state, int y, size_t off, char *dst, size_t n)
{
    (void)state;
    (void)y;
    (void)off;
    memset(dst, 0, n);
}
void tc_hier_ga_write_nothing(void *state, int y, size_t off, const char *src, size_t n)
{
    (void)state;
    (void)y;
    (void)off;
    (void)src;
    (void)n;
}
char *tc_hier_ga_addr_none(void *state, int y)
{
    (void)state;
    (void)y;
    return NULL;
}

/* ---- blocks and streams ---------------------------------------------------------------- */

static bool tc_hg_in_io(const tc_hg_t *g, int y)
{
    return g->at_root || y == g->me;
}

static char *tc_hg_addr(tc_hg_t *g, int y)
{
    return tc_hg_in_io(g, y) ? g->io->addr(g->io->state, y) : g->buf + g->pos[y];
}

/* Member k's ranks, bytes and count. */
static const int *tc_hg_ranks(const tc_hg_t *g, int k, int *n)
{
    *n = g->start[k + 1] - g->start[k];
    return g->list + g->start[k];
}

static size_t tc_hg_total(const tc_hg_t *g, int k)
{
    int n;
    const int *r = tc_hg_ranks(g, k, &n);
    size_t t = 0;
    for (int i = 0; i < n; i++)
        t += g->bytes[r[i]];
    return t;
}

/* Member k's blocks back to back in memory: where they start, else NULL. */
static char *tc_hg_run(tc_hg_t *g, int k)
{
    int n;
    const int *r = tc_hg_ranks(g, k, &n);
    char *base = NULL;
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        if (g->bytes[r[i]] == 0)
            continue;
        char *a = tc_hg_addr(g, r[i]);
        if (!a || (base && a != base + at))
            return NULL;
        if (!base)
            base = a;
        at += g->bytes[r[i]];
    }
    return base;
}

/* Bytes [off, off + n) of member k's stream -> rd (rd != NULL) or wr -> them.
 * Calls for one k come with increasing off; off 0 starts over. */
static void tc_hg_stream(tc_hg_t *g, int k, size_t off, char *rd, const char *wr, size_t n)
{
    tc_hg_cursor_t *c = &g->cur[k];
    const int end = g->start[k + 1];
    if (off == 0 || off < c->soff)
        *c = (tc_hg_cursor_t){g->start[k], 0, 0};
    while (c->i < end && (c->soff < off || n > 0)) {
        const int y = g->list[c->i];
        const size_t left = g->bytes[y] - c->boff;
        if (left == 0) {
            c->i++;
            c->boff = 0;
            continue;
        }
        size_t step = c->soff < off ? off - c->soff : n;
        step = step < left ? step : left;
        if (c->soff >= off) {
            if (rd) {
                if (tc_hg_in_io(g, y))
                    g->io->read(g->io->state, y, c->boff, rd, step);
                else
                    memcpy(rd, g->buf + g->pos[y] + c->boff, step);
                rd += step;
            } else {
                if (tc_hg_in_io(g, y))
                    g->io->write(g->io->state, y, c->boff, wr, step);
                else
                    memcpy(g->buf + g->pos[y] + c->boff, wr, step);
                wr += step;
            }
            n -= step;
        }
        c->boff += step;
        c->soff += step;
    }
}

/* The ranks of members [first, last) but @p skip into the held set (buf
 * re-laid out in rank order; the own block stays in the user's buffer). Not
 * at the root. */
static tc_err_t tc_hg_hold(tc_hg_t *g, int first, int last, int skip)
{
    if (g->at_root)
        return TC_OK;
    for (int k = first; k < last; k++) {
        int n;
        const int *r = tc_hg_ranks(g, k, &n);
        for (int i = 0; k != skip && i < n; i++)
            if (r[i] != g->me && !g->have[r[i]])
                g->have[r[i]] = 2; /* new */
    }
    size_t total = 0;
    for (int y = 0; y < g->p; y++)
        if (g->have[y])
            total += g->bytes[y];
    char *nb = malloc(total ? total : 1);
    if (!nb)
        return tc_err(TC_ERR_NOMEM);
    size_t at = 0;
    for (int y = 0; y < g->p; y++) {
        if (!g->have[y])
            continue;
        if (g->have[y] == 1 && g->bytes[y])
            memcpy(nb + at, g->buf + g->pos[y], g->bytes[y]);
        g->pos[y] = at;
        g->have[y] = 1;
        at += g->bytes[y];
    }
    free(g->buf);
    g->buf = nb;
    return TC_OK;
}

/* The group's rank lists (see the top of the file). */
static void tc_hg_lists(tc_hg_t *g, const tc_hier_level_t *l, bool chain)
{
    const int n = l->size;
    memset(g->start, 0, (size_t)(n + 1) * sizeof *g->start);
    for (int y = 0; y < g->p; y++) {
        const int k = l->owner[y] >= 0 ? l->owner[y] : chain ? 0 : -1;
        if (k >= 0)
            g->start[k + 1]++;
    }
    for (int k = 0; k < n; k++) {
        g->start[k + 1] += g->start[k];
        g->cur[k].i = g->start[k];
    }
    for (int y = 0; y < g->p; y++) {
        const int k = l->owner[y] >= 0 ? l->owner[y] : chain ? 0 : -1;
        if (k >= 0)
            g->list[g->cur[k].i++] = y;
    }
    for (int k = 0; k < n; k++)
        g->cur[k] = (tc_hg_cursor_t){g->start[k], 0, 0};
}

/* ---- point to point ---------------------------------------------------------------------- */

static tc_err_t tc_hg_xfer(bool send, char *b, size_t len, int peer, int tag, MPI_Comm comm,
                           const tc_wait_info_t *wait)
{
    const size_t pm = tc_hier_piece_max();
    for (size_t off = 0; off < len; off += pm) {
        const int n = (int)(len - off < pm ? len - off : pm);
        tc_err_t rc =
            send ? tc_wait_mpi_send(b + off, n, peer, tag, comm, wait, "hier gather/scatter: send")
                 : tc_wait_mpi_recv(b + off, n, peer, tag, comm, wait,
                                    "hier gather/scatter: receive");
        if (rc != TC_OK)
            return rc;
    }
    return TC_OK;
}

/* Member k's stream to / from @p peer. */
static tc_err_t tc_hg_xfer_stream(tc_hg_t *g, bool send, int k, int peer, int tag)
{
    const size_t total = tc_hg_total(g, k);
    if (total == 0)
        return TC_OK;
    char *run = tc_hg_run(g, k), *tmp = NULL;
    if (!run) {
        if (!(tmp = malloc(total)))
            return tc_err(TC_ERR_NOMEM);
        if (send)
            tc_hg_stream(g, k, 0, tmp, NULL, total);
        run = tmp;
    }
    tc_err_t rc = tc_hg_xfer(send, run, total, peer, tag, g->priv, g->h->msg_wait);
    if (rc == TC_OK && !send && tmp)
        tc_hg_stream(g, k, 0, NULL, tmp, total);
    free(tmp);
    return rc;
}

/* Member k's block sizes to / from @p peer (v-variants). */
static tc_err_t tc_hg_xfer_sizes(tc_hg_t *g, bool send, int k, int peer, int tag)
{
    int n;
    const int *r = tc_hg_ranks(g, k, &n);
    if (n == 0)
        return TC_OK;
    uint64_t *s = g->szs + g->start[k];
    for (int i = 0; send && i < n; i++)
        s[i] = g->bytes[r[i]];
    tc_err_t rc =
        tc_hg_xfer(send, (char *)s, (size_t)n * sizeof *s, peer, tag, g->priv, g->h->msg_wait);
    for (int i = 0; rc == TC_OK && !send && i < n; i++)
        g->bytes[r[i]] = (size_t)s[i];
    return rc;
}

/* ---- through the segment ----------------------------------------------------------------- */

typedef struct tc_hg_shm_state {
    tc_hg_t *g;
    int me;     /* this process's member index */
    char *base; /* sizes rounds: member j's array at base + offs[j] */
    const size_t *offs;
} tc_hg_shm_state_t;

static void tc_hg_put_stream(void *state, int j, size_t off, char *dst, size_t n)
{
    tc_hg_shm_state_t *s = state;
    tc_hg_stream(s->g, j, off, dst, NULL, n);
}
static void tc_hg_get_stream(void *state, int j, size_t off, const char *src, size_t n)
{
    tc_hg_shm_state_t *s = state;
    tc_hg_stream(s->g, j, off, NULL, src, n);
}
static void tc_hg_put_array(void *state, int j, size_t off, char *dst, size_t n)
{
    tc_hg_shm_state_t *s = state;
    memcpy(dst, s->base + s->offs[j] + off, n);
}
static void tc_hg_get_array(void *state, int j, size_t off, const char *src, size_t n)
{
    tc_hg_shm_state_t *s = state;
    memcpy(s->base + s->offs[j] + off, src, n);
}

/* Offsets of the members' size arrays in g->szs: member k's at start[k] + k
 * entries (room for one more entry each: the Scatter's largest stream). */
static void tc_hg_size_offsets(tc_hg_t *g, int n, size_t *offs, size_t *len, size_t extra)
{
    for (int k = 0; k < n; k++) {
        offs[k] = ((size_t)g->start[k] + (size_t)k) * sizeof(uint64_t);
        len[k] = ((size_t)(g->start[k + 1] - g->start[k]) + extra) * sizeof(uint64_t);
    }
}

static size_t tc_hg_max_except(const size_t *a, int n, int c)
{
    size_t m = 0;
    for (int k = 0; k < n; k++)
        if (k != c && a[k] > m)
            m = a[k];
    return m;
}

static tc_err_t tc_hg_gather_shm(tc_hg_t *g, const tc_hier_level_t *l, int c, bool sizes)
{
    const int n = l->size, me = l->my_index;
    size_t *offs = (size_t *)g->cur; /* free during the sizes round (cursors reset below) */
    size_t *len = g->tot;
    tc_hg_shm_state_t st = {g, me, (char *)g->szs, offs};
    if (sizes) {
        /* Member k's block sizes to the collector (lengths known to all). */
        tc_hg_size_offsets(g, n, offs, len, 0);
        int cnt;
        const int *r = tc_hg_ranks(g, me, &cnt);
        for (int i = 0; me != c && i < cnt; i++)
            g->szs[g->start[me] + me + i] = g->bytes[r[i]];
        tc_shm_ag_sizes_t s = {me == c ? len : NULL, len[me], tc_hg_max_except(len, n, c)};
        tc_shm_ag_io_t io = {tc_hg_put_array, tc_hg_get_array, &st};
        tc_shm_allgather(g->shm, &s, c, &io);
        for (int k = 0; me == c && k < n; k++) {
            r = tc_hg_ranks(g, k, &cnt);
            for (int i = 0; k != c && i < cnt; i++)
                g->bytes[r[i]] = (size_t)g->szs[g->start[k] + k + i];
        }
        for (int k = 0; k < n; k++)
            g->cur[k] = (tc_hg_cursor_t){g->start[k], 0, 0};
    }
    for (int k = 0; k < n; k++)
        g->tot[k] = tc_hg_total(g, k); /* right everywhere for a Gather; at c for a Gatherv */
    uint64_t max = tc_hg_max_except(g->tot, n, c);
    if (g->v) /* only the collector knows every stream's size */
        tc_shm_bcast_pipelined(g->shm, &max, sizeof max, c, NULL);
    tc_err_t rc = me == c ? tc_hg_hold(g, 0, n, c) : TC_OK;
    /* A collector that could not hold the blocks still takes part (the
     * others are in the collective already): nothing is stored. */
    tc_shm_ag_io_t io = {tc_hg_put_stream, tc_hg_get_stream, &st};
    if (rc != TC_OK)
        io = (tc_shm_ag_io_t){tc_shm_ag_put_zeros, tc_shm_ag_get_nothing, NULL};
    tc_shm_ag_sizes_t s = {me == c ? g->tot : NULL, g->tot[me], (size_t)max};
    if (max > 0)
        tc_shm_allgather(g->shm, &s, c, &io);
    return rc;
}

static tc_err_t tc_hg_scatter_shm(tc_hg_t *g, const tc_hier_level_t *l, int c)
{
    const int n = l->size, me = l->my_index;
    size_t *offs = (size_t *)g->cur;
    size_t *len = g->tot;
    tc_hg_shm_state_t st = {g, me, (char *)g->szs, offs};
    uint64_t max = 0;
    if (g->v) {
        /* Member k gets its largest-stream word and its block sizes. */
        if (me == c) {
            for (int k = 0; k < n; k++)
                g->tot[k] = tc_hg_total(g, k);
            max = tc_hg_max_except(g->tot, n, c);
        }
        tc_hg_size_offsets(g, n, offs, len, 1);
        for (int k = 0; me == c && k < n; k++) {
            int cnt;
            const int *r = tc_hg_ranks(g, k, &cnt);
            uint64_t *a = g->szs + g->start[k] + k;
            a[0] = max;
            for (int i = 0; i < cnt; i++)
                a[1 + i] = g->bytes[r[i]];
        }
        tc_shm_ag_sizes_t s = {me == c ? len : NULL, len[me], tc_hg_max_except(len, n, c)};
        tc_shm_ag_io_t io = {tc_hg_put_array, tc_hg_get_array, &st};
        tc_shm_scatter(g->shm, &s, c, &io);
        if (me != c) {
            int cnt;
            const int *r = tc_hg_ranks(g, me, &cnt);
            const uint64_t *a = g->szs + g->start[me] + me;
            max = a[0];
            for (int i = 0; i < cnt; i++)
                g->bytes[r[i]] = (size_t)a[1 + i];
        }
        for (int k = 0; k < n; k++)
            g->cur[k] = (tc_hg_cursor_t){g->start[k], 0, 0};
    }
    for (int k = 0; k < n; k++)
        g->tot[k] = tc_hg_total(g, k);
    if (!g->v)
        max = tc_hg_max_except(g->tot, n, c);
    tc_err_t rc = me != c ? tc_hg_hold(g, me, me + 1, -1) : TC_OK;
    tc_shm_ag_io_t io = {tc_hg_put_stream, tc_hg_get_stream, &st};
    if (rc != TC_OK)
        io = (tc_shm_ag_io_t){tc_shm_ag_put_zeros, tc_shm_ag_get_nothing, NULL};
    tc_shm_ag_sizes_t s = {me == c ? g->tot : NULL, g->tot[me], (size_t)max};
    if (max > 0)
        tc_shm_scatter(g->shm, &s, c, &io);
    return rc;
}

/* ---- one group --------------------------------------------------------------------------- */

/* Gather in group @p l to member @p c. */
static tc_err_t tc_hg_gather_group(tc_hg_t *g, const tc_hier_level_t *l, int c, bool chain)
{
    tc_hg_lists(g, l, chain);
    const int n = l->size, me = l->my_index;
    /* Only the root knows a Gatherv's sizes: any other collector learns them. */
    const bool sizes = g->v && l->members[c] != g->root;
    if (l->shm)
        return tc_hg_gather_shm(g, l, c, sizes);
    tc_err_t rc = TC_OK;
    if (me != c) {
        if (sizes)
            rc = tc_hg_xfer_sizes(g, true, me, l->members[c], TC_TAG_HIER_GATHER_SIZES);
        if (rc == TC_OK)
            rc = tc_hg_xfer_stream(g, true, me, l->members[c], TC_TAG_HIER_GATHER);
        return rc;
    }
    for (int k = 0; sizes && k < n && rc == TC_OK; k++)
        if (k != c)
            rc = tc_hg_xfer_sizes(g, false, k, l->members[k], TC_TAG_HIER_GATHER_SIZES);
    if (rc == TC_OK)
        rc = tc_hg_hold(g, 0, n, c);
    for (int k = 0; k < n && rc == TC_OK; k++)
        if (k != c)
            rc = tc_hg_xfer_stream(g, false, k, l->members[k], TC_TAG_HIER_GATHER);
    return rc;
}

/* Scatter in group @p l from member @p c. */
static tc_err_t tc_hg_scatter_group(tc_hg_t *g, const tc_hier_level_t *l, int c, bool chain)
{
    tc_hg_lists(g, l, chain);
    const int n = l->size, me = l->my_index;
    if (l->shm)
        return tc_hg_scatter_shm(g, l, c);
    tc_err_t rc = TC_OK;
    if (me == c) {
        for (int k = 0; k < n && rc == TC_OK; k++) {
            if (k == c)
                continue;
            if (g->v)
                rc = tc_hg_xfer_sizes(g, true, k, l->members[k], TC_TAG_HIER_SCATTER_SIZES);
            if (rc == TC_OK)
                rc = tc_hg_xfer_stream(g, true, k, l->members[k], TC_TAG_HIER_SCATTER);
        }
        return rc;
    }
    if (g->v)
        rc = tc_hg_xfer_sizes(g, false, me, l->members[c], TC_TAG_HIER_SCATTER_SIZES);
    if (rc == TC_OK)
        rc = tc_hg_hold(g, me, me + 1, -1);
    if (rc == TC_OK)
        rc = tc_hg_xfer_stream(g, false, me, l->members[c], TC_TAG_HIER_SCATTER);
    return rc;
}

/* ---- the schedules ----------------------------------------------------------------------- */

/* Index of this rank's first group whose unit contains @p root (as in
 * hier_coll.c). */
static int tc_hg_chain_start(const tc_hier_t *h, int root)
{
    int j = h->nlevels;
    while (j > 0 && h->level[j - 1].owner[root] >= 0)
        j--;
    return j;
}

tc_err_t tc_hier_gather(const tc_hier_t *h, tc_shm_comm_t *shm, MPI_Comm priv,
                        const tc_hier_ga_sizes_t *sz, int root, const tc_hier_ga_io_t *io)
{
    tc_hg_t g;
    tc_err_t rc = tc_hg_init(&g, h, shm, priv, sz, root, io);
    const int n = h->nlevels, j = tc_hg_chain_start(h, root);
    /* The groups without the root bottom-up to their leaders; a member that
     * handed its blocks on is done. */
    for (int i = 0; i < j && rc == TC_OK; i++) {
        rc = tc_hg_gather_group(&g, &h->level[i], 0, false);
        if (h->level[i].my_index != 0)
            goto fn_exit;
    }
    /* The root's chain top-down to the member holding the root. */
    for (int i = n - 1; i >= j && rc == TC_OK; i--) {
        const int c = h->level[i].owner[root];
        rc = tc_hg_gather_group(&g, &h->level[i], c, true);
        if (h->level[i].my_index != c)
            break;
    }
fn_exit:
    tc_hg_free(&g);
    return rc;
}

tc_err_t tc_hier_scatter(const tc_hier_t *h, tc_shm_comm_t *shm, MPI_Comm priv,
                         const tc_hier_ga_sizes_t *sz, int root, const tc_hier_ga_io_t *io)
{
    tc_hg_t g;
    tc_err_t rc = tc_hg_init(&g, h, shm, priv, sz, root, io);
    const int n = h->nlevels, j = tc_hg_chain_start(h, root);
    /* The chain bottom-up from the root (a process receives in its lowest
     * chain group and distributes in the ones above), then the other groups
     * top-down from their leaders. */
    for (int i = j; i < n && rc == TC_OK; i++)
        rc = tc_hg_scatter_group(&g, &h->level[i], h->level[i].owner[root], true);
    for (int i = j - 1; i >= 0 && rc == TC_OK; i--)
        rc = tc_hg_scatter_group(&g, &h->level[i], 0, false);
    tc_hg_free(&g);
    return rc;
}
