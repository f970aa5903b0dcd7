/*
 * An unmodified MPI program calling MPI_Barrier. Run with
 * LD_PRELOAD=libtopocoll_pmpi.so by run_with_stats.sh, which checks from the
 * TC_STATS=1 output that its barriers reached the library; it prints how many
 * it made for that check.
 *
 * The barriers are checked, not just counted: one counter per rank in a
 * shared window (all ranks on one node, else exit 77). Before barrier k a
 * rank stores k into its counter; after it, every counter must be >= k.
 * Random short delays before entry make late arrivals likely. Also on a
 * duplicate of MPI_COMM_WORLD and on the odd/even halves.
 */
#define _DEFAULT_SOURCE /* usleep */
#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tc_test_common.h"

static _Atomic uint64_t *counter;
static int world_rank;
static long long barriers;
static uint64_t mine;

static void phase(MPI_Comm comm, int iters)
{
    int n;
    MPI_Comm_size(comm, &n);
    MPI_Group g, wg;
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int *idx = malloc(sizeof(int) * (size_t)n), *world = malloc(sizeof(int) * (size_t)n);
    uint64_t *base = malloc(sizeof(uint64_t) * (size_t)n);
    for (int i = 0; i < n; i++)
        idx[i] = i;
    MPI_Group_translate_ranks(g, n, idx, wg, world);
    /* Every member's counter at the start (MPI_Allgather is not intercepted). */
    MPI_Allgather(&mine, 1, MPI_UINT64_T, base, 1, MPI_UINT64_T, comm);
    unsigned seed = 7u + 31u * (unsigned)world_rank;
    for (int k = 1; k <= iters; k++) {
        seed = seed * 1103515245u + 12345u;
        if ((seed >> 16) % 3 == 0)
            usleep((seed >> 20) % 200);
        mine++;
        /* release: pairs with the acquire loads after the barrier */
        atomic_store_explicit(&counter[world_rank], mine, memory_order_release);
        MPI_Barrier(comm);
        barriers++;
        for (int j = 0; j < n; j++)
            CHECK(atomic_load_explicit(&counter[world[j]], memory_order_acquire) >=
                      base[j] + (uint64_t)k,
                  "left barrier %d before rank %d entered it", k, world[j]);
    }
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    free(idx);
    free(world);
    free(base);
}

int main(int argc, char **argv)
{
    int size, node_size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tt_check_np("barrier_c");
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    if (node_size != size) {
        printf("barrier_c: ranks on several nodes: skipped\n");
        MPI_Finalize();
        return 77;
    }
    MPI_Win win;
    void *mem;
    MPI_Win_allocate_shared(world_rank == 0 ? (MPI_Aint)(sizeof(uint64_t) * (size_t)size) : 0,
                            (int)sizeof(uint64_t), MPI_INFO_NULL, node, &mem, &win);
    MPI_Aint qsize;
    int qdisp;
    MPI_Win_shared_query(win, 0, &qsize, &qdisp, &mem);
    counter = mem;
    if (world_rank == 0)
        for (int i = 0; i < size; i++)
            atomic_init(&counter[i], 0);
    MPI_Win_fence(0, win);

    phase(MPI_COMM_WORLD, 200);
    MPI_Comm dup, half;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    phase(dup, 100);
    MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank, &half);
    phase(half, 100);
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
    long all = tt_failures_all();
    printf("tc-pmpi-test rank=%d barriers=%lld errors=%ld\n", world_rank, barriers, tt_failures());
    MPI_Finalize();
    return all ? 1 : 0;
}
