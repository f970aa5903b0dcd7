/* Validation harness for src/locks; see harness.h. */
#include "harness.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static size_t lh_map_bytes;

tc_lock_opts_t lh_opts(double timeout_s)
{
    tc_lock_opts_t o = {.timeout_s = timeout_s, .spin_polls = 64, .log = NULL, .log_arg = NULL};
    return o;
}

/* What the watchdog watches for progress: the latest shared block, and a
 * count of blocks created (a new round is progress). Relaxed atomics: read
 * by the signal handler, possibly on another thread; nothing is published. */
static _Atomic(lh_shared_t *) lh_watch_sh;
static _Atomic uint64_t lh_watch_epoch;

lh_shared_t *lh_shared_create(tc_lock_scheme_t scheme, int nreaders, tc_rwlock_t *lk,
                              const tc_lock_opts_t *opts)
{
    size_t lock_bytes = tc_rwlock_size(scheme, nreaders);
    if (lock_bytes == 0)
        return NULL;
    lh_map_bytes = sizeof(lh_shared_t) + lock_bytes;
    void *p = mmap(NULL, lh_map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        return NULL;
    }
    lh_shared_t *sh = p;
    int rc = tc_rwlock_init(lk, sh->lock_mem, lock_bytes, scheme, nreaders, opts);
    if (rc != 0) {
        fprintf(stderr, "tc_rwlock_init(%s, %d): %s\n", tc_lock_scheme_name(scheme), nreaders,
                LH_ERRSTR(rc));
        munmap(p, lh_map_bytes);
        return NULL;
    }
    lh_record_write(&sh->rec, 0, NULL);
    atomic_store_explicit(&lh_watch_sh, sh, memory_order_relaxed);
    atomic_fetch_add_explicit(&lh_watch_epoch, 1, memory_order_relaxed);
    return sh;
}

size_t lh_lock_bytes(const lh_shared_t *sh)
{
    (void)sh;
    return lh_map_bytes - sizeof(lh_shared_t);
}

void lh_shared_free(lh_shared_t *sh)
{
    lh_shared_t *expect = sh;
    atomic_compare_exchange_strong_explicit(&lh_watch_sh, &expect, NULL, memory_order_relaxed,
                                            memory_order_relaxed);
    munmap(sh, lh_map_bytes);
}

void lh_fail(lh_shared_t *sh, const char *fmt, ...)
{
    atomic_fetch_add_explicit(&sh->failures, 1, memory_order_relaxed);
    va_list ap;
    va_start(ap, fmt);
    if (atomic_exchange_explicit(&sh->msg_taken, 1, memory_order_relaxed) == 0) {
        vsnprintf(sh->msg, sizeof sh->msg, fmt, ap);
        fprintf(stderr, "FAIL: %s\n", sh->msg);
    }
    va_end(ap);
}

uint64_t lh_rand(uint64_t *s)
{
    /* xorshift64* */
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

void lh_random_pause(uint64_t *state)
{
    uint64_t r = lh_rand(state);
    switch (r & 7) {
    case 0:
        sched_yield();
        break;
    case 1:
    case 2:
        for (unsigned i = 0; i < ((r >> 8) & 255); i++)
            atomic_signal_fence(memory_order_seq_cst); /* keeps the loop */
        break;
    default:
        break;
    }
}

static uint64_t lh_word(uint64_t seq, int i)
{
    return (seq + 1) * 0x9E3779B97F4A7C15ULL ^ ((uint64_t)i << 56);
}

void lh_record_write(lh_record_t *r, uint64_t seq, uint64_t *rng)
{
    uint64_t sum = seq;
    r->seq = seq;
    for (int i = 0; i < LH_WORDS; i++) {
        r->w[i] = lh_word(seq, i);
        sum += r->w[i] * (uint64_t)(i + 1);
        if (rng != NULL && i == LH_WORDS / 2)
            lh_random_pause(rng); /* widen the window a torn read would fall into */
    }
    r->sum = sum;
}

int lh_record_check(const lh_record_t *r)
{
    uint64_t sum = r->seq;
    for (int i = 0; i < LH_WORDS; i++) {
        if (r->w[i] != lh_word(r->seq, i))
            return 0;
        sum += r->w[i] * (uint64_t)(i + 1);
    }
    return sum == r->sum;
}

/* ---- workers ------------------------------------------------------------ */

static void *lh_thread_main(void *arg)
{
    lh_worker_t *w = arg;
    w->rc = w->fn(w->arg);
    return NULL;
}

int lh_spawn(lh_worker_t *w, int use_procs, lh_fn fn, void *arg)
{
    w->use_procs = use_procs;
    w->fn = fn;
    w->arg = arg;
    w->rc = -1;
    if (use_procs) {
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0)
            return errno;
        if (pid == 0)
            _exit(fn(arg) & 0x7f);
        w->pid = pid;
        lh_watchdog_register(pid);
        return 0;
    }
    pthread_t t;
    int rc = pthread_create(&t, NULL, lh_thread_main, w);
    w->thread = (unsigned long)t;
    return rc;
}

int lh_join(lh_worker_t *w)
{
    if (w->use_procs) {
        int st;
        while (waitpid(w->pid, &st, 0) < 0) {
            if (errno != EINTR)
                return -1;
        }
        if (WIFSIGNALED(st))
            return 128 + WTERMSIG(st);
        return WEXITSTATUS(st);
    }
    pthread_join((pthread_t)w->thread, NULL);
    return w->rc;
}

/* ---- watchdog -------------------------------------------------------------- */

static pid_t lh_children[256];
static volatile sig_atomic_t lh_nchildren; /* signal-handler bookkeeping, not sync */
static char lh_watch_msg[200];

static _Atomic uint64_t lh_watch_last;
static unsigned lh_watch_secs;

/* Operations completed so far (the counters every test's parties bump). */
static uint64_t lh_progress(void)
{
    uint64_t v = atomic_load_explicit(&lh_watch_epoch, memory_order_relaxed) << 48;
    lh_shared_t *sh = atomic_load_explicit(&lh_watch_sh, memory_order_relaxed);
    if (sh)
        v += atomic_load_explicit(&sh->reads, memory_order_relaxed) +
             atomic_load_explicit(&sh->writes, memory_order_relaxed) +
             atomic_load_explicit(&sh->phase, memory_order_relaxed) +
             atomic_load_explicit(&sh->done, memory_order_relaxed) +
             atomic_load_explicit(&sh->wdone, memory_order_relaxed);
    return v;
}

/* SIGALRM every lh_watch_secs: progress since the last one re-arms it; none
 * is a deadlock. (A bound on the total time failed on a machine whose cores
 * were busy with other jobs: every hand-over then waits for a time slice.) */
static void lh_watchdog_fire(int sig)
{
    (void)sig;
    uint64_t now = lh_progress();
    if (now != atomic_exchange_explicit(&lh_watch_last, now, memory_order_relaxed)) {
        alarm(lh_watch_secs);
        return;
    }
    static const char head[] = "FAIL: deadlock bound exceeded: ";
    ssize_t ignored = write(2, head, sizeof head - 1);
    ignored = write(2, lh_watch_msg, strlen(lh_watch_msg));
    ignored = write(2, "\n", 1);
    (void)ignored;
    for (int i = 0; i < lh_nchildren; i++)
        kill(lh_children[i], SIGKILL);
    _exit(1);
}

void lh_watchdog_arm(unsigned seconds, const char *what)
{
    snprintf(lh_watch_msg, sizeof lh_watch_msg, "%s (no progress for %u s)", what, seconds);
    lh_watch_secs = seconds;
    atomic_store_explicit(&lh_watch_last, lh_progress(), memory_order_relaxed);
    lh_nchildren = 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = lh_watchdog_fire;
    sigaction(SIGALRM, &sa, NULL);
    alarm(seconds);
}

void lh_watchdog_register(pid_t pid)
{
    if (lh_nchildren < (int)(sizeof lh_children / sizeof lh_children[0]))
        lh_children[lh_nchildren++] = pid;
}

void lh_watchdog_disarm(void)
{
    alarm(0);
    lh_nchildren = 0;
}

/* ---- validate ------------------------------------------------------------ */

typedef struct lh_vworker {
    lh_shared_t *sh;
    const lh_validate_params_t *p;
    int index; /* reader index, or writer number */
    uint64_t seq0, want_w;
    uint64_t want_wdone; /* readers run until sh->wdone reaches this */
} lh_vworker_t;

/* All workers start together, so readers and writers really overlap. */
static void lh_start_gate(lh_shared_t *sh)
{
    atomic_fetch_add_explicit(&sh->done, 1, memory_order_relaxed);
    unsigned polls = 0;
    /* acquire: pairs with the release store of phase in lh_validate_run() */
    while (atomic_load_explicit(&sh->phase, memory_order_acquire) == 0)
        if (++polls > 64)
            sched_yield();
}

static int lh_attach(lh_shared_t *sh, tc_rwlock_t *lk, int wait_policy)
{
    tc_lock_opts_t o = lh_opts(LH_WAIT_S);
    o.wait_policy = wait_policy;
    int rc = tc_rwlock_attach(lk, sh->lock_mem, lh_lock_bytes(sh), &o);
    if (rc != 0)
        lh_fail(sh, "tc_rwlock_attach: %s", LH_ERRSTR(rc));
    return rc;
}

static int lh_validate_reader(void *arg)
{
    lh_vworker_t *v = arg;
    lh_shared_t *sh = v->sh;
    tc_rwlock_t lk;
    if (lh_attach(sh, &lk, v->p->wait_policy) != 0)
        return 1;
    uint64_t rng = v->p->seed * 7919 + (uint64_t)v->index * 104729 + 1;
    uint64_t last = 0;
    const int x = v->index;
    lh_start_gate(sh);
    /* At least `reads` reads, and on until every writer is done, so reads overlap
     * the writes even when the scheduler runs the writers late. */
    for (int k = 0;
         k < v->p->reads || atomic_load_explicit(&sh->wdone, memory_order_relaxed) < v->want_wdone;
         k++) {
        int rc = tc_rwlock_rdlock(&lk, x);
        if (rc != 0) {
            lh_fail(sh, "%s reader %d: rdlock returned %s",
                    lk.mem ? tc_lock_scheme_name(lk.scheme) : "?", x, LH_ERRSTR(rc));
            return 1;
        }
        uint64_t occ = atomic_fetch_add_explicit(&sh->occupancy, 1, memory_order_relaxed);
        if (occ >> 32)
            lh_fail(sh, "%s reader %d: a writer is inside with us (occupancy %#llx)",
                    tc_lock_scheme_name(lk.scheme), x, (unsigned long long)occ);
        lh_record_t copy = sh->rec;
        if ((lh_rand(&rng) & 3) == 0)
            lh_random_pause(&rng);
        if (!lh_record_check(&copy) || memcmp(&copy, &sh->rec, sizeof copy) != 0)
            lh_fail(sh, "%s reader %d: torn record (seq %llu)", tc_lock_scheme_name(lk.scheme), x,
                    (unsigned long long)copy.seq);
        if (copy.seq < last)
            lh_fail(sh, "%s reader %d: seq went back %llu -> %llu", tc_lock_scheme_name(lk.scheme),
                    x, (unsigned long long)last, (unsigned long long)copy.seq);
        last = copy.seq;
        if (copy.seq != v->seq0 && copy.seq != v->seq0 + v->want_w)
            atomic_fetch_add_explicit(&sh->overlap, 1, memory_order_relaxed);
        atomic_fetch_sub_explicit(&sh->occupancy, 1, memory_order_relaxed);
        rc = tc_rwlock_rdunlock(&lk, x);
        if (rc != 0) {
            lh_fail(sh, "reader %d: rdunlock returned %s", x, LH_ERRSTR(rc));
            return 1;
        }
        atomic_fetch_add_explicit(&sh->reads, 1, memory_order_relaxed);
        lh_random_pause(&rng);
    }
    return 0;
}

static int lh_validate_writer(void *arg)
{
    lh_vworker_t *v = arg;
    lh_shared_t *sh = v->sh;
    tc_rwlock_t lk;
    if (lh_attach(sh, &lk, v->p->wait_policy) != 0)
        return 1;
    uint64_t rng = v->p->seed * 31337 + (uint64_t)v->index * 7 + 3;
    lh_start_gate(sh);
    for (int k = 0; k < v->p->writes; k++) {
        int rc = tc_rwlock_wrlock(&lk);
        if (rc != 0) {
            lh_fail(sh, "writer %d: wrlock returned %s", v->index, LH_ERRSTR(rc));
            return 1;
        }
        uint64_t occ =
            atomic_fetch_add_explicit(&sh->occupancy, UINT64_C(1) << 32, memory_order_relaxed);
        if (occ != 0)
            lh_fail(sh, "%s writer %d: not alone (occupancy %#llx)", tc_lock_scheme_name(lk.scheme),
                    v->index, (unsigned long long)occ);
        /* read-modify-write of seq: a second writer inside would lose an update */
        uint64_t seq = sh->rec.seq;
        lh_record_write(&sh->rec, seq + 1, &rng);
        atomic_fetch_sub_explicit(&sh->occupancy, UINT64_C(1) << 32, memory_order_relaxed);
        rc = tc_rwlock_wrunlock(&lk);
        if (rc != 0) {
            lh_fail(sh, "writer %d: wrunlock returned %s", v->index, LH_ERRSTR(rc));
            return 1;
        }
        atomic_fetch_add_explicit(&sh->writes, 1, memory_order_relaxed);
        /* After the first write, wait (holding nothing) until a reader has seen a
         * record between the first and the last: the run then exercises at least one
         * interleaving by construction. Without this, on a loaded machine a woken
         * reader could take longer to be scheduled than the writer takes to re-lock
         * (the windows below are 50 us or a yield), the writer-preferring rwlock and
         * the unfair mutexes kept readers out for the whole run, and the check "no
         * read overlapped the writes" failed. The readers go on until the writers are
         * done, so one does read; a lock that never lets it in hangs here, which the
         * watchdog reports (no progress) or the test's TIMEOUT ends. relaxed: the
         * count orders nothing (see the top of the shared block). */
        if (k == 0 && v->want_w > 1 && v->p->nreaders > 0) {
            unsigned polls = 0;
            while (atomic_load_explicit(&sh->overlap, memory_order_relaxed) == 0)
                if (++polls > 64)
                    sched_yield();
        }
        /* Leave readers a window: unfair mutexes (glibc's) let a writer that re-locks
         * at once keep a woken reader out for a whole run. */
        if ((lh_rand(&rng) & 7) == 0)
            usleep(50);
        else
            sched_yield();
    }
    atomic_fetch_add_explicit(&sh->wdone, 1, memory_order_relaxed);
    return 0;
}

int lh_validate_run(lh_shared_t *sh, const lh_validate_params_t *p)
{
    int before = atomic_load(&sh->failures);
    uint64_t seq0 = sh->rec.seq;
    uint64_t reads0 = atomic_load(&sh->reads), writes0 = atomic_load(&sh->writes);
    uint64_t want_w = (uint64_t)p->nwriters * (uint64_t)p->writes;
    uint64_t want_r = (uint64_t)p->nreaders * (uint64_t)p->reads;
    lh_worker_t w[LH_MAX_WORKERS];
    lh_vworker_t v[LH_MAX_WORKERS];
    int n = 0;
    atomic_store(&sh->phase, 0);
    atomic_store(&sh->done, 0);
    atomic_store(&sh->overlap, 0);
    uint64_t wdone = atomic_load(&sh->wdone) + (uint64_t)p->nwriters;
    for (int i = 0; i < p->nwriters && n < LH_MAX_WORKERS; i++, n++) {
        v[n] = (lh_vworker_t){sh, p, i, seq0, want_w, wdone};
        if (lh_spawn(&w[n], p->use_procs, lh_validate_writer, &v[n]) != 0)
            lh_fail(sh, "spawn failed");
    }
    for (int i = 0; i < p->nreaders && n < LH_MAX_WORKERS; i++, n++) {
        v[n] = (lh_vworker_t){sh, p, i, seq0, want_w, wdone};
        if (lh_spawn(&w[n], p->use_procs, lh_validate_reader, &v[n]) != 0)
            lh_fail(sh, "spawn failed");
    }
    unsigned polls = 0;
    while (atomic_load_explicit(&sh->done, memory_order_relaxed) < (uint64_t)n)
        if (++polls > 64)
            sched_yield();
    /* release: pairs with the acquire in lh_start_gate() */
    atomic_store_explicit(&sh->phase, 1, memory_order_release);
    for (int i = 0; i < n; i++) {
        int rc = lh_join(&w[i]);
        if (rc != 0)
            lh_fail(sh, "worker %d ended with %d", i, rc);
    }
    /* A run in which no read fell between two writes tested nothing. */
    if (want_w > 1 && want_r > 0 && atomic_load(&sh->overlap) == 0)
        lh_fail(sh, "%s: no read overlapped the writes (no interleaving exercised)",
                tc_lock_scheme_name(p->scheme));
    if (sh->rec.seq != seq0 + want_w || !lh_record_check(&sh->rec))
        lh_fail(sh, "final record seq %llu, expected %llu (lost update or torn)",
                (unsigned long long)sh->rec.seq, (unsigned long long)(seq0 + want_w));
    if (atomic_load(&sh->writes) - writes0 != want_w || atomic_load(&sh->reads) - reads0 < want_r)
        lh_fail(sh, "counted %llu writes / %llu reads, expected %llu / at least %llu",
                (unsigned long long)(atomic_load(&sh->writes) - writes0),
                (unsigned long long)(atomic_load(&sh->reads) - reads0), (unsigned long long)want_w,
                (unsigned long long)want_r);
    if (atomic_load(&sh->occupancy) != 0)
        lh_fail(sh, "occupancy %#llx at the end", (unsigned long long)atomic_load(&sh->occupancy));
    return atomic_load(&sh->failures) - before;
}

int lh_validate(const lh_validate_params_t *p)
{
    tc_rwlock_t lk;
    tc_lock_opts_t o = lh_opts(LH_WAIT_S);
    o.wait_policy = p->wait_policy;
    lh_shared_t *sh = lh_shared_create(p->scheme, p->nreaders, &lk, &o);
    if (sh == NULL)
        return 1;
    lh_validate_run(sh, p);
    int rc = tc_rwlock_destroy(&lk);
    if (rc != 0)
        lh_fail(sh, "destroy: %s", LH_ERRSTR(rc));
    int failures = atomic_load(&sh->failures);
    lh_shared_free(sh);
    return failures;
}
