/* topocoll-info: what the library sees and would do on this machine.
 *
 *   mpirun -n N topocoll-info [--root R] [--comm world|reversed] [--dot [FILE]]
 *
 * Prints every tunable with its value and where it came from, the node layout
 * (ranks, hosts, cores, NUMA nodes, bindings), the context the library builds
 * on the communicator (path, f, S, q, tree, segment layout and size), the
 * NUMA placement check of every rank's queue, the notification tree for
 * root R, and the hierarchy the library built for the communicator (every
 * rank's locality vector, the active levels, each rank's groups and their
 * leaders, the shared-memory level and each level's algorithms). With
 * `--dot FILE` it also writes the groups as a Graphviz digraph; `--dot` alone
 * prints only the graph. It uses the internal query interface: tc_ctx_get()
 * and the read-only fields of tc_ctx_t / tc_shm_comm_t / tc_hier_t
 * (src/core/ctx.h, src/shm/segment.h, src/hier/hier.h, src/hier/hier_build.h).
 */
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "barrier/barrier.h"
#include "base/config.h"
#include "core/ctx.h"
#include "core/settings.h"
#include "hier/groups.h"
#include "hier/hier_build.h"
#include "hier/topo_hwloc.h"
#include "model/cost.h"
#include "rma/settings.h"
#include "topocoll.h"

static const char *const path_names[TC_PATH_LAST] = {
    "shm (shared-memory pipelined broadcast)",
    "hier",
    "trivial (one process)",
    "PMPI_Bcast: the communicator spans several nodes",
    "PMPI_Bcast: TC_SHM=0 on some rank",
    "PMPI_Bcast: the segment could not be created on some rank",
    "PMPI_Bcast: intercommunicator"};

static void print_tunables(void)
{
    static const char *const src[] = {"default", "env", "INVALID in env, default used"};
    int width = 0;
    printf("## Tunables\n");
    for (int i = 0; i < tc_settings_nmodules; i++)
        for (int id = 0; id < tc_settings_modules[i]->count; id++) {
            int n = (int)strlen(tc_config_desc(tc_settings_modules[i], id)->name);
            width = n > width ? n : width;
        }
    for (int i = 0; i < tc_settings_nmodules; i++)
        for (int id = 0; id < tc_settings_modules[i]->count; id++) {
            tc_cfg_module_t *m = tc_settings_modules[i];
            char val[TC_CFG_STRING_MAX + 1];
            tc_config_value_text(m, id, val, sizeof val);
            const char *raw = tc_config_raw(m, id);
            printf("%-*s = %-10s (%s%s%s%s)\n", width, tc_config_desc(m, id)->name, val,
                   src[tc_config_source(m, id)], raw ? ": \"" : "", raw ? raw : "",
                   raw ? "\"" : "");
        }
}

/* ---- the hierarchy (paper 001): the library's own, from the context ---- */

/* A rank's groups as ints: nlevels, then per group level, size, shm,
 * members[size]. */
static int *hier_serialize(const tc_hier_t *h, int *len)
{
    int n = 1;
    for (int i = 0; h && i < h->nlevels; i++)
        n += 3 + h->level[i].size;
    int *buf = malloc((size_t)n * sizeof *buf);
    if (!buf) {
        fprintf(stderr, "topocoll-info: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int k = 0;
    buf[k++] = h ? h->nlevels : 0;
    for (int i = 0; h && i < h->nlevels; i++) {
        const tc_hier_level_t *l = &h->level[i];
        buf[k++] = (int)l->level;
        buf[k++] = l->size;
        buf[k++] = l->shm;
        for (int m = 0; m < l->size; m++)
            buf[k++] = l->members[m];
    }
    *len = n;
    return buf;
}

/* The LogP/LogGP parameters this context uses (rank 0's, broadcast) and the
 * barrier algorithms chosen with them: every candidate's predicted time, the
 * choice, and why (override or model). Printed by rank 0, for its own groups
 * (its segment and the top group, which it leads). */
static void print_model(const tc_ctx_t *ctx)
{
    static const char *const source_names[] = {"default", "TC_LOGP_FILE", "TC_LOGP"};
    printf("\n## Model (paper 003): LogP/LogGP parameters, us (G: us per byte)\n");
    printf("(E: eager limit, bytes, 0 = none; rdv: added to a message above E; w: scheduler round "
           "per wait, added to L when oversubscribed)\n");
    printf("%-8s %8s %8s %8s %8s %12s %8s %6s %6s  %s\n", "level", "L", "o_s", "o_r", "g", "G", "E",
           "rdv", "w", "from");
    for (int l = 0; l < TC_MODEL_LEVEL_LAST; l++) {
        const tc_logp_t *p = &ctx->logp.level[l];
        printf("%-8s %8.3f %8.3f %8.3f %8.3f %12.3g %8.0f %6.2f %6.2f  %s\n",
               tc_model_level_name((tc_model_level_t)l), p->L, p->o_s, p->o_r, p->g, p->G, p->E,
               p->rdv, p->w, source_names[ctx->logp.source[l]]);
    }
    /* Not a level: flags through the segment, used by its barriers. */
    const tc_logp_t *s = &ctx->logp.shm;
    printf("%-8s %8.3f %8.3f %8.3f %8.3f %12.3g  %s (flags in shared memory: the segment's "
           "barriers)\n",
           TC_LOGP_SHM_NAME, s->L, s->o_s, s->o_r, s->g, s->G, source_names[ctx->logp.shm_source]);
    const tc_barrier_plan_t *b = &ctx->barrier;
    printf("\n## Barrier (predicted us per algorithm; * = chosen)\n");
    struct {
        const char *what;
        int P;
        tc_model_level_t level;
        const double *cost;
        tc_barrier_alg_t alg;
        int arity;
        tc_choice_why_t why;
    } rows[2] = {
        {"shared memory", b->shm_P, b->shm_level, b->shm_cost, b->shm_alg, b->shm_arity,
         b->shm_why},
        {"between groups", b->msg_P, b->msg_level, b->msg_cost, b->msg_alg, b->msg_arity,
         b->msg_why},
    };
    for (int r = 0; r < 2; r++) {
        if (rows[r].P < 2) {
            printf("%-15s none on rank 0\n", rows[r].what);
            continue;
        }
        /* The segment's barriers are costed on the shm row (select.c). */
        printf("%-15s P=%d, %s parameters, tree arity %d:", rows[r].what, rows[r].P,
               r == 0 ? TC_LOGP_SHM_NAME : tc_model_level_name(rows[r].level), rows[r].arity);
        for (int a = 0; a < TC_BARRIER_ALG_LAST; a++) {
            if (r == 0 && a == TC_BARRIER_PAIRWISE)
                continue; /* runs as dissemination in shared memory */
            printf(" %s%s %.3f", a == (int)rows[r].alg ? "*" : "", tc_barrier_alg_name(a),
                   rows[r].cost[a]);
        }
        printf("\n%-15s -> %s (%s)\n", "", tc_barrier_alg_name(rows[r].alg),
               tc_select_why_name(rows[r].why));
    }
}

/* One table row: every candidate's predicted time for @p m bytes, the
 * table's choice (marked *) and why. */
static void print_choice_row(const char *opname, const tc_hier_level_t *l, tc_select_op_t op,
                             size_t m, int alg, int k, tc_hier_why_t why, const tc_logp_t *p,
                             double gamma)
{
    tc_select_cand_t c[TC_SELECT_MAX_CAND];
    char sz[24], name[48];
    const int n = tc_select_candidates(op, c);
    int found = 0;
    tc_hier_size_format(m, sz, sizeof sz);
    printf("%-9s %-8s %5s:", opname, tc_hier_level_name(l->level), sz);
    for (int i = 0; i < n; i++) {
        const int chosen = c[i].alg == alg &&
                           (op != TC_SELECT_BCAST || c[i].alg == TC_HIER_BCAST_FLAT || c[i].k == k);
        found |= chosen;
        if (op == TC_SELECT_BCAST && c[i].alg == TC_HIER_BCAST_KNOMIAL)
            snprintf(name, sizeof name, "knomial:%d", c[i].k);
        else if (op == TC_SELECT_BCAST)
            snprintf(name, sizeof name, "%s",
                     tc_hier_bcast_alg_name((tc_hier_bcast_alg_t)c[i].alg));
        else if (op == TC_SELECT_ALLREDUCE)
            snprintf(name, sizeof name, "%s",
                     tc_hier_allreduce_alg_name((tc_hier_allreduce_alg_t)c[i].alg));
        else
            snprintf(name, sizeof name, "%s",
                     tc_hier_reduce_alg_name((tc_hier_reduce_alg_t)c[i].alg));
        printf(" %s%s %.3f", chosen ? "*" : "", name,
               tc_select_cost(op, c[i], m, l->size, gamma, p));
    }
    if (op == TC_SELECT_BCAST && alg == TC_HIER_BCAST_KNOMIAL)
        snprintf(name, sizeof name, "knomial:%d", k);
    else if (op == TC_SELECT_BCAST)
        snprintf(name, sizeof name, "%s", tc_hier_bcast_alg_name((tc_hier_bcast_alg_t)alg));
    else if (op == TC_SELECT_ALLREDUCE)
        snprintf(name, sizeof name, "%s", tc_hier_allreduce_alg_name((tc_hier_allreduce_alg_t)alg));
    else
        snprintf(name, sizeof name, "%s", tc_hier_reduce_alg_name((tc_hier_reduce_alg_t)alg));
    if (!found) /* an explicit choice outside the candidates, e.g. knomial:5 */
        printf(" | %s %.3f", name,
               tc_select_cost(op, (tc_select_cand_t){alg, k}, m, l->size, gamma, p));
    /* Oversubscription is said once, in the group's header line. */
    printf(" -> %s (%s)\n", name, tc_hier_why_name(why));
}

/* Paper 002's one-sided broadcast over the whole communicator (what
 * TC_Rma_bcast would cost on a window over it): linear and both binomial
 * orders, with the parameters of the level that spans the communicator. The
 * helper's polling delay o_poll is taken as half its first idle sleep
 * (TC_RMA_POLL_MIN_US / 2): a helper that has backed off to its longest sleep
 * answers up to TC_RMA_POLL_MAX_US later. */
static void print_rma(const tc_ctx_t *ctx)
{
    static const size_t sizes[] = {4, 64 * 1024, 1024 * 1024, 16 * 1024 * 1024, 64 * 1024 * 1024};
    tc_model_level_t lv = ctx->barrier.msg_P > 1 ? ctx->barrier.msg_level : TC_MODEL_LEVEL_NODE;
    const tc_logp_t *p = &ctx->logp.level[lv];
    double o_poll = (double)tc_config_int(&tc_rma_config, TC_RMA_CFG_POLL_MIN_US) / 2.0;
    printf("\n## One-sided broadcast (paper 002), P=%d, %s parameters, o_poll %.1f us: predicted "
           "us\n",
           ctx->size, tc_model_level_name(lv), o_poll);
    printf("%12s %14s %14s %14s\n", "bytes", "linear", "binomial-down", "binomial-up");
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        printf("%12zu %14.2f %14.2f %14.2f\n", sizes[i],
               tc_model_rma_bcast_linear_cost(sizes[i], ctx->size, p),
               tc_model_rma_bcast_binomial_cost(sizes[i], ctx->size, TC_MODEL_RMA_ORDER_DOWN,
                                                o_poll, p),
               tc_model_rma_bcast_binomial_cost(sizes[i], ctx->size, TC_MODEL_RMA_ORDER_UP, o_poll,
                                                p));
}

/* The per-level choices of rank 0's groups for a few sizes: for Bcast and
 * Reduce (commutative op) at every group rank 0 is in that does not use the
 * segment, for Allreduce at the top group; the barrier's are above. */
static void print_choices(const tc_ctx_t *ctx)
{
    static const size_t sizes[] = {4, 1024, 64 * 1024, 1024 * 1024, 16 * 1024 * 1024};
    const tc_hier_t *h = ctx->hier;
    /* The tables were built with the communicator's agreed flag (any node
     * oversubscribed); rank 0's own flag is what this tool can see. */
    const int ovs = ctx->oversubscribed;
    printf("\n## Per-level choices (rank 0's groups; predicted us per candidate, * = chosen; "
           "why: override, file, model, rule)\n");
    if (!h) {
        printf("no hierarchy on this communicator\n");
        return;
    }
    printf("decided by %s; gamma %.3g us/B (reduction)\n",
           h->model ? "override > TC_TUNING_FILE > LogGP model"
                    : "override > TC_TUNING_FILE > TC_HIER_LARGE rule (TC_HIER_MODEL=0)",
           h->gamma);
    int highest = -1;
    for (int lv = 0; lv <= TC_HIER_LEVEL_TOP; lv++)
        if (h->active_mask & (1u << lv))
            highest = lv;
    for (int i = 0; i < h->nlevels; i++) {
        const tc_hier_level_t *l = &h->level[i];
        if (l->shm) {
            printf("%-9s %-8s shared memory (segment): see the barrier above and TC_SHM_*\n", "all",
                   tc_hier_level_name(l->level));
            continue;
        }
        const int ml = l->model_level >= 0 ? l->model_level : TC_MODEL_LEVEL_NODE;
        /* The tables' parameters (select.h): L + w when oversubscribed. */
        tc_logp_t pl;
        tc_select_level_params(&ctx->logp.level[ml], ovs, &pl);
        const tc_logp_t *p = &pl;
        printf("group %s: P=%d, %s parameters%s\n", tc_hier_level_name(l->level), l->size,
               tc_model_level_name((tc_model_level_t)ml),
               ovs ? " (oversubscribed: L + w; scatter_allgather and rsg, which need every "
                     "member at every step, are left out of the model's choice)"
                   : "");
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            const int c = tc_hier_size_class(sizes[s]);
            print_choice_row("bcast", l, TC_SELECT_BCAST, sizes[s], l->bcast_tab[c],
                             l->bcast_k_tab[c], (tc_hier_why_t)l->bcast_why[c], p, h->gamma);
        }
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            const int c = tc_hier_size_class(sizes[s]);
            print_choice_row("reduce", l, TC_SELECT_REDUCE, sizes[s], l->reduce_tab[c], 0,
                             (tc_hier_why_t)l->reduce_why[c], p, h->gamma);
        }
        if ((int)l->level == highest)
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
                const int c = tc_hier_size_class(sizes[s]);
                print_choice_row("allreduce", l, TC_SELECT_ALLREDUCE, sizes[s], h->allreduce_tab[c],
                                 0, (tc_hier_why_t)h->allreduce_why[c], p, h->gamma);
            }
    }
}

static void print_loc_id(FILE *f, int64_t id)
{
    if (id == TC_LOC_UNKNOWN)
        fprintf(f, " %7s", "-");
    else
        fprintf(f, " %7lld", (long long)id);
}

/* Graphviz: one cluster per level, a node per (level, rank) taking part in
 * it, edges from each group's leader to its members; dashed edges join a
 * rank's nodes on consecutive levels (the leader carries the data on). */
static void write_dot(FILE *f, const int *all, const int *off, int size)
{
    fprintf(f, "digraph topocoll {\n  rankdir=TB;\n  node [shape=circle];\n");
    for (int lev = TC_HIER_LEVEL_TOP; lev >= 0; lev--) {
        int any = 0;
        for (int r = 0; r < size; r++) {
            const int *g = all + off[r];
            int k = 1;
            for (int i = 0; i < g[0]; i++) {
                int level = g[k], gsize = g[k + 1], shm = g[k + 2];
                const int *mem = g + k + 3;
                if (level == lev && mem[0] == r) { /* once per group: at its leader */
                    const char *name = tc_hier_level_name((tc_level_t)lev);
                    if (!any)
                        fprintf(f, "  subgraph cluster_%s {\n    label=\"%s\";\n", name, name);
                    any = 1;
                    for (int m = 0; m < gsize; m++)
                        fprintf(f, "    \"%s_%d\" [label=\"%d\"%s];\n", name, mem[m], mem[m],
                                shm ? ", style=filled, fillcolor=lightblue" : "");
                    for (int m = 1; m < gsize; m++)
                        fprintf(f, "    \"%s_%d\" -> \"%s_%d\";\n", name, mem[0], name, mem[m]);
                }
                k += 3 + gsize;
            }
        }
        if (any)
            fprintf(f, "  }\n");
    }
    /* A rank on consecutive levels of its own groups. */
    for (int r = 0; r < size; r++) {
        const int *g = all + off[r];
        int k = 1, prev = -1;
        for (int i = 0; i < g[0]; i++) {
            int level = g[k];
            if (prev >= 0)
                fprintf(f, "  \"%s_%d\" -> \"%s_%d\" [style=dashed, arrowhead=none];\n",
                        tc_hier_level_name((tc_level_t)level), r,
                        tc_hier_level_name((tc_level_t)prev), r);
            prev = level;
            k += 3 + g[k + 1];
        }
    }
    fprintf(f, "}\n");
}

/* Every rank's groups as the library built them (ctx->hier), the locality
 * vectors they came from, the shared-memory level, and each level's
 * algorithms. Collective over @p comm. */
static void print_hierarchy(const tc_ctx_t *ctx, MPI_Comm comm, int rank, int size, int report,
                            const char *dot)
{
    const tc_hier_t *h = ctx->hier;
    int len, *mine = hier_serialize(h, &len);
    int *lens = NULL, *off = NULL, *all = NULL, total = 0;
    /* Per level, this rank's description of its group there. */
    enum { DESC = 480 };
    char desc[TC_HIER_MAX_GROUPS][DESC], *descs = NULL;

    memset(desc, 0, sizeof desc);
    for (int i = 0; h && i < h->nlevels; i++)
        tc_hier_level_describe(h, &h->level[i], desc[h->level[i].level], DESC);
    if (rank == 0) {
        lens = malloc((size_t)size * sizeof *lens);
        off = malloc((size_t)size * sizeof *off);
        descs = malloc((size_t)size * sizeof desc);
        if (!lens || !off || !descs) {
            fprintf(stderr, "topocoll-info: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, comm);
    if (rank == 0) {
        for (int r = 0; r < size; r++) {
            off[r] = total;
            total += lens[r];
        }
        all = malloc((size_t)total * sizeof *all);
        if (!all) {
            fprintf(stderr, "topocoll-info: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    MPI_Gatherv(mine, len, MPI_INT, all, lens, off, MPI_INT, 0, comm);
    MPI_Gather(desc, (int)sizeof desc, MPI_CHAR, descs, (int)sizeof desc, MPI_CHAR, 0, comm);
    free(mine);
    if (rank != 0)
        return;

    if (dot) {
        FILE *f = strcmp(dot, "-") == 0 ? stdout : fopen(dot, "w");
        if (!f) {
            perror(dot);
        } else {
            write_dot(f, all, off, size);
            if (f != stdout)
                fclose(f);
        }
    }
    if (report) {
        unsigned nesting = 0, redundant = 0;
        hwloc_topology_t topo;
        if (tc_hier_topo_get(&topo) == 0)
            nesting = tc_hier_topo_nesting_mask(topo, &redundant);
        printf("\n## Hierarchy (paper 001)\n");
        printf("hwloc levels that nest here:");
        for (int l = 0; l < TC_LEVEL_LAST; l++)
            if (nesting & (1u << l))
                printf(" %s%s", tc_hier_level_name((tc_level_t)l),
                       redundant & (1u << l) ? "(redundant)" : "");
        printf("\n");
        if (!h) {
            printf("no hierarchy on this communicator (%s)\n",
                   size == 1 ? "one process"
                             : "TC_HIER=0 across nodes, or it could not be built: TC_VERBOSE=1 "
                               "says why");
        } else {
            printf("levels used:");
            for (int l = 0; l < TC_LEVEL_LAST; l++)
                if (h->enabled_mask & (1u << l))
                    printf(" %s", tc_hier_level_name((tc_level_t)l));
            printf("\nactive levels:");
            for (int l = 0; l <= TC_HIER_LEVEL_TOP; l++)
                if (h->active_mask & (1u << l))
                    printf(" %s", tc_hier_level_name((tc_level_t)l));
            printf("\nunknown on some rank (skipped):");
            for (int l = 0; l < TC_LEVEL_LAST; l++)
                if (h->unknown_mask & (1u << l))
                    printf(" %s", tc_hier_level_name((tc_level_t)l));
            printf("\nshared-memory level: %s%s\n",
                   h->shm_level >= 0 ? tc_hier_level_name((tc_level_t)h->shm_level) : "none",
                   h->single_shm ? " (one segment spans the communicator)" : "");
            printf("locality (-: unknown):\n%-9s", "rank");
            for (int l = 0; l < TC_LEVEL_LAST; l++)
                printf(" %7s", tc_hier_level_name((tc_level_t)l));
            printf("\n");
            for (int r = 0; r < size; r++) {
                printf("rank %-4d", r);
                for (int l = 0; l < TC_LEVEL_LAST; l++)
                    print_loc_id(stdout, h->locs[r].id[l]);
                printf("\n");
            }
            printf("groups (level(leader,members...), [shm] = served by a segment), bottom-up:\n");
            for (int r = 0; r < size; r++) {
                const int *g = all + off[r];
                int k = 1;
                printf("rank %-4d", r);
                for (int i = 0; i < g[0]; i++) {
                    int level = g[k], gsize = g[k + 1], shm = g[k + 2];
                    printf(" %s(", tc_hier_level_name((tc_level_t)level));
                    for (int m = 0; m < gsize; m++)
                        printf(m ? ",%d" : "%d", g[k + 3 + m]);
                    printf(")%s", shm ? " [shm]" : "");
                    k += 3 + gsize;
                }
                printf("\n");
            }
            printf("leaders per level:\n");
            for (int l = 0; l <= TC_HIER_LEVEL_TOP; l++) {
                if (!(h->active_mask & (1u << l)))
                    continue;
                printf("  %-8s", tc_hier_level_name((tc_level_t)l));
                for (int r = 0; r < size; r++) {
                    const int *g = all + off[r];
                    for (int i = 0, k = 1; i < g[0]; k += 3 + g[k + 1], i++)
                        if (g[k] == l && g[k + 3] == r)
                            printf(" %d", r);
                }
                printf("\n");
            }
            printf("algorithms per level:\n");
            for (int l = 0; l <= TC_HIER_LEVEL_TOP; l++) {
                const char *d = NULL;
                for (int r = 0; r < size && !d; r++) {
                    const char *x = descs + (size_t)r * sizeof desc + (size_t)l * DESC;
                    if (x[0])
                        d = x;
                }
                if (d)
                    printf("  %-8s %s\n", tc_hier_level_name((tc_level_t)l), d);
            }
            char top[240];
            tc_hier_top_allreduce_describe(h, top, sizeof top);
            printf("allreduce: %s, top group %s; large messages in segments of %zu bytes\n",
                   h->allreduce_scheme == TC_HIER_ALLREDUCE_RB ? "rb (ReduceBcast)"
                                                               : "rab (ReduceAllreduceBcast)",
                   top, h->segment);
        }
    }
    free(all);
    free(off);
    free(lens);
    free(descs);
}

typedef struct {
    char host[64];
    char binding[64];
    int numa_node;
    int cores_on_host, numa_on_host;
    long pages_local, pages_checked;
} rank_info_t;

int main(int argc, char **argv)
{
    int root = 0, reversed = 0, report = 1;
    const char *dot = NULL;
    MPI_Init(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--root") && i + 1 < argc)
            root = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--comm") && i + 1 < argc)
            reversed = !strcmp(argv[++i], "reversed");
        else if (!strcmp(argv[i], "--dot")) {
            /* --dot FILE: the report and the graph in FILE; --dot (or --dot -):
             * only the graph, on stdout, ready for `dot -Tpng`. */
            if (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0)
                dot = argv[++i];
            else
                dot = "-";
            report = strcmp(dot, "-") != 0;
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            /* Every option here must appear in docs/man/topocoll-info.1 (test man_pages). */
            printf("usage: mpirun -n N topocoll-info [--root R] [--comm world|reversed] "
                   "[--dot [FILE]] [-h]\n"
                   "  Prints what libtopocoll sees and would do on a communicator.\n"
                   "  --root R          root of the notification tree shown (default 0)\n"
                   "  --comm world|reversed\n"
                   "                    MPI_COMM_WORLD, or it with the ranks reversed\n"
                   "  --dot [FILE]      also write the hierarchy as a Graphviz graph to "
                   "FILE;\n"
                   "                    without FILE (or -) print only the graph\n"
                   "  -h, --help        this help\n");
            MPI_Finalize();
            return 0;
        } else {
            fprintf(stderr, "usage: topocoll-info [--root R] [--comm world|reversed] "
                            "[--dot [FILE]] [-h]\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    int rank, size;
    MPI_Comm comm = MPI_COMM_WORLD;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *want = getenv("TC_TEST_NP"); /* the test suite's launcher check */
    if (want && atoi(want) != size) {
        fprintf(stderr, "topocoll-info: %d processes, TC_TEST_NP=%s (wrong launcher?)\n", size,
                want);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (reversed)
        MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &comm);
    MPI_Comm_rank(comm, &rank);
    if (root < 0 || root >= size) {
        if (rank == 0)
            fprintf(stderr, "topocoll-info: --root %d out of range 0..%d\n", root, size - 1);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    tc_ctx_t *ctx;
    if (tc_ctx_get(comm, &ctx) != MPI_SUCCESS) {
        fprintf(stderr, "topocoll-info: context creation failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    rank_info_t me = {.numa_node = -1, .pages_checked = -1};
    gethostname(me.host, sizeof me.host - 1);
    hwloc_topology_t topo;
    hwloc_topology_init(&topo);
    hwloc_topology_load(topo);
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) == 0) {
        char *s = NULL;
        hwloc_bitmap_list_asprintf(&s, set);
        int all = hwloc_bitmap_isequal(set, hwloc_topology_get_topology_cpuset(topo));
        snprintf(me.binding, sizeof me.binding, "%s%s", s ? s : "?", all ? " (unbound)" : "");
        free(s);
    }
    hwloc_bitmap_free(set);
    me.cores_on_host = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    me.numa_on_host = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    hwloc_topology_destroy(topo);
    if (ctx->shm) {
        me.numa_node = ctx->shm->numa_node;
        me.pages_local = ctx->shm->pages_local;
        me.pages_checked = ctx->shm->pages_checked;
    }
    rank_info_t *all = rank == 0 ? calloc((size_t)size, sizeof *all) : NULL;
    MPI_Gather(&me, sizeof me, MPI_BYTE, all, sizeof me, MPI_BYTE, 0, comm);

    if (rank == 0 && report) {
        int ma, mi, pa;
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        TC_Get_version(&ma, &mi, &pa);
        MPI_Get_library_version(lib, &len);
        lib[strcspn(lib, "\n")] = '\0';
        printf("# topocoll-info: libtopocoll %d.%d.%d on %s, %d processes%s\n\n", ma, mi, pa, lib,
               size, reversed ? " (reversed communicator)" : "");
        print_tunables();

        printf("\n## Processes (rank in the communicator)\n");
        printf("%-5s %-20s %-18s %-5s %s\n", "rank", "host", "binding", "numa", "host: cores numa");
        for (int i = 0; i < size; i++)
            printf("%-5d %-20s %-18s %-5d %d %d\n", i, all[i].host, all[i].binding,
                   all[i].numa_node, all[i].cores_on_host, all[i].numa_on_host);

        printf("\n## Context on %s\n", ctx->comm_name);
        printf("node processes: %d of %d\n", ctx->node_size, ctx->size);
        printf("bcast path:     %s\n", path_names[ctx->bcast_path]);
        const tc_shm_params_t *sp = &ctx->shm_params;
        printf("agreed:         f=%zu S=%d q=%d tree=%s arity=%d\n", sp->f, sp->S, sp->q,
               tc_config_enum_name(&tc_shm_config, TC_SHM_CFG_TREE, sp->tree), sp->arity);
        if (ctx->shm) {
            const tc_shm_layout_t *l = &ctx->shm->layout;
            printf("segment:        %zu bytes (%.1f MiB): header %zu + %d x (control %zu + queue "
                   "%d x %zu)\n",
                   l->total, (double)l->total / 1048576.0, l->header_size, l->p, l->ctrl_size, l->S,
                   l->f);
            printf("                banks of %d buffers (%zu bytes)\n", l->S / l->q,
                   (size_t)(l->S / l->q) * l->f);
            printf("mechanism:      %s: %s (%s)\n", ctx->shm->memfd ? "memfd" : "named",
                   ctx->shm->name,
                   ctx->shm->memfd ? ctx->shm->mechanism
                                   : "unlinked once every process had opened it");
            if (!ctx->shm->memfd)
                printf("                named because: %s\n", ctx->shm->mechanism);
            printf("\n## NUMA placement of each rank's control block and queue (move_pages)\n");
            for (int i = 0; i < size; i++) {
                if (all[i].pages_checked < 0)
                    printf("rank %-4d not checked (no NUMA support or node unknown)\n", i);
                else
                    printf("rank %-4d %ld of %ld pages on its node %d: %s\n", i, all[i].pages_local,
                           all[i].pages_checked, all[i].numa_node,
                           all[i].pages_local == all[i].pages_checked ? "ok" : "MISPLACED");
            }
        }
    }
    free(all);
    /* The tree for the given root, one line per rank, in rank order; only
     * when one segment spans the communicator (agreed: the same everywhere),
     * since its ranks are then the communicator's. */
    if (ctx->bcast_path == TC_PATH_SHM && ctx->shm) {
        char line[512];
        int n = snprintf(line, sizeof line, "rank %-4d parent %-4d children", rank,
                         tc_shm_tree_parent(&ctx->shm->tree, root));
        const int *ch = tc_shm_tree_children(&ctx->shm->tree, root);
        for (int c = 0; c < tc_shm_tree_nchildren(&ctx->shm->tree, root) && n < 480; c++)
            n += snprintf(line + n, sizeof line - (size_t)n, " %d", ch[c]);
        char *lines = rank == 0 ? malloc((size_t)size * sizeof line) : NULL;
        MPI_Gather(line, sizeof line, MPI_CHAR, lines, sizeof line, MPI_CHAR, 0, comm);
        if (rank == 0 && report) {
            printf("\n## Notification tree for root %d\n", root);
            for (int i = 0; i < size; i++)
                printf("%s\n", lines + (size_t)i * sizeof line);
            free(lines);
        }
    }
    if (rank == 0 && report && size > 1) {
        print_model(ctx);
        print_choices(ctx);
        print_rma(ctx);
    }
    print_hierarchy(ctx, comm, rank, size, report, dot);
    if (comm != MPI_COMM_WORLD)
        MPI_Comm_free(&comm);
    MPI_Finalize();
    return 0;
}
