/*
 * An unmodified MPI program calling MPI_Allgather, MPI_Allgatherv,
 * MPI_Gather, MPI_Gatherv, MPI_Scatter and MPI_Scatterv. Run
 * with LD_PRELOAD=libtopocoll_pmpi.so by run_with_stats.sh, which checks from
 * TC_STATS=1 output that every call went through the library's
 * shared-memory path; it prints how many of each it made for that check.
 *
 * Block j of every case holds value(case, j, i), which every rank computes on
 * its own; receivers start from a poisoned buffer, and gaps between blocks
 * must keep the poison. Cases: MPI_INT blocks of 0 to ~0.3 MiB, MPI_IN_PLACE,
 * a contiguous sender with a strided receiver (int resized to 8 bytes),
 * Allgatherv with uneven counts (zeros included), reversed displacements and
 * gaps; on MPI_COMM_WORLD and on a duplicate. Gather(v) and Scatter(v): every
 * root, with and without MPI_IN_PLACE at the root.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_test_common.h"

#define POISON (-7)

static long long allgathers, allgathervs, gathers, gathervs, scatters, scattervs;
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

/* Gather(v) and Scatter(v) of n ints per process (v: uneven, reversed, with
 * gaps) at every root. */
static void run_rooted(MPI_Comm comm, int c0)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    static const long ns[] = {0, 1, 14, 15, 5000};
    const int nns = (int)(sizeof ns / sizeof ns[0]);
    int *counts = malloc((size_t)size * sizeof(int)), *displs = malloc((size_t)size * sizeof(int));
    for (int s = 0; s < nns; s++)
        for (int root = 0; root < size; root++)
            for (int mode = 0; mode < 8; mode++) {
                /* mode: bit 0 in place, bit 1 v, bit 2 scatter. */
                const long n = ns[s];
                const int c = c0 + 100 * s + 10 * root + mode;
                const int in_place = mode & 1, v = (mode >> 1) & 1, scatter = mode >> 2;
                const long len = (n + 3) * size + 8;
                int32_t *many = malloc((size_t)len * sizeof(int32_t));
                int32_t *own = malloc((size_t)(n + 1) * sizeof(int32_t));
                if (!many || !own || !counts || !displs)
                    MPI_Abort(MPI_COMM_WORLD, 1);
                for (int j = 0; j < size; j++)
                    counts[j] = v ? (j % 3 == 1 ? 0 : (int)((n * (j + 1)) % (n + 2))) : (int)n;
                for (int j = size - 1, at = 0; j >= 0; j--) {
                    displs[j] = v ? at : j * (int)n;
                    at += counts[j] + 2;
                }
                for (long i = 0; i < len; i++)
                    many[i] = POISON;
                for (long i = 0; i <= n; i++)
                    own[i] = POISON;
                const int me = counts[rank];
                const int place = in_place && rank == root;
                if (!scatter) {
                    for (long i = 0; i < me; i++)
                        (place ? many + displs[rank] : own)[i] = value(c, rank, i);
                } else if (rank == root) {
                    for (int j = 0; j < size; j++)
                        for (long i = 0; i < counts[j]; i++)
                            many[displs[j] + i] = value(c, j, i);
                }
                int rc;
                if (!scatter && !v) {
                    gathers++;
                    rc = MPI_Gather(place ? MPI_IN_PLACE : own, me, MPI_INT, many, me, MPI_INT,
                                    root, comm);
                } else if (!scatter) {
                    gathervs++;
                    rc = MPI_Gatherv(place ? MPI_IN_PLACE : own, me, MPI_INT, many, counts, displs,
                                     MPI_INT, root, comm);
                } else if (!v) {
                    scatters++;
                    rc = MPI_Scatter(many, me, MPI_INT, place ? MPI_IN_PLACE : own, me, MPI_INT,
                                     root, comm);
                } else {
                    scattervs++;
                    rc = MPI_Scatterv(many, counts, displs, MPI_INT, place ? MPI_IN_PLACE : own, me,
                                      MPI_INT, root, comm);
                }
                const char *what = scatter ? (v ? "MPI_Scatterv" : "MPI_Scatter")
                                           : (v ? "MPI_Gatherv" : "MPI_Gather");
                if (rc != MPI_SUCCESS)
                    fail(what, c, n, -1);
                if (rank == root)
                    verify(what, c, many, len, size, counts, displs, 1);
                if (scatter && !place) {
                    for (long i = 0; i <= n; i++)
                        if (own[i] != (i < me ? value(c, rank, i) : POISON)) {
                            fail(what, c, n, i);
                            break;
                        }
                }
                if (!scatter && rank != root)
                    for (long i = 0; i < len; i++)
                        if (many[i] != POISON) {
                            fail("a non-root's receive buffer was written", c, n, i);
                            break;
                        }
                free(many);
                free(own);
            }
    free(counts);
    free(displs);
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
    run_rooted(MPI_COMM_WORLD, 2000);
    run_rooted(dup, 5000);
    MPI_Comm_free(&dup);
    int all_errors = 0;
    MPI_Allreduce(&errors, &all_errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("tc-pmpi-test rank=%d allgathers=%lld allgathervs=%lld gathers=%lld gathervs=%lld "
           "scatters=%lld scattervs=%lld allreduces=1 errors=%d\n",
           world_rank, allgathers, allgathervs, gathers, gathervs, scatters, scattervs, errors);
    fflush(stdout);
    MPI_Finalize();
    return all_errors == 0 ? 0 : 1;
}
