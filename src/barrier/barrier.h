/* Barrier algorithms (paper 003), shared by the message-based barriers
 * (msg_barrier.h: between nodes or groups, point to point on a private
 * communicator) and the shared-memory barriers (shm_barrier.h: flags in a
 * node's segment). The order matches the model's tc_model_barrier_t
 * (model/cost.h); core checks it at compile time. */
#ifndef TC_BARRIER_BARRIER_H
#define TC_BARRIER_BARRIER_H

typedef enum {
    TC_BARRIER_CENTRAL,       /* central counter: gather arrivals at one process, release all */
    TC_BARRIER_TREE,          /* combining tree of arity n: arrivals up, release down */
    TC_BARRIER_DISSEMINATION, /* ceil(log2 P) rounds: i signals i + 2^r, waits for i - 2^r */
    TC_BARRIER_TOURNAMENT,    /* log2 P rounds of fixed winner/loser pairs, winners release */
    TC_BARRIER_PAIRWISE,      /* pairwise exchange / butterfly (Brooks), any P */
    TC_BARRIER_ALG_LAST
} tc_barrier_alg_t;

/* "central", "tree", "dissemination", "tournament", "pairwise". */
const char *tc_barrier_alg_name(tc_barrier_alg_t alg);

#endif /* TC_BARRIER_BARRIER_H */
