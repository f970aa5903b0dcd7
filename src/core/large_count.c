/* TC_*_c: the MPI-4 large-count (MPI_Count) variants of the collectives,
 * on top of the int-based TC_* entry points.
 *
 * A call whose counts all fit an int (every count <= INT_MAX; for
 * TC_Reduce_scatter_c every element of recvcounts) runs the TC_* function, so
 * the library's path, its checks and its fallbacks apply unchanged. A
 * negative count becomes -1, never a positive int (a cast of -2^32 would be
 * 0): the TC_* checks report MPI_ERR_COUNT through the communicator's error
 * handler as for any negative count. Anything else (a count beyond INT_MAX)
 * goes to the MPI's own PMPI_*_c with the caller's arguments unchanged,
 * counted in TC_STATS as pmpi_large_count: the internal paths index
 * elements with int, and nothing is ever truncated.
 *
 * The choice must be the same on every process (else one process runs the
 * library's path and another the MPI's own: a deadlock), so it is made on
 * what every process passes alike: the counts, never the displacements of
 * MPI_Allgatherv_c (they place blocks in each process's own receive buffer
 * and may differ between processes; see TC_Allgatherv_c). For the
 * reductions, scans and reduce-scatters every process passes the same count
 * (and recvcounts) and datatype, so all choose the same. Bcast allows
 * different (count, datatype) pairs with the same type signature (so do the
 * gathering calls: sendcount/sendtype against recvcount(s)/recvtype); pairs
 * that fall on both sides of INT_MAX (2^31 bytes as MPI_BYTE on one process,
 * 2^28 doubles on another) are not supported: use the same datatype
 * everywhere for messages of more than INT_MAX elements. (Deciding on the
 * byte count instead would agree there, but would disagree with a process
 * that calls the int MPI_Bcast for the same message, and would move messages
 * of more than 2 GiB with int counts off the library's path.)
 *
 * Built only where the MPI declares the _c calls (TOPOCOLL_HAVE_MPI_COUNT_C,
 * set by CMake: MPICH 4 yes, Open MPI 4.1 no).
 */
#include <mpi.h>

#ifdef TOPOCOLL_HAVE_MPI_COUNT_C

#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>

#include "base/err.h"
#include "base/log.h"
#include "base/stats.h"
#include "ctx.h"
#include "topocoll.h"

/* The count for the TC_* call: itself when it fits, -1 for any negative one
 * (only called on counts <= INT_MAX). */
static inline int tc_lc_int(MPI_Count c)
{
    return c < 0 ? -1 : (int)c;
}

/* Beyond what the TC_* entry points take: the MPI's own. */
static inline bool tc_lc_large(MPI_Count c)
{
    return c > (MPI_Count)INT_MAX;
}

/* Count (and say once at TC_VERBOSE >= 1) one call handed to PMPI_*_c. */
static void tc_lc_fallback(tc_op_t op)
{
    static bool logged;
    tc_log_once(logged, TC_LOG_INFO,
                "large-count %s: a count beyond INT_MAX uses the MPI's own PMPI_*_c "
                "(TC_STATS: pmpi_large_count)",
                tc_stats_op_name(op));
    tc_stats_count(op, TC_PATH_PMPI_LARGE_COUNT);
}

int TC_Bcast_c(void *buf, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    if (tc_lc_large(count)) {
        tc_lc_fallback(TC_OP_BCAST);
        return PMPI_Bcast_c(buf, count, datatype, root, comm);
    }
    return TC_Bcast(buf, tc_lc_int(count), datatype, root, comm);
}

int TC_Reduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                MPI_Op op, int root, MPI_Comm comm)
{
    if (tc_lc_large(count)) {
        tc_lc_fallback(TC_OP_REDUCE);
        return PMPI_Reduce_c(sendbuf, recvbuf, count, datatype, op, root, comm);
    }
    return TC_Reduce(sendbuf, recvbuf, tc_lc_int(count), datatype, op, root, comm);
}

int TC_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm)
{
    if (tc_lc_large(count)) {
        tc_lc_fallback(TC_OP_ALLREDUCE);
        return PMPI_Allreduce_c(sendbuf, recvbuf, count, datatype, op, comm);
    }
    return TC_Allreduce(sendbuf, recvbuf, tc_lc_int(count), datatype, op, comm);
}

int TC_Reduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    if (tc_lc_large(recvcount)) {
        tc_lc_fallback(TC_OP_REDUCE_SCATTER_BLOCK);
        return PMPI_Reduce_scatter_block_c(sendbuf, recvbuf, recvcount, datatype, op, comm);
    }
    return TC_Reduce_scatter_block(sendbuf, recvbuf, tc_lc_int(recvcount), datatype, op, comm);
}

int TC_Reduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    /* TC_Reduce_scatter reports these (the communicator first). */
    static const int dummy[1] = {0};
    if (comm == MPI_COMM_NULL)
        return TC_Reduce_scatter(sendbuf, recvbuf, dummy, datatype, op, comm);
    if (!recvcounts)
        return TC_Reduce_scatter(sendbuf, recvbuf, NULL, datatype, op, comm);
    int inter, size;
    const tc_ctx_t *ctx = tc_ctx_lookup(comm);
    if (ctx) {
        inter = ctx->is_inter;
        size = ctx->size;
    } else if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS ||
               PMPI_Comm_size(comm, &size) != MPI_SUCCESS) {
        return TC_Reduce_scatter(sendbuf, recvbuf, dummy, datatype, op, comm);
    }
    if (inter) {
        /* TC_Reduce_scatter hands these to the MPI unread: so does this. */
        tc_stats_count(TC_OP_REDUCE_SCATTER, TC_PATH_PMPI_INTERCOMM);
        return PMPI_Reduce_scatter_c(sendbuf, recvbuf, recvcounts, datatype, op, comm);
    }
    for (int i = 0; i < size; i++) {
        if (tc_lc_large(recvcounts[i])) {
            tc_lc_fallback(TC_OP_REDUCE_SCATTER);
            return PMPI_Reduce_scatter_c(sendbuf, recvbuf, recvcounts, datatype, op, comm);
        }
    }
    int small[64];
    int *counts = size <= 64 ? small : malloc(sizeof(int) * (size_t)size);
    if (!counts)
        return tc_ctx_error(comm, tc_err(TC_ERR_NOMEM), "MPI_Reduce_scatter_c: recvcounts copy");
    for (int i = 0; i < size; i++)
        counts[i] = tc_lc_int(recvcounts[i]);
    const int rc = TC_Reduce_scatter(sendbuf, recvbuf, counts, datatype, op, comm);
    if (counts != small)
        free(counts);
    return rc;
}

int TC_Scan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm)
{
    if (tc_lc_large(count)) {
        tc_lc_fallback(TC_OP_SCAN);
        return PMPI_Scan_c(sendbuf, recvbuf, count, datatype, op, comm);
    }
    return TC_Scan(sendbuf, recvbuf, tc_lc_int(count), datatype, op, comm);
}

int TC_Exscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                MPI_Op op, MPI_Comm comm)
{
    if (tc_lc_large(count)) {
        tc_lc_fallback(TC_OP_EXSCAN);
        return PMPI_Exscan_c(sendbuf, recvbuf, count, datatype, op, comm);
    }
    return TC_Exscan(sendbuf, recvbuf, tc_lc_int(count), datatype, op, comm);
}

/* ---- Allgather(v), Gather, Scatter ---------------------------------------
 * Only the counts the MPI reads on this process decide (an insignificant one,
 * e.g. a non-root's recvcount in Gather or sendcount with MPI_IN_PLACE, may
 * be anything: it is passed on as 0 when it does not fit). The root of
 * MPI_Gather_c decides on its recvcount, the others on their sendcount (and
 * conversely for MPI_Scatter_c): the same number when the datatypes are the
 * same, which is all this supports beyond INT_MAX (above). MPI_Gatherv_c and
 * MPI_Scatterv_c are not defined: their counts are the root's alone, so a
 * non-root could not tell that one of its peers' counts is beyond INT_MAX,
 * and the processes would take different paths. */

/* @p c as the TC_* argument in *out; false if @p significant and too large. */
static bool tc_lc_arg(MPI_Count c, bool significant, int *out)
{
    if (tc_lc_large(c)) {
        *out = 0;
        return !significant;
    }
    *out = tc_lc_int(c);
    return true;
}

/* A displacement that fits an int (negative ones are valid). */
static bool tc_lc_disp(MPI_Aint d)
{
    return d >= (MPI_Aint)INT_MIN && d <= (MPI_Aint)INT_MAX;
}

int TC_Allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    int sc, rc;
    if (!tc_lc_arg(sendcount, sendbuf != MPI_IN_PLACE, &sc) || !tc_lc_arg(recvcount, true, &rc)) {
        tc_lc_fallback(TC_OP_ALLGATHER);
        return PMPI_Allgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    }
    return TC_Allgather(sendbuf, sc, sendtype, recvbuf, rc, recvtype, comm);
}

/* MPI_Alltoall_c: as MPI_Allgather_c (every process passes the same counts
 * when the datatypes are the same). MPI_Alltoallv_c is not defined: each
 * process's counts are its own, so one could not tell that a peer's count is
 * beyond INT_MAX. */
int TC_Alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    int sc, rc;
    if (!tc_lc_arg(sendcount, sendbuf != MPI_IN_PLACE, &sc) || !tc_lc_arg(recvcount, true, &rc)) {
        tc_lc_fallback(TC_OP_ALLTOALL);
        return PMPI_Alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    }
    return TC_Alltoall(sendbuf, sc, sendtype, recvbuf, rc, recvtype, comm);
}

/* Moves @p n elements of @p type from @p src to @p dst (both laid out with the
 * type's extent, non-overlapping) through its type map only, in chunks packed
 * into @p pack (@p packsize bytes, room for @p chunk elements): the holes of a
 * derived type in @p dst are never written. */
static int tc_lc_move(const char *src, char *dst, MPI_Count n, MPI_Datatype type, MPI_Aint extent,
                      char *pack, MPI_Count packsize, MPI_Count chunk, MPI_Comm comm)
{
    for (MPI_Count done = 0; done < n; done += chunk) {
        const MPI_Count k = n - done < chunk ? n - done : chunk;
        MPI_Count pos = 0;
        int rc = PMPI_Pack_c(src + done * extent, k, type, pack, packsize, &pos, comm);
        if (rc != MPI_SUCCESS)
            return rc;
        const MPI_Count used = pos;
        pos = 0;
        rc = PMPI_Unpack_c(pack, used, &pos, dst + done * extent, k, type, comm);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* TC_Allgatherv with displacements that do not fit an int, laid out
 * contiguously in a temporary buffer (block i at prefix[i] elements: @p sum
 * fits an int), then each block moved to recvbuf + displs[i] * extent by the
 * type map (tc_lc_move). */
static int tc_lc_allgatherv_tmp(const void *sendbuf, int sc, MPI_Datatype sendtype, void *recvbuf,
                                const MPI_Count recvcounts[], const MPI_Aint displs[],
                                MPI_Datatype recvtype, MPI_Comm comm, int size, int *counts,
                                int *prefix, MPI_Count sum)
{
    MPI_Aint lb, extent, tlb, textent;
    int rank, rc;
    if ((rc = PMPI_Type_get_extent(recvtype, &lb, &extent)) != MPI_SUCCESS ||
        (rc = PMPI_Type_get_true_extent(recvtype, &tlb, &textent)) != MPI_SUCCESS ||
        (rc = PMPI_Comm_rank(comm, &rank)) != MPI_SUCCESS)
        return TC_Allgatherv(sendbuf, sc, sendtype, recvbuf, counts, prefix, recvtype, comm);
    (void)lb;
    /* Elements k = 0..sum-1 at tmp + k * extent, each touching
     * [true_lb, true_lb + true_extent) from there (extent may be negative). */
    const MPI_Aint span = (MPI_Aint)(sum > 0 ? sum - 1 : 0) * extent;
    const MPI_Aint lo = tlb + (span < 0 ? span : 0), hi = tlb + (span > 0 ? span : 0) + textent;
    char *mem = malloc(hi > lo ? (size_t)(hi - lo) : 1);
    MPI_Count chunk = 0, packsize = 0;
    if (mem && sum > 0) {
        MPI_Count one = 0;
        if ((rc = PMPI_Pack_size_c(1, recvtype, comm, &one)) != MPI_SUCCESS) {
            free(mem);
            return rc;
        }
        /* About 1 MiB packed at a time (at least one element; all of an
         * empty type's at once). */
        chunk = one <= 0 ? sum : one < ((MPI_Count)1 << 20) ? ((MPI_Count)1 << 20) / one : 1;
        packsize = one <= 0 ? 1 : chunk * one;
    }
    char *pack = mem ? malloc(packsize > 0 ? (size_t)packsize : 1) : NULL;
    if (!pack) {
        free(mem);
        return tc_ctx_error(comm, tc_err(TC_ERR_NOMEM), "MPI_Allgatherv_c: displacements copy");
    }
    char *tmp = mem - lo;
    char *const rbuf = recvbuf;
    rc = MPI_SUCCESS;
    if (sendbuf == MPI_IN_PLACE && recvcounts[rank] > 0)
        rc = tc_lc_move(rbuf + displs[rank] * extent, tmp + (MPI_Aint)prefix[rank] * extent,
                        recvcounts[rank], recvtype, extent, pack, packsize, chunk, comm);
    if (rc == MPI_SUCCESS)
        rc = TC_Allgatherv(sendbuf, sc, sendtype, tmp, counts, prefix, recvtype, comm);
    for (int i = 0; rc == MPI_SUCCESS && i < size; i++)
        if (recvcounts[i] > 0 && !(i == rank && sendbuf == MPI_IN_PLACE))
            rc = tc_lc_move(tmp + (MPI_Aint)prefix[i] * extent, rbuf + displs[i] * extent,
                            recvcounts[i], recvtype, extent, pack, packsize, chunk, comm);
    free(pack);
    free(mem);
    return rc;
}

int TC_Allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                    MPI_Comm comm)
{
    static const int dummy[1] = {0};
    int sc, inter, size;
    if (comm == MPI_COMM_NULL || !recvcounts || !displs)
        return TC_Allgatherv(sendbuf, 0, sendtype, recvbuf, recvcounts ? dummy : NULL,
                             displs ? dummy : NULL, recvtype, comm);
    const tc_ctx_t *ctx = tc_ctx_lookup(comm);
    if (ctx) {
        inter = ctx->is_inter;
        size = ctx->size;
    } else if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS ||
               PMPI_Comm_size(comm, &size) != MPI_SUCCESS) {
        return TC_Allgatherv(sendbuf, 0, sendtype, recvbuf, dummy, dummy, recvtype, comm);
    }
    if (inter) {
        /* recvcounts are over the remote group: to the MPI, as TC_Allgatherv does. */
        tc_stats_count(TC_OP_ALLGATHERV, TC_PATH_PMPI_INTERCOMM);
        return PMPI_Allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                 recvtype, comm);
    }
    /* The path is chosen on the counts alone, which every process passes alike
     * (recvcounts; sendcount is this process's recvcounts[rank]): every count
     * and their sum fit an int. The displacements are this process's own
     * (they locate blocks in its receive buffer, and may differ between
     * processes), so they never decide the path: they only decide below how
     * this process expresses its receive buffer to TC_Allgatherv. */
    bool fits = tc_lc_arg(sendcount, sendbuf != MPI_IN_PLACE, &sc);
    MPI_Count sum = 0;
    for (int i = 0; fits && i < size; i++) {
        fits = !tc_lc_large(recvcounts[i]);
        sum += recvcounts[i] > 0 ? recvcounts[i] : 0;
    }
    if (!fits || tc_lc_large(sum)) {
        tc_lc_fallback(TC_OP_ALLGATHERV);
        return PMPI_Allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                 recvtype, comm);
    }
    /* The displacements of the blocks with data (a negative count is an
     * error TC_Allgatherv reports on every process alike). */
    bool disp_fit = true, any = false;
    MPI_Aint dmin = 0, dmax = 0;
    for (int i = 0; i < size; i++) {
        if (recvcounts[i] <= 0)
            continue;
        disp_fit = disp_fit && tc_lc_disp(displs[i]);
        dmin = any && dmin < displs[i] ? dmin : displs[i];
        dmax = any && dmax > displs[i] ? dmax : displs[i];
        any = true;
    }
    int small[2 * 64];
    int *counts = size <= 64 ? small : malloc(2 * sizeof(int) * (size_t)size);
    if (!counts)
        return tc_ctx_error(comm, tc_err(TC_ERR_NOMEM), "MPI_Allgatherv_c: recvcounts copy");
    int *idispls = counts + size;
    int rc;
    if (disp_fit) {
        /* (a) as given (a block without data keeps its displacement when it
         * fits, else 0: nothing is read or written there). */
        for (int i = 0; i < size; i++) {
            counts[i] = tc_lc_int(recvcounts[i]);
            idispls[i] = tc_lc_disp(displs[i]) ? (int)displs[i] : 0;
        }
        rc = TC_Allgatherv(sendbuf, sc, sendtype, recvbuf, counts, idispls, recvtype, comm);
    } else if (dmax - dmin <= (MPI_Aint)INT_MAX) {
        /* (b) relative to the lowest block: recvbuf + dmin * extent. */
        MPI_Aint lb, extent;
        rc = PMPI_Type_get_extent(recvtype, &lb, &extent);
        for (int i = 0; i < size; i++) {
            counts[i] = tc_lc_int(recvcounts[i]);
            idispls[i] = recvcounts[i] > 0 ? (int)(displs[i] - dmin) : 0;
        }
        /* A failure (an invalid recvtype) is TC_Allgatherv's to report. */
        char *base = (char *)recvbuf + (rc == MPI_SUCCESS ? dmin * extent : 0);
        rc = TC_Allgatherv(sendbuf, sc, sendtype, base, counts, idispls, recvtype, comm);
    } else {
        /* (c) through a contiguous temporary buffer. */
        int at = 0;
        for (int i = 0; i < size; i++) {
            counts[i] = tc_lc_int(recvcounts[i]);
            idispls[i] = at;
            at += counts[i] > 0 ? counts[i] : 0; /* at most sum: fits */
        }
        rc = tc_lc_allgatherv_tmp(sendbuf, sc, sendtype, recvbuf, recvcounts, displs, recvtype,
                                  comm, size, counts, idispls, sum);
    }
    if (counts != small)
        free(counts);
    return rc;
}

/* Whether this process is @p root of @p comm (false for an intercommunicator,
 * or when it cannot be told: TC_* then reports the error). */
static bool tc_lc_is_root(MPI_Comm comm, int root)
{
    int rank, inter;
    const tc_ctx_t *ctx = comm == MPI_COMM_NULL ? NULL : tc_ctx_lookup(comm);
    if (ctx)
        return ctx->is_inter ? root == MPI_ROOT : ctx->rank == root;
    if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
        return false;
    if (inter)
        return root == MPI_ROOT;
    return PMPI_Comm_rank(comm, &rank) == MPI_SUCCESS && rank == root;
}

int TC_Gather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    const bool at_root = tc_lc_is_root(comm, root);
    int sc, rc;
    if (!tc_lc_arg(sendcount, sendbuf != MPI_IN_PLACE && root != MPI_ROOT, &sc) ||
        !tc_lc_arg(recvcount, at_root, &rc)) {
        tc_lc_fallback(TC_OP_GATHER);
        return PMPI_Gather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                             comm);
    }
    return TC_Gather(sendbuf, sc, sendtype, recvbuf, rc, recvtype, root, comm);
}

int TC_Scatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                 MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    const bool at_root = tc_lc_is_root(comm, root);
    int sc, rc;
    if (!tc_lc_arg(sendcount, at_root, &sc) ||
        !tc_lc_arg(recvcount, recvbuf != MPI_IN_PLACE && root != MPI_ROOT, &rc)) {
        tc_lc_fallback(TC_OP_SCATTER);
        return PMPI_Scatter_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                              comm);
    }
    return TC_Scatter(sendbuf, sc, sendtype, recvbuf, rc, recvtype, root, comm);
}

#else

/* ISO C: a translation unit is not empty. */
typedef int tc_large_count_unavailable_t;

#endif /* TOPOCOLL_HAVE_MPI_COUNT_C */
