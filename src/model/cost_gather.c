#include "cost_gather.h"

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
