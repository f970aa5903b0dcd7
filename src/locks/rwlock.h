/* Process-shared reader-writer locks for one writer and N readers (paper 004).
 *
 * One interface, five schemes. Every reader has a local index x in 0..N-1 and
 * passes it to tc_rwlock_rdlock()/tc_rwlock_rdunlock(); at most one thread uses a
 * given index at a time, and a thread holds at most one reader lock (holding two
 * while a writer takes them in index order can deadlock, e.g. 2N-mutex). The writer takes all N
 * per-reader locks. The lock lives entirely in caller-provided shared memory (cache-line aligned,
 * at least tc_rwlock_size() bytes): one process calls tc_rwlock_init(), the others call
 * tc_rwlock_attach() on the same memory (or inherit the handle through fork()).
 *
 * Leaf module: includes only src/base (the spinning schemes wait through its wait
 * helper). Timeouts, spin counts, the wait policy and the log callback come in a
 * tc_lock_opts_t.
 * Returns a tc_err_t (base/err.h); compare kinds (tc_err_kind), not values, since
 * a pthread_* result keeps its errno as the cause:
 *   TC_OK                  success
 *   TC_ERR_OWNERDEAD       the lock is held, but a previous holder died while holding
 *                          one of the mutexes behind it (robust-mutex schemes). The
 *                          mutex has been made consistent, so the lock keeps working;
 *                          the data it protects may be half-written and is the
 *                          caller's to check or rebuild.
 *   TC_ERR_TIMEOUT         a wait exceeded opts.timeout_s (N-MCS; rwlock). The lock is
 *                          not held. For N-MCS the lock is then marked broken (see
 *                          nmcs.c) and every later call, in every process, returns
 *                          TC_ERR_NOTRECOVERABLE.
 *   TC_ERR_NOTRECOVERABLE  the lock is broken; re-initialise the memory.
 *   TC_ERR_ARG             bad argument (index out of range, misaligned or short memory).
 *   TC_ERR_BUSY            tc_rwlock_attach() before tc_rwlock_init() finished.
 *   other                  a failed pthread_* call (tc_err_from_errno: its errno is the cause).
 */
#ifndef TC_LOCKS_RWLOCK_H
#define TC_LOCKS_RWLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

#ifndef TC_CACHELINE
#define TC_CACHELINE 64
#endif

typedef enum tc_lock_scheme {
    TC_LOCK_SCHEME_RWLOCK,         /* "rwlock": pthread_rwlock_t, PTHREAD_PROCESS_SHARED */
    TC_LOCK_SCHEME_1N_MUTEX,       /* "1n-mutex": one mutex per reader */
    TC_LOCK_SCHEME_2N_MUTEX,       /* "2n-mutex": signal + data mutex per reader (OpenPMIx) */
    TC_LOCK_SCHEME_N_MUTEX_SIGNAL, /* "n-mutex-signal": signal variable + data mutex */
    TC_LOCK_SCHEME_N_MCS,          /* "n-mcs": one two-party MCS lock per reader */
    TC_LOCK_SCHEME_LAST
} tc_lock_scheme_t;

/* Receives one line (no trailing newline) when a wait gives up or a dead holder is
 * recovered. May be called from any process holding a handle. */
typedef void (*tc_lock_log_fn)(void *arg, const char *msg);

typedef struct tc_lock_opts {
    double timeout_s;    /* give up a wait (N-MCS, rwlock) after this long; 0 = wait forever */
    uint32_t spin_polls; /* polls before a wait yields or sleeps (TC_SPIN_COUNT) */
    tc_lock_log_fn log;  /* may be NULL */
    void *log_arg;
    int wait_policy; /* how the spinning schemes wait after the spin: base/wait.h's
                        tc_wait_policy_t (TC_WAIT); 0 = auto, sleep on a futex */
} tc_lock_opts_t;

/* Process-local handle; the state itself is in the shared memory. */
typedef struct tc_rwlock {
    void *mem;
    tc_lock_scheme_t scheme;
    int nreaders;
    tc_lock_opts_t opts;
} tc_rwlock_t;

/** Scheme name as accepted by tc_lock_scheme_parse() ("n-mcs", ...); NULL if invalid. */
const char *tc_lock_scheme_name(tc_lock_scheme_t scheme);

/** Parse a scheme name (case-insensitive; future TC_LOCK_SCHEME).
 * @return TC_OK, or TC_ERR_ARG (and *scheme untouched) for an unknown name. */
tc_err_t tc_lock_scheme_parse(const char *name, tc_lock_scheme_t *scheme);

/** Bytes of shared memory for `nreaders` readers: a multiple of TC_CACHELINE, every
 * part written by different parties on its own line. 0 for invalid arguments. */
size_t tc_rwlock_size(tc_lock_scheme_t scheme, int nreaders);

/** Initialise the lock in `mem` (cache-line aligned, `bytes` >= tc_rwlock_size()).
 * Exactly one process does this, before any other process attaches. */
tc_err_t tc_rwlock_init(tc_rwlock_t *lk, void *mem, size_t bytes, tc_lock_scheme_t scheme,
                        int nreaders, const tc_lock_opts_t *opts);

/** Attach to a lock another process initialised (reads scheme and N from the memory).
 * @return TC_OK, TC_ERR_BUSY if not yet initialised, TC_ERR_ARG if `mem` holds no lock. */
tc_err_t tc_rwlock_attach(tc_rwlock_t *lk, void *mem, size_t bytes, const tc_lock_opts_t *opts);

/** Reader x (0 <= x < N) takes / releases its lock. */
tc_err_t tc_rwlock_rdlock(tc_rwlock_t *lk, int x);
tc_err_t tc_rwlock_rdunlock(tc_rwlock_t *lk, int x);

/** The writer takes / releases all N reader locks. Several writers exclude each
 * other, but the schemes are built for one. */
tc_err_t tc_rwlock_wrlock(tc_rwlock_t *lk);
tc_err_t tc_rwlock_wrunlock(tc_rwlock_t *lk);

/** Destroy (one process, nobody holding or waiting). The memory can be reused. */
tc_err_t tc_rwlock_destroy(tc_rwlock_t *lk);

/** N-MCS only, for tests and diagnostics: the tail of reader x's queue
 * (0 free, 1 the reader, 2 the writer); -1 for other schemes. */
int tc_rwlock_nmcs_tail(const tc_rwlock_t *lk, int x);

#endif /* TC_LOCKS_RWLOCK_H */
