/*
 * An unmodified MPI program calling every MPI-4 large-count collective with a
 * count beyond INT_MAX of a zero-size datatype (MPI_Type_contiguous(0,
 * MPI_INT)): nothing moves, so no memory is needed, but the count does not
 * fit the library's int-based entry points. Run with
 * LD_PRELOAD=libtopocoll_pmpi.so by run_with_stats.sh, which checks from
 * TC_STATS=1 output that every one of these calls went to the MPI's own as
 * a large count (large_counts=N: pmpi_large_count adds up to N), including
 * an MPI_Reduce_scatter_c whose recvcounts have only the last element beyond
 * INT_MAX (every element is checked). Each call must return MPI_SUCCESS.
 *
 * The reductions use a large-count user-defined op (MPI_Op_create_c: MPICH
 * rejects predefined ops on a type with no basic element).
 *
 * Where mpi.h has no _c calls (Open MPI 4.1) the program exits 77.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "tc_test_common.h"

#ifdef TOPOCOLL_HAVE_MPI_COUNT_C

/* MPICH defines no predefined op on a type with no basic element, and a
 * classic user op (int *len) cannot take a count beyond INT_MAX (MPICH 4.0.2
 * asserts in reduce_local): a large-count user op (MPI_Op_create_c) that does
 * nothing, as there is nothing to combine. */
static void nop_fn(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    (void)in;
    (void)inout;
    (void)len;
    (void)dt;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int np = tt_check_np("large_count_fallback_c");
    MPI_Datatype empty;
    MPI_Type_contiguous(0, MPI_INT, &empty);
    MPI_Type_commit(&empty);
    MPI_Op nop;
    MPI_Op_create_c(nop_fn, 1, &nop);
    const MPI_Count big = ((MPI_Count)1 << 31) + 5;
    int sbuf[1] = {0}, rbuf[1] = {0}, rc;
    long large = 0;

    for (int root = 0; root < np; root++) {
        rc = MPI_Bcast_c(sbuf, big, empty, root, MPI_COMM_WORLD);
        large++;
        CHECK(rc == MPI_SUCCESS, "MPI_Bcast_c root %d returned %d", root, rc);
        rc = MPI_Reduce_c(sbuf, rbuf, big, empty, nop, root, MPI_COMM_WORLD);
        large++;
        CHECK(rc == MPI_SUCCESS, "MPI_Reduce_c root %d returned %d", root, rc);
    }
    rc = MPI_Allreduce_c(sbuf, rbuf, big, empty, nop, MPI_COMM_WORLD);
    large++;
    CHECK(rc == MPI_SUCCESS, "MPI_Allreduce_c returned %d", rc);
    /* MPICH 4.0.2's own reduce-scatters fail beyond INT_MAX from two
     * processes on ("Negative count" in MPIC_Sendrecv, without the drop-in
     * too): their routing is checked on one process. */
    if (np == 1) {
        rc = MPI_Reduce_scatter_block_c(sbuf, rbuf, big, empty, nop, MPI_COMM_WORLD);
        large++;
        CHECK(rc == MPI_SUCCESS, "MPI_Reduce_scatter_block_c returned %d", rc);
    }
    MPI_Count *counts = tt_xmalloc(sizeof(MPI_Count) * (size_t)np);
    for (int last_only = 0; np == 1 && last_only < 2; last_only++) {
        for (int r = 0; r < np; r++)
            counts[r] = !last_only || r == np - 1 ? big : 1;
        rc = MPI_Reduce_scatter_c(sbuf, rbuf, counts, empty, nop, MPI_COMM_WORLD);
        large++;
        CHECK(rc == MPI_SUCCESS, "MPI_Reduce_scatter_c (%s) returned %d",
              last_only ? "last count large" : "all counts large", rc);
    }
    free(counts);
    rc = MPI_Scan_c(sbuf, rbuf, big, empty, nop, MPI_COMM_WORLD);
    large++;
    CHECK(rc == MPI_SUCCESS, "MPI_Scan_c returned %d", rc);
    rc = MPI_Exscan_c(sbuf, rbuf, big, empty, nop, MPI_COMM_WORLD);
    large++;
    CHECK(rc == MPI_SUCCESS, "MPI_Exscan_c returned %d", rc);
    rc = MPI_Allgather_c(sbuf, big, empty, rbuf, big, empty, MPI_COMM_WORLD);
    large++;
    CHECK(rc == MPI_SUCCESS, "MPI_Allgather_c returned %d", rc);
    rc = MPI_Alltoall_c(sbuf, big, empty, rbuf, big, empty, MPI_COMM_WORLD);
    large++;
    CHECK(rc == MPI_SUCCESS, "MPI_Alltoall_c returned %d", rc);
    MPI_Count *vcounts = tt_xmalloc(sizeof(MPI_Count) * (size_t)np);
    MPI_Aint *displs = tt_xmalloc(sizeof(MPI_Aint) * (size_t)np);
    for (int r = 0; r < np; r++) {
        vcounts[r] = r == np - 1 ? big : 1; /* only the last one too large */
        displs[r] = 0;
    }
    rc = MPI_Allgatherv_c(sbuf, vcounts[tt_rank], empty, rbuf, vcounts, displs, empty,
                          MPI_COMM_WORLD);
    large++;
    CHECK(rc == MPI_SUCCESS, "MPI_Allgatherv_c returned %d", rc);
    free(vcounts);
    free(displs);
    for (int root = 0; root < np; root++) {
        rc = MPI_Gather_c(sbuf, big, empty, rbuf, big, empty, root, MPI_COMM_WORLD);
        large++;
        CHECK(rc == MPI_SUCCESS, "MPI_Gather_c root %d returned %d", root, rc);
        rc = MPI_Scatter_c(sbuf, big, empty, rbuf, big, empty, root, MPI_COMM_WORLD);
        large++;
        CHECK(rc == MPI_SUCCESS, "MPI_Scatter_c root %d returned %d", root, rc);
    }
    MPI_Op_free(&nop);
    MPI_Type_free(&empty);

    const long all_errors = tt_failures_all();
    printf("tc-pmpi-test rank=%d large_counts=%ld errors=%ld\n", tt_rank, large, tt_failures());
    fflush(stdout);
    MPI_Finalize();
    return all_errors == 0 ? 0 : 1;
}

#else /* no MPI_*_c in this MPI */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tt_check_np("large_count_fallback_c");
    if (tt_rank == 0)
        printf("large_count_fallback_c: this MPI declares no MPI_*_c calls: skipped\n");
    MPI_Finalize();
    return 77;
}

#endif
