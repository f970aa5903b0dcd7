/* The decision tables of a hierarchy (core/select.c tc_select_hier_tables,
 * hier/hier_build.c tc_hier_tables_rule) on a synthetic hierarchy and LogP
 * table, without MPI: the model's picks at small and large sizes against an
 * argmin computed here from model/cost.h, the precedence override > tuning
 * file > model, the non-commutative table, the TC_HIER_LARGE rule, the O(1)
 * lookups, and the barrier plan's file entries. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/select.h"
#include "hier/hier.h"
#include "hier/hier_build.h"
#include "model/cost.h"
#include "model/tuning.h"

#include "tc_unit.h"

static const double gamma_ = 1.0 / 15000.0;

/* A rank's view of a posed machine: a node group of 4 (level node) and a
 * top group of 8 node leaders (between nodes: switch1 parameters). */
static void make_hier(tc_hier_t *h)
{
    memset(h, 0, sizeof *h);
    h->p = 32;
    h->nlevels = 2;
    h->level[0].level = TC_LEVEL_NODE;
    h->level[0].size = 4;
    h->level[1].level = TC_HIER_LEVEL_TOP;
    h->level[1].size = 8;
    for (int i = 0; i < 2; i++) {
        h->level[i].bcast_auto = h->level[i].reduce_auto = 1;
        h->level[i].bcast = TC_HIER_BCAST_KNOMIAL;
        h->level[i].bcast_k = 2;
        h->level[i].reduce = TC_HIER_REDUCE_BINOMIAL;
    }
    h->active_mask = (1u << TC_LEVEL_NODE) | (1u << TC_HIER_LEVEL_TOP);
    h->shm_level = -1;
    h->allreduce_top_auto = 1;
    h->large = 65536;
    tc_hier_tables_rule(h);
}

static void make_inputs(tc_select_inputs_t *in, const char *tuning)
{
    memset(in, 0, sizeof *in);
    in->gamma = gamma_;
    in->model = 1;
    if (tuning)
        CHECK(tc_tuning_parse(&in->tuning, tuning, "test", NULL, NULL) == 0);
}

/* Cheapest bcast for m bytes among P by this test's own enumeration (same
 * candidates, first one wins a tie), as "alg:k". */
static void expect_bcast(size_t m, int P, const tc_logp_t *p, int *alg, int *k)
{
    struct {
        int alg, k;
        double c;
    } c[] = {
        {TC_HIER_BCAST_KNOMIAL, 2, tc_model_bcast_knomial_cost(m, P, 2, p)},
        {TC_HIER_BCAST_KNOMIAL, 3, tc_model_bcast_knomial_cost(m, P, 3, p)},
        {TC_HIER_BCAST_KNOMIAL, 4, tc_model_bcast_knomial_cost(m, P, 4, p)},
        {TC_HIER_BCAST_KNOMIAL, 8, tc_model_bcast_knomial_cost(m, P, 8, p)},
        {TC_HIER_BCAST_FLAT, 2, tc_model_bcast_flat_cost(m, P, p)},
        {TC_HIER_BCAST_SCATTER_ALLGATHER, 2, tc_model_bcast_scatter_allgather_cost(m, P, 2, p)},
    };
    int b = 0;
    for (int i = 1; i < 6; i++)
        if (c[i].c < c[b].c * (1 - 1e-9))
            b = i;
    *alg = c[b].alg;
    *k = c[b].k;
}

static int expect_reduce(size_t m, int P, const tc_logp_t *p, int commutative)
{
    double bin = tc_model_reduce_binomial_cost(m, P, gamma_, p);
    double flat = tc_model_reduce_flat_cost(m, P, gamma_, p);
    double rsg = tc_model_reduce_rsg_cost(m, P, gamma_, p);
    int best = TC_HIER_REDUCE_BINOMIAL;
    double bc = bin;
    if (flat < bc * (1 - 1e-9)) {
        best = TC_HIER_REDUCE_FLAT;
        bc = flat;
    }
    if (commutative && rsg < bc * (1 - 1e-9))
        best = TC_HIER_REDUCE_RSG;
    return best;
}

static void test_model(void)
{
    static tc_hier_t h;
    static tc_select_inputs_t in;
    tc_logp_table_t t;
    tc_logp_table_defaults(&t);
    make_hier(&h);
    make_inputs(&in, NULL);
    /* Several nodes (singlenode = 0): the top group uses switch1. */
    tc_select_hier_tables(&h, &t, &in, 0, 0);
    CHECK(h.model == 1 && h.gamma == gamma_);
    CHECK(h.level[0].model_level == TC_MODEL_LEVEL_NODE);
    CHECK(h.level[1].model_level == TC_MODEL_LEVEL_SWITCH1);
    /* Every class of both levels is the argmin at the class's smallest size,
     * and the lookups return it for every size in the class. */
    for (int i = 0; i < 2; i++) {
        const tc_hier_level_t *l = &h.level[i];
        const tc_logp_t *p = &t.level[l->model_level];
        for (int c = 1; c < TC_HIER_SIZE_CLASSES; c++) {
            const size_t lo = (size_t)1 << (c - 1), hi = c < 41 ? ((size_t)1 << c) - 1 : lo * 4;
            int alg, k;
            expect_bcast(lo, l->size, p, &alg, &k);
            CHECK(l->bcast_tab[c] == alg && l->bcast_why[c] == TC_HIER_WHY_MODEL);
            CHECK(alg != TC_HIER_BCAST_KNOMIAL || l->bcast_k_tab[c] == k);
            CHECK(tc_hier_level_bcast_alg(&h, l, lo) == (tc_hier_bcast_alg_t)alg);
            CHECK(tc_hier_level_bcast_alg(&h, l, hi) == (tc_hier_bcast_alg_t)alg);
            CHECK(tc_hier_level_bcast_k(&h, l, hi) == l->bcast_k_tab[c]);
            CHECK(l->reduce_tab[c] == expect_reduce(lo, l->size, p, 1));
            CHECK(l->reduce_nc_tab[c] == expect_reduce(lo, l->size, p, 0));
            CHECK(l->reduce_nc_tab[c] != TC_HIER_REDUCE_RSG);
            CHECK(tc_hier_level_reduce_alg(&h, l, hi, 1) == l->reduce_tab[c]);
            CHECK(tc_hier_level_reduce_alg(&h, l, hi, 0) == l->reduce_nc_tab[c]);
        }
    }
    /* The picks the formulas imply at the extremes: latency-bound small
     * messages never scatter, 16 MiB among 8 does; reductions: rsg at 16 MiB,
     * not at 4 bytes; the top allreduce: recursive doubling small, ring
     * large. */
    const tc_hier_level_t *top = &h.level[1], *node = &h.level[0];
    CHECK(tc_hier_level_bcast_alg(&h, top, 4) != TC_HIER_BCAST_SCATTER_ALLGATHER);
    CHECK(tc_hier_level_bcast_alg(&h, top, 16 << 20) == TC_HIER_BCAST_SCATTER_ALLGATHER);
    /* Within a node (default duplex factor X = 2: the CPU copies both
     * directions of the ring's exchanges) 16 MiB among 4 stays on a tree:
     * scatter+allgather 0.75 + 3 * 2 / 4 = 2.25 m G against binomial's 2 m G;
     * with X = 1 (the directions overlapping) it is 1.5 m G and wins. */
    CHECK(tc_hier_level_bcast_alg(&h, node, 16 << 20) != TC_HIER_BCAST_SCATTER_ALLGATHER);
    t.level[TC_MODEL_LEVEL_NODE].X = 1;
    tc_select_hier_tables(&h, &t, &in, 0, 0);
    CHECK(tc_hier_level_bcast_alg(&h, node, 16 << 20) == TC_HIER_BCAST_SCATTER_ALLGATHER);
    tc_logp_table_defaults(&t);
    tc_select_hier_tables(&h, &t, &in, 0, 0);
    CHECK(tc_hier_level_reduce_alg(&h, top, 4, 1) != TC_HIER_REDUCE_RSG);
    CHECK(tc_hier_level_reduce_alg(&h, top, 16 << 20, 1) == TC_HIER_REDUCE_RSG);
    CHECK(tc_hier_level_reduce_alg(&h, top, 16 << 20, 0) != TC_HIER_REDUCE_RSG);
    CHECK(tc_hier_top_allreduce_alg(&h, 4, 1) == TC_HIER_ALLREDUCE_RECDBL);
    CHECK(tc_hier_top_allreduce_alg(&h, 16 << 20, 1) == TC_HIER_ALLREDUCE_RING);
    CHECK(tc_hier_top_allreduce_alg(&h, 16 << 20, 0) == TC_HIER_ALLREDUCE_RECDBL);
    CHECK(h.allreduce_why[tc_hier_size_class(4)] == TC_HIER_WHY_MODEL);
    /* The allreduce table at every class follows the costs of the top group. */
    for (int c = 1; c < TC_HIER_SIZE_CLASSES; c++) {
        const size_t m = (size_t)1 << (c - 1);
        const tc_logp_t *p = &t.level[TC_MODEL_LEVEL_SWITCH1];
        int want = tc_model_allreduce_ring_cost(m, 8, gamma_, p) <
                           tc_model_allreduce_recdbl_cost(m, 8, gamma_, p) * (1 - 1e-9)
                       ? TC_HIER_ALLREDUCE_RING
                       : TC_HIER_ALLREDUCE_RECDBL;
        CHECK(h.allreduce_tab[c] == want);
    }
    /* One node: the top group is capped at node. */
    tc_select_hier_tables(&h, &t, &in, 1, 0);
    CHECK(h.level[1].model_level == TC_MODEL_LEVEL_NODE);
    /* Different parameters change the pick: a huge latency at node makes
     * flat-like (few rounds) bcast candidates win at 4 bytes. */
    t.level[TC_MODEL_LEVEL_NODE].L = 1000;
    tc_select_hier_tables(&h, &t, &in, 0, 0);
    int alg, k;
    expect_bcast(4, 4, &t.level[TC_MODEL_LEVEL_NODE], &alg, &k);
    CHECK(h.level[0].bcast_tab[tc_hier_size_class(4)] == alg);
    CHECK(alg == TC_HIER_BCAST_KNOMIAL && k == 4); /* one round of 3 sends */
}

static void test_precedence(void)
{
    static tc_hier_t h;
    static tc_select_inputs_t in;
    tc_logp_table_t t;
    tc_logp_table_defaults(&t);
    make_hier(&h);
    /* Explicit settings: node's bcast is flat, top's reduce is binomial, the
     * top allreduce ring. The file names every one of them too. */
    h.level[0].bcast_auto = 0;
    h.level[0].bcast = TC_HIER_BCAST_FLAT;
    h.level[1].reduce_auto = 0;
    h.level[1].reduce = TC_HIER_REDUCE_BINOMIAL;
    h.allreduce_top_auto = 0;
    h.allreduce_top = TC_HIER_ALLREDUCE_RING;
    make_inputs(&in, "bcast node 0 scatter_allgather\n"
                     "bcast top 1K flat\n"
                     "bcast top 1M knomial:5\n"
                     "reduce top 0 rsg\n"
                     "reduce node 64K rsg\n"
                     "allreduce top 0 recdbl\n");
    tc_select_hier_tables(&h, &t, &in, 0, 0);
    const tc_hier_level_t *node = &h.level[0], *top = &h.level[1];
    for (int c = 0; c < TC_HIER_SIZE_CLASSES; c++) {
        /* override beats the file */
        CHECK(node->bcast_tab[c] == TC_HIER_BCAST_FLAT);
        CHECK(node->bcast_why[c] == TC_HIER_WHY_OVERRIDE);
        CHECK(top->reduce_tab[c] == TC_HIER_REDUCE_BINOMIAL);
        CHECK(top->reduce_why[c] == TC_HIER_WHY_OVERRIDE);
        CHECK(h.allreduce_tab[c] == TC_HIER_ALLREDUCE_RING);
        CHECK(h.allreduce_why[c] == TC_HIER_WHY_OVERRIDE);
    }
    /* The file beats the model from its min-bytes; below it the model. */
    const int c1k = tc_hier_size_class(1024), c1m = tc_hier_size_class(1 << 20);
    CHECK(top->bcast_why[tc_hier_size_class(1023)] == TC_HIER_WHY_MODEL);
    CHECK(top->bcast_tab[c1k] == TC_HIER_BCAST_FLAT && top->bcast_why[c1k] == TC_HIER_WHY_FILE);
    CHECK(tc_hier_level_bcast_alg(&h, top, (1 << 20) - 1) == TC_HIER_BCAST_FLAT);
    CHECK(top->bcast_tab[c1m] == TC_HIER_BCAST_KNOMIAL && top->bcast_k_tab[c1m] == 5);
    CHECK(tc_hier_level_bcast_k(&h, top, 1 << 30) == 5);
    CHECK(top->bcast_why[TC_HIER_SIZE_CLASSES - 1] == TC_HIER_WHY_FILE);
    const int c64k = tc_hier_size_class(65536);
    CHECK(node->reduce_why[c64k - 1] == TC_HIER_WHY_MODEL);
    CHECK(node->reduce_tab[c64k] == TC_HIER_REDUCE_RSG &&
          node->reduce_why[c64k] == TC_HIER_WHY_FILE);
    /* A non-commutative op never gets rsg, even from the file. */
    CHECK(node->reduce_nc_tab[c64k] == TC_HIER_REDUCE_BINOMIAL);
    CHECK(tc_hier_level_reduce_alg(&h, node, 1 << 20, 0) == TC_HIER_REDUCE_BINOMIAL);

    /* Without the explicit settings the file's allreduce entry applies. */
    h.allreduce_top_auto = 1;
    tc_select_hier_tables(&h, &t, &in, 0, 0);
    CHECK(tc_hier_top_allreduce_alg(&h, 16 << 20, 1) == TC_HIER_ALLREDUCE_RECDBL);
    CHECK(h.allreduce_why[tc_hier_size_class(16 << 20)] == TC_HIER_WHY_FILE);

    /* TC_HIER_MODEL=0: the rule where the file says nothing. */
    in.model = 0;
    tc_select_hier_tables(&h, &t, &in, 0, 0);
    CHECK(h.model == 0);
    CHECK(top->bcast_why[tc_hier_size_class(100)] == TC_HIER_WHY_RULE);
    CHECK(top->bcast_tab[tc_hier_size_class(100)] == TC_HIER_BCAST_KNOMIAL);
    CHECK(top->bcast_why[c1k] == TC_HIER_WHY_FILE);
    CHECK(node->reduce_tab[tc_hier_size_class(65535)] == TC_HIER_REDUCE_BINOMIAL);
    CHECK(node->reduce_why[tc_hier_size_class(65535)] == TC_HIER_WHY_RULE);

    /* The description lists the runs of a table. */
    char d[480];
    in.model = 1;
    tc_tuning_init(&in.tuning);
    make_hier(&h);
    h.large = 1 << 20;
    tc_hier_tables_rule(&h);
    tc_hier_level_describe(&h, &h.level[1], d, sizeof d);
    CHECK(!strcmp(d, "bcast auto (knomial:2, scatter_allgather from 1M); reduce auto (binomial, "
                     "rsg from 1M)"));
    CHECK(tc_tuning_parse(&in.tuning, "bcast top 4K flat\n", "x", NULL, NULL) == 0);
    in.model = 0;
    tc_select_hier_tables(&h, &t, &in, 0, 0);
    tc_hier_level_describe(&h, &h.level[1], d, sizeof d);
    CHECK(!strcmp(d, "bcast auto (knomial:2, flat from 4K [file]); reduce auto (binomial, rsg "
                     "from 1M)"));
    tc_hier_top_allreduce_describe(&h, d, sizeof d);
    CHECK(!strcmp(d, "auto (recdbl, ring from 1M)"));
}

/* Oversubscribed (select.h): the model's argmin leaves out scatter_allgather
 * and rsg and adds w to L; an override or a file entry stands. Expected picks come from this test's
 * own enumeration of the remaining candidates. */
static void test_oversubscribed(void)
{
    static tc_hier_t h;
    static tc_select_inputs_t in;
    tc_logp_table_t t;
    tc_logp_table_defaults(&t);
    t.level[TC_MODEL_LEVEL_SWITCH1].w = 4.0;
    t.level[TC_MODEL_LEVEL_NODE].w = 2.5;

    /* The parameters: L + w only when oversubscribed. */
    tc_logp_t q;
    tc_select_level_params(&t.level[TC_MODEL_LEVEL_SWITCH1], 0, &q);
    CHECK(q.L == 1.0 && q.w == 4.0);
    tc_select_level_params(&t.level[TC_MODEL_LEVEL_SWITCH1], 1, &q);
    CHECK(q.L == 5.0 && q.o_s == 0.3 && q.G == 1.0 / 12000.0);

    make_hier(&h);
    make_inputs(&in, NULL);
    tc_select_hier_tables(&h, &t, &in, 0, 1);
    for (int i = 0; i < 2; i++) {
        const tc_hier_level_t *l = &h.level[i];
        tc_logp_t pw = t.level[l->model_level];
        pw.L += pw.w;
        for (int c = 1; c < TC_HIER_SIZE_CLASSES; c++) {
            const size_t m = tc_select_class_bytes(c);
            const int P = l->size;
            /* Own argmin over knomial:2,3,4,8 and flat (first wins a tie). */
            double best = tc_model_bcast_knomial_cost(m, P, 2, &pw);
            int alg = TC_HIER_BCAST_KNOMIAL, k = 2;
            const int ks[] = {3, 4, 8};
            for (int j = 0; j < 3; j++) {
                double v = tc_model_bcast_knomial_cost(m, P, ks[j], &pw);
                if (v < best * (1 - 1e-9)) {
                    best = v;
                    k = ks[j];
                }
            }
            if (tc_model_bcast_flat_cost(m, P, &pw) < best * (1 - 1e-9))
                alg = TC_HIER_BCAST_FLAT;
            CHECK(l->bcast_tab[c] == alg);
            if (alg == TC_HIER_BCAST_KNOMIAL)
                CHECK(l->bcast_k_tab[c] == k);
            CHECK(l->bcast_why[c] == TC_HIER_WHY_MODEL);
            double bin = tc_model_reduce_binomial_cost(m, P, gamma_, &pw);
            double flat = tc_model_reduce_flat_cost(m, P, gamma_, &pw);
            int red = flat < bin * (1 - 1e-9) ? TC_HIER_REDUCE_FLAT : TC_HIER_REDUCE_BINOMIAL;
            CHECK(l->reduce_tab[c] == red);
            CHECK(l->reduce_nc_tab[c] == red);
        }
    }
    /* Where test_model's picks were scatter_allgather / rsg: */
    const tc_hier_level_t *top = &h.level[1];
    CHECK(tc_hier_level_bcast_alg(&h, top, 16 << 20) != TC_HIER_BCAST_SCATTER_ALLGATHER);
    CHECK(tc_hier_level_reduce_alg(&h, top, 16 << 20, 1) != TC_HIER_REDUCE_RSG);
    /* The allreduce ring stays a candidate (select.h): the table is the
     * argmin of both with L + w. */
    for (int c = 1; c < TC_HIER_SIZE_CLASSES; c++) {
        const size_t m = tc_select_class_bytes(c);
        tc_logp_t pw = t.level[TC_MODEL_LEVEL_SWITCH1];
        pw.L += pw.w;
        int want = tc_model_allreduce_ring_cost(m, 8, gamma_, &pw) <
                           tc_model_allreduce_recdbl_cost(m, 8, gamma_, &pw) * (1 - 1e-9)
                       ? TC_HIER_ALLREDUCE_RING
                       : TC_HIER_ALLREDUCE_RECDBL;
        CHECK(h.allreduce_tab[c] == want);
    }
    CHECK(tc_hier_top_allreduce_alg(&h, 16 << 20, 1) == TC_HIER_ALLREDUCE_RING);
    /* An override and the file stand when oversubscribed. */
    make_hier(&h);
    h.level[1].reduce_auto = 0;
    h.level[1].reduce = TC_HIER_REDUCE_RSG;
    make_inputs(&in, "bcast top 1M scatter_allgather\nallreduce top 64K ring\n");
    tc_select_hier_tables(&h, &t, &in, 0, 1);
    top = &h.level[1];
    CHECK(tc_hier_level_reduce_alg(&h, top, 16 << 20, 1) == TC_HIER_REDUCE_RSG);
    CHECK(top->reduce_why[tc_hier_size_class(16 << 20)] == TC_HIER_WHY_OVERRIDE);
    CHECK(tc_hier_level_bcast_alg(&h, top, 1 << 20) == TC_HIER_BCAST_SCATTER_ALLGATHER);
    CHECK(top->bcast_why[tc_hier_size_class(1 << 20)] == TC_HIER_WHY_FILE);
    CHECK(tc_hier_level_bcast_alg(&h, top, (1 << 20) - 1) != TC_HIER_BCAST_SCATTER_ALLGATHER);
    CHECK(tc_hier_top_allreduce_alg(&h, 1 << 20, 1) == TC_HIER_ALLREDUCE_RING);
    CHECK(h.allreduce_why[tc_hier_size_class(1 << 20)] == TC_HIER_WHY_FILE);
    CHECK(tc_hier_top_allreduce_alg(&h, 1000, 1) == TC_HIER_ALLREDUCE_RECDBL);

    /* The argmin itself: costs of every candidate are filled in, excluded
     * ones too; w = 0 still excludes. */
    tc_logp_t p0 = t.level[TC_MODEL_LEVEL_SWITCH1];
    p0.w = 0;
    double cost[TC_SELECT_MAX_CAND];
    tc_select_cand_t cand[TC_SELECT_MAX_CAND];
    CHECK(tc_select_candidates(TC_SELECT_ALLREDUCE, cand) == 2);
    CHECK(!tc_select_allmember(TC_SELECT_ALLREDUCE, cand[0]) &&
          !tc_select_allmember(TC_SELECT_ALLREDUCE, cand[1]));
    CHECK(tc_select_argmin(TC_SELECT_REDUCE, 16 << 20, 8, gamma_, &p0, 0, cost) == 2);
    CHECK(tc_select_argmin(TC_SELECT_REDUCE, 16 << 20, 8, gamma_, &p0, 1, cost) != 2);
    CHECK(cost[2] == tc_model_reduce_rsg_cost(16 << 20, 8, gamma_, &p0) && cost[2] < cost[0] &&
          cost[2] < cost[1]);
    CHECK(tc_select_argmin(TC_SELECT_BCAST, 16 << 20, 8, gamma_, &p0, 0, cost) == 5);
    CHECK(tc_select_argmin(TC_SELECT_BCAST, 16 << 20, 8, gamma_, &p0, 1, cost) != 5);
    CHECK(tc_select_candidates(TC_SELECT_BCAST, cand) == 6);
    for (int i = 0; i < 6; i++)
        CHECK(tc_select_allmember(TC_SELECT_BCAST, cand[i]) == (i == 5));
    CHECK(tc_select_candidates(TC_SELECT_REDUCE, cand) == 3);
    for (int i = 0; i < 3; i++)
        CHECK(tc_select_allmember(TC_SELECT_REDUCE, cand[i]) == (i == 2));
}

static void test_barrier(void)
{
    static tc_hier_t h;
    static tc_select_inputs_t in;
    tc_barrier_plan_t plan;
    tc_logp_table_t t;
    tc_logp_table_defaults(&t);
    make_hier(&h);
    h.level[0].shm = 1;
    make_inputs(&in, "barrier top 0 central\nbarrier shm 0 tree:8\n");
    /* file beats model */
    tc_select_barrier_plan(&plan, &t, &in, &h, &(tc_select_scope_t){4, 0, 0},
                           &(tc_barrier_settings_t){0, 4, 0, 4});
    CHECK(plan.msg_alg == TC_BARRIER_CENTRAL && plan.msg_why == TC_CHOICE_FILE);
    CHECK(plan.shm_alg == TC_BARRIER_TREE && plan.shm_why == TC_CHOICE_FILE);
    CHECK(plan.shm_arity == 8 && plan.msg_arity == 4);
    CHECK(plan.shm_cost[TC_BARRIER_TREE] ==
          tc_model_shm_barrier_cost(TC_MODEL_BARRIER_TREE, 4, 8, &t.shm));
    /* override beats the file */
    tc_select_barrier_plan(
        &plan, &t, &in, &h, &(tc_select_scope_t){4, 0, 0},
        &(tc_barrier_settings_t){1 + TC_BARRIER_DISSEMINATION, 4, 1 + TC_BARRIER_TOURNAMENT, 4});
    CHECK(plan.msg_alg == TC_BARRIER_TOURNAMENT && plan.msg_why == TC_CHOICE_OVERRIDE);
    CHECK(plan.shm_alg == TC_BARRIER_DISSEMINATION && plan.shm_why == TC_CHOICE_OVERRIDE);
    CHECK(plan.shm_arity == 4);
    /* no file: the model's argmin */
    tc_select_barrier_plan(&plan, &t, NULL, &h, &(tc_select_scope_t){4, 0, 0},
                           &(tc_barrier_settings_t){0, 4, 0, 4});
    CHECK(plan.msg_why == TC_CHOICE_MODEL &&
          (int)plan.msg_alg ==
              (int)tc_model_barrier_argmin(31, 8, 4, &t.level[TC_MODEL_LEVEL_SWITCH1], NULL));
    CHECK(!strcmp(tc_select_why_name(TC_CHOICE_FILE), "file"));
    /* oversubscribed: the central counter where the model chose the segment's
     * algorithm; the file and overrides stand */
    tc_select_barrier_plan(&plan, &t, NULL, &h, &(tc_select_scope_t){4, 0, 1},
                           &(tc_barrier_settings_t){0, 4, 0, 4});
    CHECK(plan.shm_alg == TC_BARRIER_CENTRAL && plan.shm_why == TC_CHOICE_OVERSUB);
    CHECK(plan.msg_why == TC_CHOICE_MODEL);
    tc_select_barrier_plan(&plan, &t, &in, &h, &(tc_select_scope_t){4, 0, 1},
                           &(tc_barrier_settings_t){0, 4, 0, 4});
    CHECK(plan.shm_alg == TC_BARRIER_TREE && plan.shm_why == TC_CHOICE_FILE);
    tc_select_barrier_plan(&plan, &t, NULL, &h, &(tc_select_scope_t){4, 0, 1},
                           &(tc_barrier_settings_t){1 + TC_BARRIER_TOURNAMENT, 4, 0, 4});
    CHECK(plan.shm_alg == TC_BARRIER_TOURNAMENT && plan.shm_why == TC_CHOICE_OVERRIDE);
}

static void test_classes(void)
{
    CHECK(tc_hier_size_class(0) == 0);
    CHECK(tc_hier_size_class(1) == 1);
    CHECK(tc_hier_size_class(2) == 2 && tc_hier_size_class(3) == 2);
    CHECK(tc_hier_size_class(4) == 3);
    CHECK(tc_hier_size_class(65535) == 16 && tc_hier_size_class(65536) == 17);
    CHECK(tc_hier_size_class((size_t)1 << 40) == 41);
    CHECK(tc_hier_size_class(~(size_t)0) == TC_HIER_SIZE_CLASSES - 1);
    CHECK(tc_select_class_bytes(0) == 0 && tc_select_class_bytes(17) == 65536);
    for (int c = 0; c < TC_HIER_SIZE_CLASSES; c++)
        CHECK(tc_hier_size_class(tc_select_class_bytes(c)) == c);
}

int main(void)
{
    test_classes();
    test_model();
    test_precedence();
    test_oversubscribed();
    test_barrier();
    printf("%d checks, %d failures\n", tu_checks, tu_failures);
    return tu_failures ? 1 : 0;
}
