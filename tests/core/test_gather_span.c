/* Gatherv and Scatterv whose root's blocks (and Allgatherv whose every
 * process's blocks) lie further apart than MPI's int
 * byte displacements (recvtype MPI_INT, displacements of 600M elements: 2.4 GB
 * between blocks): a call MPI allows, which the library's byte form cannot
 * express at the root alone. Every process must still take the same path (the
 * root decides and says so), so the call completes with the right data instead
 * of the root failing while the others wait in the MPI's collective.
 *
 * The root's buffer is a MAP_NORESERVE mapping of several GB of which only the
 * pages holding blocks are touched. Each block is one int, checked at its place,
 * with the ints on both sides of it still 0. Run on the library's shared-memory
 * path and on the MPI's own (TC_SHM=0, or several posed nodes).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>

#include "topocoll.h"

#include "tc_test_common.h"

#define SPAN_INTS 600000000L /* elements between two blocks: 2.4 GB */

static int value_of(int rank, int root, int round)
{
    return 1000 * (round + 1) + 10 * root + rank;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int size = tt_check_np("test_gather_span");
    const int rank = tt_rank;
    const size_t bytes = ((size_t)SPAN_INTS * (size_t)(size - 1) + 3) * sizeof(int);
    int *base = NULL;
    int counts[64], displs[64];
    if (size > 64) {
        fprintf(stderr, "test_gather_span: at most 64 processes\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int j = 0; j < size; j++) {
        counts[j] = 1;
        displs[j] = (int)(SPAN_INTS * j) + 1; /* an untouched int before each block */
    }
    for (int root = 0; root<size; root += size> 1 ? size - 1 : 1) {
        if (rank == root) {
            base = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
            if (base == MAP_FAILED) {
                fprintf(stderr, "test_gather_span: mmap of %zu bytes failed\n", bytes);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
        /* Gatherv into the far-apart blocks. */
        int mine = value_of(rank, root, 0);
        TC_Gatherv(&mine, 1, MPI_INT, base, counts, displs, MPI_INT, root, MPI_COMM_WORLD);
        if (rank == root)
            for (int j = 0; j < size; j++) {
                const int *at = base + (size_t)displs[j];
                CHECK(at[0] == value_of(j, root, 0), "gatherv root %d block %d: %d, expected %d",
                      root, j, at[0], value_of(j, root, 0));
                CHECK(at[-1] == 0 && at[1] == 0, "gatherv root %d block %d: a neighbour written",
                      root, j);
            }
        /* Scatterv from them. */
        if (rank == root)
            for (int j = 0; j < size; j++)
                base[displs[j]] = value_of(j, root, 1);
        int got = -1;
        TC_Scatterv(base, counts, displs, MPI_INT, &got, 1, MPI_INT, root, MPI_COMM_WORLD);
        CHECK(got == value_of(rank, root, 1), "scatterv root %d: got %d, expected %d", root, got,
              value_of(rank, root, 1));
        if (rank == root)
            munmap(base, bytes);
        base = NULL;
        tt_case_done();
    }
    /* Allgatherv: every process receives into far-apart blocks (each decides
     * alone how to hand its blocks to the MPI; the others must not notice). */
    int *all = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (all == MAP_FAILED) {
        fprintf(stderr, "test_gather_span: mmap of %zu bytes failed\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int mine = value_of(rank, size, 2);
    TC_Allgatherv(&mine, 1, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD);
    for (int j = 0; j < size; j++) {
        const int *at = all + (size_t)displs[j];
        CHECK(at[0] == value_of(j, size, 2), "allgatherv block %d: %d, expected %d", j, at[0],
              value_of(j, size, 2));
        CHECK(at[-1] == 0 && at[1] == 0, "allgatherv block %d: a neighbour written", j);
    }
    munmap(all, bytes);
    tt_case_done();
    return tt_finish();
}
