#include "layout.h"

static int tc_is_pow2(size_t x)
{
    return x != 0 && (x & (x - 1)) == 0;
}

static size_t tc_round_up(size_t x, size_t a)
{
    return (x + a - 1) / a * a;
}

int tc_shm_layout_compute(tc_shm_layout_t *l, int p, int S, int q, size_t f, size_t page,
                          size_t line)
{
    if (p < 1 || S < 1 || q < 1 || S % q != 0 || !tc_is_pow2(page) || !tc_is_pow2(line) ||
        line > page || f == 0 || f % page != 0)
        return -1;
    /* Guard the products below: p, S <= 2^20 and f <= 2^30 keep everything
     * far from SIZE_MAX on 64-bit. */
    if (p > (1 << 20) || S > (1 << 20) || f > ((size_t)1 << 30) || (size_t)(q + 1) * line > page)
        return -1;
    l->page = page;
    l->line = line;
    l->p = p;
    l->S = S;
    l->q = q;
    l->f = f;
    l->numa_off = line; /* line 0: magic and parameters */
    l->leaders_off = tc_round_up(l->numa_off + (size_t)p * sizeof(int), line);
    l->header_size = tc_round_up(l->leaders_off + (size_t)p * sizeof(int), page);
    l->ctrl_size = tc_round_up((size_t)(1 + q) * line, page);
    l->region_size = l->ctrl_size + (size_t)S * f;
    l->total = l->header_size + (size_t)p * l->region_size;
    return 0;
}
