/* TC_Reduce_scatter_block and TC_Reduce_scatter: argument checks, then the
 * segment (one node), or the MPI's own.
 *
 * Both are one operation here: process i receives counts[i * stride]
 * elements of the reduction (stride 0: the block variant, every process the
 * same count). What goes to PMPI_* and why (counted in TC_STATS):
 *  - intercommunicators (pmpi_intercomm);
 *  - communicators over several hierarchy levels (pmpi_multinode: the
 *    hierarchical version, reduce in each group, reduce-scatter among the
 *    leaders, scatter in the group, is later work of issue 19), or without a
 *    segment (pmpi_shm_off, pmpi_no_segment);
 *  - (datatype, op) pairs TC_Reduce does not reduce itself, a message of more
 *    than INT_MAX elements of the datatype, an element larger than a reduce
 *    slot (pmpi_op);
 *  - large messages the race (race.h) measured faster in the MPI's own, when
 *    the result's bits cannot depend on the algorithm (pmpi_race).
 * As for TC_Reduce, whether tc_redop_init() takes a (count, datatype, op) is
 * assumed to be the same on every process (the same datatype everywhere).
 */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/redop.h"
#include "ctx.h"
#include "shm/reduce_scatter.h"
#include "topocoll.h"

/* The error path of tc_rs_check(): "fn: what" through the handler. */
static __attribute__((cold, noinline)) int tc_rs_fail(MPI_Comm comm, int errclass, const char *fn,
                                                      const char *what)
{
    char msg[96];
    snprintf(msg, sizeof msg, "%s: %s", fn, what);
    return tc_ctx_error(comm, errclass, msg);
}

/* Checks of both operations, before anything moves. Returns MPI_SUCCESS or
 * the error class (handler already called); *inter tells the caller to hand
 * the call to PMPI (whose recvcounts are over the remote group: not read
 * here); *total: the sum of the counts. */
static int tc_rs_check(const char *fn, const void *sendbuf, const void *recvbuf, const int *counts,
                       int stride, MPI_Datatype dt, MPI_Op op, MPI_Comm comm, int *inter,
                       tc_ctx_t **cached, long long *total)
{
    int size;
    if (comm == MPI_COMM_NULL)
        return tc_rs_fail(MPI_COMM_WORLD, MPI_ERR_COMM, fn, "MPI_COMM_NULL");
    tc_ctx_t *ctx = tc_ctx_lookup(comm);
    if (!ctx)
        ctx = tc_ctx_peek(comm);
    *cached = ctx;
    if (ctx) {
        *inter = ctx->is_inter;
    } else if (PMPI_Comm_test_inter(comm, inter) != MPI_SUCCESS) {
        return tc_rs_fail(MPI_COMM_WORLD, MPI_ERR_COMM, fn, "invalid communicator");
    }
    if (!counts)
        return tc_rs_fail(comm, MPI_ERR_ARG, fn, "recvcounts is NULL");
    if (dt == MPI_DATATYPE_NULL)
        return tc_rs_fail(comm, MPI_ERR_TYPE, fn, "invalid datatype");
    if (op == MPI_OP_NULL)
        return tc_rs_fail(comm, MPI_ERR_OP, fn, "MPI_OP_NULL");
    if (stride == 0 && counts[0] < 0)
        return tc_rs_fail(comm, MPI_ERR_COUNT, fn, "negative recvcount");
    if (*inter)
        return MPI_SUCCESS;
    if (ctx)
        size = ctx->size;
    else
        PMPI_Comm_size(comm, &size);
    *total = 0;
    for (int i = 0; i < size; i++) {
        const int c = counts[(size_t)i * (size_t)stride];
        if (c < 0)
            return tc_rs_fail(comm, MPI_ERR_COUNT, fn, "negative count in recvcounts");
        *total += c;
    }
    if (*total > 0 && sendbuf == recvbuf)
        return tc_rs_fail(comm, MPI_ERR_BUFFER, fn, "sendbuf and recvbuf alias (use MPI_IN_PLACE)");
    return MPI_SUCCESS;
}

static int tc_rs_pmpi(tc_op_t which, const void *sendbuf, void *recvbuf, const int *counts,
                      MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    if (which == TC_OP_REDUCE_SCATTER_BLOCK)
        return PMPI_Reduce_scatter_block(sendbuf, recvbuf, counts[0], dt, op, comm);
    return PMPI_Reduce_scatter(sendbuf, recvbuf, counts, dt, op, comm);
}

/* One process or nothing to combine: the result is our own contribution
 * (@p rr describes our part, the first counts[rank] elements of the send
 * buffer, so the same type map). In place there is nothing to move. */
static int tc_rs_trivial(const tc_redop_t *rr, const void *sendbuf, void *recvbuf)
{
    if (sendbuf == MPI_IN_PLACE || rr->nbytes == 0)
        return MPI_SUCCESS;
    if (rr->contiguous) {
        memcpy(tc_redop_stream(rr, recvbuf), tc_redop_stream(rr, sendbuf), rr->nbytes);
        return MPI_SUCCESS;
    }
    char *tmp = malloc(rr->nbytes);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    tc_redop_pack(rr, sendbuf, tmp);
    tc_redop_unpack(rr, tmp, recvbuf);
    free(tmp);
    return MPI_SUCCESS;
}

/* The segment's Reduce_scatter, derived datatypes staged through packed
 * buffers. @p r: the whole message; @p rr: this process's part. Returns
 * MPI_SUCCESS, an MPI error code, or -1 (fall back, everywhere alike). */
static int tc_rs_staged(tc_ctx_t *ctx, const tc_redop_t *r, const tc_redop_t *rr,
                        const void *sendbuf, void *recvbuf, const int *counts, int stride,
                        size_t scale)
{
    const bool in_place = sendbuf == MPI_IN_PLACE;
    /* Staged: the message (derived type, or in place through a derived
     * type: packed from the receive buffer) and the result (derived type,
     * or in place: unpacked over the receive buffer's start). */
    const bool stage_send = !r->contiguous;
    const bool stage_recv = stage_send ? in_place || !rr->contiguous : !in_place && !rr->contiguous;
    const void *send = NULL;
    void *recv = NULL;
    char *tmp = NULL;
    const size_t need = (stage_send ? r->nbytes : 0) + (stage_recv ? rr->nbytes : 0);
    if (need > 0 && !(tmp = malloc(need)))
        return MPI_ERR_NO_MEM;
    if (stage_send) {
        tc_redop_pack(r, in_place ? recvbuf : sendbuf, tmp);
        send = tmp;
    } else if (!in_place) {
        send = tc_redop_stream(r, sendbuf);
    } /* else NULL: the message at the receive buffer, the result over its start */
    if (stage_recv)
        recv = tmp ? tmp + (stage_send ? r->nbytes : 0) : NULL; /* NULL: nothing to receive */
    else
        recv = in_place ? tc_redop_stream(r, recvbuf) : tc_redop_stream(rr, recvbuf);
    int rc = tc_shm_reduce_scatter(ctx->shm, send, recv, counts, stride, scale, r);
    if (rc == 0 && stage_recv)
        tc_redop_unpack(rr, recv, recvbuf);
    free(tmp);
    return rc == 0 ? MPI_SUCCESS : -1;
}

/* Both operations after the checks. */
static int tc_rs_dispatch(tc_ctx_t *ctx, tc_op_t which, const void *sendbuf, void *recvbuf,
                          const int *counts, int stride, long long total, MPI_Datatype dt,
                          MPI_Op op)
{
    const int mine = counts[(size_t)ctx->rank * (size_t)stride];
    tc_path_t path = ctx->bcast_path;
    tc_redop_t r, rr;
    int rc;
    memset(&r, 0, sizeof r);
    memset(&rr, 0, sizeof rr);
    if (total > INT_MAX || tc_redop_init(&r, (int)total, dt, op) != 0 ||
        tc_redop_init(&rr, mine, dt, op) != 0) {
        path = TC_PATH_PMPI_OP;
        goto fn_pmpi;
    }
    if (total == 0 || ctx->size == 1) {
        rc = tc_rs_trivial(&rr, sendbuf, recvbuf);
        tc_redop_free(&r);
        tc_redop_free(&rr);
        tc_stats_count(which, TC_PATH_TRIVIAL);
        return rc;
    }
    if (path == TC_PATH_HIER) {
        static bool logged;
        tc_log_once(logged, TC_LOG_INFO,
                    "%s: %s over several hierarchy levels uses the MPI's own (the hierarchical "
                    "version is not there yet)",
                    ctx->comm_name, tc_stats_op_name(which));
        path = TC_PATH_PMPI_MULTINODE;
    }
    if (path != TC_PATH_SHM)
        goto fn_pmpi;
    {
        /* Large messages: the library's path or the MPI's own, whichever the
         * race measured faster, only where the result's bits cannot depend on
         * the choice (core/reduce.c). */
        const bool order_free =
            r.order == TC_REDOP_ORDER_FREE || (r.order == TC_REDOP_ORDER_SWAP2 && ctx->size == 2);
        tc_race_call_t race;
        tc_race_impl_t impl;
        if ((rc = tc_race_begin(&ctx->race, ctx->shm, ctx->priv, which, r.nbytes, order_free, &race,
                                &impl)) != MPI_SUCCESS) {
            tc_redop_free(&r);
            tc_redop_free(&rr);
            return rc;
        }
        if (impl == TC_RACE_PMPI) {
            tc_redop_free(&r);
            tc_redop_free(&rr);
            tc_stats_count(which, TC_PATH_PMPI_RACE);
            rc = tc_rs_pmpi(which, sendbuf, recvbuf, counts, dt, op, ctx->comm);
            tc_race_end(&ctx->race, &race);
            return rc;
        }
        rc = tc_rs_staged(ctx, &r, &rr, sendbuf, recvbuf, counts, stride, r.nelem / (size_t)total);
        if (rc != -1) {
            tc_race_end(&ctx->race, &race);
            tc_redop_free(&r);
            tc_redop_free(&rr);
            tc_stats_count(which, TC_PATH_SHM);
            return rc;
        }
        /* No reduce area, or an element larger than a slot (the same on
         * every process): nothing moved, nothing timed. */
        path = TC_PATH_PMPI_OP;
    }
fn_pmpi:
    tc_redop_free(&r);
    tc_redop_free(&rr);
    tc_stats_count(which, path);
    return tc_rs_pmpi(which, sendbuf, recvbuf, counts, dt, op, ctx->comm);
}

/* Both entry points: @p fn names the caller in messages. */
static int tc_rs_entry(const char *fn, tc_op_t which, const void *sendbuf, void *recvbuf,
                       const int *counts, int stride, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    int rc, inter = 0;
    long long total = 0;
    tc_ctx_t *ctx;
    if ((rc = tc_rs_check(fn, sendbuf, recvbuf, counts, stride, dt, op, comm, &inter, &ctx,
                          &total)) != MPI_SUCCESS)
        return rc;
    if (inter) {
        tc_stats_count(which, TC_PATH_PMPI_INTERCOMM);
        return tc_rs_pmpi(which, sendbuf, recvbuf, counts, dt, op, comm);
    }
    if (!ctx && (rc = tc_ctx_get(comm, &ctx)) != MPI_SUCCESS) {
        char msg[80];
        snprintf(msg, sizeof msg, "%s: could not create the context", fn);
        return tc_ctx_error(comm, rc, msg);
    }
    if (tc_log_level >= TC_LOG_TRACE)
        tc_log(TC_LOG_TRACE, "%s on %s: %lld elements in all", fn, ctx->comm_name, total);
    rc = tc_rs_dispatch(ctx, which, sendbuf, recvbuf, counts, stride, total, dt, op);
    if (rc == MPI_SUCCESS)
        return rc;
    char msg[80];
    snprintf(msg, sizeof msg, "%s failed", fn);
    return tc_ctx_error(comm, rc, msg);
}

int TC_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return tc_rs_entry("TC_Reduce_scatter_block", TC_OP_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf,
                       &recvcount, 0, datatype, op, comm);
}

int TC_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return tc_rs_entry("TC_Reduce_scatter", TC_OP_REDUCE_SCATTER, sendbuf, recvbuf, recvcounts, 1,
                       datatype, op, comm);
}
