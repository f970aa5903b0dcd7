#include "params.h"

#include <math.h>

/* TC_CACHELINE comes from the build (CMake option TOPOCOLL_CACHELINE). */
#ifndef TC_CACHELINE
#error "TC_CACHELINE must be defined by the build"
#endif

size_t tc_shm_params_fragment(size_t design_bytes, double tw_over_t, size_t page)
{
    double fstar = sqrt((double)design_bytes * tw_over_t);
    size_t f = (size_t)ceil(fstar / (double)page) * page;
    return f < page ? page : f;
}

int tc_shm_params_queue_length(size_t budget_bytes, size_t f, int q)
{
    size_t s = f ? budget_bytes / f : 0;
    if (s > (1u << 20))
        s = 1u << 20;
    s -= s % (size_t)q;
    return s < (size_t)q ? q : (int)s;
}

double tc_shm_params_model_time(size_t m, size_t f, int S, double tw_over_t, double tws_over_t)
{
    if (m == 0 || f == 0 || S < 1)
        return 0.0;
    double nfrag = ceil((double)m / (double)f);
    double nsync = ceil((double)m / ((double)f * S));
    double fill = 2.0 * (double)(f < m ? f : m);
    double rest = m > f ? (double)(m - f) : 0.0;
    return fill + rest + nfrag * tw_over_t + nsync * tws_over_t;
}

size_t tc_shm_params_fragment_for(size_t m, double tw_over_t, size_t slot)
{
    double fstar = ceil(sqrt((double)m * tw_over_t) / TC_CACHELINE) * TC_CACHELINE;
    if (fstar < TC_SHM_MIN_FRAGMENT)
        fstar = TC_SHM_MIN_FRAGMENT;
    return fstar >= (double)slot ? slot : (size_t)fstar;
}

void tc_shm_params_geometry(size_t m, double tw_over_t, size_t slot, size_t queue_bytes, int q,
                            size_t stream_bytes, size_t *bank_bytes, size_t *frag)
{
    size_t f = tc_shm_params_fragment_for(m, tw_over_t, slot);
    if (m > queue_bytes && stream_bytes > 0 && stream_bytes < queue_bytes) {
        size_t window = stream_bytes / (size_t)q / TC_CACHELINE * TC_CACHELINE;
        if (window < TC_SHM_MIN_FRAGMENT)
            window = TC_SHM_MIN_FRAGMENT;
        if (window < *bank_bytes)
            *bank_bytes = window;
        /* A quarter bank keeps four fragments in flight per bank, but no
         * smaller than TC_SHM_STREAM_MIN_FRAGMENT: with many banks each bank
         * use is then one fragment, and the banks themselves pipeline. */
        size_t quarter = *bank_bytes / 4 / TC_CACHELINE * TC_CACHELINE;
        if (quarter < TC_SHM_STREAM_MIN_FRAGMENT)
            quarter = TC_SHM_STREAM_MIN_FRAGMENT;
        if (f > quarter)
            f = quarter;
    }
    if (f > *bank_bytes)
        f = *bank_bytes;
    *frag = f;
}
