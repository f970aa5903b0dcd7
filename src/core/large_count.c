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
 * The choice is each process's, on its own arguments. For the reductions
 * every process passes the same count (and recvcounts), so all choose the
 * same. Bcast allows different (count, datatype) pairs with the same type
 * signature (so do the gathering calls); pairs that fall on both sides of
 * INT_MAX (2^31 bytes as MPI_BYTE on one process, 2^28 doubles on another)
 * are not supported: use the same datatype everywhere for messages of more
 * than INT_MAX elements.
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
 * be anything: it is passed on as 0 when it does not fit). MPI_Gatherv_c and
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
    bool fits = tc_lc_arg(sendcount, sendbuf != MPI_IN_PLACE, &sc);
    for (int i = 0; fits && i < size; i++)
        fits = !tc_lc_large(recvcounts[i]) && tc_lc_disp(displs[i]);
    if (!fits) {
        tc_lc_fallback(TC_OP_ALLGATHERV);
        return PMPI_Allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                 recvtype, comm);
    }
    int small[2 * 64];
    int *counts = size <= 64 ? small : malloc(2 * sizeof(int) * (size_t)size);
    if (!counts)
        return tc_ctx_error(comm, tc_err(TC_ERR_NOMEM), "MPI_Allgatherv_c: recvcounts copy");
    int *idispls = counts + size;
    for (int i = 0; i < size; i++) {
        counts[i] = tc_lc_int(recvcounts[i]);
        idispls[i] = (int)displs[i];
    }
    const int rc = TC_Allgatherv(sendbuf, sc, sendtype, recvbuf, counts, idispls, recvtype, comm);
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
