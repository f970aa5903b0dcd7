/* Alltoall(v) across nodes (formulas in cost_alltoall.h). */
#include "cost_alltoall.h"

#include "cost.h"

static double tc_model_a2a_max(double a, double b)
{
    return a > b ? a : b;
}

/* sg(b) and rg(b) of cost.h (docs/model.md, "LogGP costs"). */
static double tc_model_a2a_sg(double b, const tc_logp_t *p)
{
    return tc_model_a2a_max(p->g, p->o_s + tc_model_a2a_max(b - 1.0, 0.0) * p->G);
}
static double tc_model_a2a_rg(double b, const tc_logp_t *p)
{
    return tc_model_a2a_max(p->g, p->o_r + tc_model_a2a_max(b - 1.0, 0.0) * p->G);
}

/* P - 1 messages of b bytes into one process (@p in) or out of it: the
 * first whole, the others one gap each. */
static double tc_model_a2a_fan(double b, int P, bool in, const tc_logp_t *p)
{
    if (P <= 1 || b <= 0.0)
        return 0.0;
    return tc_model_loggp_msg(b, p) +
           (double)(P - 2) * (in ? tc_model_a2a_rg(b, p) : tc_model_a2a_sg(b, p));
}

/* Processes of node k. */
#define TC_MODEL_A2A_N(k) (start[(k) + 1] - start[(k)])

double tc_model_alltoall_aggregated_cost(size_t m, int n, const int *start, int a, bool v,
                                         double copy, const tc_logp_t *node, const tc_logp_t *top)
{
    const int p = start[n], na = TC_MODEL_A2A_N(a);
    if (m == 0 || p <= 1 || n <= 1)
        return 0.0;
    const double md = (double)m, row = (double)p * md;
    double t = tc_model_a2a_fan(row, na, true, node) + tc_model_a2a_fan(row, na, false, node);
    if (v) /* the sizes rows (2p 4-byte sizes) ahead of the blocks */
        t += tc_model_a2a_fan(8.0 * (double)p, na, true, node);
    t += ((double)na * (double)(p - na) + (double)na * (double)p) * md * copy;
    /* Across: the largest message whole, every other one a gap. */
    int big = -1;
    for (int b = 0; b < n; b++)
        if (b != a && (big < 0 || TC_MODEL_A2A_N(b) > TC_MODEL_A2A_N(big)))
            big = b;
    t += tc_model_loggp_msg((double)na * (double)TC_MODEL_A2A_N(big) * md, top);
    for (int b = 0; b < n; b++)
        if (b != a && b != big) {
            const double x = (double)na * (double)TC_MODEL_A2A_N(b) * md;
            t += tc_model_a2a_max(tc_model_a2a_sg(x, top), tc_model_a2a_rg(x, top));
        }
    return t;
}

double tc_model_alltoall_direct_cost(size_t m, int n, const int *start, int a,
                                     const tc_logp_t *node, const tc_logp_t *top)
{
    const int p = start[n], na = TC_MODEL_A2A_N(a);
    if (m == 0 || p <= 1 || n <= 1)
        return 0.0;
    const double md = (double)m;
    return tc_model_loggp_msg(md, top) +
           (double)(p - na - 1) *
               tc_model_a2a_max(tc_model_a2a_sg(md, top), tc_model_a2a_rg(md, top)) +
           (double)(na - 1) *
               tc_model_a2a_max(tc_model_a2a_sg(md, node), tc_model_a2a_rg(md, node));
}

double tc_model_alltoall_aggregated_max(size_t m, int n, const int *start, bool v, double copy,
                                        const tc_logp_t *node, const tc_logp_t *top)
{
    double t = 0.0;
    for (int a = 0; a < n; a++)
        t = tc_model_a2a_max(t,
                             tc_model_alltoall_aggregated_cost(m, n, start, a, v, copy, node, top));
    return t;
}

double tc_model_alltoall_direct_max(size_t m, int n, const int *start, const tc_logp_t *node,
                                    const tc_logp_t *top)
{
    double t = 0.0;
    for (int a = 0; a < n; a++)
        t = tc_model_a2a_max(t, tc_model_alltoall_direct_cost(m, n, start, a, node, top));
    return t;
}

size_t tc_model_alltoall_crossover(size_t limit, int n, const int *start, bool v, double copy,
                                   const tc_logp_t *node, const tc_logp_t *top)
{
    size_t best = 0;
    for (size_t m = 1; m > 0 && m <= limit; m <<= 1) {
        if (tc_model_alltoall_aggregated_max(m, n, start, v, copy, node, top) >=
            tc_model_alltoall_direct_max(m, n, start, node, top))
            break;
        best = m;
    }
    return best;
}
