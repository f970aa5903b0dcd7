/* TC_Alltoall and TC_Alltoallv: argument checks, then the path agreed when
 * the context was made (docs/alltoall.md).
 *
 * Every block is handled as the byte stream of its type signature, as in
 * allgather.c (blocks.h): the sender's block to j, (sendcount(s)[j],
 * sendtype) at sdispls[j], and the receiver's block from j, (recvcount(s)[j],
 * recvtype) at rdispls[j], are each contiguous bytes, a flattened type map
 * walked with a cursor, or staged through MPI_Pack / MPI_Unpack: local
 * choices, so ranks may use different datatypes of one signature.
 *
 * Through the segment (shm/alltoall.c): every process copies its p - 1
 * outgoing blocks into its own slots, one notification per bank use, and
 * copies its block out of every other process's slots. Contiguous predefined
 * types on both sides skip the block sets (tc_a2a_shm_direct); an Alltoall
 * of them below the race's threshold is recognised before anything else is
 * set up (tc_a2a_fast) and goes straight to tc_shm_alltoall_contig.
 *
 * Across nodes (hier/hier_alltoall.c): an Alltoall of small blocks and
 * every Alltoallv go through the node leaders, on the blocks as bytes
 * (below); Alltoallv's larger blocks go straight to their receivers.
 *
 * Whatever goes to the MPI's own (the race, the paths without a segment)
 * goes as bytes, as in allgather.c: MPI_BYTE on every rank, each side's
 * blocks in one contiguous run (the user's buffer when its type is
 * contiguous and the byte displacements fit an int, else a staged copy).
 * MPI_IN_PLACE becomes an explicit copy of the receive buffer's blocks, so
 * the MPI's own in-place variants are never used. Intercommunicators go to
 * the MPI's own unchanged.
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
#include "hier/hier_alltoall.h"
#include "shm/alltoall.h"
#include "topocoll.h"

/* One call's arguments, MPI_IN_PLACE resolved: the send side is then the
 * receive buffer's blocks. */
typedef struct tc_a2a_call {
    const char *fn; /* "TC_Alltoall" or "TC_Alltoallv", for messages */
    tc_op_t op;
    bool v, in_place;
    const void *sendbuf;
    int sendcount;                   /* Alltoall */
    const int *sendcounts, *sdispls; /* Alltoallv */
    MPI_Datatype sendtype;
    void *recvbuf;
    int recvcount;                   /* Alltoall */
    const int *recvcounts, *rdispls; /* Alltoallv */
    MPI_Datatype recvtype;
    size_t block;            /* Alltoall: bytes of every block */
    size_t *sbytes, *rbytes; /* Alltoallv: bytes to / from process j */
    size_t total;            /* bytes this process receives (Alltoall: the same everywhere) */
    int rank, size;
    int ssize, rsize; /* the types' sizes (in place: both recvtype's) */
    bool direct;      /* contiguous predefined types on both sides (in place: recvtype) */
} tc_a2a_call_t;

static inline size_t tc_a2a_sbytes(const tc_a2a_call_t *c, int j)
{
    return c->v ? c->sbytes[j] : c->block;
}
static inline size_t tc_a2a_rbytes(const tc_a2a_call_t *c, int j)
{
    return c->v ? c->rbytes[j] : c->block;
}

/* ---- the paths --------------------------------------------------------------------- */

typedef struct tc_a2a_io_state {
    tc_blocks_t send; /* the blocks to every process */
    tc_blocks_t recv; /* the blocks from every process */
} tc_a2a_io_state_t;

static void tc_a2a_put(void *state, int j, size_t off, char *dst, size_t n)
{
    tc_blocks_read(&((tc_a2a_io_state_t *)state)->send, j, off, dst, n);
}
static void tc_a2a_get(void *state, int j, size_t off, const char *src, size_t n)
{
    tc_blocks_write(&((tc_a2a_io_state_t *)state)->recv, j, off, src, n);
}

/* Both sides' block sets (freed by tc_a2a_blocks_free either way). With
 * MPI_IN_PLACE the send set reads the receive buffer (its own cursors). */
static int tc_a2a_blocks(tc_a2a_io_state_t *st, const tc_a2a_call_t *c, int sflags, int rflags,
                         MPI_Comm comm)
{
    int rc = tc_blocks_init(&st->send, c->sendbuf, c->size, c->sendcount, c->sendcounts, c->sdispls,
                            c->sendtype, TC_BLOCKS_READ | sflags, comm);
    int rc2 = tc_blocks_init(&st->recv, c->recvbuf, c->size, c->recvcount, c->recvcounts,
                             c->rdispls, c->recvtype, rflags, comm);
    return rc != MPI_SUCCESS ? rc : rc2;
}

static void tc_a2a_blocks_free(tc_a2a_io_state_t *st)
{
    tc_blocks_free(&st->send);
    tc_blocks_free(&st->recv);
}

/* Contiguous predefined types on both sides (the common case): the blocks
 * straight from and into the user's buffers, without block sets. */
typedef struct tc_a2a_direct {
    const char *sbuf;
    char *rbuf;
    const int *sdispls, *rdispls; /* NULL: block j at j * count elements */
    size_t ssize, rsize;          /* element sizes */
    int scount, rcount;
} tc_a2a_direct_t;

static void tc_a2a_direct_put(void *state, int j, size_t off, char *dst, size_t n)
{
    const tc_a2a_direct_t *d = state;
    memcpy(dst, tc_blocks_at(d->sbuf, d->sdispls, d->scount, j, (MPI_Aint)d->ssize) + off, n);
}
static void tc_a2a_direct_get(void *state, int j, size_t off, const char *src, size_t n)
{
    const tc_a2a_direct_t *d = state;
    memcpy(tc_blocks_at(d->rbuf, d->rdispls, d->rcount, j, (MPI_Aint)d->rsize) + off, src, n);
}

static int tc_a2a_shm_direct(tc_ctx_t *ctx, const tc_a2a_call_t *c)
{
    /* Alltoall: block j at j * block bytes of either buffer (in place the
     * same buffer), so the segment takes the buffers themselves, its own
     * block included (tc_shm_alltoall_contig: no io callbacks). */
    if (!c->v)
        return tc_shm_alltoall_contig(ctx->shm, c->sendbuf, c->recvbuf, c->block);
    const size_t ssize = (size_t)c->ssize, rsize = (size_t)c->rsize;
    tc_a2a_direct_t d = {c->sendbuf, c->recvbuf, c->sdispls,   c->rdispls,
                         ssize,      rsize,      c->sendcount, c->recvcount};
    const tc_shm_ag_io_t io = {tc_a2a_direct_put, tc_a2a_direct_get, &d};
    const tc_shm_a2a_sizes_t sz = {c->sbytes, c->rbytes, c->block};
    tc_err_t err = tc_shm_alltoall(ctx->shm, &sz, &io);
    const size_t mine = tc_a2a_rbytes(c, c->rank);
    if (err == TC_OK && !c->in_place && mine > 0)
        memmove(tc_blocks_at(d.rbuf, d.rdispls, d.rcount, c->rank, (MPI_Aint)rsize),
                tc_blocks_at(d.sbuf, d.sdispls, d.scount, c->rank, (MPI_Aint)ssize), mine);
    return err;
}

/* Through the segment (one segment spans the communicator). */
static int tc_a2a_shm(tc_ctx_t *ctx, const tc_a2a_call_t *c)
{
    if (c->direct)
        return tc_a2a_shm_direct(ctx, c);
    tc_a2a_io_state_t st;
    const size_t mine = tc_a2a_rbytes(c, c->rank);
    int rc = tc_a2a_blocks(&st, c, 0, 0, ctx->priv);
    tc_shm_ag_io_t io = {tc_a2a_put, tc_a2a_get, &st};
    if (rc != MPI_SUCCESS) /* the others are in the collective already: take part */
        io = (tc_shm_ag_io_t){tc_shm_ag_put_zeros, tc_shm_ag_get_nothing, NULL};
    tc_shm_a2a_sizes_t sz = {c->sbytes, c->rbytes, c->block};
    tc_err_t err = tc_shm_alltoall(ctx->shm, &sz, &io);
    if (err != TC_OK) {
        rc = err; /* TC_ERR_NOTSUP: nothing moved, on every process */
    } else if (rc == MPI_SUCCESS) {
        if (!c->in_place && mine > 0)
            tc_blocks_copy(&st.recv, c->rank, &st.send, c->rank, mine);
        rc = tc_blocks_finish(&st.recv, c->in_place ? c->rank : -1, ctx->priv);
    }
    tc_a2a_blocks_free(&st);
    return rc;
}

/* One process, or every block empty: our block to ourselves. */
static int tc_a2a_single(const tc_a2a_call_t *c, MPI_Comm comm)
{
    tc_a2a_io_state_t st;
    const size_t mine = tc_a2a_rbytes(c, c->rank);
    if (c->in_place || mine == 0)
        return MPI_SUCCESS;
    int rc = tc_a2a_blocks(&st, c, 0, 0, comm);
    if (rc == MPI_SUCCESS) {
        tc_blocks_copy(&st.recv, c->rank, &st.send, c->rank, mine);
        rc = tc_blocks_finish(&st.recv, -1, comm);
    }
    tc_a2a_blocks_free(&st);
    return rc;
}

/* One side in the byte form: every block's bytes in one run from *base at
 * displs[j] (ints), staging the set when its type is not contiguous or its
 * blocks lie further apart than an int. false: it does not fit an int even
 * staged (a block or the whole side beyond INT_MAX bytes). */
static bool tc_a2a_side(tc_blocks_t *b, const tc_a2a_call_t *c, bool send, bool read, int *counts,
                        int *displs, const char **base, int *rc)
{
    const int p = c->size;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int j = 0; j < p; j++) {
        const size_t n = send ? tc_a2a_sbytes(c, j) : tc_a2a_rbytes(c, j);
        if (n > INT_MAX)
            return false;
        counts[j] = (int)n;
        if (n == 0 || b->mode != TC_BLOCKS_CONTIG)
            continue;
        uintptr_t a = (uintptr_t)tc_blocks_data(b, j);
        lo = a < lo ? a : lo;
        hi = a > hi ? a : hi;
    }
    if (b->mode == TC_BLOCKS_CONTIG && (hi > lo && hi - lo > INT_MAX) &&
        (*rc = tc_blocks_stage_contig(b, read)) != TC_OK)
        return true; /* *rc says why */
    if (b->mode == TC_BLOCKS_CONTIG) {
        for (int j = 0; j < p; j++)
            displs[j] = counts[j] == 0 ? 0 : (int)((uintptr_t)tc_blocks_data(b, j) - lo);
        *base = lo == UINTPTR_MAX ? tc_blocks_data(b, 0) : (const char *)lo;
        return true;
    }
    if (b->prefix[p] > INT_MAX)
        return false;
    for (int j = 0; j < p; j++)
        displs[j] = (int)b->prefix[j];
    *base = b->staged;
    return true;
}

/* The MPI's own, as bytes (see the top of the file); with @p agg, an
 * Alltoall goes through the node leaders instead (tc_hier_alltoall on
 * @p priv). */
static int tc_a2a_pmpi(const tc_a2a_call_t *c, MPI_Comm comm, const tc_hier_a2a_plan_t *agg,
                       MPI_Comm priv)
{
    tc_a2a_io_state_t st;
    int *ints = NULL;
    const char *sbase = NULL, *rbase = NULL;
    /* Alltoall: the block size is the same on every process, so when it
     * does not fit an int every process hands the MPI the call as the user
     * made it. Alltoallv: each process decides on its own blocks (another
     * process cannot know them); only a side of more than INT_MAX bytes
     * makes a process pass its own arguments, while its peers may pass
     * bytes: both MPIs installed here move the same bytes either way. */
    const void *usend = c->in_place ? MPI_IN_PLACE : c->sendbuf;
    if (!c->v && c->block > INT_MAX)
        return PMPI_Alltoall(usend, c->sendcount, c->sendtype, c->recvbuf, c->recvcount,
                             c->recvtype, comm);
    int rc = tc_a2a_blocks(&st, c, TC_BLOCKS_STAGE, TC_BLOCKS_STAGE, comm);
    /* In place: send from a copy of the receive buffer's blocks. */
    if (rc == MPI_SUCCESS && c->in_place && st.send.mode == TC_BLOCKS_CONTIG)
        rc = tc_blocks_stage_contig(&st.send, true);
    if (rc != MPI_SUCCESS) {
        /* Through the node leaders the others cannot tell: take part
         * without blocks, so the call fails everywhere (hier_alltoall.h). */
        if (agg && !c->v)
            (void)tc_hier_alltoall(agg, NULL, NULL, c->block, c->rank, c->size, priv, rc);
        goto fn_exit;
    }
    if (!c->v) {
        /* Blocks back to back with a stride of one block on both sides. */
        if (st.recv.mode == TC_BLOCKS_CONTIG)
            rbase = tc_blocks_data(&st.recv, 0);
        else
            rbase = st.recv.staged;
        sbase = st.send.mode == TC_BLOCKS_CONTIG ? tc_blocks_data(&st.send, 0) : st.send.staged;
        if (agg)
            rc = tc_hier_alltoall(agg, sbase, (char *)(uintptr_t)rbase, c->block, c->rank, c->size,
                                  priv, TC_OK);
        else
            rc = PMPI_Alltoall(sbase, (int)c->block, MPI_BYTE, (void *)(uintptr_t)rbase,
                               (int)c->block, MPI_BYTE, comm);
    } else {
        if (!(ints = malloc(4 * (size_t)c->size * sizeof *ints))) {
            rc = tc_err(TC_ERR_NOMEM);
            goto fn_exit;
        }
        int *sc = ints, *sd = ints + c->size, *rcn = ints + 2 * c->size, *rd = ints + 3 * c->size;
        bool fits = tc_a2a_side(&st.send, c, true, true, sc, sd, &sbase, &rc);
        if (rc != MPI_SUCCESS)
            goto fn_exit;
        fits = fits && tc_a2a_side(&st.recv, c, false, false, rcn, rd, &rbase, &rc);
        if (rc != MPI_SUCCESS)
            goto fn_exit;
        if (!fits) {
            tc_a2a_blocks_free(&st);
            free(ints);
            return PMPI_Alltoallv(usend, c->sendcounts, c->sdispls, c->sendtype, c->recvbuf,
                                  c->recvcounts, c->rdispls, c->recvtype, comm);
        }
        rc = PMPI_Alltoallv(sbase, sc, sd, MPI_BYTE, (void *)(uintptr_t)rbase, rcn, rd, MPI_BYTE,
                            comm);
    }
    if (rc == MPI_SUCCESS)
        rc = tc_blocks_finish(&st.recv, -1, comm);
fn_exit:
    free(ints);
    tc_a2a_blocks_free(&st);
    return rc;
}

/* Alltoallv through the node leaders (hier/hier_alltoall.h): every block of
 * both sides as bytes in one piece (a type that is not contiguous staged,
 * with MPI_IN_PLACE the send side a copy of the receive buffer's blocks). A
 * process whose blocks cannot be made so still takes part, without blocks,
 * so that the call fails everywhere instead of leaving the others waiting. */
static int tc_a2a_hier_v(const tc_a2a_call_t *c, const tc_hier_a2a_plan_t *pl, MPI_Comm comm,
                         MPI_Comm priv)
{
    tc_a2a_io_state_t st;
    const int p = c->size;
    char **ptr = NULL; /* the send blocks, then the receive blocks */
    int rc = tc_a2a_blocks(&st, c, TC_BLOCKS_STAGE, TC_BLOCKS_STAGE, comm);
    if (rc == MPI_SUCCESS && c->in_place && st.send.mode == TC_BLOCKS_CONTIG)
        rc = tc_blocks_stage_contig(&st.send, true);
    if (rc == MPI_SUCCESS && !(ptr = malloc(2 * (size_t)p * sizeof *ptr)))
        rc = tc_err(TC_ERR_NOMEM);
    for (int j = 0; ptr && j < p; j++) {
        ptr[j] = (char *)(uintptr_t)tc_blocks_data(&st.send, j);
        ptr[p + j] = (char *)(uintptr_t)tc_blocks_data(&st.recv, j);
    }
    rc = tc_hier_alltoallv(pl, (const char *const *)ptr, c->sbytes, ptr ? ptr + p : NULL, c->rbytes,
                           c->rank, p, priv, rc);
    if (rc == MPI_SUCCESS)
        rc = tc_blocks_finish(&st.recv, -1, comm);
    free(ptr);
    tc_a2a_blocks_free(&st);
    return rc;
}

/* ---- checks and entry points --------------------------------------------------------- */

/* Block sizes of at most this many processes live on the stack. */
#define TC_A2A_STACK_BLOCKS 64

/* MPI_Type_size of @p dt (not MPI_DATATYPE_NULL), and whether it is a
 * contiguous predefined type: one probe of the table (base/datatype.h), the
 * MPI only for a derived type. */
static inline int tc_a2a_type(MPI_Datatype dt, int *size, bool *contig)
{
    const tc_dt_entry_t *e = tc_datatype_known(dt);
    if (e) {
        *size = e->size;
        *contig = e->contig;
        return MPI_SUCCESS;
    }
    *contig = false;
    return PMPI_Type_size(dt, size);
}

/* Everything that is checked, before anything moves (docs/alltoall.md): the
 * communicator; unless MPI_IN_PLACE, sendcount or every sendcounts[j] >= 0,
 * sendcounts and sdispls not NULL, a valid sendtype; recvcount or every
 * recvcounts[j] >= 0, recvcounts and rdispls not NULL, a valid recvtype;
 * sendbuf not the same address as recvbuf (use MPI_IN_PLACE); Alltoall: the
 * send block has the receive block's size; Alltoallv: the block to ourselves
 * has the size of the block from ourselves (MPI_ERR_TRUNCATE). Only local
 * facts can be checked, as in allgather.c. On success *inter tells the
 * caller to hand the call to the MPI's own, else the sizes are set. */
static int tc_a2a_check(tc_a2a_call_t *c, MPI_Comm comm, tc_ctx_t **cached, int *inter,
                        size_t *stack_bytes)
{
    int ssize = 0, rsize = 0;
    bool scontig = false, rcontig = false;
    int rc_enter = tc_ctx_enter(comm, c->fn, cached, inter);
    if (rc_enter != MPI_SUCCESS)
        return rc_enter;
    const tc_ctx_t *ctx = *cached;
    c->in_place = c->sendbuf == MPI_IN_PLACE;
    if (!c->in_place) {
        if (!c->v && c->sendcount < 0)
            return tc_ctx_fail(comm, tc_err(TC_ERR_COUNT), c->fn, "negative sendcount");
        if (c->v && (!c->sendcounts || !c->sdispls))
            return tc_ctx_fail(comm, tc_err(TC_ERR_ARG), c->fn, "sendcounts or sdispls is NULL");
        if (c->sendtype == MPI_DATATYPE_NULL ||
            tc_a2a_type(c->sendtype, &ssize, &scontig) != MPI_SUCCESS)
            return tc_ctx_fail(comm, tc_err(TC_ERR_TYPE), c->fn, "invalid sendtype");
    }
    if (!c->v && c->recvcount < 0)
        return tc_ctx_fail(comm, tc_err(TC_ERR_COUNT), c->fn, "negative recvcount");
    if (c->v && (!c->recvcounts || !c->rdispls))
        return tc_ctx_fail(comm, tc_err(TC_ERR_ARG), c->fn, "recvcounts or rdispls is NULL");
    if (c->recvtype == MPI_DATATYPE_NULL ||
        tc_a2a_type(c->recvtype, &rsize, &rcontig) != MPI_SUCCESS)
        return tc_ctx_fail(comm, tc_err(TC_ERR_TYPE), c->fn, "invalid recvtype");
    if (*inter)
        return MPI_SUCCESS; /* the MPI's own, unchanged */
    if (c->in_place) {
        ssize = rsize; /* the send side is the receive buffer's blocks */
        scontig = rcontig;
    }
    c->ssize = ssize;
    c->rsize = rsize;
    c->direct = scontig && rcontig;
    tc_ctx_rank_size(ctx, comm, &c->rank, &c->size);
    const int p = c->size;
    size_t mine_send, mine_recv;
    if (c->v) {
        for (int j = 0; j < p; j++)
            if (c->recvcounts[j] < 0 || (!c->in_place && c->sendcounts[j] < 0))
                return tc_ctx_fail(comm, tc_err(TC_ERR_COUNT), c->fn,
                                   "negative sendcounts[j] or recvcounts[j]");
        c->sbytes = stack_bytes;
        if (p > TC_A2A_STACK_BLOCKS / 2 && !(c->sbytes = malloc(2 * (size_t)p * sizeof *c->sbytes)))
            return tc_ctx_fail(comm, tc_err(TC_ERR_NOMEM), c->fn, "out of memory");
        c->rbytes = c->sbytes + p;
        c->total = 0;
        for (int j = 0; j < p; j++) {
            c->rbytes[j] = (size_t)c->recvcounts[j] * (size_t)rsize;
            c->sbytes[j] = c->in_place ? c->rbytes[j] : (size_t)c->sendcounts[j] * (size_t)ssize;
            c->total += c->rbytes[j];
        }
        mine_send = c->sbytes[c->rank];
        mine_recv = c->rbytes[c->rank];
    } else {
        c->block = mine_recv = (size_t)c->recvcount * (size_t)rsize;
        mine_send = c->in_place ? c->block : (size_t)c->sendcount * (size_t)ssize;
        c->total = c->block * (size_t)p;
    }
    int rc = MPI_SUCCESS;
    if (mine_send != mine_recv)
        rc = tc_ctx_fail(comm, MPI_ERR_TRUNCATE, c->fn,
                         c->v ? "the block to this process differs in size from the block from it"
                              : "sendcount x sendtype differs in size from recvcount x recvtype");
    else if (!c->in_place && c->sendbuf == c->recvbuf && c->total > 0)
        rc = tc_ctx_fail(comm, tc_err(TC_ERR_BUFFER), c->fn,
                         "sendbuf and recvbuf alias (use MPI_IN_PLACE)");
    if (rc != MPI_SUCCESS && c->sbytes && c->sbytes != stack_bytes)
        free(c->sbytes);
    return rc;
}

/* Both operations after the checks. */
static __attribute__((noinline)) int tc_a2a_dispatch(tc_ctx_t *ctx, tc_a2a_call_t *c)
{
    int rc;
    if (c->in_place) {
        /* The blocks to send are the receive buffer's. */
        c->sendbuf = c->recvbuf;
        c->sendcount = c->recvcount;
        c->sendcounts = c->recvcounts;
        c->sdispls = c->rdispls;
        c->sendtype = c->recvtype;
    }
    /* Alltoallv: a process with nothing to move still takes part (the
     * others' bank uses are shared), so only one process is trivial. */
    const bool trivial = c->size == 1 || (!c->v && c->block == 0);
    if (tc_log_level >= TC_LOG_TRACE)
        tc_log(TC_LOG_TRACE, "%s on %s: %zu bytes received, path %s", c->fn, ctx->comm_name,
               c->total, tc_stats_path_name(trivial ? TC_PATH_TRIVIAL : ctx->bcast_path));
    if (trivial) {
        tc_stats_count(c->op, TC_PATH_TRIVIAL);
        return tc_a2a_single(c, ctx->comm);
    }
    if (ctx->bcast_path == TC_PATH_SHM) {
        /* Large messages take the library's path or the MPI's own,
         * whichever the race (race.h) has measured faster. Alltoall: on the
         * bytes received (the same everywhere). Alltoallv: each process
         * knows only its own blocks and all must decide alike, so it races
         * on the last Alltoallv's largest block (agreed in its first bank
         * use, shm/alltoall.c) times p: applications repeat their
         * exchanges, and a call whose sizes changed is still right on
         * either path. The first Alltoallv does not race. */
        tc_race_call_t race;
        tc_race_impl_t impl = TC_RACE_TC;
        const size_t race_bytes =
            c->v ? (size_t)ctx->shm->a2av_largest * (size_t)c->size : c->total;
        /* A call below the agreed threshold (tc_race_begin's own test, agreed
         * values only) skips the race's bookkeeping altogether. */
        const bool raced = ctx->race.min != 0 && race_bytes >= ctx->race.min;
        if (raced && (rc = tc_race_begin(&ctx->race, ctx->shm, ctx->priv, c->op, race_bytes, true,
                                         &race, &impl)) != MPI_SUCCESS)
            return rc;
        if (impl == TC_RACE_PMPI) {
            tc_stats_count(c->op, TC_PATH_PMPI_RACE);
            rc = tc_a2a_pmpi(c, ctx->comm, NULL, MPI_COMM_NULL);
        } else {
            rc = tc_a2a_shm(ctx, c);
            if (rc == tc_err(TC_ERR_NOTSUP)) {
                /* A bank too small for one line per destination (same on
                 * every process). */
                static bool logged;
                tc_log_once(logged, TC_LOG_INFO,
                            "%s: a bank of the segment holds less than a cache line per "
                            "process: Alltoall(v) uses the MPI's own (as bytes)",
                            ctx->comm_name);
                tc_stats_count(c->op, TC_PATH_PMPI_NO_SEGMENT);
                rc = tc_a2a_pmpi(c, ctx->comm, NULL, MPI_COMM_NULL);
            } else {
                tc_stats_count(c->op, TC_PATH_SHM);
            }
        }
        if (raced)
            tc_race_end(&ctx->race, &race);
        return rc;
    }
    tc_path_t path = ctx->bcast_path;
    if (path == TC_PATH_HIER) {
        /* Across nodes (docs/alltoall.md): Alltoall of small blocks and
         * Alltoallv aggregated through the node leaders (Alltoallv's larger
         * blocks point to point). The rest: the MPI's own, as bytes. */
        const tc_hier_a2a_plan_t *plan;
        const tc_err_t err = tc_ctx_a2a_plan(ctx, &plan);
        if (err != TC_OK)
            return err;
        if (tc_hier_alltoall_aggregates(plan, c->v, c->block)) {
            tc_stats_count(c->op, TC_PATH_HIER);
            return c->v ? tc_a2a_hier_v(c, plan, ctx->comm, ctx->priv)
                        : tc_a2a_pmpi(c, ctx->comm, plan, ctx->priv);
        }
        path = TC_PATH_PMPI_MULTINODE;
    }
    tc_stats_count(c->op, path);
    return tc_a2a_pmpi(c, ctx->comm, NULL, MPI_COMM_NULL);
}

static int tc_a2a_run(tc_a2a_call_t *c, MPI_Comm comm)
{
    int rc, inter = 0;
    tc_ctx_t *ctx;
    size_t stack_bytes[TC_A2A_STACK_BLOCKS];
    if ((rc = tc_a2a_check(c, comm, &ctx, &inter, stack_bytes)) != MPI_SUCCESS)
        return rc;
    if (inter) {
        tc_stats_count(c->op, TC_PATH_PMPI_INTERCOMM);
        if (c->v)
            return PMPI_Alltoallv(c->sendbuf, c->sendcounts, c->sdispls, c->sendtype, c->recvbuf,
                                  c->recvcounts, c->rdispls, c->recvtype, comm);
        return PMPI_Alltoall(c->sendbuf, c->sendcount, c->sendtype, c->recvbuf, c->recvcount,
                             c->recvtype, comm);
    }
    if (!ctx && (rc = tc_ctx_get(comm, &ctx)) != MPI_SUCCESS)
        rc = tc_ctx_fail(comm, rc, c->fn, "could not create the context");
    else if ((rc = tc_a2a_dispatch(ctx, c)) != MPI_SUCCESS)
        rc = tc_ctx_fail(comm, rc, c->fn, "failed");
    if (c->sbytes && c->sbytes != stack_bytes)
        free(c->sbytes);
    return rc;
}

/* The common Alltoall, recognised before any call descriptor is built
 * (issue 19: at np 2 and 4 bytes a block, the descriptor, the checks'
 * general form and the dispatch cost more than moving the blocks): a cached
 * context of an intracommunicator that one segment spans, more than one
 * process, contiguous predefined types of one block size on both sides (or
 * MPI_IN_PLACE), non-empty blocks below the race's threshold (tc_race_begin's
 * own test: agreed values only), no trace log. Each of these is what
 * tc_a2a_check() and tc_a2a_dispatch() would find, so such a call takes the
 * path they would give it (tc_shm_alltoall_contig, stats key shm), having
 * passed their checks. Anything else, every bad argument included, returns
 * false with nothing moved, and the general path checks and reports it. */
static inline bool tc_a2a_fast(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    if (comm == MPI_COMM_NULL)
        return false;
    const tc_ctx_t *ctx = tc_ctx_lookup(comm);
    if (!ctx || ctx->is_inter || ctx->bcast_path != TC_PATH_SHM || ctx->size < 2 ||
        recvcount <= 0 || tc_log_level >= TC_LOG_TRACE)
        return false;
    const tc_dt_entry_t *re = tc_datatype_known(recvtype);
    if (!re || !re->contig)
        return false;
    const size_t m = (size_t)recvcount * (size_t)re->size;
    const char *sbuf = recvbuf;
    if (sendbuf != MPI_IN_PLACE) {
        const tc_dt_entry_t *se = sendtype == recvtype ? re : tc_datatype_known(sendtype);
        if (sendcount < 0 || !se || !se->contig || (size_t)sendcount * (size_t)se->size != m ||
            sendbuf == recvbuf)
            return false;
        sbuf = sendbuf;
    }
    if (m == 0 || (ctx->race.min != 0 && m * (size_t)ctx->size >= ctx->race.min))
        return false;
    /* TC_ERR_NOTSUP (a bank too small, the same everywhere): nothing moved,
     * the general path falls back. */
    if (tc_shm_alltoall_contig(ctx->shm, sbuf, recvbuf, m) != TC_OK)
        return false;
    tc_stats_count(TC_OP_ALLTOALL, TC_PATH_SHM);
    return true;
}

/* Every other Alltoall: out of line, so that the fast path builds no frame
 * for the call descriptor. */
static __attribute__((noinline)) int tc_a2a_alltoall(const void *sendbuf, int sendcount,
                                                     MPI_Datatype sendtype, void *recvbuf,
                                                     int recvcount, MPI_Datatype recvtype,
                                                     MPI_Comm comm)
{
    tc_a2a_call_t c = {.fn = "TC_Alltoall",
                       .op = TC_OP_ALLTOALL,
                       .sendbuf = sendbuf,
                       .sendcount = sendcount,
                       .sendtype = sendtype,
                       .recvbuf = recvbuf,
                       .recvcount = recvcount,
                       .recvtype = recvtype};
    return tc_a2a_run(&c, comm);
}

int TC_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    if (tc_a2a_fast(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))
        return MPI_SUCCESS;
    return tc_a2a_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int TC_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                 MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                 MPI_Datatype recvtype, MPI_Comm comm)
{
    tc_a2a_call_t c = {.fn = "TC_Alltoallv",
                       .op = TC_OP_ALLTOALLV,
                       .v = true,
                       .sendbuf = sendbuf,
                       .sendcounts = sendcounts,
                       .sdispls = sdispls,
                       .sendtype = sendtype,
                       .recvbuf = recvbuf,
                       .recvcounts = recvcounts,
                       .rdispls = rdispls,
                       .recvtype = recvtype};
    return tc_a2a_run(&c, comm);
}
