/* The lock interface without concurrency: names, sizes (against the layouts the
 * schemes document), argument checks, attach, single-party lock/unlock, N-MCS queue
 * tails, and the timeout paths (a party waiting for itself must give up). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "base/wait.h" /* TC_WAIT_* */
#include "locks/rwlock.h"

#include "tc_unit.h"

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

/* Expected sizes from the documented layouts, TC_CACHELINE = L: a header line, then
 * rwlock: the rwlock padded to a line; 1n: one mutex line per reader; 2n: two;
 * n-mutex-signal: a writer-mutex line, a sleepers line + (signal line + mutex line)
 * per reader; n-mcs: a gate line + (head + two records) per reader (the sleepers
 * counts share the gate and head lines). */
static size_t expected_size(tc_lock_scheme_t s, int n)
{
    const size_t L = TC_CACHELINE;
    switch (s) {
    case TC_LOCK_SCHEME_RWLOCK:
        return L + L * ((sizeof(pthread_rwlock_t) + L - 1) / L);
    case TC_LOCK_SCHEME_1N_MUTEX:
        return L + L * (size_t)n;
    case TC_LOCK_SCHEME_2N_MUTEX:
        return L + 2 * L * (size_t)n;
    case TC_LOCK_SCHEME_N_MUTEX_SIGNAL:
        return 3 * L + 2 * L * (size_t)n;
    case TC_LOCK_SCHEME_N_MCS:
        return 2 * L + 3 * L * (size_t)n;
    default:
        return 0;
    }
}

static void test_names(void)
{
    static const char *names[] = {"rwlock", "1n-mutex", "2n-mutex", "n-mutex-signal", "n-mcs"};
    for (int s = 0; s < TC_LOCK_SCHEME_LAST; s++) {
        tc_lock_scheme_t got = TC_LOCK_SCHEME_LAST;
        CHECK(strcmp(tc_lock_scheme_name((tc_lock_scheme_t)s), names[s]) == 0, "scheme %d", s);
        CHECK(tc_lock_scheme_parse(names[s], &got) == 0 && got == (tc_lock_scheme_t)s, "%s",
              names[s]);
    }
    tc_lock_scheme_t got = TC_LOCK_SCHEME_1N_MUTEX;
    CHECK(tc_lock_scheme_parse("N-MCS", &got) == 0 && got == TC_LOCK_SCHEME_N_MCS, "upper case");
    got = TC_LOCK_SCHEME_1N_MUTEX;
    CHECK(tc_err_kind(tc_lock_scheme_parse("mcs", &got)) == TC_ERR_ARG &&
              got == TC_LOCK_SCHEME_1N_MUTEX,
          "unknown name leaves the output alone");
    CHECK(tc_err_kind(tc_lock_scheme_parse("", &got)) == TC_ERR_ARG, "empty");
    CHECK(tc_err_kind(tc_lock_scheme_parse(NULL, &got)) == TC_ERR_ARG, "NULL");
    CHECK(tc_lock_scheme_name(TC_LOCK_SCHEME_LAST) == NULL, "LAST has no name");
}

static void test_sizes(void)
{
    for (int s = 0; s < TC_LOCK_SCHEME_LAST; s++) {
        CHECK(tc_rwlock_size((tc_lock_scheme_t)s, 0) == 0, "n = 0");
        for (int n = 1; n <= 64; n++) {
            size_t sz = tc_rwlock_size((tc_lock_scheme_t)s, n);
            CHECK(sz == expected_size((tc_lock_scheme_t)s, n), "%s n=%d: %zu, expected %zu",
                  tc_lock_scheme_name((tc_lock_scheme_t)s), n, sz,
                  expected_size((tc_lock_scheme_t)s, n));
            CHECK(sz % TC_CACHELINE == 0, "padded");
        }
    }
    CHECK(tc_rwlock_size(TC_LOCK_SCHEME_LAST, 4) == 0, "invalid scheme");
}

static void *map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    return p;
}

static void test_args_and_attach(tc_lock_scheme_t s)
{
    const int n = 3;
    size_t sz = tc_rwlock_size(s, n);
    char *mem = map(sz + 2 * TC_CACHELINE);
    tc_lock_opts_t o = {.timeout_s = 5.0, .spin_polls = 16, .log = test_log};
    tc_rwlock_t lk, lk2;
    const char *name = tc_lock_scheme_name(s);
    CHECK(tc_err_kind(tc_rwlock_attach(&lk2, mem, sz, &o)) == TC_ERR_BUSY, "%s: attach before init",
          name);
    CHECK(tc_err_kind(tc_rwlock_init(&lk, mem + 8, sz, s, n, &o)) == TC_ERR_ARG, "%s: misaligned",
          name);
    CHECK(tc_err_kind(tc_rwlock_init(&lk, mem, sz - 1, s, n, &o)) == TC_ERR_ARG, "%s: short", name);
    CHECK(tc_err_kind(tc_rwlock_init(&lk, mem, sz, s, 0, &o)) == TC_ERR_ARG, "%s: no readers",
          name);
    tc_lock_opts_t bad = o;
    bad.timeout_s = -1.0;
    CHECK(tc_err_kind(tc_rwlock_init(&lk, mem, sz, s, n, &bad)) == TC_ERR_ARG,
          "%s: negative timeout", name);
    bad = o;
    bad.wait_policy = TC_WAIT_LAST;
    CHECK(tc_err_kind(tc_rwlock_init(&lk, mem, sz, s, n, &bad)) == TC_ERR_ARG,
          "%s: bad wait policy", name);
    CHECK(tc_rwlock_init(&lk, mem, sz, s, n, &o) == 0, "%s: init", name);
    CHECK(tc_err_kind(tc_rwlock_attach(&lk2, mem, sz - 1, &o)) == TC_ERR_ARG, "%s: attach short",
          name);
    CHECK(tc_rwlock_attach(&lk2, mem, sz, &o) == 0, "%s: attach", name);
    CHECK(lk2.scheme == s && lk2.nreaders == n, "%s: attach read scheme and N", name);
    CHECK(tc_err_kind(tc_rwlock_rdlock(&lk, -1)) == TC_ERR_ARG, "%s: index -1", name);
    CHECK(tc_err_kind(tc_rwlock_rdlock(&lk, n)) == TC_ERR_ARG, "%s: index N", name);
    CHECK(tc_err_kind(tc_rwlock_rdunlock(&lk, n)) == TC_ERR_ARG, "%s: unlock index N", name);

    /* Each reader alone, twice (the second time through the released state), then
     * the writer through the other handle. (One thread never holds two reader locks:
     * against the writer's index order that can deadlock, see rwlock.h.) */
    for (int rep = 0; rep < 2; rep++) {
        for (int x = 0; x < n; x++) {
            CHECK(tc_rwlock_rdlock(&lk, x) == 0, "%s: rdlock %d", name, x);
            if (s == TC_LOCK_SCHEME_N_MCS)
                CHECK(tc_rwlock_nmcs_tail(&lk, x) == 1, "tail after rdlock");
            CHECK(tc_rwlock_rdunlock(&lk, x) == 0, "%s: rdunlock %d", name, x);
        }
        CHECK(tc_rwlock_wrlock(&lk2) == 0, "%s: wrlock", name);
        for (int x = 0; x < n && s == TC_LOCK_SCHEME_N_MCS; x++)
            CHECK(tc_rwlock_nmcs_tail(&lk2, x) == 2, "tail after wrlock");
        CHECK(tc_rwlock_wrunlock(&lk2) == 0, "%s: wrunlock", name);
    }
    for (int x = 0; x < n; x++)
        CHECK(tc_rwlock_nmcs_tail(&lk, x) == (s == TC_LOCK_SCHEME_N_MCS ? 0 : -1), "tail");
    CHECK(tc_rwlock_destroy(&lk) == 0, "%s: destroy", name);
    CHECK(tc_err_kind(tc_rwlock_attach(&lk2, mem, sz, &o)) == TC_ERR_BUSY,
          "%s: attach after destroy", name);
    CHECK(tc_err_kind(tc_rwlock_destroy(&lk)) == TC_ERR_ARG, "%s: destroy twice", name);
    munmap(mem, sz + 2 * TC_CACHELINE);
}

/* The writer waits for a reader lock held by its own thread: it can never get it,
 * so a bounded wait must end with ETIMEDOUT and a message (N-MCS, rwlock). For
 * N-MCS the lock is then broken for everyone. */
static void test_timeout(tc_lock_scheme_t s, int policy)
{
    const int n = 2;
    size_t sz = tc_rwlock_size(s, n);
    void *mem = map(sz);
    tc_lock_opts_t o = {.timeout_s = 0.2, .spin_polls = 16, .log = test_log, .wait_policy = policy};
    tc_rwlock_t lk;
    const char *name = tc_lock_scheme_name(s);
    CHECK(tc_rwlock_init(&lk, mem, sz, s, n, &o) == 0, "%s: init", name);
    CHECK(tc_rwlock_rdlock(&lk, 1) == 0, "%s: rdlock", name);
    int calls = log_calls;
    double t0 = now_s();
    int rc = tc_rwlock_wrlock(&lk);
    double dt = now_s() - t0;
    CHECK(tc_err_kind(rc) == TC_ERR_TIMEOUT, "%s: wrlock behind a held reader returned %d (%s)",
          name, rc, tc_err_string(rc, (char[128]){0}, 128));
    /* Not early; no upper bound (a busy machine may deschedule us past it). */
    CHECK(dt >= 0.19, "%s: gave up after %.3f s, before the timeout 0.2 s", name, dt);
    CHECK(log_calls == calls + 1 && strstr(log_last, "gave up") != NULL,
          "%s: one message (got %d: '%s')", name, log_calls - calls, log_last);
    if (s == TC_LOCK_SCHEME_N_MCS) {
        CHECK(strstr(log_last, "broken") != NULL, "message says broken: '%s'", log_last);
        CHECK(tc_err_kind(tc_rwlock_rdunlock(&lk, 1)) == TC_ERR_NOTRECOVERABLE, "broken: rdunlock");
        CHECK(tc_err_kind(tc_rwlock_rdlock(&lk, 0)) == TC_ERR_NOTRECOVERABLE, "broken: rdlock");
        CHECK(tc_err_kind(tc_rwlock_wrlock(&lk)) == TC_ERR_NOTRECOVERABLE, "broken: wrlock");
    } else {
        CHECK(tc_rwlock_rdunlock(&lk, 1) == 0, "%s: rdunlock", name);
        CHECK(tc_rwlock_wrlock(&lk) == 0, "%s: wrlock after the reader left", name);
        CHECK(tc_rwlock_wrunlock(&lk) == 0, "%s: wrunlock", name);
    }
    tc_rwlock_destroy(&lk);
    munmap(mem, sz);
}

int main(void)
{
    test_names();
    test_sizes();
    for (int s = 0; s < TC_LOCK_SCHEME_LAST; s++)
        test_args_and_attach((tc_lock_scheme_t)s);
    /* N-MCS waits through the wait helper: its timeout under every TC_WAIT policy. */
    for (int policy = 0; policy < TC_WAIT_LAST; policy++)
        test_timeout(TC_LOCK_SCHEME_N_MCS, policy);
    test_timeout(TC_LOCK_SCHEME_RWLOCK, TC_WAIT_AUTO);
    printf("%s\n", tu_failures ? "FAILED" : "locks api ok");
    return tu_failures ? 1 : 0;
}
