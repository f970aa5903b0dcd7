/* The query interface of the tools (src/core/query.h): what every function
 * promises, on MPI_COMM_WORLD as launched (and on posed machines through
 * TC_LOCALITY_FILE). The tools' own tests check what they print; this one
 * checks the contract they rely on: sizes and ranks, a consistent segment
 * and tree, one choice per barrier and per table entry (or an explicit one
 * outside the candidates), groups that contain their rank, the same
 * localities on every rank, a plan per gathering or scanning operation,
 * MPI_ERR_ARG for an index out of range. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/query.h"
#include "tc_test_common.h"

static void check_tunables(void)
{
    static tc_query_tunable_t t;
    const int n = tc_query_tunable_count();
    CHECK(n > 0, "%d tunables", n);
    for (int i = 0; i < n; i++) {
        CHECK(tc_query_tunable(i, &t) == MPI_SUCCESS, "tunable %d", i);
        CHECK(t.name && strncmp(t.name, "TC_", 3) == 0, "tunable %d named %s", i,
              t.name ? t.name : "(null)");
        CHECK(t.value[0] != '\0' && t.source, "tunable %s: value or source missing", t.name);
    }
    CHECK(tc_query_tunable(-1, &t) == MPI_ERR_ARG);
    CHECK(tc_query_tunable(n, &t) == MPI_ERR_ARG);
}

/* Exactly one candidate chosen and named as the choice, or none when the
 * choice lies outside them; every cost finite and >= 0. */
static void check_cands(const char *what, const tc_query_cand_t *c, int n, int outside,
                        const char *choice)
{
    int chosen = 0;
    CHECK(n > 0 && n <= TC_QUERY_MAX_CAND, "%s: %d candidates", what, n);
    for (int i = 0; i < n; i++) {
        CHECK(isfinite(c[i].cost) && c[i].cost >= 0, "%s: %s costs %g", what, c[i].name, c[i].cost);
        if (c[i].chosen) {
            chosen++;
            CHECK(strcmp(c[i].name, choice) == 0, "%s: %s marked, choice %s", what, c[i].name,
                  choice);
        }
    }
    CHECK(chosen == (outside ? 0 : 1), "%s: %d marked (outside %d)", what, chosen, outside);
}

static void check_ctx_shm(MPI_Comm comm, int rank, int size)
{
    tc_query_ctx_t c;
    tc_query_shm_t s;
    CHECK(tc_query_ctx(comm, &c) == MPI_SUCCESS);
    CHECK(c.rank == rank && c.size == size, "rank %d size %d", c.rank, c.size);
    CHECK(c.node_size >= 1 && c.node_size <= size, "node_size %d", c.node_size);
    CHECK(c.bcast_path && strcmp(c.bcast_path, "?") != 0);
    CHECK(strstr(c.comm_name, "size") != NULL, "comm name %s", c.comm_name);
    CHECK(tc_query_shm(comm, &s) == MPI_SUCCESS);
    CHECK(s.f > 0 && s.S >= s.q && s.q >= 1 && s.tree && s.arity >= 1, "f %zu S %d q %d", s.f, s.S,
          s.q);
    if (s.present) {
        CHECK(s.p >= 1 && s.p <= c.node_size, "segment of %d", s.p);
        CHECK(s.seg_q >= 1 && s.seg_S % s.seg_q == 0, "S %d q %d", s.seg_S, s.seg_q);
        CHECK(s.total >= s.header_size + (size_t)s.p * s.ctrl_size, "total %zu", s.total);
        CHECK(s.name[0] != '\0' && s.mechanism[0] != '\0');
    } else {
        CHECK(s.numa_node == -1 && s.pages_checked == -1);
    }
    int parent, nch, *ch = malloc((size_t)size * sizeof *ch);
    if (c.bcast_shm) {
        CHECK(s.present && s.p == size, "bcast_shm without a segment over the communicator");
        for (int root = 0; root < size; root++) {
            CHECK(tc_query_shm_tree(comm, root, &parent, ch, size, &nch) == MPI_SUCCESS);
            CHECK((parent == -1) == (rank == root), "root %d: parent %d", root, parent);
            int total = 0;
            MPI_Allreduce(&nch, &total, 1, MPI_INT, MPI_SUM, comm);
            CHECK(total == size - 1, "root %d: %d children in all", root, total);
        }
        CHECK(tc_query_shm_tree(comm, size, &parent, ch, size, &nch) == MPI_ERR_ARG);
    } else if (!s.present) {
        CHECK(tc_query_shm_tree(comm, 0, &parent, ch, size, &nch) == MPI_ERR_ARG);
    }
    free(ch);
}

static void check_model(MPI_Comm comm, int size)
{
    tc_query_model_t m;
    tc_query_barrier_t b[2];
    tc_query_rma_t r;
    CHECK(tc_query_model(comm, &m) == MPI_SUCCESS);
    for (int l = 0; l < TC_MODEL_LEVEL_LAST; l++)
        CHECK(m.source[l] && m.level[l].L >= 0, "level %d", l);
    CHECK(m.shm_source != NULL);
    CHECK(tc_query_barrier(comm, &b[0], &b[1]) == MPI_SUCCESS);
    for (int i = 0; i < 2; i++)
        if (b[i].P >= 2) {
            CHECK(b[i].params && b[i].why && b[i].choice);
            check_cands(i ? "barrier msg" : "barrier shm", b[i].cand, b[i].ncand, 0, b[i].choice);
        }
    CHECK(tc_query_rma_bcast(comm, 65536, &r) == MPI_SUCCESS);
    CHECK(r.P == size && r.params && r.o_poll >= 0);
    CHECK(isfinite(r.linear) && isfinite(r.binomial_down) && isfinite(r.binomial_up));
}

static void check_hier(MPI_Comm comm, int rank, int size)
{
    tc_query_hier_t h;
    tc_query_group_t g;
    CHECK(tc_query_hier(comm, &h) == MPI_SUCCESS);
    tc_hier_loc_t *locs = calloc((size_t)size, sizeof *locs);
    int have = -1;
    CHECK(tc_query_hier_localities(comm, locs, &have) == MPI_SUCCESS);
    CHECK(have == h.present, "localities %d, hierarchy %d", have, h.present);
    if (have) {
        /* The same vectors everywhere: compare each rank's with rank 0's. */
        tc_hier_loc_t *root = calloc((size_t)size, sizeof *root);
        memcpy(root, locs, (size_t)size * sizeof *locs);
        MPI_Bcast(root, (int)((size_t)size * sizeof *root), MPI_BYTE, 0, comm);
        CHECK(memcmp(root, locs, (size_t)size * sizeof *locs) == 0, "localities differ");
        free(root);
    }
    free(locs);
    CHECK(tc_query_hier_group(comm, h.ngroups, &g) == MPI_ERR_ARG);
    CHECK(tc_query_hier_group(comm, -1, &g) == MPI_ERR_ARG);
    if (!h.present)
        return;
    CHECK(h.ngroups <= TC_HIER_MAX_GROUPS && h.allreduce, "%d groups", h.ngroups);
    int highest = -1;
    for (int lv = 0; lv <= TC_HIER_LEVEL_TOP; lv++)
        if (h.active_mask & (1u << lv))
            highest = lv;
    static const size_t sizes[] = {0, 4, 1000, 65536, 1 << 20, 1 << 24};
    for (int i = 0; i < h.ngroups; i++) {
        CHECK(tc_query_hier_group(comm, i, &g) == MPI_SUCCESS);
        int mine = 0;
        for (int m = 0; m < g.size; m++) {
            mine |= g.members[m] == rank;
            CHECK(m == 0 || g.members[m] > g.members[m - 1], "group %d not ascending", i);
        }
        CHECK(g.size >= 2 && mine, "group %d: size %d, rank %d in it: %d", i, g.size, rank, mine);
        CHECK(g.params && g.describe[0] != '\0');
        tc_query_choice_t c;
        if (g.shm) {
            CHECK(tc_query_choice(comm, i, TC_QUERY_BCAST, 4, &c) == MPI_ERR_ARG);
            continue;
        }
        for (int op = 0; op < TC_QUERY_OP_LAST; op++) {
            if (op == TC_QUERY_ALLREDUCE && g.level != highest)
                continue;
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
                char what[64];
                snprintf(what, sizeof what, "group %d op %d %zu B", i, op, sizes[s]);
                CHECK(tc_query_choice(comm, i, (tc_query_op_t)op, sizes[s], &c) == MPI_SUCCESS,
                      "%s", what);
                CHECK(c.why && c.choice[0] && c.bytes[0], "%s", what);
                check_cands(what, c.cand, c.ncand, c.outside, c.choice);
            }
        }
        CHECK(tc_query_choice(comm, i, TC_QUERY_OP_LAST, 4, &c) == MPI_ERR_ARG);
    }
}

/* The plans of the gathering and scanning operations: every one named,
 * with a path, a protocol and a race rule; the segment's path exactly when
 * the broadcast's is; a model cost (finite, >= 0 on the segment and on the
 * hierarchical path (Scan, Exscan), -1 on the MPI's own) exactly where
 * plan.modeled says, MPI_ERR_ARG elsewhere. */
static void check_plans(MPI_Comm comm, int size)
{
    tc_query_ctx_t c;
    tc_query_plan_t p;
    CHECK(tc_query_ctx(comm, &c) == MPI_SUCCESS);
    for (int op = 0; op < TC_QUERY_PLAN_LAST; op++) {
        CHECK(tc_query_plan(comm, op, &p) == MPI_SUCCESS, "plan %d", op);
        CHECK(p.name && p.path && p.race && p.bytes && p.protocol[0], "plan %d", op);
        CHECK(p.shm == c.bcast_shm, "%s: shm %d, bcast_shm %d", p.name, p.shm, c.bcast_shm);
        CHECK(p.race_min_text[0] != '\0', "%s", p.name);
        double us = -2;
        if (!p.modeled) {
            CHECK(tc_query_plan_cost(comm, op, 1024, &us) == MPI_ERR_ARG, "%s", p.name);
            continue;
        }
        CHECK(tc_query_plan_cost(comm, op, 1024, &us) == MPI_SUCCESS, "%s", p.name);
        if (size == 1)
            CHECK(us == 0, "%s: %g us on one process", p.name, us);
        else if (p.shm || p.hier)
            CHECK(isfinite(us) && us > 0, "%s: %g us", p.name, us);
        else
            CHECK(us == -1, "%s: %g us on the MPI's own", p.name, us);
    }
    CHECK(tc_query_plan(comm, TC_QUERY_PLAN_LAST, &p) == MPI_ERR_ARG);
    CHECK(tc_query_plan(comm, -1, &p) == MPI_ERR_ARG);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tt_check_np("test_query");
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    check_tunables();
    tt_case_done();
    check_ctx_shm(MPI_COMM_WORLD, rank, size);
    tt_case_done();
    check_model(MPI_COMM_WORLD, size);
    tt_case_done();
    check_hier(MPI_COMM_WORLD, rank, size);
    tt_case_done();
    check_plans(MPI_COMM_WORLD, size);
    tt_case_done();
    unsigned nesting, redundant;
    int rc = tc_query_topo_nesting(&nesting, &redundant);
    CHECK(rc == MPI_SUCCESS || (rc == MPI_ERR_OTHER && nesting == 0 && redundant == 0), "rc %d",
          rc);
    tt_case_done();
    return tt_finish();
}
