/* TC_Gather and TC_Gatherv: the paths agreed when the context was made
 * (docs/allgather.md); the argument checks and the dispatch are rooted.c's.
 *
 * Through the segment: every process but the root copies its block into its
 * own queue, the root copies them out (shm/allgather.c with a root). A
 * Gather's block size is known everywhere (the send signature); a Gatherv's
 * only at the root, so the root first broadcasts the largest block's size
 * (8 bytes, inline in one line per process): every process must make the
 * same number of bank uses. Everything handed to the MPI's own goes as
 * bytes, as in allgather.c; intercommunicators go unchanged.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "rooted.h"
#include "topocoll.h"

/* The root, once the blocks have come: its own block into its place (not
 * in place), every block out of a staged copy. */
static int tc_ga_finish(tc_rooted_io_t *st, const tc_rooted_t *c, MPI_Comm comm)
{
    if (c->rank != c->root)
        return MPI_SUCCESS;
    tc_rooted_own(st, c);
    return tc_blocks_finish(&st->all, c->in_place ? c->rank : -1, comm);
}

/* Through the segment (one segment spans the communicator). */
static int tc_ga_shm(tc_ctx_t *ctx, const tc_rooted_t *c)
{
    if (c->direct)
        return tc_rooted_shm_direct(ctx, c);
    tc_rooted_io_t st;
    int rc = tc_rooted_io_init(&st, c, 0, ctx->priv);
    tc_shm_ag_io_t io = tc_rooted_shm_io(&st, c, rc);
    tc_shm_ag_sizes_t sz = tc_rooted_shm_sizes(ctx, c);
    tc_shm_allgather(ctx->shm, &sz, c->root, &io);
    if (rc == MPI_SUCCESS)
        rc = tc_ga_finish(&st, c, ctx->priv);
    tc_rooted_io_free(&st);
    return rc;
}

/* Through the hierarchy's groups (hier/level_gather.c). */
static int tc_ga_hier(tc_ctx_t *ctx, const tc_rooted_t *c)
{
    tc_rooted_io_t st;
    int rc = tc_rooted_io_init(&st, c, 0, ctx->priv);
    tc_hier_ga_io_t io = tc_rooted_hier_io(&st, c, rc);
    tc_hier_ga_sizes_t sz = tc_rooted_hier_sizes(c);
    int hrc = tc_hier_gather(ctx->hier, ctx->shm, ctx->priv, &sz, c->root, &io);
    if (rc == MPI_SUCCESS)
        rc = hrc;
    if (rc == MPI_SUCCESS)
        rc = tc_ga_finish(&st, c, ctx->priv);
    tc_rooted_io_free(&st);
    return rc;
}

/* The root's receive side for the MPI's own, as bytes: the user's buffer
 * directly when its type is contiguous and (Gatherv) the blocks lie within an
 * int displacement of each other, else a staged copy (every block at its
 * prefix); in place, our own block copied into the staged copy. Only the
 * root calls; the sizes fit an int (decided before). */
static int tc_ga_root_prepare(const tc_rooted_t *c, tc_rooted_io_t *st, int **counts,
                              const char **rbase, bool *direct, MPI_Comm comm)
{
    int rc = tc_blocks_init(&st->all, c->all.buf, c->size, c->all.count, c->all.counts,
                            c->all.displs, c->all.type, TC_BLOCKS_STAGE, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    *direct = st->all.mode == TC_BLOCKS_CONTIG;
    if (c->v) {
        int *cnt = malloc(2 * (size_t)c->size * sizeof *cnt), *displs;
        if (!cnt)
            return tc_err(TC_ERR_NOMEM);
        *counts = cnt;
        displs = cnt + c->size;
        for (int j = 0; j < c->size; j++)
            cnt[j] = (int)c->bytes[j];
        uintptr_t lo, hi;
        tc_rooted_spread(&st->all, c, &lo, &hi);
        if (!*direct || hi - lo > INT_MAX) {
            /* Staged: the offsets fit (the total does). A contiguous type
             * whose blocks lie far apart is staged here. */
            if (*direct && (rc = tc_blocks_stage_contig(&st->all, false)) != TC_OK)
                return rc;
            *direct = false;
            lo = (uintptr_t)st->all.staged;
        }
        for (int j = 0; j < c->size; j++)
            displs[j] = c->bytes[j] == 0 ? 0
                        : *direct        ? (int)((uintptr_t)tc_blocks_data(&st->all, j) - lo)
                                         : (int)st->all.prefix[j];
        *rbase = (const char *)lo;
    } else {
        *rbase = *direct ? tc_blocks_data(&st->all, 0) : st->all.staged;
    }
    if (c->in_place && !*direct && c->mine > 0) {
        /* Our block into the staged copy, at its place. */
        tc_blocks_t own;
        if ((rc = tc_blocks_init(&own, tc_blocks_origin(&st->all, c->rank), 1,
                                 tc_blocks_count(&st->all, c->rank), NULL, NULL, c->all.type,
                                 TC_BLOCKS_READ | TC_BLOCKS_STAGE, comm)) == MPI_SUCCESS)
            memcpy(st->all.staged + st->all.prefix[c->rank], tc_blocks_data(&own, 0), c->mine);
        tc_blocks_free(&own);
    }
    return rc;
}

/* The MPI's own, as bytes (see allgather.c).
 *
 * The MPI gets the call as the user made it instead of as bytes when a block
 * or the root's byte positions do not fit MPI's int counts and displacements
 * (MPI allows such calls with derived types). Every process must decide the
 * same. For a Gather every fact is known everywhere (every block has the same
 * size). For a Gatherv only the root knows the blocks, so it broadcasts its
 * decision (one small broadcast more on this path): a root that could not
 * prepare its receive side (a failed allocation) decides for the user's form,
 * which needs no copy. Any other process that fails to prepare its side still
 * enters the collective, as bytes straight from (into) the user's buffer
 * (tc_rooted_bytes), and reports the failure afterwards: nobody is left
 * waiting for it. */
static int tc_ga_pmpi(const tc_rooted_t *c, MPI_Comm comm)
{
    tc_rooted_io_t st;
    int *counts = NULL;
    const char *rbase = NULL;
    const bool root = c->rank == c->root, v = c->v;
    bool direct = true;
    int rc = MPI_SUCCESS, rc_send = MPI_SUCCESS;
    tc_blocks_none(&st.one);
    tc_blocks_none(&st.all);
    int big = c->mine > INT_MAX;
    if (v) {
        /* The staged copy holds every block at its prefix: the total bounds
         * every offset, direct or staged. */
        big = root && c->total > INT_MAX;
        for (int j = 0; root && !big && j < c->size; j++)
            big = c->bytes[j] > INT_MAX;
    }
    if (!big && root)
        rc = tc_ga_root_prepare(c, &st, &counts, &rbase, &direct, comm);
    if (v) {
        if (root && rc != MPI_SUCCESS)
            big = 1;
        if (PMPI_Bcast(&big, 1, MPI_INT, c->root, comm) != MPI_SUCCESS)
            big = 1; /* the MPI's own reports its own failure the same way */
    }
    void *recvbuf = (void *)(uintptr_t)c->all.buf;
    if (big) {
        rc = v ? PMPI_Gatherv(c->one.buf, c->one.count, c->one.type, recvbuf, c->all.counts,
                              c->all.displs, c->all.type, c->root, comm)
               : PMPI_Gather(c->one.buf, c->one.count, c->one.type, recvbuf, c->all.count,
                             c->all.type, c->root, comm);
        goto fn_exit;
    }
    void *send;
    tc_err_t brc = tc_rooted_bytes(&st, c, rc, &send, &rbase, &rc_send, comm);
    if (brc != MPI_SUCCESS) {
        rc = brc;
        goto fn_exit;
    }
    void *rb = (void *)(uintptr_t)rbase;
    int prc;
    if (v)
        prc = PMPI_Gatherv(send, (int)c->mine, MPI_BYTE, rb, counts,
                           counts ? counts + c->size : NULL, MPI_BYTE, c->root, comm);
    else
        prc = PMPI_Gather(send, (int)c->mine, MPI_BYTE, rb, (int)c->mine, MPI_BYTE, c->root, comm);
    if (rc == MPI_SUCCESS)
        rc = rc_send != MPI_SUCCESS ? rc_send : prc;
    if (rc == MPI_SUCCESS && root && !direct)
        rc = tc_blocks_finish(&st.all, c->in_place ? c->rank : -1, comm);
fn_exit:
    free(counts);
    tc_rooted_io_free(&st);
    return rc;
}

/* ---- entry points ------------------------------------------------------------------- */

/* An intercommunicator: the user's call. */
static int tc_ga_as_is(const tc_rooted_t *c, MPI_Comm comm)
{
    void *recvbuf = (void *)(uintptr_t)c->all.buf;
    if (c->v)
        return PMPI_Gatherv(c->one.buf, c->one.count, c->one.type, recvbuf, c->all.counts,
                            c->all.displs, c->all.type, c->root, comm);
    return PMPI_Gather(c->one.buf, c->one.count, c->one.type, recvbuf, c->all.count, c->all.type,
                       c->root, comm);
}

static const tc_rooted_ops_t tc_ga_ops = {tc_ga_shm, tc_ga_hier, tc_ga_pmpi, tc_ga_as_is};

int TC_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
              int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    tc_rooted_t c = {.fn = "TC_Gather",
                     .op = TC_OP_GATHER,
                     .to_root = true,
                     .one = {sendbuf, sendcount, sendtype},
                     .all = {.buf = recvbuf, .count = recvcount, .type = recvtype},
                     .root = root};
    return tc_rooted_run(&c, comm, &tc_ga_ops);
}

int TC_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
               MPI_Comm comm)
{
    tc_rooted_t c = {
        .fn = "TC_Gatherv",
        .op = TC_OP_GATHERV,
        .v = true,
        .to_root = true,
        .one = {sendbuf, sendcount, sendtype},
        .all = {.buf = recvbuf, .counts = recvcounts, .displs = displs, .type = recvtype},
        .root = root};
    return tc_rooted_run(&c, comm, &tc_ga_ops);
}
