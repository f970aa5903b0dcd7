/* "rwlock": one pthread_rwlock_t in shared memory (paper 004's baseline). Every
 * reader writes the same line (the reader count), which is the coherence traffic
 * the per-reader schemes avoid. The reader index is unused.
 *
 * Writer preference (PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP): glibc's default
 * prefers readers, and readers that re-lock in a loop (the benchmark's concurrent
 * mode) would starve the writer forever.
 *
 * POSIX has no robust rwlock: a process killed while holding it wedges it. With
 * opts.timeout_s > 0 every acquisition uses the timed variants and returns
 * ETIMEDOUT instead of hanging. */
#include <stdio.h>

#include "lock_internal.h"

typedef struct tc_lock_rwlock_body {
    _Alignas(TC_CACHELINE) pthread_rwlock_t rw;
} tc_lock_rwlock_body_t;
_Static_assert(sizeof(tc_lock_rwlock_body_t) % TC_CACHELINE == 0, "padded to lines");

static tc_lock_rwlock_body_t *tc_lock_rwlock_body(const tc_rwlock_t *lk)
{
    return tc_lock_body(lk);
}

static size_t tc_lock_rwlock_body_size(int nreaders)
{
    (void)nreaders;
    return sizeof(tc_lock_rwlock_body_t);
}

static tc_err_t tc_lock_rwlock_init(tc_rwlock_t *lk)
{
    pthread_rwlockattr_t a;
    int rc = pthread_rwlockattr_init(&a);
    if (rc != 0)
        return tc_err_from_errno(rc);
    rc = pthread_rwlockattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    if (rc == 0)
        rc = pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    if (rc == 0)
        rc = pthread_rwlock_init(&tc_lock_rwlock_body(lk)->rw, &a);
    pthread_rwlockattr_destroy(&a);
    return tc_err_from_errno(rc);
}

static tc_err_t tc_lock_rwlock_destroy(tc_rwlock_t *lk)
{
    return tc_err_from_errno(pthread_rwlock_destroy(&tc_lock_rwlock_body(lk)->rw));
}

/* Absolute CLOCK_REALTIME deadline, as the timed rwlock calls want. */
static struct timespec tc_lock_rwlock_deadline(const tc_rwlock_t *lk)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    double s = lk->opts.timeout_s;
    time_t whole = (time_t)s;
    ts.tv_sec += whole;
    ts.tv_nsec += (long)((s - (double)whole) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

/* @p rc: what the timed pthread call returned (an errno value). */
static tc_err_t tc_lock_rwlock_timed_out(const tc_rwlock_t *lk, int rc, const char *who)
{
    if (rc == ETIMEDOUT)
        tc_lock_log(lk,
                    "%s gave up after %.3g s (a holder may have died: POSIX rwlocks are "
                    "not robust)",
                    who, lk->opts.timeout_s);
    return tc_err_from_errno(rc);
}

static tc_err_t tc_lock_rwlock_rdlock(tc_rwlock_t *lk, int x)
{
    (void)x;
    pthread_rwlock_t *rw = &tc_lock_rwlock_body(lk)->rw;
    if (lk->opts.timeout_s <= 0.0)
        return tc_err_from_errno(pthread_rwlock_rdlock(rw));
    struct timespec ts = tc_lock_rwlock_deadline(lk);
    return tc_lock_rwlock_timed_out(lk, pthread_rwlock_timedrdlock(rw, &ts), "reader");
}

static tc_err_t tc_lock_rwlock_unlock(tc_rwlock_t *lk, int x)
{
    (void)x;
    return tc_err_from_errno(pthread_rwlock_unlock(&tc_lock_rwlock_body(lk)->rw));
}

static tc_err_t tc_lock_rwlock_wrlock(tc_rwlock_t *lk)
{
    pthread_rwlock_t *rw = &tc_lock_rwlock_body(lk)->rw;
    if (lk->opts.timeout_s <= 0.0)
        return tc_err_from_errno(pthread_rwlock_wrlock(rw));
    struct timespec ts = tc_lock_rwlock_deadline(lk);
    return tc_lock_rwlock_timed_out(lk, pthread_rwlock_timedwrlock(rw, &ts), "writer");
}

static tc_err_t tc_lock_rwlock_wrunlock(tc_rwlock_t *lk)
{
    return tc_err_from_errno(pthread_rwlock_unlock(&tc_lock_rwlock_body(lk)->rw));
}

const tc_lock_ops_t tc_lock_ops_rwlock = {
    .name = "rwlock",
    .body_size = tc_lock_rwlock_body_size,
    .init = tc_lock_rwlock_init,
    .destroy = tc_lock_rwlock_destroy,
    .rdlock = tc_lock_rwlock_rdlock,
    .rdunlock = tc_lock_rwlock_unlock,
    .wrlock = tc_lock_rwlock_wrlock,
    .wrunlock = tc_lock_rwlock_wrunlock,
};
