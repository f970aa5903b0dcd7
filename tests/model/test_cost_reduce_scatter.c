/* Reduce_scatter costs (src/model/cost_reduce_scatter.c) against values
 * worked out by hand from the formulas in cost_reduce_scatter.h, with
 * t = 0.001, t_w = 0.5, gamma = 0.002 so every term is visible. */
#include <math.h>
#include <stdio.h>

#include "model/cost_reduce_scatter.h"

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
    const double gamma = 0.002;
    check_close(tc_model_shm_reduce_scatter_cost(0, 1024, 4, gamma, 56, &sp), 0.0, "shm m = 0");
    check_close(tc_model_shm_reduce_scatter_cost(100, 1024, 1, gamma, 56, &sp), 0.0, "shm p = 1");
    /* Inline (4 x 8 = 32 B <= 56): 32 t + 3 t_w + 3 * 8 gamma + 8 t
     * = 0.032 + 1.5 + 0.048 + 0.008. */
    check_close(tc_model_shm_reduce_scatter_cost(8, 1024, 4, gamma, 56, &sp), 1.588, "shm inline");
    /* 4 x 1000 B in fragments of 1024 (4 of them): 3000 t + 3 t_w + 3 t_w
     * + 3 * 1000 (t + gamma) = 3 + 1.5 + 1.5 + 9. */
    check_close(tc_model_shm_reduce_scatter_cost(1000, 1024, 4, gamma, 56, &sp), 15.0,
                "shm fragments");
    /* Pairwise: o_s = 1, L = 2, o_r = 1, G = 0.01, no eager limit: a 101-byte
     * message costs 1 + 100 * 0.01 + 2 + 1 = 5; two steps of 5 + 101 gamma. */
    const tc_logp_t lp = {.L = 2.0, .o_s = 1.0, .o_r = 1.0, .g = 0.5, .G = 0.01};
    check_close(tc_model_reduce_scatter_pairwise_cost(101, 3, gamma, &lp), 10.404, "pairwise P 3");
    check_close(tc_model_reduce_scatter_pairwise_cost(0, 3, gamma, &lp), 0.0, "pairwise m = 0");
    check_close(tc_model_reduce_scatter_pairwise_cost(101, 1, gamma, &lp), 0.0, "pairwise P 1");
    /* Each step a Sendrecv: with the duplex factor X = 2 a share's bytes
     * cost twice, 1 + 2 * 100 * 0.01 + 2 + 1 = 6 per step. */
    tc_logp_t lp2 = lp;
    lp2.X = 2.0;
    check_close(tc_model_reduce_scatter_pairwise_cost(101, 3, gamma, &lp2), 12.404,
                "pairwise P 3, X 2");
    printf("model_cost_reduce_scatter: %d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
