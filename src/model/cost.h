/* LogP / LogGP cost functions of every algorithm the library can run, and
 * the argmin that AdaptiveBarrier (paper 003) and the per-operation choice
 * use. Pure arithmetic: includes nothing else of ours.
 *
 * Times in microseconds (the units of tc_logp_t). Every function returns 0
 * for P <= 1 (nothing to do); log_n P is rounded up (ceil) everywhere: a
 * partial round costs a whole round.
 */
#ifndef TC_MODEL_COST_H
#define TC_MODEL_COST_H

#include <stddef.h>

#include "logp.h"

/* Same order as barrier/barrier.h's tc_barrier_alg_t. */
typedef enum {
    TC_MODEL_BARRIER_CENTRAL,
    TC_MODEL_BARRIER_TREE,
    TC_MODEL_BARRIER_DISSEMINATION,
    TC_MODEL_BARRIER_TOURNAMENT,
    TC_MODEL_BARRIER_PAIRWISE,
    TC_MODEL_BARRIER_LAST
} tc_model_barrier_t;

/* Predicted time of one barrier of @p P processes with algorithm @p alg
 * (@p arity: n of the combining tree; values below 2 mean 2). Formulas and
 * derivations: docs/model.md, "Barriers". */
double tc_model_barrier_cost(tc_model_barrier_t alg, int P, int arity, const tc_logp_t *p);

/* The cheapest of the algorithms whose bit (1u << alg) is set in @p allowed;
 * ties go to the lower enum value. @p costs (may be NULL) receives every
 * algorithm's cost (those not allowed too). @p allowed without any valid
 * bit means every algorithm (a caller never gets TC_MODEL_BARRIER_LAST). */
tc_model_barrier_t tc_model_barrier_argmin(unsigned allowed, int P, int arity, const tc_logp_t *p,
                                           double costs[TC_MODEL_BARRIER_LAST]);

/* Predicted time of one shared-memory barrier (barrier/shm_barrier.c) of
 * @p P processes of one segment with algorithm @p alg, from the shm row of
 * the LogP table (@p shm; logp.h: L = store + cache-line transfer, o_s =
 * the library's per-call path, o_r = poll, g = max(flag-write
 * gap, fetch-add on a line another process wrote)). With h = L + o_r (one
 * flag hop), f_r = max(o_r, g), R = ceil(log2 P), d = depth of the heap
 * tree of arity n over P processes (smallest d with 1 + n + ... + n^d >= P)
 * and k = min(n, P-1) children per parent:
 *   central       o_s + h + (P-1) f_r   P fetch-adds serialise on the
 *                                       counter line; one release flag
 *                                       read by all;
 *   tree(n)       o_s + d (2 h + (k-1) f_r)  per level one arrival hop,
 *                                       k-1 further set lines, one
 *                                       release hop to all k children;
 *   dissemination o_s + R (h + f_r)     every process stores and polls in
 *                                       the same round (pairwise runs as
 *                                       dissemination here);
 *   tournament    o_s + 2 R h           R rounds up, R wake-up hops down.
 * o_s is paid once per barrier (the process released last calls again
 * before it signals); every other hop is a bare store. Derivations:
 * docs/model.md, "Shared-memory barriers". P <= 1 costs 0; @p arity below
 * 2 means 2. */
double tc_model_shm_barrier_cost(tc_model_barrier_t alg, int P, int arity, const tc_logp_t *shm);

/* The cheapest shared-memory barrier among @p allowed (as
 * tc_model_barrier_argmin: ties to the lower enum value, @p costs may be
 * NULL, no valid bit means all). */
tc_model_barrier_t tc_model_shm_barrier_argmin(unsigned allowed, int P, int arity,
                                               const tc_logp_t *shm,
                                               double costs[TC_MODEL_BARRIER_LAST]);

/* ---- LogGP costs of the per-level algorithms of src/hier ------------------
 * m bytes, P members, p the LogGP parameters of the level; gamma is the time
 * to combine one byte in a reduction (us/byte). A message of m bytes costs
 * o_s + (m-1)G + L + o_r (paper 002's LogGP term) + rdv above the eager
 * limit E (tc_model_loggp_msg); a round in which a process sends m bytes
 * and receives m bytes at once costs max(g, o_s + X (m-1)G + L + o_r [+
 * rdv]) with X the level's duplex factor (tc_model_loggp_exchange);
 * docs/model.md, "LogGP costs" derives each formula. m == 0 or P <= 1
 * costs 0. Each function follows the message structure of its
 * implementation in hier/level_bcast.c and hier/level_reduce.c. */

/* One message of m bytes: o_s + (m-1)G + L + o_r, plus p->rdv when the
 * message is larger than the eager limit p->E > 0 (the rendezvous, logp.h);
 * 0 for m <= 0. Every per-level cost below counts its messages with it. */
double tc_model_loggp_msg(double m, const tc_logp_t *p);

/* One round in which a process sends m bytes and receives m bytes at once
 * (a Sendrecv of recursive halving or doubling, a ring step): the LogGP form
 * of paper 003's t_s = max(g, o_s + L + o_r), with the per-byte part of
 * both directions X (m-1)G, X = tc_logp_duplex(p) in [1, 2] (1: the two
 * directions overlap, a full-duplex NIC; 2: they serialise, the CPU copies
 * both), plus p->rdv above E; 0 for m <= 0. Every formula that prices a
 * simultaneous send and receive uses it (cost.c, cost_gather.c,
 * cost_reduce_scatter.c, cost_shm_coll.c's Exscan). */
double tc_model_loggp_exchange(double m, const tc_logp_t *p);

/* Bcast FLAT: the root starts P-1 sends, the last one arrives last. */
double tc_model_bcast_flat_cost(size_t m, int P, const tc_logp_t *p);
/* Bcast KNOMIAL of radix k (< 2 means 2): ceil(log_k P) rounds. */
double tc_model_bcast_knomial_cost(size_t m, int P, int k, const tc_logp_t *p);
/* Bcast SCATTER_ALLGATHER: binomial scatter + ring allgather; with m < P
 * the implementation runs KNOMIAL(k), and so does this cost. */
double tc_model_bcast_scatter_allgather_cost(size_t m, int P, int k, const tc_logp_t *p);

/* Reduce FLAT: the root receives and combines P-1 vectors one by one. */
double tc_model_reduce_flat_cost(size_t m, int P, double gamma, const tc_logp_t *p);
/* Reduce BINOMIAL (commutative op, or root 0; a non-commutative reduction
 * to another root adds one tc_model_loggp_msg(m)). */
double tc_model_reduce_binomial_cost(size_t m, int P, double gamma, const tc_logp_t *p);
/* Reduce RSG (Rabenseifner): fold to a power of two, recursive-halving
 * reduce-scatter, binomial gather. The implementation runs BINOMIAL when
 * there are fewer elements than members: the caller, who knows the element
 * size, picks that cost then. */
double tc_model_reduce_rsg_cost(size_t m, int P, double gamma, const tc_logp_t *p);

/* Allreduce RECDBL: recursive doubling with the non-power-of-two fold in
 * and result out. */
double tc_model_allreduce_recdbl_cost(size_t m, int P, double gamma, const tc_logp_t *p);
/* Allreduce RING: ring reduce-scatter + ring allgather, blocks of m/P. */
double tc_model_allreduce_ring_cost(size_t m, int P, double gamma, const tc_logp_t *p);

/* ---- Shared-memory pipelined Bcast (paper 000, section 5) -----------------
 * Times in any one unit (the paper's figures: t = 1 ns/byte, t_w = 50 t,
 * t_a = 10 t). */
typedef struct tc_model_shm {
    double t;    /* read or write one byte */
    double t_w;  /* wait for one notification (one hop of the notification tree) */
    double t_ws; /* root waits for a bank to be released */
    double t_a;  /* atomic decrement of a bank's reader count */
} tc_model_shm_t;

/* One broadcast of @p m bytes in fragments of @p f bytes through a queue of
 * @p S buffers; @p depth = notification hops from the root to the last
 * reader (flat and chain: p-1, k-ary: about k ceil(log_k p), k-nomial:
 * about (k-1) ceil(log_k p)); depth < 1 means 1.
 *  S == 1: ceil(m/f) (t_ws + depth t_w + t_a) + 2 m t (no overlap);
 *  S > 1:  t (2 min(f,m) + max(m-f, 0))        copy-in/copy-out overlapped
 *          + (depth - 1) t_w                      pipeline fill down the tree
 *          + ceil(m/f) t_w                        one notification per fragment
 *          + ceil(m/(S f)) (t_ws + t_a)           one bank sync per queue pass.
 * With depth 1 and t_a = 0 this is t * tc_shm_params_model_time(). */
double tc_model_shm_bcast_cost(size_t m, size_t f, int S, int depth, const tc_model_shm_t *sp);

/* ---- One-sided (RMA) broadcast, paper 002 ---------------------------------
 * Paper 002's symbols: q = max(o, g) (not paper 000's number of banks), o the
 * send overhead o_s, o_poll the helper thread's polling overhead (the paper's
 * o_r; not paper 003's receive overhead, so it is an argument here).
 *
 * Binomial: each step of the critical path is one PutRequest, o + (m-1)G +
 * 2q + L + o_poll (the data put; descriptor and flag each a further q behind
 * it; the flag seen by the next poll). The paper multiplies it by log2 P,
 * which holds for the largest-subtree-first order; its own PutLoop scans the
 * bits upward, serves the smallest subtree first and needs k (k + 1) / 2
 * sequential PutRequests for P = 2^k (bit-order correction). So log2 P is
 * replaced by R(P, order), the exact number of steps of the tree for P:
 *   LogGP: t = (o + (m-1)G + 2q + L + o_poll) R(P, order) + o + L
 *   LogP (m = 1): t = (o + 2q + L + o_poll) R(P, order) + o + L.
 * Linear (derived): the root starts P-1 puts, max(g, o + (m-1)G) apart; its
 * flush returns when the last one has arrived and been acknowledged:
 *   t = o + (m-1)G + (P-2) max(g, o + (m-1)G) + 2L.
 * m = 0 costs as m = 1 (the flags still travel); P <= 1 costs 0. */
typedef enum {
    TC_MODEL_RMA_ORDER_DOWN, /* largest subtree first (standard binomial) */
    TC_MODEL_RMA_ORDER_UP,   /* the paper's upward bit scan */
    TC_MODEL_RMA_ORDER_LAST
} tc_model_rma_order_t;

/* R(P, order): sequential PutRequests on the critical path of the binomial
 * tree over P processes (ceil(log2 P) downward; k (k + 1) / 2 upward for
 * P = 2^k, computed on the tree for other P). 0 for P <= 1. */
int tc_model_rma_binomial_rounds(int P, tc_model_rma_order_t order);

double tc_model_rma_bcast_binomial_cost(size_t m, int P, tc_model_rma_order_t order, double o_poll,
                                        const tc_logp_t *p);
double tc_model_rma_bcast_linear_cost(size_t m, int P, const tc_logp_t *p);

#endif /* TC_MODEL_COST_H */
