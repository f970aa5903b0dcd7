/* A process that fails an allocation in the Alltoall's or the Alltoallv's
 * aggregation through the node leaders (src/hier/hier_alltoall.c) must not
 * leave the others waiting: its failure travels with the call's messages
 * (an empty message where its data would be): it returns MPI_ERR_NO_MEM,
 * every other process MPI_ERR_OTHER (TC_ERR_PEER), through the
 * communicator's handler, without TC_WAIT_TIMEOUT.
 *
 * Two posed nodes of two, interleaved (ranks 0 and 2 on node 0, 1 and 3 on
 * node 1: leaders 0 and 1), TC_HIER_A2A_AGGREGATE=4M so blocks of up to
 * 2 MiB aggregate. The failing process lowers its address-space limit
 * (RLIMIT_AS) to what it uses plus a few MiB (the test's allocations of
 * 128 KiB or more are mappings of their own, mallopt, so that nothing the
 * previous cases freed is reused), so that, Alltoall with blocks of 2 MiB,
 *   a member (rank 2) cannot stage its blocks: it passes a non-contiguous
 *     type (a pair of ints in swapped order, the same signature as the
 *     others' MPI_INT), which the library copies into an 8 MiB row;
 *   a leader (rank 1) cannot allocate its buffers (32 MiB for its members'
 *     rows and the exchange): it must take the others' messages without a
 *     buffer (receives the MPI truncates; its communicator's handler stays
 *     MPI_ERRORS_ARE_FATAL for the library's own traffic);
 *   a leader (rank 0) cannot stage its blocks.
 * After each failure a small Alltoall on the same communicator must give
 * the right blocks (nothing left in flight).
 *
 * Alltoallv: random counts (a pure function of a seed, sender and
 * receiver) with zeros, blocks through the leaders (0.5 to 2 MiB) and
 * straight (2 to 3 MiB), at random displacements with gaps; the seed of
 * each case is the first whose counts make the failing process's
 * allocation at least 1.5 times the headroom and leave another member without
 * an aggregated block to receive (its row then has no data: the flag must
 * reach it anyway). A member (rank 2) and a leader (rank 0) cannot stage
 * their blocks (the swapped pairs on both sides), a member (rank 3) cannot
 * allocate its blocks' and row's buffer, a member (rank 2) cannot copy the
 * blocks it sends in place (MPI_IN_PLACE everywhere, counts the same both
 * ways), a leader (rank 1) cannot allocate its buffers;
 * after each, the same call with nobody failing, every receive buffer
 * checked (gaps keep their sentinel).
 *
 * Expected values are a pure function of (source, destination, index). A
 * hang is ctest's timeout. Exits 77 where the limit cannot be set, and
 * under AddressSanitizer.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "tc_test_common.h"
#include "topocoll.h"

#define N       (512 << 10) /* ints per block: 2 MiB */
#define HEAD_MB 6           /* headroom above the current address space */
#define P       4           /* processes */
#define AGG                                                                                        \
    (2 << 20)             /* the largest aggregated block on this shape: the leaders' rows         \
                             (16 MiB) over 2 processes per node times P */
#define SPAN (6 * N + 64) /* ints of a buffer: P blocks of up to 3 MiB and gaps */

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

/* ---- Alltoallv ----------------------------------------------------------------------- */

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Pairs of ints in the block from @p i to @p j in case @p seed: none (a
 * quarter), straight (2 to 3 MiB: a quarter), or through the leaders (0.5
 * to 2 MiB); @p sym: the same both ways (MPI_IN_PLACE). */
static int vpairs(uint64_t seed, int sym, int i, int j)
{
    const int lo = sym && i > j ? j : i, hi = sym && i > j ? i : j;
    const uint64_t r = mix(seed * 64 + (uint64_t)(lo * P + hi));
    const int q = AGG / 8; /* pairs in AGG bytes */
    switch (r % 4) {
    case 0:
        return 0;
    case 1:
        return q + 1 + (int)((r >> 8) % (uint64_t)(q / 2));
    default:
        return q / 4 + (int)((r >> 8) % (uint64_t)(3 * q / 4 + 1));
    }
}

/* The bytes of that block that go through the leaders (a block between two
 * processes of 1 to AGG bytes). */
static size_t vagg(uint64_t seed, int sym, int i, int j)
{
    const size_t b = (size_t)vpairs(seed, sym, i, j) * 8;
    return i != j && b <= (size_t)AGG ? b : 0;
}

typedef enum { VNEED_STAGE, VNEED_INPLACE, VNEED_MEMBER, VNEED_LEADER } vneed_t;

/* What process @p f allocates in case @p seed that must fail: both sides
 * staged; the copy of its receive blocks that it sends from (in place); a
 * member's aggregated blocks out and in; a leader's buffers (its members'
 * blocks, the exchange both ways, its members' rows). Nodes: rank parity. */
static size_t vneed(uint64_t seed, int f, vneed_t kind)
{
    const int sym = kind == VNEED_INPLACE;
    size_t need = 0;
    for (int i = 0; i < P; i++)
        for (int j = 0; j < P; j++) {
            const size_t b = vagg(seed, sym, i, j);
            const int ni = i % 2 == f % 2, nj = j % 2 == f % 2;
            if (kind == VNEED_STAGE)
                need += i == f || j == f ? (size_t)vpairs(seed, 0, i, j) * 8 : 0;
            else if (kind == VNEED_INPLACE)
                need += j == f ? (size_t)vpairs(seed, 1, i, j) * 8 : 0;
            else if (kind == VNEED_MEMBER)
                need += i == f || j == f ? b : 0;
            else
                need += (ni && i != f ? b : 0) + (ni != nj ? b : 0) + (nj && j != f ? b : 0);
        }
    return need;
}

/* The first seed whose counts make @p f allocate one and a half times the
 * headroom and leave a member other than f (ranks 2, 3) no aggregated block
 * to receive; 0: none found. */
static uint64_t vseed(int f, vneed_t kind)
{
    for (uint64_t seed = 1; seed < (1u << 24); seed++) {
        if (vneed(seed, f, kind) < ((size_t)3 * HEAD_MB << 20) / 2)
            continue;
        for (int m = 2; m < P; m++) {
            size_t in = 0;
            for (int x = 0; x < P; x++)
                in += vagg(seed, kind == VNEED_INPLACE, x, m);
            if (m != f && in == 0)
                return seed;
        }
    }
    return 0;
}

/* Element displacements (in pairs) of P blocks of @p cnt pairs: a random
 * order, gaps of 0 to 2 pairs; returns the span. */
static int vlayout(uint64_t salt, const int *cnt, int *displs)
{
    int order[P], at = 0;
    for (int j = 0; j < P; j++)
        order[j] = j;
    for (int j = P - 1; j > 0; j--) {
        const int x = (int)(mix(salt * 8 + (uint64_t)j) % (uint64_t)(j + 1)), t = order[j];
        order[j] = order[x];
        order[x] = t;
    }
    for (int k = 0; k < P; k++) {
        displs[order[k]] = at;
        at += cnt[order[k]] + (int)(mix(salt * 8 + 5 + (uint64_t)k) % 3);
    }
    return at;
}

/* The Alltoallv of case @p seed, this process's limit lowered when
 * @p limit; @p swap: it passes the swapped pairs on both sides, else ints;
 * @p inplace: every process MPI_IN_PLACE (ints). Returns the call's result;
 * when it succeeded, *ok says whether every received int is where it
 * belongs and the gaps kept their sentinel. */
static int vcall(int *sb, int *rb, int rank, uint64_t seed, int swap, int inplace, int limit,
                 int *ok)
{
    int sc[P], sd[P], rcn[P], rd[P], scu[P], sdu[P], rcu[P], rdu[P];
    const int u = swap ? 1 : 2; /* units per pair */
    for (int j = 0; j < P; j++) {
        sc[j] = vpairs(seed, inplace, rank, j);
        rcn[j] = vpairs(seed, inplace, j, rank);
    }
    vlayout(seed * 16 + (uint64_t)rank, sc, sd);
    const int rspan = vlayout(seed * 16 + 8 + (uint64_t)rank, rcn, rd);
    for (int j = 0; j < P; j++) {
        for (int i = 0; i < 2 * sc[j]; i++)
            sb[2 * (size_t)sd[j] + (size_t)(swap ? i ^ 1 : i)] = value(rank, j, i);
        scu[j] = u * sc[j];
        sdu[j] = u * sd[j];
        rcu[j] = u * rcn[j];
        rdu[j] = u * rd[j];
    }
    for (size_t k = 0; k < 2 * (size_t)rspan; k++)
        rb[k] = -1;
    for (int j = 0; j < P && inplace; j++) /* the blocks to send, where the replies land */
        for (int i = 0; i < 2 * rcn[j]; i++)
            rb[2 * (size_t)rd[j] + (size_t)i] = value(rank, j, i);
    const MPI_Datatype t = swap ? swapped : MPI_INT;
    tt_limit_as_on(limit, HEAD_MB);
    const int rc =
        TC_Alltoallv(inplace ? MPI_IN_PLACE : sb, scu, sdu, t, rb, rcu, rdu, t, MPI_COMM_WORLD);
    tt_limit_as_off();
    *ok = rc == MPI_SUCCESS;
    for (int x = 0; x < P && *ok; x++) /* each int checked, then back to the sentinel */
        for (int i = 0; i < 2 * rcn[x]; i++) {
            int *at = &rb[2 * (size_t)rd[x] + (size_t)(swap ? i ^ 1 : i)];
            *ok = *ok && *at == value(x, rank, i);
            *at = -1;
        }
    for (size_t k = 0; k < 2 * (size_t)rspan && *ok; k++)
        *ok = rb[k] == -1;
    return rc;
}

/* Process @p f fails (@p kind: what it cannot allocate), then nobody. */
static void vfailing_case(int *sb, int *rb, int rank, int f, vneed_t kind, const char *what)
{
    const uint64_t seed = vseed(f, kind);
    CHECK(seed != 0, "%s: no seed gives the sizes wanted", what);
    if (seed == 0)
        return;
    const int swap = rank == f && kind == VNEED_STAGE, inplace = kind == VNEED_INPLACE;
    int ok = 0;
    int rc = vcall(sb, rb, rank, seed, swap, inplace, rank == f, &ok);
    int cls = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    const int want = rank == f ? MPI_ERR_NO_MEM : MPI_ERR_OTHER;
    CHECK(cls == want, "%s (rank %d failing, seed %llu): rank %d returned %d (class %d), want %s",
          what, f, (unsigned long long)seed, rank, rc, cls,
          rank == f ? "MPI_ERR_NO_MEM" : "MPI_ERR_OTHER");
    tt_case_done();
    rc = vcall(sb, rb, rank, seed, swap, inplace, 0, &ok);
    CHECK(rc == MPI_SUCCESS && ok, "%s, then nobody failing (seed %llu): rc %d, data %s", what,
          (unsigned long long)seed, rc, ok ? "right" : "wrong");
    tt_case_done();
    small_ok(sb, rb, rank, P, what);
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
#if defined(__GLIBC__)
    mallopt(M_MMAP_THRESHOLD, 128 << 10); /* fixed: no dynamic threshold */
#endif
    int *sb = tt_xmalloc((size_t)SPAN * sizeof(int));
    int *rb = tt_xmalloc((size_t)SPAN * sizeof(int));
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
    vfailing_case(sb, rb, rank, 2, VNEED_STAGE, "Alltoallv: a member cannot stage its blocks");
    vfailing_case(sb, rb, rank, 0, VNEED_STAGE, "Alltoallv: a leader cannot stage its blocks");
    vfailing_case(sb, rb, rank, 3, VNEED_MEMBER, "Alltoallv: a member cannot allocate its row");
    vfailing_case(sb, rb, rank, 2, VNEED_INPLACE,
                  "Alltoallv in place: a member cannot copy the blocks it sends");
    vfailing_case(sb, rb, rank, 1, VNEED_LEADER, "Alltoallv: a leader cannot allocate its buffers");
    MPI_Type_free(&swapped);
    free(sb);
    free(rb);
    return tt_finish();
}
