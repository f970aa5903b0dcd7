/* "n-mutex-signal": N(mutex+signal) (paper 004, proposed). 2N-mutex with the signal
 * mutex LS_x replaced by a plain variable VS_x:
 *   Writer: for i: VS[i] = 1; for i: lock(LP[i]).
 *   Reader x: while VS[x] == 1: wait; lock(LP[x]); read; unlock(LP[x]).
 * The wait is base/wait.h's (spin, then sleep on a futex on VS[x]); the writer's
 * lowering of VS wakes it only when the sleepers count (its own line, after WM)
 * says a reader sleeps.
 * Exclusion and data visibility come from the robust mutexes LP_i alone; VS only
 * steers readers away from LP_x while a writer wants it (glibc mutexes are not FIFO,
 * so a reader re-locking in a loop could otherwise keep the writer out).
 *
 * Unlock (implicit in the paper), our choice: for each i, unlock(LP[i]) and then
 * VS[i] = 0. In this order a reader waiting on VS[x] finds LP[x] already free and
 * takes it without a sleep/wake pair on LP[x]'s futex.
 *
 * Additions, both for robustness:
 * - A robust writer mutex WM, held by the writer from before it raises the first VS
 *   until after it clears the last. It serialises writers (the paper has one) and
 *   lets a waiting reader tell a live writer from a dead one: a dead writer would
 *   leave VS[x] = 1 forever. A waiting reader try-locks WM before its first yield or
 *   sleep and then every 64 yields or 4 sleeps (tc_lock_nms_check()): TC_ERR_BUSY
 *   means a writer is alive; success (or TC_ERR_OWNERDEAD) means no writer is active, so
 *   any VS still raised is stale and is cleared. Cost: one uncontended lock/unlock
 *   per write, on a line only writers touch.
 * - VS carries no data, the LP_i mutexes order everything the lock protects: the
 *   writer raises VS with relaxed stores. Lowering it is a release and the reader's
 *   wait loads it with acquire, because the futex protocol of the wait helper
 *   publishes that way (wait.h); the lock needs neither. */
#include "lock_internal.h"

typedef struct tc_lock_signal {
    _Alignas(TC_CACHELINE) tc_lock_atomic_u32_t vs; /* written by the writer only */
} tc_lock_signal_t;
_Static_assert(sizeof(tc_lock_signal_t) == TC_CACHELINE, "one signal per line");

typedef struct tc_lock_nms_reader {
    tc_lock_signal_t vs;
    tc_lock_mutex_t lp;
} tc_lock_nms_reader_t;

typedef struct tc_lock_nms {
    tc_lock_mutex_t wm;
    tc_lock_sleepers_t sleepers; /* readers asleep on their VS (the writers read it) */
    tc_lock_nms_reader_t r[];    /* nreaders */
} tc_lock_nms_t;

static tc_lock_nms_t *tc_lock_nms(const tc_rwlock_t *lk)
{
    return tc_lock_body(lk);
}

static size_t tc_lock_nms_body_size(int nreaders)
{
    return sizeof(tc_lock_nms_t) + (size_t)nreaders * sizeof(tc_lock_nms_reader_t);
}

/* Lower VS[i]: release (tc_wait_publish_u32()), and a wake if a reader sleeps. The
 * paper's VS carries no data (relaxed would do for the lock); the release, and the
 * load of the sleepers count after it, are the futex protocol's (base/wait.h). */
static void tc_lock_nms_lower(tc_lock_nms_t *s, int i)
{
    tc_wait_publish_u32(&s->r[i].vs.vs, 0, &s->sleepers.n);
}

static tc_err_t tc_lock_nms_init(tc_rwlock_t *lk)
{
    tc_lock_nms_t *s = tc_lock_nms(lk);
    tc_store_relaxed_u64(&s->sleepers.n, 0);
    tc_err_t rc = tc_lock_mutex_init(&s->wm);
    for (int i = 0; rc == TC_OK && i < lk->nreaders; i++) {
        tc_lock_store_relaxed(&s->r[i].vs.vs, 0);
        rc = tc_lock_mutex_init(&s->r[i].lp);
    }
    return rc;
}

static tc_err_t tc_lock_nms_destroy(tc_rwlock_t *lk)
{
    tc_lock_nms_t *s = tc_lock_nms(lk);
    tc_err_t acc = tc_lock_mutex_destroy(&s->wm);
    for (int i = 0; i < lk->nreaders; i++)
        acc = tc_lock_rc_merge(acc, tc_lock_mutex_destroy(&s->r[i].lp));
    return acc;
}

/* Reader x has seen VS[x] raised for a while: is a writer alive? TC_ERR_BUSY: yes, keep
 * waiting. TC_OK / TC_ERR_OWNERDEAD: no writer is active (a dead one's signals were cleared). */
static tc_err_t tc_lock_nms_probe(tc_rwlock_t *lk, int x)
{
    tc_lock_nms_t *s = tc_lock_nms(lk);
    tc_err_t rc = tc_lock_mutex_try(lk, &s->wm, "reader probing the writer mutex", x);
    if (rc != TC_OK && tc_err_kind(rc) != TC_ERR_OWNERDEAD)
        return rc;
    /* Holding WM: no writer is between raising and clearing the signals, so any
     * raised VS is left by a writer that died. */
    for (int i = 0; i < lk->nreaders; i++)
        tc_lock_nms_lower(s, i); /* other readers may sleep on theirs */
    tc_lock_mutex_give(&s->wm);
    return rc;
}

/* The reader's check during a long wait on VS (the helper calls it on the first
 * yield and every 16th, or before every futex sleep): on the first call and every
 * 4th (64 yields, the cadence before the wait helper; or 4 sleeps, at most 50 ms
 * each), probe the writer mutex. Probing before the first sleep finds a dead writer
 * before we sleep on its VS. */
typedef struct tc_lock_nms_waiting {
    tc_rwlock_t *lk;
    int x;
    unsigned calls;
    tc_err_t acc; /* TC_ERR_OWNERDEAD once a dead writer's mutex was recovered */
} tc_lock_nms_waiting_t;

static tc_err_t tc_lock_nms_check(void *arg)
{
    tc_lock_nms_waiting_t *wt = arg;
    if ((wt->calls++ & 3u) != 0)
        return TC_OK;
    tc_err_t rc = tc_lock_nms_probe(wt->lk, wt->x);
    if (tc_err_kind(rc) == TC_ERR_OWNERDEAD)
        wt->acc = rc;
    else if (rc != TC_OK && tc_err_kind(rc) != TC_ERR_BUSY)
        return rc;
    return TC_OK;
}

static tc_err_t tc_lock_nms_rdlock(tc_rwlock_t *lk, int x)
{
    tc_lock_nms_t *s = tc_lock_nms(lk);
    tc_lock_nms_reader_t *r = &s->r[x];
    tc_lock_nms_waiting_t wt = {.lk = lk, .x = x, .calls = 0, .acc = TC_OK};
    /* acquire: pairs with the release of VS[x] = 0 in tc_lock_nms_lower(); not
     * needed by the lock (VS is advice, LP[x] below orders the data), it is the
     * futex protocol's. This first look keeps the waiter's set-up off the path
     * where no writer is active. */
    if (tc_lock_load_acquire(&r->vs.vs) != 0) {
        tc_lock_wait_t w;
        tc_lock_wait_init(&w, lk, &s->sleepers.n, tc_lock_nms_check, &wt,
                          "lock n-mutex-signal: reader waits for the writer's signal", x);
        /* Without a deadline: a live writer may hold the lock as long as it likes,
         * and a dead one is found by the probe. */
        w.info.timeout_s = 0.0;
        /* acquire (in tc_wait_word()): pairs with the same release. */
        tc_err_t rc = tc_wait_word(&w.ww, &r->vs.vs, TC_WAIT_UNTIL_EQ, 0, NULL);
        if (rc != TC_OK)
            return rc;
    }
    return tc_lock_rc_merge(wt.acc, tc_lock_mutex_take(lk, &r->lp, "reader data mutex", x));
}

static tc_err_t tc_lock_nms_rdunlock(tc_rwlock_t *lk, int x)
{
    return tc_lock_mutex_give(&tc_lock_nms(lk)->r[x].lp);
}

static tc_err_t tc_lock_nms_wrlock(tc_rwlock_t *lk)
{
    tc_lock_nms_t *s = tc_lock_nms(lk);
    const int n = lk->nreaders;
    tc_err_t acc = tc_lock_mutex_take(lk, &s->wm, "writer mutex", 0);
    if (acc != TC_OK && tc_err_kind(acc) != TC_ERR_OWNERDEAD)
        return acc;
    for (int i = 0; i < n; i++)
        tc_lock_store_relaxed(&s->r[i].vs.vs, 1); /* relaxed: advice, see the top */
    for (int i = 0; i < n; i++) {
        tc_err_t rc = tc_lock_mutex_take(lk, &s->r[i].lp, "writer: data mutex", i);
        if (rc != TC_OK && tc_err_kind(rc) != TC_ERR_OWNERDEAD) {
            while (i-- > 0)
                tc_lock_mutex_give(&s->r[i].lp);
            for (int k = 0; k < n; k++)
                tc_lock_nms_lower(s, k);
            tc_lock_mutex_give(&s->wm);
            return rc;
        }
        acc = tc_lock_rc_merge(acc, rc);
    }
    return acc;
}

static tc_err_t tc_lock_nms_wrunlock(tc_rwlock_t *lk)
{
    tc_lock_nms_t *s = tc_lock_nms(lk);
    tc_err_t acc = TC_OK;
    for (int i = 0; i < lk->nreaders; i++) {
        acc = tc_lock_rc_merge(acc, tc_lock_mutex_give(&s->r[i].lp));
        tc_lock_nms_lower(s, i);
    }
    return tc_lock_rc_merge(acc, tc_lock_mutex_give(&s->wm));
}

const tc_lock_ops_t tc_lock_ops_n_mutex_signal = {
    .name = "n-mutex-signal",
    .body_size = tc_lock_nms_body_size,
    .init = tc_lock_nms_init,
    .destroy = tc_lock_nms_destroy,
    .rdlock = tc_lock_nms_rdlock,
    .rdunlock = tc_lock_nms_rdunlock,
    .wrlock = tc_lock_nms_wrlock,
    .wrunlock = tc_lock_nms_wrunlock,
};
