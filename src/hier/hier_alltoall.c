/* Alltoall(v) through the node leaders (hier_alltoall.h). */
#include "hier_alltoall.h"
#include "base/tags.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "level_bcast.h"

tc_err_t tc_hier_alltoall_plan_new(const tc_hier_t *h, int rank, int p, tc_hier_a2a_plan_t **out)
{
    bool known = h && h->locs && h->p == p && h->a2a_aggregate > 0;
    for (int x = 0; known && x < p; x++)
        known = h->locs[x].id[TC_LEVEL_NODE] != TC_LOC_UNKNOWN;
    const size_t np = known ? (size_t)p : 0;
    /* One allocation: the plan, off and the node ids (8-byte aligned), then
     * the ints. */
    tc_hier_a2a_plan_t *pl = malloc(sizeof *pl + np * (sizeof(size_t) + sizeof(int64_t)) +
                                    (known ? 4 * np + 1 : 0) * sizeof(int));
    *out = pl;
    if (!pl)
        return tc_err(TC_ERR_NOMEM);
    memset(pl, 0, sizeof *pl);
    pl->wait = h ? h->msg_wait : NULL;
    if (!known)
        return TC_OK; /* never aggregates */
    pl->off = (size_t *)(void *)(pl + 1);
    int64_t *ids = (int64_t *)(void *)(pl->off + p);
    int *ints = (int *)(void *)(ids + p);
    pl->node = ints;
    pl->pos = ints + p;
    pl->memb = ints + 2 * p;
    pl->start = ints + 3 * p;
    int n = 0;
    for (int x = 0; x < p; x++) {
        const int64_t id = h->locs[x].id[TC_LEVEL_NODE];
        int k = 0;
        while (k < n && ids[k] != id)
            k++;
        if (k == n)
            ids[n++] = id;
        pl->node[x] = k;
    }
    pl->n = n;
    for (int k = 0; k <= n; k++)
        pl->start[k] = 0;
    for (int x = 0; x < p; x++)
        pl->start[pl->node[x] + 1]++;
    int maxsize = 0;
    for (int k = 0; k < n; k++) {
        maxsize = pl->start[k + 1] > maxsize ? pl->start[k + 1] : maxsize;
        pl->start[k + 1] += pl->start[k];
    }
    pl->nmax = maxsize;
    /* Counting sort by node, ascending x: each node's ranks ascending. */
    int *fill = pl->pos; /* the next free place per node first, then the positions */
    for (int k = 0; k < n; k++)
        fill[k] = pl->start[k];
    for (int x = 0; x < p; x++)
        pl->memb[fill[pl->node[x]]++] = x;
    for (int k = 0; k < n; k++)
        for (int i = pl->start[k]; i < pl->start[k + 1]; i++)
            pl->pos[pl->memb[i]] = i - pl->start[k];
    /* The leader's exchange buffers, in blocks: node k's part is this
     * node's processes times k's. */
    const int a = pl->node[rank], na = pl->start[a + 1] - pl->start[a];
    size_t off = 0;
    for (int k = 0; k < n; k++) {
        pl->off[k] = off;
        if (k != a)
            off += (size_t)na * (size_t)(pl->start[k + 1] - pl->start[k]);
    }
    /* The largest aggregated block such that a node's rows stay within the
     * bound (each process sends at most p such blocks). */
    const size_t rows = (size_t)maxsize * (size_t)p;
    pl->small = TC_HIER_A2A_ROWS_MAX / rows < h->a2a_aggregate ? TC_HIER_A2A_ROWS_MAX / rows
                                                               : h->a2a_aggregate;
    if (n < 2 || n == p)
        pl->small = 0;
    return TC_OK;
}

void tc_hier_alltoall_plan_free(tc_hier_a2a_plan_t *pl)
{
    free(pl);
}

/* Complete @p nreq requests, the first error reported; the plan's message
 * waits (a timeout names no single peer: the requests go to several). */
static tc_err_t tc_hier_a2a_wait(const tc_hier_a2a_plan_t *pl, int nreq, MPI_Request *req)
{
    return tc_wait_mpi_all(nreq, req, pl->wait, "hier alltoall: the exchange's messages", -1);
}

/* Complete @p nreq requests; want[i] >= 0: request i receives that many
 * bytes, and *short_ becomes true when fewer came (the empty message of a
 * process that failed, tc_hier_alltoall). The first error reported; @p stage
 * names the wait in a timeout (NULL: the exchange's messages). */
static tc_err_t tc_hier_a2a_wait_len(const tc_hier_a2a_plan_t *pl, int nreq, MPI_Request *req,
                                     const int *want, bool *short_, const char *stage)
{
    tc_err_t rc = TC_OK;
    for (int i = 0; i < nreq; i++) {
        MPI_Status st;
        int got = 0;
        memset(&st, 0, sizeof st); /* gcc: it cannot see that the wait sets it */
        const int rc_wait = tc_wait_mpi_request(
            &req[i], &st, pl->wait, stage ? stage : "hier alltoall: the exchange's messages", -1);
        if (rc == TC_OK)
            rc = rc_wait;
        if (rc_wait == MPI_SUCCESS && want[i] >= 0 &&
            (PMPI_Get_count(&st, MPI_BYTE, &got) != MPI_SUCCESS || got != want[i]))
            *short_ = true;
    }
    return rc;
}

/* priv's handler set to MPI_ERRORS_RETURN for the receives of a process
 * that takes its messages without a buffer: the MPI truncates them and
 * reports it through priv's handler (the user's, inherited by the
 * duplicate). Returns the handler that tc_hier_a2a_loud puts back. */
static MPI_Errhandler tc_hier_a2a_quiet(MPI_Comm priv)
{
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    (void)PMPI_Comm_get_errhandler(priv, &eh);
    (void)PMPI_Comm_set_errhandler(priv, MPI_ERRORS_RETURN);
    return eh;
}

static void tc_hier_a2a_loud(MPI_Comm priv, MPI_Errhandler eh)
{
    if (eh != MPI_ERRHANDLER_NULL) {
        (void)PMPI_Comm_set_errhandler(priv, eh);
        (void)PMPI_Errhandler_free(&eh);
    }
}

/* A leader that cannot take part (@p failed says why): it takes every
 * message its members and the other leaders send it without a buffer (a
 * receive of 0 bytes, which the MPI truncates: tc_hier_a2a_quiet), and
 * sends each of them an empty message instead of its data: the flag that
 * fails the call there. @p counts: the members' sizes rows too (an
 * Alltoallv leader that has not taken them). The empty messages are sent
 * first (eager in both MPIs), so leaders draining one another cannot wait
 * in a cycle. */
static tc_err_t tc_hier_a2a_drain(const tc_hier_a2a_plan_t *pl, int a, MPI_Comm priv,
                                  tc_err_t failed, bool counts)
{
    const int *ma = pl->memb + pl->start[a], na = pl->start[a + 1] - pl->start[a];
    char none = 0;
    MPI_Errhandler eh = tc_hier_a2a_quiet(priv);
    for (int b = 0; b < pl->n; b++)
        if (b != a)
            (void)PMPI_Send(&none, 0, MPI_BYTE, pl->memb[pl->start[b]], TC_TAG_A2A_EXCHANGE, priv);
    for (int i = 1; i < na && counts; i++)
        (void)PMPI_Recv(&none, 0, MPI_BYTE, ma[i], TC_TAG_A2A_COUNTS, priv, MPI_STATUS_IGNORE);
    for (int i = 1; i < na; i++)
        (void)PMPI_Recv(&none, 0, MPI_BYTE, ma[i], TC_TAG_A2A_GATHER, priv, MPI_STATUS_IGNORE);
    for (int b = 0; b < pl->n; b++)
        if (b != a)
            (void)PMPI_Recv(&none, 0, MPI_BYTE, pl->memb[pl->start[b]], TC_TAG_A2A_EXCHANGE, priv,
                            MPI_STATUS_IGNORE);
    for (int i = 1; i < na; i++)
        (void)PMPI_Send(&none, 0, MPI_BYTE, ma[i], TC_TAG_A2A_SCATTER, priv);
    tc_hier_a2a_loud(priv, eh);
    return failed;
}

/* A leader gathers its node's rows, sends every other node's leader one
 * message (for each of its processes in rank order, the blocks to that
 * node's processes in rank order), receives one from each, and builds every
 * member's receive row in rank order of the sources: correct whatever the
 * placement (ranks interleaved across nodes).
 *
 * A failure travels with these messages (hier_alltoall.h): a process that
 * cannot take part sends an empty message where its data would go; a leader
 * that received one sends empty messages onwards (to the other leaders if
 * it has not sent its data yet, and to its members in any case), and a
 * failed leader drains what it is sent (tc_hier_a2a_drain). Every message of
 * the call carries at least one block, so an empty one is never data. */
tc_err_t tc_hier_alltoall(const tc_hier_a2a_plan_t *pl, const char *sbase, char *rbase,
                          size_t block, int rank, int p, MPI_Comm priv, tc_err_t failed)
{
    const size_t B = block;
    const int a = pl->node[rank], na = pl->start[a + 1] - pl->start[a], n = pl->n;
    const int *ma = pl->memb + pl->start[a];
    const size_t row = (size_t)p * B;
    char none = 0;
    if (rank != ma[0]) {
        MPI_Status st;
        int got = 0;
        const int rc = tc_wait_mpi_sendrecv_tags(
            failed ? &none : sbase, failed ? 0 : (int)row, ma[0], TC_TAG_A2A_GATHER,
            failed ? &none : rbase, failed ? 0 : (int)row, ma[0], TC_TAG_A2A_SCATTER, priv, &st,
            pl->wait, "hier alltoall: my row to the node's leader and back");
        if (failed != TC_OK || rc != MPI_SUCCESS)
            return failed != TC_OK ? failed : rc;
        /* An empty row: another process could not take part (on these
         * paths an allocation: the blocks' staging or the leader's
         * buffers). It returns TC_ERR_NOMEM, the others TC_ERR_PEER
         * (docs/hacking.md). */
        if (PMPI_Get_count(&st, MPI_BYTE, &got) != MPI_SUCCESS || (size_t)got != row)
            return tc_err(TC_ERR_PEER);
        return TC_OK;
    }
    const size_t xbytes = (size_t)na * (size_t)(p - na) * B; /* each exchange buffer */
    char *g = failed ? NULL : malloc(2 * (size_t)(na - 1) * row + 2 * xbytes + 1);
    MPI_Request *req = failed ? NULL : malloc((size_t)(na + 2 * n) * sizeof *req);
    int *want = failed ? NULL : calloc((size_t)(na + 2 * n), sizeof *want);
    tc_err_t rc = TC_OK;
    int nreq = 0;
    bool peer = false; /* an empty message came: another process failed */
    if (!g || !req || !want) {
        rc = tc_hier_a2a_drain(pl, a, priv, failed ? failed : tc_err(TC_ERR_NOMEM), false);
        goto fn_exit;
    }
    char *out = g + (size_t)(na - 1) * row, *spack = out + (size_t)(na - 1) * row,
         *rpack = spack + xbytes;
#define TC_HIER_A2A_ROW(i) ((i) == 0 ? sbase : g + (size_t)((i)-1) * row)
    for (int i = 1; i < na; i++) {
        want[nreq] = (int)row;
        if ((rc = PMPI_Irecv(g + (size_t)(i - 1) * row, (int)row, MPI_BYTE, ma[i],
                             TC_TAG_A2A_GATHER, priv, &req[nreq++])) != MPI_SUCCESS)
            goto fn_exit;
    }
    if ((rc = tc_hier_a2a_wait_len(pl, nreq, req, want, &peer, NULL)) != TC_OK)
        goto fn_exit;
    nreq = 0;
    for (int b = 0; b < n; b++) {
        if (b == a)
            continue;
        const int nb = pl->start[b + 1] - pl->start[b];
        const int *mb = pl->memb + pl->start[b];
        const int cnt = (int)((size_t)na * (size_t)nb * B);
        want[nreq] = cnt;
        if ((rc = PMPI_Irecv(rpack + pl->off[b] * B, cnt, MPI_BYTE, mb[0], TC_TAG_A2A_EXCHANGE,
                             priv, &req[nreq++])) != MPI_SUCCESS)
            goto fn_exit;
        char *d = spack + pl->off[b] * B;
        for (int i = 0; i < na && !peer; i++)
            for (int j = 0; j < nb; j++, d += B)
                memcpy(d, TC_HIER_A2A_ROW(i) + (size_t)mb[j] * B, B);
        want[nreq] = -1;
        if ((rc = PMPI_Isend(spack + pl->off[b] * B, peer ? 0 : cnt, MPI_BYTE, mb[0],
                             TC_TAG_A2A_EXCHANGE, priv, &req[nreq++])) != MPI_SUCCESS)
            goto fn_exit;
    }
    if ((rc = tc_hier_a2a_wait_len(pl, nreq, req, want, &peer, NULL)) != TC_OK)
        goto fn_exit;
    nreq = 0;
    for (int j = na - 1; j >= 0 && !peer; j--) { /* the members' rows first, ours last */
        char *dst = j == 0 ? rbase : out + (size_t)(j - 1) * row;
        for (int x = 0; x < p; x++) {
            const int k = pl->node[x];
            const size_t px = (size_t)pl->pos[x];
            const char *src = k == a ? TC_HIER_A2A_ROW(px) + (size_t)ma[j] * B
                                     : rpack + (pl->off[k] + px * (size_t)na + (size_t)j) * B;
            memcpy(dst + (size_t)x * B, src, B);
        }
        if (j > 0 && (rc = PMPI_Isend(dst, (int)row, MPI_BYTE, ma[j], TC_TAG_A2A_SCATTER, priv,
                                      &req[nreq++])) != MPI_SUCCESS)
            goto fn_exit;
    }
    for (int j = 1; j < na && peer; j++) /* the flag instead of the rows */
        if ((rc = PMPI_Isend(&none, 0, MPI_BYTE, ma[j], TC_TAG_A2A_SCATTER, priv, &req[nreq++])) !=
            MPI_SUCCESS)
            goto fn_exit;
#undef TC_HIER_A2A_ROW
    rc = tc_hier_a2a_wait(pl, nreq, req);
    nreq = 0;
    if (rc == TC_OK && peer)
        rc = tc_err(TC_ERR_PEER); /* see the member's case above */
fn_exit:
    if (nreq > 0) /* an MPI call failed with requests pending: finish them first */
        (void)tc_hier_a2a_wait(pl, nreq, req);
    free(want);
    free(req);
    free(g);
    return rc;
}

/* ---- Alltoallv ----------------------------------------------------------------------- */

/* The aggregated size of a block of @p n bytes between two different
 * processes: n when it goes through the leaders, else 0. */
static inline uint32_t tc_hier_a2a_small(const tc_hier_a2a_plan_t *pl, size_t n)
{
    return n > 0 && n <= pl->small ? (uint32_t)n : 0;
}

/* Its direct size: n when it goes straight, else 0. */
static inline size_t tc_hier_a2a_large(const tc_hier_a2a_plan_t *pl, size_t n)
{
    return n > pl->small ? n : 0;
}

/* Pieces of a direct block (MPI int counts; both ends cut alike). */
static size_t tc_hier_a2a_pieces(size_t n)
{
    return (n + tc_hier_piece_max() - 1) / tc_hier_piece_max();
}

/* Post the direct transfers of this process (the blocks larger than
 * pl->small, to and from every other process) into @p req; *nreq grows. */
static tc_err_t tc_hier_a2a_direct(const tc_hier_a2a_plan_t *pl, const char *const *sptr,
                                   const size_t *sbytes, char *const *rptr, const size_t *rbytes,
                                   int rank, int p, MPI_Comm priv, MPI_Request *req, int *nreq)
{
    const size_t piece = tc_hier_piece_max();
    for (int k = 1; k < p; k++) {
        const int x = (rank - k + p) % p;
        for (size_t off = 0; rbytes[x] > pl->small && off < rbytes[x]; off += piece) {
            const size_t len = rbytes[x] - off < piece ? rbytes[x] - off : piece;
            const int rc = PMPI_Irecv(rptr[x] + off, (int)len, MPI_BYTE, x, TC_TAG_A2A_DIRECT, priv,
                                      &req[(*nreq)++]);
            if (rc != MPI_SUCCESS)
                return rc;
        }
    }
    for (int k = 1; k < p; k++) {
        const int y = (rank + k) % p;
        for (size_t off = 0; sbytes[y] > pl->small && off < sbytes[y]; off += piece) {
            const size_t len = sbytes[y] - off < piece ? sbytes[y] - off : piece;
            const int rc = PMPI_Isend(sptr[y] + off, (int)len, MPI_BYTE, y, TC_TAG_A2A_DIRECT, priv,
                                      &req[(*nreq)++]);
            if (rc != MPI_SUCCESS)
                return rc;
        }
    }
    return TC_OK;
}

/* A process that cannot take part in the Alltoallv (@p failed says why;
 * hier_alltoall.h): every message it would send goes, empty, and every
 * message it is sent is taken without a buffer (tc_hier_a2a_quiet): the
 * pieces of its direct blocks (their peers learn of the failure from their
 * leaders, not from these), a member's sizes row (its leader's flag) and
 * blocks, then its row (empty: the leader saw the flag); a leader's part
 * as in the Alltoall (tc_hier_a2a_drain), its members' sizes rows too. The
 * empty messages are sent first, so failed processes draining one another
 * cannot wait in a cycle; every other process posts its direct transfers
 * before it waits for anything. */
static tc_err_t tc_hier_a2av_fail(const tc_hier_a2a_plan_t *pl, const size_t *sbytes,
                                  const size_t *rbytes, int rank, int p, MPI_Comm priv,
                                  tc_err_t failed)
{
    const int a = pl->node[rank], lead = pl->memb[pl->start[a]];
    char none = 0;
    MPI_Errhandler eh = tc_hier_a2a_quiet(priv);
    for (int k = 1; k < p; k++) {
        const int y = (rank + k) % p;
        for (size_t i = tc_hier_a2a_pieces(tc_hier_a2a_large(pl, sbytes[y])); i > 0; i--)
            (void)PMPI_Send(&none, 0, MPI_BYTE, y, TC_TAG_A2A_DIRECT, priv);
    }
    if (rank != lead) {
        (void)PMPI_Send(&none, 0, MPI_BYTE, lead, TC_TAG_A2A_COUNTS, priv);
        (void)PMPI_Send(&none, 0, MPI_BYTE, lead, TC_TAG_A2A_GATHER, priv);
    }
    for (int k = 1; k < p; k++) {
        const int x = (rank - k + p) % p;
        for (size_t i = tc_hier_a2a_pieces(tc_hier_a2a_large(pl, rbytes[x])); i > 0; i--)
            (void)PMPI_Recv(&none, 0, MPI_BYTE, x, TC_TAG_A2A_DIRECT, priv, MPI_STATUS_IGNORE);
    }
    if (rank != lead)
        (void)PMPI_Recv(&none, 0, MPI_BYTE, lead, TC_TAG_A2A_SCATTER, priv, MPI_STATUS_IGNORE);
    tc_hier_a2a_loud(priv, eh);
    return rank == lead ? tc_hier_a2a_drain(pl, a, priv, failed, true) : failed;
}

/* The leader's part (see hier_alltoall.h), its members' sizes rows taken.
 * H[i]: member i's row of aggregated sizes, its sizes to every process (p
 * entries), then from every process (p entries); H[0] is the leader's own.
 * Every message goes, each exchange message and row with one byte more
 * than its blocks: an empty one is the flag of a failure elsewhere. */
static tc_err_t tc_hier_a2av_leader(const tc_hier_a2a_plan_t *pl, const char *const *sptr,
                                    char *const *rptr, uint32_t *H, int rank, int p, MPI_Comm priv)
{
    const int a = pl->node[rank], na = pl->start[a + 1] - pl->start[a], n = pl->n;
    const int *ma = pl->memb + pl->start[a];
    const size_t P2 = 2 * (size_t)p;
#define TC_HIER_A2AV_S(i, y) H[(size_t)(i)*P2 + (size_t)(y)]
#define TC_HIER_A2AV_R(i, x) H[(size_t)(i)*P2 + (size_t)p + (size_t)(x)]
    tc_err_t rc = TC_OK;
    int nreq = 0;
    bool peer = false; /* an empty exchange message came: another process failed */
    char none = 0;
    /* soff[i * p + y]: where member i's block to y is in its gathered data;
     * cur[x]: the next block from remote x in the exchange buffer, lead[x]:
     * the leader's own; xo[b], xi[b]: node b's part of the send and receive
     * exchange buffers, xo[n], xi[n] their sizes; gat[i]: member i's data. */
    size_t *soff =
        malloc(((size_t)na * (size_t)p + 2 * (size_t)p + 2 * ((size_t)n + 1) + (size_t)na + 1) *
               sizeof *soff);
    MPI_Request *req = malloc(((size_t)na * 2 + 2 * (size_t)n) * sizeof *req);
    char *mem = NULL;
    if (!soff || !req) {
        rc = tc_hier_a2a_drain(pl, a, priv, tc_err(TC_ERR_NOMEM), false);
        goto fn_exit;
    }
    size_t *cur = soff + (size_t)na * (size_t)p, *lead = cur + p, *xo = lead + p, *xi = xo + n + 1,
           *gat = xi + n + 1;
    gat[0] = 0;
    for (int i = 0; i < na; i++) {
        size_t at = 0;
        for (int y = 0; y < p; y++) {
            soff[(size_t)i * (size_t)p + (size_t)y] = at;
            at += i > 0 ? TC_HIER_A2AV_S(i, y) : 0;
        }
        gat[i + 1] = gat[i] + at;
    }
    size_t xout = 0, xin = 0, rows = 0;
    for (int b = 0; b < n; b++) {
        const int *mb = pl->memb + pl->start[b], nb = pl->start[b + 1] - pl->start[b];
        xo[b] = xout;
        xi[b] = xin;
        if (b == a)
            continue;
        for (int i = 0; i < na; i++)
            for (int k = 0; k < nb; k++) {
                xout += TC_HIER_A2AV_S(i, mb[k]);
                xin += TC_HIER_A2AV_R(i, mb[k]);
            }
        xout++; /* the message's last byte */
        xin++;
    }
    xo[n] = xout;
    xi[n] = xin;
    for (int i = 1; i < na; i++) {
        rows++; /* the row's last byte */
        for (int x = 0; x < p; x++)
            rows += TC_HIER_A2AV_R(i, x);
    }
    /* The members' data, the exchange buffers, the members' rows. */
    if (!(mem = malloc(gat[na] + xout + xin + rows + 1))) {
        rc = tc_hier_a2a_drain(pl, a, priv, tc_err(TC_ERR_NOMEM), false);
        goto fn_exit;
    }
    char *spack = mem + gat[na], *rpack = spack + xout, *out = rpack + xin;
    for (int i = 1; i < na; i++) /* every member sends its blocks, none maybe */
        if ((rc = PMPI_Irecv(mem + gat[i], (int)(gat[i + 1] - gat[i]), MPI_BYTE, ma[i],
                             TC_TAG_A2A_GATHER, priv, &req[nreq++])) != MPI_SUCCESS)
            goto fn_exit;
    const int ngather = nreq;
    for (int b = 0; b < n; b++)
        if (b != a && (rc = PMPI_Irecv(rpack + xi[b], (int)(xi[b + 1] - xi[b]), MPI_BYTE,
                                       pl->memb[pl->start[b]], TC_TAG_A2A_EXCHANGE, priv,
                                       &req[nreq++])) != MPI_SUCCESS)
            goto fn_exit;
    /* The members' data first (the exchange receives stay posted). */
    for (int i = 0; i < ngather; i++) {
        const int w = tc_wait_mpi_request(&req[i], MPI_STATUS_IGNORE, pl->wait,
                                          "hier alltoall: the members' data", -1);
        if (w != MPI_SUCCESS && rc == TC_OK)
            rc = w;
    }
    if (rc != TC_OK)
        goto fn_exit;
    for (int b = 0; b < n; b++) {
        const int *mb = pl->memb + pl->start[b], nb = pl->start[b + 1] - pl->start[b];
        if (b == a)
            continue;
        char *d = spack + xo[b];
        for (int i = 0; i < na; i++)
            for (int k = 0; k < nb; k++) {
                const size_t len = TC_HIER_A2AV_S(i, mb[k]);
                if (len == 0)
                    continue;
                memcpy(d,
                       i == 0 ? sptr[mb[k]]
                              : mem + gat[i] + soff[(size_t)i * (size_t)p + (size_t)mb[k]],
                       len);
                d += len;
            }
        *d++ = 0;
        if ((rc = PMPI_Isend(spack + xo[b], (int)(d - (spack + xo[b])), MPI_BYTE, mb[0],
                             TC_TAG_A2A_EXCHANGE, priv, &req[nreq++])) != MPI_SUCCESS)
            goto fn_exit;
    }
    /* The other leaders' messages, each checked for the flag, then ours. */
    for (int b = 0, j = ngather; b < n; b++) {
        if (b == a)
            continue;
        const int want = (int)(xi[b + 1] - xi[b]),
                  w = tc_hier_a2a_wait_len(pl, 1, &req[j++], &want, &peer, NULL);
        if (w != MPI_SUCCESS && rc == TC_OK)
            rc = w;
    }
    const int wsend = tc_hier_a2a_wait(pl, nreq - ngather - (n - 1), req + ngather + (n - 1));
    nreq = 0;
    if (rc == TC_OK)
        rc = wsend;
    if (rc != TC_OK)
        goto fn_exit;
    /* Node b's message: for each x of b in rank order, its blocks to our
     * members in rank order; ours (member 0) first in each x's part. */
    for (int b = 0; b < n; b++) {
        if (b == a)
            continue;
        size_t at = xi[b];
        for (int k = pl->start[b]; k < pl->start[b + 1]; k++) {
            const int x = pl->memb[k];
            lead[x] = at;
            cur[x] = at + TC_HIER_A2AV_R(0, x);
            for (int i = 0; i < na; i++)
                at += TC_HIER_A2AV_R(i, x);
        }
    }
    /* Every member's row in source rank order (member by member, so the
     * cursors walk the exchange buffers in order), then ours straight into
     * our receive blocks while the rows are on their way. A block from our
     * node is copied at most as long as its sender said (counts that
     * disagree are not detected, but nothing is read beyond a buffer). */
    char *d = out;
    for (int i = 1; i <= na && !peer; i++) {
        const int m = i < na ? i : 0; /* the member whose row this is; ours last */
        char *row = d;
        for (int x = 0; x < p; x++) {
            const size_t len = TC_HIER_A2AV_R(m, x);
            if (len == 0)
                continue;
            const int px = pl->pos[x];
            const char *src;
            size_t avail = len;
            if (pl->node[x] != a) {
                src = rpack + (m == 0 ? lead[x] : cur[x]);
                cur[x] += m == 0 ? 0 : len;
            } else {
                src = px == 0 ? sptr[ma[m]]
                              : mem + gat[px] + soff[(size_t)px * (size_t)p + (size_t)ma[m]];
                avail = TC_HIER_A2AV_S(px, ma[m]) < len ? TC_HIER_A2AV_S(px, ma[m]) : len;
            }
            if (m == 0) {
                memcpy(rptr[x], src, avail);
                continue;
            }
            memcpy(d, src, avail);
            d += len;
        }
        if (m == 0)
            continue;
        *d++ = 0;
        if ((rc = PMPI_Isend(row, (int)(d - row), MPI_BYTE, ma[m], TC_TAG_A2A_SCATTER, priv,
                             &req[nreq++])) != MPI_SUCCESS)
            goto fn_exit;
    }
    for (int i = 1; i < na && peer; i++) /* the flag instead of the rows */
        if ((rc = PMPI_Isend(&none, 0, MPI_BYTE, ma[i], TC_TAG_A2A_SCATTER, priv, &req[nreq++])) !=
            MPI_SUCCESS)
            goto fn_exit;
    rc = tc_hier_a2a_wait(pl, nreq, req);
    nreq = 0;
    if (rc == TC_OK && peer)
        rc = tc_err(TC_ERR_PEER); /* see tc_hier_alltoall's member */
#undef TC_HIER_A2AV_S
#undef TC_HIER_A2AV_R
fn_exit:
    if (nreq > 0) /* an MPI call failed with requests pending: finish them first */
        (void)tc_hier_a2a_wait(pl, nreq, req);
    free(mem);
    free(req);
    free(soff);
    return rc;
}

tc_err_t tc_hier_alltoallv(const tc_hier_a2a_plan_t *pl, const char *const *sptr,
                           const size_t *sbytes, char *const *rptr, const size_t *rbytes, int rank,
                           int p, MPI_Comm priv, tc_err_t failed)
{
    const int a = pl->node[rank], na = pl->start[a + 1] - pl->start[a];
    const int *ma = pl->memb + pl->start[a];
    const bool leader = rank == ma[0];
    const size_t P2 = 2 * (size_t)p;
    tc_err_t rc = TC_OK;
    int nreq = 0, ndirect = 0;
    size_t stot = 0, rtot = 0;
    for (int j = 0; j < p; j++)
        if (j != rank) {
            ndirect += (int)(tc_hier_a2a_pieces(tc_hier_a2a_large(pl, sbytes[j])) +
                             tc_hier_a2a_pieces(tc_hier_a2a_large(pl, rbytes[j])));
            stot += tc_hier_a2a_small(pl, sbytes[j]);
            rtot += tc_hier_a2a_small(pl, rbytes[j]);
        }
    /* One allocation, before any message: the requests, the sizes rows
     * (the leader: its node's), a member's outgoing blocks and incoming row
     * (with its last byte). */
    const size_t nr = (size_t)ndirect + (size_t)na + 3, nh = (leader ? (size_t)na : 1) * P2;
    MPI_Request *req =
        failed ? NULL
               : malloc(nr * sizeof *req + nh * sizeof(uint32_t) + (leader ? 0 : stot + rtot + 1));
    if (!req)
        return tc_hier_a2av_fail(pl, sbytes, rbytes, rank, p, priv,
                                 failed ? failed : tc_err(TC_ERR_NOMEM));
    uint32_t *H = (uint32_t *)(void *)(req + nr);
    char *sdata = (char *)(H + nh), *row = sdata + stot, *d = sdata;
    bool peer = false; /* an empty message came: another process failed */
    for (int j = 0; j < p; j++) {
        H[j] = j == rank ? 0 : tc_hier_a2a_small(pl, sbytes[j]);
        H[(size_t)p + (size_t)j] = j == rank ? 0 : tc_hier_a2a_small(pl, rbytes[j]);
    }
    if (leader)
        for (int i = 1; i < na; i++)
            if ((rc = PMPI_Irecv(H + (size_t)i * P2, (int)(P2 * sizeof *H), MPI_BYTE, ma[i],
                                 TC_TAG_A2A_COUNTS, priv, &req[nreq++])) != MPI_SUCCESS)
                goto fn_exit;
    if (!leader && (rc = PMPI_Irecv(row, (int)rtot + 1, MPI_BYTE, ma[0], TC_TAG_A2A_SCATTER, priv,
                                    &req[nreq++])) != MPI_SUCCESS)
        goto fn_exit;
    if ((rc = tc_hier_a2a_direct(pl, sptr, sbytes, rptr, rbytes, rank, p, priv, req, &nreq)) !=
        TC_OK)
        goto fn_exit;
    if (sbytes[rank] > 0) /* our own block */
        memcpy(rptr[rank], sptr[rank], sbytes[rank] < rbytes[rank] ? sbytes[rank] : rbytes[rank]);
    if (leader) {
        /* The sizes first (the direct transfers stay posted behind them);
         * an empty row: that member failed. */
        const int want = (int)(P2 * sizeof *H);
        for (int i = 0; i < na - 1; i++) {
            const int w = tc_hier_a2a_wait_len(pl, 1, &req[i], &want, &peer,
                                               "hier alltoallv: the members' sizes");
            if (w != MPI_SUCCESS && rc == TC_OK)
                rc = w;
        }
        if (rc != TC_OK)
            goto fn_exit;
        rc = peer ? tc_hier_a2a_drain(pl, a, priv, tc_err(TC_ERR_PEER), false)
                  : tc_hier_a2av_leader(pl, sptr, rptr, H, rank, p, priv);
    } else {
        /* A member: its sizes, its aggregated blocks in destination rank
         * order (none maybe), its row back in source rank order. */
        if ((rc = PMPI_Isend(H, (int)(P2 * sizeof *H), MPI_BYTE, ma[0], TC_TAG_A2A_COUNTS, priv,
                             &req[nreq++])) != MPI_SUCCESS)
            goto fn_exit;
        for (int y = 0; y < p; y++)
            if (H[y] > 0) {
                memcpy(d, sptr[y], H[y]);
                d += H[y];
            }
        if ((rc = PMPI_Isend(sdata, (int)stot, MPI_BYTE, ma[0], TC_TAG_A2A_GATHER, priv,
                             &req[nreq++])) != MPI_SUCCESS)
            goto fn_exit;
        const int want = (int)rtot + 1;
        rc = tc_hier_a2a_wait_len(pl, 1, &req[0], &want, &peer,
                                  "hier alltoallv: my blocks from the node's leader");
    }
    /* The rest: the direct transfers (a member's sizes and blocks). */
    const int done = leader ? na - 1 : 1, w = tc_hier_a2a_wait(pl, nreq - done, req + done);
    nreq = 0;
    if (rc == TC_OK)
        rc = w;
    if (rc == TC_OK && peer && !leader)
        rc = tc_err(TC_ERR_PEER); /* see tc_hier_alltoall's member */
    if (rc != TC_OK || leader)
        goto fn_exit;
    d = row;
    for (int x = 0; x < p; x++) {
        const uint32_t len = H[(size_t)p + (size_t)x];
        if (len > 0) {
            memcpy(rptr[x], d, len);
            d += len;
        }
    }
fn_exit:
    if (nreq > 0) /* an MPI call failed with requests pending: finish them first */
        (void)tc_hier_a2a_wait(pl, nreq, req);
    free(req);
    return rc;
}
