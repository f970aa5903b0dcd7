#include "wait.h"

#include <mpi.h>
#include <stdio.h>
#include <time.h>

#include "log.h"

static double tc_wait_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void tc_waiter_check_clock(tc_waiter_t *w)
{
    if (w->info->timeout_s <= 0.0)
        return; /* TC_WAIT_TIMEOUT=0: wait forever */
    double now = tc_wait_now();
    if (w->deadline == 0.0) {
        w->deadline = now + w->info->timeout_s;
        return;
    }
    if (now < w->deadline)
        return;
    /* A library must not exit() on its own, but a collective that can never
     * complete leaves nothing to return to: say what we waited for, then abort
     * the job the way MPI itself would on a fatal error. */
    int peer = w->peer >= 0 && w->info->peer_ranks ? w->info->peer_ranks[w->peer] : w->peer;
    fprintf(stderr,
            "topocoll[%d]: timed out after %.0f s (TC_WAIT_TIMEOUT) on communicator %s, "
            "stage '%s', waiting for rank %d of that communicator; a peer died or skipped the "
            "collective. Aborting.\n",
            tc_log_rank, w->info->timeout_s, w->info->comm_name, w->stage, peer);
    fflush(stderr);
    /* Give the launcher a moment to forward the line: MPICH's hydra may tear
     * the job down before it has read our stderr pipe. */
    nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = 300 * 1000 * 1000}, NULL);
    PMPI_Abort(MPI_COMM_WORLD, 1);
}
