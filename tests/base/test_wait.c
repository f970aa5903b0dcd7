/* The wait helper (src/base/wait.[ch]): a futex sleeper is never lost, across
 * many hand-overs, between threads and between forked processes sharing an
 * anonymous shared mapping (the FUTEX_WAIT/FUTEX_WAKE pair is not the _PRIVATE
 * one); every policy completes the same hand-overs; a wait that can never
 * finish calls the timeout handler with its stage and peer, from a futex
 * sleep and from a polling wait. Auto's choice past its polls: yield outside
 * a hold-off (1 ms at most), and inside one (CPU-bound processes beside us)
 * never yield: spin TC_SPIN_CONTENDED_US from the end of the polls or the
 * peer's last progress, then sleep; sleep at once with no contended spin or
 * no polls (the job's own ranks share the CPUs). The sleepers counter's
 * lanes: a writer wakes only for a sleeper in its word's lane, and hand-overs
 * whose two words share one counter lose no sleeper.
 *
 * How a lost wake-up is detected without timing anything: each sleep is
 * bounded by info.sleep_max_ns, set here to 20 s; a sleep that ends by that
 * bound is counted (sleep_timeouts), and a peer never takes 20 s to publish
 * the next value, so any such count is a sleeper that missed its wake-up.
 *
 * Usage: test_wait [iterations] (default 5000, 1000 under TSan). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pthread.h>

#include "base/wait.h"
#include "base/wait_internal.h"

#include "tc_unit.h"

/* Two words on their own lines, as in the segment: ping written by A, pong by
 * B; one sleepers line each (the region counters of the segment), or, with
 * shared_sleepers, one for both (adjacent lines: two lanes of one counter). */
typedef struct pingpong {
    _Alignas(TC_CACHELINE) tc_atomic_u64_t ping;
    _Alignas(TC_CACHELINE) tc_atomic_u64_t pong;
    _Alignas(TC_CACHELINE) tc_atomic_u64_t ping_sleepers;
    _Alignas(TC_CACHELINE) tc_atomic_u64_t pong_sleepers;
    tc_atomic_u64_t *ping_sl, *pong_sl; /* the counters the hand-overs use */
    /* B's checks, reported to A (processes): mismatches seen, its stats */
    _Alignas(TC_CACHELINE) tc_atomic_u64_t b_bad;
    tc_atomic_u64_t b_sleeps, b_timeouts;
    /* payload handed over with each value (release/acquire through the words) */
    _Alignas(TC_CACHELINE) uint64_t payload_a;
    _Alignas(TC_CACHELINE) uint64_t payload_b;
} pingpong_t;

/* A hand-over with a futex sleep costs two context switches: on a loaded
 * 2-core machine 20000 of them took 100 s, so 5000 (1000 under
 * ThreadSanitizer, ~10x slower) keep the test well inside its TIMEOUT. */
#if defined(__SANITIZE_THREAD__)
static long iterations = 1000;
#else
static long iterations = 5000;
#endif

/* TC_SPIN_CONTENDED_US of the next info_for() (0: the struct's zero). */
static double contended_spin_s;
/* The next ping-pongs count their sleepers in one counter (pp_init()). */
static bool shared_sleepers;

static void pp_init(pingpong_t *pp)
{
    memset(pp, 0, sizeof *pp);
    pp->ping_sl = &pp->ping_sleepers;
    pp->pong_sl = shared_sleepers ? &pp->ping_sleepers : &pp->pong_sleepers;
}

static tc_wait_info_t info_for(int policy, uint32_t spin)
{
    tc_wait_info_t w;
    memset(&w, 0, sizeof w);
    w.comm_name = "test";
    w.timeout_s = 120;
    w.spin_polls = spin;
    w.policy = policy;
    w.contended_spin_s = contended_spin_s;
    w.sleep_max_ns = 20L * 1000 * 1000 * 1000;
    return w;
}

/* A: publish i with payload, wait for B's answer i and check B's payload. */
static uint64_t side_a(pingpong_t *pp, const tc_wait_info_t *info)
{
    uint64_t bad = 0;
    for (uint64_t i = 1; i <= (uint64_t)iterations; i++) {
        pp->payload_a = i * 3;
        /* release (seq_cst): pairs with B's acquire in tc_wait_ge_u64(ping) */
        tc_wait_publish_u64(&pp->ping, i, pp->ping_sl);
        /* acquire: pairs with B's publication of pong */
        uint64_t v = tc_wait_ge_u64(&pp->pong, i, pp->pong_sl, info, "test: pong", 1);
        if (v != i || pp->payload_b != i * 7)
            bad++;
    }
    return bad;
}

static uint64_t side_b(pingpong_t *pp, const tc_wait_info_t *info)
{
    uint64_t bad = 0;
    for (uint64_t i = 1; i <= (uint64_t)iterations; i++) {
        /* acquire: pairs with A's publication of ping */
        uint64_t v = tc_wait_ge_u64(&pp->ping, i, pp->ping_sl, info, "test: ping", 0);
        if (v != i || pp->payload_a != i * 3)
            bad++;
        pp->payload_b = i * 7;
        /* release (seq_cst): pairs with A's acquire of pong */
        tc_wait_publish_u64(&pp->pong, i, pp->pong_sl);
    }
    return bad;
}

typedef struct {
    pingpong_t *pp;
    const tc_wait_info_t *info;
    uint64_t bad;
} thread_arg_t;

static void *thread_b(void *arg)
{
    thread_arg_t *t = arg;
    t->bad = side_b(t->pp, t->info);
    return NULL;
}

static const char *policy_name[] = {"auto", "spin", "yield", "futex"};

static void test_threads(int policy, uint32_t spin)
{
    pingpong_t *pp = aligned_alloc(TC_CACHELINE, sizeof *pp);
    pp_init(pp);
    tc_wait_info_t info = info_for(policy, spin);
    tc_wait_stats_reset();
    thread_arg_t t = {pp, &info, 0};
    pthread_t th;
    if (pthread_create(&th, NULL, thread_b, &t) != 0) {
        CHECK(0, "pthread_create");
        free(pp);
        return;
    }
    uint64_t bad = side_a(pp, &info);
    pthread_join(th, NULL);
    tc_wait_stats_t st;
    tc_wait_stats_get(&st);
    CHECK(bad == 0 && t.bad == 0, "threads %s spin %u: %llu/%llu wrong hand-overs",
          policy_name[policy], spin, (unsigned long long)bad, (unsigned long long)t.bad);
    CHECK(st.sleep_timeouts == 0, "threads %s spin %u: %llu sleeps missed their wake-up",
          policy_name[policy], spin, (unsigned long long)st.sleep_timeouts);
    if (policy == TC_WAIT_SPIN || policy == TC_WAIT_YIELD)
        CHECK(st.sleeps == 0, "threads %s: %llu futex sleeps", policy_name[policy],
              (unsigned long long)st.sleeps);
    printf("threads %-5s spin %-4u: %ld hand-overs each way, %llu slow waits, %llu sleeps, %llu "
           "wakes, %llu yields\n",
           policy_name[policy], spin, iterations, (unsigned long long)st.waits,
           (unsigned long long)st.sleeps, (unsigned long long)st.wakes,
           (unsigned long long)st.yields);
    free(pp);
}

/* tc_wait_auto_next(), each branch, with @p first set by hand (no timing). */
static void test_auto_next(void)
{
    tc_wait_info_t info = info_for(TC_WAIT_AUTO, 200);
    double first = 0.0;
    info.contended_spin_s = 10.0;
    tc_wait_test_holdoff(600.0);
    CHECK(tc_wait_auto_next(&info, &first) == TC_WAIT_NEXT_SPIN,
          "hold-off, contended spin 10 s: the first call after the polls spins");
    CHECK(first > 0.0, "the first call sets the wait's start");
    first = tc_wait_now() - 9.0;
    CHECK(tc_wait_auto_next(&info, &first) == TC_WAIT_NEXT_SPIN, "hold-off, 9 s of 10: spins");
    first = tc_wait_now() - 11.0;
    CHECK(tc_wait_auto_next(&info, &first) == TC_WAIT_NEXT_SLEEP, "hold-off, 11 s of 10: sleeps");
    info.spin_polls = 0;
    first = 0.0;
    CHECK(tc_wait_auto_next(&info, &first) == TC_WAIT_NEXT_SLEEP,
          "hold-off, TC_SPIN_COUNT 0 (own ranks share the CPUs): sleeps at once");
    info.spin_polls = 200;
    info.contended_spin_s = 0.0;
    first = 0.0;
    CHECK(tc_wait_auto_next(&info, &first) == TC_WAIT_NEXT_SLEEP,
          "hold-off, TC_SPIN_CONTENDED_US 0: sleeps at once");
    /* Outside a hold-off: yield (a yield that meets a slice here would begin a
     * real hold-off; end it before the next case). */
    tc_wait_test_holdoff(0.0);
    info.contended_spin_s = 10.0;
    first = 0.0;
    CHECK(tc_wait_auto_next(&info, &first) == TC_WAIT_NEXT_YIELDED, "no hold-off: yields");
    tc_wait_test_holdoff(0.0);
    first = tc_wait_now() - 2e-3;
    CHECK(tc_wait_auto_next(&info, &first) == TC_WAIT_NEXT_SLEEP,
          "no hold-off, 2 ms of yields (1 ms budget): sleeps, does not spin");
}

/* Hand-overs inside a hold-off: auto never yields there, with or without the
 * contended spin, and loses no sleeper. */
static void test_holdoff_handovers(void)
{
    static const double spins[] = {0.0, 1e-3};
    for (int i = 0; i < 2; i++) {
        contended_spin_s = spins[i];
        tc_wait_test_holdoff(600.0);
        test_threads(TC_WAIT_AUTO, 200);
        tc_wait_stats_t st;
        tc_wait_stats_get(&st);
        CHECK(st.yields == 0, "hold-off, contended spin %g s: %llu yields", spins[i],
              (unsigned long long)st.yields);
    }
    contended_spin_s = 0.0;
    tc_wait_test_holdoff(0.0);
}

static void test_processes(int policy, uint32_t spin)
{
    pingpong_t *pp =
        mmap(NULL, sizeof *pp, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (pp == MAP_FAILED) {
        CHECK(0, "mmap");
        return;
    }
    pp_init(pp);
    tc_wait_info_t info = info_for(policy, spin);
    tc_wait_stats_reset();
    pid_t pid = fork();
    if (pid < 0) {
        CHECK(0, "fork");
        munmap(pp, sizeof *pp);
        return;
    }
    if (pid == 0) {
        uint64_t bad = side_b(pp, &info);
        tc_wait_stats_t st;
        tc_wait_stats_get(&st);
        atomic_store(&pp->b_sleeps, st.sleeps);
        atomic_store(&pp->b_timeouts, st.sleep_timeouts);
        atomic_store(&pp->b_bad, bad);
        _exit(0);
    }
    uint64_t bad = side_a(pp, &info);
    int status = 0;
    waitpid(pid, &status, 0);
    tc_wait_stats_t st;
    tc_wait_stats_get(&st);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "processes: child status %d", status);
    CHECK(bad == 0 && atomic_load(&pp->b_bad) == 0, "processes %s spin %u: wrong hand-overs",
          policy_name[policy], spin);
    CHECK(st.sleep_timeouts == 0 && atomic_load(&pp->b_timeouts) == 0,
          "processes %s spin %u: %llu + %llu sleeps missed their wake-up", policy_name[policy],
          spin, (unsigned long long)st.sleep_timeouts,
          (unsigned long long)atomic_load(&pp->b_timeouts));
    printf("procs   %-5s spin %-4u: %ld hand-overs each way, sleeps %llu (A) %llu (B), wakes %llu "
           "(A)\n",
           policy_name[policy], spin, iterations, (unsigned long long)st.sleeps,
           (unsigned long long)atomic_load(&pp->b_sleeps), (unsigned long long)st.wakes);
    munmap(pp, sizeof *pp);
}

/* Lanes (wait.h): eight words on consecutive lines share one sleepers
 * counter. While a thread sleeps on word 1, publications of the words in
 * other lanes make no FUTEX_WAKE, one of word 5 (word 1's lane: four lines
 * on) makes one and wakes nobody, and word 1's wakes the sleeper. */
typedef struct {
    _Alignas(TC_CACHELINE) tc_atomic_u64_t word[8][TC_CACHELINE / sizeof(tc_atomic_u64_t)];
    _Alignas(TC_CACHELINE) tc_atomic_u64_t sleepers;
    const tc_wait_info_t *info;
    _Atomic uint64_t got; /* the value the sleeper's wait returned */
} lanes_t;

static void *lanes_sleeper(void *arg)
{
    lanes_t *l = arg;
    /* acquire: pairs with the main thread's publication of word 1. */
    atomic_store(&l->got,
                 tc_wait_ge_u64(&l->word[1][0], 1, &l->sleepers, l->info, "test: lanes", 0));
    return NULL;
}

static void test_lanes(void)
{
    lanes_t *l = aligned_alloc(TC_CACHELINE, sizeof *l);
    memset(l, 0, sizeof *l);
    tc_wait_info_t info = info_for(TC_WAIT_FUTEX, 0);
    l->info = &info;
    tc_wait_stats_reset();
    pthread_t th;
    if (pthread_create(&th, NULL, lanes_sleeper, l) != 0) {
        CHECK(0, "pthread_create");
        free(l);
        return;
    }
    const uint64_t one = tc_wait_lane_one(&l->word[1][0]);
    CHECK(tc_wait_lane_one(&l->word[5][0]) == one, "lanes: words 1 and 5 in different lanes");
    /* The sleeper has announced itself (R1); it may not be in FUTEX_WAIT
     * yet, which changes nothing below: the writers decide on the counter. */
    while (atomic_load(&l->sleepers) != one)
        sched_yield();
    int other = 0;
    for (int j = 0; j < 8; j++) {
        if (tc_wait_lane_one(&l->word[j][0]) == one)
            continue;
        other++;
        for (uint64_t v = 1; v <= 100; v++)
            /* release: nobody reads these words. */
            tc_wait_publish_u64(&l->word[j][0], v, &l->sleepers);
    }
    tc_wait_stats_t st;
    tc_wait_stats_get(&st);
    CHECK(other == 6, "lanes: %d words in other lanes than word 1's, 6 expected", other);
    CHECK(st.wakes == 0, "lanes: %llu FUTEX_WAKEs for words nobody sleeps on",
          (unsigned long long)st.wakes);
    tc_wait_publish_u64(&l->word[5][0], 1, &l->sleepers);
    tc_wait_stats_get(&st);
    CHECK(st.wakes == 1, "lanes: %llu FUTEX_WAKEs for word 5 (word 1's lane), 1 expected",
          (unsigned long long)st.wakes);
    CHECK(atomic_load(&l->sleepers) == one && atomic_load(&l->got) == 0,
          "lanes: the sleeper on word 1 left before its word was published");
    /* release: pairs with the sleeper's acquire. */
    tc_wait_publish_u64(&l->word[1][0], 1, &l->sleepers);
    pthread_join(th, NULL);
    tc_wait_stats_get(&st);
    CHECK(atomic_load(&l->got) == 1 && atomic_load(&l->sleepers) == 0 && st.sleep_timeouts == 0,
          "lanes: sleeper got %llu, counter %llu after it left, %llu sleeps timed out",
          (unsigned long long)atomic_load(&l->got), (unsigned long long)atomic_load(&l->sleepers),
          (unsigned long long)st.sleep_timeouts);
    printf("lanes: %d other lanes x 100 publications, %llu wakes in all\n", other,
           (unsigned long long)st.wakes);
    free(l);
}

/* Timeout: the handler reports stage and peer through the shared page and
 * exits the child with 42. */
typedef struct {
    char stage[64];
    int peer;
} timeout_report_t;
static timeout_report_t *report;

static void on_timeout(const tc_wait_info_t *info, const char *stage, int peer)
{
    (void)info;
    snprintf(report->stage, sizeof report->stage, "%s", stage);
    report->peer = peer;
    _exit(42);
}

static void test_timeout(int polling)
{
    report = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (report == MAP_FAILED) {
        CHECK(0, "mmap");
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        static pingpong_t pp; /* nobody ever publishes */
        tc_wait_info_t info = info_for(TC_WAIT_AUTO, 100);
        info.timeout_s = 0.3;
        info.sleep_max_ns = 0; /* the default bound: the deadline must still be met */
        info.on_timeout = on_timeout;
        if (polling) {
            tc_waiter_t w;
            tc_waiter_init(&w, &info, "test: polling forever", 5);
            while (tc_load_acquire_u64(&pp.ping) < 1)
                tc_waiter_pause(&w);
        } else {
            tc_wait_ge_u64(&pp.ping, 1, &pp.ping_sleepers, &info, "test: sleeping forever", 3);
        }
        _exit(1); /* the wait returned: wrong */
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 42, "timeout (%s): child status %d",
          polling ? "polling" : "futex", status);
    const char *want = polling ? "test: polling forever" : "test: sleeping forever";
    CHECK(strcmp(report->stage, want) == 0 && report->peer == (polling ? 5 : 3),
          "timeout (%s): handler saw stage '%s' peer %d", polling ? "polling" : "futex",
          report->stage, report->peer);
    munmap(report, 4096);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        iterations = atol(argv[1]);
    /* Every policy; spin 0 makes every futex wait sleep (the race window is
     * hit most), spin 200 is the default mix. */
    test_threads(TC_WAIT_FUTEX, 0);
    test_threads(TC_WAIT_AUTO, 0);
    test_threads(TC_WAIT_AUTO, 200);
    test_threads(TC_WAIT_YIELD, 200);
    test_threads(TC_WAIT_SPIN, 0);
    test_processes(TC_WAIT_FUTEX, 0);
    test_processes(TC_WAIT_AUTO, 200);
    test_processes(TC_WAIT_YIELD, 0);
    test_auto_next();
    test_holdoff_handovers();
    test_lanes();
    /* The hand-overs' two words (adjacent lines) in two lanes of one
     * counter, as a segment region's lines share theirs. */
    shared_sleepers = true;
    test_threads(TC_WAIT_FUTEX, 0);
    test_processes(TC_WAIT_FUTEX, 0);
    shared_sleepers = false;
    printf("writers' ordering: %s\n", atomic_load(&tc_wait_asym) == 1
                                          ? "release store, sleepers' membarrier (asymmetric)"
                                          : "seq_cst store");
    /* The symmetric variant too (the fallback without membarrier): writers
     * of this process use seq_cst stores from now on. */
    atomic_store(&tc_wait_asym, 0);
    test_threads(TC_WAIT_FUTEX, 0);
    test_processes(TC_WAIT_FUTEX, 0);
    test_timeout(0);
    test_timeout(1);
    if (tu_failures) {
        fprintf(stderr, "%d failure(s)\n", tu_failures);
        return 1;
    }
    printf("OK\n");
    return 0;
}
