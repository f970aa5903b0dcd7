/* Costs of the shared-memory Allgather, Gather and Scatter (shm/allgather.c)
 * in paper 000's notation (tc_model_shm_t, model/cost.h): t = one byte
 * copied, t_w = one notification, t_ws = a wait for a bank to be released.
 * m bytes per process (one block), p processes, blocks moved in chunks of
 * @p chunk bytes per bank use (uses = ceil(m / chunk)); a core per process.
 * Pure arithmetic; every function returns 0 for m == 0 or p <= 1.
 *
 * Allgather, and Gather at its root: every process copies its block in
 * (m t, all at once), then a reader waits once per other block (its
 * fragments are all there by then: the writers started together) and copies
 * it out ((p - 1) (t_w + m t)); a further bank use costs one bank wait:
 *   p m t + (p - 1) t_w + (uses - 1) t_ws.
 * Scatter: the root copies the p - 1 blocks in one after the other, the
 * last receiver is notified after the last copy-in and copies its block out:
 *   p m t + t_w + (uses - 1) t_ws.
 * Alltoall (m bytes per block, uses = ceil(m / slot)): every process copies
 * its p - 1 blocks in (all at once), then waits once per other writer (one
 * notification per writer per bank use) and copies p - 1 blocks out:
 *   2 (p - 1) m t + (p - 1) t_w + (uses - 1) t_ws.
 */
/* The exchange among the top group's members of the hierarchical
 * Allgather(v) (hier/level_allgather.c), LogGP (cost.h): n bytes of result
 * in all, P members, pieces of n / P bytes on average; a round in which a
 * member sends and receives b bytes at once costs x(b) = max(g, o_s +
 * X (b-1) G + L + o_r [+ rdv]) (tc_model_loggp_exchange, X the duplex
 * factor):
 *   RING   (P - 1) rounds of n / P;
 *   RECDBL log2 P rounds of 2^r n / P (r = 0 ..); a P that is not a power of
 *          two runs Bruck, so RECDBL costs HUGE_VAL there (never chosen);
 *   BRUCK  ceil(log2 P) rounds of min(2^r, P - 2^r) n / P, plus the final
 *          rotation: n bytes copied locally at @p copy us per byte.
 * The volumes are the same ((P - 1) n / P bytes per member); the rounds
 * differ: RECDBL and BRUCK win on latency, the RING only where the model's
 * per-message terms say so (it never does under plain LogGP; the rule of
 * TC_HIER_MODEL=0 takes it from TC_HIER_LARGE, where it avoids the long
 * distance pairs of the other two on a real network). */
#ifndef TC_MODEL_COST_GATHER_H
#define TC_MODEL_COST_GATHER_H

#include <stddef.h>

#include "cost.h"

double tc_model_shm_allgather_cost(size_t m, size_t chunk, int p, const tc_model_shm_t *sp);
double tc_model_shm_scatter_cost(size_t m, size_t chunk, int p, const tc_model_shm_t *sp);
double tc_model_shm_alltoall_cost(size_t m, size_t chunk, int p, const tc_model_shm_t *sp);

double tc_model_allgather_ring_cost(size_t n, int P, const tc_logp_t *p);
double tc_model_allgather_recdbl_cost(size_t n, int P, const tc_logp_t *p);
double tc_model_allgather_bruck_cost(size_t n, int P, double copy, const tc_logp_t *p);

#endif /* TC_MODEL_COST_GATHER_H */
