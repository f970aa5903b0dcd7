/* TC_Scatter and TC_Scatterv: argument checks, then the path agreed when the
 * context was made (docs/allgather.md).
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
#include "blocks.h"
#include "ctx.h"
#include "hier/level_gather.h"
#include "shm/allgather.h"
#include "topocoll.h"

typedef struct tc_sc_call {
    const char *fn;
    tc_op_t op;
    bool in_place;         /* at the root: recvbuf is MPI_IN_PLACE */
    const void *sendbuf;   /* significant at the root only, as the four below */
    int sendcount;         /* Scatter */
    const int *sendcounts; /* Scatterv */
    const int *displs;     /* Scatterv */
    MPI_Datatype sendtype;
    void *recvbuf;
    int recvcount;
    MPI_Datatype recvtype;
    int root, rank, size;
    size_t mine;   /* this process's block */
    size_t *bytes; /* Scatterv, at the root: every block */
    size_t total;  /* at the root (and for a Scatter everywhere) */
} tc_sc_call_t;

typedef struct tc_sc_io_state {
    tc_blocks_t send; /* the root: every block */
    tc_blocks_t recv; /* our block */
    bool root;        /* the hierarchy's io: the blocks are send's (else our recv block) */
} tc_sc_io_state_t;

static void tc_sc_put(void *state, int j, size_t off, char *dst, size_t n)
{
    tc_blocks_read(&((tc_sc_io_state_t *)state)->send, j, off, dst, n);
}
static void tc_sc_get(void *state, int j, size_t off, const char *src, size_t n)
{
    (void)j;
    tc_blocks_write(&((tc_sc_io_state_t *)state)->recv, 0, off, src, n);
}

static int tc_sc_blocks(tc_sc_io_state_t *st, const tc_sc_call_t *c, int flags, MPI_Comm comm)
{
    tc_blocks_none(&st->send);
    tc_blocks_none(&st->recv);
    tc_err_t rc = MPI_SUCCESS, rc2 = MPI_SUCCESS;
    if (c->rank == c->root)
        rc = tc_blocks_init(&st->send, c->sendbuf, c->size, c->sendcount, c->sendcounts, c->displs,
                            c->sendtype, TC_BLOCKS_READ | flags, comm);
    if (!c->in_place)
        rc2 = tc_blocks_init(&st->recv, c->recvbuf, 1, c->recvcount, NULL, NULL, c->recvtype, flags,
                             comm);
    return rc != MPI_SUCCESS ? rc : rc2;
}

static void tc_sc_blocks_free(tc_sc_io_state_t *st)
{
    tc_blocks_free(&st->send);
    tc_blocks_free(&st->recv);
}

/* The root: its own block out of the send buffer (not in place). */
static int tc_sc_own(tc_sc_io_state_t *st, const tc_sc_call_t *c, MPI_Comm comm)
{
    if (c->rank != c->root || c->in_place)
        return MPI_SUCCESS;
    if (c->mine > 0)
        tc_blocks_copy(&st->recv, 0, &st->send, c->rank, c->mine);
    return tc_blocks_finish(&st->recv, -1, comm);
}

/* Through the segment (one segment spans the communicator). */
static int tc_sc_shm(tc_ctx_t *ctx, const tc_sc_call_t *c)
{
    tc_sc_io_state_t st;
    int rc = tc_sc_blocks(&st, c, 0, ctx->priv);
    tc_shm_ag_io_t io = {tc_sc_put, tc_sc_get, &st};
    if (rc != MPI_SUCCESS) /* the others are in the collective already: take part */
        io = (tc_shm_ag_io_t){tc_shm_ag_put_zeros, tc_shm_ag_get_nothing, NULL};
    tc_shm_ag_sizes_t sz = {NULL, c->mine, c->mine};
    if (c->op == TC_OP_SCATTERV) {
        /* Only the root knows every size: it tells the largest. */
        uint64_t max = 0;
        for (int j = 0; c->rank == c->root && j < c->size; j++)
            max = c->bytes[j] > max ? c->bytes[j] : max;
        tc_shm_bcast_pipelined(ctx->shm, &max, sizeof max, c->root, NULL);
        sz.max = (size_t)max;
        if (c->rank == c->root)
            sz.bytes = c->bytes;
    }
    tc_shm_scatter(ctx->shm, &sz, c->root, &io);
    if (rc == MPI_SUCCESS) {
        if (c->rank == c->root)
            rc = tc_sc_own(&st, c, ctx->priv);
        else
            rc = tc_blocks_finish(&st.recv, -1, ctx->priv);
    }
    tc_sc_blocks_free(&st);
    return rc;
}

/* Block y in one piece (the hierarchy's io), or NULL. */
static char *tc_sc_addr(void *state, int y)
{
    tc_sc_io_state_t *st = state;
    const tc_blocks_t *b = st->root ? &st->send : &st->recv;
    return b->mode == TC_BLOCKS_MAPPED ? NULL
                                       : (char *)(uintptr_t)tc_blocks_data(b, st->root ? y : 0);
}

/* Through the hierarchy's groups (hier/level_gather.c). */
static int tc_sc_hier(tc_ctx_t *ctx, const tc_sc_call_t *c)
{
    tc_sc_io_state_t st;
    const bool root = c->rank == c->root;
    int rc = tc_sc_blocks(&st, c, 0, ctx->priv);
    st.root = root;
    tc_hier_ga_io_t io = {tc_sc_put, tc_sc_get, tc_sc_addr, &st};
    if (rc != MPI_SUCCESS) /* take part all the same (see tc_sc_shm) */
        io = (tc_hier_ga_io_t){tc_hier_ga_read_zeros, tc_hier_ga_write_nothing,
                               tc_hier_ga_addr_none, NULL};
    const bool v = c->op == TC_OP_SCATTERV;
    tc_hier_ga_sizes_t sz = {v && root ? c->bytes : NULL, c->mine, v};
    int hrc = tc_hier_scatter(ctx->hier, ctx->shm, ctx->priv, &sz, c->root, &io);
    if (rc == MPI_SUCCESS)
        rc = hrc;
    if (rc == MPI_SUCCESS)
        rc = root ? tc_sc_own(&st, c, ctx->priv) : tc_blocks_finish(&st.recv, -1, ctx->priv);
    tc_sc_blocks_free(&st);
    return rc;
}

/* The root's send side for the MPI's own, as bytes: the user's buffer
 * directly when its type is contiguous, else a staged copy (tc_blocks_init);
 * a Scatterv's counts and displacements, or *far when its blocks lie further
 * apart than an int displacement. Only the root calls. */
static int tc_sc_root_prepare(const tc_sc_call_t *c, tc_sc_io_state_t *st, int **counts,
                              const char **sbase, bool *far, MPI_Comm comm)
{
    int rc = tc_blocks_init(&st->send, c->sendbuf, c->size, c->sendcount, c->sendcounts, c->displs,
                            c->sendtype, TC_BLOCKS_READ | TC_BLOCKS_STAGE, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    const bool direct = st->send.mode == TC_BLOCKS_CONTIG;
    if (c->op != TC_OP_SCATTERV) {
        *sbase = direct ? tc_blocks_data(&st->send, 0) : st->send.staged;
        return MPI_SUCCESS;
    }
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int j = 0; j < c->size; j++) {
        if (c->bytes[j] == 0)
            continue;
        uintptr_t a = (uintptr_t)tc_blocks_data(&st->send, j);
        lo = a < lo ? a : lo;
        hi = a > hi ? a : hi;
    }
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
            c->bytes[j] == 0 ? 0 : (int)((uintptr_t)tc_blocks_data(&st->send, j) - lo);
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
 * as bytes straight from (into) the user's buffer (tc_blocks_span), and
 * reports the failure afterwards: nobody is left waiting for it. */
static int tc_sc_pmpi(const tc_sc_call_t *c, MPI_Comm comm)
{
    tc_sc_io_state_t st;
    int *counts = NULL;
    const char *sbase = NULL;
    const bool root = c->rank == c->root, v = c->op == TC_OP_SCATTERV;
    bool far = false;
    int rc = MPI_SUCCESS, rc_recv = MPI_SUCCESS;
    tc_blocks_none(&st.send);
    tc_blocks_none(&st.recv);
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
    if (big) {
        rc = v ? PMPI_Scatterv(c->sendbuf, c->sendcounts, c->displs, c->sendtype,
                               c->in_place ? MPI_IN_PLACE : c->recvbuf, c->recvcount, c->recvtype,
                               c->root, comm)
               : PMPI_Scatter(c->sendbuf, c->sendcount, c->sendtype,
                              c->in_place ? MPI_IN_PLACE : c->recvbuf, c->recvcount, c->recvtype,
                              c->root, comm);
        goto fn_exit;
    }
    void *recv = MPI_IN_PLACE;
    if (!c->in_place) {
        rc_recv = tc_blocks_init(&st.recv, c->recvbuf, 1, c->recvcount, NULL, NULL, c->recvtype,
                                 TC_BLOCKS_STAGE, comm);
        recv = rc_recv == MPI_SUCCESS
                   ? (void *)(uintptr_t)tc_blocks_data(&st.recv, 0)
                   : tc_blocks_span(c->recvbuf, (size_t)c->recvcount, c->recvtype, c->mine);
    }
    if (root && rc != MPI_SUCCESS) /* a Scatter's root: from the user's buffer */
        sbase = tc_blocks_span(c->sendbuf, (size_t)c->sendcount * (size_t)c->size, c->sendtype,
                               c->total);
    if ((rc_recv != MPI_SUCCESS && !recv && c->mine > 0) ||
        (root && rc != MPI_SUCCESS && !sbase && c->total > 0)) {
        /* Not even that (a send type whose elements overlap). */
        rc = rc != MPI_SUCCESS ? rc : rc_recv;
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
        rc = tc_blocks_finish(&st.recv, -1, comm);
fn_exit:
    free(counts);
    tc_sc_blocks_free(&st);
    return rc;
}

/* ---- checks and entry points --------------------------------------------------------- */

#define TC_SC_STACK_BLOCKS 64

/* What is checked (docs/allgather.md): the mirror of Gather(v): the root
 * (tc_err(TC_ERR_ROOT)), MPI_IN_PLACE (as recvbuf) only at the root
 * (tc_err(TC_ERR_BUFFER)), the send arguments at the root only. */
static int tc_sc_check(tc_sc_call_t *c, MPI_Comm comm, tc_ctx_t **cached, int *inter,
                       size_t *stack_bytes)
{
    int ssize = 0, rsize = 0;
    int rc_enter = tc_ctx_enter(comm, c->fn, cached, inter);
    if (rc_enter != MPI_SUCCESS)
        return rc_enter;
    tc_ctx_t *ctx = *cached;
    if (*inter)
        return MPI_SUCCESS; /* root semantics differ (MPI_ROOT, MPI_PROC_NULL): the MPI's own */
    if (ctx) {
        c->size = ctx->size;
        c->rank = ctx->rank;
    } else {
        PMPI_Comm_size(comm, &c->size);
        PMPI_Comm_rank(comm, &c->rank);
    }
    if (c->root < 0 || c->root >= c->size)
        return tc_ctx_fail(comm, tc_err(TC_ERR_ROOT), c->fn, "root out of range");
    const bool root = c->rank == c->root;
    c->in_place = c->recvbuf == MPI_IN_PLACE;
    if (c->in_place && !root)
        return tc_ctx_fail(comm, tc_err(TC_ERR_BUFFER), c->fn,
                           "MPI_IN_PLACE at a process other than the root");
    if (!c->in_place) {
        if (c->recvcount < 0)
            return tc_ctx_fail(comm, tc_err(TC_ERR_COUNT), c->fn, "negative recvcount");
        if (c->recvtype == MPI_DATATYPE_NULL ||
            tc_datatype_size(c->recvtype, &rsize) != MPI_SUCCESS)
            return tc_ctx_fail(comm, tc_err(TC_ERR_TYPE), c->fn, "invalid recvtype");
        c->mine = (size_t)c->recvcount * (size_t)rsize;
    }
    c->total = c->mine * (size_t)c->size;
    if (!root)
        return MPI_SUCCESS;
    if (c->op == TC_OP_SCATTER && c->sendcount < 0)
        return tc_ctx_fail(comm, tc_err(TC_ERR_COUNT), c->fn, "negative sendcount");
    if (c->sendtype == MPI_DATATYPE_NULL || tc_datatype_size(c->sendtype, &ssize) != MPI_SUCCESS)
        return tc_ctx_fail(comm, tc_err(TC_ERR_TYPE), c->fn, "invalid sendtype");
    size_t own;
    if (c->op == TC_OP_SCATTERV) {
        if (!c->sendcounts || !c->displs)
            return tc_ctx_fail(comm, tc_err(TC_ERR_ARG), c->fn, "sendcounts or displs is NULL");
        for (int j = 0; j < c->size; j++)
            if (c->sendcounts[j] < 0)
                return tc_ctx_fail(comm, tc_err(TC_ERR_COUNT), c->fn, "negative sendcounts[j]");
        c->bytes = stack_bytes;
        if (c->size > TC_SC_STACK_BLOCKS &&
            !(c->bytes = malloc((size_t)c->size * sizeof *c->bytes)))
            return tc_ctx_fail(comm, tc_err(TC_ERR_NOMEM), c->fn, "out of memory");
        c->total = 0;
        for (int j = 0; j < c->size; j++) {
            c->bytes[j] = (size_t)c->sendcounts[j] * (size_t)ssize;
            c->total += c->bytes[j];
        }
        own = c->bytes[c->rank];
    } else {
        own = (size_t)c->sendcount * (size_t)ssize;
        c->total = own * (size_t)c->size;
    }
    int rc = MPI_SUCCESS;
    if (c->in_place)
        c->mine = own;
    else if (c->mine != own)
        rc = tc_ctx_fail(comm, MPI_ERR_TRUNCATE, c->fn,
                         "recvcount x recvtype differs in size from the root's own block");
    else if (c->sendbuf == c->recvbuf && c->total > 0)
        rc = tc_ctx_fail(comm, tc_err(TC_ERR_BUFFER), c->fn,
                         "sendbuf and recvbuf alias (use MPI_IN_PLACE)");
    if (rc != MPI_SUCCESS && c->bytes != stack_bytes)
        free(c->bytes);
    if (rc != MPI_SUCCESS)
        c->bytes = NULL;
    return rc;
}

static __attribute__((noinline)) int tc_sc_dispatch(tc_ctx_t *ctx, tc_sc_call_t *c)
{
    int rc;
    if (c->size == 1 || (c->op == TC_OP_SCATTER && c->mine == 0)) {
        tc_stats_count(c->op, TC_PATH_TRIVIAL);
        if (c->rank != c->root || c->in_place || c->mine == 0)
            return MPI_SUCCESS;
        tc_sc_io_state_t st;
        if ((rc = tc_sc_blocks(&st, c, 0, ctx->comm)) == MPI_SUCCESS)
            rc = tc_sc_own(&st, c, ctx->comm);
        tc_sc_blocks_free(&st);
        return rc;
    }
    if (ctx->bcast_path == TC_PATH_SHM) {
        tc_race_call_t race;
        tc_race_impl_t impl = TC_RACE_TC;
        /* A Scatter's total is known everywhere: it races the MPI's own
         * (race.h); a Scatterv's is not, so it does not. */
        const bool races = c->op == TC_OP_SCATTER;
        if (races && (rc = tc_race_begin(&ctx->race, ctx->shm, ctx->priv, c->op, c->total, true,
                                         &race, &impl)) != MPI_SUCCESS)
            return rc;
        if (impl == TC_RACE_PMPI) {
            tc_stats_count(c->op, TC_PATH_PMPI_RACE);
            rc = tc_sc_pmpi(c, ctx->comm);
        } else {
            tc_stats_count(c->op, TC_PATH_SHM);
            rc = tc_sc_shm(ctx, c);
        }
        if (races)
            tc_race_end(&ctx->race, &race);
        return rc;
    }
    tc_path_t path = ctx->bcast_path;
    if (path == TC_PATH_HIER && ctx->hier) {
        tc_stats_count(c->op, TC_PATH_HIER);
        return tc_sc_hier(ctx, c);
    }
    if (path == TC_PATH_HIER)
        path = TC_PATH_PMPI_MULTINODE;
    tc_stats_count(c->op, path);
    return tc_sc_pmpi(c, ctx->comm);
}

static int tc_sc_run(tc_sc_call_t *c, MPI_Comm comm)
{
    int rc, inter = 0;
    tc_ctx_t *ctx;
    size_t stack_bytes[TC_SC_STACK_BLOCKS];
    if ((rc = tc_sc_check(c, comm, &ctx, &inter, stack_bytes)) != MPI_SUCCESS)
        return rc;
    if (inter) {
        tc_stats_count(c->op, TC_PATH_PMPI_INTERCOMM);
        if (c->op == TC_OP_SCATTERV)
            return PMPI_Scatterv(c->sendbuf, c->sendcounts, c->displs, c->sendtype, c->recvbuf,
                                 c->recvcount, c->recvtype, c->root, comm);
        return PMPI_Scatter(c->sendbuf, c->sendcount, c->sendtype, c->recvbuf, c->recvcount,
                            c->recvtype, c->root, comm);
    }
    if (!ctx && (rc = tc_ctx_get(comm, &ctx)) != MPI_SUCCESS)
        rc = tc_ctx_fail(comm, rc, c->fn, "could not create the context");
    else if ((rc = tc_sc_dispatch(ctx, c)) != MPI_SUCCESS)
        rc = tc_ctx_fail(comm, rc, c->fn, "failed");
    if (c->bytes && c->bytes != stack_bytes)
        free(c->bytes);
    return rc;
}

int TC_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    tc_sc_call_t c = {.fn = "TC_Scatter",
                      .op = TC_OP_SCATTER,
                      .sendbuf = sendbuf,
                      .sendcount = sendcount,
                      .sendtype = sendtype,
                      .recvbuf = recvbuf,
                      .recvcount = recvcount,
                      .recvtype = recvtype,
                      .root = root};
    return tc_sc_run(&c, comm);
}

int TC_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                int root, MPI_Comm comm)
{
    tc_sc_call_t c = {.fn = "TC_Scatterv",
                      .op = TC_OP_SCATTERV,
                      .sendbuf = sendbuf,
                      .sendcounts = sendcounts,
                      .displs = displs,
                      .sendtype = sendtype,
                      .recvbuf = recvbuf,
                      .recvcount = recvcount,
                      .recvtype = recvtype,
                      .root = root};
    return tc_sc_run(&c, comm);
}
