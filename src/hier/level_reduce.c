/* Group reduction of one hierarchy level (paper 001, "Reduce", Fig. 3, and
 * "Allreduce"): flat, binomial and reduce-scatter + gather reductions to one
 * member, recursive-doubling and ring allreductions, over PMPI point-to-point
 * calls.
 *
 * Operand order. tc_redop_apply(op, in, inout) computes inout = in op inout,
 * `in` being the LEFT operand. FLAT, BINOMIAL (for a non-commutative op) and
 * RECDBL only ever combine two partials that cover adjacent ranges of member
 * indices, the lower range as the left operand, so they compute
 * m0 op m1 op ... op m(n-1) whatever the op; they differ only in how the
 * product is bracketed (an associative op does not care). RSG and RING split
 * the vector into blocks that travel around the group in an order unrelated
 * to member indices: they need a commutative op.
 *
 * Transfers are split into pieces of at most tc_hier_piece_max() bytes (1 GiB, shared with the
 * group broadcast) so MPI int counts never overflow. Both ends derive every
 * length from (nelem, elem, nmembers, indices), so they agree on the piece
 * sequence, and a zero-length transfer (an empty ring block) sends nothing.
 */
#include "level_reduce.h"

#include "base/names.h"
#include "level_bcast.h"

#include <stdint.h>
#include <string.h>

_Static_assert(TC_HIER_REDUCE_LAST == TC_BASE_ALGS_REDUCE &&
                   TC_HIER_ALLREDUCE_LAST == TC_BASE_ALGS_ALLREDUCE,
               "base/names.h names every reduce and allreduce alg");

const char *tc_hier_reduce_alg_name(tc_hier_reduce_alg_t alg)
{
    const char *name = tc_base_alg_name(TC_BASE_OP_REDUCE, (int)alg);
    return name ? name : "?";
}

const char *tc_hier_allreduce_alg_name(tc_hier_allreduce_alg_t alg)
{
    const char *name = tc_base_alg_name(TC_BASE_OP_ALLREDUCE, (int)alg);
    return name ? name : "?";
}

tc_err_t tc_hier_reduce_alg_parse(const char *word, tc_hier_reduce_alg_t *alg)
{
    int a = word != NULL ? tc_base_alg_index(TC_BASE_OP_REDUCE, word) : -1;
    if (a < 0 || alg == NULL)
        return tc_err(TC_ERR_PARSE);
    *alg = (tc_hier_reduce_alg_t)a;
    return TC_OK;
}

tc_err_t tc_hier_allreduce_alg_parse(const char *word, tc_hier_allreduce_alg_t *alg)
{
    int a = word != NULL ? tc_base_alg_index(TC_BASE_OP_ALLREDUCE, word) : -1;
    if (a < 0 || alg == NULL)
        return tc_err(TC_ERR_PARSE);
    *alg = (tc_hier_allreduce_alg_t)a;
    return TC_OK;
}

/* What every algorithm needs besides the buffers. */
typedef struct {
    const tc_redop_t *op;
    const int *members;
    int n;
    MPI_Comm comm;
    int tag;
    const tc_wait_info_t *wait; /* base/wait_mpi.h; NULL: blocking calls */
} grp_t;

static size_t tc_hier_piece_len(size_t len, size_t off)
{
    return len - off < tc_hier_piece_max() ? len - off : tc_hier_piece_max();
}

static tc_err_t tc_hier_send_bytes(const grp_t *g, const char *buf, size_t len, int dest)
{
    for (size_t off = 0; off < len; off += tc_hier_piece_max()) {
        tc_err_t rc = tc_wait_mpi_send(buf + off, (int)tc_hier_piece_len(len, off), dest, g->tag,
                                       g->comm, g->wait, "hier reduce: send");
        if (rc != TC_OK)
            return rc;
    }
    return TC_OK;
}

static tc_err_t tc_hier_recv_bytes(const grp_t *g, char *buf, size_t len, int src)
{
    for (size_t off = 0; off < len; off += tc_hier_piece_max()) {
        tc_err_t rc = tc_wait_mpi_recv(buf + off, (int)tc_hier_piece_len(len, off), src, g->tag,
                                       g->comm, g->wait, "hier reduce: receive");
        if (rc != TC_OK)
            return rc;
    }
    return TC_OK;
}

/* Send slen bytes to dest while receiving rlen bytes from src, piece k with
 * piece k. Deadlock-free: the peer that receives our piece k runs a step k
 * that includes that receive (its lengths mirror ours), and each step is a
 * Sendrecv, a lone Send or a lone Recv. */
static tc_err_t tc_hier_exchange_bytes(const grp_t *g, const char *sbuf, size_t slen, int dest,
                                       char *rbuf, size_t rlen, int src)
{
    for (size_t off = 0; off < slen || off < rlen; off += tc_hier_piece_max()) {
        int ns = off < slen ? (int)tc_hier_piece_len(slen, off) : 0;
        int nr = off < rlen ? (int)tc_hier_piece_len(rlen, off) : 0;
        tc_err_t rc;
        if (ns > 0 && nr > 0)
            rc = tc_wait_mpi_sendrecv(sbuf + off, ns, dest, rbuf + off, nr, src, g->tag, g->comm,
                                      g->wait, "hier reduce: exchange");
        else if (ns > 0)
            rc = tc_wait_mpi_send(sbuf + off, ns, dest, g->tag, g->comm, g->wait,
                                  "hier reduce: exchange (send)");
        else
            rc = tc_wait_mpi_recv(rbuf + off, nr, src, g->tag, g->comm, g->wait,
                                  "hier reduce: exchange (receive)");
        if (rc != TC_OK)
            return rc;
    }
    return TC_OK;
}

/* First element of block b when nelem elements are cut into nblocks nearly
 * equal blocks (the first nelem % nblocks one element longer). */
static size_t tc_hier_block_off(size_t nelem, long long nblocks, long long b)
{
    size_t base = nelem / (size_t)nblocks, rem = nelem % (size_t)nblocks;
    return (size_t)b * base + ((size_t)b < rem ? (size_t)b : rem);
}

static void tc_hier_swap_ptr(char **a, char **b)
{
    char *t = *a;
    *a = *b;
    *b = t;
}

/* Largest power of two <= n (n >= 1). */
static long long pow2_floor(int n)
{
    long long p = 1;
    while (2 * p <= n)
        p *= 2;
    return p;
}

/* The root takes the contributions one by one. Members below the root arrive
 * from root-1 down to 0, each as the left operand of what the root holds;
 * members above it from root+1 up, each as the right operand: the result is
 * m0 op ... op m(n-1). The accumulator ping-pongs between buf and scratch. */
static tc_err_t tc_hier_reduce_flat(const grp_t *g, char *buf, char *scratch, size_t nelem, int me,
                                    int root)
{
    size_t nb = nelem * g->op->elem;
    if (me != root)
        return tc_hier_send_bytes(g, buf, nb, g->members[root]);
    char *acc = buf, *tmp = scratch;
    for (int i = root - 1; i >= 0; i--) {
        tc_err_t rc = tc_hier_recv_bytes(g, tmp, nb, g->members[i]);
        if (rc != TC_OK)
            return rc;
        tc_redop_apply(g->op, tmp, acc, nelem);
    }
    for (int i = root + 1; i < g->n; i++) {
        tc_err_t rc = tc_hier_recv_bytes(g, tmp, nb, g->members[i]);
        if (rc != TC_OK)
            return rc;
        tc_redop_apply(g->op, acc, tmp, nelem);
        tc_hier_swap_ptr(&acc, &tmp);
    }
    if (acc != buf)
        memcpy(buf, acc, nb);
    return TC_OK;
}

/* Binomial tree on positions rel = (index - shift) mod n with tree root at
 * rel 0: position rel gathers the subtree [rel, rel + 2^k) from rel + 2^j,
 * j < k, its own range always the left operand, then sends to rel - 2^k.
 *  - commutative op: shift = root, so the tree ends at the root directly;
 *  - otherwise shift = 0: the subtrees are contiguous ranges of member
 *    indices (member order holds) and member 0 forwards the result to the
 *    root when root != 0, one extra message (as MPICH does). */
static tc_err_t tc_hier_reduce_binomial(const grp_t *g, char *buf, char *scratch, size_t nelem,
                                        int me, int root)
{
    long long n = g->n;
    size_t nb = nelem * g->op->elem;
    long long shift = g->op->commutative ? root : 0;
    long long rel = (me - shift + n) % n;
#define RANK_OF(r) g->members[((r) + shift) % n]
    char *acc = buf, *tmp = scratch;
    tc_err_t rc = TC_OK;
    for (long long mask = 1; mask < n; mask <<= 1) {
        if (rel & mask) {
            rc = tc_hier_send_bytes(g, acc, nb, RANK_OF(rel - mask));
            break;
        }
        if (rel + mask < n) {
            rc = tc_hier_recv_bytes(g, tmp, nb, RANK_OF(rel + mask));
            if (rc != TC_OK)
                break;
            tc_redop_apply(g->op, acc, tmp, nelem);
            tc_hier_swap_ptr(&acc, &tmp);
        }
    }
#undef RANK_OF
    if (rc != TC_OK)
        return rc;
    if (shift != root) {
        /* Non-commutative op, root != 0: member 0 holds the result. */
        if (me == 0)
            return tc_hier_send_bytes(g, acc, nb, g->members[root]);
        if (me == root)
            return tc_hier_recv_bytes(g, buf, nb, g->members[0]);
        return TC_OK;
    }
    if (rel == 0 && acc != buf)
        memcpy(buf, acc, nb);
    return TC_OK;
}

/* Rabenseifner's reduce (commutative op; nelem >= n), on positions
 * rel = (index - root) mod n so the root is position 0:
 *  1. fold: with n = p2 + rem (p2 a power of two), each odd rel < 2 rem hands
 *     its vector to rel - 1 and drops out; the p2 others get new ranks
 *     (nr < rem: rel 2 nr; else rel nr + rem) and the root is new rank 0;
 *  2. reduce-scatter by recursive halving over p2 element-aligned blocks:
 *     partners new rank ^ mask, mask from p2/2 down, exchange the halves of
 *     their common window, so new rank r ends owning block r reduced;
 *  3. binomial gather of the blocks to new rank 0: new rank r, holding
 *     blocks [r, r + mask), sends them to r - mask when r & mask.
 * Traffic per member ~2 (p2 - 1)/p2 of the vector instead of log2 n vectors. */
static tc_err_t tc_hier_reduce_rsg(const grp_t *g, char *buf, char *scratch, size_t nelem, int me,
                                   int root)
{
    long long n = g->n;
    size_t e = g->op->elem;
    long long p2 = pow2_floor(g->n), rem = n - p2;
    long long rel = (me - root + n) % n;
#define RANK_OF(r)     g->members[((r) + root) % n]
#define NEW_TO_REL(nr) ((nr) < rem ? 2 * (nr) : (nr) + rem)
#define BOFF(b)        tc_hier_block_off(nelem, p2, b)
    tc_err_t rc;
    long long newrank;
    if (rel < 2 * rem) {
        if (rel & 1)
            return tc_hier_send_bytes(g, buf, nelem * e, RANK_OF(rel - 1));
        rc = tc_hier_recv_bytes(g, scratch, nelem * e, RANK_OF(rel + 1));
        if (rc != TC_OK)
            return rc;
        tc_redop_apply(g->op, scratch, buf, nelem);
        newrank = rel / 2;
    } else {
        newrank = rel - rem;
    }

    long long lo = 0; /* first block of the window [lo, lo + 2 mask) */
    for (long long mask = p2 / 2; mask >= 1; mask >>= 1) {
        int peer = RANK_OF(NEW_TO_REL(newrank ^ mask));
        long long keep = newrank & mask ? lo + mask : lo;
        long long give = newrank & mask ? lo : lo + mask;
        size_t koff = BOFF(keep), klen = BOFF(keep + mask) - koff;
        size_t goff = BOFF(give), glen = BOFF(give + mask) - goff;
        rc = tc_hier_exchange_bytes(g, buf + goff * e, glen * e, peer, scratch + koff * e, klen * e,
                                    peer);
        if (rc != TC_OK)
            return rc;
        tc_redop_apply(g->op, scratch + koff * e, buf + koff * e, klen);
        lo = keep;
    }

    for (long long mask = 1; mask < p2; mask <<= 1) {
        size_t off = BOFF(newrank), len;
        if (newrank & mask) {
            len = BOFF(newrank + mask) - off;
            return tc_hier_send_bytes(g, buf + off * e, len * e,
                                      RANK_OF(NEW_TO_REL(newrank - mask)));
        }
        off = BOFF(newrank + mask);
        len = BOFF(newrank + 2 * mask) - off;
        rc = tc_hier_recv_bytes(g, buf + off * e, len * e, RANK_OF(NEW_TO_REL(newrank + mask)));
        if (rc != TC_OK)
            return rc;
    }
#undef BOFF
#undef NEW_TO_REL
#undef RANK_OF
    return TC_OK;
}

/* Recursive doubling. With n = p2 + rem, each odd index i < 2 rem first
 * sends its vector to i - 1, which combines (its own, left) op (received),
 * then waits for the result. New rank nr covers member indices {2 nr, 2 nr + 1}
 * (nr < rem) or {nr + rem}: increasing, contiguous ranges. At each exchange
 * both partners evaluate (lower new rank's partial) op (higher's) on the same
 * two operands, so they get the same bits and member order holds. */
static tc_err_t tc_hier_allreduce_recdbl(const grp_t *g, char *buf, char *scratch, size_t nelem,
                                         int me)
{
    long long n = g->n;
    size_t nb = nelem * g->op->elem;
    long long p2 = pow2_floor(g->n), rem = n - p2;
    char *acc = buf, *tmp = scratch;
    tc_err_t rc = TC_OK;
    long long newrank = -1;
    if (me < 2 * rem) {
        if (me & 1) {
            rc = tc_hier_send_bytes(g, buf, nb, g->members[me - 1]);
        } else {
            rc = tc_hier_recv_bytes(g, tmp, nb, g->members[me + 1]);
            if (rc == TC_OK) {
                tc_redop_apply(g->op, acc, tmp, nelem);
                tc_hier_swap_ptr(&acc, &tmp);
            }
            newrank = me / 2;
        }
    } else {
        newrank = me - rem;
    }
    if (rc != TC_OK)
        return rc;
    if (newrank >= 0) {
        for (long long mask = 1; mask < p2; mask <<= 1) {
            long long partner = newrank ^ mask;
            int peer = g->members[partner < rem ? 2 * partner : partner + rem];
            rc = tc_hier_exchange_bytes(g, acc, nb, peer, tmp, nb, peer);
            if (rc != TC_OK)
                return rc;
            if (partner < newrank) {
                tc_redop_apply(g->op, tmp, acc, nelem);
            } else {
                tc_redop_apply(g->op, acc, tmp, nelem);
                tc_hier_swap_ptr(&acc, &tmp);
            }
        }
    }
    if (me < 2 * rem) {
        if (me & 1)
            return tc_hier_recv_bytes(g, buf, nb, g->members[me - 1]);
        rc = tc_hier_send_bytes(g, acc, nb, g->members[me + 1]);
    }
    if (acc != buf)
        memcpy(buf, acc, nb);
    return rc;
}

/* Ring (commutative op): n element-aligned blocks, possibly empty. Reduce-
 * scatter: at step s member i passes block i - s to the right and adds the
 * block i - s - 1 arriving from the left to its own; after n - 1 steps member
 * i holds block i + 1 reduced over all members. Allgather: the reduced blocks
 * go around the ring once more. Each block is reduced at one member and then
 * only copied, so every member ends with the same bits. */
static tc_err_t tc_hier_allreduce_ring(const grp_t *g, char *buf, char *scratch, size_t nelem,
                                       int me)
{
    long long n = g->n;
    size_t e = g->op->elem;
    int left = g->members[(me + n - 1) % n], right = g->members[(me + 1) % n];
#define BOFF(b) tc_hier_block_off(nelem, n, b)
    for (long long s = 0; s < n - 1; s++) {
        long long sb = (me - s + n) % n, rb = (me - s - 1 + 2 * n) % n;
        size_t soff = BOFF(sb), slen = BOFF(sb + 1) - soff;
        size_t roff = BOFF(rb), rlen = BOFF(rb + 1) - roff;
        tc_err_t rc = tc_hier_exchange_bytes(g, buf + soff * e, slen * e, right, scratch + roff * e,
                                             rlen * e, left);
        if (rc != TC_OK)
            return rc;
        tc_redop_apply(g->op, scratch + roff * e, buf + roff * e, rlen);
    }
    for (long long s = 0; s < n - 1; s++) {
        long long sb = (me + 1 - s + n) % n, rb = (me - s + n) % n;
        size_t soff = BOFF(sb), slen = BOFF(sb + 1) - soff;
        size_t roff = BOFF(rb), rlen = BOFF(rb + 1) - roff;
        tc_err_t rc = tc_hier_exchange_bytes(g, buf + soff * e, slen * e, right, buf + roff * e,
                                             rlen * e, left);
        if (rc != TC_OK)
            return rc;
    }
#undef BOFF
    return TC_OK;
}

/* Checks shared by both entry points; all local, before any message. */
static tc_err_t tc_hier_check_args(const void *buf, const void *scratch, size_t nelem,
                                   const tc_redop_t *op, const int *members, int nmembers,
                                   int my_index, MPI_Comm comm)
{
    if (members == NULL || nmembers < 1 || my_index < 0 || my_index >= nmembers)
        return tc_err(TC_ERR_ARG);
    if (op == NULL || op->elem == 0)
        return tc_err(TC_ERR_OP);
    if (nelem > SIZE_MAX / op->elem)
        return tc_err(TC_ERR_ARG);
    size_t nb = nelem * op->elem;
    if (nb > 0 && buf == NULL)
        return tc_err(TC_ERR_ARG);
    if (nb > 0 && nmembers > 1) {
        uintptr_t b = (uintptr_t)buf, s = (uintptr_t)scratch;
        if (scratch == NULL || (s < b + nb && b < s + nb))
            return tc_err(TC_ERR_ARG);
    }
    return tc_hier_members_check(members, nmembers, my_index, comm);
}

tc_err_t tc_hier_reduce_group(void *buf, void *scratch, size_t nelem, const tc_redop_t *op,
                              const int *members, int nmembers, int my_index, int root_index,
                              tc_hier_reduce_alg_t alg, MPI_Comm comm, int tag,
                              const tc_wait_info_t *wait)
{
    tc_err_t rc = tc_hier_check_args(buf, scratch, nelem, op, members, nmembers, my_index, comm);
    if (rc != TC_OK)
        return rc;
    if (root_index < 0 || root_index >= nmembers || (int)alg < 0 || alg >= TC_HIER_REDUCE_LAST)
        return tc_err(TC_ERR_ARG);
    /* Refused whatever the size, so every member gets the same answer. */
    if (alg == TC_HIER_REDUCE_RSG && !op->commutative)
        return tc_err(TC_ERR_OP);
    if (nelem == 0 || nmembers == 1)
        return TC_OK;
    grp_t g = {op, members, nmembers, comm, tag, wait};
    switch (alg) {
    case TC_HIER_REDUCE_FLAT:
        return tc_hier_reduce_flat(&g, buf, scratch, nelem, my_index, root_index);
    case TC_HIER_REDUCE_RSG:
        /* Fewer elements than members would leave members without a block. */
        if (nelem >= (size_t)nmembers)
            return tc_hier_reduce_rsg(&g, buf, scratch, nelem, my_index, root_index);
        return tc_hier_reduce_binomial(&g, buf, scratch, nelem, my_index, root_index);
    case TC_HIER_REDUCE_BINOMIAL:
    default:
        return tc_hier_reduce_binomial(&g, buf, scratch, nelem, my_index, root_index);
    }
}

tc_err_t tc_hier_allreduce_group(void *buf, void *scratch, size_t nelem, const tc_redop_t *op,
                                 const int *members, int nmembers, int my_index,
                                 tc_hier_allreduce_alg_t alg, MPI_Comm comm, int tag,
                                 const tc_wait_info_t *wait)
{
    tc_err_t rc = tc_hier_check_args(buf, scratch, nelem, op, members, nmembers, my_index, comm);
    if (rc != TC_OK)
        return rc;
    if ((int)alg < 0 || alg >= TC_HIER_ALLREDUCE_LAST)
        return tc_err(TC_ERR_ARG);
    if (alg == TC_HIER_ALLREDUCE_RING && !op->commutative)
        return tc_err(TC_ERR_OP);
    if (nelem == 0 || nmembers == 1)
        return TC_OK;
    grp_t g = {op, members, nmembers, comm, tag, wait};
    if (alg == TC_HIER_ALLREDUCE_RING)
        return tc_hier_allreduce_ring(&g, buf, scratch, nelem, my_index);
    return tc_hier_allreduce_recdbl(&g, buf, scratch, nelem, my_index);
}
