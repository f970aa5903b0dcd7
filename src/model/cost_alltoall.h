/* LogGP costs of the Alltoall(v) across nodes (hier/hier_alltoall.c,
 * docs/model.md "Alltoall across nodes"): every block through the node
 * leaders (the aggregation), or every block point to point (Alltoallv's
 * larger blocks). m bytes per block, n nodes, node k of
 * n_k = start[k + 1] - start[k] processes (start[0] = 0, p = start[n]); @p node: the LogGP
 * parameters between a node's processes, @p top: between two nodes' leaders; @p copy: us per byte
 * copied in memory. msg(b), sg(b), rg(b) as in cost.h: one message of b bytes, the interval between
 * consecutive sends, receives. Pure arithmetic; 0 for m == 0, one process, or one node (nothing
 * crosses).
 *
 * Aggregated, node a's leader (R = p m, one process's row):
 *   up      n_a > 1: msg_N(R) + (n_a - 2) rg_N(R)   the members' rows in
 *           (Alltoallv first the sizes rows of 8p bytes the same way);
 *   pack    n_a (p - n_a) m copy                      the blocks for the other
 *                                                     nodes, node by node;
 *   across  B_b = n_a n_b m to and from each other node b, all posted
 *           together: msg_T(B_max) + sum over the other n - 2 nodes of
 *           max(sg_T(B_b), rg_T(B_b));
 *   rows    n_a p m copy                              every member's row;
 *   down    n_a > 1: msg_N(R) + (n_a - 2) sg_N(R)   the rows out.
 * Direct, a process of node a (p - 1 blocks out, p - 1 in, all posted
 * together; p - n_a of each across nodes):
 *   msg_T(m) + (p - n_a - 1) max(sg_T(m), rg_T(m)) + (n_a - 1) max(sg_N(m), rg_N(m)).
 * The call's time is the largest over the nodes (the leaders' critical
 * paths, tc_model_alltoall_*_max). */
#ifndef TC_MODEL_COST_ALLTOALL_H
#define TC_MODEL_COST_ALLTOALL_H

#include <stdbool.h>
#include <stddef.h>

#include "logp.h"

double tc_model_alltoall_aggregated_cost(size_t m, int n, const int *start, int a, bool v,
                                         double copy, const tc_logp_t *node, const tc_logp_t *top);
double tc_model_alltoall_direct_cost(size_t m, int n, const int *start, int a,
                                     const tc_logp_t *node, const tc_logp_t *top);

/* The largest of the above over the n nodes. */
double tc_model_alltoall_aggregated_max(size_t m, int n, const int *start, bool v, double copy,
                                        const tc_logp_t *node, const tc_logp_t *top);
double tc_model_alltoall_direct_max(size_t m, int n, const int *start, const tc_logp_t *node,
                                    const tc_logp_t *top);

/* The model's crossover: the largest power of two m <= @p limit such that
 * the aggregation costs less than the direct exchange at every power of two
 * from 1 to m; 0 when it does not at 1 byte. (Both costs grow with m, the
 * aggregation faster: a leader carries its node's blocks.) */
size_t tc_model_alltoall_crossover(size_t limit, int n, const int *start, bool v, double copy,
                                   const tc_logp_t *node, const tc_logp_t *top);

#endif /* TC_MODEL_COST_ALLTOALL_H */
