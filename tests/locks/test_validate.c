/* Validate every lock scheme: readers never see a torn record, writers exclude
 * readers and each other (no lost update), randomised pauses, and a deadlock bound.
 * Built twice: LH_USE_PROCS=0 (threads; the ThreadSanitizer/ASan target) and
 * LH_USE_PROCS=1 (forked processes on MAP_SHARED anonymous memory). */
#include <stdio.h>
#include <stdlib.h>

#include "base/wait.h"
#include "harness.h"

#ifndef LH_USE_PROCS
#define LH_USE_PROCS 0
#endif

int main(void)
{
    /* {readers, writers, reads each, writes each}: one writer as in the paper, one
     * reader (the uncontended pair), and two writers to check writer exclusion. */
    static const int configs[][4] = {{1, 1, 10000, 1000}, {3, 1, 4000, 400}, {4, 2, 3000, 300}};
    const char *mode = LH_USE_PROCS ? "processes" : "threads";
    int failures = 0;
    lh_watchdog_arm(LH_WATCHDOG_S,
                    LH_USE_PROCS ? "locks_validate_procs" : "locks_validate_threads");
    for (int s = 0; s < TC_LOCK_SCHEME_LAST; s++) {
        for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
            lh_validate_params_t p = {
                .scheme = (tc_lock_scheme_t)s,
                .nreaders = configs[c][0],
                .nwriters = configs[c][1],
                .reads = configs[c][2],
                .writes = configs[c][3],
                .use_procs = LH_USE_PROCS,
                .seed = 1000 + (uint64_t)(s * 10) + c,
            };
            int f = lh_validate(&p);
            printf("%-15s %-9s readers %d writers %d: %s\n", tc_lock_scheme_name(p.scheme), mode,
                   p.nreaders, p.nwriters, f ? "FAIL" : "ok");
            failures += f;
        }
    }
    /* The schemes that wait through the wait helper (base/wait.h), under the other
     * TC_WAIT policies (auto above): spin never gives the CPU away (one reader, so
     * that it runs beside the writer), yield and futex with three readers. */
    static const tc_lock_scheme_t waiting[] = {TC_LOCK_SCHEME_N_MUTEX_SIGNAL, TC_LOCK_SCHEME_N_MCS};
    static const struct {
        int policy;
        const char *name;
        int readers, reads, writes;
    } policies[] = {{TC_WAIT_SPIN, "spin", 1, 1000, 100},
                    {TC_WAIT_YIELD, "yield", 3, 2000, 200},
                    {TC_WAIT_FUTEX, "futex", 3, 2000, 200}};
    for (size_t s = 0; s < sizeof waiting / sizeof waiting[0]; s++) {
        for (size_t k = 0; k < sizeof policies / sizeof policies[0]; k++) {
            lh_validate_params_t p = {
                .scheme = waiting[s],
                .nreaders = policies[k].readers,
                .nwriters = 1,
                .reads = policies[k].reads,
                .writes = policies[k].writes,
                .use_procs = LH_USE_PROCS,
                .seed = 2000 + (uint64_t)(s * 10 + k),
                .wait_policy = policies[k].policy,
            };
            int f = lh_validate(&p);
            printf("%-15s %-9s readers %d writers 1, TC_WAIT=%s: %s\n",
                   tc_lock_scheme_name(p.scheme), mode, p.nreaders, policies[k].name,
                   f ? "FAIL" : "ok");
            failures += f;
        }
    }
    lh_watchdog_disarm();
    /* How the threads' waits went (forked workers count their own): for the
     * reader of the log, not checked (the scheduler decides). */
    if (!LH_USE_PROCS) {
        tc_wait_stats_t st;
        tc_wait_stats_get(&st);
        printf("waits past the spin %llu: futex sleeps %llu, wakes %llu, yields %llu\n",
               (unsigned long long)st.long_waits, (unsigned long long)st.sleeps,
               (unsigned long long)st.wakes, (unsigned long long)st.yields);
    }
    printf("%s\n", failures ? "FAILED" : "all schemes ok");
    return failures ? 1 : 0;
}
