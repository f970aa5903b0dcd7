/* TC_Scan and TC_Exscan: argument checks, then the segment's chain (one
 * node), the hierarchical scan (several nodes whose ranks are contiguous),
 * or the MPI's own. Calls of basic types on the segment skip the general
 * dispatch (tc_scan_direct).
 *
 * Across nodes (bcast_path TC_PATH_HIER) the units are the groups the
 * segments serve (one per node, or per NUMA node etc. at a lower
 * shared-memory level; a rank without a segment is a unit of its own). When
 * every unit's ranks are consecutive: a scan inside each unit (the
 * segment's chain), an exclusive scan of the unit totals among the units'
 * last ranks (recursive doubling, hier/level_scan.h), the result broadcast
 * in the unit (segment) and one fold per process. Units in rank order and
 * the lower part always the left operand: non-commutative operations are
 * right. Whether the units are contiguous is agreed once per communicator
 * (an allgather of each rank's unit leader at the first call on the
 * hierarchical path): a pure function of that array, the same everywhere.
 *
 * What goes to PMPI_* and why (counted in TC_STATS): intercommunicators
 * (pmpi_intercomm: MPI does not define a scan there, the MPI reports it);
 * communicators over several units whose ranks interleave (pmpi_multinode)
 * or without a segment on one node (pmpi_shm_off, pmpi_no_segment);
 * (datatype, op) pairs TC_Reduce does not reduce itself and elements larger
 * than a reduce slot (pmpi_op); large messages the race (race.h) measured
 * faster in the MPI's own, when the result's bits cannot depend on the
 * algorithm (pmpi_race; one segment only).
 */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/log.h"
#include "base/redop.h"
#include "base/tags.h"
#include "ctx.h"
#include "hier/hier_build.h"
#include "hier/level_scan.h"
#include "shm/scan.h"
#include "topocoll.h"

/* Checks of both operations, before anything moves. Returns MPI_SUCCESS or
 * the error class (handler already called); *inter tells the caller to hand
 * the call to PMPI. */
static int tc_scan_check(const char *fn, const void *sendbuf, const void *recvbuf, int count,
                         MPI_Datatype dt, MPI_Op op, MPI_Comm comm, int *inter, tc_ctx_t **cached)
{
    int rc_enter = tc_ctx_enter(comm, fn, cached, inter);
    if (rc_enter != MPI_SUCCESS)
        return rc_enter;
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

/* Tag of the leaders' exchanges on the private communicator. */

/* The units of the hierarchical scan, agreed by every process (ctx.h). */
typedef struct tc_scan_units {
    int contiguous; /* every unit's ranks are consecutive */
    int nunits;
    int unit;   /* this rank's unit, in rank order */
    int lo, n;  /* its first rank and size */
    int last[]; /* nunits: the last rank of each unit (the leaders' exscan runs among them) */
} tc_scan_units_t;

int tc_scan_units_contiguous(const tc_scan_units_t *u)
{
    return u->contiguous;
}
int tc_scan_units_count(const tc_scan_units_t *u)
{
    return u->nunits;
}

/* The units of @p ctx (built at the first call: collective over priv). */
static tc_err_t tc_scan_units_get(tc_ctx_t *ctx, tc_scan_units_t **out)
{
    const int p = ctx->size;
    if ((*out = ctx->scan_units) != NULL)
        return TC_OK;
    int mine = ctx->rank; /* the first rank of this rank's unit */
    const int i = tc_hier_shm_index(ctx->hier);
    if (ctx->shm && i >= 0 && ctx->hier->level[i].shm)
        mine = ctx->hier->level[i].members[0];
    int *lead = malloc(sizeof(int) * (size_t)p);
    tc_scan_units_t *u = malloc(sizeof *u + sizeof(int) * (size_t)p);
    tc_err_t rc = TC_OK;
    if (!lead || !u) {
        rc = tc_err(TC_ERR_NOMEM); /* before the allgather: the others fail in it or later */
        goto fn_exit;
    }
    if ((rc = PMPI_Allgather(&mine, 1, MPI_INT, lead, 1, MPI_INT, ctx->priv)) != MPI_SUCCESS)
        goto fn_exit;
    u->contiguous = 1;
    u->nunits = 0;
    for (int x = 0; x < p; x++) {
        if (x > 0 && lead[x] != lead[x - 1]) {
            if (lead[x] != x)
                u->contiguous = 0; /* a unit that started before resumes here */
            u->last[u->nunits++] = x - 1;
        }
        if (x == ctx->rank)
            u->unit = u->nunits;
    }
    u->last[u->nunits++] = p - 1;
    u->lo = u->unit == 0 ? 0 : u->last[u->unit - 1] + 1;
    u->n = u->last[u->unit] - u->lo + 1;
    ctx->scan_units = *out = u;
    u = NULL;
fn_exit:
    free(lead);
    free(u);
    return rc;
}

/* The hierarchical scan on packed streams (file comment): @p send NULL: in
 * place. Every process calls with the same op and nelem. */
static tc_err_t tc_scan_hier(tc_ctx_t *ctx, const tc_scan_units_t *u, const tc_redop_t *r,
                             const char *send, char *recv, bool exclusive)
{
    const size_t nb = r->nbytes, n = r->nelem;
    const int local = ctx->rank - u->lo;
    const bool last = local == u->n - 1, later = u->unit > 0;
    tc_shm_comm_t *s = u->n > 1 ? ctx->shm : NULL;
    const char *own = send ? send : recv;
    char *tmp = NULL, *ex = NULL;
    tc_err_t rc = TC_OK;
    /* The last rank: a copy of its contribution, its unit's total, the
     * leaders' scan's scratch (2 nb) and the result: 5 nb; the others of a
     * later unit: the result. */
    if (u->nunits > 1 && (last || later)) {
        if (!(tmp = malloc(last ? 5 * nb : nb)))
            return tc_err(TC_ERR_NOMEM);
        ex = last ? tmp + 4 * nb : tmp;
    }
    if (last && tmp && exclusive && local > 0 && !send) {
        memcpy(tmp, own, nb); /* the local Exscan overwrites it */
        own = tmp;
    }
    if (s) {
        if ((rc = tc_shm_scan(s, send, recv, n, r, exclusive)) != TC_OK)
            goto fn_exit;
    } else if (!exclusive && send) {
        memcpy(recv, send, nb);
    }
    if (u->nunits == 1)
        goto fn_exit;
    if (last) {
        /* This unit's total: the inclusive prefix at its last rank (read
         * into the leaders' scratch before anything overwrites it). */
        const char *total = recv;
        if (exclusive && local == 0) {
            total = own;
        } else if (exclusive) {
            tc_redop_apply3(r, recv, own, tmp + nb, n);
            total = tmp + nb;
        }
        if ((rc = tc_hier_exscan_group(total, ex, tmp + 2 * nb, n, r, u->last, u->nunits, u->unit,
                                       ctx->priv, TC_TAG_SCAN_HIER, &ctx->msg_wait_info)) != TC_OK)
            goto fn_exit;
    }
    if (!later)
        goto fn_exit;
    if (s)
        tc_shm_bcast_pipelined(s, ex, nb, u->n - 1, NULL);
    if (exclusive && local == 0)
        memcpy(recv, ex, nb);
    else
        tc_redop_apply(r, ex, recv, n); /* recv = (units before) op (this unit's prefix) */
fn_exit:
    free(tmp);
    return rc;
}

/* The segment's chain (@p u NULL) or the hierarchical scan over the units
 * @p u, derived datatypes staged through packed buffers. TC_ERR_NOTSUP
 * (segment only): fall back, everywhere alike, nothing moved. */
static tc_err_t tc_scan_staged(tc_ctx_t *ctx, const tc_scan_units_t *u, const tc_redop_t *r,
                               const void *sendbuf, void *recvbuf, bool exclusive)
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
    const tc_err_t rc = u ? tc_scan_hier(ctx, u, r, send, recv, exclusive)
                          : tc_shm_scan(ctx->shm, send, recv, r->nelem, r, exclusive);
    if (rc == TC_OK && receives && !r->contiguous)
        tc_redop_unpack(r, recv, recvbuf);
    free(tmp);
    return rc;
}

/* The common operands straight to the segment (issue 19): a predefined op
 * other than MINLOC/MAXLOC on a named basic type with a loop
 * (tc_redop_basic_loops, through the context's memory of the last pair),
 * count > 0, more than one process, on the segment spanning the
 * communicator, below the race's threshold: tc_shm_scan_loops() runs what
 * tc_shm_scan() would on the same message (no tc_redop_t, no staging).
 * Every condition holds on every process alike except the datatype's name:
 * a process passing another datatype of the same signature goes through
 * tc_scan_dispatch() and meets this one in the same protocol. Returns 1
 * when done (*rc set), 0 for tc_scan_dispatch() (nothing moved). */
static inline int tc_scan_direct(tc_ctx_t *ctx, tc_op_t which, const void *sendbuf, void *recvbuf,
                                 int count, MPI_Datatype dt, MPI_Op op, int *rc)
{
    if (ctx->bcast_path != TC_PATH_SHM || count <= 0 || ctx->size == 1)
        return 0;
    const tc_redop_loops_t *l = tc_redop_basic_loops_last(&ctx->scan_last, dt, op);
    if (!l)
        return 0;
    const size_t nbytes = (size_t)count * l->elem;
    /* tc_race_begin() would race it: tc_scan_dispatch(). */
    if (ctx->race.min != 0 && nbytes >= ctx->race.min)
        return 0;
    const tc_err_t e = tc_shm_scan_loops(ctx->shm, sendbuf == MPI_IN_PLACE ? NULL : sendbuf,
                                         recvbuf, (size_t)count, l, which == TC_OP_EXSCAN);
    if (tc_err_kind(e) == TC_ERR_NOTSUP)
        return 0; /* no reduce area (every process alike): tc_scan_dispatch() falls back */
    tc_stats_count(which, TC_PATH_SHM);
    *rc = e;
    return 1;
}

/* Both operations after the checks. */
static __attribute__((noinline)) tc_err_t tc_scan_dispatch(tc_ctx_t *ctx, tc_op_t which,
                                                           const void *sendbuf, void *recvbuf,
                                                           int count, MPI_Datatype dt, MPI_Op op)
{
    const bool exclusive = which == TC_OP_EXSCAN;
    tc_path_t path = ctx->bcast_path;
    tc_scan_units_t *u = NULL;
    tc_redop_t r;
    tc_err_t rc;
    /* The units are agreed at the first call on the hierarchical path,
     * whatever its arguments: every process makes that call. */
    if (path == TC_PATH_HIER && (rc = tc_scan_units_get(ctx, &u)) != TC_OK)
        return rc;
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
        if (!u->contiguous) {
            static bool logged;
            tc_log_once(logged, TC_LOG_INFO,
                        "%s: the nodes' ranks interleave: %s uses the MPI's own (the "
                        "hierarchical scan needs each node's ranks contiguous)",
                        ctx->comm_name, tc_stats_op_name(which));
            path = TC_PATH_PMPI_MULTINODE;
            goto fn_pmpi;
        }
        /* What the segments would refuse (agreed parameters, the same
         * in every unit): the MPI's own. */
        if (ctx->shm_params.reduce_slots <= 0 || r.elem > ctx->shm_params.reduce_slot_bytes) {
            path = TC_PATH_PMPI_OP;
            goto fn_pmpi;
        }
        rc = tc_scan_staged(ctx, u, &r, sendbuf, recvbuf, exclusive);
        tc_redop_free(&r);
        tc_stats_count(which, TC_PATH_HIER);
        return rc;
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
        rc = tc_scan_staged(ctx, NULL, &r, sendbuf, recvbuf, exclusive);
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

/* Inlined into TC_Scan and TC_Exscan: one call less on the small path. */
static inline __attribute__((always_inline)) int tc_scan_entry(const char *fn, tc_op_t which,
                                                               const void *sendbuf, void *recvbuf,
                                                               int count, MPI_Datatype dt,
                                                               MPI_Op op, MPI_Comm comm)
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
    if (!tc_scan_direct(ctx, which, sendbuf, recvbuf, count, dt, op, &rc))
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
