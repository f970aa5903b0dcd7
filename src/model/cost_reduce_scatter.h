/* Costs of the Reduce_scatter paths (issue 19): the segment's slice scheme
 * (shm/reduce_scatter.c) in paper 000's notation (tc_model_shm_t, cost.h),
 * and the top group's pairwise reduce-scatter of the hierarchical version
 * (hier/hier_reduce_scatter.c) in LogGP terms (tc_model_loggp_exchange). gamma:
 * combining one byte. Pure arithmetic; 0 for an empty message or p <= 1.
 *
 * Segment, m bytes per process (equal blocks), M = p m the whole message,
 * fragments of f bytes (nfrag = ceil(M / f)):
 *   M <= inline_max: every process writes its message into its line, waits
 *     for the p - 1 others and folds its block from them into a local
 *     accumulator, then copies it out:
 *       M t + (p-1) t_w + (p-1) m gamma + m t;
 *   else: every process copies the others' blocks of its message into its
 *     slots (its own block stays out: (M - m) t), waits for the first
 *     fragment of each peer and one flag per later fragment, and folds its
 *     block from the p - 1 peers' slots straight into its buffer:
 *       (M - m) t + (p-1) t_w + (nfrag-1) t_w + (p-1) m (t + gamma).
 *   (Every process does the same work at the same time: a core per process.)
 *
 * Pairwise, P members, m bytes per member's share: P - 1 steps, each one
 * Sendrecv of a share (a share out and one in at once: x(m) = max(g, o_s +
 * X (m-1) G + L + o_r [+ rdv]), X the duplex factor) and one fold of it:
 *       (P-1) (x(m) + m gamma). */
#ifndef TC_MODEL_COST_REDUCE_SCATTER_H
#define TC_MODEL_COST_REDUCE_SCATTER_H

#include <stddef.h>

#include "cost.h"
#include "logp.h"

double tc_model_shm_reduce_scatter_cost(size_t m, size_t f, int p, double gamma, size_t inline_max,
                                        const tc_model_shm_t *sp);

double tc_model_reduce_scatter_pairwise_cost(size_t m, int P, double gamma, const tc_logp_t *p);

#endif /* TC_MODEL_COST_REDUCE_SCATTER_H */
