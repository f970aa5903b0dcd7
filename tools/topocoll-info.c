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
 * leaders, the shared-memory level and each level's algorithms), and the
 * plan of each gathering and scanning operation (path, protocol, race,
 * predicted time). With
 * `--dot FILE` it also writes the groups as a Graphviz digraph; `--dot` alone
 * prints only the graph. Everything it knows of the library comes through
 * the query interface (src/core/query.h): no internal struct is read here.
 */
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/query.h"
#include "topocoll.h"

/* Any failure of a query is fatal: the tool has nothing to print then. */
static void query_ok(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "topocoll-info: %s failed (MPI error class %d)\n", what, rc);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void print_tunables(void)
{
    const int n = tc_query_tunable_count();
    int width = 0;
    static tc_query_tunable_t t; /* 4 KiB of value text */
    printf("## Tunables\n");
    for (int id = 0; id < n; id++) {
        query_ok(tc_query_tunable(id, &t), "tc_query_tunable");
        int w = (int)strlen(t.name);
        width = w > width ? w : width;
    }
    for (int id = 0; id < n; id++) {
        query_ok(tc_query_tunable(id, &t), "tc_query_tunable");
        printf("%-*s = %-10s (%s%s%s%s)\n", width, t.name, t.value, t.source, t.raw ? ": \"" : "",
               t.raw ? t.raw : "", t.raw ? "\"" : "");
    }
}

/* ---- the hierarchy (paper 001): the library's own, from the context ---- */

/* A rank's groups as ints: nlevels, then per group level, size, shm,
 * members[size]. */
static int *hier_serialize(MPI_Comm comm, const tc_query_hier_t *h, int *len)
{
    tc_query_group_t g;
    int n = 1;
    for (int i = 0; i < h->ngroups; i++) {
        query_ok(tc_query_hier_group(comm, i, &g), "tc_query_hier_group");
        n += 3 + g.size;
    }
    int *buf = malloc((size_t)n * sizeof *buf);
    if (!buf) {
        fprintf(stderr, "topocoll-info: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int k = 0;
    buf[k++] = h->ngroups;
    for (int i = 0; i < h->ngroups; i++) {
        query_ok(tc_query_hier_group(comm, i, &g), "tc_query_hier_group");
        buf[k++] = g.level;
        buf[k++] = g.size;
        buf[k++] = g.shm;
        for (int m = 0; m < g.size; m++)
            buf[k++] = g.members[m];
    }
    *len = n;
    return buf;
}

/* The LogP/LogGP parameters this context uses (rank 0's, broadcast) and the
 * barrier algorithms chosen with them: every candidate's predicted time, the
 * choice, and why (override or model). Printed by rank 0, for its own groups
 * (its segment and the top group, which it leads). */
static void print_model(MPI_Comm comm)
{
    tc_query_model_t m;
    query_ok(tc_query_model(comm, &m), "tc_query_model");
    printf("\n## Model (paper 003): LogP/LogGP parameters, us (G: us per byte)\n");
    printf("(E: eager limit, bytes, 0 = none; rdv: added to a message above E; w: scheduler round "
           "per wait, added to L when oversubscribed; X: a byte sent and received at once costs "
           "X G)\n");
    printf("%-8s %8s %8s %8s %8s %12s %8s %6s %6s %5s  %s\n", "level", "L", "o_s", "o_r", "g", "G",
           "E", "rdv", "w", "X", "from");
    for (int l = 0; l < TC_MODEL_LEVEL_LAST; l++) {
        const tc_logp_t *p = &m.level[l];
        printf("%-8s %8.3f %8.3f %8.3f %8.3f %12.3g %8.0f %6.2f %6.2f %5.2f  %s\n",
               tc_model_level_name((tc_model_level_t)l), p->L, p->o_s, p->o_r, p->g, p->G, p->E,
               p->rdv, p->w, tc_logp_duplex(p), m.source[l]);
    }
    /* Not a level: flags through the segment, used by its barriers. */
    const tc_logp_t *s = &m.shm;
    printf("%-8s %8.3f %8.3f %8.3f %8.3f %12.3g  %s (flags in shared memory: the segment's "
           "barriers)\n",
           TC_LOGP_SHM_NAME, s->L, s->o_s, s->o_r, s->g, s->G, m.shm_source);
    tc_query_barrier_t rows[2];
    static const char *const what[2] = {"shared memory", "between groups"};
    query_ok(tc_query_barrier(comm, &rows[0], &rows[1]), "tc_query_barrier");
    printf("\n## Barrier (predicted us per algorithm; * = chosen)\n");
    for (int r = 0; r < 2; r++) {
        const tc_query_barrier_t *b = &rows[r];
        if (b->P < 2) {
            printf("%-15s none on rank 0\n", what[r]);
            continue;
        }
        printf("%-15s P=%d, %s parameters, tree arity %d:", what[r], b->P, b->params, b->arity);
        for (int a = 0; a < b->ncand; a++)
            printf(" %s%s %.3f", b->cand[a].chosen ? "*" : "", b->cand[a].name, b->cand[a].cost);
        printf("\n%-15s -> %s (%s)\n", "", b->choice, b->why);
    }
}

/* One table row: every candidate's predicted time for @p bytes, the
 * table's choice (marked *) and why. */
static void print_choice_row(MPI_Comm comm, const char *opname, int group, const char *level,
                             tc_query_op_t op, size_t bytes)
{
    tc_query_choice_t c;
    query_ok(tc_query_choice(comm, group, op, bytes, &c), "tc_query_choice");
    printf("%-9s %-8s %5s:", opname, level, c.bytes);
    for (int i = 0; i < c.ncand; i++)
        printf(" %s%s %.3f", c.cand[i].chosen ? "*" : "", c.cand[i].name, c.cand[i].cost);
    if (c.outside) /* an explicit choice outside the candidates, e.g. knomial:5 */
        printf(" | %s %.3f", c.choice, c.choice_cost);
    /* Oversubscription is said once, in the group's header line. */
    printf(" -> %s (%s)\n", c.choice, c.why);
}

/* Paper 002's one-sided broadcast over the whole communicator (what
 * TC_Rma_bcast would cost on a window over it): linear and both binomial
 * orders, with the parameters of the level that spans the communicator
 * (tc_query_rma_bcast says how the helper's polling delay is taken). */
static void print_rma(MPI_Comm comm)
{
    static const size_t sizes[] = {4, 64 * 1024, 1024 * 1024, 16 * 1024 * 1024, 64 * 1024 * 1024};
    tc_query_rma_t r;
    query_ok(tc_query_rma_bcast(comm, sizes[0], &r), "tc_query_rma_bcast");
    printf("\n## One-sided broadcast (paper 002), P=%d, %s parameters, o_poll %.1f us: predicted "
           "us\n",
           r.P, r.params, r.o_poll);
    printf("%12s %14s %14s %14s\n", "bytes", "linear", "binomial-down", "binomial-up");
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        query_ok(tc_query_rma_bcast(comm, sizes[i], &r), "tc_query_rma_bcast");
        printf("%12zu %14.2f %14.2f %14.2f\n", sizes[i], r.linear, r.binomial_down, r.binomial_up);
    }
}

/* The per-level choices of rank 0's groups for a few sizes: for Bcast and
 * Reduce (commutative op) at every group rank 0 is in that does not use the
 * segment, for Allreduce at the top group; the barrier's are above. */
static void print_choices(MPI_Comm comm, const tc_query_ctx_t *qc)
{
    static const size_t sizes[] = {4, 1024, 64 * 1024, 1024 * 1024, 16 * 1024 * 1024};
    tc_query_hier_t h;
    query_ok(tc_query_hier(comm, &h), "tc_query_hier");
    /* The tables were built with the communicator's agreed flag (any node
     * oversubscribed); rank 0's own flag is what this tool can see. */
    const int ovs = qc->oversubscribed;
    printf("\n## Per-level choices (rank 0's groups; predicted us per candidate, * = chosen; "
           "why: override, file, model, rule)\n");
    if (!h.present) {
        printf("no hierarchy on this communicator\n");
        return;
    }
    printf("decided by %s; gamma %.3g us/B (reduction)\n",
           h.model ? "override > TC_TUNING_FILE > LogGP model"
                   : "override > TC_TUNING_FILE > TC_HIER_LARGE rule (TC_HIER_MODEL=0)",
           h.gamma);
    int highest = -1;
    for (int lv = 0; lv <= TC_HIER_LEVEL_TOP; lv++)
        if (h.active_mask & (1u << lv))
            highest = lv;
    for (int i = 0; i < h.ngroups; i++) {
        tc_query_group_t g;
        query_ok(tc_query_hier_group(comm, i, &g), "tc_query_hier_group");
        const char *name = tc_hier_level_name((tc_level_t)g.level);
        if (g.shm) {
            printf("%-9s %-8s shared memory (segment): see the barrier above and TC_SHM_*\n", "all",
                   name);
            continue;
        }
        printf("group %s: P=%d, %s parameters%s\n", name, g.size, g.params,
               ovs ? " (oversubscribed: L + w; scatter_allgather and rsg, which need every "
                     "member at every step, are left out of the model's choice)"
                   : "");
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            print_choice_row(comm, "bcast", i, name, TC_QUERY_BCAST, sizes[s]);
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            print_choice_row(comm, "reduce", i, name, TC_QUERY_REDUCE, sizes[s]);
        if (g.level == highest)
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
                print_choice_row(comm, "allreduce", i, name, TC_QUERY_ALLREDUCE, sizes[s]);
    }
}

/* The plans of the gathering and scanning operations (issues 18, 19): for
 * each, the path on this communicator (the segment, or the MPI's own and
 * why), the segment's protocol in a few words, which calls race the MPI's
 * own (TC_PMPI_RACE_MIN), and the model's predicted time for a few sizes
 * where the model has a cost. */
static void print_plans(MPI_Comm comm)
{
    static const size_t sizes[] = {4, 1024, 64 * 1024, 1024 * 1024};
    static const char *const size_names[] = {"4", "1K", "64K", "1M"};
    tc_query_plan_t pl;
    /* The header names the path of the first operation that is not
     * hierarchical here; the hierarchical ones say their own path below. */
    int some_hier = 0, other = -1;
    for (int op = 0; op < TC_QUERY_PLAN_LAST; op++) {
        query_ok(tc_query_plan(comm, op, &pl), "tc_query_plan");
        some_hier |= pl.hier;
        if (!pl.hier && other < 0)
            other = op;
    }
    query_ok(tc_query_plan(comm, other < 0 ? 0 : other, &pl), "tc_query_plan");
    printf("\n## Other collectives: path, protocol, race, predicted us\n");
    if (other < 0)
        printf("path: every one of them is hierarchical here (below)\n");
    else
        printf("path (%s): %s\n", some_hier ? "all but the hierarchical ones" : "all of them",
               pl.path);
    printf("race threshold: TC_PMPI_RACE_MIN = %s (agreed%s)\n", pl.race_min_text,
           pl.race_min ? "" : ": the race is off");
    for (int op = 0; op < TC_QUERY_PLAN_LAST; op++) {
        query_ok(tc_query_plan(comm, op, &pl), "tc_query_plan");
        printf("%-20s %s\n", pl.name,
               pl.shm    ? "shared memory"
               : pl.hier ? "hierarchical"
                         : "the MPI's own");
        if (pl.hier)
            printf("%-20s   path: %s\n", "", pl.path);
        printf("%-20s   protocol%s: %s\n", "",
               pl.shm || pl.hier ? "" : " (in a segment, not used here)", pl.protocol);
        printf("%-20s   race: %s\n", "", pl.race);
        if (!pl.modeled) {
            printf("%-20s   model: no model cost yet\n", "");
            continue;
        }
        double us[sizeof sizes / sizeof sizes[0]];
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
            query_ok(tc_query_plan_cost(comm, op, sizes[i], &us[i]), "tc_query_plan_cost");
        if (us[0] < 0) { /* -1 at every size: the MPI's own runs */
            printf("%-20s   model: none here (the MPI's own runs: no model of it)\n", "");
            continue;
        }
        printf("%-20s   model (%s):", "", pl.bytes);
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
            if (us[i] < 0) /* the MPI's own at this size */
                printf(" %s: -", size_names[i]);
            else
                printf(" %s: %.3f", size_names[i], us[i]);
        printf("\n");
        if (pl.model_note[0])
            printf("%-20s   model: %s\n", "", pl.model_note);
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

/* Every rank's groups as the library built them, the locality vectors they
 * came from, the shared-memory level, and each level's algorithms.
 * Collective over @p comm. */
static void print_hierarchy(MPI_Comm comm, int rank, int size, int report, const char *dot)
{
    tc_query_hier_t hq, *h = &hq;
    query_ok(tc_query_hier(comm, &hq), "tc_query_hier");
    int len, *mine = hier_serialize(comm, &hq, &len);
    int *lens = NULL, *off = NULL, *all = NULL, total = 0;
    /* Per level, this rank's description of its group there. */
    enum { DESC = TC_QUERY_DESC_MAX };
    char desc[TC_HIER_MAX_GROUPS][DESC], *descs = NULL;
    tc_hier_loc_t *locs = NULL;

    memset(desc, 0, sizeof desc);
    for (int i = 0; i < h->ngroups; i++) {
        tc_query_group_t g;
        query_ok(tc_query_hier_group(comm, i, &g), "tc_query_hier_group");
        memcpy(desc[g.level], g.describe, DESC);
    }
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
        unsigned nesting, redundant;
        (void)tc_query_topo_nesting(&nesting, &redundant); /* none known: both 0 */
        printf("\n## Hierarchy (paper 001)\n");
        printf("hwloc levels that nest here:");
        for (int l = 0; l < TC_LEVEL_LAST; l++)
            if (nesting & (1u << l))
                printf(" %s%s", tc_hier_level_name((tc_level_t)l),
                       redundant & (1u << l) ? "(redundant)" : "");
        printf("\n");
        if (!h->present) {
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
            int have = 0;
            locs = malloc((size_t)size * sizeof *locs);
            if (!locs) {
                fprintf(stderr, "topocoll-info: out of memory\n");
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            query_ok(tc_query_hier_localities(comm, locs, &have), "tc_query_hier_localities");
            printf("locality (-: unknown):\n%-9s", "rank");
            for (int l = 0; l < TC_LEVEL_LAST; l++)
                printf(" %7s", tc_hier_level_name((tc_level_t)l));
            printf("\n");
            for (int r = 0; r < size; r++) {
                printf("rank %-4d", r);
                for (int l = 0; l < TC_LEVEL_LAST; l++)
                    print_loc_id(stdout, locs[r].id[l]);
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
            printf("allreduce: %s, top group %s; large messages in segments of %zu bytes\n",
                   h->allreduce, h->allreduce_top, h->segment);
        }
    }
    free(locs);
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
    tc_query_ctx_t qc;
    tc_query_shm_t shm;
    if (tc_query_ctx(comm, &qc) != MPI_SUCCESS) {
        fprintf(stderr, "topocoll-info: context creation failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    query_ok(tc_query_shm(comm, &shm), "tc_query_shm");

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
    if (shm.present) {
        me.numa_node = shm.numa_node;
        me.pages_local = shm.pages_local;
        me.pages_checked = shm.pages_checked;
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

        printf("\n## Context on %s\n", qc.comm_name);
        printf("node processes: %d of %d\n", qc.node_size, qc.size);
        printf("bcast path:     %s\n", qc.bcast_path);
        printf("agreed:         f=%zu S=%d q=%d tree=%s arity=%d\n", shm.f, shm.S, shm.q, shm.tree,
               shm.arity);
        if (shm.present) {
            printf("segment:        %zu bytes (%.1f MiB): header %zu + %d x (control %zu + queue "
                   "%d x %zu)\n",
                   shm.total, (double)shm.total / 1048576.0, shm.header_size, shm.p, shm.ctrl_size,
                   shm.seg_S, shm.seg_f);
            printf("                banks of %d buffers (%zu bytes)\n", shm.seg_S / shm.seg_q,
                   (size_t)(shm.seg_S / shm.seg_q) * shm.seg_f);
            printf("mechanism:      %s: %s (%s)\n", shm.memfd ? "memfd" : "named", shm.name,
                   shm.memfd ? shm.mechanism : "unlinked once every process had opened it");
            if (!shm.memfd)
                printf("                named because: %s\n", shm.mechanism);
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
    if (qc.bcast_shm) {
        char line[512];
        int parent, nch;
        int *ch = malloc((size_t)size * sizeof *ch);
        if (!ch) {
            fprintf(stderr, "topocoll-info: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        query_ok(tc_query_shm_tree(comm, root, &parent, ch, size, &nch), "tc_query_shm_tree");
        int n = snprintf(line, sizeof line, "rank %-4d parent %-4d children", rank, parent);
        for (int c = 0; c < nch && c < size && n < 480; c++)
            n += snprintf(line + n, sizeof line - (size_t)n, " %d", ch[c]);
        free(ch);
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
        print_model(comm);
        print_choices(comm, &qc);
        print_rma(comm);
    }
    print_hierarchy(comm, rank, size, report, dot);
    if (rank == 0 && report)
        print_plans(comm);
    if (comm != MPI_COMM_WORLD)
        MPI_Comm_free(&comm);
    MPI_Finalize();
    return 0;
}
