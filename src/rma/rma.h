/* One-sided (MPI RMA) broadcast, paper 002: internal interface of src/rma.
 *
 * src/rma stands alone (DESIGN.md): it includes nothing of ours except the
 * small helpers of src/core (log.h, config.h, wait.h, atomics.h).
 *
 * Runtime (one per process group, shared by every data window registered over
 * that group):
 *   reqwin      uint64 words, accessed only by MPI atomics (accumulate,
 *               fetch_and_op, get_accumulate):
 *                 req[r]                 r < p: sequence number of the latest
 *                                        binomial broadcast of root r whose
 *                                        request reached this process;
 *                 cnt[p + r*W + w]       broadcasts of root r on window w whose
 *                                        data reached this process (for the
 *                                        non-root wait/test; binomial: set by
 *                                        this process's helper once it has
 *                                        forwarded, linear: by the root).
 *   descrwin    one cache-line tc_rma_descr_t per root (slot = root, not sender:
 *               a process has one parent per root and a root never has two
 *               broadcasts in flight, so a slot is never overwritten before the
 *               helper has read it: the root's done counter proves it read it).
 *   donecntrwin one counter per process (padded to a cache line per rank: MPICH
 *               4.0.2 misdelivers to odd ranks in windows of 8 bytes per rank).
 * Every counter is a monotonically increasing sequence number: nothing is
 * reset, so there is no reset race.
 */
#ifndef TC_RMA_RMA_H
#define TC_RMA_RMA_H

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/wait.h"

/* Data windows registered at once, per process (window ids 0..W-1). */
#define TC_RMA_MAX_WINDOWS 32

/* PutLoop order (paper 002): the paper's upward bit scan serves the smallest
 * subtree first (log P (log P + 1) / 2 PutRequest steps for P = 2^k); the
 * standard binomial order, largest subtree first, takes log2 P steps. */
typedef enum {
    TC_RMA_ORDER_DOWN, /* largest subtree first (standard binomial) */
    TC_RMA_ORDER_UP,   /* the paper's upward bit scan */
    TC_RMA_ORDER_LAST
} tc_rma_order_t;

typedef enum {
    TC_RMA_ALG_AUTO,
    TC_RMA_ALG_LINEAR,
    TC_RMA_ALG_BINOMIAL,
    TC_RMA_ALG_LAST
} tc_rma_alg_t;

/* The descriptor a process receives with a forwarded broadcast. */
typedef struct tc_rma_descr {
    uint64_t seq;   /* root's binomial sequence number (== req[root] when valid) */
    uint64_t root;  /* rank of the root in the window's group */
    uint64_t wid;   /* window id (agreed by the group at registration) */
    uint64_t disp;  /* target displacement, in the data window's disp units */
    uint64_t bytes; /* payload size */
    uint64_t wseq;  /* this is the root's wseq-th broadcast on window wid */
    uint64_t order; /* tc_rma_order_t the root chose: forwarders use it too */
    uint64_t pad[TC_CACHELINE / sizeof(uint64_t) - 7];
} tc_rma_descr_t;
_Static_assert(sizeof(tc_rma_descr_t) == TC_CACHELINE, "one descriptor per cache line");
#define TC_RMA_DESCR_WORDS ((int)(sizeof(tc_rma_descr_t) / sizeof(uint64_t)))

/* Done counter window: one counter, padded (see above). */
#define TC_RMA_DONE_BYTES TC_CACHELINE

/* ---- binomial tree (tree.c, pure) ---------------------------------------- */

/* Children of relative rank @p srank in the binomial tree over @p p
 * processes, in the order PutLoop serves them; returns their number (at most
 * 31). */
int tc_rma_tree_children(int srank, int p, tc_rma_order_t order, int children[32]);

/* Completion time of a broadcast in PutRequest steps when every process
 * serves its children one after the other in @p order: ceil(log2 p) for
 * TC_RMA_ORDER_DOWN, k (k + 1) / 2 for TC_RMA_ORDER_UP and p = 2^k. 0 for
 * p <= 1. */
int tc_rma_tree_rounds(int p, tc_rma_order_t order);

/* ---- tunables (runtime.c) -------------------------------------------------- */

typedef struct tc_rma_knobs {
    tc_rma_alg_t alg;     /* TC_RMA_BCAST */
    size_t switch_bytes;  /* TC_RMA_BCAST_SWITCH: auto is binomial from here */
    tc_rma_order_t order; /* TC_RMA_PUTLOOP */
    int poll_spin;        /* TC_RMA_POLL_SPIN: helper polls before it sleeps */
    int poll_min_us;      /* TC_RMA_POLL_MIN_US: first sleep */
    int poll_max_us;      /* TC_RMA_POLL_MAX_US: longest sleep (paper: 1000) */
} tc_rma_knobs_t;

extern tc_rma_knobs_t tc_rma_knobs;

/* ---- runtime (runtime.c) ---------------------------------------------------- */

typedef struct tc_rma_rt {
    struct tc_rma_rt *next;
    MPI_Comm comm; /* the group's private communicator (for the windows) */
    MPI_Group group;
    int rank, size;
    int64_t serial; /* agreed by the group: identifies the runtime */
    int refs;       /* data windows registered on it */
    MPI_Win reqwin, descrwin, donewin;
    int threaded; /* a helper thread runs on every member (agreed) */
    pthread_t thread;
    atomic_int stop; /* set by unregister/finalize; the helper exits */
    /* Forwarding (paper 002's Broadcaster step) is done by whoever holds
     * fwd_lock: the helper thread, or a main thread that is waiting anyway
     * (wait/test at a non-root, flush at a root) and so need not wait for
     * the helper to wake from its back-off. seen and req under fwd_lock. */
    pthread_mutex_t fwd_lock;
    uint64_t *seen;   /* last req[r] handled, per root */
    uint64_t *req;    /* scratch: this process's request words */
    uint64_t *waited; /* main thread: broadcasts waited for, [root * W + wid] */
    /* Root side (the calling thread; calls on one runtime are serialised). */
    int inflight;         /* 0, or the tc_rma_alg_t of the broadcast in flight */
    int inflight_wid;     /* its window */
    uint64_t bseq;        /* binomial broadcasts started */
    uint64_t done_target; /* value of our done counter when they are all done */
    uint64_t wseq[TC_RMA_MAX_WINDOWS];
    tc_wait_info_t wait_info;
    char name[48];
} tc_rma_rt_t;

/* One registered data window. */
typedef struct tc_rma_win {
    int in_use;
    MPI_Win win;
    tc_rma_rt_t *rt;
    char *base; /* local memory */
    int disp_unit;
    MPI_Aint size;
} tc_rma_win_t;

/* Copy of the entry of @p wid (under the table lock: the helper thread looks
 * entries up while the main thread registers others). TC_OK if registered,
 * else TC_ERR_NOTFOUND. */
tc_err_t tc_rma_win_lookup(int wid, tc_rma_win_t *out);

/* Offsets (in uint64 words) in reqwin. */
static inline MPI_Aint tc_rma_req_index(int root)
{
    return root;
}
static inline MPI_Aint tc_rma_cnt_index(const tc_rma_rt_t *rt, int root, int wid)
{
    return (MPI_Aint)rt->size + (MPI_Aint)root * TC_RMA_MAX_WINDOWS + wid;
}

/* ---- broadcast (bcast.c) ------------------------------------------------------ */

/* These return TC_OK or why not (a failing PMPI call's code, or TC_ERR_*). */

/* PutRequest(rt->rank -> j): data, descriptor, flush, then the flags. */
tc_err_t tc_rma_put_request(tc_rma_rt_t *rt, const tc_rma_win_t *w, int j, const void *src,
                            const tc_rma_descr_t *d, int set_req);

/* PutLoop from this process for the broadcast @p d (root d->root). */
tc_err_t tc_rma_put_loop(tc_rma_rt_t *rt, const tc_rma_win_t *w, const void *src,
                         const tc_rma_descr_t *d);

/* Complete this root's broadcast in flight on @p rt, if any (blocking when
 * @p block, else one poll); *done = 1 when nothing is left in flight. */
tc_err_t tc_rma_root_complete(tc_rma_rt_t *rt, int block, int *done);

/* The helper's body (runtime.c starts it). */
void *tc_rma_helper_main(void *arg);
/* Called by a main thread that is waiting anyway (non-root wait/test, root
 * flush/test): forward what is pending unless the helper is at it. Returns
 * whether anything was forwarded. */
bool tc_rma_forward_help(tc_rma_rt_t *rt);

#endif /* TC_RMA_RMA_H */
