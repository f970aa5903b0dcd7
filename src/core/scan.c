/* TC_Scan and TC_Exscan: argument checks, then the segment's chain (one
 * node), or the MPI's own.
 *
 * What goes to PMPI_* and why (counted in TC_STATS): intercommunicators
 * (pmpi_intercomm: MPI does not define a scan there, the MPI reports it);
 * communicators over several hierarchy levels (pmpi_multinode: node-local
 * scans, an exclusive scan of the node totals among leaders and one fold per
 * process, for nodes whose ranks are contiguous, is later work of issue 19)
 * or without a segment (pmpi_shm_off, pmpi_no_segment); (datatype, op) pairs
 * TC_Reduce does not reduce itself and elements larger than a reduce slot
 * (pmpi_op); large messages the race (race.h) measured faster in the MPI's
 * own, when the result's bits cannot depend on the algorithm (pmpi_race).
 */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/log.h"
#include "base/redop.h"
#include "ctx.h"
#include "shm/scan.h"
#include "topocoll.h"

/* Checks of both operations, before anything moves. Returns MPI_SUCCESS or
 * the error class (handler already called); *inter tells the caller to hand
 * the call to PMPI. */
static int tc_scan_check(const char *fn, const void *sendbuf, const void *recvbuf, int count,
                         MPI_Datatype dt, MPI_Op op, MPI_Comm comm, int *inter, tc_ctx_t **cached)
{
    if (comm == MPI_COMM_NULL)
        return tc_ctx_fail(MPI_COMM_WORLD, tc_err(TC_ERR_COMM), fn, "MPI_COMM_NULL");
    tc_ctx_t *ctx = tc_ctx_lookup(comm);
    if (!ctx)
        ctx = tc_ctx_peek(comm);
    *cached = ctx;
    if (ctx) {
        *inter = ctx->is_inter;
    } else if (PMPI_Comm_test_inter(comm, inter) != MPI_SUCCESS) {
        return tc_ctx_fail(MPI_COMM_WORLD, tc_err(TC_ERR_COMM), fn, "invalid communicator");
    }
    if (count < 0)
        return tc_ctx_fail(comm, tc_err(TC_ERR_COUNT), fn, "negative count");
    if (dt == MPI_DATATYPE_NULL)
        return tc_ctx_fail(comm, tc_err(TC_ERR_TYPE), fn, "invalid datatype");
    if (op == MPI_OP_NULL)
        return tc_ctx_fail(comm, tc_err(TC_ERR_OP), fn, "MPI_OP_NULL");
    if (!*inter && count > 0 && sendbuf == recvbuf)
        return tc_ctx_fail(comm, tc_err(TC_ERR_BUFFER), fn,
                           "sendbuf and recvbuf alias (use MPI_IN_PLACE)");
    return MPI_SUCCESS;
}

static tc_err_t tc_scan_pmpi(tc_op_t which, const void *sendbuf, void *recvbuf, int count,
                             MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    if (which == TC_OP_EXSCAN)
        return PMPI_Exscan(sendbuf, recvbuf, count, dt, op, comm);
    return PMPI_Scan(sendbuf, recvbuf, count, dt, op, comm);
}

/* The MPI's own on the packed stream (base/redop.h: elements of the one
 * basic type), for a predefined op other than MINLOC/MAXLOC on a derived
 * datatype: Open MPI 4.1.4 rejects predefined ops on derived datatypes
 * (MPI_ERR_OP), which the standard allows, and the prefix of the packed basic
 * elements is the same one. Else (or @p r empty: tc_redop_init() failed) the
 * call unchanged. */
static tc_err_t tc_scan_mpi(const tc_ctx_t *ctx, tc_op_t which, const tc_redop_t *r,
                            const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                            MPI_Op op)
{
    if (!r->predefined || r->pair || r->dt == r->elem_type || r->nelem > INT_MAX)
        return tc_scan_pmpi(which, sendbuf, recvbuf, count, dt, op, ctx->comm);
    const bool in_place = sendbuf == MPI_IN_PLACE;
    /* Exscan's process 0 receives nothing: its buffer is left alone. */
    const bool receives = which != TC_OP_EXSCAN || ctx->rank > 0;
    char *tmp = NULL;
    if (!r->contiguous && !(tmp = malloc(2 * r->nbytes + 1)))
        return tc_err(TC_ERR_NOMEM);
    const void *send = MPI_IN_PLACE;
    void *recv = r->contiguous ? tc_redop_stream(r, recvbuf) : tmp + r->nbytes;
    if (!in_place) {
        send = r->contiguous ? tc_redop_stream(r, sendbuf) : tmp;
        if (!r->contiguous)
            tc_redop_pack(r, sendbuf, tmp);
    } else if (!r->contiguous) {
        tc_redop_pack(r, recvbuf, recv);
    }
    const int rc = tc_scan_pmpi(which, send, recv, (int)r->nelem, r->elem_type, op, ctx->comm);
    if (rc == MPI_SUCCESS && receives && !r->contiguous)
        tc_redop_unpack(r, recv, recvbuf);
    free(tmp);
    return rc;
}

/* The segment's chain, derived datatypes staged through packed buffers.
 * TC_ERR_NOTSUP: fall back, everywhere alike, nothing moved. */
static tc_err_t tc_scan_staged(tc_ctx_t *ctx, const tc_redop_t *r, const void *sendbuf,
                               void *recvbuf, bool exclusive)
{
    const bool in_place = sendbuf == MPI_IN_PLACE;
    /* Exscan's process 0 receives nothing: its buffer is left alone. */
    const bool receives = !exclusive || ctx->rank > 0;
    char *tmp = NULL;
    const void *send = NULL;
    void *recv = NULL;
    if (!r->contiguous && !(tmp = malloc(2 * r->nbytes)))
        return tc_err(TC_ERR_NOMEM);
    if (!in_place) {
        send = r->contiguous ? tc_redop_stream(r, sendbuf) : tmp;
        if (!r->contiguous)
            tc_redop_pack(r, sendbuf, tmp);
    }
    recv = r->contiguous ? tc_redop_stream(r, recvbuf) : tmp + r->nbytes;
    if (in_place && !r->contiguous)
        tc_redop_pack(r, recvbuf, recv);
    const tc_err_t rc = tc_shm_scan(ctx->shm, send, recv, r->nelem, r, exclusive);
    if (rc == TC_OK && receives && !r->contiguous)
        tc_redop_unpack(r, recv, recvbuf);
    free(tmp);
    return rc;
}

/* Both operations after the checks. */
static tc_err_t tc_scan_dispatch(tc_ctx_t *ctx, tc_op_t which, const void *sendbuf, void *recvbuf,
                                 int count, MPI_Datatype dt, MPI_Op op)
{
    const bool exclusive = which == TC_OP_EXSCAN;
    tc_path_t path = ctx->bcast_path;
    tc_redop_t r;
    tc_err_t rc;
    if (tc_redop_init(&r, count, dt, op) != 0) {
        path = TC_PATH_PMPI_OP;
        goto fn_pmpi;
    }
    if (count == 0 || ctx->size == 1) {
        /* Scan: our own contribution; Exscan: nothing (process 0's
         * receive buffer is undefined). */
        rc = MPI_SUCCESS;
        if (!exclusive && sendbuf != MPI_IN_PLACE && r.nbytes > 0) {
            if (r.contiguous) {
                memcpy(tc_redop_stream(&r, recvbuf), tc_redop_stream(&r, sendbuf), r.nbytes);
            } else {
                char *tmp = malloc(r.nbytes);
                if (tmp) {
                    tc_redop_pack(&r, sendbuf, tmp);
                    tc_redop_unpack(&r, tmp, recvbuf);
                    free(tmp);
                } else {
                    rc = tc_err(TC_ERR_NOMEM);
                }
            }
        }
        tc_redop_free(&r);
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
        /* Large messages: the race, only where the result's bits cannot
         * depend on the choice (core/reduce.c). */
        const bool order_free =
            r.order == TC_REDOP_ORDER_FREE || (r.order == TC_REDOP_ORDER_SWAP2 && ctx->size == 2);
        tc_race_call_t race;
        tc_race_impl_t impl;
        if ((rc = tc_race_begin(&ctx->race, ctx->shm, ctx->priv, which, r.nbytes, order_free, &race,
                                &impl)) != MPI_SUCCESS) {
            tc_redop_free(&r);
            return rc;
        }
        if (impl == TC_RACE_PMPI) {
            tc_stats_count(which, TC_PATH_PMPI_RACE);
            rc = tc_scan_mpi(ctx, which, &r, sendbuf, recvbuf, count, dt, op);
            tc_race_end(&ctx->race, &race);
            tc_redop_free(&r);
            return rc;
        }
        rc = tc_scan_staged(ctx, &r, sendbuf, recvbuf, exclusive);
        if (tc_err_kind(rc) != TC_ERR_NOTSUP) {
            tc_race_end(&ctx->race, &race);
            tc_redop_free(&r);
            tc_stats_count(which, TC_PATH_SHM);
            return rc;
        }
        /* No reduce area, or an element larger than a slot (the same on
         * every process): nothing moved, nothing timed. */
        tc_race_skip(&ctx->race, &race);
        path = TC_PATH_PMPI_OP;
    }
fn_pmpi:
    tc_stats_count(which, path);
    rc = tc_scan_mpi(ctx, which, &r, sendbuf, recvbuf, count, dt, op);
    tc_redop_free(&r);
    return rc;
}

static int tc_scan_entry(const char *fn, tc_op_t which, const void *sendbuf, void *recvbuf,
                         int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    int rc, inter = 0;
    tc_ctx_t *ctx;
    if ((rc = tc_scan_check(fn, sendbuf, recvbuf, count, dt, op, comm, &inter, &ctx)) !=
        MPI_SUCCESS)
        return rc;
    if (inter) {
        tc_stats_count(which, TC_PATH_PMPI_INTERCOMM);
        return tc_scan_pmpi(which, sendbuf, recvbuf, count, dt, op, comm);
    }
    if (!ctx && (rc = tc_ctx_get(comm, &ctx)) != MPI_SUCCESS) {
        char msg[80];
        snprintf(msg, sizeof msg, "%s: could not create the context", fn);
        return tc_ctx_error(comm, rc, msg);
    }
    if (tc_log_level >= TC_LOG_TRACE)
        tc_log(TC_LOG_TRACE, "%s on %s: count %d", fn, ctx->comm_name, count);
    rc = tc_scan_dispatch(ctx, which, sendbuf, recvbuf, count, dt, op);
    if (rc == MPI_SUCCESS)
        return rc;
    char msg[80];
    snprintf(msg, sizeof msg, "%s failed", fn);
    return tc_ctx_error(comm, rc, msg);
}

int TC_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
            MPI_Comm comm)
{
    return tc_scan_entry("TC_Scan", TC_OP_SCAN, sendbuf, recvbuf, count, datatype, op, comm);
}

int TC_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm)
{
    return tc_scan_entry("TC_Exscan", TC_OP_EXSCAN, sendbuf, recvbuf, count, datatype, op, comm);
}
