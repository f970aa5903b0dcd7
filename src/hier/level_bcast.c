/* Group broadcast of one hierarchy level (paper 001, "Bcast"): flat,
 * k-nomial, and scatter + ring allgather, over PMPI point-to-point calls.
 *
 * Every transfer is split into pieces of at most piece_max bytes (1 GiB) so
 * MPI int counts never overflow; the pieces of one transfer travel on the
 * same (peer, tag) and MPI's non-overtaking rule matches them in order. Both
 * ends derive every transfer length from (nbytes, nmembers, indices), so
 * sender and receiver always agree on the piece sequence and no zero-byte
 * message is ever sent.
 */
#include "level_bcast.h"

#include "base/names.h"

#include "shm/tree.h"

#include <stdlib.h>
#include <strings.h>

static size_t piece_max = TC_HIER_BCAST_PIECE_MAX;

size_t tc_hier_bcast_piece_max_set(size_t bytes)
{
    size_t old = piece_max;
    if (bytes == 0 || bytes > TC_HIER_BCAST_PIECE_MAX)
        bytes = TC_HIER_BCAST_PIECE_MAX;
    piece_max = bytes;
    return old;
}

size_t tc_hier_piece_max(void)
{
    return piece_max;
}

_Static_assert(TC_HIER_BCAST_LAST == TC_BASE_ALGS_BCAST, "base/names.h names every bcast alg");

const char *tc_hier_bcast_alg_name(tc_hier_bcast_alg_t alg)
{
    const char *name = tc_base_alg_name(TC_BASE_OP_BCAST, (int)alg);
    return name ? name : "?";
}

tc_err_t tc_hier_bcast_alg_parse(const char *word, tc_hier_bcast_alg_t *alg)
{
    if (word == NULL || alg == NULL)
        return tc_err(TC_ERR_PARSE);
    int a = tc_base_alg_index(TC_BASE_OP_BCAST, word);
    if (a >= 0) {
        *alg = (tc_hier_bcast_alg_t)a;
        return TC_OK;
    }
    if (strcasecmp(word, "scatter-allgather") == 0) {
        *alg = TC_HIER_BCAST_SCATTER_ALLGATHER;
        return TC_OK;
    }
    return tc_err(TC_ERR_PARSE);
}

static size_t tc_hier_npieces(size_t len)
{
    return len / piece_max + (len % piece_max != 0);
}

static tc_err_t tc_hier_send_bytes(const char *buf, size_t len, int dest, MPI_Comm comm, int tag,
                                   const tc_wait_info_t *wait)
{
    for (size_t off = 0; off < len; off += piece_max) {
        size_t n = len - off < piece_max ? len - off : piece_max;
        tc_err_t rc =
            tc_wait_mpi_send(buf + off, (int)n, dest, tag, comm, wait, "hier bcast: send");
        if (rc != TC_OK)
            return rc;
    }
    return TC_OK;
}

static tc_err_t tc_hier_recv_bytes(char *buf, size_t len, int src, MPI_Comm comm, int tag,
                                   const tc_wait_info_t *wait)
{
    for (size_t off = 0; off < len; off += piece_max) {
        size_t n = len - off < piece_max ? len - off : piece_max;
        tc_err_t rc =
            tc_wait_mpi_recv(buf + off, (int)n, src, tag, comm, wait, "hier bcast: receive");
        if (rc != TC_OK)
            return rc;
    }
    return TC_OK;
}

/* Complete the nreq requests already started, then report the first error:
 * an error must not leave requests pointing into the caller's buffer. @p peer:
 * whom a timeout names. */
static tc_err_t tc_hier_finish(tc_err_t rc, int nreq, MPI_Request *reqs, const tc_wait_info_t *wait,
                               const char *stage, int peer)
{
    const int rc_wait = tc_wait_mpi_all(nreq, reqs, wait, stage, peer);
    return rc != TC_OK ? rc : rc_wait;
}

/* Receive each piece from the parent (index -1 at the root), then forward it
 * to all children at once: with more than one piece the tree is pipelined. */
static tc_err_t tc_hier_bcast_tree(char *buf, size_t nbytes, const int *members, int parent,
                                   const int *children, int nchildren, MPI_Comm comm, int tag,
                                   const tc_wait_info_t *wait, MPI_Request *reqs)
{
    for (size_t off = 0; off < nbytes; off += piece_max) {
        size_t n = nbytes - off < piece_max ? nbytes - off : piece_max;
        tc_err_t rc = TC_OK;
        if (parent >= 0) {
            rc = tc_wait_mpi_recv(buf + off, (int)n, members[parent], tag, comm, wait,
                                  "hier bcast: receive from the parent");
            if (rc != TC_OK)
                return rc;
        }
        int started = 0;
        for (; started < nchildren && rc == TC_OK; started++) {
            rc = PMPI_Isend(buf + off, (int)n, MPI_BYTE, members[children[started]], tag, comm,
                            &reqs[started]);
            if (rc != TC_OK)
                break;
        }
        rc = tc_hier_finish(rc, started, reqs, wait, "hier bcast: send to the children",
                            nchildren > 0 ? members[children[0]] : -1);
        if (rc != TC_OK)
            return rc;
    }
    return TC_OK;
}

/* Flat and k-nomial trees are the notification trees of the shared-memory
 * broadcast (src/shm/tree.c) on relative indices rel = (index - root) mod n:
 * the k-nomial parent clears rel's lowest nonzero base-k digit, children come
 * largest subtree first, so the deepest branches start earliest. */
static tc_err_t tc_hier_bcast_by_tree(char *buf, size_t nbytes, const int *members, int n, int me,
                                      int root, tc_tree_kind_t kind, int k, MPI_Comm comm, int tag,
                                      const tc_wait_info_t *wait)
{
    int rel = (me - root + n) % n;
    int prel = tc_shm_tree_parent_rel(kind, k, n, rel);
    int parent = prel < 0 ? -1 : (prel + root) % n;
    int *children = malloc((size_t)n * sizeof(*children));
    MPI_Request *reqs = malloc((size_t)n * sizeof(*reqs));
    tc_err_t rc = tc_err(TC_ERR_NOMEM);
    if (children == NULL || reqs == NULL)
        goto fn_exit;
    int nchildren = tc_shm_tree_children_rel(kind, k, n, rel, children);
    for (int c = 0; c < nchildren; c++)
        children[c] = (children[c] + root) % n;
    rc = tc_hier_bcast_tree(buf, nbytes, members, parent, children, nchildren, comm, tag, wait,
                            reqs);
fn_exit:
    free(children);
    free(reqs);
    return rc;
}

/* Chunk c of n (relative index c owns it after the scatter): the first
 * nbytes % n chunks are one byte longer than the rest. */
static size_t tc_hier_chunk_off(size_t nbytes, int n, long long c)
{
    size_t base = nbytes / (size_t)n, rem = nbytes % (size_t)n;
    return (size_t)c * base + ((size_t)c < rem ? (size_t)c : rem);
}

static tc_err_t tc_hier_bcast_scatter_allgather(char *buf, size_t nbytes, const int *members, int n,
                                                int me, int root, MPI_Comm comm, int tag,
                                                const tc_wait_info_t *wait)
{
    long long rel = ((long long)me - root + n) % n;
#define RANK_OF(r) members[((r) + root) % n]
#define RANGE(a, b)                                                                                \
    buf + tc_hier_chunk_off(nbytes, n, a),                                                         \
        tc_hier_chunk_off(nbytes, n, b) - tc_hier_chunk_off(nbytes, n, a)
    /* Binomial scatter: rel receives chunks [rel, rel + lowbit(rel)) (its
     * subtree) from rel - lowbit(rel), then hands each child rel + m its
     * subtree [rel + m, rel + 2m), largest first. */
    long long mask = 1;
    tc_err_t rc = TC_OK;
    while (mask < n) {
        if (rel & mask) {
            long long end = rel + mask < n ? rel + mask : n;
            rc = tc_hier_recv_bytes(RANGE(rel, end), RANK_OF(rel - mask), comm, tag, wait);
            if (rc != TC_OK)
                return rc;
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (rel + mask < n) {
            long long end = rel + 2 * mask < n ? rel + 2 * mask : n;
            rc = tc_hier_send_bytes(RANGE(rel + mask, end), RANK_OF(rel + mask), comm, tag, wait);
            if (rc != TC_OK)
                return rc;
        }
    }

    /* Ring allgather: at step s, pass chunk rel - s to the right and take
     * chunk rel - s - 1 from the left; after n - 1 steps all chunks are here. */
    size_t pmax = tc_hier_npieces(nbytes / (size_t)n + 1);
    MPI_Request *reqs = malloc(2 * pmax * sizeof(*reqs));
    if (reqs == NULL)
        return tc_err(TC_ERR_NOMEM);
    int left = RANK_OF(rel + n - 1), right = RANK_OF(rel + 1);
    for (long long s = 0; s < n - 1 && rc == TC_OK; s++) {
        long long cs = (rel - s + n) % n, cr = (rel - s - 1 + 2LL * n) % n;
        size_t soff = tc_hier_chunk_off(nbytes, n, cs),
               slen = tc_hier_chunk_off(nbytes, n, cs + 1) - soff;
        size_t roff = tc_hier_chunk_off(nbytes, n, cr),
               rlen = tc_hier_chunk_off(nbytes, n, cr + 1) - roff;
        int nreq = 0;
        for (size_t off = 0; off < rlen && rc == TC_OK; off += piece_max) {
            size_t len = rlen - off < piece_max ? rlen - off : piece_max;
            rc = PMPI_Irecv(buf + roff + off, (int)len, MPI_BYTE, left, tag, comm, &reqs[nreq]);
            nreq += rc == TC_OK;
        }
        for (size_t off = 0; off < slen && rc == TC_OK; off += piece_max) {
            size_t len = slen - off < piece_max ? slen - off : piece_max;
            rc = PMPI_Isend(buf + soff + off, (int)len, MPI_BYTE, right, tag, comm, &reqs[nreq]);
            nreq += rc == TC_OK;
        }
        rc = tc_hier_finish(rc, nreq, reqs, wait, "hier bcast: ring allgather", left);
    }
#undef RANGE
#undef RANK_OF
    free(reqs);
    return rc;
}

tc_err_t tc_hier_members_check(const int *members, int nmembers, int my_index, MPI_Comm comm)
{
    int size, rank;
    tc_err_t rc = PMPI_Comm_size(comm, &size);
    if (rc == TC_OK)
        rc = PMPI_Comm_rank(comm, &rank);
    if (rc != TC_OK)
        return rc;
    if (members[my_index] != rank)
        return tc_err(TC_ERR_ARG);
    for (int i = 0; i < nmembers; i++)
        if (members[i] < 0 || members[i] >= size || (i > 0 && members[i] <= members[i - 1]))
            return tc_err(TC_ERR_ARG);
    return TC_OK;
}

tc_err_t tc_hier_bcast_group(void *buf, size_t nbytes, const int *members, int nmembers,
                             int my_index, int root_index, tc_hier_bcast_alg_t alg, int k,
                             MPI_Comm comm, int tag, const tc_wait_info_t *wait)
{
    /* Local checks only, all before the first message. */
    if (members == NULL || nmembers < 1 || my_index < 0 || my_index >= nmembers || root_index < 0 ||
        root_index >= nmembers || (int)alg < 0 || alg >= TC_HIER_BCAST_LAST ||
        (alg == TC_HIER_BCAST_KNOMIAL && k < 2))
        return tc_err(TC_ERR_ARG);
    if (nbytes > 0 && buf == NULL)
        return tc_err(TC_ERR_BUFFER);
    tc_err_t rc = tc_hier_members_check(members, nmembers, my_index, comm);
    if (rc != TC_OK)
        return rc;
    if (nbytes == 0 || nmembers == 1)
        return TC_OK;

    switch (alg) {
    case TC_HIER_BCAST_FLAT:
        return tc_hier_bcast_by_tree(buf, nbytes, members, nmembers, my_index, root_index,
                                     TC_TREE_FLAT, 2, comm, tag, wait);
    case TC_HIER_BCAST_SCATTER_ALLGATHER:
        /* Fewer bytes than members would leave empty chunks: a tree is better. */
        if (nbytes >= (size_t)nmembers)
            return tc_hier_bcast_scatter_allgather(buf, nbytes, members, nmembers, my_index,
                                                   root_index, comm, tag, wait);
        return tc_hier_bcast_by_tree(buf, nbytes, members, nmembers, my_index, root_index,
                                     TC_TREE_KNOMIAL, k < 2 ? 2 : k, comm, tag, wait);
    case TC_HIER_BCAST_KNOMIAL:
    default:
        return tc_hier_bcast_by_tree(buf, nbytes, members, nmembers, my_index, root_index,
                                     TC_TREE_KNOMIAL, k, comm, tag, wait);
    }
}
