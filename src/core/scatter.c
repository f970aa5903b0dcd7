/* TC_Scatter and TC_Scatterv: the paths agreed when the context was made
 * (docs/allgather.md); the argument checks and the dispatch are rooted.c's.
 *
 * Through the segment: the root copies block j into process j's queue and
 * announces it in j's ready line, j copies it out (tc_shm_scatter). A
 * Scatter's block size is known everywhere (the receive signature); a
 * Scatterv's only at the root, so the root first broadcasts the largest
 * block's size (8 bytes, inline): every process must make the same number of
 * bank uses. Everything handed to the MPI's own goes as bytes, as in
 * allgather.c; intercommunicators go unchanged.
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

/* Our block, once it has come: the root's own copied out of the send
 * buffer first (nothing in place), every block out of a staged copy. */
static int tc_sc_finish(tc_rooted_io_t *st, const tc_rooted_t *c, MPI_Comm comm)
{
    if (c->rank == c->root && c->in_place)
        return MPI_SUCCESS;
    tc_rooted_own(st, c);
    return tc_blocks_finish(&st->one, -1, comm);
}

/* Through the segment (one segment spans the communicator). */
static int tc_sc_shm(tc_ctx_t *ctx, const tc_rooted_t *c)
{
    if (c->direct)
        return tc_rooted_shm_direct(ctx, c);
    tc_rooted_io_t st;
    int rc = tc_rooted_io_init(&st, c, 0, ctx->priv);
    tc_shm_ag_io_t io = tc_rooted_shm_io(&st, c, rc);
    tc_shm_ag_sizes_t sz = tc_rooted_shm_sizes(ctx, c);
    tc_shm_scatter(ctx->shm, &sz, c->root, &io);
    if (rc == MPI_SUCCESS)
        rc = tc_sc_finish(&st, c, ctx->priv);
    tc_rooted_io_free(&st);
    return rc;
}

/* Through the hierarchy's groups (hier/level_gather.c). */
static int tc_sc_hier(tc_ctx_t *ctx, const tc_rooted_t *c)
{
    tc_rooted_io_t st;
    int rc = tc_rooted_io_init(&st, c, 0, ctx->priv);
    tc_hier_ga_io_t io = tc_rooted_hier_io(&st, c, rc);
    tc_hier_ga_sizes_t sz = tc_rooted_hier_sizes(c);
    int hrc = tc_hier_scatter(ctx->hier, ctx->shm, ctx->priv, &sz, c->root, &io);
    if (rc == MPI_SUCCESS)
        rc = hrc;
    if (rc == MPI_SUCCESS)
        rc = tc_sc_finish(&st, c, ctx->priv);
    tc_rooted_io_free(&st);
    return rc;
}

/* The root's send side for the MPI's own, as bytes: the user's buffer
 * directly when its type is contiguous, else a staged copy (tc_blocks_init);
 * a Scatterv's counts and displacements, or *far when its blocks lie further
 * apart than an int displacement. Only the root calls. */
static int tc_sc_root_prepare(const tc_rooted_t *c, tc_rooted_io_t *st, int **counts,
                              const char **sbase, bool *far, MPI_Comm comm)
{
    int rc = tc_blocks_init(&st->all, c->all.buf, c->size, c->all.count, c->all.counts,
                            c->all.displs, c->all.type, TC_BLOCKS_READ | TC_BLOCKS_STAGE, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    const bool direct = st->all.mode == TC_BLOCKS_CONTIG;
    if (!c->v) {
        *sbase = direct ? tc_blocks_data(&st->all, 0) : st->all.staged;
        return MPI_SUCCESS;
    }
    uintptr_t lo, hi;
    tc_rooted_spread(&st->all, c, &lo, &hi);
    if (lo != UINTPTR_MAX && hi - lo > INT_MAX) {
        *far = true;
        return MPI_SUCCESS;
    }
    int *cnt = malloc(2 * (size_t)c->size * sizeof *cnt);
    if (!cnt)
        return tc_err(TC_ERR_NOMEM);
    *counts = cnt;
    for (int j = 0; j < c->size; j++) {
        cnt[j] = (int)c->bytes[j]; /* fits: checked by the caller */
        cnt[c->size + j] =
            c->bytes[j] == 0 ? 0 : (int)((uintptr_t)tc_blocks_data(&st->all, j) - lo);
    }
    *sbase = (const char *)lo;
    return MPI_SUCCESS;
}

/* The MPI's own, as bytes (see allgather.c).
 *
 * The MPI gets the call as the user made it instead of as bytes when a block
 * or the root's byte displacements do not fit MPI's ints (MPI allows such
 * calls with derived types). Every process must decide the same: for a
 * Scatter every block has the same size, known everywhere; for a Scatterv
 * only the root knows the blocks and where they are, so it broadcasts its
 * decision (one small broadcast more on this path), deciding on the blocks
 * as tc_sc_root_prepare laid them out; a root that could not prepare them (a
 * failed allocation) decides for the user's form, which needs no copy. Any
 * other process that fails to prepare its side still enters the collective,
 * as bytes straight from (into) the user's buffer (tc_rooted_bytes), and
 * reports the failure afterwards: nobody is left waiting for it. */
static int tc_sc_pmpi(const tc_rooted_t *c, MPI_Comm comm)
{
    tc_rooted_io_t st;
    int *counts = NULL;
    const char *sbase = NULL;
    const bool root = c->rank == c->root, v = c->v;
    bool far = false;
    int rc = MPI_SUCCESS, rc_recv = MPI_SUCCESS;
    tc_blocks_none(&st.all);
    tc_blocks_none(&st.one);
    int big = c->mine > INT_MAX;
    if (v) {
        big = 0;
        for (int j = 0; root && !big && j < c->size; j++)
            big = c->bytes[j] > INT_MAX;
    }
    if (!big && root) {
        rc = tc_sc_root_prepare(c, &st, &counts, &sbase, &far, comm);
        big = far;
    }
    if (v) {
        if (root && rc != MPI_SUCCESS)
            big = 1;
        int brc = PMPI_Bcast(&big, 1, MPI_INT, c->root, comm);
        if (brc != MPI_SUCCESS) {
            rc = brc;
            goto fn_exit;
        }
    }
    void *sendbuf = (void *)(uintptr_t)c->all.buf, *recvbuf = (void *)(uintptr_t)c->one.buf;
    if (big) {
        rc = v ? PMPI_Scatterv(sendbuf, c->all.counts, c->all.displs, c->all.type, recvbuf,
                               c->one.count, c->one.type, c->root, comm)
               : PMPI_Scatter(sendbuf, c->all.count, c->all.type, recvbuf, c->one.count,
                              c->one.type, c->root, comm);
        goto fn_exit;
    }
    void *recv;
    tc_err_t brc = tc_rooted_bytes(&st, c, rc, &recv, &sbase, &rc_recv, comm);
    if (brc != MPI_SUCCESS) {
        rc = brc;
        goto fn_exit;
    }
    void *sb = (void *)(uintptr_t)sbase;
    int prc;
    if (v)
        prc = PMPI_Scatterv(sb, counts, counts ? counts + c->size : NULL, MPI_BYTE, recv,
                            (int)c->mine, MPI_BYTE, c->root, comm);
    else
        prc = PMPI_Scatter(sb, (int)c->mine, MPI_BYTE, recv, (int)c->mine, MPI_BYTE, c->root, comm);
    if (rc == MPI_SUCCESS)
        rc = rc_recv != MPI_SUCCESS ? rc_recv : prc;
    if (rc == MPI_SUCCESS && !c->in_place)
        rc = tc_blocks_finish(&st.one, -1, comm);
fn_exit:
    free(counts);
    tc_rooted_io_free(&st);
    return rc;
}

/* ---- entry points ------------------------------------------------------------------- */

/* An intercommunicator: the user's call. */
static int tc_sc_as_is(const tc_rooted_t *c, MPI_Comm comm)
{
    void *recvbuf = (void *)(uintptr_t)c->one.buf;
    if (c->v)
        return PMPI_Scatterv(c->all.buf, c->all.counts, c->all.displs, c->all.type, recvbuf,
                             c->one.count, c->one.type, c->root, comm);
    return PMPI_Scatter(c->all.buf, c->all.count, c->all.type, recvbuf, c->one.count, c->one.type,
                        c->root, comm);
}

static const tc_rooted_ops_t tc_sc_ops = {tc_sc_shm, tc_sc_hier, tc_sc_pmpi, tc_sc_as_is};

int TC_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    tc_rooted_t c = {.fn = "TC_Scatter",
                     .op = TC_OP_SCATTER,
                     .one = {recvbuf, recvcount, recvtype},
                     .all = {.buf = sendbuf, .count = sendcount, .type = sendtype},
                     .root = root};
    return tc_rooted_run(&c, comm, &tc_sc_ops);
}

int TC_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                int root, MPI_Comm comm)
{
    tc_rooted_t c = {
        .fn = "TC_Scatterv",
        .op = TC_OP_SCATTERV,
        .v = true,
        .one = {recvbuf, recvcount, recvtype},
        .all = {.buf = sendbuf, .counts = sendcounts, .displs = displs, .type = sendtype},
        .root = root};
    return tc_rooted_run(&c, comm, &tc_sc_ops);
}
