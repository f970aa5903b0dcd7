/* Block order inside a group of the hierarchy (group_blocks.h). */
#include "group_blocks.h"

#include <stdlib.h>
#include <string.h>

tc_err_t tc_hier_gblocks_init(tc_hier_gblocks_t *g, const int *owner, int p, int n,
                              const size_t *bytes)
{
    memset(g, 0, sizeof *g);
    /* One allocation: start and the fill cursors (ints), ord, then the size_t
     * arrays, then the flags. */
    const size_t ints = 2 * ((size_t)n + 1) + (size_t)p;
    char *mem = malloc(ints * sizeof(int) + 2 * (size_t)n * sizeof(size_t) + (size_t)n);
    if (!mem)
        return tc_err(TC_ERR_NOMEM);
    size_t *sz = (size_t *)(void *)mem; /* size_t first: aligned */
    g->len = sz;
    g->off = sz + n;
    int *in = (int *)(void *)(sz + 2 * n);
    g->start = in;
    int *fill = in + n + 1;
    g->ord = fill + n + 1;
    g->contig = (bool *)(void *)(g->ord + p);
    g->n = n;
    memset(g->start, 0, ((size_t)n + 1) * sizeof(int));
    memset(g->len, 0, (size_t)n * sizeof(size_t));
    for (int x = 0; x < p; x++)
        if (owner[x] >= 0) {
            g->start[owner[x] + 1]++;
            g->len[owner[x]] += bytes[x];
        }
    for (int k = 0; k < n; k++) {
        g->start[k + 1] += g->start[k];
        fill[k] = g->start[k];
        g->off[k] = k ? g->off[k - 1] + g->len[k - 1] : 0;
    }
    /* Ascending x: each member's ranks come out ascending. */
    for (int x = 0; x < p; x++)
        if (owner[x] >= 0)
            g->ord[fill[owner[x]]++] = x;
    g->rank_order = true;
    for (int k = 0; k < n; k++) {
        g->contig[k] = true;
        for (int i = g->start[k] + 1; i < g->start[k + 1]; i++)
            g->contig[k] = g->contig[k] && g->ord[i] == g->ord[i - 1] + 1;
    }
    for (int i = 1; i < g->start[n]; i++)
        g->rank_order = g->rank_order && g->ord[i] == g->ord[i - 1] + 1;
    return TC_OK;
}

void tc_hier_gblocks_free(tc_hier_gblocks_t *g)
{
    /* g->len is the start of the one allocation. */
    free(g->len);
    memset(g, 0, sizeof *g);
}

void tc_hier_gblocks_copy(const tc_hier_gblocks_t *g, int k, char *r, const size_t *prefix,
                          const size_t *bytes, size_t off, char *buf, size_t len, bool to_r)
{
    size_t pos = 0; /* where the current block starts in the stream */
    for (int i = g->start[k]; i < g->start[k + 1] && len > 0; i++) {
        const int x = g->ord[i];
        const size_t b = bytes[x];
        if (off < pos + b) {
            const size_t in = off - pos, n = b - in < len ? b - in : len;
            if (to_r)
                memcpy(r + prefix[x] + in, buf, n);
            else
                memcpy(buf, r + prefix[x] + in, n);
            buf += n;
            off += n;
            len -= n;
        }
        pos += b;
    }
}
