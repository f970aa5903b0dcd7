/* NUMA placement of the segment (paper 000, stage 1): every rank's control
 * block and queue must be on the rank's own NUMA node, as move_pages reports.
 * Each rank first moves itself to node (rank % nodes), so ranks are spread
 * over the nodes whatever the launcher did. With TC_SHM_PLACEMENT=none the
 * check is inverted: ranks off the creator's node must see misplaced pages
 * (proves the check can fail). Needs two NUMA nodes: exits 77 (skipped) on
 * one; run it for real in a two-node guest:
 *   ../shared/tools/numa-guest.sh 'cd build && ctest -R numa_placement'
 */
#include <numa.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ctx.h"

#include "tc_test_common.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tt_check_np("test_placement");
    int nodes = numa_available() < 0 ? 1 : numa_num_configured_nodes();
    if (nodes < 2) {
        if (rank == 0)
            printf("test_placement: %d NUMA node(s): skipped\n", nodes);
        MPI_Finalize();
        return 77;
    }
    int node = rank % nodes;
    if (numa_run_on_node(node) != 0) {
        perror("numa_run_on_node");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const char *placement = getenv("TC_SHM_PLACEMENT");
    int expect_local = !(placement && !strcmp(placement, "none"));
    tc_ctx_t *ctx;
    if (tc_ctx_get(MPI_COMM_WORLD, &ctx) != MPI_SUCCESS || !ctx->shm) {
        fprintf(stderr, "rank %d: no shared-memory context\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const tc_shm_comm_t *s = ctx->shm;
    int bad = 0;
    if (s->numa_node != node || s->pages_checked <= 0) {
        fprintf(stderr, "rank %d: node %d (want %d), %ld pages checked\n", rank, s->numa_node, node,
                s->pages_checked);
        bad = 1;
    } else if (expect_local && s->pages_local != s->pages_checked) {
        fprintf(stderr, "rank %d: %ld of %ld pages on node %d\n", rank, s->pages_local,
                s->pages_checked, node);
        bad = 1;
    } else if (!expect_local && node != 0 && s->pages_local != 0) {
        /* The creator (rank 0, node 0) allocated everything. */
        fprintf(stderr, "rank %d: placement=none but %ld pages on node %d\n", rank, s->pages_local,
                node);
        bad = 1;
    }
    printf("rank %d node %d: %ld of %ld pages local (%s)\n", rank, node, s->pages_local,
           s->pages_checked, bad ? "FAIL" : "ok");
    int anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return anybad;
}
