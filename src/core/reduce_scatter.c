/* TC_Reduce_scatter_block and TC_Reduce_scatter: argument checks, then the
 * segment (one node), or the MPI's own.
 *
 * Both are one operation here: process i receives counts[i * stride]
 * elements of the reduction (stride 0: the block variant, every process the
 * same count). Over several hierarchy levels, the hierarchical version
 * (hier: reduce in each group, reduce-scatter among the top group, scatter
 * down the groups; hier/hier_reduce_scatter.h). What goes to PMPI_* and why
 * (counted in TC_STATS):
 *  - intercommunicators (pmpi_intercomm);
 *  - communicators with neither a segment nor a hierarchy (pmpi_multinode:
 *    TC_HIER=0 across nodes; pmpi_shm_off, pmpi_no_segment);
 *  - (datatype, op) pairs TC_Reduce does not reduce itself, a message of more
 *    than INT_MAX elements of the datatype, an element larger than a reduce
 *    slot, a non-commutative op over several levels (the groups follow the
 *    machine, not rank order: as TC_Reduce) (pmpi_op);
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

#include "base/err.h"
#include "base/log.h"
#include "base/redop.h"
#include "ctx.h"
#include "hier/hier_reduce_scatter.h"
#include "shm/reduce_scatter.h"
#include "topocoll.h"

/* Checks of both operations, before anything moves. Returns MPI_SUCCESS or
 * the error class (handler already called); *inter tells the caller to hand
 * the call to PMPI (whose recvcounts are over the remote group: not read
 * here); *total: the sum of the counts, *before: the sum of the counts of
 * the ranks before this one (one pass over the counts; none for the block
 * variant). */
static int tc_rs_check(const char *fn, const void *sendbuf, const void *recvbuf, const int *counts,
                       int stride, MPI_Datatype dt, MPI_Op op, MPI_Comm comm, int *inter,
                       tc_ctx_t **cached, long long *total, long long *before)
{
    int rank, size;
    int rc_enter = tc_ctx_enter(comm, fn, cached, inter);
    if (rc_enter != MPI_SUCCESS)
        return rc_enter;
    tc_ctx_t *ctx = *cached;
    if (!counts)
        return tc_ctx_fail(comm, tc_err(TC_ERR_ARG), fn, "recvcounts is NULL");
    if (dt == MPI_DATATYPE_NULL)
        return tc_ctx_fail(comm, tc_err(TC_ERR_TYPE), fn, "invalid datatype");
    if (op == MPI_OP_NULL)
        return tc_ctx_fail(comm, tc_err(TC_ERR_OP), fn, "MPI_OP_NULL");
    if (stride == 0 && counts[0] < 0)
        return tc_ctx_fail(comm, tc_err(TC_ERR_COUNT), fn, "negative recvcount");
    if (*inter)
        return MPI_SUCCESS;
    tc_ctx_rank_size(ctx, comm, &rank, &size);
    if (stride == 0) {
        *total = (long long)counts[0] * size;
        *before = (long long)counts[0] * rank;
    } else {
        long long sum = 0;
        for (int i = 0; i < size; i++) {
            const int c = counts[(size_t)i * (size_t)stride];
            if (c < 0)
                return tc_ctx_fail(comm, tc_err(TC_ERR_COUNT), fn, "negative count in recvcounts");
            if (i == rank)
                *before = sum;
            sum += c;
        }
        *total = sum;
    }
    if (*total > 0 && sendbuf == recvbuf)
        return tc_ctx_fail(comm, tc_err(TC_ERR_BUFFER), fn,
                           "sendbuf and recvbuf alias (use MPI_IN_PLACE)");
    return MPI_SUCCESS;
}

/* PMPI_Reduce_scatter(_block), except that MPI_IN_PLACE in the v-variant
 * (@p total > 0 elements in all; -1: unknown, an intercommunicator) becomes
 * an explicit copy of the message: Debian's MPICH 4.0.2 aborts on it at
 * ~145K ints in all ("memcpy argument memory ranges overlap" in
 * typerep_yaksa_pack.c). */
static tc_err_t tc_rs_pmpi(tc_op_t which, const void *sendbuf, void *recvbuf, const int *counts,
                           long long total, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    if (which == TC_OP_REDUCE_SCATTER_BLOCK)
        return PMPI_Reduce_scatter_block(sendbuf, recvbuf, counts[0], dt, op, comm);
    if (sendbuf != MPI_IN_PLACE || total <= 0)
        return PMPI_Reduce_scatter(sendbuf, recvbuf, counts, dt, op, comm);
    MPI_Aint tlb, textent, lb, extent;
    PMPI_Type_get_true_extent(dt, &tlb, &textent);
    PMPI_Type_get_extent(dt, &lb, &extent);
    const size_t span =
        (size_t)textent + (size_t)(total - 1) * (size_t)(extent < 0 ? -extent : extent);
    char *tmp = malloc(span ? span : 1);
    if (!tmp)
        return tc_err(TC_ERR_NOMEM);
    /* The whole span, holes included: only the type map's bytes are read. */
    const char *first = (const char *)recvbuf + tlb;
    if (extent < 0)
        first += (MPI_Aint)(total - 1) * extent;
    memcpy(tmp, first, span);
    const char *send = tmp - (first - (const char *)recvbuf);
    const int rc = PMPI_Reduce_scatter(send, recvbuf, counts, dt, op, comm);
    free(tmp);
    return rc;
}

/* The MPI's own on the packed streams (base/redop.h: elements of the one
 * basic type), for a predefined op other than MINLOC/MAXLOC on a derived
 * datatype: Open MPI 4.1.4 rejects predefined ops on derived datatypes
 * (MPI_ERR_OP), which the standard allows, and the reduction of the packed
 * basic elements is the same one. @p r: the whole message, @p rr: this
 * process's part (either may be empty: tc_redop_init() failed). Returns the
 * MPI's code, or TC_ERR_NOTSUP when this does not apply (the caller passes the
 * call on unchanged). */
static tc_err_t tc_rs_pmpi_packed(const tc_ctx_t *ctx, tc_op_t which, const tc_redop_t *r,
                                  const tc_redop_t *rr, const void *sendbuf, void *recvbuf,
                                  const int *counts, int stride, long long total, MPI_Op op)
{
    if (!r->predefined || r->pair || !rr->predefined || r->dt == r->elem_type || total <= 0)
        return tc_err(TC_ERR_NOTSUP);
    const size_t scale = r->nelem / (size_t)total;
    const int p = ctx->size;
    int *pc = malloc(sizeof(int) * (size_t)p);
    if (!pc)
        return tc_err(TC_ERR_NOMEM);
    for (int i = 0; i < p; i++) {
        const size_t c = (size_t)counts[(size_t)i * (size_t)stride] * scale;
        if (c > INT_MAX) {
            free(pc);
            return tc_err(TC_ERR_NOTSUP);
        }
        pc[i] = (int)c;
    }
    const bool in_place = sendbuf == MPI_IN_PLACE;
    /* In place, the whole message is staged at the receive side, and the
     * v-variant gets a copy of it as its send buffer (tc_rs_pmpi()). */
    const bool copy_send = in_place && which == TC_OP_REDUCE_SCATTER;
    const bool stage_send = (!in_place && !r->contiguous) || copy_send;
    const bool stage_recv = in_place ? !r->contiguous : !rr->contiguous;
    const size_t recv_bytes = in_place ? r->nbytes : rr->nbytes;
    char *tmp = NULL;
    const size_t need = (stage_send ? r->nbytes : 0) + (stage_recv ? recv_bytes : 0);
    if (need > 0 && !(tmp = malloc(need))) {
        free(pc);
        return tc_err(TC_ERR_NOMEM);
    }
    const void *send = MPI_IN_PLACE;
    void *recv;
    if (stage_send && !copy_send) {
        tc_redop_pack(r, sendbuf, tmp);
        send = tmp;
    } else if (!in_place) {
        send = tc_redop_stream(r, sendbuf);
    }
    if (stage_recv) {
        recv = tmp ? tmp + (stage_send ? r->nbytes : 0) : NULL; /* NULL: nothing to receive */
        if (in_place)
            tc_redop_pack(r, recvbuf, recv);
    } else {
        recv = in_place ? tc_redop_stream(r, recvbuf) : tc_redop_stream(rr, recvbuf);
    }
    if (copy_send) {
        memcpy(tmp, recv, r->nbytes);
        send = tmp;
    }
    const int rc = which == TC_OP_REDUCE_SCATTER_BLOCK
                       ? PMPI_Reduce_scatter_block(send, recv, pc[0], r->elem_type, op, ctx->comm)
                       : PMPI_Reduce_scatter(send, recv, pc, r->elem_type, op, ctx->comm);
    if (rc == MPI_SUCCESS && stage_recv && rr->nbytes > 0)
        tc_redop_unpack(rr, recv, recvbuf);
    free(tmp);
    free(pc);
    return rc;
}

/* The MPI's own: on the packed streams where tc_rs_pmpi_packed() applies,
 * else unchanged. */
static tc_err_t tc_rs_mpi(const tc_ctx_t *ctx, tc_op_t which, const tc_redop_t *r,
                          const tc_redop_t *rr, const void *sendbuf, void *recvbuf,
                          const int *counts, int stride, long long total, MPI_Datatype dt,
                          MPI_Op op)
{
    const tc_err_t rc =
        tc_rs_pmpi_packed(ctx, which, r, rr, sendbuf, recvbuf, counts, stride, total, op);
    return tc_err_kind(rc) != TC_ERR_NOTSUP
               ? rc
               : tc_rs_pmpi(which, sendbuf, recvbuf, counts, total, dt, op, ctx->comm);
}

/* One process or nothing to combine: the result is our own contribution
 * (@p rr describes our part, the first counts[rank] elements of the send
 * buffer, so the same type map). In place there is nothing to move. */
static tc_err_t tc_rs_trivial(const tc_redop_t *rr, const void *sendbuf, void *recvbuf)
{
    if (sendbuf == MPI_IN_PLACE || rr->nbytes == 0)
        return MPI_SUCCESS;
    if (rr->contiguous) {
        memcpy(tc_redop_stream(rr, recvbuf), tc_redop_stream(rr, sendbuf), rr->nbytes);
        return MPI_SUCCESS;
    }
    char *tmp = malloc(rr->nbytes);
    if (!tmp)
        return tc_err(TC_ERR_NOMEM);
    tc_redop_pack(rr, sendbuf, tmp);
    tc_redop_unpack(rr, tmp, recvbuf);
    free(tmp);
    return MPI_SUCCESS;
}

/* The segment's Reduce_scatter (@p hier: the hierarchy's), derived
 * datatypes staged through packed buffers. @p r: the whole message; @p rr:
 * this process's part, which starts @p lo packed elements into the message.
 * TC_ERR_NOTSUP (the segment only): fall back, everywhere alike, nothing
 * moved. */
static tc_err_t tc_rs_staged(tc_ctx_t *ctx, bool hier, const tc_redop_t *r, const tc_redop_t *rr,
                             const void *sendbuf, void *recvbuf, const int *counts, int stride,
                             size_t scale, size_t lo)
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
        return tc_err(TC_ERR_NOMEM);
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
    const tc_err_t rc =
        hier ? tc_hier_reduce_scatter(ctx->hier, ctx->shm, ctx->priv, send, recv, counts, stride,
                                      scale, r)
             : tc_shm_reduce_scatter(ctx->shm, send, recv, r->nelem, lo, rr->nelem, r);
    if (rc == TC_OK && stage_recv && rr->nbytes > 0)
        tc_redop_unpack(rr, recv, recvbuf);
    free(tmp);
    return rc;
}

/* Whether the classification of @p r (tc_redop_init() on @p dt) is the same
 * at any count but for count, nelem and nbytes. The count matters only to
 * derived datatypes (whether count elements are contiguous, the type map): a
 * named basic type (r's element type is the datatype itself; not a
 * MINLOC/MAXLOC pair, whose packed element differs from its layout) or a
 * user op's datatype (its element, contiguous at any count) does not
 * depend on it, and its packed elements are the datatype's elements. */
static inline bool tc_rs_count_free(const tc_redop_t *r, MPI_Datatype dt)
{
    return r->elem_type == dt && r->contiguous && !r->pair;
}

/* This process's part @p rr (@p mine elements of @p dt) of the message @p r
 * describes: r with the count changed where tc_rs_count_free(), else
 * tc_redop_init() of its own. *@p own: rr is its own (to free), else a copy
 * of r sharing whatever r holds (freed with r only). */
static inline tc_err_t tc_rs_part(const tc_redop_t *r, int mine, MPI_Datatype dt, MPI_Op op,
                                  tc_redop_t *rr, bool *own)
{
    *own = !tc_rs_count_free(r, dt);
    if (*own)
        return tc_redop_init(rr, mine, dt, op);
    *rr = *r;
    rr->count = mine;
    rr->nelem = (size_t)mine;
    rr->nbytes = (size_t)mine * r->elem;
    return TC_OK;
}

/* The operands of tc_rs_dispatch(): @p rr when it is its own. */
static inline void tc_rs_release(tc_redop_t *r, tc_redop_t *rr, bool own)
{
    tc_redop_free(r);
    if (own)
        tc_redop_free(rr);
}

/* The direct path (issue 19: small messages): on the segment, below the
 * race's threshold (so the general path would not race either), on a type
 * whose packed stream is the buffer itself (tc_rs_count_free: our part is
 * elements [before, before + mine) of it, no second classification,
 * nothing staged). Only the agreed path and message size choose the
 * segment's protocol: a process that takes the general path instead
 * (another layout of the same signature) makes the same call of
 * tc_shm_reduce_scatter. */
static inline bool tc_rs_direct(const tc_ctx_t *ctx, const tc_redop_t *r, MPI_Datatype dt)
{
    return ctx->bcast_path == TC_PATH_SHM && r->nbytes > 0 && ctx->size > 1 &&
           (ctx->race.min == 0 || r->nbytes < ctx->race.min) &&
           !tc_race_wide_due(&ctx->race, r->nbytes) && tc_rs_count_free(r, dt);
}

/* Both operations after the checks, but for tc_rs_direct()'s calls: @p rp is
 * tc_redop_init() of the whole message, which took it when @p r_ok (else it
 * is empty: refused, or not tried); freed here either way. @p before
 * elements of the message precede this process's part. Out of line: the
 * direct calls run without its stack frame. */
static __attribute__((noinline)) tc_err_t
tc_rs_dispatch(tc_ctx_t *ctx, tc_op_t which, tc_redop_t *rp, bool r_ok, const void *sendbuf,
               void *recvbuf, const int *counts, int stride, long long total, long long before,
               MPI_Datatype dt, MPI_Op op)
{
    const int mine = counts[(size_t)ctx->rank * (size_t)stride];
    tc_path_t path = ctx->bcast_path;
    tc_redop_t r, rr;
    bool rr_own = false;
    tc_err_t rc;
    r = *rp;
    if (!r_ok) {
        /* Empty operands (safe to free; tc_rs_mpi() then passes the call on
         * unchanged). */
        memset(&rr, 0, sizeof rr);
        path = TC_PATH_PMPI_OP;
        goto fn_pmpi;
    }
    if (tc_rs_part(&r, mine, dt, op, &rr, &rr_own) != 0) {
        path = TC_PATH_PMPI_OP;
        goto fn_pmpi;
    }
    if (total == 0 || ctx->size == 1) {
        rc = tc_rs_trivial(&rr, sendbuf, recvbuf);
        tc_rs_release(&r, &rr, rr_own);
        tc_stats_count(which, TC_PATH_TRIVIAL);
        return rc;
    }
    if (path == TC_PATH_HIER && !r.commutative) {
        /* Groups follow the machine, not rank order (as TC_Reduce). */
        static bool logged;
        tc_log_once(logged, TC_LOG_INFO,
                    "%s: a non-commutative operation over several hierarchy levels uses "
                    "the MPI's own %s",
                    ctx->comm_name, tc_stats_op_name(which));
        path = TC_PATH_PMPI_OP;
        goto fn_pmpi;
    }
    if (path == TC_PATH_HIER && r.elem > ctx->shm_params.reduce_slot_bytes) {
        path = TC_PATH_PMPI_OP; /* an element larger than a reduce slot */
        goto fn_pmpi;
    }
    if (path != TC_PATH_SHM && path != TC_PATH_HIER)
        goto fn_pmpi;
    {
        /* Large messages: the library's path or the MPI's own, whichever the
         * race measured faster, only where the result's bits cannot depend on
         * the choice (core/reduce.c). */
        const bool order_free =
            r.order == TC_REDOP_ORDER_FREE || (r.order == TC_REDOP_ORDER_SWAP2 && ctx->size == 2);
        tc_race_call_t race;
        tc_race_impl_t impl;
        if ((rc = tc_race_begin(&ctx->race, path == TC_PATH_SHM ? ctx->shm : NULL, ctx->priv, which,
                                r.nbytes, order_free, &race, &impl)) != MPI_SUCCESS) {
            tc_rs_release(&r, &rr, rr_own);
            return rc;
        }
        if (impl == TC_RACE_PMPI) {
            tc_stats_count(which, TC_PATH_PMPI_RACE);
            rc = tc_rs_mpi(ctx, which, &r, &rr, sendbuf, recvbuf, counts, stride, total, dt, op);
            tc_race_end(&ctx->race, &race);
            tc_rs_release(&r, &rr, rr_own);
            return rc;
        }
        /* Not raced against the MPI's own: the fragment size may race
         * instead (race.h; Reduce_scatter folds every element in rank order
         * whatever the fragment). */
        bool wide = false;
        if (!race.raced && path == TC_PATH_SHM && tc_race_wide_due(&ctx->race, r.nbytes))
            tc_race_begin_wide(&ctx->race, ctx->shm, which, r.nbytes, true, &race, &wide);
        if (wide)
            tc_shm_reduce_set_wide(ctx->shm, true);
        const size_t scale = r.nelem / (size_t)total;
        rc = tc_rs_staged(ctx, path == TC_PATH_HIER, &r, &rr, sendbuf, recvbuf, counts, stride,
                          scale, (size_t)before * scale);
        if (wide)
            tc_shm_reduce_set_wide(ctx->shm, false);
        /* Only the single segment refuses before anything moves; from the
         * hierarchy, TC_ERR_NOTSUP is an error (MPI_ERR_INTERN). */
        if (tc_err_kind(rc) != TC_ERR_NOTSUP || path == TC_PATH_HIER) {
            tc_race_end(&ctx->race, &race);
            tc_rs_release(&r, &rr, rr_own);
            tc_stats_count(which, path);
            return rc;
        }
        /* No reduce area, or an element larger than a slot (the same on
         * every process): nothing moved, nothing timed. */
        tc_race_skip(&ctx->race, &race);
        path = TC_PATH_PMPI_OP;
    }
fn_pmpi:
    tc_stats_count(which, path);
    rc = tc_rs_mpi(ctx, which, &r, &rr, sendbuf, recvbuf, counts, stride, total, dt, op);
    tc_rs_release(&r, &rr, rr_own);
    return rc;
}

/* Both entry points: @p fn names the caller in messages. Inline in each:
 * the block variant's stride 0 is a constant there. */
static inline __attribute__((always_inline)) int
tc_rs_entry(const char *fn, tc_op_t which, const void *sendbuf, void *recvbuf, const int *counts,
            int stride, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    int rc, inter = 0;
    long long total = 0, before = 0;
    tc_ctx_t *ctx;
    if ((rc = tc_rs_check(fn, sendbuf, recvbuf, counts, stride, dt, op, comm, &inter, &ctx, &total,
                          &before)) != MPI_SUCCESS)
        return rc;
    if (inter) {
        tc_stats_count(which, TC_PATH_PMPI_INTERCOMM);
        return tc_rs_pmpi(which, sendbuf, recvbuf, counts, -1, dt, op, comm);
    }
    if (!ctx && (rc = tc_ctx_get(comm, &ctx)) != MPI_SUCCESS) {
        char msg[80];
        snprintf(msg, sizeof msg, "%s: could not create the context", fn);
        return tc_ctx_error(comm, rc, msg);
    }
    if (tc_log_level >= TC_LOG_TRACE)
        tc_log(TC_LOG_TRACE, "%s on %s: %lld elements in all", fn, ctx->comm_name, total);
    tc_redop_t r;
    bool r_ok = false;
    if (total > INT_MAX)
        memset(&r, 0, sizeof r); /* empty: the MPI's own */
    else
        r_ok = tc_redop_init(&r, (int)total, dt, op) == TC_OK;
    if (r_ok && tc_rs_direct(ctx, &r, dt)) {
        const int mine = counts[(size_t)ctx->rank * (size_t)stride];
        const void *send = sendbuf == MPI_IN_PLACE ? NULL : tc_redop_stream(&r, sendbuf);
        rc = tc_shm_reduce_scatter(ctx->shm, send, tc_redop_stream(&r, recvbuf), r.nelem,
                                   (size_t)before, (size_t)mine, &r);
        if (tc_err_kind(rc) != TC_ERR_NOTSUP) {
            tc_redop_free(&r);
            tc_stats_count(which, TC_PATH_SHM);
            if (rc == MPI_SUCCESS)
                return rc;
            goto fn_fail;
        }
        /* No reduce area, or an element larger than a slot (everywhere
         * alike, nothing moved): the general path falls back. */
    }
    rc = tc_rs_dispatch(ctx, which, &r, r_ok, sendbuf, recvbuf, counts, stride, total, before, dt,
                        op);
    if (rc == MPI_SUCCESS)
        return rc;
fn_fail:;
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
