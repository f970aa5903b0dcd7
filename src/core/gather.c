/* TC_Gather and TC_Gatherv: argument checks, then the path agreed when the
 * context was made (docs/allgather.md).
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
#include "blocks.h"
#include "ctx.h"
#include "hier/level_gather.h"
#include "shm/allgather.h"
#include "topocoll.h"

typedef struct tc_ga_call {
    const char *fn;
    tc_op_t op;
    bool in_place; /* at the root */
    const void *sendbuf;
    int sendcount;
    MPI_Datatype sendtype;
    void *recvbuf; /* significant at the root only, as the four below */
    int recvcount;
    const int *recvcounts, *displs; /* Gatherv */
    MPI_Datatype recvtype;
    int root, rank, size;
    size_t mine;   /* this process's block */
    size_t *bytes; /* Gatherv, at the root: every block */
    size_t total;  /* at the root (and for a Gather everywhere) */
} tc_ga_call_t;

typedef struct tc_ga_io_state {
    tc_blocks_t send; /* our block */
    tc_blocks_t recv; /* the root: every block */
    bool root;        /* the hierarchy's io: the blocks are recv's (else our send block) */
} tc_ga_io_state_t;

static void tc_ga_put(void *state, int j, size_t off, char *dst, size_t n)
{
    (void)j;
    tc_blocks_read(&((tc_ga_io_state_t *)state)->send, 0, off, dst, n);
}
static void tc_ga_get(void *state, int j, size_t off, const char *src, size_t n)
{
    tc_blocks_write(&((tc_ga_io_state_t *)state)->recv, j, off, src, n);
}

static int tc_ga_blocks(tc_ga_io_state_t *st, const tc_ga_call_t *c, int flags, MPI_Comm comm)
{
    tc_blocks_none(&st->send);
    tc_blocks_none(&st->recv);
    tc_err_t rc = MPI_SUCCESS, rc2 = MPI_SUCCESS;
    if (!c->in_place)
        rc = tc_blocks_init(&st->send, c->sendbuf, 1, c->sendcount, NULL, NULL, c->sendtype,
                            TC_BLOCKS_READ | flags, comm);
    if (c->rank == c->root)
        rc2 = tc_blocks_init(&st->recv, c->recvbuf, c->size, c->recvcount, c->recvcounts, c->displs,
                             c->recvtype, flags, comm);
    return rc != MPI_SUCCESS ? rc : rc2;
}

static void tc_ga_blocks_free(tc_ga_io_state_t *st)
{
    tc_blocks_free(&st->send);
    tc_blocks_free(&st->recv);
}

/* The root: our own block into its place (not in place). */
static int tc_ga_own(tc_ga_io_state_t *st, const tc_ga_call_t *c)
{
    if (c->rank == c->root && !c->in_place && c->mine > 0)
        tc_blocks_copy(&st->recv, c->rank, &st->send, 0, c->mine);
    return MPI_SUCCESS;
}

/* Through the segment (one segment spans the communicator). */
static int tc_ga_shm(tc_ctx_t *ctx, const tc_ga_call_t *c)
{
    tc_ga_io_state_t st;
    int rc = tc_ga_blocks(&st, c, 0, ctx->priv);
    tc_shm_ag_io_t io = {tc_ga_put, tc_ga_get, &st};
    if (rc != MPI_SUCCESS) /* the others are in the collective already: take part */
        io = (tc_shm_ag_io_t){tc_shm_ag_put_zeros, tc_shm_ag_get_nothing, NULL};
    tc_shm_ag_sizes_t sz = {NULL, c->mine, c->mine};
    if (c->op == TC_OP_GATHERV) {
        /* Only the root knows every size: it tells the largest. */
        uint64_t max = 0;
        for (int j = 0; c->rank == c->root && j < c->size; j++)
            max = c->bytes[j] > max ? c->bytes[j] : max;
        tc_shm_bcast_pipelined(ctx->shm, &max, sizeof max, c->root, NULL);
        sz.max = (size_t)max;
        if (c->rank == c->root)
            sz.bytes = c->bytes;
    }
    tc_shm_allgather(ctx->shm, &sz, c->root, &io);
    if (rc == MPI_SUCCESS && c->rank == c->root) {
        tc_ga_own(&st, c);
        rc = tc_blocks_finish(&st.recv, c->in_place ? c->rank : -1, ctx->priv);
    }
    tc_ga_blocks_free(&st);
    return rc;
}

/* Block y in one piece (the hierarchy's io), or NULL. */
static char *tc_ga_addr(void *state, int y)
{
    tc_ga_io_state_t *st = state;
    const tc_blocks_t *b = st->root ? &st->recv : &st->send;
    return b->mode == TC_BLOCKS_MAPPED ? NULL
                                       : (char *)(uintptr_t)tc_blocks_data(b, st->root ? y : 0);
}

/* Through the hierarchy's groups (hier/level_gather.c). */
static int tc_ga_hier(tc_ctx_t *ctx, const tc_ga_call_t *c)
{
    tc_ga_io_state_t st;
    const bool root = c->rank == c->root;
    int rc = tc_ga_blocks(&st, c, 0, ctx->priv);
    st.root = root;
    tc_hier_ga_io_t io = {tc_ga_put, tc_ga_get, tc_ga_addr, &st};
    if (rc != MPI_SUCCESS) /* take part all the same (see tc_ga_shm) */
        io = (tc_hier_ga_io_t){tc_hier_ga_read_zeros, tc_hier_ga_write_nothing,
                               tc_hier_ga_addr_none, NULL};
    const bool v = c->op == TC_OP_GATHERV;
    tc_hier_ga_sizes_t sz = {v && root ? c->bytes : NULL, c->mine, v};
    int hrc = tc_hier_gather(ctx->hier, ctx->shm, ctx->priv, &sz, c->root, &io);
    if (rc == MPI_SUCCESS)
        rc = hrc;
    if (rc == MPI_SUCCESS && root) {
        tc_ga_own(&st, c);
        rc = tc_blocks_finish(&st.recv, c->in_place ? c->rank : -1, ctx->priv);
    }
    tc_ga_blocks_free(&st);
    return rc;
}

/* The root's receive side for the MPI's own, as bytes: the user's buffer
 * directly when its type is contiguous and (Gatherv) the blocks lie within an
 * int displacement of each other, else a staged copy (every block at its
 * prefix); in place, our own block copied into the staged copy. Only the
 * root calls; the sizes fit an int (decided before). */
static int tc_ga_root_prepare(const tc_ga_call_t *c, tc_ga_io_state_t *st, int **counts,
                              const char **rbase, bool *direct, MPI_Comm comm)
{
    int rc = tc_blocks_init(&st->recv, c->recvbuf, c->size, c->recvcount, c->recvcounts, c->displs,
                            c->recvtype, TC_BLOCKS_STAGE, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    *direct = st->recv.mode == TC_BLOCKS_CONTIG;
    if (c->op == TC_OP_GATHERV) {
        int *cnt = malloc(2 * (size_t)c->size * sizeof *cnt), *displs;
        if (!cnt)
            return tc_err(TC_ERR_NOMEM);
        *counts = cnt;
        displs = cnt + c->size;
        uintptr_t lo = UINTPTR_MAX, hi = 0;
        for (int j = 0; j < c->size; j++) {
            cnt[j] = (int)c->bytes[j];
            if (c->bytes[j] == 0)
                continue;
            uintptr_t a = (uintptr_t)tc_blocks_data(&st->recv, j);
            lo = a < lo ? a : lo;
            hi = a > hi ? a : hi;
        }
        if (!*direct || hi - lo > INT_MAX) {
            /* Staged: the offsets fit (the total does). A contiguous type
             * whose blocks lie far apart is staged here. */
            if (*direct && (rc = tc_blocks_stage_contig(&st->recv, false)) != TC_OK)
                return rc;
            *direct = false;
            lo = (uintptr_t)st->recv.staged;
        }
        for (int j = 0; j < c->size; j++)
            displs[j] = c->bytes[j] == 0 ? 0
                        : *direct        ? (int)((uintptr_t)tc_blocks_data(&st->recv, j) - lo)
                                         : (int)st->recv.prefix[j];
        *rbase = (const char *)lo;
    } else {
        *rbase = *direct ? tc_blocks_data(&st->recv, 0) : st->recv.staged;
    }
    if (c->in_place && !*direct && c->mine > 0) {
        /* Our block into the staged copy, at its place. */
        tc_blocks_t own;
        if ((rc = tc_blocks_init(&own, tc_blocks_origin(&st->recv, c->rank), 1,
                                 tc_blocks_count(&st->recv, c->rank), NULL, NULL, c->recvtype,
                                 TC_BLOCKS_READ | TC_BLOCKS_STAGE, comm)) == MPI_SUCCESS)
            memcpy(st->recv.staged + st->recv.prefix[c->rank], tc_blocks_data(&own, 0), c->mine);
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
 * (tc_blocks_span), and reports the failure afterwards: nobody is left
 * waiting for it. */
static int tc_ga_pmpi(const tc_ga_call_t *c, MPI_Comm comm)
{
    tc_ga_io_state_t st;
    int *counts = NULL;
    const char *rbase = NULL;
    const bool root = c->rank == c->root, v = c->op == TC_OP_GATHERV;
    bool direct = true;
    int rc = MPI_SUCCESS, rc_send = MPI_SUCCESS;
    tc_blocks_none(&st.send);
    tc_blocks_none(&st.recv);
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
    if (big) {
        rc = v ? PMPI_Gatherv(c->in_place ? MPI_IN_PLACE : c->sendbuf, c->sendcount, c->sendtype,
                              c->recvbuf, c->recvcounts, c->displs, c->recvtype, c->root, comm)
               : PMPI_Gather(c->in_place ? MPI_IN_PLACE : c->sendbuf, c->sendcount, c->sendtype,
                             c->recvbuf, c->recvcount, c->recvtype, c->root, comm);
        goto fn_exit;
    }
    const void *send = MPI_IN_PLACE;
    if (!c->in_place) {
        rc_send = tc_blocks_init(&st.send, c->sendbuf, 1, c->sendcount, NULL, NULL, c->sendtype,
                                 TC_BLOCKS_READ | TC_BLOCKS_STAGE, comm);
        send = rc_send == MPI_SUCCESS
                   ? tc_blocks_data(&st.send, 0)
                   : tc_blocks_span(c->sendbuf, (size_t)c->sendcount, c->sendtype, c->mine);
    }
    if (root && rc != MPI_SUCCESS) /* a Gather's root: into the user's buffer */
        rbase = tc_blocks_span(c->recvbuf, (size_t)c->recvcount * (size_t)c->size, c->recvtype,
                               c->total);
    if ((rc_send != MPI_SUCCESS && !send && c->mine > 0) ||
        (root && rc != MPI_SUCCESS && !rbase && c->total > 0)) {
        /* Not even that (a send type whose elements overlap). */
        rc = rc != MPI_SUCCESS ? rc : rc_send;
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
        rc = tc_blocks_finish(&st.recv, c->in_place ? c->rank : -1, comm);
fn_exit:
    free(counts);
    tc_ga_blocks_free(&st);
    return rc;
}

/* ---- checks and entry points --------------------------------------------------------- */

#define TC_GA_STACK_BLOCKS 64

/* What is checked (docs/allgather.md): as for Allgather(v), plus the root
 * (tc_err(TC_ERR_ROOT)), MPI_IN_PLACE only at the root (tc_err(TC_ERR_BUFFER)), and the
 * receive arguments at the root only (they are not significant elsewhere). */
static int tc_ga_check(tc_ga_call_t *c, MPI_Comm comm, tc_ctx_t **cached, int *inter,
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
    c->in_place = c->sendbuf == MPI_IN_PLACE;
    if (c->in_place && !root)
        return tc_ctx_fail(comm, tc_err(TC_ERR_BUFFER), c->fn,
                           "MPI_IN_PLACE at a process other than the root");
    if (!c->in_place) {
        if (c->sendcount < 0)
            return tc_ctx_fail(comm, tc_err(TC_ERR_COUNT), c->fn, "negative sendcount");
        if (c->sendtype == MPI_DATATYPE_NULL ||
            tc_datatype_size(c->sendtype, &ssize) != MPI_SUCCESS)
            return tc_ctx_fail(comm, tc_err(TC_ERR_TYPE), c->fn, "invalid sendtype");
        c->mine = (size_t)c->sendcount * (size_t)ssize;
    }
    c->total = c->mine * (size_t)c->size;
    if (!root)
        return MPI_SUCCESS;
    if (c->op == TC_OP_GATHER && c->recvcount < 0)
        return tc_ctx_fail(comm, tc_err(TC_ERR_COUNT), c->fn, "negative recvcount");
    if (c->recvtype == MPI_DATATYPE_NULL || tc_datatype_size(c->recvtype, &rsize) != MPI_SUCCESS)
        return tc_ctx_fail(comm, tc_err(TC_ERR_TYPE), c->fn, "invalid recvtype");
    size_t own;
    if (c->op == TC_OP_GATHERV) {
        if (!c->recvcounts || !c->displs)
            return tc_ctx_fail(comm, tc_err(TC_ERR_ARG), c->fn, "recvcounts or displs is NULL");
        for (int j = 0; j < c->size; j++)
            if (c->recvcounts[j] < 0)
                return tc_ctx_fail(comm, tc_err(TC_ERR_COUNT), c->fn, "negative recvcounts[j]");
        c->bytes = stack_bytes;
        if (c->size > TC_GA_STACK_BLOCKS &&
            !(c->bytes = malloc((size_t)c->size * sizeof *c->bytes)))
            return tc_ctx_fail(comm, tc_err(TC_ERR_NOMEM), c->fn, "out of memory");
        c->total = 0;
        for (int j = 0; j < c->size; j++) {
            c->bytes[j] = (size_t)c->recvcounts[j] * (size_t)rsize;
            c->total += c->bytes[j];
        }
        own = c->bytes[c->rank];
    } else {
        own = (size_t)c->recvcount * (size_t)rsize;
        c->total = own * (size_t)c->size;
    }
    int rc = MPI_SUCCESS;
    if (c->in_place)
        c->mine = own;
    else if (c->mine != own)
        rc = tc_ctx_fail(comm, MPI_ERR_TRUNCATE, c->fn,
                         "sendcount x sendtype differs in size from the root's own block");
    else if (c->sendbuf == c->recvbuf && c->total > 0)
        rc = tc_ctx_fail(comm, tc_err(TC_ERR_BUFFER), c->fn,
                         "sendbuf and recvbuf alias (use MPI_IN_PLACE)");
    if (rc != MPI_SUCCESS && c->bytes != stack_bytes)
        free(c->bytes);
    if (rc != MPI_SUCCESS)
        c->bytes = NULL;
    return rc;
}

static __attribute__((noinline)) int tc_ga_dispatch(tc_ctx_t *ctx, tc_ga_call_t *c)
{
    int rc;
    const bool root = c->rank == c->root;
    if (c->size == 1 || (c->op == TC_OP_GATHER && c->mine == 0)) {
        tc_stats_count(c->op, TC_PATH_TRIVIAL);
        if (!root || c->in_place || c->mine == 0)
            return MPI_SUCCESS;
        tc_ga_io_state_t st;
        if ((rc = tc_ga_blocks(&st, c, 0, ctx->comm)) == MPI_SUCCESS) {
            tc_ga_own(&st, c);
            rc = tc_blocks_finish(&st.recv, -1, ctx->comm);
        }
        tc_ga_blocks_free(&st);
        return rc;
    }
    if (ctx->bcast_path == TC_PATH_SHM) {
        tc_race_call_t race;
        tc_race_impl_t impl = TC_RACE_TC;
        /* A Gather's total is known everywhere: it races the MPI's own
         * (race.h); a Gatherv's is not, so it does not. */
        const bool races = c->op == TC_OP_GATHER;
        if (races && (rc = tc_race_begin(&ctx->race, ctx->shm, ctx->priv, c->op, c->total, true,
                                         &race, &impl)) != MPI_SUCCESS)
            return rc;
        if (impl == TC_RACE_PMPI) {
            tc_stats_count(c->op, TC_PATH_PMPI_RACE);
            rc = tc_ga_pmpi(c, ctx->comm);
        } else {
            tc_stats_count(c->op, TC_PATH_SHM);
            rc = tc_ga_shm(ctx, c);
        }
        if (races)
            tc_race_end(&ctx->race, &race);
        return rc;
    }
    tc_path_t path = ctx->bcast_path;
    if (path == TC_PATH_HIER && ctx->hier) {
        tc_stats_count(c->op, TC_PATH_HIER);
        return tc_ga_hier(ctx, c);
    }
    if (path == TC_PATH_HIER)
        path = TC_PATH_PMPI_MULTINODE;
    tc_stats_count(c->op, path);
    return tc_ga_pmpi(c, ctx->comm);
}

static int tc_ga_run(tc_ga_call_t *c, MPI_Comm comm)
{
    int rc, inter = 0;
    tc_ctx_t *ctx;
    size_t stack_bytes[TC_GA_STACK_BLOCKS];
    if ((rc = tc_ga_check(c, comm, &ctx, &inter, stack_bytes)) != MPI_SUCCESS)
        return rc;
    if (inter) {
        tc_stats_count(c->op, TC_PATH_PMPI_INTERCOMM);
        if (c->op == TC_OP_GATHERV)
            return PMPI_Gatherv(c->sendbuf, c->sendcount, c->sendtype, c->recvbuf, c->recvcounts,
                                c->displs, c->recvtype, c->root, comm);
        return PMPI_Gather(c->sendbuf, c->sendcount, c->sendtype, c->recvbuf, c->recvcount,
                           c->recvtype, c->root, comm);
    }
    if (!ctx && (rc = tc_ctx_get(comm, &ctx)) != MPI_SUCCESS)
        rc = tc_ctx_fail(comm, rc, c->fn, "could not create the context");
    else if ((rc = tc_ga_dispatch(ctx, c)) != MPI_SUCCESS)
        rc = tc_ctx_fail(comm, rc, c->fn, "failed");
    if (c->bytes && c->bytes != stack_bytes)
        free(c->bytes);
    return rc;
}

int TC_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
              int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    tc_ga_call_t c = {.fn = "TC_Gather",
                      .op = TC_OP_GATHER,
                      .sendbuf = sendbuf,
                      .sendcount = sendcount,
                      .sendtype = sendtype,
                      .recvbuf = recvbuf,
                      .recvcount = recvcount,
                      .recvtype = recvtype,
                      .root = root};
    return tc_ga_run(&c, comm);
}

int TC_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
               MPI_Comm comm)
{
    tc_ga_call_t c = {.fn = "TC_Gatherv",
                      .op = TC_OP_GATHERV,
                      .sendbuf = sendbuf,
                      .sendcount = sendcount,
                      .sendtype = sendtype,
                      .recvbuf = recvbuf,
                      .recvcounts = recvcounts,
                      .displs = displs,
                      .recvtype = recvtype,
                      .root = root};
    return tc_ga_run(&c, comm);
}
