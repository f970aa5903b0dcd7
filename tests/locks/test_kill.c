/* A process killed (SIGKILL) while holding a lock must not wedge the others.
 * Mutex schemes (robust mutexes): the next taker of each abandoned mutex gets
 * EOWNERDEAD once, the record the dead writer left half-written is visibly torn,
 * and after one rewrite the lock runs a full validate round again. Checked with the
 * readers recovering first, the writer recovering first, and a dead reader.
 * N-MCS: the waiter gives up after the timeout with ETIMEDOUT and a message, and the
 * lock then reports itself broken. rwlock (not robust in POSIX): the timed wait
 * gives up with ETIMEDOUT. Forked processes only. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

enum { NREADERS = 3 };

static int log_calls;
static char log_last[256];

static void test_log(void *arg, const char *msg)
{
    (void)arg;
    log_calls++;
    snprintf(log_last, sizeof log_last, "%s", msg);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct victim {
    lh_shared_t *sh;
    int reader; /* -1: take the writer lock; else this reader index */
} victim_t;

/* The child: take the lock, scribble half a record (a writer), say so, wait to die. */
static int victim_main(void *arg)
{
    victim_t *v = arg;
    tc_rwlock_t lk;
    tc_lock_opts_t o = lh_opts(LH_WAIT_S);
    if (tc_rwlock_attach(&lk, v->sh->lock_mem, lh_lock_bytes(v->sh), &o) != 0)
        return 1;
    int rc = v->reader < 0 ? tc_rwlock_wrlock(&lk) : tc_rwlock_rdlock(&lk, v->reader);
    if (rc != 0)
        return 2;
    if (v->reader < 0) {
        v->sh->rec.seq++;
        for (int i = 0; i < LH_WORDS / 2; i++)
            v->sh->rec.w[i] = 0xdeadULL + (uint64_t)i;
    }
    /* release: pairs with the parent's acquire wait below */
    atomic_store_explicit(&v->sh->phase, 1, memory_order_release);
    for (;;)
        pause();
}

/* Fork a victim, wait until it holds the lock, kill it. */
static int kill_holder(lh_shared_t *sh, int reader)
{
    victim_t v = {sh, reader};
    lh_worker_t w;
    atomic_store(&sh->phase, 0);
    if (lh_spawn(&w, 1, victim_main, &v) != 0)
        return 1;
    while (atomic_load_explicit(&sh->phase, memory_order_acquire) != 1) {
        int st;
        if (waitpid(w.pid, &st, WNOHANG) == w.pid) {
            lh_fail(sh, "victim exited early (status %d)", st);
            return 1;
        }
        usleep(100);
    }
    kill(w.pid, SIGKILL);
    int rc = lh_join(&w);
    if (rc != 128 + SIGKILL) {
        lh_fail(sh, "victim ended with %d, expected SIGKILL", rc);
        return 1;
    }
    return 0;
}

static lh_validate_params_t round_params(tc_lock_scheme_t s)
{
    lh_validate_params_t p = {.scheme = s,
                              .nreaders = NREADERS,
                              .nwriters = 1,
                              .reads = 300,
                              .writes = 50,
                              .use_procs = 1,
                              .seed = 42};
    return p;
}

/* scenario 0: the writer dies, readers recover first; 1: the writer dies, the next
 * writer recovers; 2: reader 1 dies, the writer recovers its mutex. */
static int mutex_scenario(tc_lock_scheme_t s, int scenario)
{
    tc_rwlock_t lk;
    tc_lock_opts_t o = lh_opts(LH_WAIT_S);
    o.log = test_log;
    lh_shared_t *sh = lh_shared_create(s, NREADERS, &lk, &o);
    const char *name = tc_lock_scheme_name(s);
    if (sh == NULL)
        return 1;
    int calls = log_calls;
    if (kill_holder(sh, scenario == 2 ? 1 : -1) != 0)
        goto out;
    if (scenario == 0) {
        for (int x = 0; x < NREADERS; x++) {
            int rc = tc_rwlock_rdlock(&lk, x);
            if (tc_err_kind(rc) != TC_ERR_OWNERDEAD)
                lh_fail(sh, "%s: reader %d after the writer died: %s, expected EOWNERDEAD", name, x,
                        LH_ERRSTR(rc));
            if (lh_record_check(&sh->rec))
                lh_fail(sh, "%s: the dead writer's half-written record is not detected", name);
            tc_rwlock_rdunlock(&lk, x);
            rc = tc_rwlock_rdlock(&lk, x);
            if (rc != 0)
                lh_fail(sh, "%s: reader %d second rdlock: %s", name, x, LH_ERRSTR(rc));
            tc_rwlock_rdunlock(&lk, x);
        }
    }
    int rc = tc_rwlock_wrlock(&lk);
    tc_err_kind_t want = scenario == 0 ? TC_ERR_NONE : TC_ERR_OWNERDEAD;
    if (tc_err_kind(rc) != want)
        lh_fail(sh, "%s scenario %d: wrlock returned %s, expected %s", name, scenario,
                LH_ERRSTR(rc), tc_err_kind_name(want));
    if (rc == TC_OK || tc_err_kind(rc) == TC_ERR_OWNERDEAD) {
        lh_record_write(&sh->rec, sh->rec.seq + 1, NULL); /* the caller's repair */
        tc_rwlock_wrunlock(&lk);
    }
    if (log_calls == calls || strstr(log_last, "recovered") == NULL)
        lh_fail(sh, "%s scenario %d: no recovery message (last: '%s')", name, scenario, log_last);
    lh_validate_params_t p = round_params(s);
    if (lh_validate_run(sh, &p) != 0)
        lh_fail(sh, "%s scenario %d: validate round after recovery failed", name, scenario);
out:;
    int f = atomic_load(&sh->failures);
    tc_rwlock_destroy(&lk);
    lh_shared_free(sh);
    printf("%-15s %s: %s\n", name,
           scenario == 0   ? "writer killed, readers recover"
           : scenario == 1 ? "writer killed, writer recovers"
                           : "reader killed, writer recovers",
           f ? "FAIL" : "ok");
    return f;
}

/* The waiter gives up after `timeout` with ETIMEDOUT and a message. */
static int timeout_scenario(tc_lock_scheme_t s, int reader_dies)
{
    const double timeout = 0.5;
    tc_rwlock_t lk;
    tc_lock_opts_t o = lh_opts(timeout);
    o.log = test_log;
    lh_shared_t *sh = lh_shared_create(s, NREADERS, &lk, &o);
    const char *name = tc_lock_scheme_name(s);
    if (sh == NULL)
        return 1;
    int calls = log_calls;
    if (kill_holder(sh, reader_dies ? 1 : -1) != 0)
        goto out;
    double t0 = now_s();
    int rc = reader_dies ? tc_rwlock_wrlock(&lk) : tc_rwlock_rdlock(&lk, 2);
    double dt = now_s() - t0;
    if (tc_err_kind(rc) != TC_ERR_TIMEOUT)
        lh_fail(sh, "%s: waiting for a dead holder returned %s, expected ETIMEDOUT", name,
                LH_ERRSTR(rc));
    /* Not before the timeout; no upper bound (a busy machine may deschedule
     * the waiter past its deadline: the watchdog catches a wait that never
     * ends). */
    if (dt < timeout * 0.95)
        lh_fail(sh, "%s: gave up after %.3f s, before the timeout %.3f s", name, dt, timeout);
    if (log_calls != calls + 1 || strstr(log_last, "gave up") == NULL)
        lh_fail(sh, "%s: expected one 'gave up' message, got %d ('%s')", name, log_calls - calls,
                log_last);
    if (s == TC_LOCK_SCHEME_N_MCS) {
        rc = tc_rwlock_rdlock(&lk, 0);
        if (tc_err_kind(rc) != TC_ERR_NOTRECOVERABLE)
            lh_fail(sh, "%s: after giving up, rdlock returned %s", name, LH_ERRSTR(rc));
    }
out:;
    int f = atomic_load(&sh->failures);
    lh_shared_free(sh); /* not destroyed: a dead process may hold it */
    printf("%-15s %s killed, waiter gives up after %.1f s: %s\n", name,
           reader_dies ? "reader" : "writer", timeout, f ? "FAIL" : "ok");
    return f;
}

int main(void)
{
    int failures = 0;
    lh_watchdog_arm(LH_WATCHDOG_S, "locks_kill");
    static const tc_lock_scheme_t robust[] = {TC_LOCK_SCHEME_1N_MUTEX, TC_LOCK_SCHEME_2N_MUTEX,
                                              TC_LOCK_SCHEME_N_MUTEX_SIGNAL};
    for (size_t i = 0; i < sizeof robust / sizeof robust[0]; i++)
        for (int scenario = 0; scenario < 3; scenario++)
            failures += mutex_scenario(robust[i], scenario);
    failures += timeout_scenario(TC_LOCK_SCHEME_N_MCS, 0);
    failures += timeout_scenario(TC_LOCK_SCHEME_N_MCS, 1);
    failures += timeout_scenario(TC_LOCK_SCHEME_RWLOCK, 0);
    lh_watchdog_disarm();
    printf("%s\n", failures ? "FAILED" : "kill tests ok");
    return failures ? 1 : 0;
}
