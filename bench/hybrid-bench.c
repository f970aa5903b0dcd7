/*
 * hybrid-bench: an MPI+OpenMP program of the kind issue 13 is about: each rank
 * runs OpenMP threads that compute between collectives, and with
 * OMP_WAIT_POLICY=active the threads spin while the master thread is inside
 * MPI_Allreduce and MPI_Bcast, so the collectives run on cores that are busy.
 *
 * Every iteration: a parallel region of --work units of floating-point work
 * per thread, then (master thread, outside the region) MPI_Allreduce of
 * --size bytes of doubles and MPI_Bcast of --size bytes from rank 0. It calls
 * MPI_*, not TC_*: run it as is for the MPI's own collectives, and under
 * LD_PRELOAD=.../libtopocoll_pmpi.so for the library's. Results are checked.
 *
 *   OMP_NUM_THREADS=2 OMP_WAIT_POLICY=active mpirun -np 2 --bind-to none \
 *       bench/hybrid-bench [--iters N] [--size BYTES] [--work UNITS] [--contend N]
 *   (add -x LD_PRELOAD=build/src/libtopocoll_pmpi.so for the drop-in)
 *
 * Output: time per iteration (whole, and in the two collectives, max over
 * ranks), median and mean over the iterations after --warmup.
 */
#include <mpi.h>
#include <omp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "contend.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double mean(const double *v, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += v[i];
    return n ? s / n : 0;
}

/* One unit of work: a dependent chain, so it takes time whatever the compiler does. */
static double work(long units, double seed)
{
    double x = seed;
    for (long i = 0; i < units * 1000; i++)
        x = x * 1.0000001 + 1e-9;
    return x;
}

int main(int argc, char **argv)
{
    long iters = 2000, warmup = 100, units = 20, contend = 0;
    size_t size = 8192;
    int provided, rank, np, bad_opt = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v && strcmp(a, "--iters") == 0)
            iters = atol(v), i++;
        else if (v && strcmp(a, "--warmup") == 0)
            warmup = atol(v), i++;
        else if (v && strcmp(a, "--work") == 0)
            units = atol(v), i++;
        else if (v && strcmp(a, "--contend") == 0)
            contend = atol(v), i++;
        else if (v && strcmp(a, "--size") == 0) {
            if (tc_bench_size_parse(v, &size) != 0)
                bad_opt = 1;
            i++;
        } else
            bad_opt = 1;
    }
    if (bad_opt || iters < 1 || warmup < 0 || units < 0 || contend < 0 || size < sizeof(double)) {
        if (rank == 0)
            fprintf(stderr, "usage: hybrid-bench [--iters N] [--warmup N] [--size BYTES] "
                            "[--work UNITS] [--contend N]\n");
        MPI_Finalize();
        return 2;
    }
    if (bench_contend_start(MPI_COMM_WORLD, (int)contend, NULL, 0) != 0) {
        MPI_Finalize();
        return 2;
    }
    const int count = (int)(size / sizeof(double));
    double *sbuf = malloc((size_t)count * sizeof(double));
    double *rbuf = malloc((size_t)count * sizeof(double));
    char *bbuf = malloc(size);
    double *t_iter = malloc(sizeof(double) * (size_t)iters);
    double *t_coll = malloc(sizeof(double) * (size_t)iters);
    long errors = 0;
    double sink = 0;
    int nthreads = 1;

    for (long it = -warmup; it < iters; it++) {
        double t0 = MPI_Wtime();
#pragma omp parallel reduction(+ : sink)
        {
#pragma omp single
            nthreads = omp_get_num_threads();
            sink += work(units, (double)omp_get_thread_num());
        }
        for (int i = 0; i < count; i++)
            sbuf[i] = (double)(rank + 1) * (double)(i % 7 + 1) + (double)(it & 3);
        if (rank == 0)
            for (size_t i = 0; i < size; i++)
                bbuf[i] = (char)(it + (long)i);
        double t1 = MPI_Wtime();
        MPI_Allreduce(sbuf, rbuf, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Bcast(bbuf, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD);
        double t2 = MPI_Wtime();
        /* sum over ranks of (r + 1) * c + (it & 3) */
        const double ranks = (double)np * (np + 1) / 2;
        for (int i = 0; i < count; i++)
            if (rbuf[i] != ranks * (double)(i % 7 + 1) + (double)np * (double)(it & 3)) {
                errors++;
                break;
            }
        for (size_t i = 0; i < size; i++)
            if (bbuf[i] != (char)(it + (long)i)) {
                errors++;
                break;
            }
        if (it >= 0) {
            t_iter[it] = t2 - t0;
            t_coll[it] = t2 - t1;
        }
    }
    /* The slowest rank's times, per iteration. */
    MPI_Allreduce(MPI_IN_PLACE, t_iter, (int)iters, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, t_coll, (int)iters, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    bench_contend_stop(MPI_COMM_WORLD);
    if (rank == 0) {
        const char *pre = getenv("LD_PRELOAD"), *wp = getenv("OMP_WAIT_POLICY");
        double mi = mean(t_iter, (int)iters), mc = mean(t_coll, (int)iters);
        printf("# hybrid-bench np=%d threads=%d size=%zu work=%ld iters=%ld contend=%ld "
               "OMP_WAIT_POLICY=%s preload=%s\n",
               np, nthreads, size, units, iters, contend, wp ? wp : "(unset)",
               pre && *pre ? pre : "none");
        printf("# %12s %12s %12s %12s %8s\n", "iter_med_us", "iter_mean_us", "coll_med_us",
               "coll_mean_us", "errors");
        printf("  %12.2f %12.2f %12.2f %12.2f %8ld\n", median(t_iter, (int)iters) * 1e6, mi * 1e6,
               median(t_coll, (int)iters) * 1e6, mc * 1e6, errors);
        if (sink == 42.0)
            printf("#\n"); /* keeps the work alive */
    }
    free(sbuf);
    free(rbuf);
    free(bbuf);
    free(t_iter);
    free(t_coll);
    MPI_Finalize();
    return errors ? 1 : 0;
}
