#include "cost_gather.h"

#include <math.h>

static double tc_model_gather_uses(size_t m, size_t chunk)
{
    return chunk ? (double)((m + chunk - 1) / chunk) : 1.0;
}

double tc_model_shm_allgather_cost(size_t m, size_t chunk, int p, const tc_model_shm_t *sp)
{
    if (m == 0 || p <= 1)
        return 0.0;
    return (double)p * (double)m * sp->t + (double)(p - 1) * sp->t_w +
           (tc_model_gather_uses(m, chunk) - 1.0) * sp->t_ws;
}

double tc_model_shm_scatter_cost(size_t m, size_t chunk, int p, const tc_model_shm_t *sp)
{
    if (m == 0 || p <= 1)
        return 0.0;
    return (double)p * (double)m * sp->t + sp->t_w +
           (tc_model_gather_uses(m, chunk) - 1.0) * sp->t_ws;
}

double tc_model_shm_alltoall_cost(size_t m, size_t chunk, int p, const tc_model_shm_t *sp)
{
    if (m == 0 || p <= 1)
        return 0.0;
    return 2.0 * (double)(p - 1) * (double)m * sp->t + (double)(p - 1) * sp->t_w +
           (tc_model_gather_uses(m, chunk) - 1.0) * sp->t_ws;
}

/* One round: b bytes out and b bytes in at once (the level's duplex factor
 * applies). */
static double tc_model_ag_round(double b, const tc_logp_t *p)
{
    return tc_model_loggp_exchange(b, p);
}

double tc_model_allgather_ring_cost(size_t n, int P, const tc_logp_t *p)
{
    if (n == 0 || P <= 1)
        return 0.0;
    return (P - 1) * tc_model_ag_round((double)n / P, p);
}

double tc_model_allgather_recdbl_cost(size_t n, int P, const tc_logp_t *p)
{
    if (n == 0 || P <= 1)
        return 0.0;
    if (P & (P - 1))
        return HUGE_VAL;
    double c = 0.0;
    for (int d = 1; d < P; d <<= 1)
        c += tc_model_ag_round((double)n * d / P, p);
    return c;
}

double tc_model_allgather_bruck_cost(size_t n, int P, double copy, const tc_logp_t *p)
{
    if (n == 0 || P <= 1)
        return 0.0;
    double c = (double)n * copy;
    for (int d = 1; d < P; d <<= 1)
        c += tc_model_ag_round((double)n * (d < P - d ? d : P - d) / P, p);
    return c;
}
