/* TC_Allgather and TC_Allgatherv: argument checks, then the path agreed when
 * the context was made (docs/allgather.md).
 *
 * Every block is handled as the byte stream of its type signature: the
 * sender's (sendcount, sendtype) and each receiver's (recvcounts[j],
 * recvtype) at displs[j] are each either contiguous bytes, a flattened type
 * map walked with a cursor, or (types the flattener does not know) staged
 * through MPI_Pack / MPI_Unpack. These choices are local: ranks may use
 * different datatypes of the same signature.
 *
 * Whatever goes to the MPI's own collective (the race, and the paths that
 * do not use the segment) goes as bytes: MPI_BYTE on every rank, the
 * sender's block contiguous (staged if needed), the receive buffer direct
 * when its type is contiguous, else a staged copy. That steers around two
 * bugs of the MPIs installed here: MPICH 4.0.2's MPI_Allgatherv fails when
 * ranks receive with different datatypes of the same signature (and ignores
 * displs[0] on one process: one process never reaches the MPI here), and
 * Open MPI 4.1.4's hangs when a rank's send and receive types differ in
 * size. Intercommunicators go to the MPI's own unchanged.
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
#include "hier/hier_allgather.h"
#include "shm/allgather.h"
#include "topocoll.h"

/* One call's arguments, MPI_IN_PLACE resolved: the send side is then this
 * process's own block of the receive buffer. */
typedef struct tc_ag_call {
    const char *fn; /* "TC_Allgather" or "TC_Allgatherv", for messages */
    tc_op_t op;
    bool in_place;
    const void *sendbuf;
    int sendcount;
    MPI_Datatype sendtype;
    void *recvbuf;
    int recvcount;                  /* Allgather */
    const int *recvcounts, *displs; /* Allgatherv; NULL for Allgather */
    MPI_Datatype recvtype;
    int rsize;     /* recvtype's size */
    size_t block;  /* Allgather: bytes of every block */
    size_t *bytes; /* Allgatherv: bytes of block j; NULL for Allgather */
    size_t total;  /* bytes of all blocks */
    int rank, size;
} tc_ag_call_t;

static inline int tc_ag_count(const tc_ag_call_t *c, int j)
{
    return c->recvcounts ? c->recvcounts[j] : c->recvcount;
}
static inline size_t tc_ag_block_bytes(const tc_ag_call_t *c, int j)
{
    return c->bytes ? c->bytes[j] : c->block;
}

/* Blocks of at most this many processes' sizes live on the stack. */
#define TC_AG_STACK_BLOCKS 64

/* ---- the paths --------------------------------------------------------------------- */

typedef struct tc_ag_io_state {
    tc_blocks_t send; /* our block (one) */
    tc_blocks_t recv; /* every block */
} tc_ag_io_state_t;

static void tc_ag_put(void *state, int j, size_t off, char *dst, size_t n)
{
    (void)j;
    tc_blocks_read(&((tc_ag_io_state_t *)state)->send, 0, off, dst, n);
}
static void tc_ag_get(void *state, int j, size_t off, const char *src, size_t n)
{
    tc_blocks_write(&((tc_ag_io_state_t *)state)->recv, j, off, src, n);
}

static int tc_ag_blocks(tc_ag_io_state_t *st, const tc_ag_call_t *c, int sflags, int rflags,
                        MPI_Comm comm)
{
    int rc = tc_blocks_init(&st->send, c->sendbuf, 1, c->sendcount, NULL, NULL, c->sendtype,
                            TC_BLOCKS_READ | sflags, comm);
    int rc2 = tc_blocks_init(&st->recv, c->recvbuf, c->size, c->recvcount, c->recvcounts, c->displs,
                             c->recvtype, rflags, comm);
    return rc != MPI_SUCCESS ? rc : rc2;
}

static void tc_ag_blocks_free(tc_ag_io_state_t *st)
{
    tc_blocks_free(&st->send);
    tc_blocks_free(&st->recv);
}

/* Contiguous predefined types on both sides (the common case): the blocks
 * straight from and into the user's buffers, without block sets (as
 * alltoall.c's direct path; a local choice, the protocol is the same). */
static int tc_ag_shm_direct(tc_ctx_t *ctx, const tc_ag_call_t *c, size_t esize)
{
    const tc_blocks_direct_t d = {c->sendbuf, c->recvbuf, c->displs, c->recvcount, (MPI_Aint)esize};
    const size_t mine = tc_ag_block_bytes(c, c->rank);
    const tc_shm_ag_io_t io = {tc_blocks_direct_read_one, tc_blocks_direct_write_all,
                               (void *)(uintptr_t)&d};
    tc_shm_ag_sizes_t sz = {c->bytes, c->block, c->bytes ? 0 : c->block};
    for (int j = 0; c->bytes && j < c->size; j++)
        sz.max = c->bytes[j] > sz.max ? c->bytes[j] : sz.max;
    tc_shm_allgather(ctx->shm, &sz, -1, &io);
    if (!c->in_place && mine > 0)
        memmove(tc_blocks_direct_at(&d, c->rank), d.one, mine);
    return MPI_SUCCESS;
}

/* Through the segment (one segment spans the communicator). */
static int tc_ag_shm(tc_ctx_t *ctx, const tc_ag_call_t *c)
{
    /* In place, sendtype is recvtype (tc_ag_dispatch). */
    const tc_dt_entry_t *se = tc_datatype_known(c->sendtype), *re = tc_datatype_known(c->recvtype);
    if (se && re && se->contig && re->contig)
        return tc_ag_shm_direct(ctx, c, (size_t)re->size);
    tc_ag_io_state_t st;
    const size_t mine = tc_ag_block_bytes(c, c->rank);
    int rc = tc_ag_blocks(&st, c, 0, 0, ctx->priv);
    tc_shm_ag_io_t io = {tc_ag_put, tc_ag_get, &st};
    if (rc != MPI_SUCCESS) /* the others are in the collective already: take part */
        io = (tc_shm_ag_io_t){tc_shm_ag_put_zeros, tc_shm_ag_get_nothing, NULL};
    tc_shm_ag_sizes_t sz = {c->bytes, c->block, c->bytes ? 0 : c->block};
    for (int j = 0; c->bytes && j < c->size; j++)
        sz.max = c->bytes[j] > sz.max ? c->bytes[j] : sz.max;
    tc_shm_allgather(ctx->shm, &sz, -1, &io);
    if (rc == MPI_SUCCESS) {
        if (!c->in_place && mine > 0)
            tc_blocks_copy(&st.recv, c->rank, &st.send, 0, mine);
        rc = tc_blocks_finish(&st.recv, c->in_place ? c->rank : -1, ctx->priv);
    }
    tc_ag_blocks_free(&st);
    return rc;
}

/* The stream of the whole result (every block in rank order, ours
 * included), for a process that takes it straight from the segment
 * (hier_allgather.h's deliver): into the receive buffer, our block skipped. */
typedef struct tc_ag_stream {
    tc_blocks_t *recv;
    const size_t *bytes;
    int j, me, p;
    size_t off;
} tc_ag_stream_t;

static void tc_ag_stream_scatter(void *state, const char *src, size_t n)
{
    tc_ag_stream_t *s = state;
    while (n > 0 && s->j < s->p) {
        const size_t b = s->bytes[s->j];
        if (s->off == b) {
            s->j++;
            s->off = 0;
            continue;
        }
        const size_t k = b - s->off < n ? b - s->off : n;
        if (s->j != s->me)
            tc_blocks_write(s->recv, s->j, s->off, src, k);
        s->off += k;
        src += k;
        n -= k;
    }
}

static void tc_ag_stream_gather(void *state, char *dst, size_t n)
{
    (void)state; /* only the segment group's leader reads, and it passes no copier */
    memset(dst, 0, n);
}

/* The receive buffer as R (hier_allgather.h) when its type is contiguous
 * and its blocks lie back to back in rank order (a plain Allgather, or
 * displacements that are the running sum of the counts); else NULL. */
static char *tc_ag_as_r(const tc_blocks_t *recv, const size_t *bytes, const size_t *prefix, int p)
{
    char *base = NULL;
    if (recv->mode != TC_BLOCKS_CONTIG)
        return NULL;
    for (int j = 0; j < p; j++) {
        if (bytes[j] == 0)
            continue;
        char *at = (char *)(uintptr_t)tc_blocks_data(recv, j);
        if (!base)
            base = at - prefix[j];
        else if (at != base + prefix[j])
            return NULL;
    }
    return base;
}

/* Through the hierarchy (hier_allgather.h): the blocks as one rank-ordered
 * buffer R, either the receive buffer itself or the hierarchy's scratch
 * (then copied out, or taken from the segment straight into the receive
 * buffer by the processes whose only group the segment serves). */
static int tc_ag_hier(tc_ctx_t *ctx, const tc_ag_call_t *c)
{
    tc_ag_io_state_t st;
    const int p = c->size, me = c->rank;
    const size_t mine = tc_ag_block_bytes(c, me);
    size_t stack[2 * TC_AG_STACK_BLOCKS + 1];
    size_t *bytes = stack;
    if (p > TC_AG_STACK_BLOCKS && !(bytes = malloc((2 * (size_t)p + 1) * sizeof *bytes)))
        return tc_err(TC_ERR_NOMEM);
    size_t *prefix = bytes + p;
    prefix[0] = 0;
    for (int j = 0; j < p; j++) {
        bytes[j] = tc_ag_block_bytes(c, j);
        prefix[j + 1] = prefix[j] + bytes[j];
    }
    int rc = tc_ag_blocks(&st, c, 0, 0, ctx->priv);
    /* A process whose buffers could not be prepared still takes part (the
     * others are in the collective already) and returns the error. */
    const bool ok = rc == MPI_SUCCESS;
    char *r = ok ? tc_ag_as_r(&st.recv, bytes, prefix, p) : NULL;
    const bool alias = r != NULL;
    if (!r && !(r = tc_hier_allgather_scratch(ctx->hier, c->total))) {
        rc = tc_err(TC_ERR_NOMEM);
        goto fn_exit;
    }
    if (!ok)
        memset(r + prefix[me], 0, mine);
    else if (!(alias && c->in_place) && mine > 0)
        tc_blocks_read(&st.send, 0, 0, r + prefix[me], mine);
    tc_ag_stream_t stream = {&st.recv, bytes, 0, me, p, 0};
    tc_shm_copier_t copier = {tc_ag_stream_gather, tc_ag_stream_scatter, &stream};
    bool delivered = false;
    tc_err_t hrc = tc_hier_allgatherv(ctx->hier, ctx->shm, ctx->priv, r, bytes, prefix,
                                      ok && !alias ? &copier : NULL, &delivered);
    if (!ok)
        goto fn_exit;
    if (hrc != TC_OK) {
        rc = hrc;
        goto fn_exit;
    }
    for (int j = 0; j < p && !alias && !delivered; j++)
        if (j != me && bytes[j] > 0)
            tc_blocks_write(&st.recv, j, 0, r + prefix[j], bytes[j]);
    if (!alias && !c->in_place && mine > 0)
        tc_blocks_copy(&st.recv, me, &st.send, 0, mine);
    rc = tc_blocks_finish(&st.recv, c->in_place ? me : -1, ctx->priv);
fn_exit:
    tc_ag_blocks_free(&st);
    if (bytes != stack)
        free(bytes);
    return rc;
}

/* One process: our block into its place. */
static int tc_ag_single(const tc_ag_call_t *c, MPI_Comm comm)
{
    tc_ag_io_state_t st;
    const size_t mine = tc_ag_block_bytes(c, c->rank);
    if (c->in_place || mine == 0)
        return MPI_SUCCESS;
    int rc = tc_ag_blocks(&st, c, 0, 0, comm);
    if (rc == MPI_SUCCESS) {
        tc_blocks_copy(&st.recv, c->rank, &st.send, 0, mine);
        rc = tc_blocks_finish(&st.recv, -1, comm);
    }
    tc_ag_blocks_free(&st);
    return rc;
}

/* The MPI's own, as bytes (see the top of the file). */
static int tc_ag_pmpi(const tc_ag_call_t *c, MPI_Comm comm)
{
    tc_ag_io_state_t st;
    const size_t mine = tc_ag_block_bytes(c, c->rank);
    int *counts = NULL, *displs = NULL;
    const char *rbase = NULL;
    /* Bytes in an int count or an int displacement into the staged copy: the
     * block sizes and their total are the same on every process, so when they
     * do not fit, every process hands the MPI the call as the user made it
     * (MPI allows such calls with derived types); otherwise the byte form
     * below always fits (staged when the receive type or the addresses of
     * this process's blocks are not expressible), so no process can fail
     * alone while the others wait in the MPI's collective. */
    bool big = c->bytes ? c->total > INT_MAX : c->block > INT_MAX;
    for (int j = 0; c->bytes && !big && j < c->size; j++)
        big = c->bytes[j] > INT_MAX;
    if (big) {
        if (c->recvcounts)
            return PMPI_Allgatherv(c->in_place ? MPI_IN_PLACE : c->sendbuf, c->sendcount,
                                   c->sendtype, c->recvbuf, c->recvcounts, c->displs, c->recvtype,
                                   comm);
        return PMPI_Allgather(c->in_place ? MPI_IN_PLACE : c->sendbuf, c->sendcount, c->sendtype,
                              c->recvbuf, c->recvcount, c->recvtype, comm);
    }
    int rc = tc_ag_blocks(&st, c, TC_BLOCKS_STAGE, TC_BLOCKS_STAGE, comm);
    if (rc != MPI_SUCCESS)
        goto fn_exit;
    /* The receive buffer directly when its type is contiguous and every
     * block's byte position fits MPI's int displacements from the lowest. */
    bool direct = st.recv.mode == TC_BLOCKS_CONTIG;
    if (c->bytes) {
        if (!(counts = malloc(2 * (size_t)c->size * sizeof *counts))) {
            rc = tc_err(TC_ERR_NOMEM);
            goto fn_exit;
        }
        displs = counts + c->size;
        uintptr_t lo = UINTPTR_MAX, hi = 0;
        for (int j = 0; j < c->size; j++) {
            counts[j] = (int)c->bytes[j]; /* fits: checked above */
            if (c->bytes[j] == 0)
                continue;
            uintptr_t a = (uintptr_t)tc_blocks_data(&st.recv, j);
            lo = a < lo ? a : lo;
            hi = a > hi ? a : hi;
        }
        if (!direct || hi - lo > INT_MAX) {
            /* Staged: the total fits (checked above), so do the offsets. A
             * contiguous type whose blocks lie far apart is staged here. */
            if (direct && (rc = tc_blocks_stage_contig(&st.recv, false)) != TC_OK)
                goto fn_exit;
            direct = false;
            lo = (uintptr_t)st.recv.staged;
        }
        for (int j = 0; j < c->size; j++)
            displs[j] = c->bytes[j] == 0 ? 0
                        : direct         ? (int)((uintptr_t)tc_blocks_data(&st.recv, j) - lo)
                                         : (int)st.recv.prefix[j];
        rbase = (const char *)lo;
    } else {
        rbase = direct ? tc_blocks_data(&st.recv, 0) : st.recv.staged;
    }
    const void *send = tc_blocks_data(&st.send, 0);
    if (c->in_place) {
        send = MPI_IN_PLACE;
        if (!direct && mine > 0) /* our block into the staged copy, at its place */
            memcpy(st.recv.staged + st.recv.prefix[c->rank], tc_blocks_data(&st.send, 0), mine);
    }
    if (c->bytes)
        rc = PMPI_Allgatherv(send, (int)mine, MPI_BYTE, (void *)(uintptr_t)rbase, counts, displs,
                             MPI_BYTE, comm);
    else
        rc = PMPI_Allgather(send, (int)mine, MPI_BYTE, (void *)(uintptr_t)rbase, (int)c->block,
                            MPI_BYTE, comm);
    if (rc == MPI_SUCCESS && !direct)
        rc = tc_blocks_finish(&st.recv, c->in_place ? c->rank : -1, comm);
fn_exit:
    free(counts);
    tc_ag_blocks_free(&st);
    return rc;
}

/* ---- checks and entry points --------------------------------------------------------- */

/* Everything that is checked, before anything moves (docs/allgather.md):
 * the communicator; sendcount >= 0 and a valid sendtype (unless
 * MPI_IN_PLACE); recvcount or every recvcounts[j] >= 0, recvcounts and displs
 * not NULL, a valid recvtype; sendbuf not the same address as recvbuf (use
 * MPI_IN_PLACE); and that this process's send signature has as many bytes as
 * its own block of the receive buffer (MPI_ERR_TRUNCATE otherwise). Only
 * local facts can be checked: a process whose counts disagree with the
 * others' is not detected, and when one process returns an error here the
 * others wait in the collective (until TC_WAIT_TIMEOUT), as when a process
 * skips a collective. On success *inter tells the caller to hand the call to
 * the MPI's own, else c->bytes (v), c->block and c->total are set. */
static int tc_ag_check(tc_ag_call_t *c, MPI_Comm comm, tc_ctx_t **cached, int *inter,
                       size_t *stack_bytes)
{
    int ssize = 0;
    int rc_enter = tc_ctx_enter(comm, c->fn, cached, inter);
    if (rc_enter != MPI_SUCCESS)
        return rc_enter;
    const tc_ctx_t *ctx = *cached;
    c->in_place = c->sendbuf == MPI_IN_PLACE;
    if (!c->in_place) {
        if (c->sendcount < 0)
            return tc_ctx_fail(comm, tc_err(TC_ERR_COUNT), c->fn, "negative sendcount");
        if (c->sendtype == MPI_DATATYPE_NULL ||
            tc_datatype_size(c->sendtype, &ssize) != MPI_SUCCESS)
            return tc_ctx_fail(comm, tc_err(TC_ERR_TYPE), c->fn, "invalid sendtype");
    }
    if (c->op == TC_OP_ALLGATHER && c->recvcount < 0)
        return tc_ctx_fail(comm, tc_err(TC_ERR_COUNT), c->fn, "negative recvcount");
    if (c->recvtype == MPI_DATATYPE_NULL || tc_datatype_size(c->recvtype, &c->rsize) != MPI_SUCCESS)
        return tc_ctx_fail(comm, tc_err(TC_ERR_TYPE), c->fn, "invalid recvtype");
    if (*inter)
        return MPI_SUCCESS; /* the MPI's own, unchanged */
    tc_ctx_rank_size(ctx, comm, &c->rank, &c->size);
    size_t mine;
    if (c->op == TC_OP_ALLGATHERV) {
        int rc_counts =
            tc_ctx_check_counts(comm, c->fn, "recv", c->recvcounts, c->displs, c->size, c->rsize,
                                stack_bytes, TC_AG_STACK_BLOCKS, &c->bytes, &c->total);
        if (rc_counts != MPI_SUCCESS)
            return rc_counts;
        mine = c->bytes[c->rank];
    } else {
        c->block = mine = (size_t)c->recvcount * (size_t)c->rsize;
        c->total = c->block * (size_t)c->size;
    }
    int rc = MPI_SUCCESS;
    if (!c->in_place && (size_t)c->sendcount * (size_t)ssize != mine)
        rc = tc_ctx_fail(comm, MPI_ERR_TRUNCATE, c->fn,
                         "sendcount x sendtype differs in size from this process's block of the "
                         "receive buffer");
    else if (!c->in_place && c->sendbuf == c->recvbuf && c->total > 0)
        rc = tc_ctx_fail(comm, tc_err(TC_ERR_BUFFER), c->fn,
                         "sendbuf and recvbuf alias (use MPI_IN_PLACE)");
    if (rc != MPI_SUCCESS && c->bytes != stack_bytes)
        free(c->bytes);
    return rc;
}

static MPI_Aint tc_ag_extent(MPI_Datatype dt)
{
    const tc_dt_entry_t *e = tc_datatype_known(dt);
    MPI_Aint lb, extent;
    if (e && e->contig)
        return e->size;
    PMPI_Type_get_extent(dt, &lb, &extent);
    return extent;
}

/* Both operations after the checks. */
static __attribute__((noinline)) int tc_ag_dispatch(tc_ctx_t *ctx, tc_ag_call_t *c)
{
    int rc;
    if (c->in_place) {
        /* Our block is already in the receive buffer: send it from there. */
        c->sendcount = tc_ag_count(c, c->rank);
        c->sendtype = c->recvtype;
        const MPI_Aint d = c->displs ? c->displs[c->rank] : (MPI_Aint)c->rank * c->recvcount;
        /* Integer arithmetic: with MPI_BOTTOM, d * extent is an address. */
        c->sendbuf =
            (const char *)((uintptr_t)c->recvbuf + (uintptr_t)(d * tc_ag_extent(c->recvtype)));
    }
    if (tc_log_level >= TC_LOG_TRACE)
        tc_log(
            TC_LOG_TRACE, "%s on %s: %zu bytes in all, path %s", c->fn, ctx->comm_name, c->total,
            tc_stats_path_name(c->total == 0 || c->size == 1 ? TC_PATH_TRIVIAL : ctx->bcast_path));
    if (c->total == 0 || c->size == 1) {
        tc_stats_count(c->op, TC_PATH_TRIVIAL);
        return tc_ag_single(c, ctx->comm);
    }
    /* The hierarchy moves the whole result as one run of bytes in int
     * counts: a larger total (the same on every process) goes to the MPI's
     * own, which takes it as the user gave it. */
    const bool hier = ctx->bcast_path == TC_PATH_HIER && ctx->hier && c->total <= INT_MAX;
    if (ctx->bcast_path == TC_PATH_SHM || hier) {
        /* Large messages: the library's path or the MPI's own, whichever
         * the race (race.h) has measured faster (the bytes are the same). */
        tc_race_call_t race;
        tc_race_impl_t impl;
        if ((rc = tc_race_begin(&ctx->race, hier ? NULL : ctx->shm, ctx->priv, c->op, c->total,
                                true, &race, &impl)) != MPI_SUCCESS)
            return rc;
        if (impl == TC_RACE_PMPI) {
            tc_stats_count(c->op, TC_PATH_PMPI_RACE);
            rc = tc_ag_pmpi(c, ctx->comm);
        } else {
            tc_stats_count(c->op, ctx->bcast_path);
            rc = hier ? tc_ag_hier(ctx, c) : tc_ag_shm(ctx, c);
        }
        tc_race_end(&ctx->race, &race);
        return rc;
    }
    tc_path_t path = ctx->bcast_path;
    if (path == TC_PATH_HIER) {
        /* Beyond an int in all (see above). */
        static bool logged;
        tc_log_once(logged, TC_LOG_INFO,
                    "%s: Allgather(v) of more than INT_MAX bytes in all over several hierarchy "
                    "levels uses the MPI's own",
                    ctx->comm_name);
        path = TC_PATH_PMPI_MULTINODE;
    }
    tc_stats_count(c->op, path);
    return tc_ag_pmpi(c, ctx->comm);
}

static int tc_ag_run(tc_ag_call_t *c, MPI_Comm comm)
{
    int rc, inter = 0;
    tc_ctx_t *ctx;
    size_t stack_bytes[TC_AG_STACK_BLOCKS];
    if ((rc = tc_ag_check(c, comm, &ctx, &inter, stack_bytes)) != MPI_SUCCESS)
        return rc;
    if (inter) {
        tc_stats_count(c->op, TC_PATH_PMPI_INTERCOMM);
        if (c->op == TC_OP_ALLGATHERV)
            return PMPI_Allgatherv(c->sendbuf, c->sendcount, c->sendtype, c->recvbuf, c->recvcounts,
                                   c->displs, c->recvtype, comm);
        return PMPI_Allgather(c->sendbuf, c->sendcount, c->sendtype, c->recvbuf, c->recvcount,
                              c->recvtype, comm);
    }
    if (!ctx && (rc = tc_ctx_get(comm, &ctx)) != MPI_SUCCESS)
        rc = tc_ctx_fail(comm, rc, c->fn, "could not create the context");
    else if ((rc = tc_ag_dispatch(ctx, c)) != MPI_SUCCESS)
        rc = tc_ctx_fail(comm, rc, c->fn, "failed");
    if (c->bytes && c->bytes != stack_bytes)
        free(c->bytes);
    return rc;
}

int TC_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    tc_ag_call_t c = {.fn = "TC_Allgather",
                      .op = TC_OP_ALLGATHER,
                      .sendbuf = sendbuf,
                      .sendcount = sendcount,
                      .sendtype = sendtype,
                      .recvbuf = recvbuf,
                      .recvcount = recvcount,
                      .recvtype = recvtype};
    return tc_ag_run(&c, comm);
}

int TC_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    tc_ag_call_t c = {.fn = "TC_Allgatherv",
                      .op = TC_OP_ALLGATHERV,
                      .sendbuf = sendbuf,
                      .sendcount = sendcount,
                      .sendtype = sendtype,
                      .recvbuf = recvbuf,
                      .recvcounts = recvcounts,
                      .displs = displs,
                      .recvtype = recvtype};
    return tc_ag_run(&c, comm);
}
