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
    printf("model_cost_gather: %d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
