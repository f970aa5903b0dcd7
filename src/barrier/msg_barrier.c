/* Message-based barriers (paper 003): the five base algorithms of
 * AdaptiveBarrierLogP over zero-byte PMPI point-to-point messages.
 *
 * The structure of each algorithm is exactly the one the model's cost
 * formulas (model/cost.c) assume; the message count and the number of
 * sequential message steps ("rounds") are stated above each function, for
 * n members, with L2 = ceil(log2 n), P2 = 2^floor(log2 n).
 *
 * One tag for everything: in every algorithm an ordered pair (from, to)
 * carries at most one message per barrier (arrivals go from higher to lower
 * member index, releases from lower to higher, and each dissemination or
 * butterfly round has a distinct partner). MPI's non-overtaking rule then
 * matches the k-th receive from a peer with that peer's k-th send, so a
 * member that has already entered the next barrier cannot be mistaken for
 * one still in the current one.
 *
 * Every send is completed before returning (no request outlives a call), and
 * every receive names its source (no MPI_ANY_SOURCE), so barriers on other
 * members of the same communicator and tag cannot interfere.
 */
#include "msg_barrier.h"

#include "base/names.h"

#include <stdlib.h>

/* Requests kept on the stack; a central root or a tree node with more
 * children than this allocates. */
#define TC_MSG_BARRIER_STACK_REQS 64

_Static_assert(TC_BARRIER_ALG_LAST == TC_BASE_ALGS_BARRIER, "base/names.h names every barrier");

const char *tc_barrier_alg_name(tc_barrier_alg_t alg)
{
    if ((int)alg < 0 || alg >= TC_BARRIER_ALG_LAST)
        return "unknown";
    return tc_base_alg_name(TC_BASE_OP_BARRIER, (int)alg);
}

typedef struct {
    MPI_Comm comm;
    const int *members; /* NULL: member i is rank i */
    int tag;
    const tc_wait_info_t *wait; /* base/wait_mpi.h; NULL: the MPI's blocking calls */
} tc_msg_barrier_ctx_t;

static int tc_msg_barrier_rank(const tc_msg_barrier_ctx_t *c, int i)
{
    return c->members ? c->members[i] : i;
}

/* The payload of every message is empty; a real address keeps MPIs that
 * look at the buffer of a zero-count transfer quiet. */
static char tc_msg_barrier_dummy;

static tc_err_t tc_msg_barrier_send(const tc_msg_barrier_ctx_t *c, int to)
{
    return tc_wait_mpi_send(&tc_msg_barrier_dummy, 0, tc_msg_barrier_rank(c, to), c->tag, c->comm,
                            c->wait, "barrier: send");
}

static tc_err_t tc_msg_barrier_recv(const tc_msg_barrier_ctx_t *c, int from)
{
    return tc_wait_mpi_recv(&tc_msg_barrier_dummy, 0, tc_msg_barrier_rank(c, from), c->tag, c->comm,
                            c->wait, "barrier: receive");
}

/* Wait for every request in turn (PMPI_Waitall would report a failure as
 * MPI_ERR_IN_STATUS). Returns the first failure; the remaining requests are
 * still waited for so none is left behind. @p peer: the rank a timeout names. */
static tc_err_t tc_msg_barrier_wait_each(const tc_msg_barrier_ctx_t *c, int count,
                                         MPI_Request *reqs, int peer)
{
    return tc_wait_mpi_all(count, reqs, c->wait, "barrier: wait for the round's messages", peer);
}

/* A round that both sends to @p to and receives from @p from: both are
 * posted before either is waited for, so two members exchanging (or a
 * dissemination cycle) never deadlock even if zero-byte sends were not
 * eager. */
static tc_err_t tc_msg_barrier_sendrecv(const tc_msg_barrier_ctx_t *c, int to, int from)
{
    MPI_Request reqs[2];
    tc_err_t rc = PMPI_Irecv(&tc_msg_barrier_dummy, 0, MPI_BYTE, tc_msg_barrier_rank(c, from),
                             c->tag, c->comm, &reqs[0]);
    if (rc != TC_OK)
        return rc;
    rc = PMPI_Isend(&tc_msg_barrier_dummy, 0, MPI_BYTE, tc_msg_barrier_rank(c, to), c->tag, c->comm,
                    &reqs[1]);
    if (rc != TC_OK) {
        /* Do not leave the posted receive behind on the error path. */
        PMPI_Cancel(&reqs[0]);
        PMPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
        return rc;
    }
    return tc_msg_barrier_wait_each(c, 2, reqs, tc_msg_barrier_rank(c, from));
}

/* Receive one message from each of members first, first + stride, ... (count
 * of them), all receives posted before the first wait, so arrivals are taken
 * in whatever order they come. Same shape for the sends (releases). */
static tc_err_t tc_msg_barrier_post_all(const tc_msg_barrier_ctx_t *c, int first, int count,
                                        int is_send)
{
    MPI_Request stack_reqs[TC_MSG_BARRIER_STACK_REQS];
    MPI_Request *reqs = stack_reqs;
    tc_err_t rc = TC_OK;
    int posted = 0;

    if (count <= 0)
        return TC_OK;
    if (count > TC_MSG_BARRIER_STACK_REQS) {
        reqs = malloc((size_t)count * sizeof(*reqs));
        if (!reqs)
            return tc_err(TC_ERR_NOMEM);
    }
    for (; posted < count; posted++) {
        int peer = tc_msg_barrier_rank(c, first + posted);
        rc = is_send ? PMPI_Isend(&tc_msg_barrier_dummy, 0, MPI_BYTE, peer, c->tag, c->comm,
                                  &reqs[posted])
                     : PMPI_Irecv(&tc_msg_barrier_dummy, 0, MPI_BYTE, peer, c->tag, c->comm,
                                  &reqs[posted]);
        if (rc != TC_OK)
            break;
    }
    if (rc != TC_OK) {
        /* Receives already posted would match a later barrier's messages. */
        for (int i = 0; i < posted && !is_send; i++)
            PMPI_Cancel(&reqs[i]);
        tc_msg_barrier_wait_each(c, posted, reqs, tc_msg_barrier_rank(c, first));
    } else {
        rc = tc_msg_barrier_wait_each(c, count, reqs, tc_msg_barrier_rank(c, first));
    }
    if (reqs != stack_reqs)
        free(reqs);
    return rc;
}

/* Central counter: member 0 posts n - 1 receives, waits for all arrivals,
 * then sends n - 1 releases. Messages 2(n - 1); rounds 2 (one arrival, one
 * release), with member 0 receiving and sending n - 1 messages in a row
 * (the (P - 2) f_r + (P - 2) f_s terms of the model). */
static tc_err_t tc_msg_barrier_central(const tc_msg_barrier_ctx_t *c, int n, int me)
{
    tc_err_t rc;
    if (me != 0) {
        rc = tc_msg_barrier_send(c, 0);
        return rc != TC_OK ? rc : tc_msg_barrier_recv(c, 0);
    }
    rc = tc_msg_barrier_post_all(c, 1, n - 1, 0);
    return rc != TC_OK ? rc : tc_msg_barrier_post_all(c, 1, n - 1, 1);
}

/* Combining tree, paper 003's formula: arrivals climb an arity-k tree rooted
 * at member 0 (children of i: k i + 1 .. k i + k), the release comes back
 * down a binomial tree rooted at member 0 (parent of i: i with its lowest set
 * bit cleared). Messages 2(n - 1); rounds ceil(log_k n) up, each node
 * receiving from up to k children, plus L2 down. */
static tc_err_t tc_msg_barrier_tree(const tc_msg_barrier_ctx_t *c, int n, int me, int k)
{
    long first_child = (long)k * me + 1;
    tc_err_t rc = TC_OK;

    if (first_child < n) {
        long last = first_child + k - 1 < n ? first_child + k - 1 : n - 1;
        rc = tc_msg_barrier_post_all(c, (int)first_child, (int)(last - first_child + 1), 0);
        if (rc != TC_OK)
            return rc;
    }

    /* lowbit: the release subtree of member me spans [me, me + lowbit); the
     * root's spans everything. */
    unsigned lowbit;
    if (me != 0) {
        rc = tc_msg_barrier_send(c, (me - 1) / k);
        if (rc != TC_OK)
            return rc;
        lowbit = (unsigned)me & (0u - (unsigned)me);
        rc = tc_msg_barrier_recv(c, (int)((unsigned)me & ~lowbit));
        if (rc != TC_OK)
            return rc;
    } else {
        lowbit = 1;
        while (lowbit < (unsigned)n)
            lowbit <<= 1;
    }
    /* Largest subtree first: it has the longest way to go. */
    for (unsigned d = lowbit >> 1; d > 0; d >>= 1) {
        if ((unsigned)me + d < (unsigned)n) {
            rc = tc_msg_barrier_send(c, (int)((unsigned)me + d));
            if (rc != TC_OK)
                return rc;
        }
    }
    return TC_OK;
}

/* Dissemination: in round r member i signals (i + 2^r) mod n and waits for
 * (i - 2^r) mod n; after L2 rounds every member has heard, transitively,
 * from every other. Messages n L2; rounds L2, one send and one receive each
 * (the model's max(t_r, t_s) ceil(log2 P)). */
static tc_err_t tc_msg_barrier_dissemination(const tc_msg_barrier_ctx_t *c, int n, int me)
{
    for (long d = 1; d < n; d <<= 1) {
        int to = (int)((me + d) % n);
        int from = (int)((me - d + n) % n);
        tc_err_t rc = tc_msg_barrier_sendrecv(c, to, from);
        if (rc != TC_OK)
            return rc;
    }
    return TC_OK;
}

/* Tournament: in round r member i with i % 2^(r+1) == 0 is the winner of its
 * match against i + 2^r (a bye when that is >= n) and waits for the loser's
 * arrival; the loser sends its arrival and waits to be woken. Member 0 is the
 * champion; wake-ups retrace the matches a member won, in reverse round
 * order. Messages 2(n - 1); rounds L2 of arrivals plus L2 of wake-ups, one
 * message each on the critical path. */
static tc_err_t tc_msg_barrier_tournament(const tc_msg_barrier_ctx_t *c, int n, int me)
{
    long d = 1; /* 2^r */
    tc_err_t rc;

    for (; d < n; d <<= 1) {
        if (me % (2 * d) == 0) {
            if (me + d < n) {
                rc = tc_msg_barrier_recv(c, (int)(me + d));
                if (rc != TC_OK)
                    return rc;
            }
        } else {
            /* Lost in round r: me % 2^(r+1) == 2^r, the winner is me - 2^r.
             * Post the wake-up's receive with the arrival. */
            rc = tc_msg_barrier_sendrecv(c, (int)(me - d), (int)(me - d));
            if (rc != TC_OK)
                return rc;
            break;
        }
    }
    /* d is the round this member lost (or the first past the last round for
     * the champion); wake the losers of the rounds below it, latest first. */
    for (d >>= 1; d > 0; d >>= 1) {
        if (me + d < n) {
            rc = tc_msg_barrier_send(c, (int)(me + d));
            if (rc != TC_OK)
                return rc;
        }
    }
    return TC_OK;
}

/* Pairwise exchange / butterfly (Brooks). With P2 the largest power of two
 * <= n: the n - P2 members >= P2 first signal me - P2 and wait for its
 * release; the members < P2 run log2 P2 rounds exchanging with me XOR 2^r,
 * after which each has heard from all P2 (and so from the extra members),
 * then release their extra member. Messages P2 log2 P2 + 2(n - P2); rounds
 * log2 P2, plus 2 when n is not a power of two. */
static tc_err_t tc_msg_barrier_pairwise(const tc_msg_barrier_ctx_t *c, int n, int me)
{
    int p2 = 1, rc;
    while (p2 <= n / 2)
        p2 <<= 1;

    if (me >= p2) {
        /* Signal and post the release's receive together. */
        return tc_msg_barrier_sendrecv(c, me - p2, me - p2);
    }
    int extra = me + p2 < n;
    if (extra) {
        rc = tc_msg_barrier_recv(c, me + p2);
        if (rc != TC_OK)
            return rc;
    }
    for (int d = 1; d < p2; d <<= 1) {
        rc = tc_msg_barrier_sendrecv(c, me ^ d, me ^ d);
        if (rc != TC_OK)
            return rc;
    }
    return extra ? tc_msg_barrier_send(c, me + p2) : TC_OK;
}

tc_err_t tc_msg_barrier(tc_barrier_alg_t alg, MPI_Comm comm, const int *members, int n, int me,
                        int arity, int tag, const tc_wait_info_t *wait)
{
    tc_msg_barrier_ctx_t c = {comm, members, tag, wait};

    if (n < 1 || me < 0 || me >= n)
        return tc_err(TC_ERR_ARG);
    if (n == 1)
        return TC_OK;
    switch (alg) {
    case TC_BARRIER_CENTRAL:
        return tc_msg_barrier_central(&c, n, me);
    case TC_BARRIER_TREE:
        if (arity < 2)
            return tc_err(TC_ERR_ARG);
        return tc_msg_barrier_tree(&c, n, me, arity);
    case TC_BARRIER_DISSEMINATION:
        return tc_msg_barrier_dissemination(&c, n, me);
    case TC_BARRIER_TOURNAMENT:
        return tc_msg_barrier_tournament(&c, n, me);
    case TC_BARRIER_PAIRWISE:
        return tc_msg_barrier_pairwise(&c, n, me);
    default:
        return tc_err(TC_ERR_ARG);
    }
}
