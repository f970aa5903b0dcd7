/* Cost formulas of src/model/cost.c against tables computed independently
 * by gen_barrier_table.py and gen_loggp_table.py (their own code, from
 * docs/model.md), plus paper 003's published P = 8 values, P <= 1, the
 * argmin and its tie rule; the shared-memory barrier costs against
 * gen_shm_barrier_table.py and hand-checked values. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/cost.h"
#include "rma/rma.h"
#include "shm/params.h"

#ifndef TC_MODEL_DATA_DIR
#error "TC_MODEL_DATA_DIR must name tests/model"
#endif

static int failures;
static int checks;

static void check_close(double got, double want, double rel, const char *what)
{
    checks++;
    double tol = rel * fmax(1.0, fabs(want));
    if (!(fabs(got - want) <= tol)) {
        failures++;
        fprintf(stderr, "FAIL %s: got %.17g, want %.17g\n", what, got, want);
    }
}

static void check(int cond, const char *what)
{
    checks++;
    if (!cond) {
        failures++;
        fprintf(stderr, "FAIL %s\n", what);
    }
}

static FILE *open_table(const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", TC_MODEL_DATA_DIR, name);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "FAIL cannot open %s\n", path);
        exit(1);
    }
    return f;
}

static void test_barrier_table(void)
{
    FILE *f = open_table("barrier_table.txt");
    char line[512];
    tc_logp_t p = {0};
    int have_params = 0, rows = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#')
            continue;
        if (strncmp(line, "params", 6) == 0) {
            have_params = sscanf(line + 6, "%lf %lf %lf %lf", &p.L, &p.o_s, &p.o_r, &p.g) == 4;
            continue;
        }
        int P, arity;
        double want[TC_MODEL_BARRIER_LAST];
        if (sscanf(line, "%d %d %lf %lf %lf %lf %lf", &P, &arity, &want[0], &want[1], &want[2],
                   &want[3], &want[4]) != 7) {
            fprintf(stderr, "FAIL bad table line: %s", line);
            failures++;
            continue;
        }
        for (int a = 0; a < TC_MODEL_BARRIER_LAST; a++) {
            char what[96];
            snprintf(what, sizeof what, "barrier alg %d P=%d arity=%d", a, P, arity);
            check_close(tc_model_barrier_cost((tc_model_barrier_t)a, P, arity, &p), want[a], 1e-9,
                        what);
        }
        rows++;
    }
    fclose(f);
    check(have_params, "barrier table has a params line");
    check(rows == 200, "barrier table has 200 rows (P = 1..100, arity 2 and 4)");
}

/* The shared-memory barrier costs (cost.h) against gen_shm_barrier_table.py:
 * two shm rows, P = 1..100, arity 2, 3, 4. */
static void test_shm_barrier_table(void)
{
    FILE *f = open_table("shm_barrier_table.txt");
    char line[512];
    tc_logp_t p = {0};
    int nparams = 0, rows = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#')
            continue;
        if (strncmp(line, "params", 6) == 0) {
            nparams += sscanf(line + 6, "%lf %lf %lf %lf", &p.L, &p.o_s, &p.o_r, &p.g) == 4;
            continue;
        }
        int P, arity;
        double want[TC_MODEL_BARRIER_LAST];
        if (nparams == 0 || sscanf(line, "%d %d %lf %lf %lf %lf %lf", &P, &arity, &want[0],
                                   &want[1], &want[2], &want[3], &want[4]) != 7) {
            fprintf(stderr, "FAIL bad shm table line: %s", line);
            failures++;
            continue;
        }
        for (int a = 0; a < TC_MODEL_BARRIER_LAST; a++) {
            char what[96];
            snprintf(what, sizeof what, "shm barrier alg %d P=%d arity=%d params %d", a, P, arity,
                     nparams);
            check_close(tc_model_shm_barrier_cost((tc_model_barrier_t)a, P, arity, &p), want[a],
                        1e-9, what);
        }
        rows++;
    }
    fclose(f);
    check(nparams == 2, "shm table has two params lines");
    check(rows == 600, "shm table has 600 rows (2 rows x P = 1..100 x arity 2, 3, 4)");
}

/* Hand-checked shm values and rules: P = 2 (the np=2 evidence), arity
 * below 2, P <= 1, the argmin. */
static void test_shm_barrier_rules(void)
{
    const tc_logp_t s = {.L = 0.03, .o_s = 0.04, .o_r = 0.02, .g = 0.025, .G = 1e-4};
    const double hop = 0.05;
    /* P = 2: one hop and a second line per process after the call
     * (dissemination), a hop each way (tree, tournament), the release hop
     * and one fetch-add arrival (central). */
    check_close(tc_model_shm_barrier_cost(TC_MODEL_BARRIER_DISSEMINATION, 2, 2, &s),
                0.04 + hop + 0.025, 1e-12, "shm dissemination P=2");
    check_close(tc_model_shm_barrier_cost(TC_MODEL_BARRIER_TREE, 2, 5, &s), 0.04 + 2 * hop, 1e-12,
                "shm tree P=2 (any arity)");
    check_close(tc_model_shm_barrier_cost(TC_MODEL_BARRIER_TOURNAMENT, 2, 2, &s), 0.04 + 2 * hop,
                1e-12, "shm tournament P=2");
    check_close(tc_model_shm_barrier_cost(TC_MODEL_BARRIER_CENTRAL, 2, 2, &s), 0.04 + hop + 0.025,
                1e-12, "shm central P=2");
    /* P = 8, arity 2: heap depth 3, two children per parent. */
    check_close(tc_model_shm_barrier_cost(TC_MODEL_BARRIER_TREE, 8, 2, &s),
                0.04 + 3 * (2 * hop + 0.025), 1e-12, "shm tree P=8 n=2");
    /* P = 5, arity 4: depth 1, four children. */
    check_close(tc_model_shm_barrier_cost(TC_MODEL_BARRIER_TREE, 5, 4, &s),
                0.04 + 2 * hop + 3 * 0.025, 1e-12, "shm tree P=5 n=4");
    check(tc_model_shm_barrier_cost(TC_MODEL_BARRIER_TREE, 13, 1, &s) ==
              tc_model_shm_barrier_cost(TC_MODEL_BARRIER_TREE, 13, 2, &s),
          "shm arity 1 means 2");
    for (int a = 0; a < TC_MODEL_BARRIER_LAST; a++) {
        check(tc_model_shm_barrier_cost((tc_model_barrier_t)a, 1, 2, &s) == 0.0, "shm P=1 costs 0");
        check(tc_model_shm_barrier_cost((tc_model_barrier_t)a, 2, 2, NULL) == 0.0,
              "shm NULL row costs 0");
    }
    /* Far below the MPI parameters' prediction for the same P. */
    const tc_logp_t node = {.L = 0.35, .o_s = 0.07, .o_r = 0.08, .g = 0.10, .G = 0.0002};
    check(tc_model_shm_barrier_cost(TC_MODEL_BARRIER_TREE, 2, 2, &s) <
              0.5 * tc_model_barrier_cost(TC_MODEL_BARRIER_TREE, 2, 2, &node),
          "shm row predicts far less than the node level's MPI parameters");
    /* argmin: at P = 2 central and dissemination tie (o_s + h + f_r) and
     * the lower enum value wins; pairwise costs as dissemination; costs
     * are filled for every algorithm. */
    double c[TC_MODEL_BARRIER_LAST];
    check(tc_model_shm_barrier_argmin(0, 2, 2, &s, c) == TC_MODEL_BARRIER_CENTRAL,
          "shm argmin P=2 = central (tie with dissemination)");
    check(tc_model_shm_barrier_argmin(~(1u << TC_MODEL_BARRIER_CENTRAL), 2, 2, &s, NULL) ==
              TC_MODEL_BARRIER_DISSEMINATION,
          "shm argmin P=2 without central = dissemination");
    check(tc_model_shm_barrier_argmin(0, 16, 2, &s, NULL) == TC_MODEL_BARRIER_DISSEMINATION,
          "shm argmin P=16 = dissemination");
    check(c[TC_MODEL_BARRIER_PAIRWISE] == c[TC_MODEL_BARRIER_DISSEMINATION],
          "shm pairwise costs as dissemination");
    check(tc_model_shm_barrier_argmin(1u << TC_MODEL_BARRIER_CENTRAL | 1u << TC_MODEL_BARRIER_TREE,
                                      2, 2, &s, NULL) == TC_MODEL_BARRIER_CENTRAL,
          "shm argmin restricted to central and tree");
    /* A slow fetch-add (large g) makes the central counter lose to the tree. */
    tc_logp_t slow = s;
    slow.g = 1.0;
    check(tc_model_shm_barrier_argmin(1u << TC_MODEL_BARRIER_CENTRAL | 1u << TC_MODEL_BARRIER_TREE,
                                      4, 4, &slow, NULL) == TC_MODEL_BARRIER_TREE,
          "shm argmin: slow atomics favour the tree");
}

static void test_paper_values(void)
{
    /* Paper 003's fitted parameters and its P = 8 predictions. */
    tc_logp_t p = {.L = 125.6, .o_s = 0.43, .o_r = 123.8, .g = 0.22, .G = 0};
    check(fabs(tc_model_barrier_cost(TC_MODEL_BARRIER_CENTRAL, 8, 2, &p) - 1245) < 0.5,
          "paper: central counter P=8 ~1245");
    check(fabs(tc_model_barrier_cost(TC_MODEL_BARRIER_TREE, 8, 2, &p) - 1499) < 0.5,
          "paper: binary combining tree P=8 ~1499");
    check(fabs(tc_model_barrier_cost(TC_MODEL_BARRIER_DISSEMINATION, 8, 2, &p) - 749) < 0.5,
          "paper: dissemination P=8 ~749");
    for (int a = 0; a < TC_MODEL_BARRIER_LAST; a++) {
        check(tc_model_barrier_cost((tc_model_barrier_t)a, 1, 2, &p) == 0.0, "P=1 costs 0");
        check(tc_model_barrier_cost((tc_model_barrier_t)a, 0, 2, &p) == 0.0, "P=0 costs 0");
        check(tc_model_barrier_cost((tc_model_barrier_t)a, 2, 2, &p) > 0.0, "P=2 costs > 0");
    }
    /* Arity below 2 is arity 2. */
    check(tc_model_barrier_cost(TC_MODEL_BARRIER_TREE, 13, 0, &p) ==
              tc_model_barrier_cost(TC_MODEL_BARRIER_TREE, 13, 2, &p),
          "arity 0 means 2");
}

static void test_argmin(void)
{
    tc_logp_t p = {.L = 125.6, .o_s = 0.43, .o_r = 123.8, .g = 0.22, .G = 0};
    const unsigned all = (1u << TC_MODEL_BARRIER_LAST) - 1;
    double costs[TC_MODEL_BARRIER_LAST];
    /* P = 8: dissemination and pairwise tie (both 3 t_s): the lower enum wins. */
    check(tc_model_barrier_argmin(all, 8, 2, &p, costs) == TC_MODEL_BARRIER_DISSEMINATION,
          "argmin P=8 all -> dissemination (tie with pairwise, lower enum)");
    check(costs[TC_MODEL_BARRIER_DISSEMINATION] == costs[TC_MODEL_BARRIER_PAIRWISE],
          "P=8: dissemination and pairwise cost the same");
    check(costs[TC_MODEL_BARRIER_CENTRAL] ==
              tc_model_barrier_cost(TC_MODEL_BARRIER_CENTRAL, 8, 2, &p),
          "argmin fills costs[] for every algorithm");
    unsigned no_diss = all & ~(1u << TC_MODEL_BARRIER_DISSEMINATION);
    check(tc_model_barrier_argmin(no_diss, 8, 2, &p, NULL) == TC_MODEL_BARRIER_PAIRWISE,
          "argmin P=8 without dissemination -> pairwise");
    /* P = 6: pairwise pays the extra step in and out (2 t_s + 2 M = 999.3)
     * and central costs 2 M + 4 (f_r + f_s) = 996.6: central wins. */
    check(tc_model_barrier_argmin(no_diss, 6, 2, &p, costs) == TC_MODEL_BARRIER_CENTRAL,
          "argmin P=6 without dissemination -> central");
    check(fabs(costs[TC_MODEL_BARRIER_PAIRWISE] - 999.32) < 1e-9, "pairwise P=6 = 999.32");
    unsigned only = (1u << TC_MODEL_BARRIER_CENTRAL) | (1u << TC_MODEL_BARRIER_TREE);
    /* central 1245 < tree 1499 at P = 8. */
    check(tc_model_barrier_argmin(only, 8, 2, &p, NULL) == TC_MODEL_BARRIER_CENTRAL,
          "argmin {central, tree} P=8 -> central");
    check(tc_model_barrier_argmin(1u << TC_MODEL_BARRIER_TOURNAMENT, 8, 2, &p, NULL) ==
              TC_MODEL_BARRIER_TOURNAMENT,
          "argmin of one allowed algorithm is that algorithm");
    check(tc_model_barrier_argmin(0, 8, 2, &p, NULL) == TC_MODEL_BARRIER_DISSEMINATION,
          "allowed = 0 means every algorithm");
    /* P = 1: every cost is 0, a five-way tie: the lowest allowed enum. */
    check(tc_model_barrier_argmin(all, 1, 2, &p, NULL) == TC_MODEL_BARRIER_CENTRAL,
          "P=1 tie -> central (lowest enum)");
    check(tc_model_barrier_argmin(all & ~1u, 1, 2, &p, NULL) == TC_MODEL_BARRIER_TREE,
          "P=1 tie without central -> tree");
    /* A machine where messages are cheap and the gap dominates (g >> o+L+o)
     * makes central's f terms g each: check the argmin follows the costs. */
    tc_logp_t q = {.L = 1, .o_s = 0.1, .o_r = 0.1, .g = 0.05, .G = 0};
    for (int P = 2; P <= 64; P++) {
        tc_model_barrier_t b = tc_model_barrier_argmin(all, P, 4, &q, costs);
        for (int a = 0; a < TC_MODEL_BARRIER_LAST; a++)
            check(costs[b] < costs[a] || (costs[b] == costs[a] && (int)b <= a),
                  "argmin is the minimum, lower enum on ties");
    }
}

static void test_loggp_table(void)
{
    static const char *const names[] = {
        "bcast_flat",      "bcast_knomial", "bcast_sa",         "reduce_flat",
        "reduce_binomial", "reduce_rsg",    "allreduce_recdbl", "allreduce_ring",
    };
    FILE *f = open_table("loggp_table.txt");
    char line[512], fn[64];
    tc_logp_t p = {0};
    tc_model_shm_t sp = {0};
    double gamma = 0;
    int have = 0, rows = 0, shm_rows = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#')
            continue;
        if (strncmp(line, "params ", 7) == 0) {
            /* One block of rows per duplex factor X (1, then 2). */
            have += sscanf(line + 7, "%lf %lf %lf %lf %lf %lf %lf", &p.L, &p.o_s, &p.o_r, &p.g,
                           &p.G, &gamma, &p.X) == 7;
            continue;
        }
        if (strncmp(line, "shm ", 4) == 0) {
            have += sscanf(line + 4, "%lf %lf %lf %lf", &sp.t, &sp.t_w, &sp.t_ws, &sp.t_a) == 4;
            continue;
        }
        unsigned long long a, b;
        int c, d;
        double want;
        char what[160];
        if (strncmp(line, "shm_bcast ", 10) == 0) {
            if (sscanf(line + 10, "%llu %llu %d %d %lf", &a, &b, &c, &d, &want) != 5)
                goto bad;
            snprintf(what, sizeof what, "shm_bcast m=%llu f=%llu S=%d depth=%d", a, b, c, d);
            check_close(tc_model_shm_bcast_cost((size_t)a, (size_t)b, c, d, &sp), want, 1e-9, what);
            shm_rows++;
            continue;
        }
        int P, k;
        if (sscanf(line, "%63s %d %llu %d %lf", fn, &P, &a, &k, &want) != 5)
            goto bad;
        size_t m = (size_t)a;
        double got;
        if (strcmp(fn, names[0]) == 0)
            got = tc_model_bcast_flat_cost(m, P, &p);
        else if (strcmp(fn, names[1]) == 0)
            got = tc_model_bcast_knomial_cost(m, P, k, &p);
        else if (strcmp(fn, names[2]) == 0)
            got = tc_model_bcast_scatter_allgather_cost(m, P, k, &p);
        else if (strcmp(fn, names[3]) == 0)
            got = tc_model_reduce_flat_cost(m, P, gamma, &p);
        else if (strcmp(fn, names[4]) == 0)
            got = tc_model_reduce_binomial_cost(m, P, gamma, &p);
        else if (strcmp(fn, names[5]) == 0)
            got = tc_model_reduce_rsg_cost(m, P, gamma, &p);
        else if (strcmp(fn, names[6]) == 0)
            got = tc_model_allreduce_recdbl_cost(m, P, gamma, &p);
        else if (strcmp(fn, names[7]) == 0)
            got = tc_model_allreduce_ring_cost(m, P, gamma, &p);
        else
            goto bad;
        snprintf(what, sizeof what, "%s P=%d m=%zu k=%d X=%g", fn, P, m, k, p.X);
        check_close(got, want, 1e-9, what);
        rows++;
        continue;
    bad:
        fprintf(stderr, "FAIL bad table line: %s", line);
        failures++;
    }
    fclose(f);
    check(have == 3, "loggp table has its params lines (X = 1, X = 2, shm)");
    check(rows == 1920, "loggp table: 960 LogGP rows for each X");
    check(shm_rows == 240, "loggp table: 240 shm rows");

    /* Structural facts that do not depend on the table. */
    check(tc_model_bcast_knomial_cost(1000, 7, 7, &p) == tc_model_bcast_flat_cost(1000, 7, &p),
          "k-nomial with k >= P is flat");
    check(tc_model_bcast_scatter_allgather_cost(5, 8, 3, &p) ==
              tc_model_bcast_knomial_cost(5, 8, 3, &p),
          "scatter+allgather with m < P is k-nomial");
    check(tc_model_loggp_msg(1, &p) == p.o_s + p.L + p.o_r, "one byte costs o_s + L + o_r");
}

/* The rendezvous term (logp.h E, rdv): hand-worked values with L = 1,
 * o_s = 0.5, o_r = 0.25, g = 2, G = 0.001, E = 1000 B, rdv = 3. A message of
 * m <= E bytes is eager: 1.75 + (m-1) G; above E it costs rdv more. */
static void test_rendezvous(void)
{
    const tc_logp_t p = {.L = 1, .o_s = 0.5, .o_r = 0.25, .g = 2, .G = 0.001, .E = 1000, .rdv = 3};
    tc_logp_t no = p;
    no.E = 0;
    check_close(tc_model_loggp_msg(1000, &p), 2.749, 1e-12, "rdv: m = E is eager");
    check_close(tc_model_loggp_msg(1001, &p), 5.75, 1e-12, "rdv: m = E + 1 pays rdv");
    check_close(tc_model_loggp_msg(1e6, &no), 1001.749, 1e-12, "rdv: E = 0 means no rendezvous");
    /* Flat, P = 4, 2001 B: msg 0.5 + 2 + 1 + 0.25 + 3 = 6.75, then two send
     * gaps max(2, 0.5 + 2) = 2.5 (the sender's gap has no rendezvous). */
    check_close(tc_model_bcast_flat_cost(2001, 4, &p), 11.75, 1e-12, "rdv: flat bcast");
    /* Binomial reduce, P = 4, 2001 B, gamma 0.001: 2 (6.75 + 2.001). */
    check_close(tc_model_reduce_binomial_cost(2001, 4, 0.001, &p), 17.502, 1e-12,
                "rdv: binomial reduce");
    /* rsg, P = 4, 4000 B: halving 2000 B (6.749 + 2.0) then 1000 B, eager
     * (2.749 + 1.0); gather 2000 B (6.749) and 1000 B (2.749). */
    check_close(tc_model_reduce_rsg_cost(4000, 4, 0.001, &p), 21.996, 1e-12,
                "rdv: rsg pays it only on the halves above E");
    /* Ring allreduce, P = 2, 4000 B: blocks of 2000 B, one exchange with a
     * combine (6.749 + 2.0), one without (6.749). */
    check_close(tc_model_allreduce_ring_cost(4000, 2, 0.001, &p), 15.498, 1e-12, "rdv: ring");
    /* Everything at or below E is as without the term. */
    check(tc_model_reduce_rsg_cost(1000, 4, 0.001, &p) ==
              tc_model_reduce_rsg_cost(1000, 4, 0.001, &no),
          "rdv: no change at m <= E");
}

/* The duplex factor X (logp.h): hand-worked values with L = 1, o_s = 0.5,
 * o_r = 0.25, g = 2, G = 0.001, no rendezvous. One message of m bytes costs
 * 1.75 + (m-1) G; an exchange of m bytes each way 1.75 + X (m-1) G. */
static void test_duplex(void)
{
    const tc_logp_t base = {.L = 1, .o_s = 0.5, .o_r = 0.25, .g = 2, .G = 0.001};
    tc_logp_t x1 = base, x2 = base, x0 = base;
    x1.X = 1;
    x2.X = 2;
    x0.X = 0; /* a struct built without X: as X = 1 */
    check_close(tc_model_loggp_exchange(5000, &x1), 6.749, 1e-12, "duplex: X = 1 exchange");
    check_close(tc_model_loggp_exchange(5000, &x2), 11.748, 1e-12, "duplex: X = 2 exchange");
    check_close(tc_model_loggp_exchange(5000, &x0), 6.749, 1e-12, "duplex: X unset = 1");
    check_close(tc_model_loggp_exchange(1, &x2), 2.0, 1e-12, "duplex: one byte is gap-bound");
    check(tc_model_loggp_exchange(0, &x2) == 0.0, "duplex: nothing to exchange costs 0");
    {
        tc_logp_t r = x2;
        r.E = 1000;
        r.rdv = 3;
        check_close(tc_model_loggp_exchange(5000, &r), 14.748, 1e-12,
                    "duplex: the rendezvous is paid once per round");
    }

    /* Reduce at P = 2, m = 10000 B: binomial is one message and one
     * combine, 1.75 + 9.999 + m gamma; rsg an exchange of 5000 B, a combine
     * of 5000 B and a message of 5000 B. With gamma = 0.0005 < G:
     *   binomial          11.749 + 5.0                 = 16.749
     *   rsg, X = 1         6.749 + 2.5 + 6.749          = 15.998 (wins)
     *   rsg, X = 2        11.748 + 2.5 + 6.749          = 20.997 (loses)
     * (with X = 2 rsg's per-byte part is 1.5 m G + m gamma / 2 against
     * binomial's m G + m gamma: rsg loses when gamma m / 2 < m G / 2). */
    const double gam = 0.0005;
    check_close(tc_model_reduce_binomial_cost(10000, 2, gam, &x2), 16.749, 1e-12,
                "duplex: binomial P = 2");
    check_close(tc_model_reduce_rsg_cost(10000, 2, gam, &x1), 15.998, 1e-12, "duplex: rsg X = 1");
    check_close(tc_model_reduce_rsg_cost(10000, 2, gam, &x2), 20.997, 1e-12, "duplex: rsg X = 2");
    check(tc_model_reduce_rsg_cost(10000, 2, gam, &x1) <
              tc_model_reduce_binomial_cost(10000, 2, gam, &x1),
          "duplex: X = 1, rsg beats binomial at P = 2 (unchanged)");
    check(tc_model_reduce_rsg_cost(10000, 2, gam, &x2) >
              tc_model_reduce_binomial_cost(10000, 2, gam, &x2),
          "duplex: X = 2, rsg loses to binomial at P = 2 when gamma < G");
    /* Combining dominates (gamma = 0.002 > G): rsg still wins with X = 2:
     * binomial 11.749 + 20 = 31.749, rsg 11.748 + 10 + 6.749 = 28.497. */
    check_close(tc_model_reduce_rsg_cost(10000, 2, 0.002, &x2), 28.497, 1e-12,
                "duplex: rsg X = 2, gamma > G");
    check(tc_model_reduce_rsg_cost(10000, 2, 0.002, &x2) <
              tc_model_reduce_binomial_cost(10000, 2, 0.002, &x2),
          "duplex: X = 2, rsg still wins when combining costs more than G");

    /* Allreduce, P = 4, m = 8000 B, gamma = 0.0005, X = 2:
     *   recdbl: 2 (x(8000) + 4) = 2 (1.75 + 15.998 + 4)     = 43.496
     *   ring: blocks of 2000, 3 (x(2000) + 1) + 3 x(2000),
     *         x(2000) = 1.75 + 3.998 = 5.748                = 37.488 */
    check_close(tc_model_allreduce_recdbl_cost(8000, 4, gam, &x2), 43.496, 1e-12,
                "duplex: recdbl X = 2");
    check_close(tc_model_allreduce_ring_cost(8000, 4, gam, &x2), 37.488, 1e-12,
                "duplex: ring X = 2");
    /* Bcast scatter+allgather, P = 4, m = 8000 B, X = 2: scatter 4000 and
     * 2000 B one way (5.749 + 3.749), ring allgather 3 x(2000) = 17.244. */
    check_close(tc_model_bcast_scatter_allgather_cost(8000, 4, 2, &x2), 26.742, 1e-12,
                "duplex: scatter+allgather X = 2");

    /* One-way algorithms do not see X. */
    check(tc_model_bcast_knomial_cost(8000, 4, 2, &x2) ==
                  tc_model_bcast_knomial_cost(8000, 4, 2, &x1) &&
              tc_model_bcast_flat_cost(8000, 4, &x2) == tc_model_bcast_flat_cost(8000, 4, &x1) &&
              tc_model_reduce_flat_cost(8000, 4, gam, &x2) ==
                  tc_model_reduce_flat_cost(8000, 4, gam, &x1) &&
              tc_model_reduce_binomial_cost(8000, 4, gam, &x2) ==
                  tc_model_reduce_binomial_cost(8000, 4, gam, &x1),
          "duplex: flat, k-nomial and binomial do not depend on X");
    /* Every exchange-based formula is the same with X = 0 (unset) and 1. */
    check(tc_model_reduce_rsg_cost(12345, 7, gam, &x0) ==
                  tc_model_reduce_rsg_cost(12345, 7, gam, &x1) &&
              tc_model_allreduce_ring_cost(12345, 7, gam, &x0) ==
                  tc_model_allreduce_ring_cost(12345, 7, gam, &x1) &&
              tc_model_allreduce_recdbl_cost(12345, 7, gam, &x0) ==
                  tc_model_allreduce_recdbl_cost(12345, 7, gam, &x1),
          "duplex: X unset prices as X = 1");
}

/* Second opinion: with depth 1 and t_a = 0 the pipeline cost is the model
 * src/shm/params.c already uses to pick f (in units of t). */
static void test_shm_matches_params(void)
{
    tc_model_shm_t sp = {.t = 0.001, .t_w = 0.05, .t_ws = 0.1, .t_a = 0};
    size_t ms[] = {1, 5000, 1 << 16, 12345678};
    size_t fs[] = {4096, 8192, 65536};
    int Ss[] = {2, 8, 1024};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++)
            for (int l = 0; l < 3; l++) {
                double want = sp.t * tc_shm_params_model_time(ms[i], fs[j], Ss[l], sp.t_w / sp.t,
                                                              sp.t_ws / sp.t);
                check_close(tc_model_shm_bcast_cost(ms[i], fs[j], Ss[l], 1, &sp), want, 1e-9,
                            "shm cost = t * tc_shm_params_model_time at depth 1, t_a 0");
            }
}

/* Paper 002's RMA broadcast costs with the bit-order correction: hand-worked
 * values, the closed forms of R(P, order), and R against the tree the
 * library really runs (src/rma/tree.c). */
static void test_rma_costs(void)
{
    tc_logp_t p = {.L = 2.0, .o_s = 1.0, .o_r = 1.5, .g = 3.0, .G = 0.01};
    /* q = max(o, g) = 3; one step with m = 1001: 1 + 10 + 6 + 2 + 0.5 = 19.5 */
    check_close(tc_model_rma_bcast_binomial_cost(1001, 8, TC_MODEL_RMA_ORDER_DOWN, 0.5, &p),
                19.5 * 3 + 3, 1e-12, "rma binomial down P=8 = 19.5 log2 8 + o + L");
    check_close(tc_model_rma_bcast_binomial_cost(1001, 8, TC_MODEL_RMA_ORDER_UP, 0.5, &p),
                19.5 * 6 + 3, 1e-12, "rma binomial up P=8 = 19.5 * 3*4/2 + o + L");
    /* LogP form (m = 1): (o + 2q + L + o_r) log2 P + o + L */
    check_close(tc_model_rma_bcast_binomial_cost(1, 16, TC_MODEL_RMA_ORDER_DOWN, 1.5, &p),
                (1 + 6 + 2 + 1.5) * 4 + 3, 1e-12, "rma binomial LogP P=16");
    check(tc_model_rma_bcast_binomial_cost(0, 4, TC_MODEL_RMA_ORDER_DOWN, 0.5, &p) ==
              tc_model_rma_bcast_binomial_cost(1, 4, TC_MODEL_RMA_ORDER_DOWN, 0.5, &p),
          "rma: m = 0 costs as m = 1");
    /* Linear, m = 1001: inject 11 > g; 11 + 6 * 11 + 2 L = 81 */
    check_close(tc_model_rma_bcast_linear_cost(1001, 8, &p), 81.0, 1e-12, "rma linear P=8");
    /* m = 1: gap-bound, 1 + 6 * 3 + 4 = 23 */
    check_close(tc_model_rma_bcast_linear_cost(1, 8, &p), 23.0, 1e-12, "rma linear P=8 m=1");
    check(tc_model_rma_bcast_linear_cost(100, 1, &p) == 0.0 &&
              tc_model_rma_bcast_binomial_cost(100, 1, TC_MODEL_RMA_ORDER_UP, 0.5, &p) == 0.0,
          "rma: P = 1 costs 0");
    /* P = 6, upward: 0 -> 1 (step 1), 2 (2), 4 (3); 2 -> 3 (3); 4 -> 5 (4). */
    check(tc_model_rma_binomial_rounds(6, TC_MODEL_RMA_ORDER_UP) == 4, "rma rounds up P=6 = 4");
    check(tc_model_rma_binomial_rounds(6, TC_MODEL_RMA_ORDER_DOWN) == 3, "rma rounds down P=6 = 3");
    for (int k = 0; k <= 10; k++) {
        char what[64];
        snprintf(what, sizeof what, "rma rounds P=2^%d", k);
        check(tc_model_rma_binomial_rounds(1 << k, TC_MODEL_RMA_ORDER_UP) == k * (k + 1) / 2 &&
                  tc_model_rma_binomial_rounds(1 << k, TC_MODEL_RMA_ORDER_DOWN) == k,
              what);
    }
    for (int P = 1; P <= 300; P++) {
        char what[64];
        snprintf(what, sizeof what, "rma rounds P=%d match src/rma/tree.c", P);
        check(tc_model_rma_binomial_rounds(P, TC_MODEL_RMA_ORDER_UP) ==
                      tc_rma_tree_rounds(P, TC_RMA_ORDER_UP) &&
                  tc_model_rma_binomial_rounds(P, TC_MODEL_RMA_ORDER_DOWN) ==
                      tc_rma_tree_rounds(P, TC_RMA_ORDER_DOWN),
              what);
    }
}

int main(void)
{
    test_barrier_table();
    test_shm_barrier_table();
    test_shm_barrier_rules();
    test_paper_values();
    test_argmin();
    test_loggp_table();
    test_rendezvous();
    test_duplex();
    test_shm_matches_params();
    test_rma_costs();
    printf("%d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
