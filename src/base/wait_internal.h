/* Private to src/base: what wait.c (statistics, clock, futex) shares with
 * wait_mpi.c (the collectives' waits, which abort the MPI job on timeout). */
#ifndef TC_BASE_WAIT_INTERNAL_H
#define TC_BASE_WAIT_INTERNAL_H

#include <stdint.h>

#include "wait.h"

/* Longest single futex sleep. A sleeper is never lost (wait.h), so this only
 * bounds how late the TC_WAIT_TIMEOUT message comes, and what a missed wake
 * (a writer that does not publish through this file) would cost. */
#define TC_WAIT_SLEEP_MAX_NS (50L * 1000 * 1000)
/* Polls between clock reads of a spin-only wait. */
#define TC_WAIT_SPIN_CLOCK_POLLS 65536u

typedef struct tc_wait_counts {
    _Atomic uint64_t waits, long_waits, yields, sleeps, wakes, sleep_timeouts, yield_slices,
        long_ns;
} tc_wait_counts_t;

/* This process's totals. */
extern tc_wait_counts_t tc_wait_total;
/* Waits that ended within the spin, per thread (summed at exit of each thread
 * would need a destructor: the statistics read only the calling thread's,
 * which is the one that calls the collectives). */
extern _Thread_local uint64_t tc_wait_short;

void tc_wait_count_add(_Atomic uint64_t *c, uint64_t v);
/* Account one finished wait that was not satisfied by its first read. */
void tc_wait_account(const char *stage, uint32_t yields, uint32_t sleeps, double secs);
/* CLOCK_MONOTONIC in seconds. */
double tc_wait_now(void);
/* auto, between the spin and the futex (wait.c): what the wait does next. */
typedef enum {
    TC_WAIT_NEXT_SLEEP,   /* sleep on the futex */
    TC_WAIT_NEXT_YIELDED, /* it yielded once (yielding still pays) */
    TC_WAIT_NEXT_SPIN     /* poll again: CPU-bound processes around, the spin goes on */
} tc_wait_next_t;
/* @p first: the clock when the wait went past its polls, or last saw the
 * peer progress (0.0: not yet; the caller resets it on progress). */
tc_wait_next_t tc_wait_auto_next(const tc_wait_info_t *info, double *first);
/* Tests: begin a hold-off of @p secs now, as a yield that met a time slice
 * would (auto then spins info->contended_spin_s and sleeps, never yields,
 * until it ends); 0 ends it. The contention hint (tc_wait_contended()) is
 * left alone. */
void tc_wait_test_holdoff(double secs);
/* The kernel offers the expedited global membarrier (the sleepers' side, R1b). */
int tc_wait_membarrier_supported(void);
/* The futex word of a 64-bit counter: its low 32 bits. */
uint32_t *tc_wait_word32(tc_atomic_u64_t *word);
/* R3: FUTEX_WAIT (shared, not _PRIVATE) on @p uaddr while it holds @p expected,
 * bounded by the sleep bound and @p w's deadline. */
void tc_wait_futex_wait(tc_waiter_t *w, uint32_t *uaddr, uint32_t expected);

#endif /* TC_BASE_WAIT_INTERNAL_H */
