/* Shared-memory Allgather/Gather/Scatter costs (src/model/cost_gather.c)
 * against values worked out by hand from the formulas in cost_gather.h, with
 * t = 0.001, t_w = 0.5, t_ws = 0.25 so every term is visible. */
#include <math.h>
#include <stdio.h>

#include "model/cost_gather.h"

static int failures, checks;

static void check_close(double got, double want, const char *what)
{
    checks++;
    if (!(fabs(got - want) <= 1e-9 * fmax(1.0, fabs(want)))) {
        failures++;
        fprintf(stderr, "FAIL %s: got %.17g, want %.17g\n", what, got, want);
    }
}

int main(void)
{
    const tc_model_shm_t sp = {0.001, 0.5, 0.25, 0.2};
    /* Nothing to move. */
    check_close(tc_model_shm_allgather_cost(0, 4096, 4, &sp), 0.0, "allgather m = 0");
    check_close(tc_model_shm_allgather_cost(100, 4096, 1, &sp), 0.0, "allgather p = 1");
    check_close(tc_model_shm_scatter_cost(0, 4096, 4, &sp), 0.0, "scatter m = 0");
    /* One bank use: p m t + (p - 1) t_w = 4 * 1000 * 0.001 + 3 * 0.5 = 5.5. */
    check_close(tc_model_shm_allgather_cost(1000, 4096, 4, &sp), 5.5, "allgather 1000 B, p 4");
    /* An inline block (chunk = m): 2 * 8 * 0.001 + 0.5 = 0.516. */
    check_close(tc_model_shm_allgather_cost(8, 8, 2, &sp), 0.516, "allgather 8 B, p 2");
    /* Three bank uses (10000 / 4096): + 2 t_ws: 3 * 10 + 2 * 0.5 + 2 * 0.25 = 31.5. */
    check_close(tc_model_shm_allgather_cost(10000, 4096, 3, &sp), 31.5, "allgather 3 uses");
    /* Scatter: one notification on the path: 4 * 1000 * 0.001 + 0.5 = 4.5;
     * with three uses 3 * 10 + 0.5 + 0.5 = 31. */
    check_close(tc_model_shm_scatter_cost(1000, 4096, 4, &sp), 4.5, "scatter 1000 B, p 4");
    check_close(tc_model_shm_scatter_cost(10000, 4096, 3, &sp), 31.0, "scatter 3 uses");
    /* More processes never cost less. */
    checks++;
    if (tc_model_shm_allgather_cost(4096, 65536, 8, &sp) <=
        tc_model_shm_allgather_cost(4096, 65536, 4, &sp)) {
        failures++;
        fprintf(stderr, "FAIL allgather cost not increasing in p\n");
    }
    /* The hierarchical Allgather's top exchange, LogGP with L = 2, o = 0.5,
     * g = 1, G = 0.01, no rendezvous: a round of b bytes costs
     * max(1, 3 + (b - 1) 0.01). */
    const tc_logp_t lp = {2.0, 0.5, 0.5, 1.0, 0.01, 0.0, 0.0, 0.0, 1.0};
    check_close(tc_model_allgather_ring_cost(0, 4, &lp), 0.0, "ring n = 0");
    check_close(tc_model_allgather_ring_cost(400, 1, &lp), 0.0, "ring P = 1");
    /* Ring, 400 B over 4: 3 rounds of 100 B = 3 * 3.99. */
    check_close(tc_model_allgather_ring_cost(400, 4, &lp), 11.97, "ring 400 B, P 4");
    /* Recursive doubling: rounds of 100 and 200 B: 3.99 + 4.99. */
    check_close(tc_model_allgather_recdbl_cost(400, 4, &lp), 8.98, "recdbl 400 B, P 4");
    checks++;
    if (!isinf(tc_model_allgather_recdbl_cost(300, 3, &lp))) {
        failures++;
        fprintf(stderr, "FAIL recdbl on 3 members must cost HUGE_VAL (it runs Bruck)\n");
    }
    /* Bruck, 300 B over 3: rounds of min(1, 2) and min(2, 1) pieces of
     * 100 B, plus 300 B copied at 0.001: 2 * 3.99 + 0.3. */
    check_close(tc_model_allgather_bruck_cost(300, 3, 0.001, &lp), 8.28, "bruck 300 B, P 3");
    /* Tiny pieces: the gap g bounds a round from below (3 rounds of 1 B:
     * max(1, 3) = 3 each). */
    check_close(tc_model_allgather_ring_cost(4, 4, &lp), 9.0, "ring 4 B, P 4");
    /* Duplex factor X = 2 (the two directions of a round serialise): a
     * round of b bytes costs max(1, 3 + 2 (b - 1) 0.01). Ring: 3 rounds of
     * 100 B, 3 * 4.98; recursive doubling: 4.98 + 6.98. */
    tc_logp_t lp2 = lp;
    lp2.X = 2.0;
    check_close(tc_model_allgather_ring_cost(400, 4, &lp2), 14.94, "ring 400 B, P 4, X 2");
    check_close(tc_model_allgather_recdbl_cost(400, 4, &lp2), 11.96, "recdbl 400 B, P 4, X 2");
    check_close(tc_model_allgather_bruck_cost(300, 3, 0.001, &lp2), 10.26,
                "bruck 300 B, P 3, X 2 (2 * 4.98 + 0.3)");
    printf("model_cost_gather: %d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
