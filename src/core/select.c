/* Choosing algorithms: see select.h. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "hier/hier.h"
#include "hier/hier_build.h"
#include "model/cost.h"
#include "model/cost_gather.h"
#include "model/settings.h"
#include "select.h"
#include "shm/store.h"

_Static_assert((int)TC_MODEL_BARRIER_LAST == (int)TC_BARRIER_ALG_LAST &&
                   (int)TC_MODEL_BARRIER_TOURNAMENT == (int)TC_BARRIER_TOURNAMENT &&
                   (int)TC_MODEL_BARRIER_PAIRWISE == (int)TC_BARRIER_PAIRWISE,
               "model and barrier enums in the same order");
_Static_assert((int)TC_MODEL_LEVEL_LAST == (int)TC_LEVEL_LAST &&
                   (int)TC_MODEL_LEVEL_NODE == (int)TC_LEVEL_NODE,
               "model and hierarchy levels in the same order");
/* The tuning file numbers levels, operations' algorithms and the barrier
 * like the library (model/tuning.h). */
_Static_assert(TC_TUNING_LEVEL_TOP == (int)TC_HIER_LEVEL_TOP &&
                   (int)TC_LEVEL_SWITCH4 == TC_TUNING_LEVEL_TOP - 1,
               "tuning levels = hierarchy levels, then top");
_Static_assert((int)TC_HIER_BCAST_FLAT == 0 && (int)TC_HIER_BCAST_KNOMIAL == 1 &&
                   (int)TC_HIER_BCAST_SCATTER_ALLGATHER == 2 && (int)TC_HIER_REDUCE_FLAT == 0 &&
                   (int)TC_HIER_REDUCE_BINOMIAL == 1 && (int)TC_HIER_REDUCE_RSG == 2 &&
                   (int)TC_HIER_ALLREDUCE_RECDBL == 0 && (int)TC_HIER_ALLREDUCE_RING == 1 &&
                   (int)TC_BARRIER_CENTRAL == 0 && (int)TC_BARRIER_TREE == 1 &&
                   (int)TC_BARRIER_DISSEMINATION == 2 && (int)TC_BARRIER_TOURNAMENT == 3 &&
                   (int)TC_BARRIER_PAIRWISE == 4,
               "tuning-file algorithm numbers = the library's enums");

static tc_logp_table_t tc_select_table;
static pthread_once_t tc_select_table_once = PTHREAD_ONCE_INIT;

static void tc_select_table_load(void)
{
    char err[512];
    tc_logp_table_defaults(&tc_select_table);
    const char *file = tc_config_string(&tc_model_config, TC_MODEL_CFG_LOGP_FILE);
    if (file && *file && tc_logp_table_load_file(&tc_select_table, file, err, sizeof err) != 0)
        tc_log(TC_LOG_ERROR, "TC_LOGP_FILE: %s (the rest of the file is ignored)", err);
    const char *spec = tc_config_string(&tc_model_config, TC_MODEL_CFG_LOGP);
    if (spec && *spec && tc_logp_table_apply_env(&tc_select_table, spec, err, sizeof err) != 0)
        tc_log(TC_LOG_ERROR, "TC_LOGP: %s (ignored)", err);
}

const tc_logp_table_t *tc_select_logp_table(void)
{
    pthread_once(&tc_select_table_once, tc_select_table_load);
    return &tc_select_table;
}

static tc_err_t tc_select_logp_load(void *buf, size_t len, void *arg)
{
    (void)arg;
    memcpy(buf, tc_select_logp_table(), len);
    return TC_OK;
}

int tc_select_logp_agree(MPI_Comm priv, struct tc_shm_comm *shm, MPI_Comm shmcomm,
                         tc_logp_table_t *out)
{
    /* Doubles and small enums only: the struct is copied as bytes between
     * processes of one program (same ABI everywhere), through the node store
     * and then from rank 0. */
    int from_store = 0;
    tc_err_t rc = tc_shm_store_get_or_put(shm, shmcomm, "logp", out, sizeof *out,
                                          tc_select_logp_load, NULL, &from_store);
    if (rc != TC_OK)
        return rc;
    tc_log(TC_LOG_TRACE, "LogP table %s", from_store ? "from the node store" : "loaded here");
    return PMPI_Bcast(out, (int)sizeof *out, MPI_BYTE, 0, priv);
}

const char *tc_select_why_name(tc_choice_why_t why)
{
    switch (why) {
    case TC_CHOICE_OVERRIDE:
        return "override";
    case TC_CHOICE_MODEL:
        return "model";
    case TC_CHOICE_FILE:
        return "file";
    case TC_CHOICE_OVERSUB:
        return "oversubscribed";
    default:
        return "-";
    }
}

/* ---- this process's inputs -------------------------------------------- */

/* The tunables of the choice (TC_TUNING_FILE, TC_MODEL_GAMMA, TC_HIER_MODEL). */
static void tc_select_env_read(const char **file, double *gamma, int *model)
{
    *file = tc_config_string(&tc_model_config, TC_MODEL_CFG_TUNING_FILE);
    *gamma = tc_config_double(&tc_model_config, TC_MODEL_CFG_GAMMA);
    *model = tc_config_int(&tc_model_config, TC_MODEL_CFG_HIER_MODEL) != 0;
}

static tc_select_inputs_t tc_select_inputs;
static pthread_once_t tc_select_inputs_once = PTHREAD_ONCE_INIT;

static void tc_select_tuning_report(void *arg, const char *msg)
{
    (void)arg;
    tc_log(TC_LOG_ERROR, "TC_TUNING_FILE: %s", msg);
}

static void tc_select_inputs_load(void)
{
    const char *file;
    double gamma;
    int model;
    memset(&tc_select_inputs, 0, sizeof tc_select_inputs); /* sent as bytes */
    tc_select_env_read(&file, &gamma, &model);
    tc_tuning_init(&tc_select_inputs.tuning);
    if (file[0])
        (void)tc_tuning_load_file(&tc_select_inputs.tuning, file, tc_select_tuning_report, NULL);
    tc_select_inputs.gamma = gamma;
    tc_select_inputs.model = model;
}

const tc_select_inputs_t *tc_select_inputs_local(void)
{
    pthread_once(&tc_select_inputs_once, tc_select_inputs_load);
    return &tc_select_inputs;
}

int tc_select_inputs_agree(MPI_Comm priv, tc_select_inputs_t *out)
{
    int rank;
    PMPI_Comm_rank(priv, &rank);
    if (rank == 0)
        *out = *tc_select_inputs_local();
    return PMPI_Bcast(out, (int)sizeof *out, MPI_BYTE, 0, priv);
}

/* ---- candidates --------------------------------------------------------- */

int tc_select_candidates(tc_select_op_t op, tc_select_cand_t c[TC_SELECT_MAX_CAND])
{
    static const tc_select_cand_t bcast[] = {
        {TC_HIER_BCAST_KNOMIAL, 2}, {TC_HIER_BCAST_KNOMIAL, 3},
        {TC_HIER_BCAST_KNOMIAL, 4}, {TC_HIER_BCAST_KNOMIAL, 8},
        {TC_HIER_BCAST_FLAT, 2},    {TC_HIER_BCAST_SCATTER_ALLGATHER, 2},
    };
    static const tc_select_cand_t reduce[] = {
        {TC_HIER_REDUCE_BINOMIAL, 0}, {TC_HIER_REDUCE_FLAT, 0}, {TC_HIER_REDUCE_RSG, 0}};
    static const tc_select_cand_t allreduce[] = {{TC_HIER_ALLREDUCE_RECDBL, 0},
                                                 {TC_HIER_ALLREDUCE_RING, 0}};
    static const tc_select_cand_t allgather[] = {
        {TC_HIER_ALLGATHER_RECDBL, 0}, {TC_HIER_ALLGATHER_RING, 0}, {TC_HIER_ALLGATHER_BRUCK, 0}};
    const tc_select_cand_t *src;
    int n;
    switch (op) {
    case TC_SELECT_BCAST:
        src = bcast;
        n = 6;
        break;
    case TC_SELECT_REDUCE:
        src = reduce;
        n = 3;
        break;
    case TC_SELECT_REDUCE_NC:
        src = reduce; /* rsg splits the vector by member: commutative ops only */
        n = 2;
        break;
    case TC_SELECT_ALLREDUCE:
        src = allreduce;
        n = 2;
        break;
    case TC_SELECT_ALLGATHER:
        src = allgather;
        n = 3;
        break;
    default:
        return 0;
    }
    memcpy(c, src, (size_t)n * sizeof *c);
    return n;
}

double tc_select_cost(tc_select_op_t op, tc_select_cand_t c, size_t m, int P, double gamma,
                      const tc_logp_t *p)
{
    switch (op) {
    case TC_SELECT_BCAST:
        switch ((tc_hier_bcast_alg_t)c.alg) {
        case TC_HIER_BCAST_FLAT:
            return tc_model_bcast_flat_cost(m, P, p);
        case TC_HIER_BCAST_KNOMIAL:
            return tc_model_bcast_knomial_cost(m, P, c.k, p);
        default:
            return tc_model_bcast_scatter_allgather_cost(m, P, c.k, p);
        }
    case TC_SELECT_REDUCE:
    case TC_SELECT_REDUCE_NC:
        switch ((tc_hier_reduce_alg_t)c.alg) {
        case TC_HIER_REDUCE_FLAT:
            return tc_model_reduce_flat_cost(m, P, gamma, p);
        case TC_HIER_REDUCE_BINOMIAL:
            return tc_model_reduce_binomial_cost(m, P, gamma, p);
        default:
            return tc_model_reduce_rsg_cost(m, P, gamma, p);
        }
    case TC_SELECT_ALLREDUCE:
        return c.alg == TC_HIER_ALLREDUCE_RING ? tc_model_allreduce_ring_cost(m, P, gamma, p)
                                               : tc_model_allreduce_recdbl_cost(m, P, gamma, p);
    case TC_SELECT_ALLGATHER:
        /* Bruck's final rotation is a local copy: gamma (a byte's
         * combination in a reduction) stands in for a byte's copy. */
        switch ((tc_hier_allgather_alg_t)c.alg) {
        case TC_HIER_ALLGATHER_RING:
            return tc_model_allgather_ring_cost(m, P, p);
        case TC_HIER_ALLGATHER_BRUCK:
            return tc_model_allgather_bruck_cost(m, P, gamma, p);
        default:
            return tc_model_allgather_recdbl_cost(m, P, p);
        }
    default:
        return 0;
    }
}

int tc_select_allmember(tc_select_op_t op, tc_select_cand_t c)
{
    switch (op) {
    case TC_SELECT_BCAST:
        return c.alg == TC_HIER_BCAST_SCATTER_ALLGATHER;
    case TC_SELECT_REDUCE:
    case TC_SELECT_REDUCE_NC:
        return c.alg == TC_HIER_REDUCE_RSG;
    default:
        /* The allreduce ring is not left out: recursive doubling, the only
         * other candidate, pairs every member in every round too, and the
         * ring measured faster at 1 MiB oversubscribed (docs/model.md). */
        return 0;
    }
}

void tc_select_level_params(const tc_logp_t *p, int oversubscribed, tc_logp_t *out)
{
    *out = *p;
    if (oversubscribed)
        out->L += p->w;
}

int tc_select_argmin(tc_select_op_t op, size_t m, int P, double gamma, const tc_logp_t *p,
                     int oversubscribed, double cost[TC_SELECT_MAX_CAND])
{
    tc_select_cand_t c[TC_SELECT_MAX_CAND];
    double local[TC_SELECT_MAX_CAND];
    const int n = tc_select_candidates(op, c);
    int best = -1;
    if (!cost)
        cost = local;
    for (int i = 0; i < n; i++) {
        cost[i] = tc_select_cost(op, c[i], m, P, gamma, p);
        /* The first candidate of every op (k-nomial:2, binomial, recursive
         * doubling) is never left out, so something is always chosen. */
        if (oversubscribed && tc_select_allmember(op, c[i]))
            continue;
        if (best < 0 || cost[i] < cost[best] * (1.0 - 1e-9))
            best = i;
    }
    return best < 0 ? 0 : best;
}

size_t tc_select_class_bytes(int c)
{
    return c <= 0 ? 0 : (size_t)1 << (c - 1);
}

/* ---- the barrier plan ----------------------------------------------------- */

/* Costs of every algorithm, and the choice: the override, the tuning file's
 * entry (@p e, may be NULL; its tree arity replaces *arity), or the cheapest
 * of @p allowed. */
static tc_barrier_alg_t tc_select_barrier_one(const tc_logp_t *p, int shm, int P, int *arity,
                                              int override, const tc_tuning_entry_t *e,
                                              unsigned allowed, tc_choice_why_t *why,
                                              double cost[TC_BARRIER_ALG_LAST])
{
    if (override <= 0 && e && e->alg == TC_BARRIER_TREE && e->k >= 2)
        *arity = e->k;
    /* The segment's barriers move flags, not messages: their own formulas
     * on the shm row (cost.h); the message barriers keep paper 003's. */
    tc_model_barrier_t best = shm ? tc_model_shm_barrier_argmin(allowed, P, *arity, p, cost)
                                  : tc_model_barrier_argmin(allowed, P, *arity, p, cost);
    if (override > 0) {
        *why = TC_CHOICE_OVERRIDE;
        return (tc_barrier_alg_t)(override - 1);
    }
    if (e && e->alg >= 0 && e->alg < TC_BARRIER_ALG_LAST) {
        *why = TC_CHOICE_FILE;
        return (tc_barrier_alg_t)e->alg;
    }
    *why = TC_CHOICE_MODEL;
    return (tc_barrier_alg_t)best;
}

/* The model level of the top group: the level whose units hold all its
 * members. Its members are the leaders of the highest level below it, so
 * they meet one level further up (node leaders meet at the leaf switch). */
tc_model_level_t tc_select_top_level(const tc_hier_t *h, int singlenode)
{
    int below = -1;
    for (int l = 0; l < TC_LEVEL_LAST; l++)
        if (h && (h->active_mask & (1u << l)))
            below = l;
    if (below < 0)
        return singlenode ? TC_MODEL_LEVEL_NODE : TC_MODEL_LEVEL_SWITCH1;
    int top = below + 1;
    if (singlenode && top > TC_MODEL_LEVEL_NODE)
        top = TC_MODEL_LEVEL_NODE;
    if (top >= TC_MODEL_LEVEL_LAST)
        top = TC_MODEL_LEVEL_LAST - 1;
    return (tc_model_level_t)top;
}

void tc_select_barrier_plan(tc_barrier_plan_t *plan, const tc_logp_table_t *t,
                            const tc_select_inputs_t *in, const struct tc_hier *h,
                            const tc_select_scope_t *scope, const tc_barrier_settings_t *bs)
{
    const tc_tuning_t *tun = in ? &in->tuning : NULL;
    const int shm_P = scope->shm_P, singlenode = scope->singlenode;
    memset(plan, 0, sizeof *plan);
    /* Shared memory: the pairwise exchange runs as dissemination there. */
    const unsigned shm_allowed = ((1u << TC_BARRIER_ALG_LAST) - 1) & ~(1u << TC_BARRIER_PAIRWISE);
    const unsigned msg_allowed = (1u << TC_BARRIER_ALG_LAST) - 1;
    plan->shm_arity = bs->shm_arity;
    plan->msg_arity = bs->msg_arity;
    plan->shm_alg = plan->msg_alg = TC_BARRIER_DISSEMINATION;
    plan->shm_level = plan->msg_level = TC_MODEL_LEVEL_NODE;
    if (shm_P > 1) {
        const tc_hier_level_t *l = NULL;
        for (int i = 0; h && i < h->nlevels; i++)
            if (h->level[i].shm)
                l = &h->level[i];
        plan->shm_P = shm_P;
        plan->shm_level =
            l && (int)l->level < TC_LEVEL_LAST ? (tc_model_level_t)l->level : TC_MODEL_LEVEL_NODE;
        /* shm_level still names where the segment is; the costs come from
         * the shm row (flags through the cache), not that level's MPI
         * parameters (~8x too high for a flag). */
        plan->shm_alg = tc_select_barrier_one(
            &t->shm, 1, shm_P, &plan->shm_arity, bs->shm_override,
            tc_tuning_lookup(tun, TC_TUNING_OP_BARRIER, TC_TUNING_LEVEL_SHM, 0), shm_allowed,
            &plan->shm_why, plan->shm_cost);
        if (plan->shm_alg == TC_BARRIER_PAIRWISE)
            plan->shm_alg = TC_BARRIER_DISSEMINATION;
        if (scope->oversubscribed && plan->shm_why == TC_CHOICE_MODEL) {
            plan->shm_alg = TC_BARRIER_CENTRAL; /* see select.h */
            plan->shm_why = TC_CHOICE_OVERSUB;
        }
    }
    /* The message-based barrier runs among the top group's members: the
     * last group of a rank that leads all groups below it, at the highest
     * active level (a switch level when one switch holds every node). */
    int msg_P = 0;
    for (int i = 0; h && i < h->nlevels; i++)
        if ((int)h->level[i].level == tc_hier_top_level(h) && !h->level[i].shm)
            msg_P = h->level[i].size;
    if (msg_P > 1) {
        plan->msg_P = msg_P;
        plan->msg_level = tc_select_top_level(h, singlenode);
        plan->msg_alg = tc_select_barrier_one(
            &t->level[plan->msg_level], 0, msg_P, &plan->msg_arity, bs->msg_override,
            tc_tuning_lookup(tun, TC_TUNING_OP_BARRIER, TC_TUNING_LEVEL_TOP, 0), msg_allowed,
            &plan->msg_why, plan->msg_cost);
    }
}

/* ---- the hierarchy's decision tables -------------------------------------- */

void tc_select_hier_tables(struct tc_hier *h, const tc_logp_table_t *t,
                           const tc_select_inputs_t *in, int singlenode, int oversubscribed)
{
    if (!h)
        return;
    tc_hier_tables_rule(h); /* explicit settings, and the rule where in->model == 0 */
    h->model = in->model != 0;
    h->gamma = in->gamma;
    const tc_tuning_t *tun = &in->tuning;
    const int highest = tc_hier_top_level(h);
    for (int i = 0; i < h->nlevels; i++) {
        tc_hier_level_t *L = &h->level[i];
        const tc_model_level_t ml = L->level == TC_HIER_LEVEL_TOP
                                        ? tc_select_top_level(h, singlenode)
                                        : (tc_model_level_t)L->level;
        tc_logp_t pl;
        tc_select_level_params(&t->level[ml], oversubscribed, &pl);
        const tc_logp_t *p = &pl;
        tc_select_cand_t bc[TC_SELECT_MAX_CAND], rc[TC_SELECT_MAX_CAND];
        L->model_level = (int)ml;
        tc_select_candidates(TC_SELECT_BCAST, bc);
        tc_select_candidates(TC_SELECT_REDUCE, rc);
        for (int c = 0; c < TC_HIER_SIZE_CLASSES; c++) {
            const size_t m = tc_select_class_bytes(c);
            const tc_tuning_entry_t *e;
            if (L->bcast_auto) {
                if ((e = tc_tuning_lookup(tun, TC_TUNING_OP_BCAST, (int)L->level, m))) {
                    L->bcast_tab[c] = (uint8_t)e->alg;
                    L->bcast_k_tab[c] = (uint16_t)(e->k >= 2 ? e->k : 2);
                    L->bcast_why[c] = TC_HIER_WHY_FILE;
                } else if (h->model) {
                    int b = tc_select_argmin(TC_SELECT_BCAST, m, L->size, h->gamma, p,
                                             oversubscribed, NULL);
                    L->bcast_tab[c] = (uint8_t)bc[b].alg;
                    L->bcast_k_tab[c] = (uint16_t)bc[b].k;
                    L->bcast_why[c] = TC_HIER_WHY_MODEL;
                }
            }
            if (L->reduce_auto) {
                if ((e = tc_tuning_lookup(tun, TC_TUNING_OP_REDUCE, (int)L->level, m))) {
                    L->reduce_tab[c] = (uint8_t)e->alg;
                    L->reduce_nc_tab[c] = e->alg == TC_HIER_REDUCE_RSG
                                              ? (uint8_t)TC_HIER_REDUCE_BINOMIAL
                                              : (uint8_t)e->alg;
                    L->reduce_why[c] = L->reduce_nc_why[c] = TC_HIER_WHY_FILE;
                } else if (h->model) {
                    int r = tc_select_argmin(TC_SELECT_REDUCE, m, L->size, h->gamma, p,
                                             oversubscribed, NULL);
                    int n = tc_select_argmin(TC_SELECT_REDUCE_NC, m, L->size, h->gamma, p,
                                             oversubscribed, NULL);
                    L->reduce_tab[c] = (uint8_t)rc[r].alg;
                    L->reduce_nc_tab[c] = (uint8_t)rc[n].alg;
                    L->reduce_why[c] = L->reduce_nc_why[c] = TC_HIER_WHY_MODEL;
                }
            }
        }
        /* The Allreduce among the top group's members: only its members
         * run it, all with this group's size and level. */
        if ((int)L->level == highest && h->allreduce_top_auto) {
            for (int c = 0; c < TC_HIER_SIZE_CLASSES; c++) {
                const size_t m = tc_select_class_bytes(c);
                const tc_tuning_entry_t *e =
                    tc_tuning_lookup(tun, TC_TUNING_OP_ALLREDUCE, TC_TUNING_LEVEL_TOP, m);
                if (e) {
                    h->allreduce_tab[c] = (uint8_t)e->alg;
                    h->allreduce_why[c] = TC_HIER_WHY_FILE;
                } else if (h->model) {
                    tc_select_cand_t ac[TC_SELECT_MAX_CAND];
                    tc_select_candidates(TC_SELECT_ALLREDUCE, ac);
                    int a = tc_select_argmin(TC_SELECT_ALLREDUCE, m, L->size, h->gamma, p,
                                             oversubscribed, NULL);
                    h->allreduce_tab[c] = (uint8_t)ac[a].alg;
                    h->allreduce_why[c] = TC_HIER_WHY_MODEL;
                }
            }
        }
        /* The Allgather exchange among the top group's members, by the
         * whole result's size (no tuning-file entries for it yet). */
        if ((int)L->level == highest && h->allgather_top_auto && h->model) {
            tc_select_cand_t gc[TC_SELECT_MAX_CAND];
            tc_select_candidates(TC_SELECT_ALLGATHER, gc);
            for (int c = 0; c < TC_HIER_SIZE_CLASSES; c++) {
                int a = tc_select_argmin(TC_SELECT_ALLGATHER, tc_select_class_bytes(c), L->size,
                                         h->gamma, p, oversubscribed, NULL);
                h->allgather_tab[c] = (uint8_t)gc[a].alg;
                h->allgather_why[c] = TC_HIER_WHY_MODEL;
            }
        }
    }
}

int tc_select_ctx_plans(MPI_Comm priv, struct tc_hier *h, const tc_logp_table_t *t,
                        const tc_select_scope_t *scope, const tc_barrier_settings_t *bs,
                        tc_barrier_plan_t *plan)
{
    tc_select_inputs_t *in = malloc(sizeof *in);
    /* MIN of {memory ok, not oversubscribed}: the tables of a group that
     * spans nodes must be the same on all its members, so the tables treat
     * the communicator as oversubscribed when any node of it is; the
     * barrier plan keeps the local flag (it is the same within a segment). */
    int mine[2] = {in != NULL, !scope->oversubscribed}, all[2], rc;
    /* Agree first: a rank without memory must not leave the others in the
     * broadcast. */
    if ((rc = PMPI_Allreduce(mine, all, 2, MPI_INT, MPI_MIN, priv)) != MPI_SUCCESS)
        goto fn_exit;
    if (!all[0]) {
        rc = tc_err(TC_ERR_NOMEM);
        goto fn_exit;
    }
    if ((rc = tc_select_inputs_agree(priv, in)) != MPI_SUCCESS)
        goto fn_exit;
    tc_select_hier_tables(h, t, in, scope->singlenode, !all[1]);
    tc_select_barrier_plan(plan, t, in, h, scope, bs);
fn_exit:
    free(in);
    return rc;
}
