/* Validation harness for src/locks, shared by every scheme (Concurrency Kit style):
 * the same workers run as threads or as forked processes on MAP_SHARED anonymous
 * memory. Failures are counted in shared memory; the first message is kept. */
#ifndef TC_TESTS_LOCKS_HARNESS_H
#define TC_TESTS_LOCKS_HARNESS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "locks/rwlock.h"

/* A lock result in words, for messages (a temporary buffer per use). */
#define LH_ERRSTR(rc) tc_err_string((rc), (char[128]){0}, 128)

#define LH_WORDS       14
#define LH_MAX_WORKERS 16

/* The protected record: LH_WORDS words derived from seq, and a checksum. A reader
 * that overlaps a writer sees words from two different seq values. */
typedef struct lh_record {
    uint64_t seq;
    uint64_t w[LH_WORDS];
    uint64_t sum;
} lh_record_t;

typedef struct lh_shared {
    _Alignas(TC_CACHELINE) lh_record_t rec;
    /* relaxed RMWs only (so they add no happens-before that could hide a data race
     * on `rec` from ThreadSanitizer): readers add 1, writers add 1 << 32. */
    _Alignas(TC_CACHELINE) _Atomic uint64_t occupancy;
    _Alignas(TC_CACHELINE) _Atomic int failures;
    _Atomic int msg_taken;
    char msg[512];
    _Alignas(TC_CACHELINE) _Atomic uint64_t reads;
    _Atomic uint64_t writes;
    _Atomic uint64_t phase; /* scratch for tests that step parties in lock-step */
    _Atomic uint64_t done;
    _Atomic uint64_t wdone;   /* writer workers finished */
    _Atomic uint64_t overlap; /* reads that saw a record between the first and last */
    uint64_t entered;         /* written inside critical sections only */
    _Alignas(TC_CACHELINE) unsigned char lock_mem[];
} lh_shared_t;

/* Map shared memory for the harness plus a lock of `scheme` for `nreaders`. */
lh_shared_t *lh_shared_create(tc_lock_scheme_t scheme, int nreaders, tc_rwlock_t *lk,
                              const tc_lock_opts_t *opts);
void lh_shared_free(lh_shared_t *sh);
size_t lh_lock_bytes(const lh_shared_t *sh);

/* Record a failure (first message kept). printf-style. */
void lh_fail(lh_shared_t *sh, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Deterministic per-worker random pauses: none, a short spin, or a yield. */
uint64_t lh_rand(uint64_t *state);
void lh_random_pause(uint64_t *state);

/* Write the record for `seq`, pausing in the middle now and then; check it. */
void lh_record_write(lh_record_t *r, uint64_t seq, uint64_t *rng);
int lh_record_check(const lh_record_t *r);

/* Run fn(arg) in a new thread or forked process (use_procs). */
typedef int (*lh_fn)(void *arg);
typedef struct lh_worker {
    int use_procs;
    pid_t pid;
    unsigned long thread; /* pthread_t */
    lh_fn fn;
    void *arg;
    int rc;
} lh_worker_t;
int lh_spawn(lh_worker_t *w, int use_procs, lh_fn fn, void *arg);
/* @return the worker's return value (processes: exit status; signals -> 128+sig). */
int lh_join(lh_worker_t *w);

/* A deadlock bound: when no operation completed (the shared block's reads,
 * writes, phase, done and wdone counters, or a new block) for `seconds`,
 * prints `what`, kills the registered child processes and exits 1.
 * lh_watchdog_register(pid) adds a child. */
void lh_watchdog_arm(unsigned seconds, const char *what);
/* The tests' watchdog: this long without progress is a deadlock, not a busy
 * machine (where each hand-over may wait for a time slice: with both cores
 * kept busy, validate took over 100 s against 2-4 s idle); ctest's TIMEOUT
 * (tests/locks/CMakeLists.txt) bounds the whole run far above that. */
#define LH_WATCHDOG_S 60
/* Lock waits of the tests' ordinary operations give up after this: well
 * above any delay of a busy machine, below the watchdog. */
#define LH_WAIT_S 60.0
void lh_watchdog_register(pid_t pid);
void lh_watchdog_disarm(void);

/* The validate run: `nreaders` reader workers and `nwriters` writer workers on one
 * lock; `writes` acquisitions per writer, at least `reads` per reader
 * (readers go on until the writers are done). Checks no torn record, exclusion, no
 * lost update, and that every call returned 0. @return number of failures. */
typedef struct lh_validate_params {
    tc_lock_scheme_t scheme;
    int nreaders;
    int nwriters;
    int reads;
    int writes;
    int use_procs;
    uint64_t seed;
    int wait_policy; /* tc_lock_opts_t.wait_policy (TC_WAIT); 0 = auto */
} lh_validate_params_t;
int lh_validate(const lh_validate_params_t *p);
/* The same on an existing lock in `sh` (p->scheme and p->nreaders must match it);
 * @return failures added by this run. */
int lh_validate_run(lh_shared_t *sh, const lh_validate_params_t *p);

/* Default options for tests: 10 s timeout, 64 spins, log to stderr. */
tc_lock_opts_t lh_opts(double timeout_s);

#endif /* TC_TESTS_LOCKS_HARNESS_H */
