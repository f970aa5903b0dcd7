/* Alltoall(v) costs across nodes (src/model/cost_alltoall.c) against values
 * worked out by hand from the formulas in cost_alltoall.h. LogGP with L = 2,
 * o_s = o_r = 0.5, g = 1, G = 0.01, no rendezvous, at both levels unless
 * said: msg(b) = 3 + (b - 1) 0.01, sg(b) = rg(b) = max(1, 0.5 + (b - 1) 0.01);
 * a byte copied costs 0.001. */
#include <math.h>
#include <stdio.h>

#include "model/cost_alltoall.h"

static int failures, checks;

static void check_close(double got, double want, const char *what)
{
    checks++;
    if (!(fabs(got - want) <= 1e-9 * fmax(1.0, fabs(want)))) {
        failures++;
        fprintf(stderr, "FAIL %s: got %.17g, want %.17g\n", what, got, want);
    }
}

static void check(int ok, const char *what)
{
    checks++;
    if (!ok) {
        failures++;
        fprintf(stderr, "FAIL %s\n", what);
    }
}

int main(void)
{
    const tc_logp_t lp = {2.0, 0.5, 0.5, 1.0, 0.01, 0.0, 0.0, 0.0, 1.0};
    const double copy = 0.001;
    /* Two nodes of two. */
    const int two[] = {0, 2, 4};
    check_close(tc_model_alltoall_aggregated_cost(0, 2, two, 0, false, copy, &lp, &lp), 0.0,
                "aggregated m = 0");
    check_close(tc_model_alltoall_direct_cost(0, 2, two, 0, &lp, &lp), 0.0, "direct m = 0");
    const int one[] = {0, 4};
    check_close(tc_model_alltoall_aggregated_cost(10, 1, one, 0, false, copy, &lp, &lp), 0.0,
                "aggregated one node");
    check_close(tc_model_alltoall_direct_cost(10, 1, one, 0, &lp, &lp), 0.0, "direct one node");
    /* m = 10, rows of 40 B: up msg(40) = 3.39, across one message of
     * 2 x 2 x 10 = 40 B (3.39), down 3.39, copies (2 x 2 + 2 x 4) x 10 B
     * = 0.12: 10.29. */
    check_close(tc_model_alltoall_aggregated_cost(10, 2, two, 0, false, copy, &lp, &lp), 10.29,
                "aggregated 2x2, 10 B");
    check_close(tc_model_alltoall_aggregated_max(10, 2, two, false, copy, &lp, &lp), 10.29,
                "aggregated 2x2, 10 B, max");
    /* Alltoallv: the sizes rows first, msg(32) = 3.31. */
    check_close(tc_model_alltoall_aggregated_cost(10, 2, two, 0, true, copy, &lp, &lp), 13.6,
                "aggregated v 2x2, 10 B");
    /* Direct: msg(10) = 3.09, one more block across and one within the node,
     * a gap of 1 each: 5.09. */
    check_close(tc_model_alltoall_direct_cost(10, 2, two, 0, &lp, &lp), 5.09, "direct 2x2, 10 B");
    /* Uneven, nodes of 3, 1 and 2 (p = 6), m = 10, rows of 60 B.
     * Node 0: up msg(60) + rg(60) = 3.59 + 1.09, down the same; copies
     * (3 x 3 + 3 x 6) x 10 B = 0.27; across the largest, to node 2,
     * 3 x 2 x 10 = 60 B whole (3.59), to node 1 30 B, a gap of
     * max(1, 0.79) = 1: 14.22. */
    const int uneven[] = {0, 3, 4, 6};
    check_close(tc_model_alltoall_aggregated_cost(10, 3, uneven, 0, false, copy, &lp, &lp), 14.22,
                "aggregated 3+1+2 node 0");
    /* Node 1 (alone): no members; copies (1 x 5 + 1 x 6) x 10 B = 0.11;
     * across 30 B to node 0 whole (3.29), 20 B to node 2 a gap (1): 4.4. */
    check_close(tc_model_alltoall_aggregated_cost(10, 3, uneven, 1, false, copy, &lp, &lp), 4.4,
                "aggregated 3+1+2 node 1");
    /* Node 2: up 3.59, down 3.59, copies (2 x 4 + 2 x 6) x 10 B = 0.2,
     * across 60 B to node 0 (3.59) and 20 B to node 1 (1): 11.97. */
    check_close(tc_model_alltoall_aggregated_cost(10, 3, uneven, 2, false, copy, &lp, &lp), 11.97,
                "aggregated 3+1+2 node 2");
    check_close(tc_model_alltoall_aggregated_max(10, 3, uneven, false, copy, &lp, &lp), 14.22,
                "aggregated 3+1+2 max");
    /* Direct, every node: msg(10) + 4 gaps of 1 (p - 2 other blocks). */
    for (int a = 0; a < 3; a++)
        check_close(tc_model_alltoall_direct_cost(10, 3, uneven, a, &lp, &lp), 7.09,
                    "direct 3+1+2");
    check_close(tc_model_alltoall_direct_max(10, 3, uneven, &lp, &lp), 7.09, "direct 3+1+2 max");
    /* The levels apart: node level (members <-> leader) with G = 0.02 makes
     * up and down msg(40) = 3.78 each on two nodes of two; across stays 3.39:
     * 3.78 x 2 + 3.39 + 0.12 = 11.07. Direct: the block within the node pays
     * the node level's gap max(1, 0.5 + 9 x 0.02) = 1: 5.09. */
    const tc_logp_t slow = {2.0, 0.5, 0.5, 1.0, 0.02, 0.0, 0.0, 0.0, 1.0};
    check_close(tc_model_alltoall_aggregated_cost(10, 2, two, 0, false, copy, &slow, &lp), 11.07,
                "aggregated 2x2, node level apart");
    check_close(tc_model_alltoall_direct_cost(10, 2, two, 0, &slow, &lp), 5.09,
                "direct 2x2, node level apart");
    /* Here the direct exchange is cheaper at every size: no crossover. */
    check(tc_model_alltoall_crossover(1 << 20, 2, two, false, copy, &lp, &lp) == 0,
          "2x2: no crossover");
    /* Many processes per node, cheap inside a node, costly messages between
     * nodes: the aggregation wins for small blocks and loses for large ones
     * (a leader carries 8 x 8 blocks per node pair). */
    const tc_logp_t in = {0.1, 0.05, 0.05, 0.05, 0.0001, 0.0, 0.0, 0.0, 1.0};
    const tc_logp_t net = {2.0, 1.0, 1.0, 2.0, 0.001, 0.0, 0.0, 0.0, 1.0};
    const int big[] = {0, 8, 16, 24, 32};
    const size_t x = tc_model_alltoall_crossover(1 << 20, 4, big, false, copy, &in, &net);
    check(x > 0 && x < (1 << 20), "4x8: a crossover below the limit");
    for (size_t m = 1; m <= x; m <<= 1)
        check(tc_model_alltoall_aggregated_max(m, 4, big, false, copy, &in, &net) <
                  tc_model_alltoall_direct_max(m, 4, big, &in, &net),
              "4x8: the aggregation cheaper up to the crossover");
    check(tc_model_alltoall_aggregated_max(2 * x, 4, big, false, copy, &in, &net) >=
              tc_model_alltoall_direct_max(2 * x, 4, big, &in, &net),
          "4x8: the direct exchange at twice the crossover");
    check(tc_model_alltoall_crossover(x / 2 ? x / 2 : 1, 4, big, false, copy, &in, &net) ==
              (x / 2 ? x / 2 : 1),
          "4x8: the crossover capped at the limit");
    /* More bytes never cost less. */
    double pa = 0.0, pd = 0.0;
    for (size_t m = 1; m <= (1u << 20); m <<= 1) {
        const double ag = tc_model_alltoall_aggregated_max(m, 3, uneven, true, copy, &in, &net);
        const double di = tc_model_alltoall_direct_max(m, 3, uneven, &in, &net);
        check(ag >= pa && di >= pd, "costs non-decreasing in m");
        pa = ag;
        pd = di;
    }
    printf("test_cost_alltoall: %d checks, %d failures\n", checks, failures);
    return failures != 0;
}
