/*
 * An unmodified MPI program: it includes only mpi.h and calls MPI_Bcast. Run
 * with LD_PRELOAD=libtopocoll_pmpi.so by run_with_stats.sh, which checks from
 * TC_STATS=1 output that every one of its MPI_Bcast calls went through the
 * library. It prints the number of MPI_Bcast calls it made for that check
 * (and of MPI_Allreduce calls: the final error tally, intercepted too).
 *
 * Each broadcast carries value(root, index, iteration), which every rank
 * computes on its own, into a buffer the receivers first fill with a poison
 * pattern. Sizes go from one element to more than 1 MiB, every rank is root
 * in turn, on MPI_COMM_WORLD and on a duplicate; a strided vector type and an
 * MPI_BOTTOM + absolute-address type cover the datatype paths.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_test_common.h"

static long long bcast_calls;

static int32_t value_of(int root, long i, int iter)
{
    /* Differs for every (root, i, iter) in range and never equals the poison. */
    return (int32_t)(((uint32_t)root * 2654435761u) ^ ((uint32_t)i * 40503u) ^
                     ((uint32_t)iter << 24)) &
           0x7fffffff;
}

static void check(int ok, const char *what, int root, long n, int iter, long at)
{
    CHECK(ok, "%s root=%d n=%ld iter=%d: wrong at %ld", what, root, n, iter, at);
}

static int bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
    bcast_calls++;
    return MPI_Bcast(buf, count, dt, root, comm);
}

/* Contiguous MPI_INT and MPI_BYTE arrays of n elements. */
static void run_contiguous(MPI_Comm comm, long n, int iter, int32_t *buf)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int root = 0; root < size; root++) {
        for (long i = 0; i < n; i++)
            buf[i] = rank == root ? value_of(root, i, iter) : -1;
        if (bcast(buf, (int)n, MPI_INT, root, comm) != MPI_SUCCESS)
            check(0, "MPI_Bcast(MPI_INT) returned an error", root, n, iter, -1);
        for (long i = 0; i < n; i++)
            if (buf[i] != value_of(root, i, iter)) {
                check(0, "MPI_INT", root, n, iter, i);
                break;
            }

        /* Odd byte count: no multiple of any fragment or element size. */
        unsigned char *bytes = (unsigned char *)buf;
        long nb = n * 4 - 1 > 0 ? n * 4 - 1 : 1;
        for (long i = 0; i < nb; i++)
            bytes[i] = rank == root ? (unsigned char)(value_of(root, i, iter) % 251) : 0xff;
        bcast(bytes, (int)nb, MPI_BYTE, root, comm);
        for (long i = 0; i < nb; i++)
            if (bytes[i] != (unsigned char)(value_of(root, i, iter) % 251)) {
                check(0, "MPI_BYTE", root, nb, iter, i);
                break;
            }
    }
}

/* Every other int of a 2n array: the gaps must stay untouched on receivers. */
static void run_vector(MPI_Comm comm, long n, int iter, int32_t *buf)
{
    int rank, size;
    MPI_Datatype vec;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Type_vector((int)n, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    for (int root = 0; root < size; root++) {
        for (long i = 0; i < 2 * n; i++)
            buf[i] = rank == root && i % 2 == 0 ? value_of(root, i, iter) : -2;
        bcast(buf, 1, vec, root, comm);
        for (long i = 0; i < 2 * n; i++) {
            int32_t want = i % 2 == 0 ? value_of(root, i, iter) : -2;
            if (buf[i] != want) {
                check(0, "vector", root, n, iter, i);
                break;
            }
        }
    }
    MPI_Type_free(&vec);
}

/* MPI_BOTTOM with a type holding the array's absolute address. */
static void run_bottom(MPI_Comm comm, long n, int iter, int32_t *buf)
{
    int rank, size, len = (int)n;
    MPI_Aint addr;
    MPI_Datatype abs;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Get_address(buf, &addr);
    MPI_Type_create_hindexed(1, &len, &addr, MPI_INT, &abs);
    MPI_Type_commit(&abs);
    for (int root = 0; root < size; root++) {
        for (long i = 0; i < n; i++)
            buf[i] = rank == root ? value_of(root, i, iter) : -3;
        bcast(MPI_BOTTOM, 1, abs, root, comm);
        for (long i = 0; i < n; i++)
            if (buf[i] != value_of(root, i, iter)) {
                check(0, "MPI_BOTTOM", root, n, iter, i);
                break;
            }
    }
    MPI_Type_free(&abs);
}

int main(int argc, char **argv)
{
    /* 1 element .. 1.2 MiB of ints; the last is not a power of two either. */
    static const long sizes[] = {1, 3, 1000, 16384, 300007};
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    int rank, size;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tt_check_np("bcast_c");

    int32_t *buf = malloc(2 * (size_t)sizes[nsizes - 1] * sizeof *buf);
    if (buf == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);

    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    for (int iter = 0; iter < 2; iter++) {
        MPI_Comm comm = iter == 0 ? MPI_COMM_WORLD : dup;
        for (int s = 0; s < nsizes; s++)
            run_contiguous(comm, sizes[s], iter, buf);
        run_vector(comm, 1000, iter, buf);
        run_vector(comm, 200003, iter, buf);
        run_bottom(comm, 77, iter, buf);
    }
    /* count 0 is legal and moves nothing. */
    buf[0] = 12345;
    bcast(buf, 0, MPI_INT, size - 1, MPI_COMM_WORLD);
    check(buf[0] == 12345, "count 0 touched the buffer", size - 1, 0, 0, 0);
    MPI_Comm_free(&dup);
    free(buf);

    /* One MPI_Allreduce (the harness's sum of the failures). */
    int allreduces = 1;
    long all_errors = tt_failures_all();
    printf("tc-pmpi-test rank=%d bcasts=%lld allreduces=%d errors=%ld\n", rank, bcast_calls,
           allreduces, tt_failures());
    fflush(stdout);
    MPI_Finalize();
    return all_errors == 0 ? 0 : 1;
}
