#include "params.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

#include "locks/settings.h"
#include "segment.h"
#include "settings.h"

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

/* The automatic reduction rings: slots of @p slot_bytes for up to
 * @p per_process bytes a process, within 16 MiB of rings per node of
 * @p node_procs processes; at least @p min (also when @p slot_bytes is 0),
 * at most 1024. */
static int tc_shm_params_ring_slots(size_t per_process, int node_procs, size_t slot_bytes, int min)
{
    const size_t procs = node_procs > 0 ? (size_t)node_procs : 1;
    size_t ring = ((size_t)16 << 20) / procs;
    if (ring > per_process)
        ring = per_process;
    const size_t slots = slot_bytes ? ring / slot_bytes : (size_t)min;
    return (int)(slots < (size_t)min ? (size_t)min : slots > 1024 ? 1024 : slots);
}

void tc_shm_params_local(tc_shm_params_t *p, int oversubscribed, int node_procs)
{
    tc_cfg_module_t *c = &tc_shm_config;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    int q = (int)tc_config_int(c, TC_SHM_CFG_BANKS);
    long long tw = tc_config_int(c, TC_SHM_CFG_TW_RATIO);
    size_t f = (size_t)tc_config_int(c, TC_SHM_CFG_FRAGMENT_SIZE);
    if (f == 0)
        f = tc_shm_params_fragment((size_t)tc_config_int(c, TC_SHM_CFG_DESIGN_SIZE), (double)tw,
                                   page);
    f = (f + page - 1) / page * page;
    long long S = tc_config_int(c, TC_SHM_CFG_QUEUE_LENGTH);
    if (S == 0)
        S = tc_shm_params_queue_length((size_t)tc_config_int(c, TC_SHM_CFG_QUEUE_BYTES), f, q);

    memset(p, 0, sizeof *p);
    p->f = f;
    p->S = (int)S;
    p->q = q;
    p->tree = (tc_tree_kind_t)tc_config_int(c, TC_SHM_CFG_TREE);
    p->arity = (int)tc_config_int(c, TC_SHM_CFG_TREE_ARITY);
    p->tw_over_t = (double)tw;
    p->stream_bytes = (size_t)tc_config_int(c, TC_SHM_CFG_STREAM_BYTES);
    /* Slots are cache-line multiples so no two processes' slots share a line. */
    p->reduce_slot_bytes =
        (size_t)tc_config_int(c, TC_SHM_CFG_REDUCE_SLOT_BYTES) / TC_CACHELINE * TC_CACHELINE;
    /* Wide fragments (core/race.h): auto, only where the node's CPUs are
     * shared by the communicator's own processes, where a peer is often
     * off its CPU and every fragment's hand-over may wait for it. */
    p->reduce_wide_bytes =
        (size_t)tc_config_int(c, TC_SHM_CFG_REDUCE_WIDE_BYTES) / TC_CACHELINE * TC_CACHELINE;
    if (tc_config_int(c, TC_SHM_CFG_REDUCE_WIDE_BYTES) == 0)
        p->reduce_wide_bytes = oversubscribed ? TC_SHM_REDUCE_WIDE_AUTO : 0;
    if (p->reduce_wide_bytes <= p->reduce_slot_bytes)
        p->reduce_wide_bytes = 0;
    p->reduce_wide_min = (size_t)tc_config_int(c, TC_SHM_CFG_REDUCE_WIDE_MIN);
    /* The rings below count slots of the size they have. */
    const size_t rslot_bytes = tc_shm_params_rslot_bytes(p);
    p->reduce_slots = (int)tc_config_int(c, TC_SHM_CFG_REDUCE_SLOTS);
    if (p->reduce_slots == 0) {
        /* auto: a ring of up to 1 MiB per process, so a 1 MiB contribution
         * goes in without waiting for the readers (docs/shm.md), within 16 MiB
         * of rings per node; never fewer than 8 slots. */
        p->reduce_slots = tc_shm_params_ring_slots((size_t)1 << 20, node_procs, rslot_bytes, 8);
    }
    /* The ring a contended writer may run ahead through (reduce_slots.c):
     * auto, only where the node's CPUs are shared by the communicator's own
     * processes (there a peer is often off its CPU), 4 MiB per process
     * within 16 MiB per node. */
    p->reduce_slots_contended = (int)tc_config_int(c, TC_SHM_CFG_REDUCE_SLOTS_CONTENDED);
    if (p->reduce_slots_contended == 0) {
        p->reduce_slots_contended =
            oversubscribed ? tc_shm_params_ring_slots((size_t)4 << 20, node_procs, rslot_bytes, 0)
                           : 0;
    }
    if (p->reduce_slots_contended < p->reduce_slots)
        p->reduce_slots_contended = p->reduce_slots;
    p->reduce_slice_min = (size_t)tc_config_int(c, TC_SHM_CFG_REDUCE_SLICE_MIN);
    /* The reduction tree pays where its levels run in parallel; oversubscribed
     * (measured: 2 cores, np 4 and 8) a single-fragment Allreduce was 1.2-2x
     * slower up the tree than folded directly. Unless set explicitly, off. */
    p->reduce_tree_max =
        oversubscribed && tc_config_source(c, TC_SHM_CFG_REDUCE_TREE_MAX) != TC_CFG_SRC_ENV
            ? 0
            : (size_t)tc_config_int(c, TC_SHM_CFG_REDUCE_TREE_MAX);
    p->reduce_tree_arity = (int)tc_config_int(c, TC_SHM_CFG_REDUCE_TREE_ARITY);
    /* The same reasoning for Scan's rounds (every round waits for a peer
     * that may not be running). */
    p->scan_tree_min =
        oversubscribed && tc_config_source(c, TC_SHM_CFG_SCAN_TREE_MIN) != TC_CFG_SRC_ENV
            ? 0
            : (int)tc_config_int(c, TC_SHM_CFG_SCAN_TREE_MIN);
    /* Local: each process's copy choice changes only its own speed. */
    p->reduce_copy = (int)tc_config_int(c, TC_SHM_CFG_REDUCE_COPY);
    p->bcast_copy = (int)tc_config_int(c, TC_SHM_CFG_BCAST_COPY);
    p->lock_scheme = (tc_lock_scheme_t)tc_config_int(&tc_locks_config, TC_LOCKS_CFG_SCHEME);
}

size_t tc_shm_params_rslot_bytes(const tc_shm_params_t *p)
{
    return p->reduce_wide_bytes > p->reduce_slot_bytes && p->reduce_wide_min > 0
               ? p->reduce_wide_bytes
               : p->reduce_slot_bytes;
}

void tc_shm_params_settle(tc_shm_params_t *p)
{
    /* S must be a multiple of q; q <= S. */
    if (p->q > p->S)
        p->q = p->S;
    p->S -= p->S % p->q;
}

int tc_shm_params_enabled(void)
{
    return tc_config_int(&tc_shm_config, TC_SHM_CFG_ENABLE) != 0;
}

void tc_shm_params_policy(tc_shm_policy_t *policy)
{
    tc_cfg_module_t *c = &tc_shm_config;
    *policy = (tc_shm_policy_t){
        .placement = (tc_placement_t)tc_config_int(c, TC_SHM_CFG_PLACEMENT),
        .max_segment = (size_t)tc_config_int(c, TC_SHM_CFG_MAX_SEGMENT),
        .max_total = (size_t)tc_config_int(c, TC_SHM_CFG_MAX_TOTAL),
        .max_node = (size_t)tc_config_int(c, TC_SHM_CFG_MAX_NODE),
        .mechanism = (tc_shm_mechanism_t)tc_config_int(c, TC_SHM_CFG_MECHANISM),
        .fail = 0,
    };
}
