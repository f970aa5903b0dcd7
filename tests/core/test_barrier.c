/* TC_Barrier: no process leaves a barrier before every process of the
 * communicator has entered it, on every path the library may take (one
 * segment, the hierarchy on posed machines, PMPI), with every algorithm the
 * environment forces; bad arguments; barriers mixed with other collectives.
 *
 * The check (independent of any MPI barrier): one counter per world rank in
 * a shared window (MPI_Win_allocate_shared over the node; the test needs all
 * ranks on one node, else it exits 77). Before entering barrier k of a phase,
 * a rank stores base + k into its counter (release); after leaving it, it
 * reads every member's counter (acquire) and requires >= that member's
 * base + k. A process leaving early would see some member's counter still
 * below. Random delays before entry (seeded per rank) make late arrivals
 * likely; a long run without delays catches reuse races between consecutive
 * barriers. Across the emulated nodes of topocoll-vcluster (all on one
 * machine, TC_VCLUSTER_DIR set) the counters live in a file there that every
 * rank maps instead (tb_counters_file).
 *
 *   test_barrier [--iters N] [--quick] [--parts world,comms,mixed,errors]
 */
#define _DEFAULT_SOURCE /* usleep */
#include <fcntl.h>
#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tc_test_common.h"
#include "topocoll.h"

static _Atomic uint64_t *tb_counter; /* [world size], in the shared window */
static unsigned tb_seed;

static unsigned tb_rand(void)
{
    tb_seed = tb_seed * 1103515245u + 12345u;
    return (tb_seed >> 16) & 0x7fffu;
}

/* One phase on @p comm: @p iters barriers, with a random delay before a
 * third of them when @p delays. */
static void tb_phase(MPI_Comm comm, const char *what, long iters, int delays)
{
    int n, me;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &me);
    MPI_Group g, wg;
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int *local = tt_xmalloc(sizeof(int) * (size_t)n);
    int *world = tt_xmalloc(sizeof(int) * (size_t)n);
    uint64_t *base = tt_xmalloc(sizeof(uint64_t) * (size_t)n);
    for (int i = 0; i < n; i++)
        local[i] = i;
    MPI_Group_translate_ranks(g, n, local, wg, world);
    /* Everyone's counter is stable here: the phase starts after this
     * (PMPI-independent) agreement on the bases. */
    uint64_t mine = atomic_load_explicit(&tb_counter[tt_rank], memory_order_relaxed);
    MPI_Allgather(&mine, 1, MPI_UINT64_T, base, 1, MPI_UINT64_T, comm);
    long bad = 0;
    for (long k = 1; k <= iters; k++) {
        if (delays && tb_rand() % 3 == 0)
            usleep(tb_rand() % 300);
        /* release: pairs with the acquire loads of the other members below */
        atomic_store_explicit(&tb_counter[tt_rank], base[me] + (uint64_t)k, memory_order_release);
        int rc = TC_Barrier(comm);
        if (rc != MPI_SUCCESS) {
            tt_fail("%s: TC_Barrier returned %d at iteration %ld", what, rc, k);
            break;
        }
        for (int j = 0; j < n; j++) {
            uint64_t c = atomic_load_explicit(&tb_counter[world[j]], memory_order_acquire);
            if (c < base[j] + (uint64_t)k && bad++ < 3)
                tt_fail("%s: left barrier %ld while rank %d (world %d) had only entered %lld", what,
                        k, j, world[j], (long long)(c - base[j]));
        }
    }
    tt_case_done();
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    free(local);
    free(world);
    free(base);
}

/* Barriers between other collectives on the same communicator: neither may
 * take the other's messages or flags. */
static void tb_mixed(MPI_Comm comm, long iters)
{
    int n, me;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &me);
    for (long k = 0; k < iters; k++) {
        int v[3] = {me + 1, (int)k, me * (int)k}, sum[3];
        int expect[3] = {n * (n + 1) / 2, n * (int)k, (int)k * n * (n - 1) / 2};
        if (TC_Allreduce(v, sum, 3, MPI_INT, MPI_SUM, comm) != MPI_SUCCESS ||
            memcmp(sum, expect, sizeof sum) != 0)
            tt_fail("mixed: allreduce %ld wrong (%d %d %d)", k, sum[0], sum[1], sum[2]);
        TC_Barrier(comm);
        int root = (int)(k % n), b = me == root ? (int)(k * 7 + 1) : -1;
        TC_Bcast(&b, 1, MPI_INT, root, comm);
        if (b != (int)(k * 7 + 1))
            tt_fail("mixed: bcast %ld from %d gave %d", k, root, b);
        TC_Barrier(comm);
    }
    tt_case_done();
}

static void tb_errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = TC_Barrier(MPI_COMM_NULL), cls = -1;
    MPI_Error_class(rc, &cls);
    if (cls != MPI_ERR_COMM)
        tt_fail("TC_Barrier(MPI_COMM_NULL): class %d, expected MPI_ERR_COMM", cls);
    /* An intercommunicator goes to PMPI_Barrier: it must work. */
    if (tt_size >= 2) {
        MPI_Comm half, inter;
        int color = tt_rank % 2;
        MPI_Comm_split(MPI_COMM_WORLD, color, tt_rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - color, 7, &inter);
        if ((rc = TC_Barrier(inter)) != MPI_SUCCESS)
            tt_fail("TC_Barrier(intercomm) returned %d", rc);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    tt_case_done();
}

/* The counters in a file of the emulated cluster's directory, mapped by
 * every rank: topocoll-vcluster's nodes are namespaces on one machine, so
 * they share its memory even where the MPI sees separate nodes. Rank 0
 * creates it zeroed before the MPI's own barrier, the others open it after. */
static _Atomic uint64_t *tb_counters_file(const char *dir, size_t bytes)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/test_barrier.counters", dir);
    int fd = -1;
    if (tt_rank == 0 && ((fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600)) < 0 ||
                         ftruncate(fd, (off_t)bytes) != 0)) {
        perror(path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (tt_rank != 0 && (fd = open(path, O_RDWR)) < 0) {
        perror(path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (mem == MAP_FAILED) {
        perror("mmap");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    close(fd);
    return mem;
}

int main(int argc, char **argv)
{
    size_t f, s;
    tt_init(&argc, &argv, "test_barrier", 0, 0, &f, &s);
    long iters = tt_arg_long(argc, argv, "--iters", 300);
    long many = tt_arg_long(argc, argv, "--many", tt_size <= 4 ? 2000 : 500);
    const char *parts = tt_arg(argc, argv, "--parts", "world,comms,mixed,errors");
    tb_seed = 12345u + 977u * (unsigned)tt_rank;

    MPI_Comm node;
    int node_size;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    int all_on_node = node_size == tt_size, everywhere;
    MPI_Allreduce(&all_on_node, &everywhere, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    const char *vdir = getenv("TC_VCLUSTER_DIR");
    if (!everywhere && (vdir == NULL || vdir[0] == '\0')) {
        if (tt_rank == 0)
            printf("test_barrier: the ranks span several nodes: skipped (needs one node)\n");
        MPI_Finalize();
        return 77;
    }
    MPI_Win win = MPI_WIN_NULL;
    if (!everywhere) {
        tb_counter = tb_counters_file(vdir, sizeof(uint64_t) * (size_t)tt_size);
    } else {
        MPI_Aint bytes = tt_rank == 0 ? (MPI_Aint)(sizeof(uint64_t) * (size_t)tt_size) : 0;
        void *mem;
        MPI_Win_allocate_shared(bytes, (int)sizeof(uint64_t), MPI_INFO_NULL, node, &mem, &win);
        MPI_Aint qsize;
        int qdisp;
        MPI_Win_shared_query(win, 0, &qsize, &qdisp, &mem);
        tb_counter = mem;
        if (tt_rank == 0)
            for (int i = 0; i < tt_size; i++)
                atomic_init(&tb_counter[i], 0);
        MPI_Win_fence(0, win); /* the zeroed counters are visible before any phase */
    }

    if (strstr(parts, "world")) {
        tb_phase(MPI_COMM_WORLD, "world, delays", iters, 1);
        tb_phase(MPI_COMM_WORLD, "world, back to back", many, 0);
    }
    if (strstr(parts, "comms")) {
        MPI_Comm dup, rev, half;
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        tb_phase(dup, "dup'd", iters, 1);
        MPI_Comm_split(MPI_COMM_WORLD, 0, tt_size - tt_rank, &rev);
        tb_phase(rev, "reversed ranks", iters, 1);
        /* Two halves at once (odd and even world ranks), each its own barriers. */
        MPI_Comm_split(MPI_COMM_WORLD, tt_rank % 2, tt_rank, &half);
        tb_phase(half, "odd/even half", iters, 1);
        MPI_Comm_free(&half);
        MPI_Comm_free(&rev);
        MPI_Comm_free(&dup);
    }
    if (strstr(parts, "mixed"))
        tb_mixed(MPI_COMM_WORLD, iters / 3 + 1);
    if (strstr(parts, "errors"))
        tb_errors();
    MPI_Barrier(MPI_COMM_WORLD);
    if (win != MPI_WIN_NULL)
        MPI_Win_free(&win);
    else
        munmap((void *)tb_counter, sizeof(uint64_t) * (size_t)tt_size);
    MPI_Comm_free(&node);
    return tt_finish();
}
