#include "layout.h"

static int tc_is_pow2(size_t x)
{
    return x != 0 && (x & (x - 1)) == 0;
}

static size_t tc_round_up(size_t x, size_t a)
{
    return (x + a - 1) / a * a;
}

tc_err_t tc_shm_layout_compute(tc_shm_layout_t *l, int p, int S, int q, size_t f, size_t page,
                               size_t line)
{
    return tc_shm_layout_compute_full(l, p, S, q, f, 0, 0, page, line);
}

tc_err_t tc_shm_layout_compute_full(tc_shm_layout_t *l, int p, int S, int q, size_t f, int rslots,
                                    size_t rslot_bytes, size_t page, size_t line)
{
    if (p < 1 || S < 1 || q < 1 || S % q != 0 || !tc_is_pow2(page) || !tc_is_pow2(line) ||
        line > page || f == 0 || f % page != 0)
        return tc_err(TC_ERR_ARG);
    if (rslots != 0 && (rslots < 2 || rslots > (1 << 20) || rslot_bytes == 0 ||
                        rslot_bytes % line != 0 || rslot_bytes > ((size_t)1 << 30)))
        return tc_err(TC_ERR_ARG);
    /* Guard the products below: p, S <= 2^20 and f <= 2^30 keep everything
     * far from SIZE_MAX on 64-bit. */
    if (p > (1 << 20) || S > (1 << 20) || f > ((size_t)1 << 30) || (size_t)(q + 1) * line > page)
        return tc_err(TC_ERR_ARG);
    l->page = page;
    l->line = line;
    l->p = p;
    l->S = S;
    l->q = q;
    l->f = f;
    l->numa_off = line; /* line 0: magic and parameters */
    l->leaders_off = tc_round_up(l->numa_off + (size_t)p * sizeof(int), line);
    l->store_lock_off = l->store_off = l->store_bytes = 0;
    l->header_size = tc_round_up(l->leaders_off + (size_t)p * sizeof(int), page);
    l->rslots = rslots;
    l->rdepth = rslots;
    l->ridx_off = 0;
    l->rslot_bytes = rslots ? rslot_bytes : 0;
    l->rctrl_off = (size_t)(1 + q) * line;
    int brounds = 0;
    while ((1 << brounds) < p)
        brounds++;
    l->brounds = brounds;
    size_t ctrl_lines =
        (size_t)(1 + q) + (rslots ? TC_SHM_RLINE_INLINE0 + TC_SHM_REDUCE_INLINE_SLOTS : 0);
    l->bctrl_off = ctrl_lines * line;
    ctrl_lines += TC_SHM_BLINE_ROUND0 + 2 * (size_t)brounds;
    l->sleepers_off = ctrl_lines * line;
    ctrl_lines += 1;
    l->race_off = ctrl_lines * line;
    ctrl_lines += TC_SHM_RACE_RING0 + (TC_SHM_RACE_RING * sizeof(double) + line - 1) / line;
    l->iline_off = ctrl_lines * line;
    ctrl_lines += (size_t)q * (TC_SHM_BCAST_INLINE_LINES - 1);
    l->bring_off = ctrl_lines * line;
    ctrl_lines += 1 + (size_t)TC_SHM_BCAST_RING;
    l->pring_off = rslots ? ctrl_lines * line : 0;
    if (rslots)
        ctrl_lines += 1 + tc_shm_layout_plines(line);
    l->ctrl_size = tc_round_up(ctrl_lines * line, page);
    l->rdata_off = l->ctrl_size + (size_t)S * f;
    l->region_size = l->rdata_off + 2 * (size_t)l->rslots * l->rslot_bytes;
    /* Regions stay page aligned (placement is per page). */
    l->region_size = tc_round_up(l->region_size, page);
    l->total = l->header_size + (size_t)p * l->region_size;
    return TC_OK;
}

tc_err_t tc_shm_layout_set_rdepth(tc_shm_layout_t *l, int rdepth)
{
    if (l->rslots == 0 || rdepth < 2 || rdepth > l->rslots)
        return tc_err(TC_ERR_ARG);
    l->rdepth = rdepth;
    l->ridx_off = 0;
    size_t end = l->rdata_off + 2 * (size_t)l->rslots * l->rslot_bytes;
    if (rdepth < l->rslots) {
        l->ridx_off = end;
        end += (size_t)l->rslots * sizeof(uint32_t);
    }
    l->region_size = tc_round_up(end, l->page);
    l->total = l->header_size + (size_t)l->p * l->region_size;
    return TC_OK;
}

tc_err_t tc_shm_layout_add_store(tc_shm_layout_t *l, size_t lock_bytes, size_t area_bytes)
{
    const size_t max = (size_t)1 << 30;
    if (lock_bytes > max || area_bytes > max || (area_bytes != 0 && area_bytes < 2 * l->line))
        return tc_err(TC_ERR_ARG);
    size_t end = l->leaders_off + (size_t)l->p * sizeof(int);
    if (area_bytes == 0) {
        l->store_lock_off = l->store_off = l->store_bytes = 0;
    } else {
        /* The lock and the area each start on a fresh line: the lock's lines are
         * written by every reader, the area only by the leader. */
        l->store_lock_off = tc_round_up(end, l->line);
        l->store_off = l->store_lock_off + tc_round_up(lock_bytes, l->line);
        l->store_bytes = tc_round_up(area_bytes, l->line);
        end = l->store_off + l->store_bytes;
    }
    l->header_size = tc_round_up(end, l->page);
    l->total = l->header_size + (size_t)l->p * l->region_size;
    return TC_OK;
}
