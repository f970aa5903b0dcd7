/* TC_Comm_predict: the model's time of one collective as the library would
 * run it on a communicator (docs/model.md, "Prediction of a whole
 * collective"). Reads only the context's agreed state: the decision tables
 * of this rank's groups, the LogP table, the segment's geometry and
 * settings, the barrier plan. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "ctx.h"
#include "hier/hier_alltoall.h"
#include "hier/hier_coll.h"
#include "model/cost.h"
#include "model/cost_alltoall.h"
#include "model/cost_gather.h"
#include "model/cost_reduce_scatter.h"
#include "model/cost_shm_coll.h"
#include "select.h"
#include "shm/allgather.h"
#include "shm/alltoall.h"
#include "shm/params.h"
#include "shm/tree.h"
#include "topocoll.h"

/* Notification hops until the last reader of the broadcast tree of @p p
 * processes knows of a fragment: a parent writes its children's flags one
 * after the other (largest subtree first), so the j-th child (from 1) hears
 * after j writes; the depth is the largest sum along a path (flat: p-1). */
static int tc_predict_tree_depth(tc_tree_kind_t kind, int arity, int p, int v)
{
    int n, worst = 0;
    int *c = malloc(sizeof(int) * (size_t)(p > 1 ? p - 1 : 1));
    if (!c)
        return p - 1; /* the flat tree's depth: an upper bound for every kind */
    n = tc_shm_tree_children_rel(kind, arity, p, v, c);
    for (int j = 0; j < n; j++) {
        int d = j + 1 + tc_predict_tree_depth(kind, arity, p, c[j]);
        if (d > worst)
            worst = d;
    }
    free(c);
    return worst;
}

/* Paper 000's symbols for a segment: from the shm row (a flag through the
 * cache), not the MPI parameters of the segment's level. */
static void tc_predict_shm_params(const tc_ctx_t *ctx, tc_model_shm_t *sp)
{
    tc_model_shm_from_shm_row(&ctx->logp.shm, sp);
}

/* The segment's pipelined broadcast of @p m bytes (shm/bcast_pipelined.c's
 * geometry: inline below one line, else the per-message fragment and bank). */
static double tc_predict_shm_bcast(const tc_ctx_t *ctx, size_t m)
{
    const tc_shm_comm_t *s = ctx->shm;
    tc_model_shm_t sp;
    if (!s || m == 0 || s->p <= 1)
        return 0.0;
    tc_predict_shm_params(ctx, &sp);
    const int depth = tc_predict_tree_depth(ctx->shm_params.tree, ctx->shm_params.arity, s->p, 0);
    if (m <= TC_SHM_INLINE_MAX)
        return tc_model_shm_bcast_cost(m, m, 1, depth, &sp); /* one line, no pipeline */
    const int q = s->layout.q;
    size_t bank_bytes = (size_t)(s->layout.S / q) * s->layout.f, f;
    tc_shm_params_geometry(m, s->tw_over_t, s->layout.f, (size_t)s->layout.S * s->layout.f, q,
                           s->stream_bytes, &bank_bytes, &f);
    const int per_bank = (int)(bank_bytes / f);
    return tc_model_shm_bcast_cost(m, f, per_bank > 1 ? per_bank : 1, depth, &sp);
}

/* The segment's Allgather, Gather or Scatter of @p m bytes per process
 * (model/cost_gather.h). Blocks of at most TC_SHM_BCAST_INLINE_MAX bytes
 * (the inline lines) take one bank use, like larger ones up to a chunk. */
static double tc_predict_shm_gather(const tc_ctx_t *ctx, int op, size_t m)
{
    const tc_shm_comm_t *s = ctx->shm;
    tc_model_shm_t sp;
    if (!s || m == 0 || s->p <= 1)
        return 0.0;
    tc_predict_shm_params(ctx, &sp);
    if (op == TC_COLL_ALLTOALL) {
        /* p - 1 blocks in the ready line, else a slot per destination. */
        const size_t slot = m <= TC_SHM_INLINE_MAX / (size_t)(s->p - 1) ? m : tc_shm_a2a_slot(s);
        return tc_model_shm_alltoall_cost(m, slot ? slot : m, s->p, &sp);
    }
    const size_t chunk = m <= TC_SHM_BCAST_INLINE_MAX ? m : tc_shm_ag_chunk(s, m);
    return op == TC_COLL_SCATTER ? tc_model_shm_scatter_cost(m, chunk, s->p, &sp)
                                 : tc_model_shm_allgather_cost(m, chunk, s->p, &sp);
}

/* The segment's Alltoallv with every block of @p m bytes: the Alltoall's
 * bank uses, never inline. */
static double tc_predict_shm_alltoallv(const tc_ctx_t *ctx, size_t m)
{
    const tc_shm_comm_t *s = ctx->shm;
    tc_model_shm_t sp;
    if (!s || m == 0 || s->p <= 1)
        return 0.0;
    tc_predict_shm_params(ctx, &sp);
    const size_t slot = tc_shm_a2a_slot(s);
    return tc_model_shm_alltoall_cost(m, slot ? slot : m, s->p, &sp);
}

/* The segment's reduction of @p m bytes (shm/reduce.c's fragment rule,
 * assuming an element size that divides the fragment). */
static double tc_predict_shm_reduce(const tc_ctx_t *ctx, size_t m, double gamma)
{
    const tc_shm_comm_t *s = ctx->shm;
    tc_model_shm_t sp;
    if (!s || m == 0 || s->p <= 1)
        return 0.0;
    tc_predict_shm_params(ctx, &sp);
    const tc_model_shm_red_cfg_t cfg = {TC_SHM_INLINE_MAX, s->reduce_slice_min, s->reduce_tree_max,
                                        s->reduce_tree_arity};
    const size_t f = tc_shm_params_fragment_for(m, s->tw_over_t, s->rfrag_default);
    return tc_model_shm_reduce_cost(m, f, s->p, gamma, &cfg, &sp);
}

/* The hierarchical Gather or Scatter of @p m bytes per process
 * (hier/level_gather.c) along this rank's groups, as if it led each: the
 * segment's group as the segment's operation, a point-to-point group as its
 * collector's (distributor's) n - 1 transfers one after the other, the
 * members' streams together (u - own) m bytes (u: the ranks of the group's
 * unit, own: the collector's). The v-variants' sizes messages are left out. */
static double tc_predict_hier_gather(const tc_ctx_t *ctx, int op, size_t m)
{
    const tc_hier_t *h = ctx->hier;
    double t = 0.0;
    for (int i = 0; i < h->nlevels; i++) {
        const tc_hier_level_t *l = &h->level[i];
        if (l->shm) {
            t += tc_predict_shm_gather(ctx, op, m);
            continue;
        }
        const int ml = l->model_level;
        tc_logp_t pl;
        tc_select_level_params(
            &ctx->logp.level[ml >= 0 && ml < TC_MODEL_LEVEL_LAST ? ml : TC_MODEL_LEVEL_NODE],
            ctx->oversubscribed, &pl);
        int unit = 0, own = 0;
        for (int y = 0; y < h->p; y++) {
            unit += l->owner[y] >= 0;
            own += l->owner[y] == 0;
        }
        const double each = (double)(unit - own) / (double)(l->size - 1) * (double)m;
        const double rdv = pl.E > 0 && each > pl.E ? pl.rdv : 0.0;
        t += (double)(l->size - 1) * (pl.L + pl.o_s + pl.o_r + rdv) +
             (double)(unit - own) * (double)m * pl.G;
    }
    return t;
}

/* The segment's Reduce_scatter_block of @p m bytes per process
 * (shm/reduce_scatter.c: the whole message in fragments of the reduction's
 * rule, or whole in the inline lines). */
static double tc_predict_shm_rs(const tc_ctx_t *ctx, size_t m, double gamma)
{
    const tc_shm_comm_t *s = ctx->shm;
    tc_model_shm_t sp;
    if (!s || m == 0 || s->p <= 1)
        return 0.0;
    tc_predict_shm_params(ctx, &sp);
    const size_t f = tc_shm_params_fragment_for(m * (size_t)s->p, s->tw_over_t, s->rfrag_default);
    return tc_model_shm_reduce_scatter_cost(m, f, s->p, gamma, TC_SHM_INLINE_MAX, &sp);
}

enum { TC_PREDICT_BCAST, TC_PREDICT_REDUCE, TC_PREDICT_ALLREDUCE_TOP };

/* One group's part for a piece of @p m bytes. */
static double tc_predict_group(const tc_ctx_t *ctx, const tc_hier_level_t *l, int what, size_t m)
{
    const tc_hier_t *h = ctx->hier;
    const int ml = l->model_level;
    if (l->shm)
        return what == TC_PREDICT_BCAST ? tc_predict_shm_bcast(ctx, m)
                                        : tc_predict_shm_reduce(ctx, m, h->gamma);
    /* The parameters the tables were built with (select.h): with the
     * scheduler term where this node is oversubscribed. */
    tc_logp_t pl;
    tc_select_level_params(
        &ctx->logp.level[ml >= 0 && ml < TC_MODEL_LEVEL_LAST ? ml : TC_MODEL_LEVEL_NODE],
        ctx->oversubscribed, &pl);
    const tc_logp_t *p = &pl;
    tc_select_cand_t c = {0, 0};
    tc_select_op_t op;
    switch (what) {
    case TC_PREDICT_BCAST:
        op = TC_SELECT_BCAST;
        c.alg = (int)tc_hier_level_bcast_alg(h, l, m);
        c.k = tc_hier_level_bcast_k(h, l, m);
        break;
    case TC_PREDICT_REDUCE:
        op = TC_SELECT_REDUCE;
        c.alg = (int)tc_hier_level_reduce_alg(h, l, m, 1);
        break;
    default:
        op = TC_SELECT_ALLREDUCE;
        c.alg = (int)tc_hier_top_allreduce_alg(h, m, 1);
        break;
    }
    return tc_select_cost(op, c, m, l->size, h->gamma, p);
}

/* Costs of one piece of @p m bytes at each step of the hierarchical
 * operation, in the order the steps run (the group of each level once:
 * a broadcast or reduction crosses every level of the root's chain and of
 * the other chains, one group per level on any path). Returns the number
 * of steps written to @p step. */
static int tc_predict_steps(const tc_ctx_t *ctx, int coll, size_t m,
                            double step[2 * TC_HIER_MAX_GROUPS + 1])
{
    const tc_hier_t *h = ctx->hier;
    const int n = h->nlevels;
    int k = 0;
    if (coll == TC_COLL_BCAST) {
        for (int i = 0; i < n; i++)
            step[k++] = tc_predict_group(ctx, &h->level[i], TC_PREDICT_BCAST, m);
    } else if (coll == TC_COLL_REDUCE ||
               (coll == TC_COLL_ALLREDUCE && h->allreduce_scheme == TC_HIER_ALLREDUCE_RB)) {
        for (int i = 0; i < n; i++)
            step[k++] = tc_predict_group(ctx, &h->level[i], TC_PREDICT_REDUCE, m);
        if (coll == TC_COLL_ALLREDUCE) /* ReduceBcast: back down from rank 0 */
            for (int i = n - 1; i >= 0; i--)
                step[k++] = tc_predict_group(ctx, &h->level[i], TC_PREDICT_BCAST, m);
    } else {
        /* ReduceAllreduceBcast: up to the top group, an allreduce among its
         * members (the segment's when it is shared memory), down again. */
        const bool in_top = n > 0 && (int)h->level[n - 1].level == tc_hier_top_level(h);
        const int below = in_top ? n - 1 : n;
        for (int i = 0; i < below; i++)
            step[k++] = tc_predict_group(ctx, &h->level[i], TC_PREDICT_REDUCE, m);
        if (in_top)
            step[k++] = tc_predict_group(
                ctx, &h->level[n - 1],
                h->level[n - 1].shm ? TC_PREDICT_REDUCE : TC_PREDICT_ALLREDUCE_TOP, m);
        for (int i = below - 1; i >= 0; i--)
            step[k++] = tc_predict_group(ctx, &h->level[i], TC_PREDICT_BCAST, m);
    }
    return k;
}

/* The hierarchical Reduce_scatter_block of @p m bytes per process
 * (hier/hier_reduce_scatter.c, whole messages, no pieces): the whole
 * message reduced in each group below the top one, the top group's
 * pairwise exchange of its members' shares, then each group's share
 * scattered down (the segment's scatter, or the root's p - 1 sends: the
 * flat broadcast's cost). */
static double tc_predict_hier_rs(const tc_ctx_t *ctx, size_t m)
{
    const tc_hier_t *h = ctx->hier;
    const int n = h->nlevels;
    if (m > SIZE_MAX / (size_t)h->p)
        return -1.0;
    const size_t whole = m * (size_t)h->p;
    const bool in_top = n > 0 && (int)h->level[n - 1].level == tc_hier_top_level(h);
    const int below = in_top ? n - 1 : n;
    tc_logp_t pl;
    double t = 0.0;
    for (int i = 0; i < below; i++)
        t += tc_predict_group(ctx, &h->level[i], TC_PREDICT_REDUCE, whole);
    if (in_top) {
        const tc_hier_level_t *l = &h->level[n - 1];
        const int ml = l->model_level;
        tc_select_level_params(
            &ctx->logp.level[ml >= 0 && ml < TC_MODEL_LEVEL_LAST ? ml : TC_MODEL_LEVEL_NODE],
            ctx->oversubscribed, &pl);
        t += tc_model_reduce_scatter_pairwise_cost(whole / (size_t)l->size, l->size, h->gamma, &pl);
    }
    for (int i = below - 1; i >= 0; i--) {
        const tc_hier_level_t *l = &h->level[i];
        size_t unit = 0;
        for (int x = 0; x < h->p; x++)
            unit += l->owner[x] >= 0;
        const size_t share = m * unit / (size_t)l->size;
        if (l->shm) {
            t += tc_predict_shm_gather(ctx, TC_COLL_SCATTER, share);
        } else {
            const int ml = l->model_level;
            tc_select_level_params(
                &ctx->logp.level[ml >= 0 && ml < TC_MODEL_LEVEL_LAST ? ml : TC_MODEL_LEVEL_NODE],
                ctx->oversubscribed, &pl);
            t += tc_model_bcast_flat_cost(share, l->size, &pl);
        }
    }
    return t;
}

/* The hierarchy with TC_HIER_SEGMENT pieces: the first piece crosses every
 * step, each later one follows the slowest step (a pipeline's steady
 * state); the last piece may be shorter. */
static double tc_predict_hier(const tc_ctx_t *ctx, int coll, size_t bytes)
{
    const size_t seg =
        ctx->hier->segment && ctx->hier->segment < bytes ? ctx->hier->segment : bytes;
    double step[2 * TC_HIER_MAX_GROUPS + 1], total = 0.0, slowest = 0.0;
    int n = tc_predict_steps(ctx, coll, seg, step);
    for (int i = 0; i < n; i++) {
        total += step[i];
        slowest = step[i] > slowest ? step[i] : slowest;
    }
    const size_t full = bytes / seg, rest = bytes % seg;
    total += (double)(full - 1) * slowest;
    if (rest > 0) {
        double last = 0.0;
        n = tc_predict_steps(ctx, coll, rest, step);
        for (int i = 0; i < n; i++)
            last = step[i] > last ? step[i] : last;
        total += last;
    }
    return total;
}

/* The hierarchical Allgather of blocks of @p m bytes (hier/hier_allgather.h)
 * on this rank's path: each group below the top gathers into its leader
 * (the segment's Gather; point to point: P - 1 messages of a member's
 * blocks into the leader, costed as a flat broadcast of that size), the top
 * group exchanges the whole result, the leaders broadcast it down. */
static double tc_predict_hier_allgather(const tc_ctx_t *ctx, size_t m)
{
    const tc_hier_t *h = ctx->hier;
    const int n = h->nlevels;
    const size_t total = m * (size_t)h->p;
    const bool in_top = n > 0 && (int)h->level[n - 1].level == tc_hier_top_level(h);
    const int below = in_top ? n - 1 : n;
    double t = 0.0;
    for (int i = 0; i < below; i++) {
        const tc_hier_level_t *l = &h->level[i];
        if (l->shm) {
            t += tc_predict_shm_gather(ctx, TC_COLL_GATHER, m);
        } else {
            int unit = 0;
            for (int x = 0; x < h->p; x++)
                unit += l->owner[x] >= 0;
            const int ml = l->model_level;
            tc_logp_t pl;
            tc_select_level_params(
                &ctx->logp.level[ml >= 0 && ml < TC_MODEL_LEVEL_LAST ? ml : TC_MODEL_LEVEL_NODE],
                ctx->oversubscribed, &pl);
            const tc_select_cand_t flat = {TC_HIER_BCAST_FLAT, 2};
            t += tc_select_cost(TC_SELECT_BCAST, flat, m * (size_t)unit / (size_t)l->size, l->size,
                                h->gamma, &pl);
        }
        t += tc_predict_group(ctx, l, TC_PREDICT_BCAST, total);
    }
    if (in_top) {
        const tc_hier_level_t *l = &h->level[n - 1];
        if (l->shm) {
            t += tc_predict_shm_gather(ctx, TC_COLL_ALLGATHER, m);
        } else {
            const int ml = l->model_level;
            tc_logp_t pl;
            tc_select_level_params(
                &ctx->logp.level[ml >= 0 && ml < TC_MODEL_LEVEL_LAST ? ml : TC_MODEL_LEVEL_NODE],
                ctx->oversubscribed, &pl);
            const tc_select_cand_t c = {
                (int)tc_hier_allgather_alg_effective(tc_hier_top_allgather_alg(h, total), l->size),
                0};
            t += tc_select_cost(TC_SELECT_ALLGATHER, c, total, l->size, h->gamma, &pl);
        }
    }
    return t;
}

/* Alltoall (@p v false) or Alltoallv with every block of @p m bytes across
 * nodes (hier/hier_alltoall.c, model/cost_alltoall.h), on the context's node
 * plan: the aggregation through the node leaders when the call takes it,
 * an Alltoallv's larger blocks point to point; -1 where the MPI's own runs.
 * Members and leaders talk at the node level, leaders at the level above
 * the hierarchy's highest (tc_select_top_level); a byte copied in memory
 * costs the shm row's t. */
static double tc_predict_hier_alltoall(tc_ctx_t *ctx, bool v, size_t m)
{
    const tc_hier_a2a_plan_t *pl;
    if (tc_ctx_a2a_plan(ctx, &pl) != TC_OK || !tc_hier_alltoall_aggregates(pl, v, m))
        return -1.0;
    tc_logp_t node, top;
    tc_model_shm_t sp;
    tc_select_level_params(&ctx->logp.level[TC_MODEL_LEVEL_NODE], ctx->oversubscribed, &node);
    tc_select_level_params(&ctx->logp.level[tc_select_top_level(ctx->hier, 0)], ctx->oversubscribed,
                           &top);
    tc_predict_shm_params(ctx, &sp);
    if (m <= pl->small)
        return tc_model_alltoall_aggregated_max(m, pl->n, pl->start, v, sp.t, &node, &top);
    return tc_model_alltoall_direct_max(m, pl->n, pl->start, &node, &top);
}

/* The barrier plan's algorithms: the segment's barrier (arrival and release
 * together cost one barrier) plus the top group's. */
static double tc_predict_barrier(const tc_ctx_t *ctx)
{
    const tc_barrier_plan_t *b = &ctx->barrier;
    double t = 0.0;
    if (b->shm_P > 1)
        t += b->shm_cost[b->shm_alg];
    if (b->msg_P > 1)
        t += b->msg_cost[b->msg_alg];
    return t;
}

int TC_Comm_predict(MPI_Comm comm, int op, size_t bytes, int root, double *usec)
{
    int rc, is_inter, size;
    if (comm == MPI_COMM_NULL)
        return tc_ctx_error(MPI_COMM_WORLD, tc_err(TC_ERR_COMM), "TC_Comm_predict: MPI_COMM_NULL");
    if (!usec)
        return tc_ctx_error(comm, tc_err(TC_ERR_ARG), "TC_Comm_predict: usec is NULL");
    if (op < TC_COLL_BCAST || op > TC_COLL_ALLTOALLV)
        return tc_ctx_error(comm, tc_err(TC_ERR_ARG), "TC_Comm_predict: unknown operation");
    tc_ctx_t *ctx = tc_ctx_peek(comm);
    if (ctx) {
        is_inter = ctx->is_inter;
        size = ctx->size;
    } else {
        if (PMPI_Comm_test_inter(comm, &is_inter) != MPI_SUCCESS)
            return tc_ctx_error(MPI_COMM_WORLD, tc_err(TC_ERR_COMM),
                                "TC_Comm_predict: invalid communicator");
        if (!is_inter)
            PMPI_Comm_size(comm, &size);
    }
    if (is_inter)
        return tc_ctx_error(comm, tc_err(TC_ERR_COMM), "TC_Comm_predict: intercommunicator");
    if ((op == TC_COLL_BCAST || op == TC_COLL_REDUCE || op == TC_COLL_GATHER ||
         op == TC_COLL_SCATTER) &&
        (root < 0 || root >= size))
        return tc_ctx_error(comm, tc_err(TC_ERR_ROOT), "TC_Comm_predict: root out of range");
    if (!ctx && (rc = tc_ctx_get(comm, &ctx)) != MPI_SUCCESS)
        return tc_ctx_error(comm, rc, "TC_Comm_predict: could not create the context");

    *usec = 0.0;
    if (size == 1 || (op != TC_COLL_BARRIER && bytes == 0))
        return MPI_SUCCESS; /* the call returns at once (TC_PATH_TRIVIAL) */
    if (op == TC_COLL_BARRIER) {
        /* TC_Barrier runs the plan wherever the segment or the hierarchy
         * exists, else PMPI_Barrier. */
        if (ctx->barrier.shm_P > 1 || ctx->barrier.msg_P > 1)
            *usec = tc_predict_barrier(ctx);
        else
            *usec = -1.0;
        return MPI_SUCCESS;
    }
    if (op == TC_COLL_REDUCE_SCATTER) {
        /* bytes: one process's block of a Reduce_scatter_block. */
        if (ctx->bcast_path == TC_PATH_SHM)
            *usec = tc_predict_shm_rs(ctx, bytes, ctx->hier ? ctx->hier->gamma : 0.0);
        else if (ctx->bcast_path == TC_PATH_HIER && ctx->hier)
            *usec = tc_predict_hier_rs(ctx, bytes);
        else
            *usec = -1.0;
        if (!isfinite(*usec))
            *usec = -1.0;
        return MPI_SUCCESS;
    }
    if (op == TC_COLL_ALLTOALL || op == TC_COLL_ALLTOALLV) {
        /* bytes: one block. The segment's Alltoallv is its Alltoall without
         * the inline blocks. */
        if (ctx->bcast_path == TC_PATH_SHM)
            *usec = op == TC_COLL_ALLTOALL ? tc_predict_shm_gather(ctx, op, bytes)
                                           : tc_predict_shm_alltoallv(ctx, bytes);
        else if (ctx->bcast_path == TC_PATH_HIER && ctx->hier)
            *usec = tc_predict_hier_alltoall(ctx, op == TC_COLL_ALLTOALLV, bytes);
        else
            *usec = -1.0;
        if (!isfinite(*usec))
            *usec = -1.0;
        return MPI_SUCCESS;
    }
    if (op >= TC_COLL_ALLGATHER) {
        /* The gathering operations (bytes: one process's block): through
         * the segment, Allgather, Gather and Scatter through the hierarchy,
         * else the MPI's own (no model of it). */
        if (ctx->bcast_path == TC_PATH_SHM)
            *usec = tc_predict_shm_gather(ctx, op, bytes);
        else if (ctx->bcast_path == TC_PATH_HIER && ctx->hier && op == TC_COLL_ALLGATHER)
            *usec = tc_predict_hier_allgather(ctx, bytes);
        else if (ctx->bcast_path == TC_PATH_HIER && ctx->hier &&
                 (op == TC_COLL_GATHER || op == TC_COLL_SCATTER))
            *usec = tc_predict_hier_gather(ctx, op, bytes);
        else
            *usec = -1.0;
        return MPI_SUCCESS;
    }
    if (ctx->bcast_path == TC_PATH_SHM) {
        const double gamma = ctx->hier ? ctx->hier->gamma : 0.0;
        *usec = op == TC_COLL_BCAST ? tc_predict_shm_bcast(ctx, bytes)
                                    : tc_predict_shm_reduce(ctx, bytes, gamma);
    } else if (ctx->bcast_path == TC_PATH_HIER && ctx->hier) {
        *usec = tc_predict_hier(ctx, op, bytes);
    } else {
        *usec = -1.0; /* PMPI_*: no model of the MPI's own algorithms */
    }
    if (!isfinite(*usec))
        *usec = -1.0;
    return MPI_SUCCESS;
}
