#include "stats.h"

#include <stdatomic.h>
#include <stdio.h>

#include "log.h"
#include "settings.h"
#include "wait.h"

_Atomic unsigned long long tc_stats_counts[TC_OP_LAST][TC_PATH_LAST];
atomic_int tc_stats_enabled = -1;

static const char *const tc_stats_op_names[TC_OP_LAST] = {
    "bcast",          "reduce",  "allreduce", "barrier",   "reduce_scatter_block",
    "reduce_scatter", "scan",    "exscan",    "allgather", "allgatherv",
    "gather",         "gatherv", "scatter",   "scatterv",  "alltoall",
    "alltoallv"};

static const char *const tc_stats_path_names[TC_PATH_LAST] = {"shm",
                                                              "hier",
                                                              "trivial",
                                                              "pmpi_multinode",
                                                              "pmpi_shm_off",
                                                              "pmpi_no_segment",
                                                              "pmpi_intercomm",
                                                              "pmpi_op",
                                                              "pmpi_race",
                                                              "pmpi_large_count"};

const char *tc_stats_path_name(tc_path_t path)
{
    return path < TC_PATH_LAST ? tc_stats_path_names[path] : "?";
}

const char *tc_stats_op_name(tc_op_t op)
{
    return op < TC_OP_LAST ? tc_stats_op_names[op] : "?";
}

int tc_stats_init(void)
{
    const int on = tc_config_int(&tc_base_config, TC_BASE_CFG_STATS) != 0;
    atomic_store_explicit(&tc_stats_enabled, on, memory_order_relaxed);
    return on;
}

void tc_stats_print(void)
{
    if (!tc_config_int(&tc_base_config, TC_BASE_CFG_STATS))
        return;
    for (int op = 0; op < TC_OP_LAST; op++) {
        unsigned long long c[TC_PATH_LAST], calls = 0;
        for (int p = 0; p < TC_PATH_LAST; p++) {
            c[p] = atomic_load_explicit(&tc_stats_counts[op][p], memory_order_relaxed);
            calls += c[p];
        }
        if (calls == 0)
            continue;
        unsigned long long pmpi = c[TC_PATH_PMPI_MULTINODE] + c[TC_PATH_PMPI_SHM_OFF] +
                                  c[TC_PATH_PMPI_NO_SEGMENT] + c[TC_PATH_PMPI_INTERCOMM] +
                                  c[TC_PATH_PMPI_OP] + c[TC_PATH_PMPI_RACE] +
                                  c[TC_PATH_PMPI_LARGE_COUNT];
        /* key=value on one line: stable for scripts (tests/pmpi greps it). */
        fprintf(stderr,
                "topocoll-stats rank=%d op=%s calls=%llu shm=%llu hier=%llu trivial=%llu "
                "pmpi=%llu pmpi_multinode=%llu pmpi_shm_off=%llu pmpi_no_segment=%llu "
                "pmpi_intercomm=%llu pmpi_op=%llu pmpi_race=%llu pmpi_large_count=%llu\n",
                tc_log_rank, tc_stats_op_names[op], calls, c[TC_PATH_SHM], c[TC_PATH_HIER],
                c[TC_PATH_TRIVIAL], pmpi, c[TC_PATH_PMPI_MULTINODE], c[TC_PATH_PMPI_SHM_OFF],
                c[TC_PATH_PMPI_NO_SEGMENT], c[TC_PATH_PMPI_INTERCOMM], c[TC_PATH_PMPI_OP],
                c[TC_PATH_PMPI_RACE], c[TC_PATH_PMPI_LARGE_COUNT]);
    }
    /* How this process waited (base/wait.h): totals, then the stages that
     * waited past the spin, most time first. */
    tc_wait_stats_t w;
    tc_wait_stats_get(&w);
    fprintf(stderr,
            "topocoll-wait rank=%d waits=%llu long_waits=%llu long_s=%.6f yields=%llu "
            "sleeps=%llu wakes=%llu sleep_timeouts=%llu yield_slices=%llu\n",
            tc_log_rank, (unsigned long long)w.waits, (unsigned long long)w.long_waits, w.long_s,
            (unsigned long long)w.yields, (unsigned long long)w.sleeps, (unsigned long long)w.wakes,
            (unsigned long long)w.sleep_timeouts, (unsigned long long)w.yield_slices);
    tc_wait_stage_stats_t st[16];
    int n = tc_wait_stats_stages(st, 16);
    for (int i = 0; i < n; i++)
        fprintf(stderr,
                "topocoll-wait rank=%d stage='%s' waits=%llu long_waits=%llu long_s=%.6f "
                "yields=%llu sleeps=%llu\n",
                tc_log_rank, st[i].stage, (unsigned long long)st[i].s.waits,
                (unsigned long long)st[i].s.long_waits, st[i].s.long_s,
                (unsigned long long)st[i].s.yields, (unsigned long long)st[i].s.sleeps);
}
