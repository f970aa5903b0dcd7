/* Spin-then-yield wait with a timeout (STYLE.md: every wait loop yields, so 8
 * processes on 2 cores finish; a wait that can never finish ends with a message
 * naming the communicator, the stage and the peer, then MPI_Abort).
 *
 * Use:
 *     tc_waiter_t w;
 *     tc_waiter_init(&w, &ctx->wait_info, "bcast: wait for fragment", parent);
 *     while (!condition)
 *         tc_waiter_pause(&w);
 */
#ifndef TC_CORE_WAIT_H
#define TC_CORE_WAIT_H

#include <sched.h>
#include <stdint.h>

#include "atomics.h"

/* What a timeout message needs to say, and the knobs (from the config). */
typedef struct tc_wait_info {
    const char *comm_name; /* e.g. "MPI_COMM_WORLD" or "comm#3 (size 4)" */
    double timeout_s;      /* TC_WAIT_TIMEOUT; 0 = forever */
    uint32_t spin_polls;   /* TC_SPIN_COUNT: polls before the first yield */
    const int *peer_ranks; /* a waiter's peer index -> rank in comm_name's communicator (a
                              group of it, e.g. a node's segment under the hierarchy), or
                              NULL when the indices are those ranks */
} tc_wait_info_t;

typedef struct tc_waiter {
    const tc_wait_info_t *info;
    const char *stage;
    int peer;
    uint32_t polls;
    uint32_t yields;
    double deadline; /* 0 until the first clock read */
} tc_waiter_t;

static inline void tc_waiter_init(tc_waiter_t *w, const tc_wait_info_t *info, const char *stage,
                                  int peer)
{
    w->info = info;
    w->stage = stage;
    w->peer = peer;
    w->polls = 0;
    w->yields = 0;
    w->deadline = 0.0;
}

/* Out of line: reads the clock, aborts on timeout. */
void tc_waiter_check_clock(tc_waiter_t *w);

static inline void tc_waiter_pause(tc_waiter_t *w)
{
    if (w->polls < w->info->spin_polls) {
        w->polls++;
        tc_cpu_relax();
        return;
    }
    sched_yield();
    /* The clock is read every 256 yields: a yield is ~1 µs alone, up to a
     * time slice when oversubscribed, so the timeout is late by a fraction of
     * a second at worst. */
    if ((w->yields++ & 255u) == 0)
        tc_waiter_check_clock(w);
}

#endif /* TC_CORE_WAIT_H */
