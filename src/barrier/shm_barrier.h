/* Shared-memory barriers (paper 003) among the processes of one segment, on
 * flags in the segment's barrier lines (shm/layout.h): sense-reversing (or
 * epoch) central counter, combining tree of arity n, dissemination,
 * tournament. One writer per cache line except the central counter's
 * counter line (that contention is the algorithm); every wait spins, then
 * yields (base/wait.h), and times out with a message naming the stage and
 * the peer.
 *
 * All processes of the segment call with the same alg and arity; the
 * barriers of one segment are called in the same order everywhere (like any
 * collective), which is what lets epochs replace resets.
 *
 * Split phases, for a hierarchical barrier (shm, then leaders, then shm):
 *   tc_shm_barrier_arrive:  returns at segment rank 0 (the leader) once every
 *                           process of the segment has arrived; elsewhere it
 *                           returns once this process's arrival is signalled
 *                           (it may wait on peers, e.g. in dissemination);
 *   tc_shm_barrier_release: the leader releases everyone; the others return
 *                           once released.
 * tc_shm_barrier = arrive + release, or the algorithm's own symmetric form
 * (dissemination needs no release phase) — every process leaves only after
 * every process has arrived. */
#ifndef TC_BARRIER_SHM_BARRIER_H
#define TC_BARRIER_SHM_BARRIER_H

#include "barrier.h"
#include "shm/segment.h"

/* TC_BARRIER_PAIRWISE is served by dissemination (same message pattern on
 * shared flags). @p arity >= 2 for TC_BARRIER_TREE. */
void tc_shm_barrier(tc_shm_comm_t *s, tc_barrier_alg_t alg, int arity);
void tc_shm_barrier_arrive(tc_shm_comm_t *s, tc_barrier_alg_t alg, int arity);
void tc_shm_barrier_release(tc_shm_comm_t *s, tc_barrier_alg_t alg, int arity);

#endif /* TC_BARRIER_SHM_BARRIER_H */
