/* TC_Bcast: argument checks, then the path agreed when the context was made. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/datatype.h"
#include "base/log.h"
#include "ctx.h"
#include "hier/hier_coll.h"
#include "topocoll.h"

/* Contiguous bytes over the agreed path (shared memory or the hierarchy). */
static int tc_bcast_bytes(tc_ctx_t *ctx, void *buf, size_t nbytes, int root)
{
    if (ctx->bcast_path == TC_PATH_HIER)
        return tc_hier_bcast(ctx->hier, ctx->shm, ctx->priv, buf, nbytes, root);
    tc_shm_bcast_pipelined(ctx->shm, buf, nbytes, root, NULL);
    return MPI_SUCCESS;
}

/* Datatypes the flattener does not know (and every derived datatype on the
 * hierarchical path): pack at the root, broadcast bytes,
 * unpack elsewhere (whole message staged). MPI_Pack's "native"
 * representation is the type signature's bytes on both MPIs, so every rank's
 * packed size equals count * type size, as for the flattened stream. */
static int tc_bcast_packed(tc_ctx_t *ctx, void *buf, int count, MPI_Datatype dt, int root,
                           size_t nbytes)
{
    int rc = MPI_SUCCESS, pos = 0, one = 1;
    MPI_Datatype rebased = MPI_DATATYPE_NULL;
    static char anchor;
    if (nbytes > INT32_MAX)
        return tc_err(TC_ERR_COUNT); /* MPI_Pack's int positions */
    if (buf == MPI_BOTTOM) {
        /* Absolute addresses: MPICH's MPI_Pack rejects a NULL buffer, so
         * describe the same bytes relative to a real address instead. */
        MPI_Aint a;
        PMPI_Get_address(&anchor, &a);
        MPI_Aint disp = -a;
        if ((rc = PMPI_Type_create_struct(1, &count, &disp, &dt, &rebased)) != MPI_SUCCESS ||
            (rc = PMPI_Type_commit(&rebased)) != MPI_SUCCESS)
            return rc;
        buf = &anchor;
        dt = rebased;
        count = one;
    }
    char *tmp = malloc(nbytes);
    if (!tmp) {
        rc = tc_err(TC_ERR_NOMEM);
        goto fn_exit;
    }
    if (ctx->rank == root)
        rc = PMPI_Pack(buf, count, dt, tmp, (int)nbytes, &pos, ctx->priv);
    /* Every rank runs the broadcast even if its pack failed: the others are
     * already in it. */
    int brc = tc_bcast_bytes(ctx, tmp, nbytes, root);
    if (rc == MPI_SUCCESS)
        rc = brc;
    if (rc == MPI_SUCCESS && ctx->rank != root)
        rc = PMPI_Unpack(tmp, (int)nbytes, &pos, buf, count, dt, ctx->priv);
    free(tmp);
fn_exit:
    if (rebased != MPI_DATATYPE_NULL)
        PMPI_Type_free(&rebased);
    return rc;
}

/* The library's path (shared memory or the hierarchy) for a message that
 * moves: out of line, so that TC_Bcast's checks and trivial cases run
 * without this part's register saves and stack frame. Returns what TC_Bcast
 * returns (the handler of @p comm already called on an error of ours). */
static __attribute__((noinline)) int tc_bcast_move(tc_ctx_t *ctx, void *buf, int count,
                                                   MPI_Datatype datatype, int root, size_t nbytes,
                                                   MPI_Comm comm)
{
    int rc;
    /* Large messages: the library's path or the MPI's own, whichever the
     * race (race.h) has measured faster (the bytes are the same). */
    tc_race_call_t race;
    tc_race_impl_t impl;
    if ((rc = tc_race_begin(&ctx->race, ctx->bcast_path == TC_PATH_SHM ? ctx->shm : NULL, ctx->priv,
                            TC_OP_BCAST, nbytes, true, &race, &impl)) != MPI_SUCCESS)
        return tc_ctx_error(comm, rc, "TC_Bcast failed");
    if (impl == TC_RACE_PMPI) {
        tc_stats_count(TC_OP_BCAST, TC_PATH_PMPI_RACE);
        rc = PMPI_Bcast(buf, count, datatype, root, comm);
        tc_race_end(&ctx->race, &race);
        return rc;
    }
    MPI_Aint lb;
    if (tc_datatype_is_contiguous(datatype, count, &lb)) {
        /* Integer arithmetic: with MPI_BOTTOM, lb is an absolute address. */
        rc = tc_bcast_bytes(ctx, (void *)((uintptr_t)buf + (uintptr_t)lb), nbytes, root);
    } else if (ctx->bcast_path == TC_PATH_HIER) {
        rc = tc_bcast_packed(ctx, buf, count, datatype, root, nbytes);
    } else {
        /* Fragment by fragment through the flattened type map; the map is
         * local (ranks may use different types of the same signature). */
        tc_dt_map_t map;
        if (tc_datatype_flatten(datatype, &map) == 0) {
            tc_dt_cursor_t cursor;
            tc_dt_cursor_init(&cursor, &map, buf);
            tc_shm_copier_t copier = {tc_dt_cursor_gather, tc_dt_cursor_scatter, &cursor};
            tc_shm_bcast_pipelined(ctx->shm, NULL, nbytes, root, &copier);
            tc_datatype_map_free(&map);
            rc = MPI_SUCCESS;
        } else {
            rc = tc_bcast_packed(ctx, buf, count, datatype, root, nbytes);
        }
    }
    tc_race_end(&ctx->race, &race);
    tc_stats_count(TC_OP_BCAST, ctx->bcast_path);
    if (rc != MPI_SUCCESS)
        return tc_ctx_error(comm, rc, "TC_Bcast failed");
    return MPI_SUCCESS;
}

int TC_Bcast(void *buf, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    int rc, size, is_inter, tsize;
    if (comm == MPI_COMM_NULL)
        return tc_ctx_error(MPI_COMM_WORLD, tc_err(TC_ERR_COMM), "TC_Bcast: MPI_COMM_NULL");
    /* A cached context answers for the communicator (valid: it is freed
     * before its handle) and knows its kind and size. */
    tc_ctx_t *ctx = tc_ctx_lookup(comm);
    if (ctx)
        is_inter = ctx->is_inter;
    else if ((rc = PMPI_Comm_test_inter(comm, &is_inter)) != MPI_SUCCESS)
        return tc_ctx_error(MPI_COMM_WORLD, tc_err(TC_ERR_COMM), "TC_Bcast: invalid communicator");
    if (count < 0)
        return tc_ctx_error(comm, tc_err(TC_ERR_COUNT), "TC_Bcast: negative count");
    if (datatype == MPI_DATATYPE_NULL || tc_datatype_size(datatype, &tsize) != MPI_SUCCESS)
        return tc_ctx_error(comm, tc_err(TC_ERR_TYPE), "TC_Bcast: invalid datatype");
    if (is_inter) {
        /* Root semantics differ (MPI_ROOT, MPI_PROC_NULL, remote rank): MPI's. */
        tc_stats_count(TC_OP_BCAST, TC_PATH_PMPI_INTERCOMM);
        return PMPI_Bcast(buf, count, datatype, root, comm);
    }
    if (ctx)
        size = ctx->size;
    else
        PMPI_Comm_size(comm, &size);
    if (root < 0 || root >= size)
        return tc_ctx_error(comm, tc_err(TC_ERR_ROOT), "TC_Bcast: root out of range");

    if (!ctx && (rc = tc_ctx_get(comm, &ctx)) != MPI_SUCCESS)
        return tc_ctx_error(comm, rc, "TC_Bcast: could not create the context");
    size_t nbytes = (size_t)count * (size_t)tsize;
    if (tc_log_level >= TC_LOG_TRACE)
        tc_log(TC_LOG_TRACE, "TC_Bcast on %s: %zu bytes from root %d, path %s", ctx->comm_name,
               nbytes, root,
               tc_stats_path_name(nbytes == 0 || size == 1 ? TC_PATH_TRIVIAL : ctx->bcast_path));
    if (nbytes == 0 || size == 1) {
        tc_stats_count(TC_OP_BCAST, TC_PATH_TRIVIAL);
        return MPI_SUCCESS;
    }
    if (ctx->bcast_path != TC_PATH_SHM && ctx->bcast_path != TC_PATH_HIER) {
        tc_stats_count(TC_OP_BCAST, ctx->bcast_path);
        return PMPI_Bcast(buf, count, datatype, root, comm);
    }
    return tc_bcast_move(ctx, buf, count, datatype, root, nbytes, comm);
}

int TC_Comm_attach(MPI_Comm comm)
{
    tc_ctx_t *ctx;
    if (comm == MPI_COMM_NULL)
        return tc_ctx_error(MPI_COMM_WORLD, tc_err(TC_ERR_COMM), "TC_Comm_attach: MPI_COMM_NULL");
    int rc = tc_ctx_get(comm, &ctx);
    return rc == MPI_SUCCESS ? rc : tc_ctx_error(comm, rc, "TC_Comm_attach failed");
}

int TC_Comm_detach(MPI_Comm comm)
{
    if (comm == MPI_COMM_NULL)
        return tc_ctx_error(MPI_COMM_WORLD, tc_err(TC_ERR_COMM), "TC_Comm_detach: MPI_COMM_NULL");
    int rc = tc_ctx_release(comm);
    return rc == MPI_SUCCESS ? rc : tc_ctx_error(comm, rc, "TC_Comm_detach failed");
}
