/* MPICH 4.0.2 (ch4:ucx) misdelivers puts and atomics in windows of 8 bytes
 * per rank, the shape of a done-counter window (measured here: any
 * MPI_Win_allocate size that is 8 modulo 16 shifts remote displacements by 8
 * bytes; the runtime's windows are whole multiples of 64 bytes). Probe: every rank adds
 * 1 to every other rank's counter in such a window ROUNDS times and reports
 * (does not assert) whether each counter got (np-1)*ROUNDS. Regression
 * check (asserted): the runtime's windows are padded, so binomial
 * broadcasts of every root, odd ones included, complete (done counters at
 * odd roots) and deliver, ROUNDS times; a lost increment would hang the
 * flush until TC_WAIT_TIMEOUT aborts. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <topocoll.h>

#include "tc_test_common.h"

#define ROUNDS 30

int main(int argc, char **argv)
{
    int provided, rank, np, failures = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    tt_check_np("test_rma_small_win");
    if (provided != MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "test_rma_small_win: thread level %d, not MPI_THREAD_MULTIPLE\n", provided);
        MPI_Finalize();
        return 1;
    }

    /* Probe of the MPI itself (reported only). */
    uint64_t *cnt, one = 1, got = 0;
    MPI_Win w8;
    MPI_Win_allocate(8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &cnt, &w8);
    *cnt = 0;
    MPI_Win_lock_all(0, w8);
    MPI_Win_sync(w8);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = 0; r < ROUNDS; r++)
        for (int j = 0; j < np; j++)
            if (j != rank) {
                uint64_t old;
                MPI_Fetch_and_op(&one, &old, MPI_UINT64_T, j, 0, MPI_SUM, w8);
                MPI_Win_flush(j, w8);
            }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Fetch_and_op(NULL, &got, MPI_UINT64_T, rank, 0, MPI_NO_OP, w8);
    MPI_Win_flush(rank, w8);
    MPI_Win_unlock_all(w8);
    MPI_Win_free(&w8);
    int bad = got != (uint64_t)(np - 1) * ROUNDS, anybad;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (bad)
        printf("test_rma_small_win: probe: rank %d counter %llu, want %llu (MPI bug in 8-byte "
               "windows)\n",
               rank, (unsigned long long)got, (unsigned long long)(np - 1) * ROUNDS);
    if (rank == 0)
        printf("test_rma_small_win: probe: 8-byte-per-rank window %s\n",
               anybad ? "MISDELIVERS (the MPI's bug; the runtime pads its windows)" : "ok");
    fflush(stdout);

    /* The runtime: every root, ROUNDS times, 8-byte payloads. */
    MPI_Win win;
    uint64_t *mem;
    int wid;
    MPI_Win_allocate(64 * (MPI_Aint)np, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    memset(mem, 0, 64 * (size_t)np);
    TC_Rma_win_register(win, &wid);
    for (int r = 0; r < ROUNDS; r++) {
        for (int root = 0; root < np; root++) {
            uint64_t v = (uint64_t)r * 1000003u + (uint64_t)root * 7919u + 1;
            if (rank == root) {
                TC_Rma_bcast(&v, 1, MPI_UINT64_T, root, wid, TC_RMA_BCAST_BINOMIAL);
                TC_Rma_bcast_flush(wid);
            } else {
                TC_Rma_bcast_recv_wait(wid, root);
                if (mem[root] != v && failures++ < 5)
                    fprintf(stderr,
                            "test_rma_small_win: rank %d round %d root %d: %llu, want %llu\n", rank,
                            r, root, (unsigned long long)mem[root], (unsigned long long)v);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    TC_Rma_win_unregister(wid);
    MPI_Win_free(&win);
    int total;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_rma_small_win: runtime: %d broadcasts per root, %d failures\n", ROUNDS, total);
    MPI_Finalize();
    return total != 0;
}
