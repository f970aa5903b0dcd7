/* Node-aware aggregation of Alltoall and Alltoallv across nodes (issue 19,
 * docs/alltoall.md): an Alltoall of p processes on n nodes costs the MPI's
 * own about p^2 inter-node messages; through the node leaders it takes
 * n (n - 1).
 *
 *  1. up: every process hands its outgoing blocks to its node's leader (the
 *     node's lowest rank);
 *  2. the leaders exchange one message per node pair: for each of the
 *     sender's processes in rank order, its blocks to the receiving node's
 *     processes in rank order;
 *  3. down: each leader hands every member its received blocks in source
 *     rank order (the blocks between two processes of one node ride along
 *     through the leader).
 *
 * The nodes come from every process's locality (hier.h: h->locs, the same
 * on every process), numbered by their lowest rank, each node's ranks taken
 * in ascending order, so the blocks land right whatever the placement
 * (ranks interleaved across nodes, split or reordered communicators).
 * Everything is point to point on the context's private communicator
 * (TC_TAG_A2A_* in base/tags.h), on blocks that are bytes in one piece each.
 *
 * Alltoallv: no process knows the others' counts, so which block goes how
 * rests on what both of its ends know, its size (the sender's count and the
 * receiver's count describe the same bytes): a block of 1 to pl->small bytes
 * between two different processes goes through the leaders, a larger one
 * straight from its sender to its receiver, an empty one nowhere. Each
 * process first sends its leader its row of aggregated sizes in both
 * directions (2p sizes), so the leader knows every length it packs, sends,
 * receives and hands down without a probe or another round. Every message
 * of the leaders' part goes, whatever the counts (so that a failure can
 * travel with them, tc_hier_alltoallv): a member's blocks to its leader
 * (empty when it has none), each leader's message to every other leader
 * and each member's row, these two with one byte more than their blocks.
 */
#ifndef TC_HIER_HIER_ALLTOALL_H
#define TC_HIER_HIER_ALLTOALL_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "hier.h"

/* Aggregation only while a leader's buffers (at most 4 x its node's
 * processes x p blocks) stay below 4 x this many bytes. */
#define TC_HIER_A2A_ROWS_MAX ((size_t)16 << 20)

/* The nodes of the communicator (the same on every process): node k's
 * ranks, ascending, are memb[start[k] .. start[k + 1]); its leader is the
 * first. Built once per communicator (the dispatcher keeps it in its
 * context): nothing in it depends on a call. */
typedef struct tc_hier_a2a_plan {
    int n;        /* nodes; 0: the communicator never aggregates (small is 0) */
    int nmax;     /* ranks of the largest node */
    int *node;    /* [p] node of rank x */
    int *pos;     /* [p] index of x among its node's ranks */
    int *start;   /* [n + 1] */
    int *memb;    /* [p] */
    size_t *off;  /* [n] Alltoall: node k's part of this process's node leader's exchange
                     buffers starts off[k] blocks in (times the call's block size) */
    size_t small; /* blocks of 1 to small bytes go through the leaders (Alltoall: the call
                     aggregates when its block is one); 0: never */
    const tc_wait_info_t *wait; /* the hierarchy's message waits (h->msg_wait) */
} tc_hier_a2a_plan_t;

/**
 * The plan of the @p p processes of @p h seen from @p rank, built on values
 * every process knows alike: the agreed hierarchy and TC_HIER_A2A_AGGREGATE
 * (h->a2a_aggregate, 0: never), every process's node. The communicator
 * aggregates (pl->small > 0) when every node is known, there are at least
 * two nodes and fewer nodes than processes, and small, h->a2a_aggregate
 * capped so that the largest node's rows (n_max p small bytes) stay within
 * TC_HIER_A2A_ROWS_MAX, is at least 1.
 * @param out  *out: the plan (one allocation; tc_hier_alltoall_plan_free)
 * @return TC_OK, or TC_ERR_NOMEM (its few ints per process could not be
 *         allocated; *out NULL)
 */
tc_err_t tc_hier_alltoall_plan_new(const tc_hier_t *h, int rank, int p, tc_hier_a2a_plan_t **out);
void tc_hier_alltoall_plan_free(tc_hier_a2a_plan_t *pl);

/* Whether a call aggregates: an Alltoall of blocks of @p block bytes (@p v
 * false) when they are 1 to pl->small bytes; an Alltoallv (@p v true)
 * whenever the communicator aggregates at all (its blocks are routed one by
 * one, tc_hier_alltoallv). The same on every process. */
static inline bool tc_hier_alltoall_aggregates(const tc_hier_a2a_plan_t *pl, bool v, size_t block)
{
    return pl->small > 0 && (v || (block > 0 && block <= pl->small));
}

/**
 * Alltoall through the node leaders. A non-leader hands its whole send row
 * to its leader and gets its whole receive row back.
 *
 * A process that cannot take part (its blocks could not be staged, a
 * leader's buffers could not be allocated) still makes the call's messages,
 * empty where its data would be: every message carries at least one block,
 * so an empty one is the flag, and it travels on with the call's own
 * messages (a member's row to its leader, the leaders' exchange, the rows
 * back), so every process returns an error instead of waiting for the
 * failed one (no extra message on the success path). A leader that failed
 * takes what it is sent with receives of 0 bytes (the MPI truncates them,
 * reported to priv's handler: MPI_ERRORS_RETURN for those receives).
 * @param sbase this process's p blocks of @p block bytes, rank order
 * @param rbase receives p blocks (must not overlap sbase)
 * @param failed TC_OK, or why this process cannot take part (sbase and rbase
 *        are then not used and may be NULL)
 * @return TC_OK; @p failed; TC_ERR_NOMEM (this leader's buffers);
 *         TC_ERR_PEER (another process failed); or the failing MPI call's
 *         code.
 */
tc_err_t tc_hier_alltoall(const tc_hier_a2a_plan_t *pl, const char *sbase, char *rbase,
                          size_t block, int rank, int p, MPI_Comm priv, tc_err_t failed);

/**
 * Alltoallv through the node leaders (blocks of 1 to pl->small bytes) and
 * point to point (larger blocks; see above).
 * @param sptr   p pointers: the block to process j, sbytes[j] bytes in one piece
 * @param rptr   p pointers: the block from process j, rbytes[j] bytes (no
 *               receive block overlaps a send block: stage MPI_IN_PLACE)
 * Counts that disagree between two processes are not detected (the bytes
 * then land wrong, or the MPI reports a truncation).
 *
 * A failure travels as in tc_hier_alltoall, on messages that always go: a
 * process that cannot take part (its blocks could not be staged, its
 * requests and rows or a leader's buffers could not be allocated) sends
 * every message it would send empty, and takes what it is sent without a
 * buffer (receives of 0 bytes, truncated). A member's sizes row (never
 * empty) carries the flag to its leader; a leader that failed or saw it
 * sends empty messages to the other leaders and its members, and a leader
 * that received an empty one sends its members empty rows (an exchange
 * message or a row carries one byte more than its blocks, so an empty one
 * is never data). The direct blocks' pieces of a failed process are empty
 * (never data either: each is at least one byte); their receivers learn of
 * the failure from their rows or leaders' messages.
 * @param failed TC_OK, or why this process cannot take part (sptr and
 *        rptr are then not used and may be NULL; sbytes and rbytes are)
 * @return TC_OK; @p failed; TC_ERR_NOMEM (this process's allocation);
 *         TC_ERR_PEER (another process failed); or the failing MPI call's
 *         code.
 */
tc_err_t tc_hier_alltoallv(const tc_hier_a2a_plan_t *pl, const char *const *sptr,
                           const size_t *sbytes, char *const *rptr, const size_t *rbytes, int rank,
                           int p, MPI_Comm priv, tc_err_t failed);

#endif /* TC_HIER_HIER_ALLTOALL_H */
