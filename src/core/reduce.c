/* TC_Reduce and TC_Allreduce: argument checks, then the path agreed when the
 * context was made. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/redop.h"
#include "ctx.h"
#include "hier/hier_coll.h"
#include "topocoll.h"

/* Checks shared by both operations; has_root false for Allreduce. Returns
 * MPI_SUCCESS or the error class (handler already called); *inter tells the
 * caller to hand the call to PMPI. Once the communicator has a context its
 * cached size, rank and kind replace the MPI queries (a 4-byte Allreduce
 * takes a few hundred ns: every call on this path counts). Datatypes other
 * than MPI_DATATYPE_NULL are checked by tc_redop_init() or by the MPI the
 * call then goes to. */
static inline __attribute__((always_inline)) int
tc_reduce_check(const char *fn, const void *sendbuf, const void *recvbuf, int count,
                MPI_Datatype dt, MPI_Op op, bool has_root, int root, MPI_Comm comm, int *inter,
                tc_ctx_t **cached)
{
    int size, rank;
    int rc_enter = tc_ctx_enter(comm, fn, cached, inter);
    if (rc_enter != MPI_SUCCESS)
        return rc_enter;
    tc_ctx_t *ctx = *cached;
    if (count < 0)
        return tc_ctx_fail(comm, tc_err(TC_ERR_COUNT), fn, "negative count");
    if (dt == MPI_DATATYPE_NULL)
        return tc_ctx_fail(comm, tc_err(TC_ERR_TYPE), fn, "invalid datatype");
    if (op == MPI_OP_NULL)
        return tc_ctx_fail(comm, tc_err(TC_ERR_OP), fn, "MPI_OP_NULL");
    if (*inter)
        return MPI_SUCCESS; /* root semantics differ (MPI_ROOT, ...): MPI's */
    if (ctx) {
        size = ctx->size;
        rank = ctx->rank;
    } else {
        PMPI_Comm_size(comm, &size);
        PMPI_Comm_rank(comm, &rank);
    }
    if (has_root && (root < 0 || root >= size))
        return tc_ctx_fail(comm, tc_err(TC_ERR_ROOT), fn, "root out of range");
    bool receives = !has_root || rank == root;
    if (sendbuf == MPI_IN_PLACE && !receives)
        return tc_ctx_fail(comm, tc_err(TC_ERR_BUFFER), fn,
                           "MPI_IN_PLACE at a process other than the root");
    if (receives && count > 0 && sendbuf == recvbuf)
        return tc_ctx_fail(comm, tc_err(TC_ERR_BUFFER), fn,
                           "sendbuf and recvbuf alias (use MPI_IN_PLACE)");
    return MPI_SUCCESS;
}

/* PMPI_Reduce, except that MPI_IN_PLACE at a root other than 0 becomes an
 * explicit send buffer: Debian's MPICH 4.0.2 segfaults on that case above
 * about 2 KiB. */
static int tc_reduce_pmpi(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                          int root, MPI_Comm comm)
{
    int rank;
    PMPI_Comm_rank(comm, &rank);
    if (sendbuf != MPI_IN_PLACE || root == 0 || count == 0)
        return PMPI_Reduce(sendbuf, recvbuf, count, dt, op, root, comm);
    MPI_Aint tlb, textent, lb, extent;
    PMPI_Type_get_true_extent(dt, &tlb, &textent);
    PMPI_Type_get_extent(dt, &lb, &extent);
    size_t span = (size_t)textent + (size_t)(count - 1) * (size_t)(extent < 0 ? -extent : extent);
    char *tmp = malloc(span ? span : 1);
    if (!tmp)
        return tc_err(TC_ERR_NOMEM);
    /* The whole span, holes included: only the type map's bytes are read. */
    const char *first = (const char *)recvbuf + tlb;
    if (extent < 0)
        first += (MPI_Aint)(count - 1) * extent;
    memcpy(tmp, first, span);
    char *send = tmp - (first - (const char *)recvbuf);
    int rc = PMPI_Reduce(send, recvbuf, count, dt, op, root, comm);
    free(tmp);
    return rc;
}

/* The packed operation on the agreed path: the single-node segment, or the
 * hierarchy. root < 0: Allreduce. TC_ERR_NOTSUP when the segment cannot take
 * it (the same on every process, before anything moves). */
static tc_err_t tc_reduce_packed(tc_ctx_t *ctx, const tc_redop_t *r, const void *send, void *recv,
                                 int root)
{
    if (ctx->bcast_path == TC_PATH_SHM)
        return tc_shm_reduce(ctx->shm, send, recv, r->nelem, r, root);
    if (root < 0)
        return tc_hier_allreduce(ctx->hier, ctx->shm, ctx->priv, send, recv, r);
    return tc_hier_reduce(ctx->hier, ctx->shm, ctx->priv, send, recv, r, root);
}

/* Stage derived datatypes through packed buffers around tc_reduce_packed().
 * TC_ERR_NOTSUP: fall back, everywhere. */
static tc_err_t tc_reduce_staged(tc_ctx_t *ctx, const tc_redop_t *r, const void *sendbuf,
                                 void *recvbuf, int root)
{
    const bool receives = root < 0 || ctx->rank == root;
    const bool in_place = sendbuf == MPI_IN_PLACE;
    char *tmp = NULL;
    const void *send = NULL;
    void *recv = NULL;
    tc_err_t rc;
    if (!r->contiguous) {
        /* Derived datatypes: the packed streams are staged whole (one
         * buffer for the contribution, one for the result). */
        tmp = malloc(2 * r->nbytes);
        if (!tmp)
            return tc_err(TC_ERR_NOMEM);
    }
    if (!in_place)
        send = r->contiguous ? tc_redop_stream(r, sendbuf) : tmp;
    if (!in_place && !r->contiguous)
        tc_redop_pack(r, sendbuf, tmp);
    if (receives) {
        recv = r->contiguous ? tc_redop_stream(r, recvbuf) : tmp + r->nbytes;
        if (in_place && !r->contiguous)
            tc_redop_pack(r, recvbuf, recv);
    }
    rc = tc_reduce_packed(ctx, r, send, recv, root);
    if (rc == TC_OK && receives && !r->contiguous)
        tc_redop_unpack(r, recv, recvbuf);
    free(tmp);
    return rc;
}

/* Nothing to combine (one process, or count 0) on the common operands
 * (tc_redop_basic_elem: the classification tc_redop_init() makes, without
 * building the operands): the result is our own contribution. Returns 1
 * when done, 0 for tc_reduce_dispatch(). root < 0: Allreduce. */
static inline int tc_reduce_trivial(const tc_ctx_t *ctx, tc_op_t which, const void *sendbuf,
                                    void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root)
{
    if (count != 0 && ctx->size != 1)
        return 0;
    const int elem = tc_redop_basic_elem(dt, op);
    if (elem <= 0)
        return 0;
    if ((root < 0 || ctx->rank == root) && sendbuf != MPI_IN_PLACE && count > 0)
        memcpy(recvbuf, sendbuf, (size_t)count * (size_t)elem);
    tc_stats_count(which, TC_PATH_TRIVIAL);
    return 1;
}

/* Both operations after the checks. root < 0: Allreduce. Out of line: the
 * trivial case above runs without its stack frame. */
static __attribute__((noinline)) int tc_reduce_dispatch(tc_ctx_t *ctx, tc_op_t which,
                                                        const void *sendbuf, void *recvbuf,
                                                        int count, MPI_Datatype dt, MPI_Op op,
                                                        int root)
{
    const bool receives = root < 0 || ctx->rank == root;
    tc_redop_t r;
    int rc;
    tc_path_t path = ctx->bcast_path;
    if (tc_redop_init(&r, count, dt, op) != 0) {
        path = TC_PATH_PMPI_OP;
        goto fn_pmpi;
    }
    if (count == 0 || ctx->size == 1) {
        /* Nothing to combine: the result is our own contribution. */
        if (receives && sendbuf != MPI_IN_PLACE && r.nbytes > 0) {
            if (r.contiguous) {
                memcpy(tc_redop_stream(&r, recvbuf), tc_redop_stream(&r, sendbuf), r.nbytes);
            } else {
                char *tmp = malloc(r.nbytes);
                if (!tmp) {
                    tc_redop_free(&r);
                    return tc_err(TC_ERR_NOMEM);
                }
                tc_redop_pack(&r, sendbuf, tmp);
                tc_redop_unpack(&r, tmp, recvbuf);
                free(tmp);
            }
        }
        tc_redop_free(&r);
        tc_stats_count(which, TC_PATH_TRIVIAL);
        return MPI_SUCCESS;
    }
    if (ctx->bcast_path == TC_PATH_HIER && !r.commutative) {
        /* Groups follow the machine, not rank order. */
        static bool logged;
        tc_log_once(logged, TC_LOG_INFO,
                    "%s: a non-commutative operation over several hierarchy levels uses "
                    "PMPI_%s",
                    ctx->comm_name, root < 0 ? "Allreduce" : "Reduce");
        path = TC_PATH_PMPI_OP;
        goto fn_pmpi;
    }
    if (ctx->bcast_path == TC_PATH_HIER && r.elem > ctx->shm_params.reduce_slot_bytes) {
        path = TC_PATH_PMPI_OP; /* an element larger than a reduce slot */
        goto fn_pmpi;
    }
    if (ctx->bcast_path == TC_PATH_SHM || ctx->bcast_path == TC_PATH_HIER) {
        /* Large messages: the library's path or the MPI's own, whichever the
         * race (race.h) has measured faster; only where the result's bits
         * cannot depend on the choice. */
        const bool order_free =
            r.order == TC_REDOP_ORDER_FREE || (r.order == TC_REDOP_ORDER_SWAP2 && ctx->size == 2);
        tc_race_call_t race;
        tc_race_impl_t impl;
        if ((rc = tc_race_begin(&ctx->race, ctx->bcast_path == TC_PATH_SHM ? ctx->shm : NULL,
                                ctx->priv, which, r.nbytes, order_free, &race, &impl)) !=
            MPI_SUCCESS) {
            tc_redop_free(&r);
            return rc;
        }
        if (impl == TC_RACE_PMPI) {
            tc_redop_free(&r);
            tc_stats_count(which, TC_PATH_PMPI_RACE);
            rc = root < 0 ? PMPI_Allreduce(sendbuf, recvbuf, count, dt, op, ctx->comm)
                          : tc_reduce_pmpi(sendbuf, recvbuf, count, dt, op, root, ctx->comm);
            tc_race_end(&ctx->race, &race);
            return rc;
        }
        /* Not raced against the MPI's own (a floating-point sum over more
         * than two processes): the fragment size may race instead, where it
         * cannot change the bits (race.h). */
        bool wide = false;
        if (!race.raced && ctx->bcast_path == TC_PATH_SHM && tc_race_wide_due(&ctx->race, r.nbytes))
            tc_race_begin_wide(&ctx->race, ctx->shm, which, r.nbytes,
                               tc_shm_reduce_wide_same(ctx->shm, r.nbytes, r.elem), &race, &wide);
        if (wide)
            tc_shm_reduce_set_wide(ctx->shm, true);
        rc = tc_reduce_staged(ctx, &r, sendbuf, recvbuf, root);
        if (wide)
            tc_shm_reduce_set_wide(ctx->shm, false);
        /* Only the single segment refuses before anything moves; from the
         * hierarchy, TC_ERR_NOTSUP is an error (MPI_ERR_INTERN). */
        if (tc_err_kind(rc) != TC_ERR_NOTSUP || ctx->bcast_path != TC_PATH_SHM) {
            tc_race_end(&ctx->race, &race);
            tc_redop_free(&r);
            tc_stats_count(which, ctx->bcast_path);
            return rc;
        }
        /* An element larger than a slot, or no reduce area (the same on
         * every process): nothing timed. */
        tc_race_skip(&ctx->race, &race);
        path = TC_PATH_PMPI_OP;
    }
fn_pmpi:
    tc_redop_free(&r);
    tc_stats_count(which, path);
    if (root < 0)
        return PMPI_Allreduce(sendbuf, recvbuf, count, dt, op, ctx->comm);
    return tc_reduce_pmpi(sendbuf, recvbuf, count, dt, op, root, ctx->comm);
}

int TC_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              int root, MPI_Comm comm)
{
    int rc, inter = 0;
    tc_ctx_t *ctx;
    if ((rc = tc_reduce_check("TC_Reduce", sendbuf, recvbuf, count, datatype, op, true, root, comm,
                              &inter, &ctx)) != MPI_SUCCESS)
        return rc;
    if (inter) {
        tc_stats_count(TC_OP_REDUCE, TC_PATH_PMPI_INTERCOMM);
        return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
    }
    if (!ctx && (rc = tc_ctx_get(comm, &ctx)) != MPI_SUCCESS)
        return tc_ctx_error(comm, rc, "TC_Reduce: could not create the context");
    if (tc_log_level >= TC_LOG_TRACE)
        tc_log(TC_LOG_TRACE, "TC_Reduce on %s: count %d to root %d", ctx->comm_name, count, root);
    if (tc_reduce_trivial(ctx, TC_OP_REDUCE, sendbuf, recvbuf, count, datatype, op, root))
        return MPI_SUCCESS;
    rc = tc_reduce_dispatch(ctx, TC_OP_REDUCE, sendbuf, recvbuf, count, datatype, op, root);
    return rc == MPI_SUCCESS ? rc : tc_ctx_error(comm, rc, "TC_Reduce failed");
}

int TC_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 MPI_Comm comm)
{
    int rc, inter = 0;
    tc_ctx_t *ctx;
    if ((rc = tc_reduce_check("TC_Allreduce", sendbuf, recvbuf, count, datatype, op, false, 0, comm,
                              &inter, &ctx)) != MPI_SUCCESS)
        return rc;
    if (inter) {
        tc_stats_count(TC_OP_ALLREDUCE, TC_PATH_PMPI_INTERCOMM);
        return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    }
    if (!ctx && (rc = tc_ctx_get(comm, &ctx)) != MPI_SUCCESS)
        return tc_ctx_error(comm, rc, "TC_Allreduce: could not create the context");
    if (tc_log_level >= TC_LOG_TRACE)
        tc_log(TC_LOG_TRACE, "TC_Allreduce on %s: count %d", ctx->comm_name, count);
    if (tc_reduce_trivial(ctx, TC_OP_ALLREDUCE, sendbuf, recvbuf, count, datatype, op, -1))
        return MPI_SUCCESS;
    rc = tc_reduce_dispatch(ctx, TC_OP_ALLREDUCE, sendbuf, recvbuf, count, datatype, op, -1);
    return rc == MPI_SUCCESS ? rc : tc_ctx_error(comm, rc, "TC_Allreduce failed");
}
