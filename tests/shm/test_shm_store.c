/* The node store (src/shm/store.c) on a segment made directly over
 * MPI_COMM_WORLD (one node), with the lock scheme forced by --scheme:
 *  1. the leader puts keys of 0..1000 bytes; everyone gets them and compares
 *     with bytes computed locally from (key, version, index); not-found,
 *     too-small buffer, bad keys, a put by a non-leader; get_or_put (only the
 *     leader computes, the others copy);
 *  2. a key grown past its record's capacity moves (later records slide down);
 *  3. the leader updates one key many times (length and bytes a function of
 *     the version) while the others read it in a loop: every value read must
 *     be exactly the one of the version it came with (no torn value), and
 *     versions never go backwards;
 *  4. overflow: the number of 1000-byte records that still fit is computed
 *     from the documented record size; one more is ENOSPC, earlier keys intact;
 *  5. (--kill) a child of the last rank takes that rank's reader lock and is
 *     SIGKILLed holding it; the leader's next put completes (robust-mutex
 *     schemes: 1n-mutex, 2n-mutex, n-mutex-signal) or gives up after the wait
 *     timeout (--timeout, rwlock and n-mcs), after which the store is unusable
 *     on every rank.
 */
#include <errno.h>
#include <mpi.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shm/segment.h"
#include "shm/store.h"

#include "tc_test_common.h"

static int me, np;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Byte j of the value of key number k at version v. */
static unsigned char val_byte(int k, uint64_t v, size_t j)
{
    return (unsigned char)(k * 131 + v * 29 + j * 7 + (j >> 8) * 3);
}

static void val_fill(unsigned char *b, int k, uint64_t v, size_t len)
{
    for (size_t j = 0; j < len; j++)
        b[j] = val_byte(k, v, j);
}

/* Index of the first wrong byte, or -1. */
static long val_check(const unsigned char *b, int k, uint64_t v, size_t len)
{
    for (size_t j = 0; j < len; j++)
        if (b[j] != val_byte(k, v, j))
            return (long)j;
    return -1;
}

#define NKEYS 6
static const size_t key_len0[NKEYS] = {0, 1, 63, 64, 65, 1000};
static size_t key_len[NKEYS];
static uint64_t key_ver[NKEYS];

static void key_name(char *name, size_t n, int k)
{
    snprintf(name, n, "key-%d", k);
}

/* Everyone: every key has its expected length, version and bytes. */
static void check_keys(tc_shm_comm_t *s, const char *phase)
{
    static unsigned char buf[TC_SHM_STORE_BYTES];
    for (int k = 0; k < NKEYS; k++) {
        char name[32];
        key_name(name, sizeof name, k);
        size_t len = 12345;
        uint64_t ver = 0;
        int rc = tc_shm_store_get(s, name, buf, sizeof buf, &len, &ver);
        long bad;
        if (rc != 0)
            tt_fail("%s: get(%s) = %d (%s)", phase, name, rc,
                    tc_err_string(rc, (char[128]){0}, 128));
        else if (len != key_len[k] || ver != key_ver[k])
            tt_fail("%s: get(%s): len %zu version %llu, expected %zu %llu", phase, name, len,
                    (unsigned long long)ver, key_len[k], (unsigned long long)key_ver[k]);
        else if ((bad = val_check(buf, k, ver, len)) >= 0)
            tt_fail("%s: get(%s): byte %ld wrong", phase, name, bad);
    }
}

static int computes;
static tc_err_t gop_compute(void *buf, size_t len, void *arg)
{
    computes++;
    val_fill(buf, *(int *)arg, 7, len);
    return 0;
}

static void phase_basic(tc_shm_comm_t *s)
{
    static unsigned char buf[2048];
    if (me == 0) {
        for (int k = 0; k < NKEYS; k++) {
            char name[32];
            key_name(name, sizeof name, k);
            key_len[k] = key_len0[k];
            key_ver[k] = 1;
            val_fill(buf, k, 1, key_len[k]);
            int rc = tc_shm_store_put(s, name, buf, key_len[k]);
            if (rc != 0)
                tt_fail("put(%s, %zu bytes) = %d (%s)", name, key_len[k], rc,
                        tc_err_string(rc, (char[128]){0}, 128));
        }
        /* Rewrite key-5 in place (same length): version 2. */
        key_ver[5] = 2;
        val_fill(buf, 5, 2, key_len[5]);
        if (tc_shm_store_put(s, "key-5", buf, key_len[5]) != 0)
            tt_fail("second put(key-5) failed");
    } else {
        for (int k = 0; k < NKEYS; k++) {
            key_len[k] = key_len0[k];
            key_ver[k] = k == 5 ? 2 : 1;
        }
        int rc = tc_shm_store_put(s, "key-0", buf, 1);
        if (tc_err_cause(rc) != EPERM)
            tt_fail("put by rank %d = %d, expected EPERM", me, rc);
    }
    /* Bad keys and arguments, everywhere. */
    static const char long_key[] = "0123456789012345678901234567890123";
    int rc;
    if (tc_err_kind(rc = tc_shm_store_put(s, "", buf, 1)) != TC_ERR_ARG)
        tt_fail("put(\"\") = %d, expected EINVAL", rc);
    if (tc_err_kind(rc = tc_shm_store_get(s, long_key, buf, sizeof buf, NULL, NULL)) != TC_ERR_ARG)
        tt_fail("get(long key) = %d, expected EINVAL", rc);
    MPI_Barrier(MPI_COMM_WORLD);

    check_keys(s, "basic");
    size_t len = 0;
    if (tc_err_kind(rc = tc_shm_store_get(s, "no-such-key", buf, sizeof buf, &len, NULL)) !=
        TC_ERR_NOTFOUND)
        tt_fail("get(no-such-key) = %d, expected ENOENT", rc);
    len = 0;
    if (tc_err_kind(rc = tc_shm_store_get(s, "key-5", buf, 999, &len, NULL)) != TC_ERR_BUFFER ||
        len != 1000)
        tt_fail("get(key-5, 999-byte buffer) = %d len %zu, expected ENOBUFS len 1000", rc, len);
    if ((rc = tc_shm_store_get(s, "key-0", NULL, 0, &len, NULL)) != 0 || len != 0)
        tt_fail("get(key-0, empty value) = %d len %zu", rc, len);

    /* get_or_put: only the leader computes. */
    int k = 77, from = -1;
    computes = 0;
    memset(buf, 0, sizeof buf);
    rc = tc_shm_store_get_or_put(s, MPI_COMM_WORLD, "gop", buf, 500, gop_compute, &k, &from);
    long bad;
    if (rc != 0)
        tt_fail("get_or_put = %d", rc);
    else if ((bad = val_check(buf, k, 7, 500)) >= 0)
        tt_fail("get_or_put: byte %ld wrong", bad);
    if (me == 0 ? (computes != 1 || from != 0) : (computes != 0 || from != 1))
        tt_fail("get_or_put: computed %d times, from_store %d", computes, from);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* key-2 (63 bytes, capacity one line) grows to 200: it moves to the end. */
static void phase_move(tc_shm_comm_t *s)
{
    static unsigned char buf[256];
    key_len[2] = 200;
    key_ver[2] = 2;
    if (me == 0) {
        val_fill(buf, 2, 2, 200);
        int rc = tc_shm_store_put(s, "key-2", buf, 200);
        if (rc != 0)
            tt_fail("put(key-2, 200) = %d", rc);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    check_keys(s, "move");
    MPI_Barrier(MPI_COMM_WORLD);
}

#define LIVE_KEY 40
static size_t live_len(uint64_t v)
{
    return 64 + (size_t)(v * 37 % 900);
}

/* Capacity of the "live" record after @p nupd updates: a record keeps its
 * capacity when a value that fits is written in place, and is rebuilt with the
 * new value's size otherwise (store.h). */
static size_t live_cap(int nupd)
{
    size_t cap = 0;
    for (uint64_t v = 1; v <= (uint64_t)nupd; v++)
        if (v == 1 || live_len(v) > cap)
            cap = TC_SHM_STORE_RECORD_BYTES(live_len(v)) - TC_CACHELINE;
    return cap;
}

static void phase_live(tc_shm_comm_t *s, int nupd)
{
    static unsigned char buf[TC_SHM_STORE_BYTES];
    MPI_Barrier(MPI_COMM_WORLD);
    long reads = 0, versions = 0;
    if (me == 0) {
        for (uint64_t v = 1; v <= (uint64_t)nupd; v++) {
            val_fill(buf, LIVE_KEY, v, live_len(v));
            int rc = tc_shm_store_put(s, "live", buf, live_len(v));
            if (rc != 0) {
                tt_fail("put(live, version %llu) = %d", (unsigned long long)v, rc);
                break;
            }
            if (v % 8 == 0)
                usleep(100); /* let readers in between some updates */
        }
    } else {
        uint64_t last = 0;
        double deadline = now_s() + 60.0; /* a hang (ctest TIMEOUT 120), not load */
        while (last < (uint64_t)nupd) {
            size_t len = 0;
            uint64_t ver = 0;
            int rc = tc_shm_store_get(s, "live", buf, sizeof buf, &len, &ver);
            if (tc_err_kind(rc) == TC_ERR_NOTFOUND && last == 0) {
                /* not put yet */
            } else if (rc != 0) {
                tt_fail("get(live) = %d (%s)", rc, tc_err_string(rc, (char[128]){0}, 128));
                break;
            } else {
                long bad;
                reads++;
                if (ver < last)
                    tt_fail("get(live): version went back from %llu to %llu",
                            (unsigned long long)last, (unsigned long long)ver);
                if (ver < 1 || ver > (uint64_t)nupd || len != live_len(ver))
                    tt_fail("get(live): version %llu with %zu bytes", (unsigned long long)ver, len);
                else if ((bad = val_check(buf, LIVE_KEY, ver, len)) >= 0)
                    tt_fail("get(live): torn value, version %llu byte %ld", (unsigned long long)ver,
                            bad);
                if (ver != last)
                    versions++;
                last = ver;
            }
            if (tt_failures())
                break;
            if (now_s() > deadline) {
                tt_fail("get(live): version %llu of %d after 60 s", (unsigned long long)last, nupd);
                break;
            }
            sched_yield();
        }
    }
    long mine[2] = {reads, versions}, total[2] = {0, 0};
    MPI_Reduce(mine, total, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0 && np > 1 && total[0] < np - 1)
        tt_fail("live: only %ld reads by %d readers", total[0], np - 1);
    if (me == 0)
        printf("live: %d updates; %d readers read %ld times, %ld distinct versions in all\n", nupd,
               np - 1, total[0], total[1]);
    MPI_Barrier(MPI_COMM_WORLD);
    check_keys(s, "after live");
}

static void phase_overflow(tc_shm_comm_t *s, int nupd, int *nfill)
{
    static unsigned char buf[TC_SHM_STORE_BYTES];
    int rc;
    if (me == 0) {
        /* What the records take now, from the documented record size. */
        size_t used = TC_SHM_STORE_RECORD_BYTES(500) + TC_SHM_STORE_RECORD_BYTES(live_cap(nupd));
        for (int k = 0; k < NKEYS; k++)
            used += TC_SHM_STORE_RECORD_BYTES(key_len[k]);
        size_t fr = TC_SHM_STORE_CAPACITY - used;
        if (tc_err_kind(rc = tc_shm_store_put(s, "huge", buf, TC_SHM_STORE_CAPACITY)) !=
            TC_ERR_LIMIT)
            tt_fail("put(huge) = %d, expected ENOSPC", rc);
        /* Growing key-0 beyond the free space fails and leaves it as it was. */
        if (tc_err_kind(rc = tc_shm_store_put(s, "key-0", buf, fr + 1)) != TC_ERR_LIMIT)
            tt_fail("put(key-0, %zu bytes) = %d, expected ENOSPC", fr + 1, rc);
        int expect = (int)(fr / TC_SHM_STORE_RECORD_BYTES(1000)), n = 0;
        for (;; n++) {
            char name[32];
            snprintf(name, sizeof name, "fill-%d", n);
            val_fill(buf, 100 + n, 1, 1000);
            if ((rc = tc_shm_store_put(s, name, buf, 1000)) != 0)
                break;
        }
        if (tc_err_kind(rc) != TC_ERR_LIMIT || n != expect)
            tt_fail("fill: %d records then %d, expected %d then ENOSPC (%zu bytes free)", n, rc,
                    expect, fr);
        size_t rest = fr - (size_t)n * TC_SHM_STORE_RECORD_BYTES(1000);
        if (rest >= TC_CACHELINE) {
            /* Exactly the rest fits; then not even an empty value. */
            val_fill(buf, 99, 1, rest - TC_CACHELINE);
            if ((rc = tc_shm_store_put(s, "rest", buf, rest - TC_CACHELINE)) != 0)
                tt_fail("put(rest, %zu) = %d", rest - TC_CACHELINE, rc);
        }
        if (tc_err_kind(rc = tc_shm_store_put(s, "empty", buf, 0)) != TC_ERR_LIMIT)
            tt_fail("put(empty) in a full store = %d, expected ENOSPC", rc);
        *nfill = n;
    }
    MPI_Bcast(nfill, 1, MPI_INT, 0, MPI_COMM_WORLD);
    check_keys(s, "overflow");
    for (int n = 0; n < *nfill; n++) {
        char name[32];
        size_t len = 0;
        uint64_t ver = 0;
        long bad = 0;
        snprintf(name, sizeof name, "fill-%d", n);
        if ((rc = tc_shm_store_get(s, name, buf, sizeof buf, &len, &ver)) != 0 || len != 1000 ||
            ver != 1 || (bad = val_check(buf, 100 + n, 1, len)) >= 0)
            tt_fail("get(%s) = %d len %zu version %llu bad byte %ld", name, rc, len,
                    (unsigned long long)ver, bad);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* 5: a reader dies holding its lock. Returns with everyone past it. */
static void phase_kill(tc_shm_comm_t *s, double timeout)
{
    const int victim = np - 1;
    const int robust = s->store_lock.scheme == TC_LOCK_SCHEME_1N_MUTEX ||
                       s->store_lock.scheme == TC_LOCK_SCHEME_2N_MUTEX ||
                       s->store_lock.scheme == TC_LOCK_SCHEME_N_MUTEX_SIGNAL;
    if (me == victim) {
        int pfd[2];
        if (pipe(pfd) != 0) {
            tt_fail("pipe failed");
        } else {
            pid_t pid = fork();
            if (pid == 0) {
                /* The child shares the mapping; no MPI here. */
                close(pfd[0]);
                char c = tc_rwlock_rdlock(&s->store_lock, victim) == 0 ? 'y' : 'n';
                if (write(pfd[1], &c, 1) != 1)
                    _exit(3);
                for (;;)
                    pause();
            }
            close(pfd[1]);
            char c = 0;
            if (pid < 0 || read(pfd[0], &c, 1) != 1 || c != 'y')
                tt_fail("the child could not take reader lock %d", victim);
            if (pid > 0) {
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
            }
            close(pfd[0]);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    static unsigned char buf[64];
    int rc = 0;
    if (me == 0) {
        double t0 = now_s();
        val_fill(buf, 1, key_ver[1] + 1, 1);
        rc = tc_shm_store_put(s, "key-1", buf, 1);
        double dt = now_s() - t0;
        if (robust && rc != 0)
            tt_fail("put after a reader died = %d (%s), expected 0 (robust scheme)", rc,
                    tc_err_string(rc, (char[128]){0}, 128));
        /* No upper bound on dt: on a busy machine the put may be descheduled
         * past its deadline; giving up early is the error. */
        if (!robust && (tc_err_kind(rc) != TC_ERR_NOTRECOVERABLE || dt < 0.9 * timeout))
            tt_fail("put after a reader died = %d after %.2f s, expected ENOTRECOVERABLE after "
                    "at least %.1f s",
                    rc, dt, timeout);
        printf("kill: put after the reader died: %s after %.2f s\n",
               rc ? tc_err_string(rc, (char[128]){0}, 128) : "ok", dt);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rc == 0) {
        key_ver[1]++;
        check_keys(s, "after kill");
        if (!tc_shm_store_usable(s))
            tt_fail("store unusable after a recovered put");
    } else {
        size_t len;
        int grc = tc_shm_store_get(s, "key-3", buf, sizeof buf, &len, NULL);
        if (tc_err_kind(grc) != TC_ERR_NOTRECOVERABLE || tc_shm_store_usable(s))
            tt_fail("after the failed put: get = %d usable %d, expected ENOTRECOVERABLE, 0", grc,
                    tc_shm_store_usable(s));
        if (me == 0 && tc_err_kind(tc_shm_store_put(s, "key-3", buf, 1)) != TC_ERR_NOTRECOVERABLE)
            tt_fail("put on an unusable store did not return ENOTRECOVERABLE");
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    tt_check_np("test_shm_store");
    tc_shm_params_t params = {.S = 4,
                              .q = 2,
                              .f = 4096,
                              .tree = TC_TREE_KARY,
                              .arity = 2,
                              .tw_over_t = 1000,
                              .lock_scheme = TC_LOCK_SCHEME_N_MCS};
    int do_kill = 0, nupd = 200;
    double timeout = 5.0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--scheme") && i + 1 < argc) {
            if (tc_lock_scheme_parse(argv[++i], &params.lock_scheme) != 0) {
                if (me == 0)
                    fprintf(stderr, "unknown scheme %s\n", argv[i]);
                MPI_Finalize();
                return 1;
            }
        } else if (!strcmp(argv[i], "--kill")) {
            do_kill = 1;
        } else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) {
            timeout = atof(argv[++i]);
        } else if (!strcmp(argv[i], "--updates") && i + 1 < argc) {
            nupd = atoi(argv[++i]);
        }
    }
    tc_shm_policy_t policy = {.placement = TC_PLACEMENT_TOUCH,
                              .max_segment = (size_t)1 << 34,
                              .max_total = (size_t)1 << 36,
                              .max_node = (size_t)1 << 38,
                              .fail = 0};
    /* Phases 1-4: a wait of 60 s is a hang, not a busy machine (a holder
     * descheduled for a while). The kill phase sets the store lock's timeout
     * to --timeout on every process first: the put must give up after it. */
    tc_wait_info_t wait = {.comm_name = "test", .timeout_s = 60.0, .spin_polls = 100};
    tc_shm_comm_t *s = NULL;
    if (tc_shm_comm_create(&s, MPI_COMM_WORLD, &params, &policy, &wait) != MPI_SUCCESS || !s) {
        fprintf(stderr, "rank %d: segment creation failed\n", me);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* The store must be there, in the header, with the scheme asked for. */
    if (!tc_shm_store_usable(s) || s->store_lock.scheme != params.lock_scheme ||
        s->layout.store_bytes != TC_SHM_STORE_BYTES ||
        s->layout.store_off + s->layout.store_bytes > s->layout.header_size)
        tt_fail("store: usable %d scheme %d (asked %d), %zu bytes at %zu, header %zu",
                tc_shm_store_usable(s), (int)s->store_lock.scheme, (int)params.lock_scheme,
                s->layout.store_bytes, s->layout.store_off, s->layout.header_size);
    int nfill = 0;
    if (!tt_failures()) {
        phase_basic(s);
        phase_move(s);
        phase_live(s, nupd);
        phase_overflow(s, nupd, &nfill);
        if (do_kill) {
            s->store_lock.opts.timeout_s = timeout; /* process-local: read by each wait */
            phase_kill(s, timeout);
        }
    }
    long all = tt_failures_all();
    if (me == 0)
        printf("shm_store %s np=%d: %d updates, %d fill records, kill %s: %s (%ld failures)\n",
               tc_lock_scheme_name(params.lock_scheme), np, nupd, nfill, do_kill ? "yes" : "no",
               all ? "FAIL" : "ok", all);
    tc_shm_comm_destroy(s);
    MPI_Finalize();
    return all ? 1 : 0;
}
