/*
 * topocoll-bench: TC_* collectives against the MPI's own, OSU-style output.
 *
 * For every message size the two implementations run in alternating blocks
 * (TC, MPI, MPI, TC, TC, MPI, ...: the pair's order flips every block, so
 * neither always follows the other; with --raw a third block of the raw copy
 * pipeline between ranks 0 and 1 follows each pair), so slow drifts of the
 * machine (frequency, other load) hit both alike. Each block starts after a
 * PMPI_Barrier and times ITER back-to-back calls; a block's time is the
 * largest over ranks of the per-rank mean time per call (IMB's t_max). The
 * reported value is the median over blocks, with the minimum over blocks in
 * the *_min columns.
 *
 * Beside busy processes (--contend, or a shared machine) a block must last
 * many scheduler time slices: a block shorter than one either lost a slice
 * (several ms) or did not, and the median over blocks then tells which of
 * the two happened more often, not what a call costs. --block-time grows
 * ITER (the same on every rank) until the faster implementation's block
 * lasts that long; it defaults to 50 ms with --contend, off without.
 *
 * Operations: bcast (MPI_BYTE), reduce (root -r, default 0) and allreduce on
 * --type float|double|int with --op sum|max; a size is bytes, the count is
 * size / type size (sizes below one element are skipped); barrier (one row,
 * size 0); rma_bcast (TC_Rma_bcast + flush against MPI_Bcast, --rma-alg);
 * allgather, allgatherv, gather and scatter (MPI_BYTE; a size is one
 * process's block; allgatherv with every count equal; root -r); alltoall and
 * alltoallv (MPI_BYTE; a size is one block, to one process; alltoallv with
 * every count equal).
 *
 * The MPI side always calls PMPI_* (and so does every barrier and reduction of
 * the harness): that is the MPI's own MPI_Bcast / MPI_Reduce / MPI_Allreduce
 * (MPI_x and PMPI_x are one function when no tool is preloaded), and the
 * baseline stays the MPI's own even when the program runs under
 * LD_PRELOAD=libtopocoll_pmpi.so.
 *
 * Only the public header: this is what an application sees.
 */
#include "bench_util.h"
#include "contend.h"
#include "raw_pipeline.h"

#include <mpi.h>
#include <topocoll.h>

#include <ctype.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_SIZES 64
/* --off-cache cycles through at least this many bytes of buffers per rank: more
 * than the last-level caches of current servers, so every call starts cold. */
#define OFF_CACHE_BYTES ((size_t)64 << 20)
#define BUF_ALIGN       4096
#define MAX_ERR_REPORTS 5

enum { IMPL_TC, IMPL_MPI, IMPL_RAW, IMPL_LAST };
static const char *const impl_names[IMPL_LAST] = {"tc", "mpi", "raw"};

/* Element types and reduction ops of --type / --op. */
enum { BT_FLOAT, BT_DOUBLE, BT_INT, BT_LAST };
static const char *const btype_names[BT_LAST] = {"float", "double", "int"};
enum { BO_SUM, BO_MAX, BO_LAST };
static const char *const bop_names[BO_LAST] = {"sum", "max"};

/* One collective call's arguments. Ops without a root ignore it; ops with two
 * buffers (reduce, allreduce) get distinct sbuf and rbuf, bcast uses rbuf. */
typedef struct bench_args {
    void *sbuf;
    void *rbuf;
    int count; /* elements of dt: bytes for bcast (MPI_BYTE) */
    MPI_Datatype dt;
    MPI_Op op;
    int btype, bop; /* reduce, allreduce: which of the enums above */
    int root;
    MPI_Comm comm;
} bench_args_t;

/* The table of operations. To add one: its TC_ and PMPI_ calls, how the
 * buffers are prepared before a call and checked after it under --check. */
typedef struct bench_op {
    const char *name;  /* for -o */
    const char *mname; /* MPI spelling, for the plot: "Bcast" */
    int has_root;
    int reduces; /* sbuf and rbuf distinct; --type and --op apply */
    int coll;    /* TC_COLL_* for --model (TC_Comm_predict); 0: the model has none */
    int (*call_tc)(const bench_args_t *a);
    int (*call_mpi)(const bench_args_t *a);
    /* --check: fill this rank's buffers for a call with pattern `seed` */
    void (*check_prepare)(const bench_args_t *a, int rank, uint32_t seed);
    /* --check: number of wrong bytes after the call; first one in *bad_at */
    size_t (*check_verify)(const bench_args_t *a, int rank, uint32_t seed, size_t *bad_at);
} bench_op_t;

/* ---- pattern for --check ---------------------------------------------------------- */

static inline uint8_t pattern_byte(uint32_t seed, size_t j)
{
    return (uint8_t)((seed + (uint32_t)j * 2654435761u) >> 24);
}

static void pattern_fill(uint8_t *p, size_t n, uint32_t seed)
{
    for (size_t j = 0; j < n; j++)
        p[j] = pattern_byte(seed, j);
}

/* Receivers start from the complement of what they expect, so a call that
 * moves nothing cannot pass. */
static void pattern_poison(uint8_t *p, size_t n, uint32_t seed)
{
    for (size_t j = 0; j < n; j++)
        p[j] = (uint8_t)~pattern_byte(seed, j);
}

static size_t pattern_check(const uint8_t *p, size_t n, uint32_t seed, size_t *bad_at)
{
    size_t bad = 0;
    for (size_t j = 0; j < n; j++) {
        if (p[j] != pattern_byte(seed, j)) {
            if (bad++ == 0)
                *bad_at = j;
        }
    }
    return bad;
}

/* ---- bcast ------------------------------------------------------------------------- */

static int bcast_tc(const bench_args_t *a)
{
    return TC_Bcast(a->rbuf, a->count, MPI_BYTE, a->root, a->comm);
}

static int bcast_mpi(const bench_args_t *a)
{
    return PMPI_Bcast(a->rbuf, a->count, MPI_BYTE, a->root, a->comm);
}

static void bcast_prepare(const bench_args_t *a, int rank, uint32_t seed)
{
    if (rank == a->root)
        pattern_fill(a->rbuf, (size_t)a->count, seed);
    else
        pattern_poison(a->rbuf, (size_t)a->count, seed);
}

static size_t bcast_verify(const bench_args_t *a, int rank, uint32_t seed, size_t *bad_at)
{
    (void)rank;
    return pattern_check(a->rbuf, (size_t)a->count, seed, bad_at);
}

/* ---- reduce, allreduce ------------------------------------------------------------ */

/* --check input of `rank`, element i, call pattern `seed`: integers in
 * [-1000, 1000], so sums over any number of ranks that fit are exact in float
 * and double whatever order the implementation adds them in, and an exact
 * comparison with the locally computed result is fair. */
static inline int red_input(uint32_t seed, int rank, size_t i)
{
    uint32_t m = seed ^ ((uint32_t)rank * 2654435761u) ^ ((uint32_t)i * 40503u);
    m ^= m >> 15;
    m *= 0x2c1b3c6du;
    m ^= m >> 12;
    return (int)(m % 2001u) - 1000;
}

static void red_fill(void *buf, int btype, size_t n, uint32_t seed, int rank)
{
    for (size_t i = 0; i < n; i++) {
        int v = red_input(seed, rank, i);
        if (btype == BT_FLOAT)
            ((float *)buf)[i] = (float)v;
        else if (btype == BT_DOUBLE)
            ((double *)buf)[i] = (double)v;
        else
            ((int *)buf)[i] = v;
    }
}

/* Receivers start from a value no result can be: NaN, or INT_MIN (sums of
 * np values in [-1000, 1000] are far from it). */
static void red_poison(void *buf, int btype, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (btype == BT_FLOAT)
            ((float *)buf)[i] = NAN;
        else if (btype == BT_DOUBLE)
            ((double *)buf)[i] = NAN;
        else
            ((int *)buf)[i] = INT_MIN;
    }
}

static int bench_np; /* MPI_COMM_WORLD's size, for the expected results */

/* Compares buf with the reduction of ranks 0..nranks-1 (nranks 1 and `rank`:
 * the send buffer must still hold this rank's input). */
static size_t red_check(const void *buf, int btype, int bop, size_t n, uint32_t seed, int rank,
                        int nranks, size_t *bad_at)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        long long want = red_input(seed, nranks == 1 ? rank : 0, i);
        for (int r = 1; r < nranks; r++) {
            int v = red_input(seed, r, i);
            want = bop == BO_SUM ? want + v : (v > want ? v : want);
        }
        int ok;
        if (btype == BT_FLOAT)
            ok = ((const float *)buf)[i] == (float)want;
        else if (btype == BT_DOUBLE)
            ok = ((const double *)buf)[i] == (double)want;
        else
            ok = ((const int *)buf)[i] == (int)want;
        if (!ok && bad++ == 0)
            *bad_at = i;
    }
    return bad;
}

static int reduce_tc(const bench_args_t *a)
{
    return TC_Reduce(a->sbuf, a->rbuf, a->count, a->dt, a->op, a->root, a->comm);
}

static int reduce_mpi(const bench_args_t *a)
{
    return PMPI_Reduce(a->sbuf, a->rbuf, a->count, a->dt, a->op, a->root, a->comm);
}

static int allreduce_tc(const bench_args_t *a)
{
    return TC_Allreduce(a->sbuf, a->rbuf, a->count, a->dt, a->op, a->comm);
}

static int allreduce_mpi(const bench_args_t *a)
{
    return PMPI_Allreduce(a->sbuf, a->rbuf, a->count, a->dt, a->op, a->comm);
}

static void red_prepare(const bench_args_t *a, int rank, uint32_t seed)
{
    red_fill(a->sbuf, a->btype, (size_t)a->count, seed, rank);
    red_poison(a->rbuf, a->btype, (size_t)a->count);
}

/* Every rank: its send buffer unchanged. Reduce: the root's result; allreduce:
 * every rank's. Results count as one wrong element per element; the offset
 * reported is an element index. */
static size_t red_verify(const bench_args_t *a, int rank, uint32_t seed, size_t *bad_at, int all)
{
    size_t n = (size_t)a->count, bad;
    bad = red_check(a->sbuf, a->btype, a->bop, n, seed, rank, 1, bad_at);
    if (bad == 0 && (all || rank == a->root))
        bad = red_check(a->rbuf, a->btype, a->bop, n, seed, rank, bench_np, bad_at);
    return bad;
}

static size_t reduce_verify(const bench_args_t *a, int rank, uint32_t seed, size_t *bad_at)
{
    return red_verify(a, rank, seed, bad_at, 0);
}

static size_t allreduce_verify(const bench_args_t *a, int rank, uint32_t seed, size_t *bad_at)
{
    return red_verify(a, rank, seed, bad_at, 1);
}

/* ---- reduce_scatter_block ---------------------------------------------------------- */

/* count elements per block: sbuf holds bench_np blocks, rbuf one. */
static int rsb_tc(const bench_args_t *a)
{
    return TC_Reduce_scatter_block(a->sbuf, a->rbuf, a->count, a->dt, a->op, a->comm);
}

static int rsb_mpi(const bench_args_t *a)
{
    return PMPI_Reduce_scatter_block(a->sbuf, a->rbuf, a->count, a->dt, a->op, a->comm);
}

static void rsb_prepare(const bench_args_t *a, int rank, uint32_t seed)
{
    red_fill(a->sbuf, a->btype, (size_t)a->count * (size_t)bench_np, seed, rank);
    red_poison(a->rbuf, a->btype, (size_t)a->count);
}

/* Every rank: its send buffer unchanged, and its block of the reduction:
 * element i is element rank * count + i of red_check's reduction. */
static size_t rsb_verify(const bench_args_t *a, int rank, uint32_t seed, size_t *bad_at)
{
    const size_t n = (size_t)a->count, g0 = (size_t)rank * n;
    size_t bad = red_check(a->sbuf, a->btype, a->bop, n * (size_t)bench_np, seed, rank, 1, bad_at);
    for (size_t i = 0; bad == 0 && i < n; i++) {
        long long want = red_input(seed, 0, g0 + i);
        for (int r = 1; r < bench_np; r++) {
            int v = red_input(seed, r, g0 + i);
            want = a->bop == BO_SUM ? want + v : (v > want ? v : want);
        }
        int ok;
        if (a->btype == BT_FLOAT)
            ok = ((const float *)a->rbuf)[i] == (float)want;
        else if (a->btype == BT_DOUBLE)
            ok = ((const double *)a->rbuf)[i] == (double)want;
        else
            ok = ((const int *)a->rbuf)[i] == (int)want;
        if (!ok) {
            bad = n - i;
            *bad_at = i;
        }
    }
    return bad;
}

/* ---- scan ------------------------------------------------------------------------- */

static int scan_tc(const bench_args_t *a)
{
    return TC_Scan(a->sbuf, a->rbuf, a->count, a->dt, a->op, a->comm);
}

static int scan_mpi(const bench_args_t *a)
{
    return PMPI_Scan(a->sbuf, a->rbuf, a->count, a->dt, a->op, a->comm);
}

/* Every rank: its send buffer unchanged, and the reduction over ranks
 * 0 .. rank. */
static size_t scan_verify(const bench_args_t *a, int rank, uint32_t seed, size_t *bad_at)
{
    size_t n = (size_t)a->count;
    size_t bad = red_check(a->sbuf, a->btype, a->bop, n, seed, rank, 1, bad_at);
    if (bad == 0)
        bad = red_check(a->rbuf, a->btype, a->bop, n, seed, 0, rank + 1, bad_at);
    return bad;
}

static int exscan_tc(const bench_args_t *a)
{
    return TC_Exscan(a->sbuf, a->rbuf, a->count, a->dt, a->op, a->comm);
}

static int exscan_mpi(const bench_args_t *a)
{
    return PMPI_Exscan(a->sbuf, a->rbuf, a->count, a->dt, a->op, a->comm);
}

/* Every rank: its send buffer unchanged; ranks > 0: the reduction over
 * ranks 0 .. rank-1 (rank 0 receives nothing). */
static size_t exscan_verify(const bench_args_t *a, int rank, uint32_t seed, size_t *bad_at)
{
    size_t n = (size_t)a->count;
    size_t bad = red_check(a->sbuf, a->btype, a->bop, n, seed, rank, 1, bad_at);
    if (bad == 0 && rank > 0)
        bad = red_check(a->rbuf, a->btype, a->bop, n, seed, 0, rank, bad_at);
    return bad;
}

/* ---- allgather, allgatherv ------------------------------------------------------------ */

/* A size is one process's block (MPI_BYTE); the v-variant with every count
 * equal, so the two columns compare the same bytes. */
static int allgather_tc(const bench_args_t *a)
{
    return TC_Allgather(a->sbuf, a->count, MPI_BYTE, a->rbuf, a->count, MPI_BYTE, a->comm);
}
static int allgather_mpi(const bench_args_t *a)
{
    return PMPI_Allgather(a->sbuf, a->count, MPI_BYTE, a->rbuf, a->count, MPI_BYTE, a->comm);
}

/* Equal counts, displacements j * count (filled once per size). */
static int *bench_counts, *bench_displs, bench_counts_for = -1;
static void allgatherv_args(const bench_args_t *a)
{
    if (bench_counts_for == a->count)
        return;
    for (int j = 0; j < bench_np; j++) {
        bench_counts[j] = a->count;
        bench_displs[j] = j * a->count;
    }
    bench_counts_for = a->count;
}
static int allgatherv_tc(const bench_args_t *a)
{
    allgatherv_args(a);
    return TC_Allgatherv(a->sbuf, a->count, MPI_BYTE, a->rbuf, bench_counts, bench_displs, MPI_BYTE,
                         a->comm);
}
static int allgatherv_mpi(const bench_args_t *a)
{
    allgatherv_args(a);
    return PMPI_Allgatherv(a->sbuf, a->count, MPI_BYTE, a->rbuf, bench_counts, bench_displs,
                           MPI_BYTE, a->comm);
}
static void allgather_prepare(const bench_args_t *a, int rank, uint32_t seed)
{
    pattern_fill(a->sbuf, (size_t)a->count, seed + (uint32_t)rank);
    for (int j = 0; j < bench_np; j++)
        pattern_poison((uint8_t *)a->rbuf + (size_t)j * (size_t)a->count, (size_t)a->count,
                       seed + (uint32_t)j);
}
static size_t allgather_verify(const bench_args_t *a, int rank, uint32_t seed, size_t *bad_at)
{
    (void)rank;
    size_t bad = 0, at = 0, n = (size_t)a->count;
    for (int j = 0; j < bench_np; j++) {
        size_t b =
            pattern_check((const uint8_t *)a->rbuf + (size_t)j * n, n, seed + (uint32_t)j, &at);
        if (b && !bad)
            *bad_at = (size_t)j * n + at;
        bad += b;
    }
    return bad;
}

/* Gather: sbuf one block, rbuf np blocks (at the root). Scatter: the np
 * blocks are rbuf's (the root's send buffer), this rank's block goes to
 * sbuf, so the buffers keep the layout of the gathers. */
static int gather_tc(const bench_args_t *a)
{
    return TC_Gather(a->sbuf, a->count, MPI_BYTE, a->rbuf, a->count, MPI_BYTE, a->root, a->comm);
}
static int gather_mpi(const bench_args_t *a)
{
    return PMPI_Gather(a->sbuf, a->count, MPI_BYTE, a->rbuf, a->count, MPI_BYTE, a->root, a->comm);
}
static int scatter_tc(const bench_args_t *a)
{
    return TC_Scatter(a->rbuf, a->count, MPI_BYTE, a->sbuf, a->count, MPI_BYTE, a->root, a->comm);
}
static int scatter_mpi(const bench_args_t *a)
{
    return PMPI_Scatter(a->rbuf, a->count, MPI_BYTE, a->sbuf, a->count, MPI_BYTE, a->root, a->comm);
}
static size_t gather_verify(const bench_args_t *a, int rank, uint32_t seed, size_t *bad_at)
{
    return rank == a->root ? allgather_verify(a, rank, seed, bad_at) : 0;
}
static void scatter_prepare(const bench_args_t *a, int rank, uint32_t seed)
{
    pattern_poison(a->sbuf, (size_t)a->count, seed + (uint32_t)rank);
    for (int j = 0; j < bench_np && rank == a->root; j++)
        pattern_fill((uint8_t *)a->rbuf + (size_t)j * (size_t)a->count, (size_t)a->count,
                     seed + (uint32_t)j);
}
static size_t scatter_verify(const bench_args_t *a, int rank, uint32_t seed, size_t *bad_at)
{
    return pattern_check(a->sbuf, (size_t)a->count, seed + (uint32_t)rank, bad_at);
}

/* ---- alltoall, alltoallv ------------------------------------------------------------ */

/* A size is one block (to one process); sbuf and rbuf hold np blocks each;
 * the v-variant with every count equal (displacements j * count, the
 * allgatherv's arrays for both sides). */
static int alltoall_tc(const bench_args_t *a)
{
    return TC_Alltoall(a->sbuf, a->count, MPI_BYTE, a->rbuf, a->count, MPI_BYTE, a->comm);
}
static int alltoall_mpi(const bench_args_t *a)
{
    return PMPI_Alltoall(a->sbuf, a->count, MPI_BYTE, a->rbuf, a->count, MPI_BYTE, a->comm);
}
static int alltoallv_tc(const bench_args_t *a)
{
    allgatherv_args(a);
    return TC_Alltoallv(a->sbuf, bench_counts, bench_displs, MPI_BYTE, a->rbuf, bench_counts,
                        bench_displs, MPI_BYTE, a->comm);
}
static int alltoallv_mpi(const bench_args_t *a)
{
    allgatherv_args(a);
    return PMPI_Alltoallv(a->sbuf, bench_counts, bench_displs, MPI_BYTE, a->rbuf, bench_counts,
                          bench_displs, MPI_BYTE, a->comm);
}
static uint32_t alltoall_seed(uint32_t seed, int from, int to)
{
    return seed + (uint32_t)from * 65537u + (uint32_t)to;
}
static void alltoall_prepare(const bench_args_t *a, int rank, uint32_t seed)
{
    const size_t n = (size_t)a->count;
    for (int j = 0; j < bench_np; j++) {
        pattern_fill((uint8_t *)a->sbuf + (size_t)j * n, n, alltoall_seed(seed, rank, j));
        pattern_poison((uint8_t *)a->rbuf + (size_t)j * n, n, alltoall_seed(seed, j, rank));
    }
}
static size_t alltoall_verify(const bench_args_t *a, int rank, uint32_t seed, size_t *bad_at)
{
    size_t bad = 0, at = 0, n = (size_t)a->count;
    for (int j = 0; j < bench_np; j++) {
        size_t b = pattern_check((const uint8_t *)a->rbuf + (size_t)j * n, n,
                                 alltoall_seed(seed, j, rank), &at);
        if (b && !bad)
            *bad_at = (size_t)j * n + at;
        bad += b;
    }
    return bad;
}

/* ---- barrier ------------------------------------------------------------------------ */

struct bench_op;
/* The size is per block, and sbuf holds np blocks (reduce_scatter_block). */
static int op_blocks(const struct bench_op *op);

static int barrier_tc(const bench_args_t *a)
{
    return TC_Barrier(a->comm);
}
static int barrier_mpi(const bench_args_t *a)
{
    return PMPI_Barrier(a->comm);
}
/* Nothing to fill or verify: the barrier's correctness is the test suite's
 * (arrival counters), not something a buffer can show. */
static void barrier_prepare(const bench_args_t *a, int rank, uint32_t seed)
{
    (void)a;
    (void)rank;
    (void)seed;
}
static size_t barrier_verify(const bench_args_t *a, int rank, uint32_t seed, size_t *bad_at)
{
    (void)a;
    (void)rank;
    (void)seed;
    (void)bad_at;
    return 0;
}

/* ---- rma_bcast ---------------------------------------------------------------------- */

/* One-sided broadcast (TC_Rma_bcast) into a window over each rank's whole
 * buffer arena: the data goes to the same offset it comes from at the root.
 * One call = the root's broadcast + flush, a non-root's wait for its data
 * (so each rank's time is when it is done). --rma-alg picks the algorithm;
 * the MPI column is PMPI_Bcast. Needs MPI_THREAD_MULTIPLE for the binomial
 * variants (requested when -o rma_bcast is given). */
static struct {
    MPI_Win win;
    int wid;
    int alg;          /* TC_RMA_BCAST_* */
    const char *base; /* this rank's arena = window memory */
} bench_rma = {MPI_WIN_NULL, -1, TC_RMA_BCAST_DEFAULT, NULL};

static int rma_bcast_tc(const bench_args_t *a)
{
    int rank, rc;
    MPI_Comm_rank(a->comm, &rank);
    if (rank != a->root)
        return TC_Rma_bcast_recv_wait(bench_rma.wid, a->root);
    rc = TC_Rma_bcast(a->rbuf, a->count, MPI_BYTE,
                      (MPI_Aint)((const char *)a->rbuf - bench_rma.base), bench_rma.wid,
                      bench_rma.alg);
    return rc == MPI_SUCCESS ? TC_Rma_bcast_flush(bench_rma.wid) : rc;
}

static void rma_bcast_prepare(const bench_args_t *a, int rank, uint32_t seed)
{
    bcast_prepare(a, rank, seed);
    /* Our stores to window memory before the next broadcast's puts. */
    MPI_Win_sync(bench_rma.win);
}

static const bench_op_t bench_ops[] = {
    {"bcast", "Bcast", 1, 0, TC_COLL_BCAST, bcast_tc, bcast_mpi, bcast_prepare, bcast_verify},
    {"rma_bcast", "Bcast", 1, 0, 0, rma_bcast_tc, bcast_mpi, rma_bcast_prepare, bcast_verify},
    {"reduce", "Reduce", 1, 1, TC_COLL_REDUCE, reduce_tc, reduce_mpi, red_prepare, reduce_verify},
    {"allreduce", "Allreduce", 0, 1, TC_COLL_ALLREDUCE, allreduce_tc, allreduce_mpi, red_prepare,
     allreduce_verify},
    {"barrier", "Barrier", 0, 0, TC_COLL_BARRIER, barrier_tc, barrier_mpi, barrier_prepare,
     barrier_verify},
    {"reduce_scatter_block", "Reduce_scatter_block", 0, 1, TC_COLL_REDUCE_SCATTER, rsb_tc, rsb_mpi,
     rsb_prepare, rsb_verify},
    {"scan", "Scan", 0, 1, 0, scan_tc, scan_mpi, red_prepare, scan_verify},
    {"exscan", "Exscan", 0, 1, 0, exscan_tc, exscan_mpi, red_prepare, exscan_verify},
    {"allgather", "Allgather", 0, 0, TC_COLL_ALLGATHER, allgather_tc, allgather_mpi,
     allgather_prepare, allgather_verify},
    {"allgatherv", "Allgatherv", 0, 0, TC_COLL_ALLGATHER, allgatherv_tc, allgatherv_mpi,
     allgather_prepare, allgather_verify},
    {"gather", "Gather", 1, 0, TC_COLL_GATHER, gather_tc, gather_mpi, allgather_prepare,
     gather_verify},
    {"scatter", "Scatter", 1, 0, TC_COLL_SCATTER, scatter_tc, scatter_mpi, scatter_prepare,
     scatter_verify},
    {"alltoall", "Alltoall", 0, 0, TC_COLL_ALLTOALL, alltoall_tc, alltoall_mpi, alltoall_prepare,
     alltoall_verify},
    {"alltoallv", "Alltoallv", 0, 0, TC_COLL_ALLTOALLV, alltoallv_tc, alltoallv_mpi,
     alltoall_prepare, alltoall_verify},
};
#define NOPS ((int)(sizeof(bench_ops) / sizeof(bench_ops[0])))

static int op_blocks(const bench_op_t *op)
{
    return op->call_tc == rsb_tc || op->call_tc == alltoall_tc || op->call_tc == alltoallv_tc;
}

/* A size is one process's block and rbuf holds np of them (allgather(v),
 * gather; scatter's root sends from rbuf). */
static int op_gathers(const bench_op_t *op)
{
    return op->call_tc == allgather_tc || op->call_tc == allgatherv_tc ||
           op->call_tc == gather_tc || op->call_tc == scatter_tc || op->call_tc == alltoall_tc ||
           op->call_tc == alltoallv_tc;
}

/* ---- options ----------------------------------------------------------------------- */

typedef struct bench_opts {
    const bench_op_t *op;
    size_t min, max;
    long iters;  /* per block; 0 = adapt to the size */
    long warmup; /* per implementation and size; -1 = adapt */
    int root;
    int root_shift;
    int off_cache;
    long blocks;
    const char *csv;
    const char *plot;
    int check;
    int raw;
    size_t raw_frag;
    long raw_slots;
    int btype, bop; /* --type, --op */
    int rma_alg;    /* --rma-alg */
    int model;      /* --model */
    int nlist;      /* --sizes: how many (0: -m decides) */
    size_t list[MAX_SIZES];
    long contend;  /* --contend: busy helper processes per node */
    long block_ms; /* --block-time: least block duration (0: off; -1: the default) */
} bench_opts_t;

/* --block-time's default with --contend: about ten of the time slices (4-5 ms
 * here) that a busy process takes from a rank at a time. */
#define BENCH_CONTENDED_BLOCK_MS 50

enum {
    OPT_ROOT_SHIFT = 1000,
    OPT_OFF_CACHE,
    OPT_BLOCKS,
    OPT_CSV,
    OPT_PLOT,
    OPT_CHECK,
    OPT_RAW,
    OPT_RAW_FRAG,
    OPT_RAW_SLOTS,
    OPT_TYPE,
    OPT_OP,
    OPT_RMA_ALG,
    OPT_MODEL,
    OPT_SIZES,
    OPT_CONTEND,
    OPT_BLOCK_TIME,
};

static void usage(FILE *f, const char *prog)
{
    fprintf(f,
            "usage: %s [options]   (run under mpiexec)\n"
            "Times TC_<op> against the MPI's own PMPI_<op> in alternating blocks.\n"
            "  -o OP           operation: ",
            prog);
    for (int i = 0; i < NOPS; i++)
        fprintf(f, "%s%s", i ? ", " : "", bench_ops[i].name);
    fprintf(f,
            " (default bcast)\n"
            "  -m MIN:MAX      sizes in bytes: the powers of two in [MIN,MAX], plus a 0-byte\n"
            "                  row if MIN is 0; K/M/G suffixes (default 1:4M)\n"
            "  -i ITER         calls per block (default adapts: 200 up to 8 KiB, then\n"
            "                  16 MiB/size clamped to [4,200])\n"
            "  -x WARMUP       untimed calls per implementation and size before the\n"
            "                  first block (default ITER/5, at least 2)\n"
            "  -r ROOT         root rank for bcast, reduce, gather, scatter (default 0)\n"
            "  --type T        reduce, allreduce: element type float, double or int\n"
            "                  (default float); count = size / type size\n"
            "  --op OP         reduce, allreduce: sum or max (default sum)\n"
            "  --rma-alg A     rma_bcast: default (TC_RMA_BCAST), linear, binomial,\n"
            "                  binomial-down (largest subtree first), binomial-up (the\n"
            "                  paper's order); the tc column is TC_Rma_bcast + flush\n"
            "  --root-shift    the root moves to the next rank every call (IMB -root_shift)\n"
            "  --off-cache     every call uses a different buffer, cycling through >= 64 MiB\n"
            "                  per rank (at least 2 buffers), like IMB -off_cache\n"
            "  --blocks N      blocks per implementation and size (default 10); the median\n"
            "                  over blocks is reported\n"
            "  --csv FILE      also write the results as CSV\n"
            "  --plot FILE     also plot them (PNG, needs gnuplot)\n"
            "  --check         verify every received buffer (each call is then timed alone,\n"
            "                  after a barrier: latency, not throughput); reduce and\n"
            "                  allreduce: inputs f(rank, i, call), result compared with\n"
            "                  the reduction computed locally, send buffers unchanged\n"
            "  --raw           add the raw two-process shared-memory copy pipeline between\n"
            "                  ranks 0 and 1 (same node, np >= 2) as a bandwidth reference\n"
            "  --raw-frag B    its fragment size (default %d)\n"
            "  --raw-slots N   its ring slots (default %d)\n"
            "  --sizes LIST    these sizes instead of -m, e.g. 8,1K,16K,256K,1M\n"
            "  --model         add the LogP/LogGP model's prediction for the TC call\n"
            "                  (TC_Comm_predict: the algorithms the library would run at\n"
            "                  each level for that size, root -r, a commutative op) and\n"
            "                  its relative error (model - tc) / tc against the measured\n"
            "                  tc_us; model_us -1 (error '-'): no model for this path\n"
            "                  (the call goes to the MPI's own, or -o rma_bcast). The\n"
            "                  model predicts one call alone: back-to-back calls overlap\n"
            "                  (pipelining, no barrier between them), --check times each\n"
            "                  call alone\n"
            "  --contend N     N CPU-bound helper processes per node (busy loops forked by\n"
            "                  the node's lowest rank, pinned round-robin to the CPUs its\n"
            "                  ranks may run on), started before the first size and\n"
            "                  killed after the last (and on any exit of that rank)\n"
            "  --block-time MS ITER grows (doubling at most eightfold a step, the same on\n"
            "                  every rank) until the faster implementation's block lasts\n"
            "                  MS ms, so that each block holds many scheduler time slices\n"
            "                  (default %d with --contend, else 0: off; -i or --check\n"
            "                  without --block-time: off)\n"
            "  -h              this help\n"
            "Output: '#' comment lines, then per size: size_bytes tc_us mpi_us tc/mpi\n"
            "tc_min_us mpi_min_us iters [raw_us raw_min_us tc_bw/raw] [model_us model_err].\n"
            "Times are us per call.\n",
            TC_BENCH_RING_FRAG_DEFAULT, TC_BENCH_RING_SLOTS_DEFAULT, BENCH_CONTENDED_BLOCK_MS);
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* Returns 0 to run, 1 to exit successfully (help), 2 on a bad option. Only
 * rank 0 prints; every rank parses the same argv and reaches the same verdict. */
static int parse_options(int argc, char **argv, int rank, bench_opts_t *o)
{
    static const struct option longopts[] = {
        {"root-shift", no_argument, NULL, OPT_ROOT_SHIFT},
        {"off-cache", no_argument, NULL, OPT_OFF_CACHE},
        {"blocks", required_argument, NULL, OPT_BLOCKS},
        {"csv", required_argument, NULL, OPT_CSV},
        {"plot", required_argument, NULL, OPT_PLOT},
        {"check", no_argument, NULL, OPT_CHECK},
        {"raw", no_argument, NULL, OPT_RAW},
        {"raw-frag", required_argument, NULL, OPT_RAW_FRAG},
        {"raw-slots", required_argument, NULL, OPT_RAW_SLOTS},
        {"type", required_argument, NULL, OPT_TYPE},
        {"op", required_argument, NULL, OPT_OP},
        {"rma-alg", required_argument, NULL, OPT_RMA_ALG},
        {"model", no_argument, NULL, OPT_MODEL},
        {"sizes", required_argument, NULL, OPT_SIZES},
        {"contend", required_argument, NULL, OPT_CONTEND},
        {"block-time", required_argument, NULL, OPT_BLOCK_TIME},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    FILE *err = rank == 0 ? stderr : NULL;
    long v;
    int c;

#define BAD(...)                                                                                   \
    do {                                                                                           \
        if (err) {                                                                                 \
            fprintf(err, "topocoll-bench: " __VA_ARGS__);                                          \
            fputc('\n', err);                                                                      \
        }                                                                                          \
        return 2;                                                                                  \
    } while (0)

    memset(o, 0, sizeof(*o));
    o->op = &bench_ops[0];
    o->min = 1;
    o->max = (size_t)4 << 20;
    o->warmup = -1;
    o->blocks = 10;
    o->block_ms = -1;
    o->raw_frag = TC_BENCH_RING_FRAG_DEFAULT;
    o->raw_slots = TC_BENCH_RING_SLOTS_DEFAULT;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:m:i:x:r:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': {
            int i;
            for (i = 0; i < NOPS && strcmp(optarg, bench_ops[i].name) != 0; i++)
                ;
            if (i == NOPS) {
                if (err) {
                    fprintf(err, "topocoll-bench: -o '%s': unknown operation; known:", optarg);
                    for (i = 0; i < NOPS; i++)
                        fprintf(err, " %s", bench_ops[i].name);
                    fputc('\n', err);
                }
                return 2;
            }
            o->op = &bench_ops[i];
            break;
        }
        case 'm':
            if (tc_bench_range_parse(optarg, &o->min, &o->max) != 0)
                BAD("-m '%s': expected MIN:MAX with MIN <= MAX, e.g. 1:4M", optarg);
            if (o->max > INT_MAX)
                BAD("-m '%s': sizes above %d bytes are not supported", optarg, INT_MAX);
            break;
        case 'i':
            if (parse_long(optarg, 1, 100000000, &o->iters) != 0)
                BAD("-i '%s': expected an iteration count >= 1", optarg);
            break;
        case 'x':
            if (parse_long(optarg, 0, 100000000, &o->warmup) != 0)
                BAD("-x '%s': expected a warm-up count >= 0", optarg);
            break;
        case 'r':
            if (parse_long(optarg, 0, INT_MAX, &v) != 0)
                BAD("-r '%s': expected a rank >= 0", optarg);
            o->root = (int)v;
            break;
        case OPT_ROOT_SHIFT:
            o->root_shift = 1;
            break;
        case OPT_OFF_CACHE:
            o->off_cache = 1;
            break;
        case OPT_BLOCKS:
            if (parse_long(optarg, 1, 100000, &o->blocks) != 0)
                BAD("--blocks '%s': expected 1..100000", optarg);
            break;
        case OPT_CSV:
            o->csv = optarg;
            break;
        case OPT_PLOT:
            if (strchr(optarg, '\'') != NULL)
                BAD("--plot '%s': file name must not contain a single quote", optarg);
            o->plot = optarg;
            break;
        case OPT_CHECK:
            o->check = 1;
            break;
        case OPT_RAW:
            o->raw = 1;
            break;
        case OPT_MODEL:
            o->model = 1;
            break;
        case OPT_SIZES: {
            /* Any sizes, in the order given (model-eval.sh: 8,1K,16K,256K,1M). */
            char buf[1024], *save = NULL;
            snprintf(buf, sizeof buf, "%s", optarg);
            o->nlist = 0;
            for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                size_t v2;
                if (o->nlist == MAX_SIZES || tc_bench_size_parse(t, &v2) != 0 || v2 > INT_MAX)
                    BAD("--sizes '%s': expected at most %d comma-separated sizes <= %d bytes, "
                        "e.g. 8,1K,16K",
                        optarg, MAX_SIZES, INT_MAX);
                o->list[o->nlist++] = v2;
            }
            if (o->nlist == 0)
                BAD("--sizes '%s': no size given", optarg);
            break;
        }
        case OPT_RAW_FRAG:
            if (tc_bench_size_parse(optarg, &o->raw_frag) != 0 || o->raw_frag == 0 ||
                o->raw_frag > ((size_t)1 << 30))
                BAD("--raw-frag '%s': expected a size in 1..1G, e.g. 8K", optarg);
            break;
        case OPT_RAW_SLOTS:
            if (parse_long(optarg, 1, 65536, &o->raw_slots) != 0)
                BAD("--raw-slots '%s': expected 1..65536", optarg);
            break;
        case OPT_TYPE: {
            int i;
            for (i = 0; i < BT_LAST && strcmp(optarg, btype_names[i]) != 0; i++)
                ;
            if (i == BT_LAST)
                BAD("--type '%s': expected float, double or int", optarg);
            o->btype = i;
            break;
        }
        case OPT_OP: {
            int i;
            for (i = 0; i < BO_LAST && strcmp(optarg, bop_names[i]) != 0; i++)
                ;
            if (i == BO_LAST)
                BAD("--op '%s': expected sum or max", optarg);
            o->bop = i;
            break;
        }
        case OPT_RMA_ALG: {
            static const char *const names[] = {"default", "linear", "binomial", "binomial-down",
                                                "binomial-up"};
            int i;
            for (i = 0; i < 5 && strcmp(optarg, names[i]) != 0; i++)
                ;
            if (i == 5)
                BAD("--rma-alg '%s': expected default, linear, binomial, binomial-down or "
                    "binomial-up",
                    optarg);
            o->rma_alg = i; /* the TC_RMA_BCAST_* values, in this order */
            break;
        }
        case OPT_CONTEND:
            if (parse_long(optarg, 0, 1024, &o->contend) != 0)
                BAD("--contend '%s': expected 0..1024 helper processes per node", optarg);
            break;
        case OPT_BLOCK_TIME:
            if (parse_long(optarg, 0, 600000, &o->block_ms) != 0)
                BAD("--block-time '%s': expected 0..600000 ms", optarg);
            break;
        case 'h':
            if (rank == 0)
                usage(stdout, argv[0]);
            return 1;
        case ':':
            BAD("option '%s' needs an argument (-h for help)", argv[optind - 1]);
        default:
            BAD("unknown option '%s' (-h for help)", argv[optind - 1]);
        }
    }
    if (optind < argc)
        BAD("unexpected argument '%s' (-h for help)", argv[optind]);
    if (o->block_ms < 0)
        o->block_ms = o->contend > 0 && o->iters == 0 && !o->check ? BENCH_CONTENDED_BLOCK_MS : 0;
#undef BAD
    return 0;
}

/* ---- helpers ----------------------------------------------------------------------- */

static long iters_for(const bench_opts_t *o, size_t n)
{
    long it;
    if (o->iters > 0)
        return o->iters;
    /* OSU uses many more iterations for small messages than for large ones; this
     * keeps a block of large messages at ~16 MiB moved per rank. */
    if (n <= 8192)
        return 200;
    it = (long)(((size_t)16 << 20) / n);
    return it < 4 ? 4 : it > 200 ? 200 : it;
}

static long warmup_for(const bench_opts_t *o, long iters)
{
    if (o->warmup >= 0)
        return o->warmup;
    return iters / 5 < 2 ? 2 : iters / 5;
}

static size_t btype_size(int btype)
{
    return btype == BT_FLOAT ? sizeof(float) : btype == BT_DOUBLE ? sizeof(double) : sizeof(int);
}

static size_t round_up(size_t n, size_t a)
{
    return (n + a - 1) / a * a;
}

/* First line of MPI_Get_library_version with runs of blanks collapsed. */
static void mpi_name(char *out, size_t cap)
{
    char s[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    size_t k = 0;

    MPI_Get_library_version(s, &len);
    for (int i = 0; i < len && s[i] != '\0' && s[i] != '\n' && k + 1 < cap; i++) {
        char ch = isspace((unsigned char)s[i]) ? ' ' : s[i];
        if (ch == ' ' && (k == 0 || out[k - 1] == ' '))
            continue;
        out[k++] = ch;
    }
    while (k > 0 && out[k - 1] == ' ')
        k--;
    out[k] = '\0';
}

static double ratio(double a, double b)
{
    return b > 0 ? a / b : NAN;
}

/* ---- the raw pipeline between ranks 0 and 1 --------------------------------------- */

typedef struct raw_state {
    int ok; /* on every rank: the raw block runs */
    MPI_Win win;
    MPI_Comm pair; /* ranks 0 and 1 of MPI_COMM_WORLD when they share memory */
    tc_bench_ring_end_t end;
} raw_state_t;

static void raw_setup(raw_state_t *rs, const bench_opts_t *o, int rank, int np)
{
    MPI_Comm two = MPI_COMM_NULL;
    int ok = 0;

    memset(rs, 0, sizeof(*rs));
    rs->win = MPI_WIN_NULL;
    rs->pair = MPI_COMM_NULL;
    if (np < 2) {
        if (rank == 0)
            printf("# --raw needs np >= 2: raw column disabled\n");
        return;
    }
    MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &two);
    if (two != MPI_COMM_NULL) {
        int sz;
        MPI_Comm_split_type(two, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &rs->pair);
        MPI_Comm_size(rs->pair, &sz);
        ok = sz == 2;
        if (!ok)
            MPI_Comm_free(&rs->pair);
        MPI_Comm_free(&two);
    }
    PMPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ok) {
        if (rank == 0)
            printf("# --raw: ranks 0 and 1 do not share memory: raw column disabled\n");
        return;
    }
    if (rank < 2) {
        size_t bytes = tc_bench_ring_bytes(o->raw_frag, (unsigned)o->raw_slots) + TC_CACHELINE;
        MPI_Aint qsize;
        int disp;
        void *base, *ring;

        MPI_Win_allocate_shared(rank == 0 ? (MPI_Aint)bytes : 0, 1, MPI_INFO_NULL, rs->pair, &base,
                                &rs->win);
        MPI_Win_shared_query(rs->win, 0, &qsize, &disp, &base);
        /* Both mappings of the segment are page aligned, so aligning each local
         * address to a cache line lands on the same offset in both processes. */
        ring = tc_bench_ring_align(base);
        MPI_Win_lock_all(MPI_MODE_NOCHECK, rs->win);
        if (rank == 0)
            tc_bench_ring_init(ring, o->raw_frag, (unsigned)o->raw_slots);
        MPI_Win_sync(rs->win);
        PMPI_Barrier(rs->pair);
        MPI_Win_sync(rs->win);
        tc_bench_ring_end_attach(&rs->end, ring);
    }
    rs->ok = 1;
}

static void raw_teardown(raw_state_t *rs)
{
    if (rs->win != MPI_WIN_NULL) {
        MPI_Win_unlock_all(rs->win);
        MPI_Win_free(&rs->win);
    }
    if (rs->pair != MPI_COMM_NULL)
        MPI_Comm_free(&rs->pair);
}

/* ---- blocks ------------------------------------------------------------------------ */

typedef struct bench_run {
    const bench_opts_t *o;
    int rank, np;
    char *arena;       /* all buffers of this rank (send buffers for reduce ops) */
    char *rarena;      /* reduce ops: receive buffers, same layout; else NULL */
    size_t arena_size; /* bytes, of each */
    uint64_t cursor;   /* --off-cache: calls made so far, selects the next buffer */
    raw_state_t raw;
    long errors[IMPL_LAST]; /* --check: wrong buffers seen by this rank, this size */
    int err_reports;
} bench_run_t;

/* The next call's buffers: a->rbuf, and a->sbuf (the same one for bcast). */
static void next_buffers(bench_run_t *r, size_t n, bench_args_t *a)
{
    size_t stride, nbuf, off = 0;
    if (r->o->off_cache) {
        stride = round_up((n ? n : 1) * (op_blocks(r->o->op) ? (size_t)r->np : 1), TC_CACHELINE);
        nbuf = r->arena_size / stride;
        off = (r->cursor++ % nbuf) * stride;
    }
    a->sbuf = r->arena + off;
    a->rbuf = r->rarena ? r->rarena + off * (op_gathers(r->o->op) ? (size_t)r->np : 1) : a->sbuf;
}

static uint32_t check_seed(size_t n, long call, int impl)
{
    return (uint32_t)n * 0x9E3779B1u ^ (uint32_t)call * 0x85EBCA6Bu ^ (uint32_t)impl << 29;
}

static void check_report(bench_run_t *r, int impl, size_t n, long call, size_t bad, size_t bad_at,
                         int rc)
{
    r->errors[impl]++;
    if (r->err_reports++ >= MAX_ERR_REPORTS)
        return;
    if (rc != MPI_SUCCESS)
        fprintf(stderr, "topocoll-bench: rank %d: %s size %zu call %ld returned error %d\n",
                r->rank, impl_names[impl], n, call, rc);
    else
        fprintf(stderr,
                "topocoll-bench: rank %d: %s size %zu call %ld: %zu wrong bytes, first at "
                "offset %zu\n",
                r->rank, impl_names[impl], n, call, bad, bad_at);
}

/* The raw pipeline as a "collective": rank 0 produces, rank 1 consumes, the
 * others idle. */
static void raw_move(bench_run_t *r, void *buf, size_t n)
{
    if (r->rank == 0)
        tc_bench_ring_send(&r->raw.end, buf, n);
    else if (r->rank == 1)
        tc_bench_ring_recv(&r->raw.end, buf, n);
}

static void raw_prepare(bench_run_t *r, void *buf, size_t n, uint32_t seed)
{
    if (r->rank == 0)
        pattern_fill(buf, n, seed);
    else if (r->rank == 1)
        pattern_poison(buf, n, seed);
}

static size_t raw_verify(bench_run_t *r, void *buf, size_t n, uint32_t seed, size_t *bad_at)
{
    return r->rank == 1 ? pattern_check(buf, n, seed, bad_at) : 0;
}

/* Runs `iters` calls of one implementation; returns this rank's mean seconds per
 * call. `call0` numbers the calls (for the --check pattern). */
static double run_block(bench_run_t *r, int impl, size_t n, long iters, long call0)
{
    const bench_opts_t *o = r->o;
    const bench_op_t *op = o->op;
    bench_args_t a;
    double t = 0.0, t0;

    a.comm = MPI_COMM_WORLD;
    a.root = o->root;
    a.btype = o->btype;
    a.bop = o->bop;
    a.op = o->bop == BO_SUM ? MPI_SUM : MPI_MAX;
    if (op->reduces) {
        static const MPI_Datatype types[BT_LAST] = {MPI_FLOAT, MPI_DOUBLE, MPI_INT};
        a.dt = types[o->btype];
        a.count = (int)(n / btype_size(o->btype));
    } else {
        a.dt = MPI_BYTE;
        a.count = (int)n;
    }

    if (!o->check) {
        t0 = MPI_Wtime();
        for (long it = 0; it < iters; it++) {
            next_buffers(r, n, &a);
            if (impl == IMPL_RAW) {
                raw_move(r, a.rbuf, n);
                continue;
            }
            if (o->root_shift)
                a.root = (int)((o->root + it) % r->np);
            if (impl == IMPL_TC)
                op->call_tc(&a);
            else
                op->call_mpi(&a);
        }
        return (MPI_Wtime() - t0) / (double)iters;
    }

    /* --check: fill, synchronise, time the call alone, verify. The barrier keeps
     * the root's fill out of the receivers' times. */
    for (long it = 0; it < iters; it++) {
        uint32_t seed = check_seed(n, call0 + it, impl);
        size_t bad = 0, bad_at = 0;
        int rc = MPI_SUCCESS;

        next_buffers(r, n, &a);
        if (o->root_shift)
            a.root = (int)((o->root + it) % r->np);
        if (impl == IMPL_RAW)
            raw_prepare(r, a.rbuf, n, seed);
        else
            op->check_prepare(&a, r->rank, seed);
        PMPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        if (impl == IMPL_RAW)
            raw_move(r, a.rbuf, n);
        else
            rc = impl == IMPL_TC ? op->call_tc(&a) : op->call_mpi(&a);
        t += MPI_Wtime() - t0;
        if (impl == IMPL_RAW)
            bad = raw_verify(r, a.rbuf, n, seed, &bad_at);
        else if (rc == MPI_SUCCESS)
            bad = op->check_verify(&a, r->rank, seed, &bad_at);
        if (rc != MPI_SUCCESS || bad != 0)
            check_report(r, impl, n, call0 + it, bad, bad_at, rc);
    }
    return t / (double)iters;
}

/* --block-time: run TC and MPI blocks of @p iters calls, and grow @p iters until
 * the faster of the two (max over ranks) lasts @p secs. Every rank takes the
 * same steps: the decision is on the Allreduce'd time. Call numbers restart at
 * 0, as the warm-up's. */
static long grow_iters(bench_run_t *r, size_t n, long iters, double secs)
{
    const long most = 100000000;
    for (;;) {
        double fastest = 0.0, block; /* this rank's faster block; its max over ranks */
        for (int impl = 0; impl < IMPL_RAW; impl++) {
            PMPI_Barrier(MPI_COMM_WORLD);
            double t = run_block(r, impl, n, iters, 0) * (double)iters;
            if (impl == 0 || t < fastest)
                fastest = t;
        }
        PMPI_Allreduce(&fastest, &block, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (block >= secs || iters >= most)
            return iters;
        /* Aim 20% past the target; at least double, at most eightfold a step
         * (a step that fell into a quiet moment must not overshoot far). */
        double want = block > 0.0 ? secs * 1.2 / block : 8.0;
        long factor = want >= 7.0 ? 8 : want < 2.0 ? 2 : (long)want + 1; /* 2..8 */
        iters = iters > most / factor ? most : iters * factor;
    }
}

/* ---- output ------------------------------------------------------------------------ */

typedef struct bench_row {
    size_t n;
    long iters;
    double med[IMPL_LAST], min[IMPL_LAST]; /* seconds */
    double model_us;                       /* --model: TC_Comm_predict's value (-1: none) */
} bench_row_t;

static void write_plot(const bench_opts_t *o, const bench_row_t *rows, int nrows, int np, int nimpl,
                       const char *mpi)
{
    char dat[] = "/tmp/topocoll-bench-dat-XXXXXX";
    char gp[] = "/tmp/topocoll-bench-gp-XXXXXX";
    char title[256], what[64], cmd[128];
    FILE *f;
    int fd, rc, k = 0;

    if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
        printf("# --plot: gnuplot not found, %s not written\n", o->plot);
        return;
    }
    /* Title: the MPI's name up to the first comma ("Open MPI v4.1.4", "MPICH
     * Version: 4.0.2"); gnuplot strings are single-quoted below, so no quotes. */
    if (o->op->reduces)
        snprintf(what, sizeof(what), "%s %s %s", o->op->name, btype_names[o->btype],
                 bop_names[o->bop]);
    else
        snprintf(what, sizeof(what), "%s", o->op->name);
    snprintf(title, sizeof(title), "%s, np=%d%s%s - %.*s", what, np,
             o->off_cache ? ", off-cache" : "", o->root_shift ? ", root-shift" : "",
             (int)strcspn(mpi, ","), mpi);
    for (char *p = title; *p; p++)
        if (*p == '\'' || *p == '"' || *p == '\\')
            *p = ' ';

    if ((fd = mkstemp(dat)) < 0 || (f = fdopen(fd, "w")) == NULL) {
        printf("# --plot: cannot create a temporary file, %s not written\n", o->plot);
        return;
    }
    for (int i = 0; i < nrows; i++) {
        if (rows[i].n == 0)
            continue; /* no 0 on a log axis */
        fprintf(f, "%zu %.6g %.6g %.6g\n", rows[i].n, rows[i].med[IMPL_TC] * 1e6,
                rows[i].med[IMPL_MPI] * 1e6, nimpl > IMPL_RAW ? rows[i].med[IMPL_RAW] * 1e6 : 0);
        k++;
    }
    fclose(f);
    if ((fd = mkstemp(gp)) < 0 || (f = fdopen(fd, "w")) == NULL) {
        printf("# --plot: cannot create a temporary file, %s not written\n", o->plot);
        remove(dat);
        return;
    }
    fprintf(f,
            "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
            "  set terminal pngcairo noenhanced size 1000,800\n"
            "} else {\n"
            "  set terminal png noenhanced size 1000,800\n"
            "}\n"
            "set output '%s'\n"
            "set multiplot layout 2,1 title '%s'\n"
            "set logscale x 2\nset logscale y 10\nset format x '%%.0b%%B'\n"
            "set grid\nset key bottom right\n"
            "set ylabel 'time per call (us)'\n"
            "plot '%s' u 1:2 w lp pt 7 t 'TC_%s', '' u 1:3 w lp pt 5 t 'PMPI_%s'%s\n"
            "unset logscale y\nset yrange [0:*]\nset key top left\n"
            "set xlabel 'message size (bytes)'\nset ylabel 'tc / mpi'\n"
            "plot '%s' u 1:($2/$3) w lp pt 7 t 'TC time / MPI time', 1 w l dt 2 notitle\n"
            "unset multiplot\n",
            o->plot, title, dat, o->op->mname, o->op->mname,
            nimpl > IMPL_RAW ? ", '' u 1:4 w lp pt 3 t 'raw 2-process copy pipeline'" : "", dat);
    fclose(f);
    if (k == 0) {
        printf("# --plot: no nonzero sizes to plot\n");
    } else {
        snprintf(cmd, sizeof(cmd), "gnuplot %s", gp);
        rc = system(cmd);
        if (rc != 0)
            printf("# --plot: gnuplot failed (status %d), %s may be missing\n", rc, o->plot);
        else
            printf("# plot written to %s\n", o->plot);
    }
    remove(dat);
    remove(gp);
}

/* ---- main -------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    bench_opts_t o;
    bench_run_t r;
    bench_row_t rows[MAX_SIZES];
    size_t sizes[MAX_SIZES];
    char mpi[MPI_MAX_LIBRARY_VERSION_STRING];
    FILE *csv = NULL;
    double wall0;
    int nsizes, nimpl, rc, dropped = 0, csv_ok = 1, status = 0, tcmaj = 0, tcmin = 0, tcpat = 0;
    long total_errors = 0;

    /* rma_bcast's helper threads need MPI_THREAD_MULTIPLE; the other
     * operations keep plain MPI_Init. */
    int want_rma = 0, provided;
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "-o") == 0 && strcmp(argv[i + 1], "rma_bcast") == 0)
            want_rma = 1;
    if (want_rma)
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(&argc, &argv);
    wall0 = MPI_Wtime();
    memset(&r, 0, sizeof(r));
    MPI_Comm_rank(MPI_COMM_WORLD, &r.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &r.np);
    r.o = &o;

    rc = parse_options(argc, argv, r.rank, &o);
    if (rc == 0 && o.root >= r.np) {
        if (r.rank == 0)
            fprintf(stderr, "topocoll-bench: -r %d: root must be < np (%d)\n", o.root, r.np);
        rc = 2;
    }
    nsizes = tc_bench_range_sizes(o.min, o.max, sizes, MAX_SIZES);
    if (o.nlist > 0) {
        memcpy(sizes, o.list, sizeof(size_t) * (size_t)o.nlist);
        nsizes = o.nlist;
    }
    if (rc == 0 && o.op->call_tc == barrier_tc) {
        sizes[0] = 0; /* -m does not apply: one row */
        nsizes = 1;
    }
    if (rc == 0 && o.op->reduces) {
        /* A reduction moves whole elements: drop the sizes below one. */
        int k = 0;
        for (int i = 0; i < nsizes; i++) {
            if (sizes[i] == 0 || sizes[i] >= btype_size(o.btype))
                sizes[k++] = sizes[i];
            else
                dropped++;
        }
        nsizes = k;
    }
    bench_np = r.np;
    if (rc == 0 && nsizes == 0) {
        if (r.rank == 0)
            fprintf(stderr, "topocoll-bench: -m %zu:%zu contains no power of two%s\n", o.min, o.max,
                    o.op->reduces ? " of at least one element" : "");
        rc = 2;
    }
    if (rc == 0 && r.rank == 0 && o.csv != NULL) {
        csv = fopen(o.csv, "w");
        if (csv == NULL) {
            fprintf(stderr, "topocoll-bench: --csv %s: cannot open for writing\n", o.csv);
            csv_ok = 0;
        }
    }
    PMPI_Bcast(&csv_ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rc != 0 || !csv_ok) {
        MPI_Finalize();
        return rc == 1 ? 0 : 2;
    }

    /* The load goes on before anything is set up or timed (and before the
     * buffers exist: fork copies less). */
    char contend_cpus[256];
    if (bench_contend_start(MPI_COMM_WORLD, (int)o.contend, contend_cpus, sizeof contend_cpus) !=
        0) {
        if (r.rank == 0)
            fprintf(stderr, "topocoll-bench: --contend %ld: could not start the helpers\n",
                    o.contend);
        MPI_Finalize();
        return 2;
    }

    /* Buffers: one of the largest size, or for --off-cache an arena of >= 64 MiB
     * holding at least two of them. Touched now so page faults are not timed. */
    size_t largest = 1;
    for (int i = 0; i < nsizes; i++) /* --sizes need not be ascending */
        largest = sizes[i] > largest ? sizes[i] : largest;
    if (op_blocks(o.op))
        largest *= (size_t)r.np; /* the send buffers (receive buffers need less) */
    r.arena_size = round_up(largest, TC_CACHELINE);
    if (o.off_cache) {
        r.arena_size *= 2;
        if (r.arena_size < OFF_CACHE_BYTES)
            r.arena_size = OFF_CACHE_BYTES;
    }
    if (posix_memalign((void **)&r.arena, BUF_ALIGN, r.arena_size) != 0) {
        fprintf(stderr, "topocoll-bench: rank %d: cannot allocate %zu bytes\n", r.rank,
                r.arena_size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(r.arena, 0, r.arena_size);
    if (op_gathers(o.op)) {
        /* np blocks per call; the counts of allgatherv. */
        size_t rsize = r.arena_size * (size_t)r.np;
        bench_counts = calloc(2 * (size_t)r.np, sizeof *bench_counts);
        if (!bench_counts || posix_memalign((void **)&r.rarena, BUF_ALIGN, rsize) != 0) {
            fprintf(stderr, "topocoll-bench: rank %d: cannot allocate %zu bytes\n", r.rank, rsize);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        bench_displs = bench_counts + r.np;
        memset(r.rarena, 0, rsize);
    }
    if (o.op->reduces) {
        if (posix_memalign((void **)&r.rarena, BUF_ALIGN, r.arena_size) != 0) {
            fprintf(stderr, "topocoll-bench: rank %d: cannot allocate %zu bytes\n", r.rank,
                    r.arena_size);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        memset(r.rarena, 0, r.arena_size);
        /* Finite operands (small integers) for the timed calls. */
        red_fill(r.arena, o.btype, r.arena_size / btype_size(o.btype), 0, r.rank);
    }

    mpi_name(mpi, sizeof(mpi));
    TC_Get_version(&tcmaj, &tcmin, &tcpat);
    if (r.rank == 0) {
        printf("# topocoll-bench op=%s np=%d mpi=%s tc=%d.%d.%d sizes=%zu:%zu iters=", o.op->name,
               r.np, mpi, tcmaj, tcmin, tcpat, o.min, o.max);
        if (o.iters > 0)
            printf("%ld", o.iters);
        else
            printf("auto");
        if (o.warmup >= 0)
            printf(" warmup=%ld", o.warmup);
        else
            printf(" warmup=auto");
        printf(" blocks=%ld root=%d root_shift=%s off_cache=%s check=%s raw=%s model=%s", o.blocks,
               o.root, o.root_shift ? "on" : "off", o.off_cache ? "on" : "off",
               o.check ? "on" : "off", o.raw ? "on" : "off", o.model ? "on" : "off");
        if (o.block_ms > 0)
            printf(" block_time=%ldms", o.block_ms);
        if (o.raw)
            printf(" raw_frag=%zu raw_slots=%ld", o.raw_frag, o.raw_slots);
        if (o.op->reduces)
            printf(" type=%s reduce_op=%s", btype_names[o.btype], bop_names[o.bop]);
        printf("\n");
        if (dropped)
            printf("# %d size(s) below one %s element skipped\n", dropped, btype_names[o.btype]);
        if (o.contend > 0)
            printf("# contend: %ld busy helper process(es) per node; on rank 0's node on CPUs "
                   "%s\n",
                   o.contend, contend_cpus);
        fflush(stdout);
    }

    /* Context creation is collective and not what we time. */
    rc = TC_Comm_attach(MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS && r.rank == 0)
        printf("# TC_Comm_attach returned %d; the first TC call will create the context\n", rc);

    if (o.op->call_tc == rma_bcast_tc) {
        /* The arena becomes window memory from MPI_Win_allocate (Open MPI's
         * osc/sm cannot MPI_Win_create; arena_size is a multiple of TC_CACHELINE (>= 64), which
         * MPICH 4.0.2 needs, see tests/rma). */
        free(r.arena);
        MPI_Win_allocate((MPI_Aint)r.arena_size, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &r.arena,
                         &bench_rma.win);
        memset(r.arena, 0, r.arena_size);
        bench_rma.alg = o.rma_alg;
        bench_rma.base = r.arena;
        if (TC_Rma_win_register(bench_rma.win, &bench_rma.wid) != MPI_SUCCESS)
            MPI_Abort(MPI_COMM_WORLD, 1);
        if (r.rank == 0)
            printf("# rma_bcast: alg=%d (0 default, 1 linear, 2 binomial, 3 binomial-down, 4 "
                   "binomial-up)\n",
                   o.rma_alg);
    }

    r.raw.win = MPI_WIN_NULL;
    r.raw.pair = MPI_COMM_NULL;
    if (o.raw)
        raw_setup(&r.raw, &o, r.rank, r.np);
    nimpl = r.raw.ok ? IMPL_LAST : IMPL_RAW;

    if (r.rank == 0) {
        printf("# us per call: median over blocks of each block's max over ranks of the mean "
               "per call; *_min: best block\n");
        if (o.check)
            printf("# --check: each call timed alone after a barrier; fill and verify untimed\n");
        printf("# %10s %12s %12s %8s %12s %12s %6s", "size_bytes", "tc_us", "mpi_us", "tc/mpi",
               "tc_min_us", "mpi_min_us", "iters");
        if (nimpl > IMPL_RAW)
            printf(" %12s %12s %9s", "raw_us", "raw_min_us", "tc_bw/raw");
        if (o.model)
            printf(" %12s %9s", "model_us", "model_err");
        printf("\n");
        fflush(stdout);
        if (csv) {
            fprintf(csv, "op,np,size_bytes,tc_us,mpi_us,ratio,tc_min_us,mpi_min_us%s%s\n",
                    nimpl > IMPL_RAW ? ",raw_us,raw_min_us" : "",
                    o.model ? ",model_us,model_err" : "");
            fflush(csv);
        }
    }

    double *local = malloc(sizeof(double) * (size_t)o.blocks * IMPL_LAST);
    double *global = malloc(sizeof(double) * (size_t)o.blocks * IMPL_LAST);
    double *col = malloc(sizeof(double) * (size_t)o.blocks);
    if (local == NULL || global == NULL || col == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);

    for (int si = 0; si < nsizes; si++) {
        size_t n = sizes[si];
        long iters = iters_for(&o, n), warm = warmup_for(&o, iters);
        long errs[IMPL_LAST], gerrs[IMPL_LAST];
        bench_row_t *row = &rows[si];

        memset(r.errors, 0, sizeof(r.errors));
        /* Every rank asks (the context exists, so the call is local; were it
         * missing, the call would create it collectively). */
        row->model_us = -1.0;
        if (o.model && o.op->coll != 0 &&
            TC_Comm_predict(MPI_COMM_WORLD, o.op->coll, n, o.root, &row->model_us) != MPI_SUCCESS)
            row->model_us = -1.0;
        /* call numbers: warm-up uses block "-1", block b uses calls (b+1)*iters.. */
        for (int impl = 0; impl < nimpl; impl++) {
            PMPI_Barrier(MPI_COMM_WORLD);
            if (warm > 0)
                run_block(&r, impl, n, warm, 0);
        }
        if (o.block_ms > 0)
            iters = grow_iters(&r, n, iters, (double)o.block_ms * 1e-3);
        for (long b = 0; b < o.blocks; b++) {
            for (int k = 0; k < nimpl; k++) {
                /* TC, MPI in even blocks, MPI, TC in odd ones; raw last. */
                int impl = k < IMPL_RAW && (b & 1) ? IMPL_MPI - k : k;
                PMPI_Barrier(MPI_COMM_WORLD);
                local[b * IMPL_LAST + impl] = run_block(&r, impl, n, iters, (b + 1) * iters);
            }
            if (nimpl < IMPL_LAST)
                local[b * IMPL_LAST + IMPL_RAW] = 0.0;
        }
        PMPI_Reduce(local, global, (int)o.blocks * IMPL_LAST, MPI_DOUBLE, MPI_MAX, 0,
                    MPI_COMM_WORLD);
        for (int impl = 0; impl < IMPL_LAST; impl++)
            errs[impl] = r.errors[impl];
        PMPI_Reduce(errs, gerrs, IMPL_LAST, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);

        if (r.rank != 0)
            continue;
        row->n = n;
        row->iters = iters;
        for (int impl = 0; impl < IMPL_LAST; impl++) {
            for (long b = 0; b < o.blocks; b++)
                col[b] = global[b * IMPL_LAST + impl];
            row->min[impl] = tc_bench_min(col, (int)o.blocks);
            row->med[impl] = tc_bench_median(col, (int)o.blocks);
        }
        printf("%12zu %12.3f %12.3f %8.3f %12.3f %12.3f %6ld", n, row->med[IMPL_TC] * 1e6,
               row->med[IMPL_MPI] * 1e6, ratio(row->med[IMPL_TC], row->med[IMPL_MPI]),
               row->min[IMPL_TC] * 1e6, row->min[IMPL_MPI] * 1e6, iters);
        if (nimpl > IMPL_RAW)
            printf(" %12.3f %12.3f %9.3f", row->med[IMPL_RAW] * 1e6, row->min[IMPL_RAW] * 1e6,
                   ratio(row->med[IMPL_RAW], row->med[IMPL_TC]));
        if (o.model && row->model_us >= 0.0 && row->med[IMPL_TC] > 0.0)
            printf(" %12.3f %9.3f", row->model_us,
                   (row->model_us - row->med[IMPL_TC] * 1e6) / (row->med[IMPL_TC] * 1e6));
        else if (o.model)
            printf(" %12.3f %9s", row->model_us, "-");
        printf("\n");
        if (o.check && gerrs[IMPL_TC] + gerrs[IMPL_MPI] + gerrs[IMPL_RAW] > 0) {
            printf("# check FAILED at size %zu: wrong buffers tc=%ld mpi=%ld raw=%ld\n", n,
                   gerrs[IMPL_TC], gerrs[IMPL_MPI], gerrs[IMPL_RAW]);
            total_errors += gerrs[IMPL_TC] + gerrs[IMPL_MPI] + gerrs[IMPL_RAW];
        }
        fflush(stdout);
        if (csv) {
            fprintf(csv, "%s,%d,%zu,%.3f,%.3f,%.4f,%.3f,%.3f", o.op->name, r.np, n,
                    row->med[IMPL_TC] * 1e6, row->med[IMPL_MPI] * 1e6,
                    ratio(row->med[IMPL_TC], row->med[IMPL_MPI]), row->min[IMPL_TC] * 1e6,
                    row->min[IMPL_MPI] * 1e6);
            if (nimpl > IMPL_RAW)
                fprintf(csv, ",%.3f,%.3f", row->med[IMPL_RAW] * 1e6, row->min[IMPL_RAW] * 1e6);
            if (o.model && row->model_us >= 0.0 && row->med[IMPL_TC] > 0.0)
                fprintf(csv, ",%.3f,%.4f", row->model_us,
                        (row->model_us - row->med[IMPL_TC] * 1e6) / (row->med[IMPL_TC] * 1e6));
            else if (o.model)
                fprintf(csv, ",%.3f,", row->model_us);
            fprintf(csv, "\n");
            fflush(csv);
        }
    }

    bench_contend_stop(MPI_COMM_WORLD);
    raw_teardown(&r.raw);
    if (bench_rma.win != MPI_WIN_NULL) {
        TC_Rma_win_unregister(bench_rma.wid);
        MPI_Win_free(&bench_rma.win);
        r.arena = NULL; /* was the window's memory */
    }
    if (r.rank == 0) {
        if (o.check) {
            if (total_errors == 0)
                printf("# check: every received buffer matched\n");
            else
                printf("# check FAILED: %ld wrong buffers in total\n", total_errors);
        }
        if (csv) {
            fclose(csv);
            printf("# csv written to %s\n", o.csv);
        }
        if (o.plot)
            write_plot(&o, rows, nsizes, r.np, nimpl, mpi);
        printf("# total wall time %.2f s\n", MPI_Wtime() - wall0);
        fflush(stdout);
    }
    status = total_errors > 0;
    PMPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(local);
    free(global);
    free(col);
    free(r.arena);
    free(r.rarena);
    free(bench_counts);
    MPI_Finalize();
    return status;
}
