/* MPI test of the message-based barriers (src/barrier/msg_barrier.c).
 *
 * The property checked is the barrier's definition: no member leaves
 * barrier k before every member has arrived at it. Each rank owns one 64-bit
 * counter (own cache line) in a shared-memory window over the node (the test
 * needs every rank on one node: exit 77 otherwise). Before entering barrier k
 * a member stores base + k (release); after leaving it loads every member's
 * counter (acquire) and requires base + k <= value <= base + k + 1: below
 * means someone had not arrived yet, above means someone already left
 * barrier k + 1, which needs this member's arrival there. The expected values
 * come from the loop counter alone, nothing from MPI.
 *
 * Groups (each a phase; the algorithm and arity come from argv):
 *   world      MPI_COMM_WORLD, members NULL; random delays, then a run of
 *              back-to-back barriers (reuse races on one tag)
 *   odd-rev    the odd ranks in reversed order; the even ranks do not call
 *   odd+even   odd-rev and the even ranks in reversed order at the same
 *              time, on the same communicator and tag (must not mix)
 *   dup        a dup of MPI_COMM_WORLD
 *   split-rev  a communicator whose rank order is the reverse of the world's
 *              (comm rank != world rank), members NULL
 * After each phase no message may remain unreceived on the tag, and every
 * call must return MPI_SUCCESS.
 *
 * Options: --alg central|tree|dissemination|tournament|pairwise (default
 * dissemination), --arity k (tree, default 2), --iters N (delayed barriers
 * per phase, default 200), --fast N (back-to-back barriers, default 2000 at
 * np <= 4, 500 above), --seed S, --bench N (only time N barriers on a dup of
 * the world and print the per-barrier time; no checks).
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */

#include "barrier/msg_barrier.h"
#include "base/atomics.h"

#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tc_test_common.h"

#define TAG 4242

/* The group cases wait through base/wait_mpi.h's polling waits (yield after
 * a short spin, as on an oversubscribed node); the world cases through the
 * MPI's blocking calls (NULL). */
static const tc_wait_info_t poll_wait = {
    .comm_name = "test_msg_barrier", .timeout_s = 120.0, .spin_polls = 50, .policy = TC_WAIT_YIELD};

typedef struct {
    const char *name;
    MPI_Comm comm;
    const int *members; /* comm ranks of the members, NULL = identity */
    const int *world;   /* world rank of member i (whose counter to check) */
    int n, me;          /* me < 0: not a member */
} group_t;

static int rank, size;
static tc_atomic_u64_t **counters; /* counters[r]: world rank r's, in the window */
static uint64_t rng;

/* A broken barrier often hangs instead: say where before ctest's timeout
 * kills the job silently. */
static const char *volatile cur_phase = "setup";
static volatile long cur_iter;

/* The alarm fires every --alarm seconds; a rank whose phase or barrier
 * changed since the last one goes on (a busy machine makes every barrier
 * slow, not endless), one stuck in the same barrier fails. */
static unsigned alarm_secs;
static const char *seen_phase;
static long seen_iter = -1;

static void on_alarm(int sig)
{
    char msg[160];
    (void)sig;
    if (cur_phase != seen_phase || cur_iter != seen_iter) {
        seen_phase = cur_phase;
        seen_iter = cur_iter;
        alarm(alarm_secs);
        return;
    }
    int len = snprintf(msg, sizeof(msg), "FAIL (timeout) rank %d in phase %s iteration %ld\n", rank,
                       cur_phase, cur_iter);
    if (len > 0 && write(2, msg, (size_t)len) < 0)
        _exit(1);
    _exit(1);
}

static void fail(const char *phase, long iter, const char *what, int who, uint64_t got, uint64_t lo,
                 uint64_t hi)
{
    tt_fail("phase %s barrier %ld: %s world rank %d counter %llu, expected %llu..%llu", phase, iter,
            what, who, (unsigned long long)got, (unsigned long long)lo, (unsigned long long)hi);
}

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

static uint64_t rand_next(void)
{
    /* xorshift64*: a per-rank stream, reproducible from --seed. */
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545F4914F6CDD1Dull;
}

static int parse_alg(const char *s, tc_barrier_alg_t *alg)
{
    for (int a = 0; a < TC_BARRIER_ALG_LAST; a++) {
        if (strcmp(s, tc_barrier_alg_name((tc_barrier_alg_t)a)) == 0) {
            *alg = (tc_barrier_alg_t)a;
            return 0;
        }
    }
    return -1;
}

static const char *arg_str(int argc, char **argv, const char *name, const char *def)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return argv[i + 1];
    return def;
}

static long arg_long(int argc, char **argv, const char *name, long def)
{
    const char *s = arg_str(argc, argv, name, NULL);
    return s ? strtol(s, NULL, 0) : def;
}

/* @p iters barriers of group @p g with counter values base + 1 .. base +
 * iters; with @p delay_pct > 0 that percentage of entries is preceded by a
 * random 0..300 us sleep. */
static void run_phase(const group_t *g, tc_barrier_alg_t alg, int arity, uint64_t base, long iters,
                      int delay_pct)
{
    if (g->me < 0)
        return;
    cur_phase = g->name;
    for (long k = 1; k <= iters; k++) {
        uint64_t v = base + (uint64_t)k;
        cur_iter = k;
        if (delay_pct > 0 && (int)(rand_next() % 100) < delay_pct)
            sleep_us((long)(rand_next() % 301));
        /* release: pairs with the acquire loads of the other members after
         * they leave barrier k (and with ours, for our own counter). */
        tc_store_release_u64(counters[rank], v);
        int rc = tc_msg_barrier(alg, g->comm, g->members, g->n, g->me, arity, TAG, &poll_wait);
        if (rc != MPI_SUCCESS) {
            tt_fail("phase %s barrier %ld: returned %d", g->name, k, rc);
            return;
        }
        for (int j = 0; j < g->n; j++) {
            int w = g->world[j];
            /* acquire: pairs with the release store of member j before it
             * entered the barrier. */
            uint64_t got = tc_load_acquire_u64(counters[w]);
            if (got < v)
                fail(g->name, k, "left before the arrival of", w, got, v, v + 1);
            else if (got > v + 1)
                fail(g->name, k, "passed the next barrier without us:", w, got, v, v + 1);
        }
    }
}

/* No message may be left on the tag once everybody is done: an algorithm
 * that sends more than it receives would leave one here (or, worse, feed it
 * to a later barrier). A correct algorithm never trips this; a wrong one is
 * caught when the stray message has arrived by now. */
static void check_no_stray(MPI_Comm comm, const char *phase)
{
    int flag = 0;
    MPI_Status st;
    MPI_Barrier(MPI_COMM_WORLD);
    sleep_us(2000);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Iprobe(MPI_ANY_SOURCE, TAG, comm, &flag, &st);
    /* Nobody starts the next phase's messages before everybody probed. */
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(!flag, "after phase %s: unreceived message from %d", phase, st.MPI_SOURCE);
}

static void bench(tc_barrier_alg_t alg, int arity, long iters)
{
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    cur_phase = "bench";
    for (int i = 0; i < 200; i++) {
        cur_iter = i;
        tc_msg_barrier(alg, comm, NULL, size, rank, arity, TAG, NULL);
    }
    MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        cur_iter = 200 + i;
        tc_msg_barrier(alg, comm, NULL, size, rank, arity, TAG, NULL);
    }
    double t = (MPI_Wtime() - t0) / (double)iters, tmax;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
    MPI_Barrier(comm);
    t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        cur_iter = 200 + iters + i;
        MPI_Barrier(comm);
    }
    double tm = (MPI_Wtime() - t0) / (double)iters, tmmax;
    MPI_Reduce(&tm, &tmmax, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
    if (rank == 0)
        printf("bench %s arity %d np %d: %.3f us/barrier (MPI_Barrier %.3f us)\n",
               tc_barrier_alg_name(alg), arity, size, tmax * 1e6, tmmax * 1e6);
    MPI_Comm_free(&comm);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    tt_check_np("msg_barrier");

    tc_barrier_alg_t alg;
    const char *alg_s = arg_str(argc, argv, "--alg", "dissemination");
    int arity = (int)arg_long(argc, argv, "--arity", 2);
    long iters = arg_long(argc, argv, "--iters", 200);
    long fast = arg_long(argc, argv, "--fast", size <= 4 ? 2000 : 500);
    long bench_iters = arg_long(argc, argv, "--bench", 0);
    rng = ((uint64_t)arg_long(argc, argv, "--seed", 1) << 20) ^
          (uint64_t)(rank + 1) * 0x9E3779B97F4A7C15ull;
    if (parse_alg(alg_s, &alg) != 0 || arity < 2 || iters < 0 || fast < 0) {
        if (rank == 0)
            fprintf(stderr, "FAIL msg_barrier: bad arguments (--alg %s --arity %d)\n", alg_s,
                    arity);
        MPI_Finalize();
        return 1;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    if (bench_iters > 0) {
        bench(alg, arity, bench_iters);
        MPI_Finalize();
        return 0;
    }

    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    int node_size, node_rank;
    MPI_Comm_size(node, &node_size);
    MPI_Comm_rank(node, &node_rank);
    if (node_size != size || node_rank != rank) {
        if (rank == 0)
            printf("SKIP msg_barrier: the ranks are not all on one node\n");
        MPI_Comm_free(&node);
        MPI_Finalize();
        return 77;
    }

    /* One cache line per rank (one writer per line; MPICH 4.0.2 also
     * misdelivers 8-byte-per-rank windows). */
    void *mine;
    MPI_Win win;
    MPI_Win_allocate_shared(TC_CACHELINE, 1, MPI_INFO_NULL, node, &mine, &win);
    counters = malloc((size_t)size * sizeof(*counters));
    for (int r = 0; r < size; r++) {
        MPI_Aint sz;
        int disp;
        void *p;
        MPI_Win_shared_query(win, r, &sz, &disp, &p);
        counters[r] = p;
    }
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    tc_store_release_u64(counters[rank], 0);
    MPI_Win_sync(win);
    MPI_Barrier(MPI_COMM_WORLD);

    signal(SIGALRM, on_alarm);
    alarm_secs = (unsigned)arg_long(argc, argv, "--alarm", 100);
    alarm(alarm_secs);

    int *ident = malloc((size_t)size * sizeof(int));
    int *rev = malloc((size_t)size * sizeof(int));
    int *odd = malloc((size_t)size * sizeof(int));
    int *even = malloc((size_t)size * sizeof(int));
    int nodd = 0, neven = 0, me_odd = -1, me_even = -1;
    for (int r = 0; r < size; r++) {
        ident[r] = r;
        rev[r] = size - 1 - r;
    }
    for (int r = size - 1; r >= 0; r--) {
        if (r % 2) {
            if (r == rank)
                me_odd = nodd;
            odd[nodd++] = r;
        } else {
            if (r == rank)
                me_even = neven;
            even[neven++] = r;
        }
    }

    uint64_t base = 0;
#define NEXT_BASE() (base += 1ull << 32)

    /* world: delays, then back to back. */
    group_t world = {"world", MPI_COMM_WORLD, NULL, ident, size, rank};
    run_phase(&world, alg, arity, NEXT_BASE(), iters, 30);
    check_no_stray(MPI_COMM_WORLD, "world");
    world.name = "world-fast";
    run_phase(&world, alg, arity, NEXT_BASE(), fast, 0);
    check_no_stray(MPI_COMM_WORLD, "world-fast");

    /* odd ranks, reversed; the others do not call. */
    group_t godd = {"odd-rev", MPI_COMM_WORLD, odd, odd, nodd, me_odd};
    if (nodd > 0) {
        run_phase(&godd, alg, arity, NEXT_BASE(), iters, 30);
        check_no_stray(MPI_COMM_WORLD, "odd-rev");
        godd.name = "odd-rev-fast";
        run_phase(&godd, alg, arity, NEXT_BASE(), fast / 2, 0);
        check_no_stray(MPI_COMM_WORLD, "odd-rev-fast");
    }

    /* odd and even groups at once, same communicator and tag. */
    group_t geven = {"even-rev", MPI_COMM_WORLD, even, even, neven, me_even};
    godd.name = "odd-rev-concurrent";
    {
        uint64_t b = NEXT_BASE();
        run_phase(&godd, alg, arity, b, iters, 20);
        run_phase(&geven, alg, arity, b, iters, 20);
        check_no_stray(MPI_COMM_WORLD, "odd+even");
    }

    /* a dup'd communicator. */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    group_t gdup = {"dup", dup, NULL, ident, size, rank};
    run_phase(&gdup, alg, arity, NEXT_BASE(), iters, 30);
    check_no_stray(dup, "dup");
    gdup.name = "dup-fast";
    run_phase(&gdup, alg, arity, NEXT_BASE(), fast / 2, 0);
    check_no_stray(dup, "dup-fast");

    /* comm rank c is world rank size - 1 - c: members NULL must mean comm
     * ranks, not world ranks. */
    MPI_Comm split;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - rank, &split);
    MPI_Comm_set_errhandler(split, MPI_ERRORS_RETURN);
    int split_rank;
    MPI_Comm_rank(split, &split_rank);
    CHECK(split_rank == size - 1 - rank, "split gave rank %d", split_rank);
    group_t gsplit = {"split-rev", split, NULL, rev, size, split_rank};
    run_phase(&gsplit, alg, arity, NEXT_BASE(), iters, 30);
    check_no_stray(split, "split-rev");

    alarm(0);
    cur_phase = "teardown";
    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    MPI_Comm_free(&node);

    long total = tt_failures_all();
    if (rank == 0)
        printf("%s msg_barrier %s arity %d np %d: iters %ld fast %ld, %ld failures\n",
               total ? "FAIL" : "PASS", tc_barrier_alg_name(alg), arity, size, iters, fast, total);
    free(ident);
    free(rev);
    free(odd);
    free(even);
    free(counters);
    MPI_Finalize();
    return total ? 1 : 0;
}
