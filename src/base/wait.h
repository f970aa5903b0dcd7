/* The one wait helper of the library: every "wait until a counter reaches a
 * value" loop (shared-memory broadcast, reduce, barrier), every poll loop
 * (RMA) and every wait of the locks (src/locks: N-MCS hand-overs and writers'
 * gate, the N-mutex-signal reader's signal) waits through it, so how a process
 * waits is decided in one place.
 *
 * How it waits (TC_WAIT, default auto):
 *   auto   spin (cpu relax) while the peer makes progress: TC_SPIN_COUNT polls,
 *          counted again from zero each time the watched word moves; then
 *          sched_yield() while yielding does not give the CPU away for a time
 *          slice (tc_wait_auto_next() in wait.c), for 1 ms at most; while it
 *          does (CPU-bound processes beside us), spin on for
 *          TC_SPIN_CONTENDED_US instead; then, on a word in shared memory,
 *          sleep on a futex that the writer wakes (only if a sleeper has
 *          announced itself); on a word we can only poll (RMA),
 *          sched_yield().
 *   spin   never give the CPU away (until the timeout).
 *   yield  TC_SPIN_COUNT polls, then sched_yield() (the library's former
 *          behaviour, for comparison).
 *   futex  as auto but sleeps after TC_SPIN_COUNT polls even if the word moves.
 * Every way ends after TC_WAIT_TIMEOUT seconds with a message naming the
 * communicator, the stage and the peer (a futex sleep is bounded, so the clock
 * is still read); the locks' waits (tc_wait_word()) return TC_ERR_TIMEOUT instead,
 * and a caller's check can end them early (a lock marked broken).
 *
 * Files: wait.c holds the statistics, the clock, the futex protocol and the
 * locks' waits, without MPI (the lock benchmark compiles it alone); wait_mpi.c
 * the collectives' waits, whose default timeout aborts the MPI job.
 *
 * Shared-memory waits (the futex protocol):
 *     reader: v = tc_wait_ge_u64(word, want, sleepers, info, stage, peer);
 *     writer: tc_wait_publish_u64(word, value, sleepers);  (instead of a
 *             release store; tc_wait_fetch_add_publish_u64 for a counter)
 * @p sleepers is a counter in the same shared mapping, incremented by each
 * process while it sleeps on a word that the writer's publication may satisfy
 * (the segment keeps one per region). When it is zero (nobody sleeps: the
 * uncontended case) the writer pays one load of a line it only reads, and no
 * system call.
 *
 * Lanes. The counter is four 16-bit counts, one per lane: a word's lane is
 * its cache line's position modulo 4 (address bits 6-7, the same in every
 * process, since shared mappings start on a page boundary). A sleeper counts
 * itself in its word's lane; a writer makes the FUTEX_WAKE only when its
 * word's lane is non-zero. A writer of several lines of one block (a
 * reduction publishes a fragment, a slice and a finish per fragment) then
 * stops waking, at a system call each (~1.3 us in a VM), a peer that sleeps
 * on one of its other lines: beside busy processes, np 4 on 2 CPUs, a rank of
 * the 16 MiB Allreduce made 830 wakes a call, 300 with lanes (docs/wait.md). Up to
 * 65535 sleepers a lane (processes of one node times their threads).
 *
 * The lost-wakeup race, and why it cannot lose a sleeper. Reader:
 *   (R1) sleepers += 1 in word's lane (seq_cst RMW); (R2) v = *word (seq_cst
 *   load); (R3) if v < want: FUTEX_WAIT(word, expected = low 32 bits of v).
 * Writer: (W1) *word = value (seq_cst store); (W2) n = sleepers (seq_cst load);
 *   (W3) if word's lane of n != 0: FUTEX_WAKE(word).
 * All four accesses are seq_cst, so they have one total order S (the store-
 * buffer/Dekker pattern: seq_cst stores and loads, not release/acquire, which
 * would allow both loads to see the old values). If W1 precedes R2 in S, R2
 * reads value (or later) and the reader does not sleep on the old value. Else
 * R1 < R2 < W1 < W2 in S, so W2 reads the increment (in the word's lane,
 * which only this sleeper's own decrement takes back) and the writer calls
 * FUTEX_WAKE; if that happens before the reader's FUTEX_WAIT, the kernel's
 * comparison under the futex bucket lock reads the new word (W1 happened
 * before the wake), sees it differ from the expected value and returns at
 * once. A counter moves by far less than 2^32 between R2 and R3, so its low
 * 32 bits differ whenever the value does.
 * The seq_cst store is also a release and the reader's load an acquire, so
 * the usual publication (data written before W1 visible after the wait)
 * holds as with a release store.
 *
 * The asymmetric variant (default where the kernel has it): a seq_cst store
 * drains the writer's store buffer on every publication (on x86 an xchg that
 * waits for the line's ownership: ~0.1 us per hand-over, measured). Instead
 * the writer makes W1 a release store followed by only a compiler barrier,
 * and the sleeper, between R1 and R2, calls membarrier(
 * MEMBARRIER_CMD_GLOBAL_EXPEDITED) (R1b), which makes every CPU running a
 * registered process execute a full memory barrier before it returns. Every
 * process registers (MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) before its
 * first publication. Then either the writer's W1 is before that barrier on
 * its CPU, so visible to R2, or W2 is after it, so it reads R1's increment
 * (the argument of user-space RCU and of Folly's asymmetric fence). A writer
 * that registers while the sleeper's membarrier runs: registering is a
 * system call, a full barrier, before W1, so W2 is after R1. The sleeper side
 * calls membarrier whenever the kernel offers the command, whether or not
 * its own registration worked, so a registered (asymmetric) writer never
 * meets a sleeper that skips it.
 *
 * The locks' waits on a 32-bit word (the word itself is the futex, so no
 * low-32-bit caveat), that return instead of aborting:
 *     waiter: tc_wait_word_init(&ww, info, sleepers, check, arg, stage, peer);
 *             rc = tc_wait_word(&ww, word, TC_WAIT_UNTIL_EQ, value, &seen);
 *     writer: tc_wait_publish_u32(word, value, sleepers);
 * The same R1-R3 / W1-W3 argument holds, the predicate (== or != a value)
 * replacing ">= want". A lock that must win a CAS waits for the word to change
 * and retries the CAS itself, with the same waiter (one deadline).
 *
 * Polling waits (no shared word to sleep on, e.g. an RMA flag read with
 * MPI_Get):
 *     tc_waiter_t w;
 *     tc_waiter_init(&w, info, "bcast: wait for fragment", parent);
 *     while (!condition)
 *         tc_waiter_pause(&w);
 *
 * This file includes nothing of the library's but atomics.h and err.h.
 */
#ifndef TC_CORE_WAIT_H
#define TC_CORE_WAIT_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#include "atomics.h"
#include "err.h"

/* TC_WAIT: the words of the tunable, in order. */
typedef enum {
    TC_WAIT_AUTO,
    TC_WAIT_SPIN,
    TC_WAIT_YIELD,
    TC_WAIT_FUTEX,
    TC_WAIT_LAST
} tc_wait_policy_t;

struct tc_wait_info;
/* Called when a wait has lasted TC_WAIT_TIMEOUT seconds; must not return
 * (NULL: print the message and PMPI_Abort, see wait.c). */
typedef void (*tc_wait_timeout_fn)(const struct tc_wait_info *info, const char *stage, int peer);

/* What a timeout message needs to say, and the knobs (from the config). A
 * zero-initialised struct waits forever with policy auto and no spinning. */
typedef struct tc_wait_info {
    const char *comm_name;         /* e.g. "MPI_COMM_WORLD" or "comm#3 (size 4)" */
    double timeout_s;              /* TC_WAIT_TIMEOUT; 0 = forever */
    uint32_t spin_polls;           /* TC_SPIN_COUNT: polls before the first yield or sleep */
    int policy;                    /* TC_WAIT: tc_wait_policy_t */
    tc_wait_timeout_fn on_timeout; /* NULL: the default (message, then abort the job) */
    long sleep_max_ns;             /* longest single futex sleep; 0: 50 ms (tests set it long, so a
                                      lost wake-up would show as a sleep that timed out) */
    const int *peer_ranks;         /* a waiter's peer index -> rank in comm_name's communicator (a
                                      group of it, e.g. a node's segment under the hierarchy), or
                                      NULL when the indices are those ranks */
    double contended_spin_s;       /* TC_SPIN_CONTENDED_US: auto, while yields meet CPU-bound
                                      processes, spin this long past spin_polls before a sleep
                                      (0: sleep at once; wait.c) */
} tc_wait_info_t;

/* ---- Polling waits ------------------------------------------------------ */

typedef struct tc_waiter {
    const tc_wait_info_t *info;
    const char *stage;
    int peer;
    uint32_t polls;
    uint32_t yields;
    double deadline; /* 0 until the first clock read */
    double start;    /* the first clock read (for the statistics) */
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
    w->start = 0.0;
}

/* Out of line: reads the clock, calls the timeout handler when it is due. */
void tc_waiter_check_clock(tc_waiter_t *w);
/* Out of line: the part of tc_waiter_pause() past the spin. */
void tc_waiter_pause_slow(tc_waiter_t *w);

static inline void tc_waiter_pause(tc_waiter_t *w)
{
    if (w->polls < w->info->spin_polls) {
        w->polls++;
        tc_cpu_relax();
        return;
    }
    tc_waiter_pause_slow(w);
}

/* ---- Shared-memory waits (futex) ------------------------------------------ */

/* The sleepers word's lane of @p word (wait.h, "Lanes"): the unit a sleeper
 * adds, and the mask a writer tests. */
#define TC_WAIT_LANE_BITS 16
static inline unsigned tc_wait_lane_shift(const volatile void *word)
{
    return TC_WAIT_LANE_BITS * (unsigned)(((uintptr_t)word / TC_CACHELINE) & 3u);
}
static inline uint64_t tc_wait_lane_one(const volatile void *word)
{
    return (uint64_t)1 << tc_wait_lane_shift(word);
}
static inline uint64_t tc_wait_lane_mask(const volatile void *word)
{
    return tc_wait_lane_one(word) * (((uint64_t)1 << TC_WAIT_LANE_BITS) - 1);
}

/* How writers order their store before their load of the sleepers word:
 * 1: a release store and a compiler barrier; the sleepers pay instead, with
 *    membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) between R1 and R2 (see the
 *    asymmetric variant below); this process is registered for it.
 * 0: seq_cst store (the kernel lacks membarrier's expedited global command, or
 *    registration failed). -1: not decided yet (first publication decides). */
extern _Atomic int tc_wait_asym;
int tc_wait_asym_init(void);

uint64_t tc_wait_ge_slow_u64(tc_atomic_u64_t *word, uint64_t want, tc_atomic_u64_t *sleepers,
                             const tc_wait_info_t *info, const char *stage, int peer);
void tc_wait_wake_slow(tc_atomic_u64_t *word);

/* Wait until *word >= @p want; returns the value read. acquire (at least):
 * pairs with the tc_wait_publish_u64() / tc_wait_fetch_add_publish_u64() of
 * the word's writer, which each caller names. @p sleepers: the shared
 * counter the writer checks (NULL: never sleep, spin then yield). */
static inline uint64_t tc_wait_ge_u64(tc_atomic_u64_t *word, uint64_t want,
                                      tc_atomic_u64_t *sleepers, const tc_wait_info_t *info,
                                      const char *stage, int peer)
{
    uint64_t v = tc_load_acquire_u64(word);
    if (v >= want)
        return v;
    return tc_wait_ge_slow_u64(word, want, sleepers, info, stage, peer);
}

/* The writer's half: store @p value (seq_cst, which includes release) and
 * wake the sleepers if any announced themselves (W1-W3 above). */
static inline void tc_wait_publish_u64(tc_atomic_u64_t *word, uint64_t value,
                                       tc_atomic_u64_t *sleepers)
{
    int asym = atomic_load_explicit(&tc_wait_asym, memory_order_relaxed);
    if (asym < 0)
        asym = tc_wait_asym_init();
    if (asym) {
        /* release: pairs with the reader's acquire. W1 before W2 is kept by
         * the compiler barrier here and, against the processor's store
         * buffer, by the sleeper's membarrier (R1b in tc_wait_sleep()). */
        atomic_store_explicit(word, value, memory_order_release);
        atomic_signal_fence(memory_order_seq_cst);
    } else {
        /* seq_cst store, then seq_cst load: pairs with R1/R2 in
         * tc_wait_sleep() (wait.c). */
        atomic_store_explicit(word, value, memory_order_seq_cst);
    }
    if (atomic_load_explicit(sleepers, memory_order_seq_cst) & tc_wait_lane_mask(word))
        tc_wait_wake_slow(word);
}

/* The same for a counter several processes add to; returns the old value.
 * The RMW is seq_cst (acq_rel and more). */
static inline uint64_t tc_wait_fetch_add_publish_u64(tc_atomic_u64_t *word, uint64_t add,
                                                     tc_atomic_u64_t *sleepers)
{
    /* seq_cst RMW then seq_cst load: pairs with R1/R2 in tc_wait_sleep(). */
    uint64_t old = atomic_fetch_add_explicit(word, add, memory_order_seq_cst);
    if (atomic_load_explicit(sleepers, memory_order_seq_cst) & tc_wait_lane_mask(word))
        tc_wait_wake_slow(word);
    return old;
}

/* ---- Waits on a 32-bit word that give up (the locks of src/locks) ------- */

/* What the word must become before the wait ends. */
typedef enum { TC_WAIT_UNTIL_EQ, TC_WAIT_UNTIL_NE } tc_wait_until_t;

/* Called during a long wait (before every futex sleep, every 16th yield, every
 * 65536th poll of a spin-only wait), before the clock: a return other than
 * TC_OK ends the wait with that code (a lock marked broken, a writer found dead). */
typedef tc_err_t (*tc_wait_check_fn)(void *arg);

/* One waiter of a lock operation. It may wait several times (a lock that
 * retries a compare-and-swap after each wait): its deadline runs from the
 * first clock read of the first wait, as a lock's timeout did before. */
typedef struct tc_wait_word {
    tc_waiter_t w;             /* info, stage, peer, polls, deadline */
    tc_atomic_u64_t *sleepers; /* shared with the word's writers; NULL: never sleep */
    tc_wait_check_fn check;    /* may be NULL */
    void *check_arg;
    uint32_t last;  /* the last value read (auto: a change restarts the spin) */
    uint32_t slows; /* yields and sleeps so far (the check's cadence) */
} tc_wait_word_t;

void tc_wait_word_init(tc_wait_word_t *ww, const tc_wait_info_t *info, tc_atomic_u64_t *sleepers,
                       tc_wait_check_fn check, void *check_arg, const char *stage, int peer);
tc_err_t tc_wait_word_slow(tc_wait_word_t *ww, tc_atomic_u32_t *word, tc_wait_until_t until,
                           uint32_t value, uint32_t *seen);
void tc_wait_wake_slow_u32(tc_atomic_u32_t *word);

/* Wait until *word == @p value (TC_WAIT_UNTIL_EQ) or != @p value (_NE), the
 * way info->policy says (spin, then sleep on the word itself: a futex on the
 * shared word, so the word must be published with tc_wait_publish_u32()).
 * Unlike tc_wait_ge_u64() it returns on timeout instead of aborting:
 * @return TC_OK when the predicate held, *seen (if not NULL) = the value read by
 * an acquire load (pairs with the writer's tc_wait_publish_u32(), which each
 * caller names); TC_ERR_TIMEOUT after info->timeout_s (0: never); or the check's
 * code. info->on_timeout is not called. */
static inline tc_err_t tc_wait_word(tc_wait_word_t *ww, tc_atomic_u32_t *word,
                                    tc_wait_until_t until, uint32_t value, uint32_t *seen)
{
    /* acquire: pairs with the writer's publication (named by the caller). */
    uint32_t v = atomic_load_explicit(word, memory_order_acquire);
    if ((v == value) == (until == TC_WAIT_UNTIL_EQ)) {
        if (seen)
            *seen = v;
        return TC_OK;
    }
    return tc_wait_word_slow(ww, word, until, value, seen);
}

/* The writer's half for a 32-bit word: tc_wait_publish_u64()'s protocol (W1-W3
 * above; the futex word is the word itself). */
static inline void tc_wait_publish_u32(tc_atomic_u32_t *word, uint32_t value,
                                       tc_atomic_u64_t *sleepers)
{
    int asym = atomic_load_explicit(&tc_wait_asym, memory_order_relaxed);
    if (asym < 0)
        asym = tc_wait_asym_init();
    if (asym) {
        /* release: pairs with the reader's acquire; W1 before W2 as in
         * tc_wait_publish_u64(). */
        atomic_store_explicit(word, value, memory_order_release);
        atomic_signal_fence(memory_order_seq_cst);
    } else {
        /* seq_cst store, then seq_cst load: pairs with R1/R2 in
         * tc_wait_word_sleep() (wait.c). */
        atomic_store_explicit(word, value, memory_order_seq_cst);
    }
    if (atomic_load_explicit(sleepers, memory_order_seq_cst) & tc_wait_lane_mask(word))
        tc_wait_wake_slow_u32(word);
}

/* Whether this process's waits have lately met CPU-bound processes: under
 * TC_WAIT=auto, yields kept losing the CPU for a time slice (the hold-off
 * doubled twice) and the last did so within ten hold-offs (wait.c; the
 * window after which the hold-off starts again from its minimum). A hint,
 * local to the process: the reductions (shm/reduce_slots.c) and the
 * Alltoall (shm/alltoall.c) let a writer run further ahead while it holds.
 * One clock read. */
bool tc_wait_contended(void);

/* ---- Statistics (this process, all threads) ---------------------------- */

typedef struct tc_wait_stats {
    uint64_t waits;          /* waits not satisfied by their first read */
    uint64_t long_waits;     /* of which went past the spin (yielded or slept) */
    uint64_t yields;         /* sched_yield() calls */
    uint64_t sleeps;         /* FUTEX_WAIT calls */
    uint64_t wakes;          /* FUTEX_WAKE calls (a writer saw a sleeper) */
    uint64_t sleep_timeouts; /* sleeps that ended by their bound, not a wake or a change */
    uint64_t yield_slices;   /* auto: yields that gave the CPU away for a time slice (wait.c) */
    double long_s;           /* seconds spent in the long waits */
} tc_wait_stats_t;

/* Per stage: the same counts for one stage string. */
typedef struct tc_wait_stage_stats {
    const char *stage;
    tc_wait_stats_t s;
} tc_wait_stage_stats_t;

/* Copy the totals; returns them. */
void tc_wait_stats_get(tc_wait_stats_t *out);
/* Up to @p max stages (those that waited), most long-waited first; returns
 * how many. */
int tc_wait_stats_stages(tc_wait_stage_stats_t *out, int max);
void tc_wait_stats_reset(void);

#endif /* TC_CORE_WAIT_H */
