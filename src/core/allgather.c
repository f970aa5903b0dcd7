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

#include "base/datatype.h"
#include "base/log.h"
#include "ctx.h"
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
static inline MPI_Aint tc_ag_displ(const tc_ag_call_t *c, int j)
{
    return c->displs ? (MPI_Aint)c->displs[j] : (MPI_Aint)j * c->recvcount;
}
static inline size_t tc_ag_block_bytes(const tc_ag_call_t *c, int j)
{
    return c->bytes ? c->bytes[j] : c->block;
}

/* ---- byte streams in and out of the user's buffers ------------------------------- */

typedef enum { TC_AG_CONTIG, TC_AG_MAPPED, TC_AG_STAGED } tc_ag_mode_t;

/* MPI_Pack (unpack false) or MPI_Unpack (true) of (buf, count, dt) to or
 * from @p bytes (@p n bytes). MPICH's MPI_Pack rejects a NULL buffer, so
 * MPI_BOTTOM is described relative to a real address instead. */
static int tc_ag_pack(bool unpack, const void *buf, int count, MPI_Datatype dt, char *bytes,
                      size_t n, MPI_Comm comm)
{
    static char anchor;
    MPI_Datatype rebased = MPI_DATATYPE_NULL;
    int rc, pos = 0;
    if (n > INT_MAX)
        return MPI_ERR_COUNT; /* MPI_Pack's int positions */
    if (buf == MPI_BOTTOM) {
        MPI_Aint a;
        PMPI_Get_address(&anchor, &a);
        MPI_Aint disp = -a;
        if ((rc = PMPI_Type_create_struct(1, &count, &disp, &dt, &rebased)) != MPI_SUCCESS ||
            (rc = PMPI_Type_commit(&rebased)) != MPI_SUCCESS)
            return rc;
        buf = &anchor;
        dt = rebased;
        count = 1;
    }
    if (unpack)
        rc = PMPI_Unpack(bytes, (int)n, &pos, (void *)(uintptr_t)buf, count, dt, comm);
    else
        rc = PMPI_Pack(buf, count, dt, bytes, (int)n, &pos, comm);
    if (rebased != MPI_DATATYPE_NULL)
        PMPI_Type_free(&rebased);
    return rc;
}

/* This process's block as a stream. */
typedef struct tc_ag_send {
    tc_ag_mode_t mode;
    const char *data; /* CONTIG: the bytes; STAGED: the packed copy */
    char *staged;     /* owned */
    void *buf;        /* MAPPED: the user's buffer */
    tc_dt_map_t map;
    tc_dt_cursor_t cursor;
} tc_ag_send_t;

/* The receive side: block j at recvbuf + displs[j] * extent. */
typedef struct tc_ag_recv {
    tc_ag_mode_t mode;
    const tc_ag_call_t *call;
    MPI_Aint extent, lb; /* lb: of the contiguous type's bytes */
    tc_dt_map_t map;
    tc_dt_cursor_t *cursors; /* MAPPED: one per block */
    char *staged;            /* STAGED: all blocks back to back */
    size_t *prefix;          /* STAGED: where block j starts in staged */
} tc_ag_recv_t;

static inline char *tc_ag_addr(const void *buf, MPI_Aint off)
{
    /* Integer arithmetic: with MPI_BOTTOM, off is an absolute address. */
    return (char *)((uintptr_t)buf + (uintptr_t)off);
}

/* @p contig_only: a flattened type is gathered into a staged copy too (the
 * MPI's own collective wants the bytes in one piece). */
static int tc_ag_send_init(tc_ag_send_t *s, const tc_ag_call_t *c, size_t nbytes, bool contig_only,
                           MPI_Comm comm)
{
    MPI_Aint lb;
    memset(s, 0, sizeof *s);
    s->mode = TC_AG_CONTIG;
    if (nbytes == 0 || tc_datatype_is_contiguous(c->sendtype, c->sendcount, &lb)) {
        s->data = tc_ag_addr(c->sendbuf, nbytes ? lb : 0);
        return MPI_SUCCESS;
    }
    if (tc_datatype_flatten(c->sendtype, &s->map) == 0) {
        s->mode = TC_AG_MAPPED;
        s->buf = (void *)(uintptr_t)c->sendbuf;
        tc_dt_cursor_init(&s->cursor, &s->map, s->buf);
        if (!contig_only)
            return MPI_SUCCESS;
        if (!(s->staged = malloc(nbytes)))
            return MPI_ERR_NO_MEM;
        tc_dt_cursor_gather(&s->cursor, s->staged, nbytes);
        tc_datatype_map_free(&s->map);
        s->mode = TC_AG_STAGED;
        s->data = s->staged;
        return MPI_SUCCESS;
    }
    tc_datatype_map_free(&s->map);
    s->mode = TC_AG_STAGED;
    if (!(s->staged = malloc(nbytes)))
        return MPI_ERR_NO_MEM;
    s->data = s->staged;
    return tc_ag_pack(false, c->sendbuf, c->sendcount, c->sendtype, s->staged, nbytes, comm);
}

static void tc_ag_send_free(tc_ag_send_t *s)
{
    if (s->mode == TC_AG_MAPPED)
        tc_datatype_map_free(&s->map);
    free(s->staged);
}

/* Bytes [off, off + n) of our block -> dst (off grows from call to call). */
static void tc_ag_put_send(tc_ag_send_t *s, size_t off, char *dst, size_t n)
{
    if (s->mode == TC_AG_MAPPED)
        tc_dt_cursor_gather(&s->cursor, dst, n);
    else
        memcpy(dst, s->data + off, n);
}

/* @p force_staged: every block goes through one staged buffer (else the
 * type decides: contiguous bytes, a flattened map, or staged). */
static int tc_ag_recv_init(tc_ag_recv_t *r, const tc_ag_call_t *c, bool force_staged)
{
    memset(r, 0, sizeof *r);
    r->call = c;
    const tc_dt_entry_t *e = tc_datatype_known(c->recvtype);
    if (e && e->contig) {
        r->mode = TC_AG_CONTIG;
        r->extent = e->size;
    } else {
        MPI_Aint lb0;
        PMPI_Type_get_extent(c->recvtype, &lb0, &r->extent);
        if (tc_datatype_is_contiguous(c->recvtype, 2, &r->lb))
            r->mode = TC_AG_CONTIG;
        else if (tc_datatype_flatten(c->recvtype, &r->map) == 0)
            r->mode = TC_AG_MAPPED;
        else {
            tc_datatype_map_free(&r->map);
            r->mode = TC_AG_STAGED;
        }
    }
    if (force_staged && r->mode == TC_AG_MAPPED) {
        tc_datatype_map_free(&r->map);
        r->mode = TC_AG_STAGED;
    }
    if (r->mode == TC_AG_MAPPED && !(r->cursors = malloc((size_t)c->size * sizeof *r->cursors)))
        return MPI_ERR_NO_MEM;
    if (r->mode == TC_AG_STAGED || force_staged) {
        r->mode = TC_AG_STAGED;
        r->prefix = malloc((size_t)c->size * sizeof *r->prefix);
        r->staged = malloc(c->total ? c->total : 1);
        if (!r->prefix || !r->staged)
            return MPI_ERR_NO_MEM;
        size_t at = 0;
        for (int j = 0; j < c->size; j++) {
            r->prefix[j] = at;
            at += tc_ag_block_bytes(c, j);
        }
    }
    return MPI_SUCCESS;
}

static void tc_ag_recv_free(tc_ag_recv_t *r)
{
    if (r->mode == TC_AG_MAPPED)
        tc_datatype_map_free(&r->map);
    free(r->cursors);
    free(r->staged);
    free(r->prefix);
}

static inline char *tc_ag_recv_block(const tc_ag_recv_t *r, int j)
{
    return tc_ag_addr(r->call->recvbuf, tc_ag_displ(r->call, j) * r->extent);
}

/* src -> bytes [off, off + n) of block j (off grows per block). */
static void tc_ag_get_recv(tc_ag_recv_t *r, int j, size_t off, const char *src, size_t n)
{
    switch (r->mode) {
    case TC_AG_CONTIG:
        memcpy(tc_ag_recv_block(r, j) + r->lb + off, src, n);
        break;
    case TC_AG_MAPPED:
        if (off == 0)
            tc_dt_cursor_init(&r->cursors[j], &r->map, tc_ag_recv_block(r, j));
        tc_dt_cursor_scatter(&r->cursors[j], src, n);
        break;
    case TC_AG_STAGED:
        memcpy(r->staged + r->prefix[j] + off, src, n);
        break;
    }
}

/* STAGED: unpack every block but @p skip (-1: none) into the user's buffer. */
static int tc_ag_recv_finish(tc_ag_recv_t *r, int skip, MPI_Comm comm)
{
    const tc_ag_call_t *c = r->call;
    int rc = MPI_SUCCESS;
    if (r->mode != TC_AG_STAGED)
        return MPI_SUCCESS;
    for (int j = 0; j < c->size && rc == MPI_SUCCESS; j++) {
        size_t n = tc_ag_block_bytes(c, j);
        if (j != skip && n > 0)
            rc = tc_ag_pack(true, tc_ag_recv_block(r, j), tc_ag_count(c, j), c->recvtype,
                            r->staged + r->prefix[j], n, comm);
    }
    return rc;
}

/* Our own block into its place in the receive buffer (not MPI_IN_PLACE). */
static void tc_ag_self_copy(tc_ag_send_t *s, tc_ag_recv_t *r, size_t n)
{
    const int me = r->call->rank;
    if (s->mode != TC_AG_MAPPED && r->mode != TC_AG_MAPPED) {
        tc_ag_get_recv(r, me, 0, s->data, n);
        return;
    }
    char bounce[4096];
    if (s->mode == TC_AG_MAPPED)
        tc_dt_cursor_init(&s->cursor, &s->map, s->buf); /* the segment's copy-in walked it */
    for (size_t off = 0; off < n; off += sizeof bounce) {
        size_t len = n - off < sizeof bounce ? n - off : sizeof bounce;
        tc_ag_put_send(s, off, bounce, len);
        tc_ag_get_recv(r, me, off, bounce, len);
    }
}

/* ---- the paths --------------------------------------------------------------------- */

/* ---- the paths --------------------------------------------------------------------- */

typedef struct tc_ag_io_state {
    tc_ag_send_t s;
    tc_ag_recv_t r;
} tc_ag_io_state_t;

static void tc_ag_put(void *state, size_t off, char *dst, size_t n)
{
    tc_ag_put_send(&((tc_ag_io_state_t *)state)->s, off, dst, n);
}
static void tc_ag_get(void *state, int j, size_t off, const char *src, size_t n)
{
    tc_ag_get_recv(&((tc_ag_io_state_t *)state)->r, j, off, src, n);
}
/* A process whose buffers could not be prepared still takes part (the
 * others are in the collective already): zeros out, nothing in. */
static void tc_ag_put_null(void *state, size_t off, char *dst, size_t n)
{
    (void)state;
    (void)off;
    memset(dst, 0, n);
}
static void tc_ag_get_null(void *state, int j, size_t off, const char *src, size_t n)
{
    (void)state;
    (void)j;
    (void)off;
    (void)src;
    (void)n;
}

/* Through the segment (one segment spans the communicator). */
static int tc_ag_shm(tc_ctx_t *ctx, const tc_ag_call_t *c)
{
    tc_ag_io_state_t st;
    const size_t mine = tc_ag_block_bytes(c, c->rank);
    int rc = tc_ag_send_init(&st.s, c, mine, false, ctx->priv);
    int rc2 = tc_ag_recv_init(&st.r, c, false);
    if (rc == MPI_SUCCESS)
        rc = rc2;
    tc_shm_ag_io_t io = {tc_ag_put, tc_ag_get, &st};
    if (rc != MPI_SUCCESS)
        io = (tc_shm_ag_io_t){tc_ag_put_null, tc_ag_get_null, NULL};
    tc_shm_allgather(ctx->shm, c->bytes, c->block, &io);
    if (rc == MPI_SUCCESS) {
        if (!c->in_place && mine > 0)
            tc_ag_self_copy(&st.s, &st.r, mine);
        rc = tc_ag_recv_finish(&st.r, c->in_place ? c->rank : -1, ctx->priv);
    }
    tc_ag_send_free(&st.s);
    tc_ag_recv_free(&st.r);
    return rc;
}

/* One process: our block into its place. */
static int tc_ag_single(const tc_ag_call_t *c, MPI_Comm comm)
{
    tc_ag_io_state_t st;
    const size_t mine = tc_ag_block_bytes(c, c->rank);
    if (c->in_place || mine == 0)
        return MPI_SUCCESS;
    int rc = tc_ag_send_init(&st.s, c, mine, false, comm);
    int rc2 = tc_ag_recv_init(&st.r, c, false);
    if (rc == MPI_SUCCESS)
        rc = rc2;
    if (rc == MPI_SUCCESS) {
        tc_ag_self_copy(&st.s, &st.r, mine);
        rc = tc_ag_recv_finish(&st.r, -1, comm);
    }
    tc_ag_send_free(&st.s);
    tc_ag_recv_free(&st.r);
    return rc;
}

/* The MPI's own, as bytes (see the top of the file). */
static int tc_ag_pmpi(const tc_ag_call_t *c, MPI_Comm comm)
{
    tc_ag_io_state_t st;
    const size_t mine = tc_ag_block_bytes(c, c->rank);
    int *counts = NULL, *displs = NULL;
    char *rbase = NULL;
    int rc = tc_ag_send_init(&st.s, c, c->in_place ? 0 : mine, true, comm);
    bool direct = true;
    /* Direct when the receive type is contiguous and every block's byte
     * position fits MPI's int displacements from the lowest one. */
    int rc2 = tc_ag_recv_init(&st.r, c, false);
    if (rc2 == MPI_SUCCESS && st.r.mode != TC_AG_CONTIG)
        direct = false;
    if (c->bytes) {
        counts = malloc(2 * (size_t)c->size * sizeof *counts);
        if (!counts) {
            rc2 = MPI_ERR_NO_MEM;
        } else {
            displs = counts + c->size;
            uintptr_t lo = UINTPTR_MAX, hi = 0;
            for (int j = 0; j < c->size; j++) {
                if (c->bytes[j] > INT_MAX)
                    rc2 = MPI_ERR_COUNT; /* the same on every process */
                counts[j] = (int)c->bytes[j];
                if (c->bytes[j] == 0)
                    continue;
                uintptr_t a = (uintptr_t)tc_ag_recv_block(&st.r, j);
                lo = a < lo ? a : lo;
                hi = a > hi ? a : hi;
            }
            if (hi - lo > INT_MAX)
                direct = false;
            rbase = (char *)lo + st.r.lb;
        }
    } else {
        if (c->block > INT_MAX)
            rc2 = MPI_ERR_COUNT; /* the same on every process */
        rbase = tc_ag_addr(c->recvbuf, st.r.lb);
    }
    if (rc2 == MPI_SUCCESS && !direct) {
        tc_ag_recv_free(&st.r);
        rc2 = tc_ag_recv_init(&st.r, c, true);
        if (c->total > INT_MAX && c->bytes)
            rc2 = MPI_ERR_COUNT;
        rbase = st.r.staged;
    }
    if (rc == MPI_SUCCESS)
        rc = rc2;
    if (rc != MPI_SUCCESS)
        goto fn_exit; /* every process alike, except for a failed allocation */
    if (c->bytes) {
        for (int j = 0; j < c->size; j++)
            if (c->bytes[j] > 0)
                displs[j] = (int)(direct ? (uintptr_t)tc_ag_recv_block(&st.r, j) + st.r.lb -
                                               (uintptr_t)rbase
                                         : st.r.prefix[j]);
            else
                displs[j] = 0;
    }
    const void *send = st.s.data;
    if (c->in_place) {
        send = MPI_IN_PLACE;
        if (!direct && mine > 0) {
            /* Our block into the staged copy at its place. */
            tc_ag_send_t own;
            if ((rc = tc_ag_send_init(&own, c, mine, true, comm)) == MPI_SUCCESS)
                memcpy(st.r.staged + st.r.prefix[c->rank], own.data, mine);
            tc_ag_send_free(&own);
            if (rc != MPI_SUCCESS)
                goto fn_exit;
        }
    }
    if (c->bytes)
        rc = PMPI_Allgatherv(send, (int)mine, MPI_BYTE, rbase, counts, displs, MPI_BYTE, comm);
    else
        rc = PMPI_Allgather(send, (int)mine, MPI_BYTE, rbase, (int)c->block, MPI_BYTE, comm);
    if (rc == MPI_SUCCESS && !direct)
        rc = tc_ag_recv_finish(&st.r, c->in_place ? c->rank : -1, comm);
fn_exit:
    free(counts);
    tc_ag_send_free(&st.s);
    tc_ag_recv_free(&st.r);
    return rc;
}

/* ---- checks and entry points --------------------------------------------------------- */

/* "fn: what" through the handler of @p comm. Out of line, so the checks
 * build no message. */
static __attribute__((cold, noinline)) int tc_ag_fail(MPI_Comm comm, int errclass, const char *fn,
                                                      const char *what)
{
    char msg[128];
    snprintf(msg, sizeof msg, "%s: %s", fn, what);
    return tc_ctx_error(comm, errclass, msg);
}

/* Blocks of at most this many processes' sizes live on the stack. */
#define TC_AG_STACK_BLOCKS 64

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
    if (comm == MPI_COMM_NULL)
        return tc_ag_fail(MPI_COMM_WORLD, MPI_ERR_COMM, c->fn, "MPI_COMM_NULL");
    tc_ctx_t *ctx = tc_ctx_lookup(comm);
    if (!ctx)
        ctx = tc_ctx_peek(comm);
    *cached = ctx;
    if (ctx)
        *inter = ctx->is_inter;
    else if (PMPI_Comm_test_inter(comm, inter) != MPI_SUCCESS)
        return tc_ag_fail(MPI_COMM_WORLD, MPI_ERR_COMM, c->fn, "invalid communicator");
    c->in_place = c->sendbuf == MPI_IN_PLACE;
    if (!c->in_place) {
        if (c->sendcount < 0)
            return tc_ag_fail(comm, MPI_ERR_COUNT, c->fn, "negative sendcount");
        if (c->sendtype == MPI_DATATYPE_NULL ||
            tc_datatype_size(c->sendtype, &ssize) != MPI_SUCCESS)
            return tc_ag_fail(comm, MPI_ERR_TYPE, c->fn, "invalid sendtype");
    }
    if (c->op == TC_OP_ALLGATHER && c->recvcount < 0)
        return tc_ag_fail(comm, MPI_ERR_COUNT, c->fn, "negative recvcount");
    if (c->recvtype == MPI_DATATYPE_NULL || tc_datatype_size(c->recvtype, &c->rsize) != MPI_SUCCESS)
        return tc_ag_fail(comm, MPI_ERR_TYPE, c->fn, "invalid recvtype");
    if (*inter)
        return MPI_SUCCESS; /* the MPI's own, unchanged */
    if (ctx) {
        c->size = ctx->size;
        c->rank = ctx->rank;
    } else {
        PMPI_Comm_size(comm, &c->size);
        PMPI_Comm_rank(comm, &c->rank);
    }
    size_t mine;
    if (c->op == TC_OP_ALLGATHERV) {
        if (!c->recvcounts || !c->displs)
            return tc_ag_fail(comm, MPI_ERR_ARG, c->fn, "recvcounts or displs is NULL");
        c->bytes = stack_bytes;
        c->total = 0;
        for (int j = 0; j < c->size; j++)
            if (c->recvcounts[j] < 0)
                return tc_ag_fail(comm, MPI_ERR_COUNT, c->fn, "negative recvcounts[j]");
        if (c->size > TC_AG_STACK_BLOCKS &&
            !(c->bytes = malloc((size_t)c->size * sizeof *c->bytes)))
            return tc_ag_fail(comm, MPI_ERR_NO_MEM, c->fn, "out of memory");
        for (int j = 0; j < c->size; j++) {
            c->bytes[j] = (size_t)c->recvcounts[j] * (size_t)c->rsize;
            c->total += c->bytes[j];
        }
        mine = c->bytes[c->rank];
    } else {
        c->block = mine = (size_t)c->recvcount * (size_t)c->rsize;
        c->total = c->block * (size_t)c->size;
    }
    int rc = MPI_SUCCESS;
    if (!c->in_place && (size_t)c->sendcount * (size_t)ssize != mine)
        rc = tc_ag_fail(comm, MPI_ERR_TRUNCATE, c->fn,
                        "sendcount x sendtype differs in size from this process's block of the "
                        "receive buffer");
    else if (!c->in_place && c->sendbuf == c->recvbuf && c->total > 0)
        rc =
            tc_ag_fail(comm, MPI_ERR_BUFFER, c->fn, "sendbuf and recvbuf alias (use MPI_IN_PLACE)");
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
        c->sendbuf = tc_ag_addr(c->recvbuf, tc_ag_displ(c, c->rank) * tc_ag_extent(c->recvtype));
    }
    if (tc_log_level >= TC_LOG_TRACE)
        tc_log(
            TC_LOG_TRACE, "%s on %s: %zu bytes in all, path %s", c->fn, ctx->comm_name, c->total,
            tc_stats_path_name(c->total == 0 || c->size == 1 ? TC_PATH_TRIVIAL : ctx->bcast_path));
    if (c->total == 0 || c->size == 1) {
        tc_stats_count(c->op, TC_PATH_TRIVIAL);
        return tc_ag_single(c, ctx->comm);
    }
    if (ctx->bcast_path == TC_PATH_SHM) {
        /* Large messages: the library's path or the MPI's own, whichever
         * the race (race.h) has measured faster (the bytes are the same). */
        tc_race_call_t race;
        tc_race_impl_t impl;
        if ((rc = tc_race_begin(&ctx->race, ctx->shm, ctx->priv, c->op, c->total, true, &race,
                                &impl)) != MPI_SUCCESS)
            return rc;
        if (impl == TC_RACE_PMPI) {
            tc_stats_count(c->op, TC_PATH_PMPI_RACE);
            rc = tc_ag_pmpi(c, ctx->comm);
        } else {
            tc_stats_count(c->op, TC_PATH_SHM);
            rc = tc_ag_shm(ctx, c);
        }
        tc_race_end(&ctx->race, &race);
        return rc;
    }
    tc_path_t path = ctx->bcast_path;
    if (path == TC_PATH_HIER) {
        /* Not yet through the hierarchy's groups (docs/allgather.md). */
        static bool logged;
        tc_log_once(logged, TC_LOG_INFO,
                    "%s: Allgather(v) over several hierarchy levels uses the MPI's own (as bytes)",
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
        rc = tc_ag_fail(comm, rc, c->fn, "could not create the context");
    else if ((rc = tc_ag_dispatch(ctx, c)) != MPI_SUCCESS)
        rc = tc_ag_fail(comm, rc, c->fn, "failed");
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
