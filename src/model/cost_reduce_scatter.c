/* Reduce_scatter costs (formulas in cost_reduce_scatter.h). */
#include "cost_reduce_scatter.h"

double tc_model_shm_reduce_scatter_cost(size_t m, size_t f, int p, double gamma, size_t inline_max,
                                        const tc_model_shm_t *sp)
{
    if (m == 0 || p <= 1)
        return 0.0;
    const double md = (double)m, peers = (double)(p - 1), whole = md * (double)p;
    if (whole <= (double)inline_max)
        return whole * sp->t + peers * sp->t_w + peers * md * gamma + md * sp->t;
    const size_t fr = f ? f : 1;
    const double nfrag = (double)(((size_t)p * m + fr - 1) / fr);
    return (whole - md) * sp->t + peers * sp->t_w + (nfrag - 1.0) * sp->t_w +
           peers * md * (sp->t + gamma);
}

double tc_model_reduce_scatter_pairwise_cost(size_t m, int P, double gamma, const tc_logp_t *p)
{
    if (m == 0 || P <= 1)
        return 0.0;
    /* Each step a Sendrecv: a share out and a share in at once. */
    return (double)(P - 1) * (tc_model_loggp_exchange((double)m, p) + (double)m * gamma);
}
