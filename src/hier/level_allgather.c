/* The group Allgatherv of the hierarchical Allgather(v): recursive doubling,
 * ring and Bruck over PMPI point-to-point calls (level_allgather.h). */
#include "level_allgather.h"

#include <string.h>

const char *tc_hier_allgather_alg_name(tc_hier_allgather_alg_t alg)
{
    static const char *const names[TC_HIER_ALLGATHER_LAST] = {"recdbl", "ring", "bruck"};
    return (int)alg >= 0 && alg < TC_HIER_ALLGATHER_LAST ? names[alg] : "?";
}

tc_hier_allgather_alg_t tc_hier_allgather_alg_effective(tc_hier_allgather_alg_t alg, int n)
{
    if (alg == TC_HIER_ALLGATHER_RECDBL && (n & (n - 1)) != 0)
        return TC_HIER_ALLGATHER_BRUCK;
    return alg;
}

/* One round: @p slen bytes to @p dest while @p rlen bytes come from @p src. */
static tc_err_t tc_hier_ag_sendrecv(const char *sbuf, size_t slen, int dest, char *rbuf,
                                    size_t rlen, int src, MPI_Comm comm, int tag,
                                    const tc_wait_info_t *wait)
{
    return tc_wait_mpi_sendrecv(sbuf, (int)slen, dest, rbuf, (int)rlen, src, tag, comm, wait,
                                "hier allgather: exchange between the leaders");
}

/* Bytes of pieces [first, first + count) (indices modulo n). */
static size_t tc_hier_ag_span(const size_t *len, int n, int first, int count)
{
    size_t s = 0;
    for (int i = 0; i < count; i++)
        s += len[(first + i) % n];
    return s;
}

static tc_err_t tc_hier_ag_ring(char *buf, const size_t *off, const size_t *len, const int *members,
                                int n, int me, MPI_Comm comm, int tag, const tc_wait_info_t *wait)
{
    const int right = members[(me + 1) % n], left = members[(me + n - 1) % n];
    for (int s = 0; s < n - 1; s++) {
        const int out = (me - s + n) % n, in = (me - s - 1 + 2 * n) % n;
        tc_err_t rc = tc_hier_ag_sendrecv(buf + off[out], len[out], right, buf + off[in], len[in],
                                          left, comm, tag, wait);
        if (rc != TC_OK)
            return rc;
    }
    return TC_OK;
}

/* n a power of two: after round r member i holds the pieces of its aligned
 * index range of 2^(r+1) members, one contiguous run. */
static tc_err_t tc_hier_ag_recdbl(char *buf, const size_t *off, const size_t *len,
                                  const int *members, int n, int me, MPI_Comm comm, int tag,
                                  const tc_wait_info_t *wait)
{
    for (int d = 1; d < n; d <<= 1) {
        const int partner = me ^ d, mine = me & ~(d - 1), theirs = partner & ~(d - 1);
        tc_err_t rc = tc_hier_ag_sendrecv(
            buf + off[mine], tc_hier_ag_span(len, n, mine, d), members[partner], buf + off[theirs],
            tc_hier_ag_span(len, n, theirs, d), members[partner], comm, tag, wait);
        if (rc != TC_OK)
            return rc;
    }
    return TC_OK;
}

/* tmp holds pieces me, me + 1, ... (mod n) back to back: after round r the
 * first min(2^(r+1), n) of them. */
static tc_err_t tc_hier_ag_bruck(char *buf, const size_t *off, const size_t *len,
                                 const int *members, int n, int me, char *tmp, MPI_Comm comm,
                                 int tag, const tc_wait_info_t *wait)
{
    const size_t total = off[n - 1] + len[n - 1];
    size_t held = len[me];
    memcpy(tmp, buf + off[me], held);
    for (int d = 1; d < n; d <<= 1) {
        const int cnt = d < n - d ? d : n - d;
        const size_t rlen = tc_hier_ag_span(len, n, (me + d) % n, cnt);
        tc_err_t rc =
            tc_hier_ag_sendrecv(tmp, tc_hier_ag_span(len, n, me, cnt), members[(me - d + n) % n],
                                tmp + held, rlen, members[(me + d) % n], comm, tag, wait);
        if (rc != TC_OK)
            return rc;
        held += rlen;
    }
    /* Rotate into place: pieces me..n-1 first in tmp, then 0..me-1. */
    const size_t upper = total - off[me];
    memcpy(buf + off[me], tmp, upper);
    memcpy(buf, tmp + upper, off[me]);
    return TC_OK;
}

tc_err_t tc_hier_allgatherv_group(char *buf, const size_t *off, const size_t *len,
                                  const int *members, int n, int my_index,
                                  tc_hier_allgather_alg_t alg, char *tmp, MPI_Comm comm, int tag,
                                  const tc_wait_info_t *wait)
{
    if (n <= 1)
        return TC_OK;
    switch (tc_hier_allgather_alg_effective(alg, n)) {
    case TC_HIER_ALLGATHER_RECDBL:
        return tc_hier_ag_recdbl(buf, off, len, members, n, my_index, comm, tag, wait);
    case TC_HIER_ALLGATHER_RING:
        return tc_hier_ag_ring(buf, off, len, members, n, my_index, comm, tag, wait);
    default:
        return tc_hier_ag_bruck(buf, off, len, members, n, my_index, tmp, comm, tag, wait);
    }
}
