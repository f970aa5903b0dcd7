/*
 * An unmodified MPI program calling MPI_Alltoall and MPI_Alltoallv. Run with
 * LD_PRELOAD=libtopocoll_pmpi.so by run_with_stats.sh, which checks from
 * TC_STATS=1 output that every call went through the library's
 * shared-memory path; it prints how many of each it made for that check.
 *
 * The block from rank i to rank j holds value(case, i, j, k), which every
 * rank computes on its own; receivers start from a poisoned buffer, and gaps
 * between blocks must keep the poison. Cases: MPI_INT blocks of 0 to ~0.3
 * MiB, MPI_IN_PLACE, a contiguous sender with a strided receiver (int
 * resized to 8 bytes), Alltoallv with uneven counts (zeros included),
 * reversed displacements and gaps, and in place; on MPI_COMM_WORLD and on a
 * duplicate.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_test_common.h"

#define POISON (-7)

static long long alltoalls, alltoallvs;
static int errors, world_rank;

static int32_t value(int c, int from, int to, long k)
{
    return (int32_t)(((uint32_t)c * 2654435761u ^ (uint32_t)from * 40503u ^
                      (uint32_t)to * 1299709u ^ (uint32_t)k * 97u) &
                     0x7fffffff);
}

static void fail(const char *what, int c, long n, long at)
{
    if (errors++ < 10)
        fprintf(stderr, "alltoall_c: rank %d: %s case %d n=%ld: wrong at %ld\n", world_rank, what,
                c, n, at);
}

/* Elements of the block between @p a and @p b (symmetric, so that in place
 * works): n, or for v uneven with zeros. */
static int count_of(int v, long n, int a, int b)
{
    if (!v)
        return (int)n;
    const int s = a + b;
    return s % 3 == 1 ? 0 : (int)((n * (s + 1)) % (n + 2));
}

static void run(MPI_Comm comm, int c0)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    static const long ns[] = {0, 1, 13, 14, 15, 1024, 5000, 40001};
    const int nns = (int)(sizeof ns / sizeof ns[0]);
    MPI_Datatype strided;
    MPI_Type_create_resized(MPI_INT, 0, 8, &strided);
    MPI_Type_commit(&strided);
    int *sc = malloc((size_t)size * sizeof(int)), *sd = malloc((size_t)size * sizeof(int));
    int *rc_ = malloc((size_t)size * sizeof(int)), *rd = malloc((size_t)size * sizeof(int));
    for (int s = 0; s < nns; s++) {
        const long n = ns[s];
        const long len = 2 * (n + 3) * size + 8;
        int32_t *send = malloc((size_t)len * sizeof(int32_t));
        int32_t *recv = malloc((size_t)len * sizeof(int32_t));
        char *mark = malloc((size_t)len);
        if (!send || !recv || !mark || !sc || !sd || !rc_ || !rd)
            MPI_Abort(MPI_COMM_WORLD, 1);
        for (int mode = 0; mode < 5; mode++) {
            const int c = c0 + 10 * s + mode;
            /* 0 plain, 1 in place, 2 strided receiver, 3 v reversed with gaps,
             * 4 v in place. */
            const int v = mode >= 3, stride = mode == 2 ? 2 : 1;
            const int in_place = mode == 1 || mode == 4;
            for (int j = 0; j < size; j++) {
                sc[j] = count_of(v, n, rank, j);
                rc_[j] = count_of(v, n, j, rank);
            }
            for (int j = 0, at = 0; j < size; j++) {
                sd[j] = v ? at : j * (int)n;
                at += sc[j] + 1;
            }
            for (int j = size - 1, at = 0; j >= 0; j--) {
                rd[j] = v ? at : j * (int)n;
                at += rc_[j] + 2;
            }
            for (long i = 0; i < len; i++)
                recv[i] = send[i] = POISON;
            int32_t *src = in_place ? recv : send;
            for (int j = 0; j < size; j++)
                for (long k = 0; k < (in_place ? rc_[j] : sc[j]); k++)
                    src[(in_place ? rd[j] : sd[j]) + k] = value(c, rank, j, k);
            const void *sb = in_place ? MPI_IN_PLACE : send;
            int rc;
            if (!v) {
                alltoalls++;
                rc = MPI_Alltoall(sb, (int)n, MPI_INT, recv, (int)n, mode == 2 ? strided : MPI_INT,
                                  comm);
            } else {
                alltoallvs++;
                rc = MPI_Alltoallv(sb, sc, sd, MPI_INT, recv, rc_, rd, MPI_INT, comm);
            }
            const char *what = v ? "MPI_Alltoallv" : "MPI_Alltoall";
            if (rc != MPI_SUCCESS)
                fail(what, c, n, -1);
            memset(mark, 0, (size_t)len);
            int bad = 0;
            for (int j = 0; j < size && !bad; j++)
                for (long k = 0; k < rc_[j]; k++) {
                    long at = ((long)rd[j] + k) * stride;
                    mark[at] = 1;
                    if (recv[at] != value(c, j, rank, k)) {
                        fail(what, c, n, at);
                        bad = 1;
                        break;
                    }
                }
            for (long at = 0; at < len && !bad; at++)
                if (!mark[at] && recv[at] != POISON) {
                    fail(what, c, -1, at);
                    break;
                }
            for (int j = 0; j < size && !in_place; j++)
                for (long k = 0; k < sc[j]; k++)
                    if (send[sd[j] + k] != value(c, rank, j, k)) {
                        fail("changed the send buffer", c, n, k);
                        break;
                    }
        }
        free(send);
        free(recv);
        free(mark);
    }
    free(sc);
    free(sd);
    free(rc_);
    free(rd);
    MPI_Type_free(&strided);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    tt_check_np("alltoall_c");
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    run(MPI_COMM_WORLD, 0);
    run(dup, 1000);
    MPI_Comm_free(&dup);
    int all_errors = 0;
    MPI_Allreduce(&errors, &all_errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("tc-pmpi-test rank=%d alltoalls=%lld alltoallvs=%lld allreduces=1 errors=%d\n",
           world_rank, alltoalls, alltoallvs, errors);
    fflush(stdout);
    MPI_Finalize();
    return all_errors == 0 ? 0 : 1;
}
