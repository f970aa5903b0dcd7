/* A process that fails an allocation in the Alltoall's aggregation through
 * the node leaders (src/hier/hier_alltoall.c) must not leave the others
 * waiting: its failure travels with the call's messages (an empty message
 * where its data would be): it returns MPI_ERR_NO_MEM, every other process
 * MPI_ERR_OTHER (TC_ERR_PEER), through the communicator's handler, without
 * TC_WAIT_TIMEOUT.
 *
 * Two posed nodes of two, interleaved (ranks 0 and 2 on node 0, 1 and 3 on
 * node 1: leaders 0 and 1), TC_HIER_A2A_AGGREGATE=4M so blocks of 2 MiB
 * aggregate. The failing process lowers its address-space limit
 * (RLIMIT_AS) to what it uses plus a few MiB, so that
 *   a member (rank 2) cannot stage its blocks: it passes a non-contiguous
 *     type (a pair of ints in swapped order, the same signature as the
 *     others' MPI_INT), which the library copies into an 8 MiB row;
 *   a leader (rank 1) cannot allocate its buffers (32 MiB for its members'
 *     rows and the exchange): it must take the others' messages without a
 *     buffer (receives the MPI truncates; its communicator's handler stays
 *     MPI_ERRORS_ARE_FATAL for the library's own traffic);
 *   a leader (rank 0) cannot stage its blocks.
 * After each failure a small Alltoall on the same communicator must give
 * the right blocks (nothing left in flight). Expected values are a pure
 * function of (source, destination, index). A hang is ctest's timeout.
 * Exits 77 where the limit cannot be set, and under AddressSanitizer.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tc_test_common.h"
#include "topocoll.h"

#define N       (512 << 10) /* ints per block: 2 MiB */
#define HEAD_MB 6           /* headroom above the current address space */

static int value(int from, int to, int i)
{
    return from * 1000003 + to * 7919 + i;
}

static MPI_Datatype swapped; /* the pair of ints at byte offsets 4 and 0 */

/* The blocks this rank sends, n ints each; @p swap: in the swapped pairs'
 * order. */
static void fill(int *b, int rank, int size, int n, int swap)
{
    for (int j = 0; j < size; j++)
        for (int i = 0; i < n; i++)
            b[(size_t)j * (size_t)n + (size_t)(swap ? i ^ 1 : i)] = value(rank, j, i);
}

static int check(const int *b, int rank, int size, int n)
{
    for (int j = 0; j < size; j++)
        for (int i = 0; i < n; i++)
            if (b[(size_t)j * (size_t)n + (size_t)i] != value(j, rank, i))
                return 0;
    return 1;
}

/* A small Alltoall, every block right. */
static void small_ok(int *sb, int *rb, int rank, int size, const char *after)
{
    const int n = 6;
    fill(sb, rank, size, n, 0);
    memset(rb, 0, (size_t)size * n * sizeof(int));
    int rc = TC_Alltoall(sb, n, MPI_INT, rb, n, MPI_INT, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS && check(rb, rank, size, n), "small Alltoall after %s: rc %d", after,
          rc);
}

/* One failing case: @p failing lowers its limit; @p swap_it: it passes the
 * swapped type (staging), else MPI_INT (a leader's buffers). */
static void failing_case(int *sb, int *rb, int rank, int size, int failing, int swap_it,
                         const char *what)
{
    const int swap = rank == failing && swap_it;
    fill(sb, rank, size, N, swap);
    tt_limit_as_on(rank == failing, HEAD_MB);
    int rc = swap ? TC_Alltoall(sb, N / 2, swapped, rb, N / 2, swapped, MPI_COMM_WORLD)
                  : TC_Alltoall(sb, N, MPI_INT, rb, N, MPI_INT, MPI_COMM_WORLD);
    tt_limit_as_off();
    int cls = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    /* The process that failed: no memory; the others: another process
     * failed (TC_ERR_PEER, MPI_ERR_OTHER). */
    const int want = rank == failing ? MPI_ERR_NO_MEM : MPI_ERR_OTHER;
    CHECK(cls == want, "%s (rank %d failing): rank %d returned %d (class %d), want %s", what,
          failing, rank, rc, cls, rank == failing ? "MPI_ERR_NO_MEM" : "MPI_ERR_OTHER");
    tt_case_done();
    small_ok(sb, rb, rank, size, what);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int size = tt_check_np("test_alltoall_nomem");
    const int rank = tt_rank;
#if defined(__SANITIZE_ADDRESS__)
    /* ASan's allocator aborts on a failed allocation (and its shadow memory
     * does not fit a tight RLIMIT_AS): nothing to test here. */
    if (rank == 0)
        fprintf(stderr, "test_alltoall_nomem: under AddressSanitizer: skipped\n");
    MPI_Finalize();
    return 77;
#endif
    if (tt_limit_as_init() != 0 || size != 4) {
        if (rank == 0)
            fprintf(stderr, "test_alltoall_nomem: needs np 4 and getrlimit\n");
        MPI_Finalize();
        return size != 4 ? 1 : 77;
    }
    int bl[2] = {1, 1};
    MPI_Aint d[2] = {4, 0};
    MPI_Datatype tt[2] = {MPI_INT, MPI_INT};
    MPI_Type_create_struct(2, bl, d, tt, &swapped);
    MPI_Type_commit(&swapped);
    int *sb = tt_xmalloc((size_t)size * N * sizeof(int));
    int *rb = tt_xmalloc((size_t)size * N * sizeof(int));
    /* The context first, with no limit and the default handler (its
     * private communicator keeps MPI_ERRORS_ARE_FATAL); the aggregation
     * must run here, else the cases test nothing. */
    small_ok(sb, rb, rank, size, "nothing");
    fill(sb, rank, size, N, 0);
    int rc = TC_Alltoall(sb, N, MPI_INT, rb, N, MPI_INT, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS && check(rb, rank, size, N), "2 MiB blocks without a limit: rc %d", rc);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    failing_case(sb, rb, rank, size, 2, 1, "a member cannot stage its blocks");
    failing_case(sb, rb, rank, size, 1, 0, "a leader cannot allocate its buffers");
    failing_case(sb, rb, rank, size, 0, 1, "a leader cannot stage its blocks");
    MPI_Type_free(&swapped);
    free(sb);
    free(rb);
    return tt_finish();
}
