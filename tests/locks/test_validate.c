/* Validate every lock scheme: readers never see a torn record, writers exclude
 * readers and each other (no lost update), randomised pauses, and a deadlock bound.
 * Built twice: LH_USE_PROCS=0 (threads; the ThreadSanitizer/ASan target) and
 * LH_USE_PROCS=1 (forked processes on MAP_SHARED anonymous memory). */
#include <stdio.h>
#include <stdlib.h>

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
    lh_watchdog_disarm();
    printf("%s\n", failures ? "FAILED" : "all schemes ok");
    return failures ? 1 : 0;
}
