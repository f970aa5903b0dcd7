/* N-MCS hands over in FIFO order. Per reader lock there are two parties; FIFO means
 * a party that enqueued while the other held the lock gets it before the holder can
 * take it again. Each trial, in both directions:
 *   A (reader behind writer): the writer holds all locks; the reader calls rdlock(x);
 *     the writer waits until the queue tail of lock x is the reader (it enqueued:
 *     tc_rwlock_nmcs_tail), releases, and immediately calls wrlock again. When it
 *     gets the lock, the reader must already have been inside (entered == trial).
 *   B (writer behind reader): the mirror image, the reader re-locks at once.
 * Whether the re-lock wins a race does not matter: the order is fixed by the queue.
 * Built for threads (LH_USE_PROCS=0) and processes (1). */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

#ifndef LH_USE_PROCS
#define LH_USE_PROCS 0
#endif

enum { TRIALS = 150, NREADERS = 3, X = 1 };

static void spin_until(lh_shared_t *sh, _Atomic uint64_t *v, uint64_t want)
{
    unsigned polls = 0;
    /* acquire: pairs with the release stores of phase/done by the other party. */
    while (atomic_load_explicit(v, memory_order_acquire) != want)
        if (++polls > 64)
            sched_yield();
    (void)sh;
}

static void wait_tail(lh_shared_t *sh, tc_rwlock_t *lk, int want)
{
    unsigned polls = 0;
    while (tc_rwlock_nmcs_tail(lk, X) != want)
        if (++polls > 64)
            sched_yield();
    (void)sh;
}

static int attach(lh_shared_t *sh, tc_rwlock_t *lk)
{
    tc_lock_opts_t o = lh_opts(LH_WAIT_S);
    int rc = tc_rwlock_attach(lk, sh->lock_mem, lh_lock_bytes(sh), &o);
    if (rc != 0)
        lh_fail(sh, "attach: %s", LH_ERRSTR(rc));
    return rc;
}

/* Direction A, the reader's side: on phase t+1, lock, mark, unlock, report done. */
static int reader_a(void *arg)
{
    lh_shared_t *sh = arg;
    tc_rwlock_t lk;
    if (attach(sh, &lk) != 0)
        return 1;
    for (uint64_t t = 0; t < TRIALS; t++) {
        spin_until(sh, &sh->phase, t + 1);
        if (tc_rwlock_rdlock(&lk, X) != 0) {
            lh_fail(sh, "A: rdlock failed");
            return 1;
        }
        sh->entered = t + 1;
        tc_rwlock_rdunlock(&lk, X);
        /* release: pairs with the writer's acquire in spin_until(done) */
        atomic_store_explicit(&sh->done, t + 1, memory_order_release);
    }
    return 0;
}

/* Direction B, the writer's side. */
static int writer_b(void *arg)
{
    lh_shared_t *sh = arg;
    tc_rwlock_t lk;
    if (attach(sh, &lk) != 0)
        return 1;
    for (uint64_t t = 0; t < TRIALS; t++) {
        spin_until(sh, &sh->phase, t + 1);
        if (tc_rwlock_wrlock(&lk) != 0) {
            lh_fail(sh, "B: wrlock failed");
            return 1;
        }
        sh->entered = t + 1;
        tc_rwlock_wrunlock(&lk);
        atomic_store_explicit(&sh->done, t + 1, memory_order_release);
    }
    return 0;
}

static int run(int use_procs)
{
    tc_rwlock_t lk;
    tc_lock_opts_t o = lh_opts(LH_WAIT_S);
    lh_shared_t *sh = lh_shared_create(TC_LOCK_SCHEME_N_MCS, NREADERS, &lk, &o);
    if (sh == NULL)
        return 1;
    lh_worker_t w;
    int late = 0;

    /* A: this thread is the writer. */
    lh_spawn(&w, use_procs, reader_a, sh);
    for (uint64_t t = 0; t < TRIALS; t++) {
        if (tc_rwlock_wrlock(&lk) != 0)
            lh_fail(sh, "A: wrlock");
        /* release: pairs with the reader's acquire in spin_until(phase) */
        atomic_store_explicit(&sh->phase, t + 1, memory_order_release);
        wait_tail(sh, &lk, 1);
        tc_rwlock_wrunlock(&lk);
        if (tc_rwlock_wrlock(&lk) != 0)
            lh_fail(sh, "A: second wrlock");
        if (sh->entered != t + 1)
            late++;
        tc_rwlock_wrunlock(&lk);
        spin_until(sh, &sh->done, t + 1);
    }
    if (lh_join(&w) != 0)
        lh_fail(sh, "A: reader failed");
    if (late)
        lh_fail(sh, "A: the writer re-acquired before the queued reader in %d of %d trials", late,
                TRIALS);

    /* B: this thread is reader X. */
    atomic_store(&sh->phase, 0);
    atomic_store(&sh->done, 0);
    sh->entered = 0;
    late = 0;
    lh_spawn(&w, use_procs, writer_b, sh);
    for (uint64_t t = 0; t < TRIALS; t++) {
        if (tc_rwlock_rdlock(&lk, X) != 0)
            lh_fail(sh, "B: rdlock");
        atomic_store_explicit(&sh->phase, t + 1, memory_order_release);
        wait_tail(sh, &lk, 2);
        tc_rwlock_rdunlock(&lk, X);
        if (tc_rwlock_rdlock(&lk, X) != 0)
            lh_fail(sh, "B: second rdlock");
        if (sh->entered != t + 1)
            late++;
        tc_rwlock_rdunlock(&lk, X);
        spin_until(sh, &sh->done, t + 1);
    }
    if (lh_join(&w) != 0)
        lh_fail(sh, "B: writer failed");
    if (late)
        lh_fail(sh, "B: the reader re-acquired before the queued writer in %d of %d trials", late,
                TRIALS);
    int failures = atomic_load(&sh->failures);
    tc_rwlock_destroy(&lk);
    lh_shared_free(sh);
    return failures;
}

int main(void)
{
    lh_watchdog_arm(LH_WATCHDOG_S, LH_USE_PROCS ? "locks_fifo_procs" : "locks_fifo_threads");
    int f = run(LH_USE_PROCS);
    lh_watchdog_disarm();
    printf("n-mcs FIFO hand-over (%s, %d trials each way): %s\n",
           LH_USE_PROCS ? "processes" : "threads", TRIALS, f ? "FAIL" : "ok");
    return f ? 1 : 0;
}
