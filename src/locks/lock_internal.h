/* Shared pieces of the lock schemes: the header line every lock memory starts
 * with, the waits (through base/wait.h), robust-mutex helpers, the scheme table.
 * Private to src/locks. */
#ifndef TC_LOCKS_LOCK_INTERNAL_H
#define TC_LOCKS_LOCK_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "base/atomics.h"
#include "base/wait.h"
#include "rwlock.h"

/* ---- atomics with their order in the name (STYLE.md) ------------------- */

typedef _Atomic uint32_t tc_lock_atomic_u32_t;

static inline uint32_t tc_lock_load_acquire(tc_lock_atomic_u32_t *p)
{
    return atomic_load_explicit(p, memory_order_acquire);
}

static inline uint32_t tc_lock_load_relaxed(tc_lock_atomic_u32_t *p)
{
    return atomic_load_explicit(p, memory_order_relaxed);
}

static inline void tc_lock_store_release(tc_lock_atomic_u32_t *p, uint32_t v)
{
    atomic_store_explicit(p, v, memory_order_release);
}

static inline void tc_lock_store_relaxed(tc_lock_atomic_u32_t *p, uint32_t v)
{
    atomic_store_explicit(p, v, memory_order_relaxed);
}

static inline uint32_t tc_lock_exchange_acq_rel(tc_lock_atomic_u32_t *p, uint32_t v)
{
    return atomic_exchange_explicit(p, v, memory_order_acq_rel);
}

/* Success: release (the lock is being handed back); failure: relaxed (the caller
 * then waits with acquire loads). */
static inline int tc_lock_cas_release(tc_lock_atomic_u32_t *p, uint32_t expect, uint32_t desired)
{
    return atomic_compare_exchange_strong_explicit(p, &expect, desired, memory_order_release,
                                                   memory_order_relaxed);
}

/* Success: acquire (taking a lock); failure: relaxed. */
static inline int tc_lock_cas_acquire(tc_lock_atomic_u32_t *p, uint32_t expect, uint32_t desired)
{
    return atomic_compare_exchange_strong_explicit(p, &expect, desired, memory_order_acquire,
                                                   memory_order_relaxed);
}

/* ---- shared header ------------------------------------------------------ */

#define TC_LOCK_MAGIC 0x74636c6bu /* "tclk" */

/* First line of every lock memory. Read-only after init except `broken`, which is
 * written at most once (N-MCS gave up), so readers share the line without traffic. */
typedef struct tc_lock_hdr {
    _Alignas(TC_CACHELINE) tc_lock_atomic_u32_t magic; /* TC_LOCK_MAGIC once init is done */
    uint32_t scheme;
    int32_t nreaders;
    tc_lock_atomic_u32_t broken; /* 1: an N-MCS wait gave up; every call fails */
} tc_lock_hdr_t;
_Static_assert(sizeof(tc_lock_hdr_t) == TC_CACHELINE, "header is one line");

static inline tc_lock_hdr_t *tc_lock_hdr(const tc_rwlock_t *lk)
{
    return (tc_lock_hdr_t *)lk->mem;
}

/* The scheme's state follows the header line. */
static inline void *tc_lock_body(const tc_rwlock_t *lk)
{
    return (char *)lk->mem + sizeof(tc_lock_hdr_t);
}

void tc_lock_log(const tc_rwlock_t *lk, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- waits: the base wait helper ---------------------------------------- */

/* Every wait loop of the locks (N-MCS's hand-overs and writer gate, the
 * N-mutex-signal reader's wait on VS) is base/wait.h's tc_wait_word(): spin
 * opts.spin_polls polls, then (opts.wait_policy, default auto) sleep on a
 * shared futex on the word itself, which the word's writer wakes with
 * tc_wait_publish_u32() only when the lock's sleepers count says someone
 * sleeps. The helper's waiter points at the info, so both live here. */
typedef struct tc_lock_wait {
    tc_wait_info_t info;
    tc_wait_word_t ww;
} tc_lock_wait_t;

/* A wait of `lk` on words whose writers check `sleepers`; `check` (may be NULL)
 * runs during long waits before the clock (see tc_wait_check_fn). The timeout is
 * opts.timeout_s. Do not copy a tc_lock_wait_t once initialised. */
void tc_lock_wait_init(tc_lock_wait_t *w, const tc_rwlock_t *lk, tc_atomic_u64_t *sleepers,
                       tc_wait_check_fn check, void *check_arg, const char *stage, int peer);

/* The check every N-MCS wait runs: TC_ERR_NOTRECOVERABLE once the lock is marked
 * broken. `arg` is the tc_rwlock_t. */
tc_err_t tc_lock_check_broken(void *arg);

/* A count of the processes asleep on some word of a lock, on its own line: written
 * only by the sleepers (around a futex sleep), read by the words' writers at each
 * publication (a line they only read while nobody sleeps). */
typedef struct tc_lock_sleepers {
    _Alignas(TC_CACHELINE) tc_atomic_u64_t n;
} tc_lock_sleepers_t;
_Static_assert(sizeof(tc_lock_sleepers_t) == TC_CACHELINE, "sleepers on one line");

/* ---- robust process-shared mutexes ------------------------------------ */

/* One mutex on its own line (it is written by every party that takes it). */
typedef struct tc_lock_mutex {
    _Alignas(TC_CACHELINE) pthread_mutex_t m;
} tc_lock_mutex_t;
_Static_assert(sizeof(tc_lock_mutex_t) % TC_CACHELINE == 0, "mutex padded to lines");

tc_err_t tc_lock_mutex_init(tc_lock_mutex_t *m);
tc_err_t tc_lock_mutex_destroy(tc_lock_mutex_t *m);

/* Lock; on EOWNERDEAD make the mutex consistent, log, and return
 * TC_ERR_OWNERDEAD with the mutex held. Any other error: not held. */
tc_err_t tc_lock_mutex_take(const tc_rwlock_t *lk, tc_lock_mutex_t *m, const char *what, int x);

/* trylock with the same EOWNERDEAD handling; TC_ERR_BUSY if held by someone alive. */
tc_err_t tc_lock_mutex_try(const tc_rwlock_t *lk, tc_lock_mutex_t *m, const char *what, int x);

static inline tc_err_t tc_lock_mutex_give(tc_lock_mutex_t *m)
{
    return tc_err_from_errno(pthread_mutex_unlock(&m->m));
}

/* Keep the "worst" code when several locks are taken: an error beats
 * TC_ERR_OWNERDEAD, TC_ERR_OWNERDEAD beats TC_OK. */
static inline tc_err_t tc_lock_rc_merge(tc_err_t acc, tc_err_t rc)
{
    if (acc != TC_OK && tc_err_kind(acc) != TC_ERR_OWNERDEAD)
        return acc;
    return rc != TC_OK ? rc : acc;
}

/* ---- scheme table ------------------------------------------------------ */

typedef struct tc_lock_ops {
    const char *name;
    size_t (*body_size)(int nreaders); /* bytes after the header, multiple of a line */
    tc_err_t (*init)(tc_rwlock_t *lk);
    tc_err_t (*destroy)(tc_rwlock_t *lk);
    tc_err_t (*rdlock)(tc_rwlock_t *lk, int x);
    tc_err_t (*rdunlock)(tc_rwlock_t *lk, int x);
    tc_err_t (*wrlock)(tc_rwlock_t *lk);
    tc_err_t (*wrunlock)(tc_rwlock_t *lk);
} tc_lock_ops_t;

extern const tc_lock_ops_t tc_lock_ops_rwlock;
extern const tc_lock_ops_t tc_lock_ops_1n_mutex;
extern const tc_lock_ops_t tc_lock_ops_2n_mutex;
extern const tc_lock_ops_t tc_lock_ops_n_mutex_signal;
extern const tc_lock_ops_t tc_lock_ops_n_mcs;

#endif /* TC_LOCKS_LOCK_INTERNAL_H */
