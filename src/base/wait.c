/* The wait helper's machinery: statistics, clock, the futex protocol, and the
 * waits that return (tc_wait_word(), the locks'). No MPI: the lock benchmark
 * compiles this file alone. The collectives' waits, which abort the MPI job on
 * timeout, are in wait_mpi.c. */
#include "wait.h"
#include "wait_internal.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* ---- Statistics ------------------------------------------------------------ */

#define TC_WAIT_STAGES 48
tc_wait_counts_t tc_wait_total;
/* Waits that ended within the spin, per thread (summed at exit of each thread
 * would need a destructor: the statistics read only the calling thread's,
 * which is the one that calls the collectives). */
_Thread_local uint64_t tc_wait_short;
static struct {
    _Atomic(const char *) stage;
    tc_wait_counts_t c;
} tc_wait_stage[TC_WAIT_STAGES];

void tc_wait_count_add(_Atomic uint64_t *c, uint64_t v)
{
    /* relaxed: statistics, read after the fact; no ordering with the waits. */
    atomic_fetch_add_explicit(c, v, memory_order_relaxed);
}

/* The stage's counters (stage strings are literals: compared by address);
 * NULL when the table is full. */
static tc_wait_counts_t *tc_wait_stage_counts(const char *stage)
{
    for (int i = 0; i < TC_WAIT_STAGES; i++) {
        const char *cur = atomic_load_explicit(&tc_wait_stage[i].stage, memory_order_acquire);
        if (cur == NULL) {
            const char *expected = NULL;
            /* acq_rel: pairs with the acquire load above in other threads;
             * only the pointer is published (the counters are zero). */
            if (atomic_compare_exchange_strong_explicit(&tc_wait_stage[i].stage, &expected, stage,
                                                        memory_order_acq_rel, memory_order_acquire))
                return &tc_wait_stage[i].c;
            cur = expected;
        }
        if (cur == stage)
            return &tc_wait_stage[i].c;
    }
    return NULL;
}

/* Account one finished wait that was not satisfied by its first read. */
void tc_wait_account(const char *stage, uint32_t yields, uint32_t sleeps, double secs)
{
    tc_wait_counts_t *cs[2] = {&tc_wait_total, tc_wait_stage_counts(stage)};
    int is_long = yields != 0 || sleeps != 0;
    for (int i = 0; i < 2; i++) {
        if (!cs[i])
            continue;
        tc_wait_count_add(&cs[i]->waits, 1);
        if (!is_long)
            continue;
        tc_wait_count_add(&cs[i]->long_waits, 1);
        tc_wait_count_add(&cs[i]->yields, yields);
        tc_wait_count_add(&cs[i]->sleeps, sleeps);
        tc_wait_count_add(&cs[i]->long_ns, secs > 0 ? (uint64_t)(secs * 1e9) : 0);
    }
}

static void tc_wait_counts_read(tc_wait_counts_t *c, tc_wait_stats_t *out)
{
    out->waits = atomic_load_explicit(&c->waits, memory_order_relaxed);
    out->long_waits = atomic_load_explicit(&c->long_waits, memory_order_relaxed);
    out->yields = atomic_load_explicit(&c->yields, memory_order_relaxed);
    out->sleeps = atomic_load_explicit(&c->sleeps, memory_order_relaxed);
    out->wakes = atomic_load_explicit(&c->wakes, memory_order_relaxed);
    out->sleep_timeouts = atomic_load_explicit(&c->sleep_timeouts, memory_order_relaxed);
    out->yield_slices = atomic_load_explicit(&c->yield_slices, memory_order_relaxed);
    out->long_s = 1e-9 * (double)atomic_load_explicit(&c->long_ns, memory_order_relaxed);
}

void tc_wait_stats_get(tc_wait_stats_t *out)
{
    tc_wait_counts_read(&tc_wait_total, out);
    out->waits += tc_wait_short;
}

int tc_wait_stats_stages(tc_wait_stage_stats_t *out, int max)
{
    int n = 0;
    for (int i = 0; i < TC_WAIT_STAGES && n < max; i++) {
        const char *st = atomic_load_explicit(&tc_wait_stage[i].stage, memory_order_acquire);
        if (!st)
            break;
        out[n].stage = st;
        tc_wait_counts_read(&tc_wait_stage[i].c, &out[n].s);
        /* insertion sort by long-wait time, most first */
        for (int j = n; j > 0 && out[j].s.long_s > out[j - 1].s.long_s; j--) {
            tc_wait_stage_stats_t t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
        n++;
    }
    return n;
}

void tc_wait_stats_reset(void)
{
    tc_wait_counts_t *cs[TC_WAIT_STAGES + 1];
    cs[0] = &tc_wait_total;
    for (int i = 0; i < TC_WAIT_STAGES; i++)
        cs[i + 1] = &tc_wait_stage[i].c;
    tc_wait_short = 0;
    for (int i = 0; i <= TC_WAIT_STAGES; i++) {
        atomic_store_explicit(&cs[i]->waits, 0, memory_order_relaxed);
        atomic_store_explicit(&cs[i]->long_waits, 0, memory_order_relaxed);
        atomic_store_explicit(&cs[i]->yields, 0, memory_order_relaxed);
        atomic_store_explicit(&cs[i]->sleeps, 0, memory_order_relaxed);
        atomic_store_explicit(&cs[i]->wakes, 0, memory_order_relaxed);
        atomic_store_explicit(&cs[i]->sleep_timeouts, 0, memory_order_relaxed);
        atomic_store_explicit(&cs[i]->yield_slices, 0, memory_order_relaxed);
        atomic_store_explicit(&cs[i]->long_ns, 0, memory_order_relaxed);
    }
}

/* ---- Clock ------------------------------------------------------------------ */

double tc_wait_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- auto: yield while it gets the peers running --------------------------- */

/* A waiter past its spin can yield the CPU or sleep on a futex its writer
 * wakes. Which one is faster depends on who else wants the CPU (measured
 * 2026-11-26, docs/measurements/cluster-2026-11-26.md):
 * - only the job's own ranks (more ranks than CPUs, nothing else running: an
 *   oversubscribed node, an emulated cluster): a yield lets the peer that we
 *   wait for run at once, a sleep costs the writer a FUTEX_WAKE and the
 *   sleeper a wake-up and a membarrier (np 8 on 2 cores, Reduce 4 B: 1.1 us a
 *   call yielding, 33 us sleeping; Barrier 6.5 vs 73 us);
 * - CPU-bound processes beside the ranks: a yield hands the CPU to one of them
 *   for a whole time slice, while a sleeper that its writer wakes gets the CPU
 *   back at once (np 4 beside 2 busy processes, Reduce 4 B: 220 us yielding,
 *   24 us sleeping).
 * So auto yields first and times each yield: one that comes back after more
 * than TC_WAIT_YIELD_SLICE_S gave the CPU away for a time slice, and then the
 * process sleeps instead (every wait, every thread) for a hold-off. The
 * hold-off doubles each time the first yield after it meets a time slice
 * again (TC_WAIT_YIELD_HOLDOFF_MIN_NS up to _MAX_NS: beside busy processes
 * that stay, a probe costs one time slice a second at most), and starts again
 * from the minimum when no slice was seen for ten hold-offs. One wait yields
 * for at most TC_WAIT_YIELD_BUDGET_S, then sleeps (a peer that computes for
 * long: no need to burn the CPU it could use).
 *
 * During a hold-off a wait spins info->contended_spin_s (TC_SPIN_CONTENDED_US)
 * before it sleeps, from the end of its polls or the peer's last progress. A
 * peer on its CPU publishes within microseconds, while a sleeper's wake-up
 * costs the writer a FUTEX_WAKE and the sleeper the wait for its CPU, which a
 * busy process may hold to the end of its slice; a sleep at once after
 * TC_SPIN_COUNT polls (4 us here) turned almost every hand-over of a small
 * Allreduce, Allgather(v), Alltoall(v), Reduce_scatter_block or Barrier into
 * one: measured 2026-11-27 at np 2 beside two busy processes, 50 ms blocks,
 * 4 B and 1 KiB: 0.64-3.79x the MPI's own sleeping at once, 0.19-0.56x with
 * the spin, both MPIs (docs/measurements/contended-waits-2026-11-27.md). Not
 * where spin_polls is 0 (the job's own ranks share the CPUs: the peer may
 * need ours). */
/* 0.5 ms: the job's own yielding ranks (8 on 2 cores, the TCP progress of an
 * emulated cluster) now and then take 0.2-0.5 ms to hand the CPU back; a busy
 * process's time slice is 0.75 ms or more (CFS's minimum granularity). */
#define TC_WAIT_YIELD_SLICE_S        500e-6
#define TC_WAIT_YIELD_BUDGET_S       1e-3
#define TC_WAIT_YIELD_HOLDOFF_MIN_NS 20000000ull   /* 20 ms */
#define TC_WAIT_YIELD_HOLDOFF_MAX_NS 1000000000ull /* 1 s */

/* All relaxed: hints shared by the process's threads; a stale read costs one
 * yield or one sleep, never correctness (the wait re-reads its word either
 * way). */
static tc_atomic_u64_t tc_wait_yield_off_until_ns; /* sleep, not yield, until then */
static tc_atomic_u64_t tc_wait_yield_holdoff_ns;   /* the last hold-off (0: none yet) */
static tc_atomic_u64_t tc_wait_yield_slice_ns;     /* when the last slice was seen */

tc_wait_next_t tc_wait_auto_next(const tc_wait_info_t *info, double *first)
{
    double now = tc_wait_now();
    if (*first == 0.0)
        *first = now;
    if ((uint64_t)(now * 1e9) < tc_load_relaxed_u64(&tc_wait_yield_off_until_ns)) {
        if (info->spin_polls > 0 && now - *first < info->contended_spin_s)
            return TC_WAIT_NEXT_SPIN;
        return TC_WAIT_NEXT_SLEEP;
    }
    if (now - *first > TC_WAIT_YIELD_BUDGET_S)
        return TC_WAIT_NEXT_SLEEP;
    sched_yield();
    double after = tc_wait_now();
    if (after - now > TC_WAIT_YIELD_SLICE_S) {
        uint64_t after_ns = (uint64_t)(after * 1e9);
        uint64_t holdoff = tc_load_relaxed_u64(&tc_wait_yield_holdoff_ns);
        uint64_t last = tc_load_relaxed_u64(&tc_wait_yield_slice_ns);
        if (holdoff == 0 || after_ns - last > 10 * holdoff)
            holdoff = TC_WAIT_YIELD_HOLDOFF_MIN_NS;
        else if (holdoff < TC_WAIT_YIELD_HOLDOFF_MAX_NS)
            holdoff = 2 * holdoff < TC_WAIT_YIELD_HOLDOFF_MAX_NS ? 2 * holdoff
                                                                 : TC_WAIT_YIELD_HOLDOFF_MAX_NS;
        tc_store_relaxed_u64(&tc_wait_yield_holdoff_ns, holdoff);
        tc_store_relaxed_u64(&tc_wait_yield_slice_ns, after_ns);
        tc_store_relaxed_u64(&tc_wait_yield_off_until_ns, after_ns + holdoff);
        tc_wait_count_add(&tc_wait_total.yield_slices, 1);
    }
    return TC_WAIT_NEXT_YIELDED;
}

void tc_wait_test_holdoff(double secs)
{
    const uint64_t until = secs > 0.0 ? (uint64_t)((tc_wait_now() + secs) * 1e9) : 0;
    tc_store_relaxed_u64(&tc_wait_yield_off_until_ns, until);
}

/* Contended: the hold-off grew to TC_WAIT_CONTENDED_HOLDOFF_NS or more
 * (three slices, each within ten hold-offs of the one before) and the last
 * slice is within ten hold-offs. Measured at np 4 on the 2 CPUs: alone, a
 * process's yields met 0-2 slices in a whole benchmark run (the ranks' own
 * long folds), which a single-slice rule took for contention (Allreduce
 * 1-4 MiB 2-3x slower from the deeper run-ahead); beside two busy
 * processes every probe meets one, the hold-off reaching 1 s. */
#define TC_WAIT_CONTENDED_HOLDOFF_NS (4 * TC_WAIT_YIELD_HOLDOFF_MIN_NS)

bool tc_wait_contended(void)
{
    const uint64_t holdoff = tc_load_relaxed_u64(&tc_wait_yield_holdoff_ns);
    if (holdoff < TC_WAIT_CONTENDED_HOLDOFF_NS)
        return false;
    const uint64_t last = tc_load_relaxed_u64(&tc_wait_yield_slice_ns);
    const uint64_t now = (uint64_t)(tc_wait_now() * 1e9);
    return now - last <= 10 * holdoff;
}

/* ---- Futex ------------------------------------------------------------------------ */

_Atomic int tc_wait_asym = -1;
/* The kernel offers the expedited global membarrier (the sleepers' side). */
static _Atomic int tc_wait_membarrier_ok = -1;
static pthread_once_t tc_wait_atfork_once = PTHREAD_ONCE_INIT;

/* A child of fork() registers again before it publishes (registration is a
 * property of the address space; re-registering is harmless). */
static void tc_wait_atfork_child(void)
{
    atomic_store_explicit(&tc_wait_asym, -1, memory_order_relaxed);
}
static void tc_wait_atfork_register(void)
{
    pthread_atfork(NULL, NULL, tc_wait_atfork_child);
}

int tc_wait_membarrier_supported(void)
{
    int ok = atomic_load_explicit(&tc_wait_membarrier_ok, memory_order_relaxed);
    if (ok < 0) {
        long q = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
        ok = q >= 0 && (q & MEMBARRIER_CMD_GLOBAL_EXPEDITED) &&
             (q & MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED);
        /* relaxed: a pure function of the kernel; racing threads agree. */
        atomic_store_explicit(&tc_wait_membarrier_ok, ok, memory_order_relaxed);
    }
    return ok;
}

int tc_wait_asym_init(void)
{
    pthread_once(&tc_wait_atfork_once, tc_wait_atfork_register);
    int asym = tc_wait_membarrier_supported() &&
               syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0;
    /* relaxed: only this process's own publications read it, after this
     * store in program order (other threads may register again: harmless). */
    atomic_store_explicit(&tc_wait_asym, asym, memory_order_relaxed);
    return asym;
}

/* The futex word: the low 32 bits of the 64-bit counter. Not the _PRIVATE
 * operations: the peers are other processes mapping the same pages. */
uint32_t *tc_wait_word32(tc_atomic_u64_t *word)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return (uint32_t *)(void *)((char *)word + 4);
#else
    return (uint32_t *)(void *)word;
#endif
}

static void tc_wait_futex_wake(uint32_t *uaddr)
{
    syscall(SYS_futex, uaddr, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
    tc_wait_count_add(&tc_wait_total.wakes, 1);
}

void tc_wait_wake_slow(tc_atomic_u64_t *word)
{
    tc_wait_futex_wake(tc_wait_word32(word));
}

void tc_wait_wake_slow_u32(tc_atomic_u32_t *word)
{
    /* The futex is the atomic word itself (same size and representation). */
    tc_wait_futex_wake((uint32_t *)(void *)word);
}

/* R3: FUTEX_WAIT on @p uaddr while it holds @p expected, bounded by the sleep
 * bound and the wait's deadline. */
void tc_wait_futex_wait(tc_waiter_t *w, uint32_t *uaddr, uint32_t expected)
{
    long ns = w->info->sleep_max_ns > 0 ? w->info->sleep_max_ns : TC_WAIT_SLEEP_MAX_NS;
    if (w->deadline != 0.0) {
        double left = w->deadline - tc_wait_now();
        if (left < 1e-9 * (double)ns)
            ns = left > 1e-6 ? (long)(left * 1e9) : 1000;
    }
    struct timespec ts = {.tv_sec = ns / 1000000000L, .tv_nsec = ns % 1000000000L};
    /* EAGAIN (the word moved), EINTR and ETIMEDOUT all mean: look again. */
    if (syscall(SYS_futex, uaddr, FUTEX_WAIT, expected, &ts, NULL, 0) != 0 && errno == ETIMEDOUT)
        tc_wait_count_add(&tc_wait_total.sleep_timeouts, 1);
}

/* ---- Waits on a 32-bit word that give up ------------------------------------ */

void tc_wait_word_init(tc_wait_word_t *ww, const tc_wait_info_t *info, tc_atomic_u64_t *sleepers,
                       tc_wait_check_fn check, void *check_arg, const char *stage, int peer)
{
    tc_waiter_init(&ww->w, info, stage, peer);
    ww->sleepers = sleepers;
    ww->check = check;
    ww->check_arg = check_arg;
    ww->last = 0;
    ww->slows = 0;
}

static int tc_wait_word_holds(uint32_t v, tc_wait_until_t until, uint32_t value)
{
    return (v == value) == (until == TC_WAIT_UNTIL_EQ);
}

/* The caller's check, then the clock: TC_OK to keep waiting, else the code. */
static tc_err_t tc_wait_word_check(tc_wait_word_t *ww)
{
    if (ww->check) {
        tc_err_t rc = ww->check(ww->check_arg);
        if (rc != TC_OK)
            return rc;
    }
    double now = tc_wait_now();
    if (ww->w.start == 0.0)
        ww->w.start = now;
    if (ww->w.info->timeout_s <= 0.0)
        return TC_OK;
    if (ww->w.deadline == 0.0) {
        ww->w.deadline = now + ww->w.info->timeout_s;
        return TC_OK;
    }
    return now > ww->w.deadline ? tc_err(TC_ERR_TIMEOUT) : TC_OK;
}

/* One bounded sleep on a 32-bit word: R1-R3 of wait.h with the word itself as
 * the futex. Returns 1 if it slept. */
static int tc_wait_word_sleep(tc_wait_word_t *ww, tc_atomic_u32_t *word, tc_wait_until_t until,
                              uint32_t value)
{
    /* R1, R2: seq_cst RMW then seq_cst load; pair with W1/W2 in
     * tc_wait_publish_u32(). */
    atomic_fetch_add_explicit(ww->sleepers, tc_wait_lane_one(word), memory_order_seq_cst);
    /* R1b: as in tc_wait_sleep(). */
    if (tc_wait_membarrier_supported())
        syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0);
    uint32_t v = atomic_load_explicit(word, memory_order_seq_cst);
    int slept = !tc_wait_word_holds(v, until, value);
    if (slept)
        tc_wait_futex_wait(&ww->w, (uint32_t *)(void *)word, v);
    /* relaxed: a late decrement only costs a writer a needless FUTEX_WAKE. */
    atomic_fetch_sub_explicit(ww->sleepers, tc_wait_lane_one(word), memory_order_relaxed);
    return slept;
}

tc_err_t tc_wait_word_slow(tc_wait_word_t *ww, tc_atomic_u32_t *word, tc_wait_until_t until,
                           uint32_t value, uint32_t *seen)
{
    const tc_wait_info_t *info = ww->w.info;
    int policy = info->policy;
    if ((policy == TC_WAIT_AUTO || policy == TC_WAIT_FUTEX) && !ww->sleepers)
        policy = TC_WAIT_YIELD;
    uint32_t yields = 0, sleeps = 0;
    double yield_first = 0.0;
    tc_wait_next_t next;
    tc_err_t rc = TC_OK;
    for (;;) {
        /* acquire: pairs with the writer's tc_wait_publish_u32() (named by
         * the caller). */
        uint32_t v = atomic_load_explicit(word, memory_order_acquire);
        if (tc_wait_word_holds(v, until, value)) {
            if (seen)
                *seen = v;
            break;
        }
        /* auto: the word moves (e.g. other writers pass a gate): the parties
         * run, keep spinning. */
        if (v != ww->last) {
            if (policy == TC_WAIT_AUTO) {
                ww->w.polls = 0;
                yield_first = 0.0;
            }
            ww->last = v;
        }
        if (ww->w.polls < info->spin_polls) {
            ww->w.polls++;
            tc_cpu_relax();
            continue;
        }
        if (policy == TC_WAIT_SPIN) {
            tc_cpu_relax();
            if ((ww->w.polls++ & (TC_WAIT_SPIN_CLOCK_POLLS - 1)) == 0 &&
                (rc = tc_wait_word_check(ww)) != TC_OK)
                break;
        } else if (policy == TC_WAIT_YIELD) {
            sched_yield();
            yields++;
            /* The clock and the check on the first yield and every 16th (the
             * locks' cadence before they used this helper). */
            if ((ww->slows++ & 15u) == 0 && (rc = tc_wait_word_check(ww)) != TC_OK)
                break;
        } else if (policy == TC_WAIT_AUTO &&
                   (next = tc_wait_auto_next(info, &yield_first)) != TC_WAIT_NEXT_SLEEP) {
            if (next == TC_WAIT_NEXT_SPIN) {
                tc_cpu_relax();
                continue;
            }
            yields++;
            if ((ww->slows++ & 15u) == 0 && (rc = tc_wait_word_check(ww)) != TC_OK)
                break;
        } else { /* auto, futex: every sleep reads the clock, as in tc_wait_ge_slow_u64() */
            ww->slows++;
            if ((rc = tc_wait_word_check(ww)) != TC_OK)
                break;
            sleeps += (uint32_t)tc_wait_word_sleep(ww, word, until, value);
        }
    }
    if (yields || sleeps) {
        tc_wait_account(ww->w.stage, yields, sleeps,
                        ww->w.start != 0.0 ? tc_wait_now() - ww->w.start : 0.0);
    } else {
        tc_wait_short++;
    }
    return rc;
}
