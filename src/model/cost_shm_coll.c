/* Shared-memory Reduce/Allreduce costs (see cost_shm_coll.h and
 * docs/model.md, "Prediction of a whole collective"). */
#include "cost_shm_coll.h"

#include <math.h>

/* reduce.c clamps the arity the same way (TC_RED_TREE_MAX_ARITY). */
#define TC_MODEL_SHM_TREE_MAX_ARITY 64

/* The arity clamped to 2..TC_MODEL_SHM_TREE_MAX_ARITY, as reduce.c does. */
static int tc_model_shm_tree_arity(int arity)
{
    return arity < 2                             ? 2
           : arity > TC_MODEL_SHM_TREE_MAX_ARITY ? TC_MODEL_SHM_TREE_MAX_ARITY
                                                 : arity;
}

static double tc_model_shm_nfrag(size_t m, size_t f)
{
    return f == 0 ? 1.0 : ceil((double)m / (double)f);
}

static size_t tc_model_shm_first(size_t m, size_t f)
{
    return f == 0 || f > m ? m : f;
}

void tc_model_shm_from_shm_row(const tc_logp_t *shm, tc_model_shm_t *out)
{
    out->t = shm->G / 2;
    out->t_w = shm->L + shm->o_r;
    out->t_ws = shm->L + shm->o_r;
    out->t_a = shm->g;
}

tc_model_shm_red_t tc_model_shm_reduce_scheme(size_t m, size_t f, int p,
                                              const tc_model_shm_red_cfg_t *cfg)
{
    if (m == 0 || p <= 1)
        return TC_MODEL_SHM_RED_LAST;
    const int tree_ok = p > 2 && cfg->tree_max > 0;
    if (m <= cfg->inline_max)
        return tree_ok && m <= cfg->tree_max ? TC_MODEL_SHM_RED_INLINE_TREE
                                             : TC_MODEL_SHM_RED_INLINE;
    if (p > 2 && f >= cfg->slice_min)
        return TC_MODEL_SHM_RED_SLICE;
    if (tree_ok && tc_model_shm_first(m, f) <= cfg->tree_max)
        return TC_MODEL_SHM_RED_TREE;
    return TC_MODEL_SHM_RED_DIRECT;
}

double tc_model_shm_reduce_direct_cost(size_t m, size_t f, int p, double gamma, int inline_msg,
                                       const tc_model_shm_t *sp)
{
    if (m == 0 || p <= 1)
        return 0.0;
    const double md = (double)m, peers = (double)(p - 1);
    if (inline_msg)
        return md * sp->t + peers * sp->t_w + peers * md * gamma + md * sp->t;
    const double x = (double)tc_model_shm_first(m, f);
    return x * sp->t + peers * sp->t_w + (tc_model_shm_nfrag(m, f) - 1.0) * sp->t_w +
           peers * md * (sp->t + gamma);
}

double tc_model_shm_reduce_slice_cost(size_t m, size_t f, int p, double gamma,
                                      const tc_model_shm_t *sp)
{
    if (m == 0 || p <= 1)
        return 0.0;
    const double md = (double)m, pd = (double)p;
    return 3.0 * md * sp->t + (pd - 1.0) / pd * md * gamma + 2.0 * (pd - 1.0) * sp->t_w +
           2.0 * (tc_model_shm_nfrag(m, f) - 1.0) * sp->t_w;
}

/* U of the range [lo, lo + n) headed by lo (only n matters: the shape of a
 * subtree depends on its size alone). */
static double tc_model_shm_tree_up_range(int n, int k, double x, double gamma,
                                         const tc_model_shm_t *sp)
{
    if (n <= 1)
        return x * sp->t;
    const int m = n - 1, c = m < k ? m : k;
    double worst = 0.0;
    for (int j = 0; j < c; j++) {
        /* Chunk j starts at 1 + m j / c (relative to lo), as in reduce.c. */
        const int start = (int)((long long)m * j / c), end = (int)((long long)m * (j + 1) / c);
        const double u = tc_model_shm_tree_up_range(end - start, k, x, gamma, sp);
        if (u > worst)
            worst = u;
    }
    return worst + (double)c * (sp->t_w + x * (sp->t + gamma));
}

double tc_model_shm_tree_up_cost(size_t x, int p, int arity, double gamma, const tc_model_shm_t *sp)
{
    if (x == 0 || p <= 1)
        return 0.0;
    const int k = tc_model_shm_tree_arity(arity);
    return tc_model_shm_tree_up_range(p, k, (double)x, gamma, sp);
}

double tc_model_shm_reduce_tree_cost(size_t m, size_t f, int p, int arity, double gamma,
                                     const tc_model_shm_t *sp)
{
    if (m == 0 || p <= 1)
        return 0.0;
    const int k = tc_model_shm_tree_arity(arity);
    const size_t x = tc_model_shm_first(m, f);
    const double c0 = (double)(p - 1 < k ? p - 1 : k);
    return tc_model_shm_tree_up_cost(x, p, k, gamma, sp) + sp->t_w + (double)x * sp->t +
           (tc_model_shm_nfrag(m, f) - 1.0) * sp->t_w + c0 * (double)(m - x) * (sp->t + gamma);
}

double tc_model_shm_reduce_cost(size_t m, size_t f, int p, double gamma,
                                const tc_model_shm_red_cfg_t *cfg, const tc_model_shm_t *sp)
{
    switch (tc_model_shm_reduce_scheme(m, f, p, cfg)) {
    case TC_MODEL_SHM_RED_INLINE:
        return tc_model_shm_reduce_direct_cost(m, m, p, gamma, 1, sp);
    case TC_MODEL_SHM_RED_INLINE_TREE:
        return tc_model_shm_reduce_tree_cost(m, m, p, cfg->tree_arity, gamma, sp);
    case TC_MODEL_SHM_RED_DIRECT:
        return tc_model_shm_reduce_direct_cost(m, f, p, gamma, 0, sp);
    case TC_MODEL_SHM_RED_SLICE:
        return tc_model_shm_reduce_slice_cost(m, f, p, gamma, sp);
    case TC_MODEL_SHM_RED_TREE:
        return tc_model_shm_reduce_tree_cost(m, f, p, cfg->tree_arity, gamma, sp);
    default:
        return 0.0;
    }
}

double tc_model_shm_scan_chain_cost(size_t m, size_t f, int p, double gamma,
                                    const tc_model_shm_t *sp)
{
    if (m == 0 || p <= 1)
        return 0.0;
    const double x = (double)tc_model_shm_first(m, f);
    const double hops = (double)(p - 2) + tc_model_shm_nfrag(m, f);
    return 2.0 * x * sp->t + hops * (sp->t_w + x * (sp->t + gamma));
}

static int tc_model_ceil_log2(int n)
{
    int r = 0;
    while ((1 << r) < n)
        r++;
    return r;
}

double tc_model_shm_scan_rounds_cost(size_t m, int p, double gamma, const tc_model_shm_t *sp)
{
    if (m == 0 || p <= 1)
        return 0.0;
    const double md = (double)m;
    return md * sp->t + (double)tc_model_ceil_log2(p) * (sp->t_w + md * (2.0 * sp->t + gamma));
}

double tc_model_exscan_recdbl_cost(size_t m, int n, double gamma, const tc_logp_t *lp)
{
    if (m == 0 || n <= 1)
        return 0.0;
    const double md = (double)m;
    /* Each round a Sendrecv of m bytes: both directions' bytes at X G. */
    double step = lp->L + lp->o_s + lp->o_r + tc_logp_duplex(lp) * md * lp->G + md * gamma;
    if (lp->E > 0 && md > lp->E)
        step += lp->rdv;
    return (double)tc_model_ceil_log2(n) * step;
}
