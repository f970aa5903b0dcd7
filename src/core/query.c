/* The query interface for the tools (query.h): the only reader of the
 * context's fields outside the dispatcher. Every field is reached through
 * the accessors at the top, so a change of the context's layout touches
 * those few lines. */
#include "query.h"

#include <stdio.h>
#include <string.h>

#include "barrier/barrier.h"
#include "base/config.h"
#include "ctx.h"
#include "hier/hier.h"
#include "hier/hier_alltoall.h"
#include "hier/hier_build.h"
#include "hier/topo_hwloc.h"
#include "model/cost.h"
#include "model/cost_alltoall.h"
#include "model/cost_shm_coll.h"
#include "rma/settings.h"
#include "select.h"
#include "settings.h"
#include "shm/params.h"
#include "shm/scan.h"
#include "topocoll.h"

/* ---- accessors: what this file reads of the context --------------------- */

static const tc_hier_t *q_hier(const tc_ctx_t *ctx)
{
    return ctx->hier;
}
static const tc_shm_comm_t *q_segment(const tc_ctx_t *ctx)
{
    return ctx->shm;
}
static const tc_shm_params_t *q_shm_params(const tc_ctx_t *ctx)
{
    return &ctx->shm_params;
}
static const tc_logp_table_t *q_logp(const tc_ctx_t *ctx)
{
    return &ctx->logp;
}
static const tc_barrier_plan_t *q_barrier(const tc_ctx_t *ctx)
{
    return &ctx->barrier;
}

/* ---- names -------------------------------------------------------------- */

static const char *path_text(tc_path_t path)
{
    static const char *const names[TC_PATH_LAST] = {
        [TC_PATH_SHM] = "shm (shared-memory pipelined broadcast)",
        [TC_PATH_HIER] = "hier",
        [TC_PATH_TRIVIAL] = "trivial (one process)",
        [TC_PATH_PMPI_MULTINODE] = "PMPI_Bcast: the communicator spans several nodes",
        [TC_PATH_PMPI_SHM_OFF] = "PMPI_Bcast: TC_SHM=0 on some rank",
        [TC_PATH_PMPI_NO_SEGMENT] = "PMPI_Bcast: the segment could not be created on some rank",
        [TC_PATH_PMPI_INTERCOMM] = "PMPI_Bcast: intercommunicator",
        [TC_PATH_PMPI_LARGE_COUNT] = "PMPI_Bcast_c: a count beyond INT_MAX"};
    return (int)path >= 0 && path < TC_PATH_LAST && names[path] ? names[path] : "?";
}

static const char *logp_source_name(tc_logp_source_t s)
{
    static const char *const names[] = {"default", "TC_LOGP_FILE", "TC_LOGP"};
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "?";
}

/* ---- tunables ----------------------------------------------------------- */

int tc_query_tunable_count(void)
{
    int n = 0;
    for (int m = 0; m < tc_settings_nmodules; m++)
        n += tc_settings_modules[m]->count;
    return n;
}

/* Row @p i of the printed table (the modules' tables in their gathered order):
 * its module and its id there; NULL when out of range. */
static tc_cfg_module_t *q_tunable_row(int i, int *id)
{
    for (int m = 0; i >= 0 && m < tc_settings_nmodules; m++) {
        if (i < tc_settings_modules[m]->count) {
            *id = i;
            return tc_settings_modules[m];
        }
        i -= tc_settings_modules[m]->count;
    }
    return NULL;
}

int tc_query_tunable(int i, tc_query_tunable_t *out)
{
    static const char *const src[] = {"default", "env", "INVALID in env, default used"};
    _Static_assert(TC_QUERY_VALUE_MAX >= TC_CFG_STRING_MAX + 1, "room for a whole string value");
    int id;
    tc_cfg_module_t *mod = q_tunable_row(i, &id);
    if (!mod)
        return MPI_ERR_ARG;
    out->name = tc_config_desc(mod, id)->name;
    tc_config_value_text(mod, id, out->value, sizeof out->value);
    const tc_cfg_source_t s = tc_config_source(mod, id);
    out->source = (unsigned)s < sizeof src / sizeof src[0] ? src[s] : "?";
    out->raw = tc_config_raw(mod, id);
    return MPI_SUCCESS;
}

const tc_cfg_desc_t *tc_query_tunable_desc(int i)
{
    int id;
    tc_cfg_module_t *mod = q_tunable_row(i, &id);
    return mod ? tc_config_desc(mod, id) : NULL;
}

/* ---- the context -------------------------------------------------------- */

int tc_query_ctx(MPI_Comm comm, tc_query_ctx_t *out)
{
    tc_ctx_t *ctx;
    int rc = tc_ctx_get(comm, &ctx);
    if (rc != MPI_SUCCESS)
        return rc;
    memset(out, 0, sizeof *out);
    snprintf(out->comm_name, sizeof out->comm_name, "%s", ctx->comm_name);
    out->rank = ctx->rank;
    out->size = ctx->size;
    out->node_size = ctx->node_size;
    out->oversubscribed = ctx->oversubscribed;
    out->bcast_shm = ctx->bcast_path == TC_PATH_SHM && q_segment(ctx);
    out->bcast_path = path_text(ctx->bcast_path);
    return MPI_SUCCESS;
}

/* ---- the segment -------------------------------------------------------- */

int tc_query_shm(MPI_Comm comm, tc_query_shm_t *out)
{
    tc_ctx_t *ctx;
    int rc = tc_ctx_get(comm, &ctx);
    if (rc != MPI_SUCCESS)
        return rc;
    memset(out, 0, sizeof *out);
    const tc_shm_params_t *sp = q_shm_params(ctx);
    out->f = sp->f;
    out->S = sp->S;
    out->q = sp->q;
    out->tree = tc_config_enum_name(&tc_shm_config, TC_SHM_CFG_TREE, sp->tree);
    out->arity = sp->arity;
    out->numa_node = -1;
    out->pages_checked = -1;
    const tc_shm_comm_t *s = q_segment(ctx);
    if (!s)
        return MPI_SUCCESS;
    out->present = 1;
    out->total = s->layout.total;
    out->header_size = s->layout.header_size;
    out->ctrl_size = s->layout.ctrl_size;
    out->p = s->layout.p;
    out->seg_S = s->layout.S;
    out->seg_q = s->layout.q;
    out->seg_f = s->layout.f;
    out->memfd = s->memfd;
    snprintf(out->name, sizeof out->name, "%s", s->name);
    snprintf(out->mechanism, sizeof out->mechanism, "%s", s->mechanism);
    out->numa_node = s->numa_node;
    out->pages_local = s->pages_local;
    out->pages_checked = s->pages_checked;
    return MPI_SUCCESS;
}

int tc_query_shm_tree(MPI_Comm comm, int root, int *parent, int *children, int max, int *nchildren)
{
    tc_ctx_t *ctx;
    int rc = tc_ctx_get(comm, &ctx);
    if (rc != MPI_SUCCESS)
        return rc;
    const tc_shm_comm_t *s = q_segment(ctx);
    if (!s || root < 0 || root >= s->p)
        return MPI_ERR_ARG;
    *parent = tc_shm_tree_parent(&s->tree, root);
    const int n = tc_shm_tree_nchildren(&s->tree, root);
    const int *ch = tc_shm_tree_children(&s->tree, root);
    for (int c = 0; c < n && c < max; c++)
        children[c] = ch[c];
    *nchildren = n;
    return MPI_SUCCESS;
}

/* ---- the model and the barrier ------------------------------------------ */

int tc_query_model(MPI_Comm comm, tc_query_model_t *out)
{
    tc_ctx_t *ctx;
    int rc = tc_ctx_get(comm, &ctx);
    if (rc != MPI_SUCCESS)
        return rc;
    const tc_logp_table_t *t = q_logp(ctx);
    for (int l = 0; l < TC_MODEL_LEVEL_LAST; l++) {
        out->level[l] = t->level[l];
        out->source[l] = logp_source_name(t->source[l]);
    }
    out->shm = t->shm;
    out->shm_source = logp_source_name(t->shm_source);
    return MPI_SUCCESS;
}

/* One row of the plan. @p shm: the segment's barrier, which runs pairwise as
 * dissemination (so pairwise is no candidate there) and is costed on the
 * shm row (select.c). */
static void barrier_row(int shm, int P, tc_model_level_t level, const double *cost,
                        tc_barrier_alg_t alg, int arity, tc_choice_why_t why,
                        tc_query_barrier_t *out)
{
    memset(out, 0, sizeof *out);
    out->P = P;
    out->params = shm ? TC_LOGP_SHM_NAME : tc_model_level_name(level);
    out->arity = arity;
    for (int a = 0; a < TC_BARRIER_ALG_LAST && out->ncand < TC_QUERY_MAX_CAND; a++) {
        if (shm && a == TC_BARRIER_PAIRWISE)
            continue;
        tc_query_cand_t *c = &out->cand[out->ncand++];
        snprintf(c->name, sizeof c->name, "%s", tc_barrier_alg_name((tc_barrier_alg_t)a));
        c->cost = cost[a];
        c->chosen = a == (int)alg;
    }
    out->choice = tc_barrier_alg_name(alg);
    out->why = tc_select_why_name(why);
}

int tc_query_barrier(MPI_Comm comm, tc_query_barrier_t *shm, tc_query_barrier_t *msg)
{
    tc_ctx_t *ctx;
    int rc = tc_ctx_get(comm, &ctx);
    if (rc != MPI_SUCCESS)
        return rc;
    const tc_barrier_plan_t *b = q_barrier(ctx);
    barrier_row(1, b->shm_P, b->shm_level, b->shm_cost, b->shm_alg, b->shm_arity, b->shm_why, shm);
    barrier_row(0, b->msg_P, b->msg_level, b->msg_cost, b->msg_alg, b->msg_arity, b->msg_why, msg);
    return MPI_SUCCESS;
}

/* The helper's polling delay o_poll is taken as half its first idle sleep
 * (TC_RMA_POLL_MIN_US / 2): a helper that has backed off to its longest
 * sleep answers up to TC_RMA_POLL_MAX_US later. */
int tc_query_rma_bcast(MPI_Comm comm, size_t bytes, tc_query_rma_t *out)
{
    tc_ctx_t *ctx;
    int rc = tc_ctx_get(comm, &ctx);
    if (rc != MPI_SUCCESS)
        return rc;
    const tc_barrier_plan_t *b = q_barrier(ctx);
    /* The level that spans the communicator: the top group's, else the node. */
    const tc_model_level_t lv = b->msg_P > 1 ? b->msg_level : TC_MODEL_LEVEL_NODE;
    const tc_logp_t *p = &q_logp(ctx)->level[lv];
    out->P = ctx->size;
    out->params = tc_model_level_name(lv);
    out->o_poll = (double)tc_config_int(&tc_rma_config, TC_RMA_CFG_POLL_MIN_US) / 2.0;
    out->linear = tc_model_rma_bcast_linear_cost(bytes, ctx->size, p);
    out->binomial_down =
        tc_model_rma_bcast_binomial_cost(bytes, ctx->size, TC_MODEL_RMA_ORDER_DOWN, out->o_poll, p);
    out->binomial_up =
        tc_model_rma_bcast_binomial_cost(bytes, ctx->size, TC_MODEL_RMA_ORDER_UP, out->o_poll, p);
    return MPI_SUCCESS;
}

/* ---- the hierarchy ------------------------------------------------------ */

int tc_query_hier(MPI_Comm comm, tc_query_hier_t *out)
{
    tc_ctx_t *ctx;
    int rc = tc_ctx_get(comm, &ctx);
    if (rc != MPI_SUCCESS)
        return rc;
    memset(out, 0, sizeof *out);
    out->shm_level = -1;
    const tc_hier_t *h = q_hier(ctx);
    if (!h)
        return MPI_SUCCESS;
    out->present = 1;
    out->ngroups = h->nlevels;
    out->enabled_mask = h->enabled_mask;
    out->active_mask = h->active_mask;
    out->unknown_mask = h->unknown_mask;
    out->shm_level = h->shm_level;
    out->single_shm = h->single_shm;
    out->allreduce = h->allreduce_scheme == TC_HIER_ALLREDUCE_RB ? "rb (ReduceBcast)"
                                                                 : "rab (ReduceAllreduceBcast)";
    tc_hier_top_allreduce_describe(h, out->allreduce_top, sizeof out->allreduce_top);
    out->segment = h->segment;
    out->model = h->model;
    out->gamma = h->gamma;
    return MPI_SUCCESS;
}

/* The model level of a group's choices (the top group's as the table has it;
 * none recorded: node). */
static tc_model_level_t group_model_level(const tc_hier_level_t *l)
{
    return l->model_level >= 0 ? (tc_model_level_t)l->model_level : TC_MODEL_LEVEL_NODE;
}

/* Group @p i of @p ctx's hierarchy, or NULL. */
static const tc_hier_level_t *group_at(const tc_ctx_t *ctx, int i)
{
    const tc_hier_t *h = q_hier(ctx);
    return h && i >= 0 && i < h->nlevels ? &h->level[i] : NULL;
}

int tc_query_hier_group(MPI_Comm comm, int i, tc_query_group_t *out)
{
    tc_ctx_t *ctx;
    int rc = tc_ctx_get(comm, &ctx);
    if (rc != MPI_SUCCESS)
        return rc;
    const tc_hier_level_t *l = group_at(ctx, i);
    if (!l)
        return MPI_ERR_ARG;
    memset(out, 0, sizeof *out);
    out->level = (int)l->level;
    out->size = l->size;
    out->members = l->members;
    out->shm = l->shm;
    out->params = tc_model_level_name(group_model_level(l));
    tc_hier_level_describe(q_hier(ctx), l, out->describe, sizeof out->describe);
    return MPI_SUCCESS;
}

int tc_query_hier_localities(MPI_Comm comm, tc_hier_loc_t *locs, int *have)
{
    tc_ctx_t *ctx;
    int rc = tc_ctx_get(comm, &ctx);
    if (rc != MPI_SUCCESS)
        return rc;
    const tc_hier_t *h = q_hier(ctx);
    *have = h != NULL;
    if (h)
        memcpy(locs, h->locs, (size_t)h->p * sizeof *locs);
    return MPI_SUCCESS;
}

int tc_query_topo_nesting(unsigned *nesting, unsigned *redundant)
{
    hwloc_topology_t topo;
    *nesting = *redundant = 0;
    if (tc_hier_topo_get(&topo) != 0)
        return MPI_ERR_OTHER;
    *nesting = tc_hier_topo_nesting_mask(topo, redundant);
    return MPI_SUCCESS;
}

/* Name of algorithm @p alg (radix @p k) of @p op, as the tables print it. */
static void alg_text(tc_select_op_t op, int alg, int k, char *buf, size_t len)
{
    if (op == TC_SELECT_BCAST && alg == TC_HIER_BCAST_KNOMIAL)
        snprintf(buf, len, "knomial:%d", k);
    else if (op == TC_SELECT_BCAST)
        snprintf(buf, len, "%s", tc_hier_bcast_alg_name((tc_hier_bcast_alg_t)alg));
    else if (op == TC_SELECT_ALLREDUCE)
        snprintf(buf, len, "%s", tc_hier_allreduce_alg_name((tc_hier_allreduce_alg_t)alg));
    else
        snprintf(buf, len, "%s", tc_hier_reduce_alg_name((tc_hier_reduce_alg_t)alg));
}

int tc_query_choice(MPI_Comm comm, int i, tc_query_op_t qop, size_t bytes, tc_query_choice_t *out)
{
    tc_ctx_t *ctx;
    int rc = tc_ctx_get(comm, &ctx);
    if (rc != MPI_SUCCESS)
        return rc;
    const tc_hier_t *h = q_hier(ctx);
    const tc_hier_level_t *l = group_at(ctx, i);
    if (!l || l->shm)
        return MPI_ERR_ARG;
    const int sc = tc_hier_size_class(bytes);
    tc_select_op_t op;
    int alg, k = 0, why;
    switch (qop) {
    case TC_QUERY_BCAST:
        op = TC_SELECT_BCAST;
        alg = l->bcast_tab[sc];
        k = l->bcast_k_tab[sc];
        why = l->bcast_why[sc];
        break;
    case TC_QUERY_REDUCE:
        op = TC_SELECT_REDUCE;
        alg = l->reduce_tab[sc];
        why = l->reduce_why[sc];
        break;
    case TC_QUERY_ALLREDUCE:
        op = TC_SELECT_ALLREDUCE;
        alg = h->allreduce_tab[sc];
        why = h->allreduce_why[sc];
        break;
    default:
        return MPI_ERR_ARG;
    }
    /* The tables' parameters (select.h): L + w when oversubscribed. The
     * tables were built with the communicator's agreed flag (any node
     * oversubscribed); this rank's own flag is what is known here. */
    tc_logp_t p;
    tc_select_level_params(&q_logp(ctx)->level[group_model_level(l)], ctx->oversubscribed, &p);

    memset(out, 0, sizeof *out);
    tc_hier_size_format(bytes, out->bytes, sizeof out->bytes);
    tc_select_cand_t c[TC_SELECT_MAX_CAND];
    const int n = tc_select_candidates(op, c);
    int found = 0;
    for (int j = 0; j < n && j < TC_QUERY_MAX_CAND; j++) {
        tc_query_cand_t *q = &out->cand[out->ncand++];
        q->chosen = c[j].alg == alg &&
                    (op != TC_SELECT_BCAST || c[j].alg == TC_HIER_BCAST_FLAT || c[j].k == k);
        found |= q->chosen;
        alg_text(op, c[j].alg, c[j].k, q->name, sizeof q->name);
        q->cost = tc_select_cost(op, c[j], bytes, l->size, h->gamma, &p);
    }
    alg_text(op, alg, k, out->choice, sizeof out->choice);
    out->outside = !found;
    out->choice_cost = tc_select_cost(op, (tc_select_cand_t){alg, k}, bytes, l->size, h->gamma, &p);
    out->why = tc_hier_why_name((tc_hier_why_t)why);
    return MPI_SUCCESS;
}

/* ---- the plans of the gathering and scanning operations ----------------- */

/* The path of these operations on a context, in words (core/allgather.c,
 * gather.c, scatter.c, reduce_scatter.c, scan.c: all follow bcast_path; on
 * the hierarchy Allgather(v), Gather(v), Scatter(v), the Reduce_scatters and
 * (contiguous nodes) Scan, Exscan go through its groups, see tc_query_plan). */
static const char *plan_path_text(tc_path_t path)
{
    static const char *const names[TC_PATH_LAST] = {
        [TC_PATH_SHM] = "shared memory (one segment spans the communicator)",
        [TC_PATH_HIER] = "the MPI's own: the communicator spans several hierarchy levels "
                         "(the hierarchical version is not there yet)",
        [TC_PATH_TRIVIAL] = "trivial (one process: its own block, copied locally)",
        [TC_PATH_PMPI_MULTINODE] = "the MPI's own: the communicator spans several nodes "
                                   "(TC_HIER=0, or no hierarchy)",
        [TC_PATH_PMPI_SHM_OFF] = "the MPI's own: TC_SHM=0 on some rank",
        [TC_PATH_PMPI_NO_SEGMENT] = "the MPI's own: no segment (it could not be created on "
                                    "some rank, or was over the cap)",
        [TC_PATH_PMPI_INTERCOMM] = "the MPI's own: intercommunicator (arguments unchanged)"};
    return (int)path >= 0 && path < TC_PATH_LAST && names[path] ? names[path] : "?";
}

/* What the reductions among them hand to the MPI's own even on the segment. */
static const char tc_query_plan_reduce_note[] =
    "; (datatype, op) pairs TC_Reduce does not reduce itself go to the MPI's own";

/* The Alltoall(v) aggregation's limit on @p ctx and the model's crossover
 * (model/cost_alltoall.h, with TC_Comm_predict's parameters). */
static void q_a2a_note(tc_ctx_t *ctx, bool v, char *buf, size_t len)
{
    const tc_hier_a2a_plan_t *pl;
    if (tc_ctx_a2a_plan(ctx, &pl) != TC_OK)
        return;
    if (pl->small == 0) {
        snprintf(buf, len, "no aggregation here (one process per node, or a node unknown)");
        return;
    }
    tc_logp_t node, top;
    tc_model_shm_t sp;
    tc_select_level_params(&q_logp(ctx)->level[TC_MODEL_LEVEL_NODE], ctx->oversubscribed, &node);
    tc_select_level_params(&q_logp(ctx)->level[tc_select_top_level(ctx->hier, 0)],
                           ctx->oversubscribed, &top);
    tc_model_shm_from_shm_row(&q_logp(ctx)->shm, &sp);
    const size_t x =
        tc_model_alltoall_crossover((size_t)1 << 30, pl->n, pl->start, v, sp.t, &node, &top);
    if (x == 0)
        snprintf(buf, len,
                 "%d nodes, at most %d processes each; blocks of 1 to %zu B aggregated; the "
                 "model finds point to point cheaper at every size",
                 pl->n, pl->nmax, pl->small);
    else
        snprintf(buf, len,
                 "%d nodes, at most %d processes each; blocks of 1 to %zu B aggregated; the "
                 "model finds the aggregation cheaper than point to point up to %zu B",
                 pl->n, pl->nmax, pl->small, x);
}

int tc_query_plan(MPI_Comm comm, int op, tc_query_plan_t *out)
{
    static const char *const names[TC_QUERY_PLAN_LAST] = {"Allgather",
                                                          "Allgatherv",
                                                          "Gather",
                                                          "Gatherv",
                                                          "Scatter",
                                                          "Scatterv",
                                                          "Reduce_scatter_block",
                                                          "Reduce_scatter",
                                                          "Scan",
                                                          "Exscan",
                                                          "Alltoall",
                                                          "Alltoallv"};
    const int inl = (int)TC_SHM_INLINE_MAX;
    /* The Allgather family's and the Alltoall's blocks: the inline lines. */
    const int ilines = (int)TC_SHM_BCAST_INLINE_MAX;
    if (op < 0 || op >= TC_QUERY_PLAN_LAST)
        return MPI_ERR_ARG;
    tc_ctx_t *ctx;
    int rc = tc_ctx_get(comm, &ctx);
    if (rc != MPI_SUCCESS)
        return rc;
    memset(out, 0, sizeof *out);
    out->name = names[op];
    out->shm = ctx->bcast_path == TC_PATH_SHM && q_segment(ctx) != NULL;
    out->path = plan_path_text(ctx->bcast_path);
    out->race_min = ctx->race.min;
    tc_hier_size_format(out->race_min, out->race_min_text, sizeof out->race_min_text);
    char *p = out->protocol;
    const size_t n = sizeof out->protocol;
    switch (op) {
    case TC_QUERY_PLAN_ALLGATHER:
    case TC_QUERY_PLAN_ALLGATHERV:
        snprintf(p, n,
                 "each process copies its block into its own slots once, every other copies "
                 "it out: blocks <= %d B in its inline lines (the ready line and %d more, each "
                 "with its own sequence number), larger fragment by fragment%s",
                 ilines, TC_SHM_BCAST_INLINE_LINES - 1,
                 op == TC_QUERY_PLAN_ALLGATHERV ? " (every process makes the largest block's "
                                                  "bank uses)"
                                                : "");
        out->race = "calls of at least TC_PMPI_RACE_MIN bytes in all blocks";
        break;
    case TC_QUERY_PLAN_GATHER:
    case TC_QUERY_PLAN_GATHERV:
        snprintf(p, n,
                 "%severy process but the root copies its block into its own slots, the root "
                 "copies them out: blocks <= %d B in the inline lines, larger fragment by "
                 "fragment",
                 op == TC_QUERY_PLAN_GATHERV ? "the root broadcasts the largest block's size "
                                               "(8 B inline), then "
                                             : "",
                 ilines);
        out->race = op == TC_QUERY_PLAN_GATHER
                        ? "calls of at least TC_PMPI_RACE_MIN bytes in all blocks"
                        : "never (only the root knows the size, and all must decide alike)";
        break;
    case TC_QUERY_PLAN_SCATTER:
    case TC_QUERY_PLAN_SCATTERV:
        snprintf(p, n,
                 "%sthe root writes block j into process j's slots and ready line, j copies it "
                 "out: blocks <= %d B in j's inline lines, larger fragment by fragment",
                 op == TC_QUERY_PLAN_SCATTERV ? "the root broadcasts the largest block's size "
                                                "(8 B inline), then "
                                              : "",
                 ilines);
        out->race = op == TC_QUERY_PLAN_SCATTER
                        ? "calls of at least TC_PMPI_RACE_MIN bytes in all blocks"
                        : "never (only the root knows the size, and all must decide alike)";
        break;
    case TC_QUERY_PLAN_REDUCE_SCATTER_BLOCK:
    case TC_QUERY_PLAN_REDUCE_SCATTER:
        if (ctx->bcast_path == TC_PATH_HIER && ctx->hier) {
            out->hier = 1;
            out->path = "hierarchical: the whole message reduced in each group, reduce-scattered "
                        "among the top group's members, each group's blocks scattered down "
                        "(commutative ops; the others: the MPI's own)";
        }
        out->modeled = 1;
        snprintf(p, n,
                 "the Allreduce's slices cut at the counts: every process publishes its "
                 "contribution fragment by fragment, each folds its own slice from all slots in "
                 "rank order into its buffer: messages <= %d B whole in the inline line%s",
                 inl, tc_query_plan_reduce_note);
        break;
    case TC_QUERY_PLAN_ALLTOALL:
    case TC_QUERY_PLAN_ALLTOALLV:
        snprintf(p, n,
                 "each process copies its p-1 outgoing blocks into its own slots (one per "
                 "destination), one notification per bank use, and copies its block out of "
                 "every other's slots; larger blocks over several bank uses%s",
                 op == TC_QUERY_PLAN_ALLTOALL
                     ? "; all p-1 blocks in the ready line when they fit its 56 B"
                     : " (the largest block's size is agreed in the first use's ready lines)");
        out->race = op == TC_QUERY_PLAN_ALLTOALL
                        ? "calls of at least TC_PMPI_RACE_MIN bytes in all blocks received"
                        : "never (each process knows only its own blocks)";
        break;
    default: /* Scan, Exscan */
    {
        const int tmin = q_shm_params(ctx)->scan_tree_min;
        char rounds[160] = "";
        if (tmin > 0)
            snprintf(rounds, sizeof rounds,
                     "; from %d processes, messages of one line (and of one slot where the "
                     "model finds it cheaper) in log2(p) rounds",
                     tmin);
        snprintf(p, n,
                 "rank-ordered chain: process i waits for i-1's prefix, folds its own on the "
                 "right, publishes it, fragment by fragment: messages <= %d B in the inline "
                 "lines%s%s%s",
                 inl, rounds,
                 op == TC_QUERY_PLAN_EXSCAN ? " (result: the previous prefix, none at 0)" : "",
                 tc_query_plan_reduce_note);
        if (ctx->bcast_path == TC_PATH_HIER) {
            /* core/scan.c: contiguity is agreed at the first call. */
            const struct tc_scan_units *u = ctx->scan_units;
            out->hier = !u || tc_scan_units_contiguous(u);
            out->path = !u ? "hierarchical if every node's ranks are contiguous (agreed at the "
                             "first call), else the MPI's own"
                        : out->hier ? "hierarchical: every node's ranks are contiguous"
                                    : "the MPI's own: the nodes' ranks interleave";
            const size_t len = strlen(p);
            snprintf(p + len, n - len,
                     "; across nodes: this scan in each node, an exclusive scan of the node "
                     "totals among the nodes' last ranks (recursive doubling), broadcast in "
                     "the node, one fold per process");
        }
        break;
    }
    }
    if (op == TC_QUERY_PLAN_ALLTOALL || op == TC_QUERY_PLAN_ALLTOALLV) {
        out->modeled = 1;
        out->bytes = op == TC_QUERY_PLAN_ALLTOALL ? "one block (to one process)"
                                                  : "one block (to one process), equal counts";
    } else if (op >= TC_QUERY_PLAN_REDUCE_SCATTER_BLOCK) {
        out->race = "calls of at least TC_PMPI_RACE_MIN bytes whose result cannot depend on the "
                    "algorithm: integer and logical ops (on 2 processes also float sums and "
                    "products); other float ops never";
        out->bytes = op <= TC_QUERY_PLAN_REDUCE_SCATTER ? "one process's block, equal counts"
                                                        : "the whole message";
        out->modeled = op >= TC_QUERY_PLAN_SCAN || out->modeled; /* Reduce_scatter: set above */
    } else {
        out->modeled = op != TC_QUERY_PLAN_GATHERV && op != TC_QUERY_PLAN_SCATTERV;
        out->bytes = op == TC_QUERY_PLAN_ALLGATHERV ? "one process's block, equal counts"
                                                    : "one process's block";
    }
    const bool rooted = op >= TC_QUERY_PLAN_GATHER && op <= TC_QUERY_PLAN_SCATTERV;
    if (ctx->bcast_path == TC_PATH_HIER && q_hier(ctx) &&
        (op == TC_QUERY_PLAN_ALLGATHER || op == TC_QUERY_PLAN_ALLGATHERV)) {
        /* core/allgather.c, hier/hier_allgather.h. */
        char top[120];
        tc_hier_top_allgather_describe(q_hier(ctx), top, sizeof top);
        out->hier = 1;
        out->path = "hierarchical: the groups of every level below the top gather into their "
                    "leaders, the top group exchanges, the leaders broadcast the whole result "
                    "down";
        snprintf(p, n,
                 "gather to the leaders (segment or point to point); top group: %s by the "
                 "result's size; down: the segment's Bcast or the level's; blocks in rank order",
                 top);
        out->race = "calls of at least TC_PMPI_RACE_MIN bytes in all blocks";
    } else if (rooted && ctx->bcast_path == TC_PATH_HIER && ctx->hier) {
        /* hier/level_gather.c */
        out->hier = 1;
        out->path = "the hierarchy's groups (one gather or scatter per group: the segment's "
                    "group through it, the others point to point)";
        snprintf(p, n, "%s",
                 op <= TC_QUERY_PLAN_GATHERV
                     ? "the groups without the root gather bottom-up into their leaders, then "
                       "the root's chain top-down into the member holding the root; blocks "
                       "travel in rank order (any placement); Gatherv: a collector other than "
                       "the root learns its members' sizes first"
                     : "the root's chain bottom-up from the root, then the other groups "
                       "top-down from their leaders; blocks travel in rank order (any "
                       "placement); Scatterv: the sizes travel ahead of the blocks");
        out->race = "none (the hierarchical path does not race)";
    } else if ((op == TC_QUERY_PLAN_ALLTOALL || op == TC_QUERY_PLAN_ALLTOALLV) &&
               ctx->bcast_path == TC_PATH_HIER && q_hier(ctx) && q_hier(ctx)->a2a_aggregate > 0) {
        /* hier/hier_alltoall.c: node-aware aggregation for small blocks. */
        out->hier = 1;
        if (op == TC_QUERY_PLAN_ALLTOALL) {
            out->path = "hierarchical for blocks of at most TC_HIER_A2A_AGGREGATE bytes (through "
                        "the node leaders), larger blocks the MPI's own";
            snprintf(p, n,
                     "each process hands its blocks to its node's leader, the leaders exchange "
                     "one message per node pair, each leader hands every member its received "
                     "blocks in source rank order (point to point on the private communicator)");
        } else {
            out->path = "hierarchical: blocks of at most TC_HIER_A2A_AGGREGATE bytes through the "
                        "node leaders, larger blocks straight to their receivers";
            snprintf(p, n,
                     "each process sends its node's leader its sizes (2p) and its small blocks, "
                     "the leaders exchange one message per node pair, each leader hands every "
                     "member its small blocks in source rank order; larger blocks point to point "
                     "(both ends know a block's size: no agreement needed)");
        }
        out->race = "none across nodes";
        q_a2a_note(ctx, op == TC_QUERY_PLAN_ALLTOALLV, out->model_note, sizeof out->model_note);
    } else if (out->hier && op >= TC_QUERY_PLAN_SCAN) {
        out->race = "none across nodes";
    } else if (!out->shm && !out->hier) {
        out->race = "none (the MPI's own runs every call)";
    } else if (out->race_min == 0)
        out->race = "off (TC_PMPI_RACE_MIN=0)";
    return MPI_SUCCESS;
}

/* Scan / Exscan of @p m bytes through the segment @p s (shm/scan.c's
 * choice: rounds or chain). */
static double q_scan_shm_cost(const tc_ctx_t *ctx, const tc_shm_comm_t *s, size_t m)
{
    tc_model_shm_t sp;
    if (!s || m == 0 || s->p <= 1)
        return 0.0;
    tc_model_shm_from_shm_row(&q_logp(ctx)->shm, &sp);
    const double gamma = ctx->hier ? ctx->hier->gamma : 0.0;
    if (tc_shm_scan_rounds(s, m))
        return tc_model_shm_scan_rounds_cost(m, s->p, gamma, &sp);
    const size_t f =
        m <= TC_SHM_INLINE_MAX ? m : tc_shm_params_fragment_for(m, s->tw_over_t, s->rfrag_default);
    return tc_model_shm_scan_chain_cost(m, f, s->p, gamma, &sp);
}

/* The model's Scan / Exscan on @p ctx (-1: the MPI's own runs). Across
 * nodes: the scan in this rank's node, the leaders' exclusive scan (the
 * top group's LogGP parameters), the broadcast in the node (costed as a
 * second scan there: a bound) and the fold. */
static double q_scan_cost(const tc_ctx_t *ctx, size_t m)
{
    if (ctx->size == 1 || m == 0)
        return 0.0;
    if (ctx->bcast_path == TC_PATH_SHM)
        return q_scan_shm_cost(ctx, q_segment(ctx), m);
    if (ctx->bcast_path != TC_PATH_HIER || !ctx->hier)
        return -1.0;
    const struct tc_scan_units *u = ctx->scan_units;
    if (u && !tc_scan_units_contiguous(u))
        return -1.0;
    const tc_shm_comm_t *s = q_segment(ctx);
    const int local = s ? s->p : 1;
    const int nunits = u ? tc_scan_units_count(u) : (ctx->size + local - 1) / local;
    tc_logp_t lp;
    tc_select_level_params(&q_logp(ctx)->level[tc_select_top_level(ctx->hier, 0)],
                           ctx->oversubscribed, &lp);
    const double gamma = ctx->hier->gamma, local_cost = q_scan_shm_cost(ctx, s, m);
    return 2.0 * local_cost + tc_model_exscan_recdbl_cost(m, nunits, gamma, &lp) +
           (double)m * gamma;
}

int tc_query_plan_cost(MPI_Comm comm, int op, size_t bytes, double *usec)
{
    if (op == TC_QUERY_PLAN_SCAN || op == TC_QUERY_PLAN_EXSCAN) {
        tc_ctx_t *ctx;
        int rc = tc_ctx_get(comm, &ctx);
        if (rc != MPI_SUCCESS)
            return rc;
        *usec = q_scan_cost(ctx, bytes);
        return MPI_SUCCESS;
    }
    static const int coll[TC_QUERY_PLAN_LAST] = {
        [TC_QUERY_PLAN_ALLGATHER] = TC_COLL_ALLGATHER,
        [TC_QUERY_PLAN_ALLGATHERV] = TC_COLL_ALLGATHER,
        [TC_QUERY_PLAN_GATHER] = TC_COLL_GATHER,
        [TC_QUERY_PLAN_SCATTER] = TC_COLL_SCATTER,
        [TC_QUERY_PLAN_ALLTOALL] = TC_COLL_ALLTOALL,
        [TC_QUERY_PLAN_ALLTOALLV] = TC_COLL_ALLTOALLV,
        [TC_QUERY_PLAN_REDUCE_SCATTER_BLOCK] = TC_COLL_REDUCE_SCATTER,
        [TC_QUERY_PLAN_REDUCE_SCATTER] = TC_COLL_REDUCE_SCATTER};
    if (op < 0 || op >= TC_QUERY_PLAN_LAST || coll[op] == 0)
        return MPI_ERR_ARG;
    return TC_Comm_predict(comm, coll[op], bytes, 0, usec);
}
