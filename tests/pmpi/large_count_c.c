/*
 * An unmodified MPI program calling the MPI-4 large-count collectives
 * (MPI_Bcast_c, MPI_Reduce_c, MPI_Allreduce_c, MPI_Reduce_scatter_block_c,
 * MPI_Reduce_scatter_c, MPI_Scan_c, MPI_Exscan_c, MPI_Allgather_c, MPI_Alltoall_c,
 * MPI_Allgatherv_c, MPI_Gather_c, MPI_Scatter_c) with small counts. Run with
 * LD_PRELOAD=libtopocoll_pmpi.so by run_with_stats.sh, which checks from
 * TC_STATS=1 output that every MPI_Bcast_c and gathering call went through
 * the library's shared-memory path, that the other calls reached the library (shm > 0 for
 * the reduce-scatters and scans from two processes on), and that none was
 * handed to the MPI as a large count (large_counts=0).
 *
 * Every rank's contribution is input(rank, index, salt), so every rank
 * computes the expected result itself. A negative MPI_Count (-2^32, which a
 * cast to int would make 0) must give MPI_ERR_COUNT through the
 * communicator's error handler (MPI_ERRORS_RETURN on a duplicate), and so
 * must a negative element of MPI_Reduce_scatter_c's recvcounts.
 *
 * MPI_Allgatherv_c where one process's displacements are beyond INT_MAX and
 * the others' small (check_allgatherv_far) must run the library's path on
 * every process too: the counts, not the displacements, choose the path.
 *
 * Where mpi.h has no _c calls (Open MPI 4.1; TOPOCOLL_HAVE_MPI_COUNT_C unset
 * by CMake) the program exits 77: skipped.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE */
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_test_common.h"

#ifdef TOPOCOLL_HAVE_MPI_COUNT_C

#include <sys/mman.h>

static int input(int rank, size_t i, int salt)
{
    uint32_t h = (uint32_t)(rank + 1) * 2654435761u ^ (uint32_t)i * 40503u ^ (uint32_t)salt;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    return (int)(h % 2001) - 1000;
}

/* Sum over ranks [0, upto) of element i. */
static int sum_upto(int upto, size_t i, int salt)
{
    int s = 0;
    for (int r = 0; r < upto; r++)
        s += input(r, i, salt);
    return s;
}

static long long bcasts, reduces, allreduces, rsbs, rss, scans, exscans;
static int me, np;

static int *ints(size_t n)
{
    return tt_xmalloc(n ? n * sizeof(int) : 1);
}

static void fill(int *buf, size_t n, int rank, int salt)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = input(rank, i, salt);
}

static void check_bcast(MPI_Comm comm, MPI_Count n, int root, int salt)
{
    int *buf = ints((size_t)n);
    if (me == root)
        fill(buf, (size_t)n, root, salt);
    else
        memset(buf, 0xA5, (size_t)n * sizeof(int));
    int rc = MPI_Bcast_c(buf, n, MPI_INT, root, comm);
    bcasts++;
    CHECK(rc == MPI_SUCCESS, "MPI_Bcast_c returned %d", rc);
    for (size_t i = 0; i < (size_t)n; i++)
        if (buf[i] != input(root, i, salt)) {
            CHECK(0, "MPI_Bcast_c n=%lld root %d: element %zu wrong", (long long)n, root, i);
            break;
        }
    free(buf);
}

static void check_reduce(MPI_Comm comm, MPI_Count n, int root, int all, int salt)
{
    int *send = ints((size_t)n), *recv = ints((size_t)n);
    fill(send, (size_t)n, me, salt);
    memset(recv, 0xA5, (size_t)n * sizeof(int));
    int rc;
    if (all) {
        rc = MPI_Allreduce_c(send, recv, n, MPI_INT, MPI_SUM, comm);
        allreduces++;
    } else {
        rc = MPI_Reduce_c(send, recv, n, MPI_INT, MPI_SUM, root, comm);
        reduces++;
    }
    CHECK(rc == MPI_SUCCESS, "%s returned %d", all ? "MPI_Allreduce_c" : "MPI_Reduce_c", rc);
    if (all || me == root)
        for (size_t i = 0; i < (size_t)n; i++)
            if (recv[i] != sum_upto(np, i, salt)) {
                CHECK(0, "%s n=%lld: element %zu wrong", all ? "MPI_Allreduce_c" : "MPI_Reduce_c",
                      (long long)n, i);
                break;
            }
    free(send);
    free(recv);
}

/* Reduce_scatter(_block)_c: rank r receives counts[r] elements starting at
 * the sum of the counts before it. @p block: every count is counts[0]. */
static void check_rs(MPI_Comm comm, const MPI_Count *counts, int block, int salt)
{
    size_t total = 0, off = 0;
    for (int r = 0; r < np; r++) {
        const size_t c = (size_t)counts[block ? 0 : r];
        if (r < me)
            off += c;
        total += c;
    }
    const size_t mine = (size_t)counts[block ? 0 : me];
    int *send = ints(total), *recv = ints(mine);
    fill(send, total, me, salt);
    memset(recv, 0xA5, mine * sizeof(int));
    int rc;
    if (block) {
        rc = MPI_Reduce_scatter_block_c(send, recv, counts[0], MPI_INT, MPI_SUM, comm);
        rsbs++;
    } else {
        rc = MPI_Reduce_scatter_c(send, recv, counts, MPI_INT, MPI_SUM, comm);
        rss++;
    }
    const char *fn = block ? "MPI_Reduce_scatter_block_c" : "MPI_Reduce_scatter_c";
    CHECK(rc == MPI_SUCCESS, "%s returned %d", fn, rc);
    for (size_t i = 0; i < mine; i++)
        if (recv[i] != sum_upto(np, off + i, salt)) {
            CHECK(0, "%s rank %d: element %zu wrong", fn, me, i);
            break;
        }
    free(send);
    free(recv);
}

static void check_scan(MPI_Comm comm, MPI_Count n, int exclusive, int salt)
{
    int *send = ints((size_t)n), *recv = ints((size_t)n);
    fill(send, (size_t)n, me, salt);
    memset(recv, 0xA5, (size_t)n * sizeof(int));
    int rc;
    if (exclusive) {
        rc = MPI_Exscan_c(send, recv, n, MPI_INT, MPI_SUM, comm);
        exscans++;
    } else {
        rc = MPI_Scan_c(send, recv, n, MPI_INT, MPI_SUM, comm);
        scans++;
    }
    const char *fn = exclusive ? "MPI_Exscan_c" : "MPI_Scan_c";
    CHECK(rc == MPI_SUCCESS, "%s returned %d", fn, rc);
    const int upto = exclusive ? me : me + 1;
    for (size_t i = 0; upto > 0 && i < (size_t)n; i++)
        if (recv[i] != sum_upto(upto, i, salt)) {
            CHECK(0, "%s rank %d n=%lld: element %zu wrong", fn, me, (long long)n, i);
            break;
        }
    free(send);
    free(recv);
}

static long long allgathers, allgathervs, gathers, scatters;

/* Block of rank r, element i: input(r, i, salt). Allgather_c (root < 0),
 * Gather_c or Scatter_c at @p root, @p n elements per block. */
static void check_gather(MPI_Comm comm, MPI_Count n, int root, int salt)
{
    const size_t bn = (size_t)n;
    int *mine = ints(bn), *all = ints(bn * (size_t)np);
    memset(all, 0xA5, bn * (size_t)np * sizeof(int));
    const char *fn;
    int rc;
    if (root < 0) {
        fn = "MPI_Allgather_c";
        fill(mine, bn, me, salt);
        rc = MPI_Allgather_c(mine, n, MPI_INT, all, n, MPI_INT, comm);
        allgathers++;
    } else if (salt % 2) {
        fn = "MPI_Gather_c";
        fill(mine, bn, me, salt);
        rc = MPI_Gather_c(mine, n, MPI_INT, all, n, MPI_INT, root, comm);
        gathers++;
    } else {
        fn = "MPI_Scatter_c";
        if (me == root)
            for (int r = 0; r < np; r++)
                fill(all + (size_t)r * bn, bn, r, salt);
        memset(mine, 0xA5, bn * sizeof(int));
        rc = MPI_Scatter_c(all, n, MPI_INT, mine, n, MPI_INT, root, comm);
        scatters++;
    }
    CHECK(rc == MPI_SUCCESS, "%s returned %d", fn, rc);
    if (root >= 0 && !(salt % 2)) {
        for (size_t i = 0; i < bn; i++)
            if (mine[i] != input(me, i, salt)) {
                CHECK(0, "%s n=%lld rank %d: element %zu wrong", fn, (long long)n, me, i);
                break;
            }
    } else if (root < 0 || me == root) {
        for (int r = 0; r < np; r++)
            for (size_t i = 0; i < bn; i++)
                if (all[(size_t)r * bn + i] != input(r, i, salt)) {
                    CHECK(0, "%s n=%lld: block %d element %zu wrong", fn, (long long)n, r, i);
                    r = np;
                    break;
                }
    }
    free(mine);
    free(all);
}

static long long alltoalls;

/* Alltoall_c of @p n elements per block: the block from rank r to rank j is
 * elements [j n, (j + 1) n) of input(r, ., salt). */
static void check_alltoall(MPI_Comm comm, MPI_Count n, int salt)
{
    const size_t bn = (size_t)n, all = bn * (size_t)np;
    int *send = ints(all), *recv = ints(all);
    fill(send, all, me, salt);
    memset(recv, 0xA5, all * sizeof(int));
    int rc = MPI_Alltoall_c(send, n, MPI_INT, recv, n, MPI_INT, comm);
    alltoalls++;
    CHECK(rc == MPI_SUCCESS, "MPI_Alltoall_c returned %d", rc);
    for (int r = 0; r < np; r++)
        for (size_t i = 0; i < bn; i++)
            if (recv[(size_t)r * bn + i] != input(r, (size_t)me * bn + i, salt)) {
                CHECK(0, "MPI_Alltoall_c n=%lld: block %d element %zu wrong", (long long)n, r, i);
                r = np;
                break;
            }
    free(send);
    free(recv);
}

/* Allgatherv_c: rank r contributes (r + v) % 3 * unit elements; blocks in
 * reverse rank order with a gap of one element, MPI_Aint displacements. */
static void check_allgatherv(MPI_Comm comm, int v, int unit, int salt)
{
    MPI_Count *counts = tt_xmalloc(sizeof(MPI_Count) * (size_t)np);
    MPI_Aint *displs = tt_xmalloc(sizeof(MPI_Aint) * (size_t)np);
    size_t at = 0;
    for (int r = np - 1; r >= 0; r--) {
        counts[r] = (MPI_Count)(((r + v) % 3) * unit);
        displs[r] = (MPI_Aint)at;
        at += (size_t)counts[r] + 1;
    }
    int *mine = ints((size_t)counts[me]), *all = ints(at);
    fill(mine, (size_t)counts[me], me, salt);
    memset(all, 0xA5, at * sizeof(int));
    int rc = MPI_Allgatherv_c(mine, counts[me], MPI_INT, all, counts, displs, MPI_INT, comm);
    allgathervs++;
    CHECK(rc == MPI_SUCCESS, "MPI_Allgatherv_c returned %d", rc);
    for (int r = 0; r < np; r++)
        for (size_t i = 0; i < (size_t)counts[r]; i++)
            if (all[(size_t)displs[r] + i] != input(r, i, salt)) {
                CHECK(0, "MPI_Allgatherv_c: block %d element %zu wrong", r, i);
                r = np;
                break;
            }
    free(counts);
    free(displs);
    free(mine);
    free(all);
}

/* Allgatherv_c where one process (far = mode % np) has displacements beyond
 * INT_MAX and the others small ones: the path is chosen on the counts, which
 * all share, so every process runs the library's (checked from TC_STATS by
 * run_with_stats.sh). The far process receives into a 7 GiB
 * MAP_NORESERVE mapping (only the touched pages cost memory):
 *   mode 0: every block beyond INT_MAX elements (rebased: span fits an int);
 *   mode 1: one block at 2^20, the others beyond INT_MAX (rebased), IN_PLACE;
 *   mode 2: one block at 64, the others beyond INT_MAX (the span does not
 *           fit: through a contiguous temporary buffer);
 *   mode 3: as 2 with MPI_IN_PLACE.
 * holey: the receive type is 2 bytes with a hole between them (extent 3,
 * sent as 2 MPI_BYTE): the hole bytes must stay untouched. Around every block
 * SENT bytes of sentinel must stay too. */
#define FAR_SENT 64
static unsigned char far_byte(int r, size_t k, int salt)
{
    return (unsigned char)(r * 131 + (int)(k * 7) + salt * 13 + (int)(k >> 8));
}

static void check_allgatherv_far(MPI_Comm comm, int mode, int holey, int salt)
{
    const int far = mode % np, in_place = mode == 1 || mode == 3;
    const MPI_Aint ext = holey ? 3 : 1;
    const size_t per = holey ? 2 : 1; /* data bytes per element */
    MPI_Datatype rtype = MPI_BYTE;
    if (holey) {
        MPI_Type_vector(2, 1, 2, MPI_BYTE, &rtype);
        MPI_Type_commit(&rtype);
    }
    MPI_Count *counts = tt_xmalloc(sizeof(MPI_Count) * (size_t)np);
    MPI_Aint *displs = tt_xmalloc(sizeof(MPI_Aint) * (size_t)np);
    const MPI_Aint step = 4096; /* elements between block starts: > block + 2 * SENT */
    for (int r = 0; r < np; r++)
        counts[r] = 1000 + 37 * r + 11 * mode;
    for (int r = 0; r < np; r++) {
        const MPI_Aint k = np - 1 - r; /* reverse rank order */
        if (me != far)
            displs[r] = FAR_SENT + k * step;
        else if (mode == 0)
            displs[r] = (MPI_Aint)INT_MAX + 1000 + k * step;
        else if (r == 0)
            displs[r] = mode == 1 ? (MPI_Aint)1 << 20 : FAR_SENT;
        else
            displs[r] = (MPI_Aint)INT_MAX + (mode == 1 ? (MPI_Aint)1 << 19 : 1000) + k * step;
    }
    size_t bytes = (size_t)(FAR_SENT + np * step) * (size_t)ext;
    if (me == far)
        bytes = (size_t)7 << 30;
    unsigned char *buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (buf == MAP_FAILED) {
        CHECK(0, "mmap of %zu bytes failed", bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* Sentinel over every block and SENT bytes either side. */
    for (int r = 0; r < np; r++) {
        const size_t off = (size_t)(displs[r] * ext);
        memset(buf + off - FAR_SENT, 0xA5, (size_t)counts[r] * (size_t)ext + 2 * FAR_SENT);
    }
    const size_t nsend = (size_t)counts[me] * per;
    unsigned char *mine = tt_xmalloc(nsend);
    for (size_t k = 0; k < nsend; k++)
        mine[k] = far_byte(me, k, salt);
    if (in_place) {
        unsigned char *own = buf + displs[me] * ext;
        for (size_t k = 0; k < nsend; k++)
            own[k / per * (size_t)ext + (holey ? k % 2 * 2 : 0)] = mine[k];
    }
    int rc = MPI_Allgatherv_c(in_place ? MPI_IN_PLACE : mine, (MPI_Count)nsend, MPI_BYTE, buf,
                              counts, displs, rtype, comm);
    allgathervs++;
    CHECK(rc == MPI_SUCCESS, "MPI_Allgatherv_c (far mode %d) returned %d", mode, rc);
    for (int r = 0; r < np; r++) {
        const unsigned char *b = buf + displs[r] * ext;
        const size_t n = (size_t)counts[r] * (size_t)ext;
        long bad = -1;
        for (size_t j = 0; bad < 0 && j < FAR_SENT; j++)
            if (b[-1 - (long)j] != 0xA5 || b[n + j] != 0xA5)
                bad = (long)j;
        CHECK(bad < 0,
              "MPI_Allgatherv_c far mode %d holey %d: sentinel %ld around block %d "
              "written",
              mode, holey, bad, r);
        for (size_t j = 0; j < n; j++) {
            const size_t e = j / (size_t)ext, o = j % (size_t)ext;
            const int want = holey && o == 1 ? 0xA5 : far_byte(r, e * per + (o ? 1 : 0), salt);
            if (b[j] != want) {
                CHECK(0,
                      "MPI_Allgatherv_c far mode %d holey %d (rank %d far): block %d byte %zu "
                      "is %d, not %d",
                      mode, holey, far, r, j, b[j], want);
                break;
            }
        }
    }
    munmap(buf, bytes);
    free(mine);
    free(counts);
    free(displs);
    if (holey)
        MPI_Type_free(&rtype);
}

/* A negative count must be reported, not wrapped into a valid int. Erroneous
 * calls are not counted (TC_STATS counts calls that ran). */
static void check_negative(MPI_Comm comm)
{
    const MPI_Count neg = -((MPI_Count)1 << 32); /* (int)neg == 0 */
    int buf[4] = {0}, out[4] = {0}, cls, rc;

    rc = MPI_Allreduce_c(buf, out, neg, MPI_INT, MPI_SUM, comm);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COUNT, "MPI_Allreduce_c count -2^32: class %d, want MPI_ERR_COUNT", cls);

    rc = MPI_Scan_c(buf, out, -1, MPI_INT, MPI_SUM, comm);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COUNT, "MPI_Scan_c count -1: class %d, want MPI_ERR_COUNT", cls);

    MPI_Count *counts = tt_xmalloc(sizeof(MPI_Count) * (size_t)np);
    for (int r = 0; r < np; r++)
        counts[r] = r == np - 1 ? neg : 1;
    int *send = ints((size_t)np), *recv = ints(1);
    rc = MPI_Reduce_scatter_c(send, recv, counts, MPI_INT, MPI_SUM, comm);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COUNT, "MPI_Reduce_scatter_c recvcounts[%d] = -2^32: class %d", np - 1,
          cls);
    free(counts);
    free(send);
    free(recv);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tt_check_np("large_count_c");
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    static const MPI_Count sizes[] = {0, 1, 7, 3000, 70000};
    const size_t nsizes = sizeof sizes / sizeof sizes[0];
    int salt = 0;
    for (int c = 0; c < 2; c++) {
        MPI_Comm comm = c ? dup : MPI_COMM_WORLD;
        for (size_t z = 0; z < nsizes; z++) {
            for (int root = 0; root < np; root++) {
                check_bcast(comm, sizes[z], root, ++salt);
                check_reduce(comm, sizes[z], root, 0, ++salt);
            }
            check_reduce(comm, sizes[z], 0, 1, ++salt);
            check_gather(comm, sizes[z], -1, ++salt);
            check_alltoall(comm, sizes[z], ++salt);
            for (int root = 0; root < np; root++) {
                check_gather(comm, sizes[z], root, 2 * ++salt + 1); /* Gather_c */
                check_gather(comm, sizes[z], root, 2 * ++salt);     /* Scatter_c */
            }
            check_rs(comm, &sizes[z], 1, ++salt);
            check_scan(comm, sizes[z], 0, ++salt);
            check_scan(comm, sizes[z], 1, ++salt);
        }
        /* v-variant: zeros and uneven counts, every element an MPI_Count */
        MPI_Count *counts = tt_xmalloc(sizeof(MPI_Count) * (size_t)np);
        for (int v = 0; v < 4; v++) {
            for (int r = 0; r < np; r++)
                counts[r] = (MPI_Count)(((r + v) % 3) * (v == 3 ? 20000 : 7 + v));
            check_rs(comm, counts, 0, ++salt);
            check_allgatherv(comm, v, v == 3 ? 20000 : 7 + v, ++salt);
        }
        free(counts);
    }
    for (int mode = 0; mode < 4; mode++)
        for (int holey = 0; holey < 2; holey++)
            check_allgatherv_far(dup, mode, holey, ++salt);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    check_negative(dup);
    MPI_Comm_free(&dup);
    const long all_errors = tt_failures_all();
    printf("tc-pmpi-test rank=%d bcasts=%lld reduces=%lld allreduces=%lld "
           "reduce_scatter_blocks=%lld reduce_scatters=%lld scans=%lld exscans=%lld "
           "allgathers=%lld allgathervs=%lld gathers=%lld scatters=%lld alltoalls=%lld "
           "large_counts=0 errors=%ld\n",
           me, bcasts, reduces, allreduces, rsbs, rss, scans, exscans, allgathers, allgathervs,
           gathers, scatters, alltoalls, tt_failures());
    fflush(stdout);
    MPI_Finalize();
    return all_errors == 0 ? 0 : 1;
}

#else /* no MPI_*_c in this MPI */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tt_check_np("large_count_c");
    if (tt_rank == 0)
        printf("large_count_c: this MPI declares no MPI_*_c calls: skipped\n");
    MPI_Finalize();
    return 77;
}

#endif
