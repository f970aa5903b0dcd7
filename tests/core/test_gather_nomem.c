/* A process that fails an allocation on the way of Gather(v)/Scatter(v) to
 * the MPI's own (as bytes; TC_SHM=0 here) must not leave the others waiting
 * in the collective (src/core/gather.c, scatter.c): a root that cannot stage
 * a v-variant's blocks hands every process the user's form (its decision is
 * broadcast anyway); any other process enters the collective as bytes
 * straight from (into) the user's buffer and reports the failure.
 *
 * The failing process lowers its address-space limit (RLIMIT_AS) to what it
 * uses plus a few MiB, then passes a non-contiguous type (a pair of ints in
 * swapped order: extent = size, so the MPIs' own handle it) over 16 MiB per
 * block, which the library must stage: the staging copy cannot be allocated.
 * Cases (np 3, root 0, the failing process named):
 *   Gather, rank 1 fails (send side): an error at rank 1, blocks 0 and 2
 *     right at the root, success elsewhere;
 *   Scatter, rank 1 fails (receive side): an error at rank 1, success and
 *     the right block at ranks 0 and 2;
 *   Gatherv and Scatterv, the root fails: the user's form, every block
 *     right, success everywhere;
 *   Gather, the root fails: an error at the root, success elsewhere.
 * A hang is ctest's timeout. Exits 77 where the limit cannot be set, and
 * under AddressSanitizer.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tc_test_common.h"
#include "topocoll.h"

#define N       (4 << 20) /* ints per block: 16 MiB */
#define HEAD_MB 6         /* headroom above the current address space */

static int value(int r, int i)
{
    return r * 1000003 + i;
}

/* The swapped pair: logical ints 2e, 2e + 1 at byte offsets 4 and 0. */
static MPI_Datatype swapped;
static int at_swapped(int i)
{
    return i ^ 1;
}

static void fill(int *b, int r, int swap)
{
    for (int i = 0; i < N; i++)
        b[swap ? at_swapped(i) : i] = value(r, i);
}

static int check(const int *b, int r, int swap)
{
    for (int i = 0; i < N; i++)
        if (b[swap ? at_swapped(i) : i] != value(r, i))
            return 0;
    return 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int size = tt_check_np("test_gather_nomem");
    const int rank = tt_rank;
#if defined(__SANITIZE_ADDRESS__)
    /* ASan's allocator aborts on a failed allocation (and its shadow memory
     * does not fit a tight RLIMIT_AS): nothing to test here. */
    if (rank == 0)
        fprintf(stderr, "test_gather_nomem: under AddressSanitizer: skipped\n");
    MPI_Finalize();
    return 77;
#endif
    if (tt_limit_as_init() != 0 || size != 3) {
        if (rank == 0)
            fprintf(stderr, "test_gather_nomem: needs np 3 and getrlimit\n");
        MPI_Finalize();
        return size != 3 ? 1 : 77;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int bl[2] = {1, 1};
    MPI_Aint d[2] = {4, 0};
    MPI_Datatype tt[2] = {MPI_INT, MPI_INT};
    MPI_Type_create_struct(2, bl, d, tt, &swapped);
    MPI_Type_commit(&swapped);
    int *own = tt_xmalloc((size_t)N * sizeof(int));
    int *all = tt_xmalloc((size_t)size * N * sizeof(int));
    int counts[3], displs[3];
    for (int j = 0; j < 3; j++) {
        counts[j] = N / 2;
        displs[j] = j * (N / 2);
    }
    const int root = 0;
    int rc, one = rank;
    /* The context first, with no limit. */
    TC_Gather(&one, 1, MPI_INT, all, 1, MPI_INT, root, MPI_COMM_WORLD);

    /* Gather, rank 1's send side cannot be staged. */
    fill(own, rank, rank == 1);
    memset(all, 0, (size_t)size * N * sizeof(int));
    tt_limit_as_on(rank == 1, HEAD_MB);
    rc = rank == 1 ? TC_Gather(own, N / 2, swapped, all, N, MPI_INT, root, MPI_COMM_WORLD)
                   : TC_Gather(own, N, MPI_INT, all, N, MPI_INT, root, MPI_COMM_WORLD);
    tt_limit_as_off();
    CHECK((rank == 1) == (rc != MPI_SUCCESS), "gather, rank 1 failing: rc %d at rank %d", rc, rank);
    if (rank == root)
        CHECK(check(all, 0, 0) && check(all + 2 * N, 2, 0), "gather: blocks 0 or 2 wrong");
    tt_case_done();

    /* Scatter, rank 1's receive side cannot be staged. */
    if (rank == root)
        for (int j = 0; j < size; j++)
            fill(all + (size_t)j * N, j, 0);
    memset(own, 0, (size_t)N * sizeof(int));
    tt_limit_as_on(rank == 1, HEAD_MB);
    rc = rank == 1 ? TC_Scatter(all, N, MPI_INT, own, N / 2, swapped, root, MPI_COMM_WORLD)
                   : TC_Scatter(all, N, MPI_INT, own, N, MPI_INT, root, MPI_COMM_WORLD);
    tt_limit_as_off();
    CHECK((rank == 1) == (rc != MPI_SUCCESS), "scatter, rank 1 failing: rc %d at rank %d", rc,
          rank);
    if (rank != 1)
        CHECK(check(own, rank, 0), "scatter: rank %d's block wrong", rank);
    tt_case_done();

    /* Gatherv, the root cannot stage its receive side: the user's form. */
    fill(own, rank, 0);
    memset(all, 0, (size_t)size * N * sizeof(int));
    tt_limit_as_on(rank == root, HEAD_MB);
    rc = TC_Gatherv(own, N, MPI_INT, all, counts, displs, swapped, root, MPI_COMM_WORLD);
    tt_limit_as_off();
    CHECK(rc == MPI_SUCCESS, "gatherv, the root failing: rc %d at rank %d", rc, rank);
    if (rank == root)
        for (int j = 0; j < size; j++)
            CHECK(check(all + (size_t)j * N, j, 1), "gatherv: block %d wrong", j);
    tt_case_done();

    /* Scatterv, the root cannot stage its send side: the user's form. */
    if (rank == root)
        for (int j = 0; j < size; j++)
            fill(all + (size_t)j * N, j, 1);
    memset(own, 0, (size_t)N * sizeof(int));
    tt_limit_as_on(rank == root, HEAD_MB);
    rc = TC_Scatterv(all, counts, displs, swapped, own, N, MPI_INT, root, MPI_COMM_WORLD);
    tt_limit_as_off();
    CHECK(rc == MPI_SUCCESS, "scatterv, the root failing: rc %d at rank %d", rc, rank);
    CHECK(check(own, rank, 0), "scatterv: rank %d's block wrong", rank);
    tt_case_done();

    /* Gather, the root cannot stage its receive side: an error there only. */
    fill(own, rank, 0);
    tt_limit_as_on(rank == root, HEAD_MB);
    rc = TC_Gather(own, N, MPI_INT, all, N / 2, swapped, root, MPI_COMM_WORLD);
    tt_limit_as_off();
    CHECK((rank == root) == (rc != MPI_SUCCESS), "gather, the root failing: rc %d at rank %d", rc,
          rank);
    tt_case_done();

    MPI_Type_free(&swapped);
    free(own);
    free(all);
    return tt_finish();
}
