/* The collectives' waits (tc_wait_ge_u64(), the polling tc_waiter_t): after
 * TC_WAIT_TIMEOUT they call info->on_timeout, and by default print the stage
 * and the peer and abort the MPI job. The machinery they share with the locks'
 * waits (statistics, clock, futex) is in wait.c. */
#include <linux/membarrier.h>
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "wait.h"
#include "wait_internal.h"
#include "wait_mpi.h"

static void tc_wait_timeout_default(const tc_wait_info_t *info, const char *stage, int peer)
{
    int rank = -1, up = 0, down = 0;
    MPI_Initialized(&up);
    MPI_Finalized(&down);
    if (up && !down)
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    /* A library must not exit() on its own, but a collective that can never
     * complete leaves nothing to return to: say what we waited for, then abort
     * the job the way MPI itself would on a fatal error. */
    /* Under the hierarchy a segment's waits know their peer by its index in
     * the node's group: name it by its rank in the communicator. */
    int peer_rank = peer >= 0 && info->peer_ranks ? info->peer_ranks[peer] : peer;
    /* A wait on several peers' messages at once (peer < 0) names none. */
    char who[48] = "several ranks";
    if (peer_rank >= 0)
        snprintf(who, sizeof who, "rank %d", peer_rank);
    fprintf(stderr,
            "topocoll[%d]: timed out after %.0f s (TC_WAIT_TIMEOUT) on communicator %s, "
            "stage '%s', waiting for %s of that communicator; a peer died or skipped the "
            "collective. Aborting.\n",
            rank, info->timeout_s, info->comm_name ? info->comm_name : "?", stage, who);
    fflush(stderr);
    /* Give the launcher a moment to forward the line: MPICH's hydra may tear
     * the job down before it has read our stderr pipe. */
    nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = 300 * 1000 * 1000}, NULL);
    PMPI_Abort(MPI_COMM_WORLD, 1);
}

void tc_waiter_check_clock(tc_waiter_t *w)
{
    double now = tc_wait_now();
    if (w->start == 0.0)
        w->start = now;
    if (w->info->timeout_s <= 0.0)
        return; /* TC_WAIT_TIMEOUT=0: wait forever */
    if (w->deadline == 0.0) {
        w->deadline = now + w->info->timeout_s;
        return;
    }
    if (now < w->deadline)
        return;
    if (w->info->on_timeout)
        w->info->on_timeout(w->info, w->stage, w->peer);
    tc_wait_timeout_default(w->info, w->stage, w->peer);
}

void tc_waiter_pause_slow(tc_waiter_t *w)
{
    if (w->info->policy == TC_WAIT_SPIN) {
        tc_cpu_relax();
        if ((w->polls++ & (TC_WAIT_SPIN_CLOCK_POLLS - 1)) == 0)
            tc_waiter_check_clock(w);
        return;
    }
    /* auto, yield, and futex without a word to sleep on. */
    sched_yield();
    tc_wait_count_add(&tc_wait_total.yields, 1);
    /* The clock is read every 256 yields: a yield is ~1 us alone, up to a
     * time slice when oversubscribed, so the timeout is late by a fraction of
     * a second at worst. */
    if ((w->yields++ & 255u) == 0)
        tc_waiter_check_clock(w);
}

/* One bounded sleep (R1-R3 in wait.h). */
static void tc_wait_sleep(tc_waiter_t *w, tc_atomic_u64_t *word, uint64_t want,
                          tc_atomic_u64_t *sleepers)
{
    /* R1, R2: seq_cst RMW then seq_cst load; pair with W1/W2 in
     * tc_wait_publish_u64() / tc_wait_fetch_add_publish_u64(). */
    atomic_fetch_add_explicit(sleepers, tc_wait_lane_one(word), memory_order_seq_cst);
    /* R1b: a full barrier on every CPU running a registered writer, for the
     * writers that publish with a release store (wait.h, asymmetric variant). */
    if (tc_wait_membarrier_supported())
        syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0);
    uint64_t v = atomic_load_explicit(word, memory_order_seq_cst);
    if (v < want) {
        tc_wait_futex_wait(w, tc_wait_word32(word), (uint32_t)v);
        w->yields++; /* counts sleeps here; see tc_wait_ge_slow_u64() */
    }
    /* relaxed: a late decrement only costs a writer a needless FUTEX_WAKE. */
    atomic_fetch_sub_explicit(sleepers, tc_wait_lane_one(word), memory_order_relaxed);
}

uint64_t tc_wait_ge_slow_u64(tc_atomic_u64_t *word, uint64_t want, tc_atomic_u64_t *sleepers,
                             const tc_wait_info_t *info, const char *stage, int peer)
{
    tc_waiter_t w;
    tc_waiter_init(&w, info, stage, peer);
    int policy = info->policy;
    if ((policy == TC_WAIT_AUTO || policy == TC_WAIT_FUTEX) && !sleepers)
        policy = TC_WAIT_YIELD;
    uint32_t yields = 0, sleeps = 0;
    double yield_first = 0.0;
    uint64_t last = 0;
    for (;;) {
        /* acquire: pairs with the writer's publication (named by the caller). */
        uint64_t v = tc_load_acquire_u64(word);
        if (v >= want) {
            /* Only waits past the spin are accounted per stage (a lookup and
             * atomic adds); short ones cost one thread-local increment. */
            if (yields || sleeps)
                tc_wait_account(stage, yields, sleeps,
                                w.start != 0.0 ? tc_wait_now() - w.start : 0.0);
            else
                tc_wait_short++;
            return v;
        }
        /* auto: the peer is making progress (it runs), so keep spinning. */
        if (v != last) {
            if (policy == TC_WAIT_AUTO) {
                w.polls = 0;
                yield_first = 0.0;
            }
            last = v;
        }
        if (w.polls < info->spin_polls) {
            w.polls++;
            tc_cpu_relax();
            continue;
        }
        switch (policy) {
        case TC_WAIT_SPIN:
            tc_cpu_relax();
            if ((w.polls++ & (TC_WAIT_SPIN_CLOCK_POLLS - 1)) == 0)
                tc_waiter_check_clock(&w);
            break;
        case TC_WAIT_YIELD:
            if (yields == 0 || (yields & 255u) == 0)
                tc_waiter_check_clock(&w);
            sched_yield();
            yields++;
            break;
        default: /* auto, futex */
            if (policy == TC_WAIT_AUTO) {
                const tc_wait_next_t next = tc_wait_auto_next(info, &yield_first);
                if (next == TC_WAIT_NEXT_SPIN) {
                    tc_cpu_relax();
                    break;
                }
                if (next == TC_WAIT_NEXT_YIELDED) {
                    if (yields == 0 || (yields & 255u) == 0)
                        tc_waiter_check_clock(&w);
                    yields++;
                    break;
                }
            }
            /* Every sleep reads the clock: a sleep costs a system call and a
             * context switch anyway. */
            tc_waiter_check_clock(&w);
            w.yields = 0;
            tc_wait_sleep(&w, word, want, sleepers);
            sleeps += w.yields;
            break;
        }
    }
}

/* ---- Point-to-point waits (wait_mpi.h) ------------------------------------ */

int tc_wait_mpi_request(MPI_Request *req, MPI_Status *status, const tc_wait_info_t *info,
                        const char *stage, int peer)
{
    if (info == NULL)
        return PMPI_Wait(req, status);
    tc_waiter_t w;
    tc_waiter_init(&w, info, stage, peer);
    for (;;) {
        int done = 0;
        const int rc = PMPI_Test(req, &done, status);
        if (rc != MPI_SUCCESS || done) {
            if (w.yields)
                tc_wait_account(stage, w.yields, 0, w.start != 0.0 ? tc_wait_now() - w.start : 0.0);
            return rc;
        }
        tc_waiter_pause(&w);
    }
}

int tc_wait_mpi_all(int n, MPI_Request *reqs, const tc_wait_info_t *info, const char *stage,
                    int peer)
{
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n; i++) {
        const int rc_i = tc_wait_mpi_request(&reqs[i], MPI_STATUS_IGNORE, info, stage, peer);
        if (rc == MPI_SUCCESS)
            rc = rc_i;
    }
    return rc;
}

int tc_wait_mpi_send(const void *buf, int n, int dest, int tag, MPI_Comm comm,
                     const tc_wait_info_t *info, const char *stage)
{
    if (info == NULL)
        return PMPI_Send(buf, n, MPI_BYTE, dest, tag, comm);
    MPI_Request req;
    const int rc = PMPI_Isend(buf, n, MPI_BYTE, dest, tag, comm, &req);
    return rc != MPI_SUCCESS ? rc : tc_wait_mpi_request(&req, MPI_STATUS_IGNORE, info, stage, dest);
}

int tc_wait_mpi_recv(void *buf, int n, int src, int tag, MPI_Comm comm, const tc_wait_info_t *info,
                     const char *stage)
{
    if (info == NULL)
        return PMPI_Recv(buf, n, MPI_BYTE, src, tag, comm, MPI_STATUS_IGNORE);
    MPI_Request req;
    const int rc = PMPI_Irecv(buf, n, MPI_BYTE, src, tag, comm, &req);
    return rc != MPI_SUCCESS ? rc : tc_wait_mpi_request(&req, MPI_STATUS_IGNORE, info, stage, src);
}

int tc_wait_mpi_sendrecv(const void *sbuf, int ns, int dest, void *rbuf, int nr, int src, int tag,
                         MPI_Comm comm, const tc_wait_info_t *info, const char *stage)
{
    return tc_wait_mpi_sendrecv_tags(sbuf, ns, dest, tag, rbuf, nr, src, tag, comm,
                                     MPI_STATUS_IGNORE, info, stage);
}

int tc_wait_mpi_sendrecv_tags(const void *sbuf, int ns, int dest, int stag, void *rbuf, int nr,
                              int src, int rtag, MPI_Comm comm, MPI_Status *status,
                              const tc_wait_info_t *info, const char *stage)
{
    if (info == NULL)
        return PMPI_Sendrecv(sbuf, ns, MPI_BYTE, dest, stag, rbuf, nr, MPI_BYTE, src, rtag, comm,
                             status);
    MPI_Request req[2];
    int rc = PMPI_Irecv(rbuf, nr, MPI_BYTE, src, rtag, comm, &req[0]);
    if (rc != MPI_SUCCESS)
        return rc;
    if ((rc = PMPI_Isend(sbuf, ns, MPI_BYTE, dest, stag, comm, &req[1])) != MPI_SUCCESS) {
        /* The receive must not outlive the call: it points into the caller's
         * buffer. */
        PMPI_Cancel(&req[0]);
        PMPI_Wait(&req[0], MPI_STATUS_IGNORE);
        return rc;
    }
    /* The receive first: its peer is the one named on a timeout. The send
     * completes meanwhile (eager) or as soon as dest receives. */
    const int rc_recv = tc_wait_mpi_request(&req[0], status, info, stage, src);
    const int rc_send = tc_wait_mpi_request(&req[1], MPI_STATUS_IGNORE, info, stage, dest);
    return rc_recv != MPI_SUCCESS ? rc_recv : rc_send;
}
