/* MPI test of the race between the library's path and the MPI's own on large
 * messages (src/core/race.h; TC_PMPI_RACE_MIN, set low by ctest so small
 * messages race too).
 *
 * Every case is called --iters times in a row, so each size class goes
 * through the warm-up, the alternation and the decided phase, and both
 * implementations run; every result is checked against values each rank
 * computes itself (exactly for integers and bytes, within a relative 1e-12
 * for double sums). What the race may never do is change a result's bits:
 *   --mode free   operations whose bits cannot depend on the algorithm
 *                 (integer sums, long maxima at every root, MPI_IN_PLACE
 *                 at a root other than 0, Bcast from every root; on two
 *                 processes also double sums): they race, and the ctest
 *                 driver checks from TC_STATS=1 that each operation took
 *                 both paths (shm/hier > 0 and pmpi_race > 0);
 *   --mode fixed  double sums on more than two processes and float maxima
 *                 (order-dependent bits): they must never race (the driver
 *                 checks pmpi_race=0), and every call on the same inputs
 *                 must give the same bits, on every rank.
 * In both modes the double sums' results are compared bit for bit across
 * calls and ranks.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <topocoll.h>

#include "tc_test_common.h"

static int rank, size, cases;

static void tc_ok(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "tc_mpitest_race rank %d: %s returned %d\n", rank, what, rc);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static int ival(int r, size_t i, int call)
{
    return (int)((size_t)(r + 1) * (i % 1009 + 1)) + call;
}
static long lval(int r, size_t i, int call)
{
    return (long)((i * 7919u + (size_t)r * 104729u + (size_t)call * 31u) % 100003u) - 50000;
}
static double dval(int r, size_t i)
{
    return 1.0 / (r + 3) + (double)(i % 1013) * 1e-3 / (r + 1) + 1e-9 * (double)(i % 7);
}
static float fval(int r, size_t i)
{
    return (float)((i * 37u + (size_t)r * 101u) % 211u) * 0.25f - 20.0f;
}
static unsigned char bval(int root, size_t i, int call)
{
    return (unsigned char)(i * 31u + (size_t)root * 7u + (size_t)call * 13u);
}

/* Integer Allreduce sums: exact. */
static void case_int_sum(size_t n, int iters)
{
    int *s = malloc(n * sizeof *s), *r = malloc(n * sizeof *r);
    for (int c = 0; c < iters; c++) {
        for (size_t i = 0; i < n; i++)
            s[i] = ival(rank, i, c);
        tc_ok(TC_Allreduce(s, r, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "TC_Allreduce");
        size_t bad = 0, first = n;
        for (size_t i = 0; i < n; i++) {
            long long want = 0;
            for (int q = 0; q < size; q++)
                want += ival(q, i, c);
            if (r[i] != (int)want && bad++ == 0)
                first = i;
        }
        CHECK(bad == 0, "int sum n=%zu call %d: %zu wrong, first at %zu", n, c, bad, first);
        cases++;
    }
    free(s);
    free(r);
}

/* Long maxima at every root, and an in-place int sum at a root other than
 * 0 (the MPICH 4.0.2 case the library works around when it hands the call
 * to the MPI). */
static void case_reduce(size_t n, int iters)
{
    long *s = malloc(n * sizeof *s), *r = malloc(n * sizeof *r);
    int *is = malloc(n * sizeof *is);
    for (int c = 0; c < iters; c++) {
        const int root = c % size;
        for (size_t i = 0; i < n; i++)
            s[i] = lval(rank, i, c);
        tc_ok(TC_Reduce(s, r, (int)n, MPI_LONG, MPI_MAX, root, MPI_COMM_WORLD), "TC_Reduce");
        if (rank == root) {
            size_t bad = 0;
            for (size_t i = 0; i < n; i++) {
                long want = lval(0, i, c);
                for (int q = 1; q < size; q++)
                    want = lval(q, i, c) > want ? lval(q, i, c) : want;
                bad += r[i] != want;
            }
            CHECK(bad == 0, "long max n=%zu root %d call %d: %zu wrong", n, root, c, bad);
        }
        const int iroot = size - 1 - root;
        for (size_t i = 0; i < n; i++)
            is[i] = ival(rank, i, c);
        tc_ok(TC_Reduce(rank == iroot ? MPI_IN_PLACE : is, is, (int)n, MPI_INT, MPI_SUM, iroot,
                        MPI_COMM_WORLD),
              "TC_Reduce in place");
        if (rank == iroot) {
            size_t bad = 0;
            for (size_t i = 0; i < n; i++) {
                long long want = 0;
                for (int q = 0; q < size; q++)
                    want += ival(q, i, c);
                bad += is[i] != (int)want;
            }
            CHECK(bad == 0, "in-place int sum n=%zu root %d call %d: %zu wrong", n, iroot, c, bad);
        }
        cases += 2;
    }
    free(s);
    free(r);
    free(is);
}

static void case_bcast(size_t n, int iters)
{
    unsigned char *b = malloc(n);
    for (int c = 0; c < iters; c++) {
        const int root = (c * 3 + 1) % size;
        for (size_t i = 0; i < n; i++)
            b[i] = rank == root ? bval(root, i, c) : (unsigned char)~bval(root, i, c);
        tc_ok(TC_Bcast(b, (int)n, MPI_BYTE, root, MPI_COMM_WORLD), "TC_Bcast");
        size_t bad = 0;
        for (size_t i = 0; i < n; i++)
            bad += b[i] != bval(root, i, c);
        CHECK(bad == 0, "bcast n=%zu root %d call %d: %zu wrong", n, root, c, bad);
        cases++;
    }
    free(b);
}

/* Bit-for-bit equality of @p r (n doubles or floats, @p bytes) with the
 * first call's result and with rank 0's. */
static void same_bits(const void *r, void *first, size_t bytes, int c, const char *what, size_t n)
{
    if (c == 0)
        memcpy(first, r, bytes);
    else
        CHECK(memcmp(first, r, bytes) == 0, "%s n=%zu call %d: bits differ from call 0", what, n,
              c);
    char *root_bits = malloc(bytes);
    memcpy(root_bits, r, bytes);
    MPI_Bcast(root_bits, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    CHECK(memcmp(root_bits, r, bytes) == 0, "%s n=%zu call %d: bits differ from rank 0's", what, n,
          c);
    free(root_bits);
}

/* Double sums (race on two processes only) and float maxima (never). */
static void case_float(size_t n, int iters, int with_max)
{
    double *s = malloc(n * sizeof *s), *r = malloc(n * sizeof *r), *first = malloc(n * sizeof *r);
    float *fs = malloc(n * sizeof *fs), *fr = malloc(n * sizeof *fr), *ffirst = malloc(n * 4);
    for (size_t i = 0; i < n; i++) {
        s[i] = dval(rank, i);
        fs[i] = fval(rank, i);
    }
    for (int c = 0; c < iters; c++) {
        tc_ok(TC_Allreduce(s, r, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), "TC_Allreduce");
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) {
            double want = 0;
            for (int q = 0; q < size; q++)
                want += dval(q, i);
            bad += !(fabs(r[i] - want) <= 1e-12 * fabs(want));
        }
        CHECK(bad == 0, "double sum n=%zu call %d: %zu outside 1e-12", n, c, bad);
        same_bits(r, first, n * sizeof *r, c, "double sum", n);
        cases++;
        if (!with_max)
            continue;
        tc_ok(TC_Allreduce(fs, fr, (int)n, MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD), "TC_Allreduce");
        bad = 0;
        for (size_t i = 0; i < n; i++) {
            float want = fval(0, i);
            for (int q = 1; q < size; q++)
                want = fval(q, i) > want ? fval(q, i) : want;
            bad += fr[i] != want;
        }
        CHECK(bad == 0, "float max n=%zu call %d: %zu wrong", n, c, bad);
        same_bits(fr, ffirst, n * sizeof *fr, c, "float max", n);
        cases++;
    }
    free(s);
    free(r);
    free(first);
    free(fs);
    free(fr);
    free(ffirst);
}

int main(int argc, char **argv)
{
    int iters = 40, fixed = 0;
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--iters") && a + 1 < argc)
            iters = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--mode") && a + 1 < argc)
            fixed = !strcmp(argv[++a], "fixed");
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tt_check_np("tc_mpitest_race");
    if (fixed && size == 2) {
        /* On two processes double sums race by design: nothing to check. */
        if (rank == 0)
            printf("tc_mpitest_race: --mode fixed needs more than two processes: skipped\n");
        MPI_Finalize();
        return 77;
    }
    /* Bytes: one class below 8 KiB, then across classes up to a few fragments. */
    const size_t sizes[] = {4096 + 24, 8192 + 40, 65536 + 8, 262144 + 72};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        if (fixed) {
            case_float(sizes[k] / sizeof(double), iters, 1);
            continue;
        }
        case_int_sum(sizes[k] / sizeof(int), iters);
        case_reduce(sizes[k] / sizeof(long), iters);
        case_bcast(sizes[k], iters);
        if (size == 2)
            case_float(sizes[k] / sizeof(double), iters, 0);
    }
    int all_failures = 0, all_cases = 0;
    int failures = (int)tt_failures();
    MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&cases, &all_cases, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("tc_mpitest_race: np=%d mode %s: %d cases, %d failures\n", size,
               fixed ? "fixed" : "free", all_cases, all_failures);
    MPI_Finalize();
    return all_failures == 0 && all_cases > 0 ? 0 : 1;
}
