/* The shared-memory barriers (src/barrier/shm_barrier.c) on a segment made
 * directly over the node communicator, independent of the context.
 *
 * Oracle: a separate MPI_Win_allocate_shared window (not the segment under
 * test), one block per rank:
 *   iter      the number k of the barrier the rank is about to enter (a
 *             relaxed atomic: the ordering must come from the barrier);
 *   data[2]   plain words f(rank, k, w), written in slot k % 2 before barrier k;
 *   token     (rank 0's block) written by the leader between arrive and
 *             release of a split barrier.
 * After leaving barrier k, every rank checks every j: k <= iter[j] <= k + 1
 * (all have arrived; nobody can be past barrier k + 1 without us) and
 * data[j][k % 2] == f(j, k, .) (the barrier ordered j's plain writes before our
 * reads; j rewrites that slot only before barrier k + 2, after we arrived at
 * k + 1). Split form: arrive, then the leader checks iter[j] == k for every j
 * (all arrived, none released) and writes the token, then release, then
 * everyone checks the token and the usual conditions.
 *
 * Per algorithm: iterations with random delays, then consecutive barriers
 * without delay, then split barriers with random delays. "mix" changes
 * algorithm, arity and form at every barrier on the same segment.
 *
 * Usage: test_shm_barrier [--quick] [--iters N] [--bench N] ALG...
 *   ALG: central tree2 tree3 tree4 dissemination tournament pairwise mix all
 *   --bench N: no checks; per-barrier time (median of 7 runs of N barriers)
 *   --spin N: polls before a wait starts yielding (TC_SPIN_COUNT; default 100, bench 200)
 */
#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "barrier/shm_barrier.h"

#include "tc_test_common.h"

#define WORDS 7

typedef struct {
    _Atomic uint64_t iter;
    uint64_t pad[7];
    uint64_t data[2][8]; /* WORDS used; a line each */
    uint64_t token;
    uint64_t pad2[7];
} block_t;

static int me, np;
static uint64_t k; /* barriers entered so far (the same on every rank) */
static block_t *blocks;

typedef struct {
    const char *name;
    tc_barrier_alg_t alg;
    int arity;
} spec_t;

static const spec_t specs[] = {
    {"central", TC_BARRIER_CENTRAL, 0},
    {"tree2", TC_BARRIER_TREE, 2},
    {"tree3", TC_BARRIER_TREE, 3},
    {"tree4", TC_BARRIER_TREE, 4},
    {"dissemination", TC_BARRIER_DISSEMINATION, 0},
    {"tournament", TC_BARRIER_TOURNAMENT, 0},
    {"pairwise", TC_BARRIER_PAIRWISE, 0},
};
#define NSPECS ((int)(sizeof specs / sizeof specs[0]))

static uint64_t hash(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

static uint64_t f(int rank, uint64_t kk, int w)
{
    return hash(kk * 1000003u + (uint64_t)rank * 131u + (uint64_t)w) | 1u;
}

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* Some ranks sleep before some barriers: 1 in 4 (rank, k) pairs, up to
 * 200 us, and now and then one rank for 2 ms. */
static void maybe_delay(void)
{
    uint64_t h = hash(k * 7919u + (uint64_t)me);
    if (h % 4 == 0)
        sleep_us((long)(h >> 8) % 200);
    if (hash(k) % 16 == 0 && (int)((hash(k) >> 20) % (uint64_t)np) == me)
        sleep_us(2000);
}

static void check_after(const char *what)
{
    for (int j = 0; j < np; j++) {
        uint64_t it = atomic_load_explicit(&blocks[j].iter, memory_order_relaxed);
        if (it < k || it > k + 1)
            tt_fail("%s: after barrier %llu, rank %d is at %llu", what, (unsigned long long)k, j,
                    (unsigned long long)it);
        for (int w = 0; w < WORDS; w++)
            if (blocks[j].data[k % 2][w] != f(j, k, w)) {
                tt_fail("%s: after barrier %llu, rank %d's word %d not visible", what,
                        (unsigned long long)k, j, w);
                break;
            }
    }
}

static void one_barrier(tc_shm_comm_t *s, const spec_t *sp, int split, int delay)
{
    k++;
    if (delay)
        maybe_delay();
    for (int w = 0; w < WORDS; w++)
        blocks[me].data[k % 2][w] = f(me, k, w);
    atomic_store_explicit(&blocks[me].iter, k, memory_order_relaxed);
    if (!split) {
        tc_shm_barrier(s, sp->alg, sp->arity);
        check_after(sp->name);
        return;
    }
    tc_shm_barrier_arrive(s, sp->alg, sp->arity);
    if (me == 0) {
        for (int j = 0; j < np; j++) {
            uint64_t it = atomic_load_explicit(&blocks[j].iter, memory_order_relaxed);
            if (it != k)
                tt_fail("%s split: leader after arrive %llu sees rank %d at %llu", sp->name,
                        (unsigned long long)k, j, (unsigned long long)it);
        }
        if (delay && hash(k) % 8 == 0)
            sleep_us(500); /* the others must stay held until the release */
        blocks[0].token = k;
    }
    tc_shm_barrier_release(s, sp->alg, sp->arity);
    if (blocks[0].token != k)
        tt_fail("%s split: token %llu after release %llu", sp->name,
                (unsigned long long)blocks[0].token, (unsigned long long)k);
    check_after(sp->name);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void bench(tc_shm_comm_t *s, const spec_t *sp, int n)
{
    enum { RUNS = 7 };
    double t[RUNS];
    for (int i = 0; i < 100; i++)
        tc_shm_barrier(s, sp->alg, sp->arity);
    for (int r = 0; r < RUNS; r++) {
        tc_shm_barrier(s, sp->alg, sp->arity);
        double t0 = MPI_Wtime();
        for (int i = 0; i < n; i++)
            tc_shm_barrier(s, sp->alg, sp->arity);
        t[r] = (MPI_Wtime() - t0) / n;
    }
    qsort(t, RUNS, sizeof t[0], cmp_double);
    if (me == 0)
        printf("bench np=%d %-14s %8.3f us/barrier (median of %d runs of %d; min %.3f max %.3f)\n",
               np, sp->name, t[RUNS / 2] * 1e6, RUNS, n, t[0] * 1e6, t[RUNS - 1] * 1e6);
}

static void bench_mpi(int n)
{
    enum { RUNS = 7 };
    double t[RUNS];
    for (int r = 0; r < RUNS; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < n; i++)
            MPI_Barrier(MPI_COMM_WORLD);
        t[r] = (MPI_Wtime() - t0) / n;
    }
    qsort(t, RUNS, sizeof t[0], cmp_double);
    if (me == 0)
        printf("bench np=%d %-14s %8.3f us/barrier (median of %d runs of %d)\n", np, "MPI_Barrier",
               t[RUNS / 2] * 1e6, RUNS, n);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    tt_check_np("test_shm_barrier");
    MPI_Comm node;
    int node_np;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_np);
    if (node_np != np) {
        if (me == 0)
            fprintf(stderr, "skipped: the processes span several nodes\n");
        MPI_Comm_free(&node);
        MPI_Finalize();
        return 77;
    }

    int quick = 0, iters = -1, bench_n = 0, nsel = 0, spin = -1;
    const spec_t *sel[NSPECS + 1];
    int mix = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--bench") && i + 1 < argc)
            bench_n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--spin") && i + 1 < argc)
            spin = atoi(argv[++i]);
        else if (!strcmp(argv[i], "mix"))
            mix = 1;
        else if (!strcmp(argv[i], "all")) {
            nsel = 0;
            for (int j = 0; j < NSPECS; j++)
                sel[nsel++] = &specs[j];
            mix = 1;
        } else {
            int j = 0;
            while (j < NSPECS && strcmp(argv[i], specs[j].name))
                j++;
            if (j == NSPECS || nsel == NSPECS) {
                if (me == 0)
                    fprintf(stderr, "unknown or repeated argument '%s'\n", argv[i]);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            sel[nsel++] = &specs[j];
        }
    }
    if (nsel == 0 && !mix) {
        if (me == 0)
            fprintf(stderr, "no algorithm given\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    tc_shm_params_t params = {.S = 1,
                              .q = 1,
                              .f = 65536,
                              .tree = TC_TREE_KARY,
                              .arity = 2,
                              .tw_over_t = 1000,
                              .stream_bytes = 0,
                              .reduce_slots = 0,
                              .reduce_slot_bytes = 0,
                              .reduce_slice_min = 0};
    tc_shm_policy_t policy = {.placement = TC_PLACEMENT_TOUCH,
                              .max_segment = (size_t)1 << 34,
                              .max_total = (size_t)1 << 36,
                              .max_node = (size_t)1 << 38,
                              .fail = 0};
    /* A lost wake-up ends in the waiter's message and abort well before
     * ctest's timeout. */
    tc_wait_info_t wait = {.comm_name = "test", .timeout_s = 20, .spin_polls = 100};
    if (spin >= 0)
        wait.spin_polls = (uint32_t)spin;
    else if (bench_n > 0)
        wait.spin_polls = 200; /* the library's default TC_SPIN_COUNT */
    tc_shm_comm_t *s = NULL;
    if (tc_shm_comm_create(&s, node, &params, &policy, &wait) != MPI_SUCCESS || !s) {
        fprintf(stderr, "rank %d: segment creation failed\n", me);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    if (bench_n > 0) {
        for (int i = 0; i < nsel; i++)
            bench(s, sel[i], bench_n);
        bench_mpi(bench_n);
        tc_shm_comm_destroy(s);
        MPI_Comm_free(&node);
        MPI_Finalize();
        return 0;
    }

    MPI_Win win;
    block_t *mine;
    MPI_Win_allocate_shared(me == 0 ? (MPI_Aint)(np * sizeof(block_t)) : 0, 1, MPI_INFO_NULL, node,
                            &mine, &win);
    MPI_Aint wsize;
    int disp;
    MPI_Win_shared_query(win, 0, &wsize, &disp, &blocks);
    if (me == 0)
        memset(blocks, 0, (size_t)np * sizeof(block_t));
    MPI_Barrier(node);

    /* Consecutive undelayed barriers per algorithm: fewer when oversubscribed. */
    int consecutive = iters >= 0 ? iters : quick ? 200 : np > 4 ? 400 : 2000;
    int delayed = quick ? 20 : np > 4 ? 80 : 150;
    int count = 0;
    for (int i = 0; i < nsel; i++) {
        long before = tt_failures();
        for (int j = 0; j < delayed; j++)
            one_barrier(s, sel[i], 0, 1);
        for (int j = 0; j < consecutive; j++)
            one_barrier(s, sel[i], 0, 0);
        for (int j = 0; j < delayed; j++)
            one_barrier(s, sel[i], 1, j % 2);
        for (int j = 0; j < consecutive / 4; j++)
            one_barrier(s, sel[i], 1, 0);
        count += 2 * delayed + consecutive + consecutive / 4;
        if (me == 0)
            printf("%-14s np=%d: %s\n", sel[i]->name, np,
                   tt_failures() == before ? "ok (rank 0)" : "FAILED (rank 0)");
    }
    if (mix) {
        /* Algorithm, arity and form change at every barrier (the same choice
         * everywhere: it is a function of k). */
        long before = tt_failures();
        int n = 2 * delayed + consecutive;
        for (int j = 0; j < n; j++) {
            uint64_t h = hash(k + 1 + 0x5eed);
            one_barrier(s, &specs[h % NSPECS], (int)(h >> 16) % 3 == 0, j < 2 * delayed);
        }
        count += n;
        if (me == 0)
            printf("%-14s np=%d: %s\n", "mix", np,
                   tt_failures() == before ? "ok (rank 0)" : "FAILED (rank 0)");
    }
    if (s->bar_epoch != k)
        tt_fail("segment epoch %llu after %llu barriers", (unsigned long long)s->bar_epoch,
                (unsigned long long)k);

    long total = tt_failures_all();
    if (me == 0)
        printf("shm barrier np=%d: %d barriers, %ld failures\n", np, count, total);
    MPI_Win_free(&win);
    tc_shm_comm_destroy(s);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return total ? 1 : 0;
}
