/*
 * An unmodified MPI program calling MPI_Allgather and MPI_Allgatherv. Run
 * with LD_PRELOAD=libtopocoll_pmpi.so by run_with_stats.sh, which checks from
 * TC_STATS=1 output that every call went through the library's
 * shared-memory path; it prints how many of each it made for that check.
 *
 * Block j of every case holds value(case, j, i), which every rank computes on
 * its own; receivers start from a poisoned buffer, and gaps between blocks
 * must keep the poison. Cases: MPI_INT blocks of 0 to ~0.3 MiB, MPI_IN_PLACE,
 * a contiguous sender with a strided receiver (int resized to 8 bytes),
 * Allgatherv with uneven counts (zeros included), reversed displacements and
 * gaps; on MPI_COMM_WORLD and on a duplicate.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_test_common.h"

#define POISON (-7)

static long long allgathers, allgathervs;
static int errors, world_rank;

static int32_t value(int c, int j, long i)
{
    return (int32_t)(((uint32_t)c * 2654435761u ^ (uint32_t)j * 40503u ^ (uint32_t)i * 97u) &
                     0x7fffffff);
}

static void fail(const char *what, int c, long n, long at)
{
    if (errors++ < 10)
        fprintf(stderr, "allgather_c: rank %d: %s case %d n=%ld: wrong at %ld\n", world_rank, what,
                c, n, at);
}

/* recv (stride ints apart) holds block j's n values at element displs[j]. */
static void verify(const char *what, int c, const int32_t *recv, long len, int size,
                   const int *counts, const int *displs, int stride)
{
    char *mark = calloc((size_t)len, 1);
    if (!mark)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int j = 0; j < size; j++)
        for (long i = 0; i < counts[j]; i++) {
            long at = ((long)displs[j] + i) * stride;
            mark[at] = 1;
            if (recv[at] != value(c, j, i)) {
                fail(what, c, counts[j], at);
                free(mark);
                return;
            }
        }
    for (long at = 0; at < len; at++)
        if (!mark[at] && recv[at] != POISON) {
            fail(what, c, -1, at);
            break;
        }
    free(mark);
}

static void run(MPI_Comm comm, int c0)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    static const long ns[] = {0, 1, 13, 14, 15, 1024, 5000, 70001};
    const int nns = (int)(sizeof ns / sizeof ns[0]);
    MPI_Datatype strided;
    MPI_Type_create_resized(MPI_INT, 0, 8, &strided);
    MPI_Type_commit(&strided);
    int *counts = malloc((size_t)size * sizeof(int)), *displs = malloc((size_t)size * sizeof(int));
    for (int s = 0; s < nns; s++) {
        const long n = ns[s];
        const long len = 2 * (n + 3) * size + 8;
        int32_t *send = malloc((size_t)(n ? n : 1) * sizeof(int32_t));
        int32_t *recv = malloc((size_t)len * sizeof(int32_t));
        if (!send || !recv || !counts || !displs)
            MPI_Abort(MPI_COMM_WORLD, 1);
        for (int mode = 0; mode < 5; mode++) {
            const int c = c0 + 10 * s + mode;
            /* 0 plain, 1 in place, 2 strided receiver, 3 v reversed with gaps,
             * 4 v in place. */
            const int v = mode >= 3, stride = mode == 2 ? 2 : 1;
            for (int j = 0; j < size; j++) {
                counts[j] = v ? (int)((n * (j + 1)) % (n + 2)) : (int)n;
                if (v && j % 3 == 1)
                    counts[j] = 0;
            }
            for (int j = size - 1, at = 0; j >= 0; j--) {
                displs[j] = v ? at : j * (int)n;
                at += counts[j] + 2;
            }
            for (long i = 0; i < len; i++)
                recv[i] = POISON;
            for (long i = 0; i < counts[rank]; i++)
                send[i] = value(c, rank, i);
            const void *sb = send;
            if (mode == 1 || mode == 4) {
                sb = MPI_IN_PLACE;
                for (long i = 0; i < counts[rank]; i++)
                    recv[displs[rank] + i] = value(c, rank, i);
            }
            int rc;
            if (!v) {
                allgathers++;
                rc = MPI_Allgather(sb, (int)n, MPI_INT, recv, (int)n, mode == 2 ? strided : MPI_INT,
                                   comm);
            } else {
                allgathervs++;
                rc = MPI_Allgatherv(sb, counts[rank], MPI_INT, recv, counts, displs, MPI_INT, comm);
            }
            if (rc != MPI_SUCCESS)
                fail("returned an error", c, n, -1);
            verify(v ? "MPI_Allgatherv" : "MPI_Allgather", c, recv, len, size, counts, displs,
                   stride);
            for (long i = 0; i < counts[rank] && sb == send; i++)
                if (send[i] != value(c, rank, i)) {
                    fail("changed the send buffer", c, n, i);
                    break;
                }
        }
        free(send);
        free(recv);
    }
    free(counts);
    free(displs);
    MPI_Type_free(&strided);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    tt_check_np("allgather_c");
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    run(MPI_COMM_WORLD, 0);
    run(dup, 1000);
    MPI_Comm_free(&dup);
    int all_errors = 0;
    MPI_Allreduce(&errors, &all_errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("tc-pmpi-test rank=%d allgathers=%lld allgathervs=%lld allreduces=1 errors=%d\n",
           world_rank, allgathers, allgathervs, errors);
    fflush(stdout);
    MPI_Finalize();
    return all_errors == 0 ? 0 : 1;
}
