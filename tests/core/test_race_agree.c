/* MPI test of the race's agreement (src/core/race.h): every process makes the
 * same choice in every raced call, however far apart the processes run.
 *
 * A test hook (tc_race_test_time) replaces every process's measured time by a
 * made-up one that differs from process to process and from call to call,
 * and swings between phases where the library's path looks 10x faster and
 * phases where the MPI's does, so that the choice flips often (decisions,
 * near and far probes, re-probes after growth). Processes sleep between calls
 * on a pattern of their own (one of them, from time to time, for longer than
 * the others need for TC_RACE_LAG calls), so that times are read before,
 * while and long after they are written. A second hook (tc_race_test_chosen)
 * logs each raced call's choice; at the end every process compares its log
 * with rank 0's, entry by entry. A process that chose differently in some
 * call would also hang or give wrong bits in that call: every result is
 * checked against values each process computes itself (integers and bytes,
 * exact).
 *
 * Operations: Allreduce (int sum), Reduce (int sum, every root: a non-root
 * runs ahead), Bcast (every root), Allgather, Gather and Scatter (every
 * root), on MPI_COMM_WORLD and on a copy with the ranks reversed; no timing
 * is asserted.
 *
 * --wide (more than two processes, wide fragments on: ctest sets
 * TC_SHM_REDUCE_WIDE_BYTES and _MIN): the fragment race as well, on double
 * sums (Allreduce, Reduce at every root, Reduce_scatter_block), whose bits
 * would change with the algorithm: each result must equal, bit for bit, the
 * rank-order fold each process computes itself, x0 + (x1 + (... + x(p-1))),
 * whichever fragments the call took; and both fragment sizes must run.
 *
 * --mean: the agreed time is the mean of the processes' times, not the
 * longest (race.h). Made-up times without noise, where the two disagree:
 * the library's path takes 60 us on rank 0 and 10 us elsewhere (mean at most
 * 35, longest 60), the MPI's 40 us everywhere. After the exploration the
 * library's path must run every call but the probes; with the longest it
 * would be the MPI's.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <topocoll.h>

#include "core/race.h"
#include "tc_test_common.h"

static int rank, size;

#define LOG_MAX 65536
static unsigned char chosen_log[LOG_MAX];
static long chosen_n, chosen_pmpi, chosen_wide, chosen_default;
static long timed_n;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

/* Made-up times: phases of 48 timed calls alternate which implementation
 * looks fast; each process adds noise of its own of up to 3x. */
static double fake_time(const tc_race_call_t *call, double ns)
{
    (void)ns;
    const long j = timed_n++;
    const int tc_fast = (j / 48) % 2 == 0;
    const double base = (call->impl == TC_RACE_TC) == tc_fast ? 1e4 : 1e5;
    return base * (1.0 + (double)(mix((uint64_t)j * 131 + (uint64_t)rank) % 2000) / 1000.0);
}

/* --mean's times: the mean picks the library's path, the longest the MPI's. */
static double mean_time(const tc_race_call_t *call, double ns)
{
    (void)ns;
    timed_n++;
    if (call->impl == TC_RACE_PMPI)
        return 40e3;
    return rank == 0 ? 60e3 : 10e3;
}

static long untimed_tc, untimed_pmpi;

static void log_choice(const tc_race_call_t *call)
{
    if (!call->measured) {
        untimed_tc += call->impl == TC_RACE_TC;
        untimed_pmpi += call->impl == TC_RACE_PMPI;
    }
    if (chosen_n < LOG_MAX)
        chosen_log[chosen_n] =
            (unsigned char)((int)call->impl | (call->measured ? 2 : 0) | ((int)call->op << 2) |
                            (call->kind == TC_RACE_KIND_WIDE ? 128 : 0));
    chosen_n++;
    if (call->kind == TC_RACE_KIND_WIDE) {
        chosen_wide += call->impl == TC_RACE_WIDE;
        chosen_default += call->impl == TC_RACE_TC;
    } else {
        chosen_pmpi += call->impl == TC_RACE_PMPI;
    }
}

/* Skew: short sleeps on a pattern of each process's own, and now and then
 * one process far behind. */
static void skew(long call)
{
    long us = 0;
    if (mix((uint64_t)call * 7 + (uint64_t)rank) % 5 == 0)
        us = 50 + 100 * rank;
    if (call % 64 == 17 && rank == (int)((call / 64) % (unsigned)size))
        us = 3000;
    if (us) {
        struct timespec ts = {0, us * 1000};
        nanosleep(&ts, NULL);
    }
}

static void tc_ok(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "tc_mpitest_race_agree rank %d: %s returned %d\n", rank, what, rc);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static int ival(int r, size_t i, long call)
{
    return (int)((size_t)(r + 1) * (i % 1009 + 1)) + (int)(call % 1000);
}
static unsigned char bval(int r, size_t i, long call)
{
    return (unsigned char)(i * 31u + (size_t)r * 7u + (size_t)call * 13u);
}

/* Process r's double operand at element i of call @p call: sums of these
 * round differently in different orders. */
static double dval(int r, size_t i, long call)
{
    return 1.0 / (r + 3) + (double)((i + (size_t)call) % 1013) * 1e-3 / (r + 1) +
           1e-9 * (double)(i % 7);
}

/* Double sums (kinds 6 Allreduce, 7 Reduce, 8 Reduce_scatter_block): the
 * result must be the rank-order fold, bit for bit. */
static void double_call(MPI_Comm comm, int kind, size_t bytes, long call)
{
    int me, np;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &np);
    const int root = (int)(call % np);
    const size_t blk = bytes / sizeof(double) / (size_t)np, n = blk * (size_t)np;
    double *s = malloc(n * sizeof *s), *r = malloc(n * sizeof *r);
    for (size_t i = 0; i < n; i++)
        s[i] = dval(me, i, call);
    size_t lo = 0, cnt = n;
    if (kind == 6) {
        tc_ok(TC_Allreduce(s, r, (int)n, MPI_DOUBLE, MPI_SUM, comm), "TC_Allreduce");
    } else if (kind == 7) {
        tc_ok(TC_Reduce(s, r, (int)n, MPI_DOUBLE, MPI_SUM, root, comm), "TC_Reduce");
        cnt = me == root ? n : 0;
    } else {
        tc_ok(TC_Reduce_scatter_block(s, r, (int)blk, MPI_DOUBLE, MPI_SUM, comm),
              "TC_Reduce_scatter_block");
        lo = (size_t)me * blk;
        cnt = blk;
    }
    size_t bad = 0;
    for (size_t i = 0; i < cnt; i++) {
        double want = dval(np - 1, lo + i, call);
        for (int q = np - 2; q >= 0; q--)
            want = dval(q, lo + i, call) + want;
        bad += memcmp(&want, &r[i], sizeof want) != 0;
    }
    CHECK(bad == 0, "double sum kind %d n=%zu call %ld: %zu not the rank-order fold's bits", kind,
          n, call, bad);
    free(s);
    free(r);
}

/* One call of kind @p kind (0 Allreduce, 1 Reduce, 2 Bcast, 3 Allgather,
 * 4 Gather, 5 Scatter; 6-8 double_call's) of about @p bytes on @p comm,
 * checked. */
static void one_call(MPI_Comm comm, int kind, size_t bytes, long call)
{
    int me, np;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &np);
    const int root = (int)(call % np);
    const size_t n = bytes / sizeof(int);
    if (kind >= 6) {
        double_call(comm, kind, bytes, call);
        return;
    }
    if (kind <= 1) {
        int *s = malloc(n * sizeof *s), *r = malloc(n * sizeof *r);
        for (size_t i = 0; i < n; i++)
            s[i] = ival(me, i, call);
        if (kind == 0)
            tc_ok(TC_Allreduce(s, r, (int)n, MPI_INT, MPI_SUM, comm), "TC_Allreduce");
        else
            tc_ok(TC_Reduce(s, r, (int)n, MPI_INT, MPI_SUM, root, comm), "TC_Reduce");
        if (kind == 0 || me == root) {
            size_t bad = 0;
            for (size_t i = 0; i < n; i++) {
                long long want = 0;
                for (int q = 0; q < np; q++)
                    want += ival(q, i, call);
                bad += r[i] != (int)want;
            }
            CHECK(bad == 0, "%s n=%zu call %ld: %zu wrong", kind ? "Reduce" : "Allreduce", n, call,
                  bad);
        }
        free(s);
        free(r);
        return;
    }
    if (kind == 2) {
        unsigned char *b = malloc(bytes);
        for (size_t i = 0; i < bytes; i++)
            b[i] = me == root ? bval(root, i, call) : 0;
        tc_ok(TC_Bcast(b, (int)bytes, MPI_BYTE, root, comm), "TC_Bcast");
        size_t bad = 0;
        for (size_t i = 0; i < bytes; i++)
            bad += b[i] != bval(root, i, call);
        CHECK(bad == 0, "Bcast %zu root %d call %ld: %zu wrong", bytes, root, call, bad);
        free(b);
        return;
    }
    /* Blocks of bytes / np (at least 1) per process. */
    const size_t blk = bytes / (size_t)np ? bytes / (size_t)np : 1;
    unsigned char *mine = malloc(blk), *all = malloc(blk * (size_t)np);
    size_t bad = 0;
    if (kind == 3 || kind == 4) {
        for (size_t i = 0; i < blk; i++)
            mine[i] = bval(me, i, call);
        memset(all, 0, blk * (size_t)np);
        if (kind == 3)
            tc_ok(TC_Allgather(mine, (int)blk, MPI_BYTE, all, (int)blk, MPI_BYTE, comm),
                  "TC_Allgather");
        else
            tc_ok(TC_Gather(mine, (int)blk, MPI_BYTE, all, (int)blk, MPI_BYTE, root, comm),
                  "TC_Gather");
        if (kind == 3 || me == root)
            for (int q = 0; q < np; q++)
                for (size_t i = 0; i < blk; i++)
                    bad += all[(size_t)q * blk + i] != bval(q, i, call);
    } else {
        if (me == root)
            for (int q = 0; q < np; q++)
                for (size_t i = 0; i < blk; i++)
                    all[(size_t)q * blk + i] = bval(q, i, call);
        memset(mine, 0, blk);
        tc_ok(TC_Scatter(all, (int)blk, MPI_BYTE, mine, (int)blk, MPI_BYTE, root, comm),
              "TC_Scatter");
        for (size_t i = 0; i < blk; i++)
            bad += mine[i] != bval(me, i, call);
    }
    CHECK(bad == 0, "kind %d block %zu root %d call %ld: %zu wrong", kind, blk, root, call, bad);
    free(mine);
    free(all);
}

int main(int argc, char **argv)
{
    int iters = 200, wide = 0, mean = 0;
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--iters") && a + 1 < argc)
            iters = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--wide"))
            wide = 1;
        else if (!strcmp(argv[a], "--mean"))
            mean = 1;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tt_check_np("tc_mpitest_race_agree");
    tc_race_test_time = mean ? mean_time : fake_time;
    tc_race_test_chosen = log_choice;
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
    /* Two classes per operation (TC_PMPI_RACE_MIN=4K), interleaved, and one
     * operation at a time for a stretch long enough to get past the
     * exploration into probes and flips. --mean: one class of Allreduce. */
    const size_t sizes[] = {6000, 20000};
    long call = 0;
    for (int kind = 0; kind < (mean ? 1 : wide ? 9 : 6); kind++)
        for (int it = 0; it < iters; it++, call++) {
            skew(call);
            one_call(mean || it % 3 != 2 ? MPI_COMM_WORLD : rev, kind, sizes[mean ? 0 : it % 2],
                     call);
        }
    if (mean) {
        /* The one warm-up call of the MPI's is its only untimed call; the
         * library's path runs every other call but the timed ones. */
        CHECK(untimed_pmpi == 1 && untimed_tc >= iters / 2,
              "rank %d, times whose mean favours the library's path: %ld untimed calls of the "
              "MPI's own (want 1), %ld of the library's (want >= %d)",
              rank, untimed_pmpi, untimed_tc, iters / 2);
    }
    /* Every process's log equals rank 0's. */
    long n0 = chosen_n;
    PMPI_Bcast(&n0, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    CHECK(n0 == chosen_n, "rank %d: %ld raced calls, rank 0 %ld", rank, chosen_n, n0);
    static unsigned char log0[LOG_MAX];
    const int logged = (int)(chosen_n < LOG_MAX ? chosen_n : LOG_MAX);
    memcpy(log0, chosen_log, (size_t)logged);
    PMPI_Bcast(log0, logged, MPI_BYTE, 0, MPI_COMM_WORLD);
    long first = -1;
    if (n0 == chosen_n)
        for (int i = 0; i < logged && first < 0; i++)
            if (log0[i] != chosen_log[i])
                first = i;
    CHECK(first < 0, "rank %d: choice of raced call %ld differs from rank 0's", rank, first);
    /* Not vacuous: calls raced, both implementations ran, times were taken. */
    CHECK(chosen_n > 0 && chosen_pmpi > 0 && chosen_pmpi < chosen_n && timed_n > 0,
          "raced %ld, PMPI %ld, timed %ld", chosen_n, chosen_pmpi, timed_n);
    if (wide)
        CHECK(chosen_wide > 0 && chosen_default > 0,
              "fragment race: %ld calls with wide fragments, %ld with the default ones",
              chosen_wide, chosen_default);
    MPI_Comm_free(&rev);
    int failures = (int)tt_failures(), all_failures = 0;
    PMPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("tc_mpitest_race_agree: np=%d: %ld raced calls (%ld MPI's, %ld wide, %ld "
               "timed), %d failures\n",
               size, chosen_n, chosen_pmpi, chosen_wide, timed_n, all_failures);
    MPI_Finalize();
    return all_failures == 0 ? 0 : 1;
}
