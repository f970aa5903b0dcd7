/* The rooted gathering collectives' call (rooted.h): the checks and the
 * dispatch of TC_Gather(v) and TC_Scatter(v), their blocks as byte streams,
 * and the parts of their paths that do not depend on the direction.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rooted.h"

/* ---- checks and dispatch --------------------------------------------------------------- */

#define TC_ROOTED_STACK_BLOCKS 64

/* @p type's size in *size and in *contig whether it is a contiguous
 * predefined type (the direct path, tc_rooted_shm_direct): one table lookup.
 * MPI_SUCCESS, or non-zero for MPI_DATATYPE_NULL and invalid types. */
static int tc_rooted_type(MPI_Datatype type, int *size, bool *contig)
{
    const tc_dt_entry_t *e = type == MPI_DATATYPE_NULL ? NULL : tc_datatype_known(type);
    *contig = e && e->contig;
    if (e) {
        *size = e->size;
        return MPI_SUCCESS;
    }
    return type == MPI_DATATYPE_NULL ? MPI_ERR_TYPE : PMPI_Type_size(type, size);
}

/* What is checked (docs/allgather.md): as for Allgather(v), plus the root
 * (tc_err(TC_ERR_ROOT)), MPI_IN_PLACE only at the root (tc_err(TC_ERR_BUFFER)), and the
 * root's side (a Gather's receive, a Scatter's send arguments) at the root only (they are
 * not significant elsewhere). */
static int tc_rooted_check(tc_rooted_t *c, MPI_Comm comm, tc_ctx_t **cached, int *inter,
                           size_t *stack_bytes)
{
    int osize = 0, asize = 0;
    int rc_enter = tc_ctx_enter(comm, c->fn, cached, inter);
    if (rc_enter != MPI_SUCCESS)
        return rc_enter;
    const tc_ctx_t *ctx = *cached;
    if (*inter)
        return MPI_SUCCESS; /* root semantics differ (MPI_ROOT, MPI_PROC_NULL): the MPI's own */
    tc_ctx_rank_size(ctx, comm, &c->rank, &c->size);
    /* The sides' names in the messages. */
    const char *const on = c->to_root ? "send" : "recv", *const an = c->to_root ? "recv" : "send";
    if (c->root < 0 || c->root >= c->size)
        return tc_ctx_fail(comm, tc_err(TC_ERR_ROOT), c->fn, "root out of range");
    const bool root = c->rank == c->root;
    c->in_place = c->one.buf == MPI_IN_PLACE;
    if (c->in_place && !root)
        return tc_ctx_fail(comm, tc_err(TC_ERR_BUFFER), c->fn,
                           "MPI_IN_PLACE at a process other than the root");
    c->direct = true;
    if (!c->in_place) {
        if (c->one.count < 0)
            return tc_ctx_failf(comm, tc_err(TC_ERR_COUNT), c->fn, "negative %scount", on);
        if (tc_rooted_type(c->one.type, &osize, &c->direct) != MPI_SUCCESS)
            return tc_ctx_failf(comm, tc_err(TC_ERR_TYPE), c->fn, "invalid %stype", on);
        c->mine = (size_t)c->one.count * (size_t)osize;
    }
    c->total = c->mine * (size_t)c->size;
    if (!root)
        return MPI_SUCCESS;
    if (!c->v && c->all.count < 0)
        return tc_ctx_failf(comm, tc_err(TC_ERR_COUNT), c->fn, "negative %scount", an);
    bool all_contig;
    if (tc_rooted_type(c->all.type, &asize, &all_contig) != MPI_SUCCESS)
        return tc_ctx_failf(comm, tc_err(TC_ERR_TYPE), c->fn, "invalid %stype", an);
    c->direct = c->direct && all_contig;
    c->all_esize = (size_t)asize;
    size_t own;
    if (c->v) {
        int rc_counts =
            tc_ctx_check_counts(comm, c->fn, an, c->all.counts, c->all.displs, c->size, asize,
                                stack_bytes, TC_ROOTED_STACK_BLOCKS, &c->bytes, &c->total);
        if (rc_counts != MPI_SUCCESS)
            return rc_counts;
        own = c->bytes[c->rank];
    } else {
        own = (size_t)c->all.count * (size_t)asize;
        c->total = own * (size_t)c->size;
    }
    int rc = MPI_SUCCESS;
    if (c->in_place)
        c->mine = own;
    else if (c->mine != own)
        rc = tc_ctx_failf(comm, MPI_ERR_TRUNCATE, c->fn,
                          "%scount x %stype differs in size from the root's own block", on, on);
    else if (c->one.buf == c->all.buf && c->total > 0)
        rc = tc_ctx_fail(comm, tc_err(TC_ERR_BUFFER), c->fn,
                         "sendbuf and recvbuf alias (use MPI_IN_PLACE)");
    if (rc != MPI_SUCCESS && c->bytes != stack_bytes)
        free(c->bytes);
    if (rc != MPI_SUCCESS)
        c->bytes = NULL;
    return rc;
}

static __attribute__((noinline)) int tc_rooted_dispatch(tc_ctx_t *ctx, const tc_rooted_t *c,
                                                        const tc_rooted_ops_t *ops)
{
    int rc;
    if (c->size == 1 || (!c->v && c->mine == 0)) {
        tc_stats_count(c->op, TC_PATH_TRIVIAL);
        if (c->rank != c->root || c->in_place || c->mine == 0)
            return MPI_SUCCESS;
        tc_rooted_io_t st;
        if ((rc = tc_rooted_io_init(&st, c, 0, ctx->comm)) == MPI_SUCCESS) {
            tc_rooted_own(&st, c);
            rc = tc_blocks_finish(c->to_root ? &st.all : &st.one, -1, ctx->comm);
        }
        tc_rooted_io_free(&st);
        return rc;
    }
    if (ctx->bcast_path == TC_PATH_SHM) {
        tc_race_call_t race;
        tc_race_impl_t impl = TC_RACE_TC;
        /* A Gather's or Scatter's total is known everywhere: it races the
         * MPI's own (race.h); a v-variant's is not, so it does not. */
        const bool races = !c->v;
        if (races && (rc = tc_race_begin(&ctx->race, ctx->shm, ctx->priv, c->op, c->total, true,
                                         &race, &impl)) != MPI_SUCCESS)
            return rc;
        if (impl == TC_RACE_PMPI) {
            tc_stats_count(c->op, TC_PATH_PMPI_RACE);
            rc = ops->pmpi(c, ctx->comm);
        } else {
            tc_stats_count(c->op, TC_PATH_SHM);
            rc = ops->shm(ctx, c);
        }
        if (races)
            tc_race_end(&ctx->race, &race);
        return rc;
    }
    tc_path_t path = ctx->bcast_path;
    if (path == TC_PATH_HIER && ctx->hier) {
        tc_stats_count(c->op, TC_PATH_HIER);
        return ops->hier(ctx, c);
    }
    if (path == TC_PATH_HIER)
        path = TC_PATH_PMPI_MULTINODE;
    tc_stats_count(c->op, path);
    return ops->pmpi(c, ctx->comm);
}

int tc_rooted_run(tc_rooted_t *c, MPI_Comm comm, const tc_rooted_ops_t *ops)
{
    int rc, inter = 0;
    tc_ctx_t *ctx;
    size_t stack_bytes[TC_ROOTED_STACK_BLOCKS];
    if ((rc = tc_rooted_check(c, comm, &ctx, &inter, stack_bytes)) != MPI_SUCCESS)
        return rc;
    if (inter) {
        tc_stats_count(c->op, TC_PATH_PMPI_INTERCOMM);
        return ops->as_is(c, comm);
    }
    if (!ctx && (rc = tc_ctx_get(comm, &ctx)) != MPI_SUCCESS)
        rc = tc_ctx_fail(comm, rc, c->fn, "could not create the context");
    else if ((rc = tc_rooted_dispatch(ctx, c, ops)) != MPI_SUCCESS)
        rc = tc_ctx_fail(comm, rc, c->fn, "failed");
    if (c->bytes && c->bytes != stack_bytes)
        free(c->bytes);
    return rc;
}

/* ---- the blocks of both sides ----------------------------------------------------------- */

/* Our one block is block 0 of its set whatever j the algorithm names. */
void tc_rooted_read_one(void *state, int j, size_t off, char *dst, size_t n)
{
    (void)j;
    tc_blocks_read(&((tc_rooted_io_t *)state)->one, 0, off, dst, n);
}
void tc_rooted_read_all(void *state, int j, size_t off, char *dst, size_t n)
{
    tc_blocks_read(&((tc_rooted_io_t *)state)->all, j, off, dst, n);
}
void tc_rooted_write_one(void *state, int j, size_t off, const char *src, size_t n)
{
    (void)j;
    tc_blocks_write(&((tc_rooted_io_t *)state)->one, 0, off, src, n);
}
void tc_rooted_write_all(void *state, int j, size_t off, const char *src, size_t n)
{
    tc_blocks_write(&((tc_rooted_io_t *)state)->all, j, off, src, n);
}

char *tc_rooted_addr(void *state, int y)
{
    tc_rooted_io_t *st = state;
    const tc_blocks_t *b = st->root ? &st->all : &st->one;
    return b->mode == TC_BLOCKS_MAPPED ? NULL
                                       : (char *)(uintptr_t)tc_blocks_data(b, st->root ? y : 0);
}

uint64_t tc_rooted_largest(tc_ctx_t *ctx, const tc_rooted_t *c)
{
    uint64_t max = 0;
    for (int j = 0; c->rank == c->root && j < c->size; j++)
        max = c->bytes[j] > max ? c->bytes[j] : max;
    tc_shm_bcast_pipelined(ctx->shm, &max, sizeof max, c->root, NULL);
    return max;
}

/* ---- through the segment, straight from and into the user's buffers ---------------------- */

int tc_rooted_shm_direct(tc_ctx_t *ctx, const tc_rooted_t *c)
{
    const tc_blocks_direct_t d = {c->in_place ? NULL : (const char *)c->one.buf, c->all.buf,
                                  c->all.displs, c->all.count, (MPI_Aint)c->all_esize};
    const tc_shm_ag_sizes_t sz = tc_rooted_shm_sizes(ctx, c);
    if (c->to_root) {
        const tc_shm_ag_io_t io = {tc_blocks_direct_read_one, tc_blocks_direct_write_all,
                                   (void *)(uintptr_t)&d};
        tc_shm_allgather(ctx->shm, &sz, c->root, &io);
    } else {
        const tc_shm_ag_io_t io = {tc_blocks_direct_read_all, tc_blocks_direct_write_one,
                                   (void *)(uintptr_t)&d};
        tc_shm_scatter(ctx->shm, &sz, c->root, &io);
    }
    if (c->rank == c->root && !c->in_place && c->mine > 0) {
        char *own = tc_blocks_direct_at(&d, c->rank);
        if (c->to_root)
            memmove(own, d.one, c->mine);
        else
            memmove((char *)(uintptr_t)d.one, own, c->mine);
    }
    return MPI_SUCCESS;
}

/* ---- the MPI's own, as bytes --------------------------------------------------------------- */

void tc_rooted_spread(const tc_blocks_t *b, const tc_rooted_t *c, uintptr_t *lo, uintptr_t *hi)
{
    uintptr_t l = UINTPTR_MAX, h = 0;
    for (int j = 0; j < c->size; j++) {
        if (c->bytes[j] == 0)
            continue;
        uintptr_t a = (uintptr_t)tc_blocks_data(b, j);
        l = a < l ? a : l;
        h = a > h ? a : h;
    }
    *lo = l;
    *hi = h;
}

tc_err_t tc_rooted_bytes(tc_rooted_io_t *st, const tc_rooted_t *c, tc_err_t rc_root, void **one,
                         const char **all_base, tc_err_t *rc_one, MPI_Comm comm)
{
    const bool root = c->rank == c->root;
    *one = MPI_IN_PLACE;
    *rc_one = MPI_SUCCESS;
    if (!c->in_place) {
        *rc_one = tc_blocks_init(&st->one, c->one.buf, 1, c->one.count, NULL, NULL, c->one.type,
                                 (c->to_root ? TC_BLOCKS_READ : 0) | TC_BLOCKS_STAGE, comm);
        *one = *rc_one == MPI_SUCCESS
                   ? (void *)(uintptr_t)tc_blocks_data(&st->one, 0)
                   : tc_blocks_span(c->one.buf, (size_t)c->one.count, c->one.type, c->mine);
    }
    if (root && rc_root != MPI_SUCCESS) /* a Gather's or Scatter's root: the user's buffer */
        *all_base = tc_blocks_span(c->all.buf, (size_t)c->all.count * (size_t)c->size, c->all.type,
                                   c->total);
    if ((*rc_one != MPI_SUCCESS && !*one && c->mine > 0) ||
        (root && rc_root != MPI_SUCCESS && !*all_base && c->total > 0))
        /* Not even that (a send type whose elements overlap). */
        return rc_root != MPI_SUCCESS ? rc_root : *rc_one;
    return MPI_SUCCESS;
}
