/* The node-shared segment of one communicator (paper 000, stage 1) and the
 * per-process state of the shared-memory collectives that run on it.
 *
 * Life cycle (tc_shm_comm_create, collective over the node communicator):
 *   1. the node's first process creates the segment, sizes it (ftruncate)
 *      and allocates the header with posix_fallocate. By default it is a
 *      memfd (memfd_create "topocoll": no name in any file system, shown as
 *      /memfd:topocoll in /proc/<pid>/maps, freed by the kernel when the
 *      last process holding it is gone, killed or not). TC_SHM_MECHANISM=
 *      named, or a process that cannot open a memfd, gives a named one:
 *      /dev/shm/topocoll-<creator pid>-<16 random hex>, O_CREAT|O_EXCL, 0600
 *      (before either, a stale named file whose creator is gone and that
 *      nobody maps is removed);
 *   2. the creator's pid, descriptor (or name) go to the others (PMPI_Bcast),
 *      they open it: a memfd through /proc/<pid>/fd/<fd>, else pidfd_getfd
 *      (probed once per process). An allreduce agrees: if any process could
 *      not open the memfd, all retry with a named segment together; a named
 *      segment is unlinked right after this allreduce (every process that
 *      will ever open it has), so a kill leaves a file only inside this
 *      window of one broadcast and one allreduce;
 *   3. every process maps it, turns readahead off (MADV_RANDOM) and allocates
 *      its own region with posix_fallocate, so the pages come from its own
 *      NUMA node (TC_SHM_PLACEMENT=touch: the kernel allocates shmem pages by
 *      the allocating task's policy, local by default; =mbind: the region is
 *      first bound to the process's node with libnuma; memfds and /dev/shm
 *      files are both shmem, so this holds for both); a full /dev/shm (or
 *      memory cgroup) fails here, not as a SIGBUS later;
 *   4. an allreduce tells whether every process is in;
 *   5. each process checks with move_pages where its region's pages are.
 * A local failure at any step is returned, not hidden: the caller agrees on
 * a common fallback with all processes of the communicator.
 */
#ifndef TC_SHM_SEGMENT_H
#define TC_SHM_SEGMENT_H

#include <mpi.h>
#include <stdint.h>

#include "base/atomics.h"
#include "base/redop.h"
#include "base/wait.h"
#include "copy.h"
#include "layout.h"
#include "locks/rwlock.h"
#include "settings.h"
#include "tree.h"

/* Agreed parameters of one segment. */
typedef struct tc_shm_params {
    int S, q;
    size_t f;
    tc_tree_kind_t tree;
    int arity;
    double tw_over_t;    /* the model's t_w / t: per-message fragment size */
    size_t stream_bytes; /* TC_SHM_STREAM_BYTES: ring window for messages > the queue */
    /* Reduce/Allreduce area of each region (see reduce.c). */
    int reduce_slots;           /* TC_SHM_REDUCE_SLOTS: fragment slots per process */
    size_t reduce_slot_bytes;   /* TC_SHM_REDUCE_SLOT_BYTES: bytes per slot (cache-line multiple) */
    int reduce_slots_contended; /* TC_SHM_REDUCE_SLOTS_CONTENDED: slots per process a writer
                                   may use while contended (>= reduce_slots; reduce_slots.c) */
    size_t reduce_wide_bytes;   /* TC_SHM_REDUCE_WIDE_BYTES: 0 (off) or more than
                                   reduce_slot_bytes: the slots' size, wide fragments' cap */
    size_t reduce_wide_min;     /* TC_SHM_REDUCE_WIDE_MIN: reductions of at least this many
                                   bytes race the two fragment sizes (core/race.h); 0: never */
    size_t reduce_slice_min;    /* TC_SHM_REDUCE_SLICE_MIN: fragments of at least this many bytes
                                   are combined slice by slice by all processes (p > 2) */
    size_t reduce_tree_max;     /* TC_SHM_REDUCE_TREE_MAX: fragments of at most this many bytes
                                   go up a tree of partial results (p > 2); 0: never */
    int reduce_tree_arity;      /* TC_SHM_REDUCE_TREE_ARITY: children per process in that tree */
    int scan_tree_min;          /* TC_SHM_SCAN_TREE_MIN: Scan's rounds from this many processes
                                   (messages of one slot at most); 0: always the chain */
    int reduce_copy;            /* TC_SHM_REDUCE_COPY: TC_SHM_COPY_* (local, not agreed) */
    int bcast_copy;             /* TC_SHM_BCAST_COPY: TC_SHM_COPY_* (local, not agreed) */
    tc_lock_scheme_t lock_scheme; /* TC_LOCK_SCHEME: the node store's lock (store.h) */
} tc_shm_params_t;

/* Local policy (not agreed: a local failure is agreed afterwards). */
typedef struct tc_shm_policy {
    tc_placement_t placement;
    size_t max_segment;           /* TC_SHM_MAX_SEGMENT */
    size_t max_total;             /* TC_SHM_MAX_TOTAL */
    size_t max_node;              /* TC_SHM_MAX_NODE (checked by the creator) */
    tc_shm_mechanism_t mechanism; /* TC_SHM_MECHANISM (agreed in tc_shm_comm_create) */
    int fail;                     /* non-zero: fail locally on purpose (cap already exceeded) */
} tc_shm_policy_t;

typedef struct tc_shm_comm {
    tc_shm_layout_t layout;
    char *base; /* the mapping; NULL when not mapped */
    int rank, p;
    tc_shm_tree_t tree;
    const tc_wait_info_t *wait;
    /* Broadcast protocol state, identical on every process (all see every
     * broadcast in the same order). */
    uint64_t uses;        /* bank uses so far */
    uint64_t *bank_frags; /* [q]: fragments announced in bank b so far */
    double tw_over_t;     /* model ratio t_w / t for per-message fragment sizes */
    size_t stream_bytes;  /* ring window for messages larger than the queue (0 = off) */
    uint64_t *seen_done;  /* [p]: the last value of done[i] this process read (as a root):
                             done only grows, so a bank wait that this already satisfies
                             needs no read of i's line */
    /* The largest block of the last Alltoallv through the segment, agreed in
     * its first bank use (alltoall.c), the same on every process; 0 before
     * the first. What the next one races on (core/alltoall.c). */
    uint64_t a2av_largest;
    /* The run-ahead ring (ring_lines.h), identical on every process. */
    uint64_t ring_uses;   /* ring calls (small Bcasts and Scatters) so far */
    uint64_t *seen_bdone; /* [p]: the last value of bdone[i] this process read (as a
                             parent) */
    /* Reduce protocol state (reduce.c), identical on every process. */
    uint64_t red_frags;      /* data fragments so far */
    uint64_t red_inline;     /* inline fragments so far */
    uint64_t red_packed;     /* packed calls (small Reduces to a root) so far */
    uint64_t *seen_rdone;    /* [3p]: last rdone / rdone_inline / pdone of each process read */
    size_t rfrag_default;    /* a reduction fragment's cap: TC_SHM_REDUCE_SLOT_BYTES, <= the
                                slots (layout.rslot_bytes, which wide fragments fill) */
    size_t rfrag_call;       /* the cap of Reduce/Allreduce/Reduce_scatter's fragments:
                                rfrag_default, but layout.rslot_bytes during a call the
                                fragment race gave wide ones (core/race.h: its dispatcher
                                sets it and sets it back); the same on every process */
    size_t reduce_wide_min;  /* the fragment race's threshold (0: no wide fragments) */
    size_t reduce_slice_min; /* slice-combine fragments of at least this (p > 2) */
    size_t reduce_tree_max;  /* tree-combine fragments of at most this (p > 2); 0: never */
    int reduce_tree_arity;   /* children per process in the reduction tree */
    int scan_tree_min;       /* scan.c: rounds instead of the chain from this p (0: never) */
    int reduce_copy;         /* TC_SHM_COPY_*: this process's publication copy (copy.h) */
    int bcast_copy;          /* TC_SHM_COPY_*: its copy-in as a Bcast root (copy.h) */
    /* Writer-chosen slots (reduce_slots.c; layout.rdepth < layout.rslots),
     * this process's own: */
    uint64_t rdepth_call; /* slots the current reduction may run ahead through */
    uint64_t rwf_call;    /* a publication's WF waits for fragment k - rwf_call: rdepth_call,
                             or all slots where the run-ahead has other bounds (reduce.c) */
    uint64_t *rq_frag;    /* [rslots]: fragments this process claimed a slot for, oldest
                             first, from rq_head to rq_tail (mod rslots) */
    int *rq_slot;         /* [rslots]: their slots */
    uint64_t rq_head, rq_tail;
    int *rfree;            /* [rslots]: released slots, the last released on top */
    int rfree_n;           /* how many */
    int rfresh;            /* slots below it have been used (or are the fixed ring's) */
    unsigned char *rstate; /* [rslots]: each slot's state (reduce_slots.c) */
    /* Barrier state (barrier/shm_barrier.c), identical on every process. */
    uint64_t bar_epoch;   /* barriers (or arrive/release pairs) completed on this segment */
    uint64_t bar_central; /* of which central-counter barriers (the counter's target is
                             p * bar_central) */
    /* Node store (store.h); the lock and the area are in the header pages. */
    tc_rwlock_t store_lock; /* this process's handle (mem NULL: not attached) */
    int store_ok;           /* attached, and no failure seen by this process */
    int store_logged;       /* this process has logged the store's failure */
    /* Placement report. */
    int numa_node;       /* this process's NUMA node at set-up, -1 if unknown */
    long pages_local;    /* pages of our region on numa_node */
    long pages_checked;  /* pages of our region move_pages answered for; -1: no check */
    int memfd;           /* 1: a memfd segment; 0: a named one (unlinked at set-up) */
    char name[48];       /* "memfd:topocoll (pid P, fd F)" or the (already unlinked) name */
    char mechanism[160]; /* why memfd or named (the creator's reason), for reports */
} tc_shm_comm_t;

/* Collective over @p node_comm (all its processes call it with the same
 * @p params); all-or-nothing over the node. Returns TC_OK with *out set, or,
 * with *out NULL, why this process could not take part (TC_ERR_SYS with the
 * errno of the call that failed, TC_ERR_NOMEM, TC_ERR_LIMIT for a
 * TC_SHM_MAX_* cap, TC_ERR_NOTSUP for a refused mechanism) or TC_ERR_PEER
 * when it could but another could not. Logs the details at verbosity >= 1. */
tc_err_t tc_shm_comm_create(tc_shm_comm_t **out, MPI_Comm node_comm, const tc_shm_params_t *params,
                            const tc_shm_policy_t *policy, const tc_wait_info_t *wait);
/* Local: unmap and free. Safe on NULL. */
void tc_shm_comm_destroy(tc_shm_comm_t *s);

/* Bytes of segments this process has mapped now (for TC_SHM_MAX_TOTAL). */
size_t tc_shm_mapped_total(void);

/* Bytes of the library's segments mapped on this node by any process of
 * this user, each segment counted once (by device and inode), read from
 * /proc/<pid>/maps: a memfd's mappings say "/memfd:topocoll (deleted)", an
 * unlinked named segment's "/dev/shm/topocoll-... (deleted)". Used for TC_SHM_MAX_NODE at creation
 * (not on any collective's path); two creations racing may both pass. */
size_t tc_shm_node_usage(void);

static inline tc_atomic_u64_t *tc_shm_done(const tc_shm_comm_t *s, int i)
{
    return (tc_atomic_u64_t *)(void *)(s->base + tc_shm_layout_done(&s->layout, i));
}
static inline tc_atomic_u64_t *tc_shm_ready(const tc_shm_comm_t *s, int i, int bank)
{
    return (tc_atomic_u64_t *)(void *)(s->base + tc_shm_layout_ready(&s->layout, i, bank));
}
/* Line @p j of the inline lines of process @p i in bank @p bank: ready[bank]
 * for j = 0, else the extra line j (layout.h, inline_lines.h). */
static inline tc_atomic_u64_t *tc_shm_inline_line(const tc_shm_comm_t *s, int i, int bank, int j)
{
    if (j == 0)
        return tc_shm_ready(s, i, bank);
    return (tc_atomic_u64_t *)(void *)(s->base + tc_shm_layout_iline(&s->layout, i, bank, j));
}
/* The run-ahead ring's bdone line of process @p i, and its line @p k. */
static inline tc_atomic_u64_t *tc_shm_bdone(const tc_shm_comm_t *s, int i)
{
    return (tc_atomic_u64_t *)(void *)(s->base + tc_shm_layout_bdone(&s->layout, i));
}
static inline tc_atomic_u64_t *tc_shm_bring(const tc_shm_comm_t *s, int i, int k)
{
    return (tc_atomic_u64_t *)(void *)(s->base + tc_shm_layout_bring(&s->layout, i, k));
}
static inline char *tc_shm_queue(const tc_shm_comm_t *s, int i)
{
    return s->base + tc_shm_layout_queue(&s->layout, i);
}

/* The futex waits (base/wait.h). Every line of region i that someone may
 * wait on is written with tc_shm_publish(s, line, i, v) (or
 * tc_shm_fetch_add_publish) and waited on with tc_shm_wait_ge(s, line, i,
 * ...): both name the region, whose sleepers line (in the header) the
 * sleeper announces itself in and the writer checks. */
static inline tc_atomic_u64_t *tc_shm_sleepers(const tc_shm_comm_t *s, int i)
{
    return (tc_atomic_u64_t *)(void *)(s->base + tc_shm_layout_sleepers(&s->layout, i));
}
/* Wait until *line (a line of region @p i) >= @p want; returns the value.
 * acquire: pairs with the tc_shm_publish() the caller names. */
static inline uint64_t tc_shm_wait_ge(const tc_shm_comm_t *s, tc_atomic_u64_t *line, int i,
                                      uint64_t want, const char *stage, int peer)
{
    return tc_wait_ge_u64(line, want, tc_shm_sleepers(s, i), s->wait, stage, peer);
}
/* *line (a line of region @p i) = @p v, a release (seq_cst) store that wakes
 * the processes asleep on region i, if any. */
static inline void tc_shm_publish(const tc_shm_comm_t *s, tc_atomic_u64_t *line, int i, uint64_t v)
{
    tc_wait_publish_u64(line, v, tc_shm_sleepers(s, i));
}
static inline uint64_t tc_shm_fetch_add_publish(const tc_shm_comm_t *s, tc_atomic_u64_t *line,
                                                int i, uint64_t add)
{
    return tc_wait_fetch_add_publish_u64(line, add, tc_shm_sleepers(s, i));
}

/* The banks' hand-over, the same for every protocol that uses them (the
 * Bcast, the Allgather family, the Alltoall; bcast_pipelined.c has the
 * argument). WS: every process has finished bank use u - q (the previous
 * use of bank u % q, whichever protocol made it), so nobody still reads the
 * buffers or ready lines of that bank that the caller is about to write;
 * @p stage names the wait in the timeout message. */
static inline void tc_shm_bank_wait_free(tc_shm_comm_t *s, uint64_t u, const char *stage)
{
    const int q = s->layout.q;
    if (u < (uint64_t)q)
        return;
    const uint64_t need = u - (uint64_t)q + 1;
    for (int i = 0; i < s->p; i++) {
        if (i == s->rank || s->seen_done[i] >= need)
            continue;
        /* acquire: pairs with the publication of done in
         * tc_shm_bank_done() of process i: its reads of use u - q happen
         * before our writes. A later wait satisfied by the value read needs
         * no read: the acquire already ordered i's reads up to it. */
        s->seen_done[i] = tc_shm_wait_ge(s, tc_shm_done(s, i), i, need, stage, i);
    }
}
/* A: this process is done with bank use @p u (its reads of the bank are
 * over); the next bank use is u + 1. */
static inline void tc_shm_bank_done(tc_shm_comm_t *s, uint64_t u)
{
    s->uses = u + 1;
    /* release (seq_cst): pairs with the acquire in tc_shm_bank_wait_free()
     * of every later writer of this bank. */
    tc_shm_publish(s, tc_shm_done(s, s->rank), s->rank, u + 1);
}

/* Messages up to this many bytes travel inside one control line (a ready
 * line, a line of the broadcast's ring, a reduce inline line), next to the
 * sequence number: one cache line moves instead of two. */
#define TC_SHM_INLINE_MAX (TC_CACHELINE - sizeof(uint64_t))
/* A broadcast up to this many bytes travels in TC_SHM_BCAST_INLINE_LINES such
 * lines (layout.h), each with its own sequence number, all polled at once;
 * so does a block of the Allgather family or the Alltoall (inline_lines.h). */
#define TC_SHM_BCAST_INLINE_MAX (TC_SHM_BCAST_INLINE_LINES * TC_SHM_INLINE_MAX)

/* How a non-contiguous message gets in and out of the user's buffer: the
 * message's byte stream is visited in order, in pieces (fragment by
 * fragment), so derived datatypes need no whole-message staging buffer. */
typedef struct tc_shm_copier {
    void (*gather)(void *state, char *dst, size_t n);        /* root: next n bytes -> dst */
    void (*scatter)(void *state, const char *src, size_t n); /* others: src -> next n bytes */
    void *state;
} tc_shm_copier_t;

/* Pipelined copy-in/copy-out broadcast of @p nbytes bytes (paper 000,
 * stage 2). Every process of the segment calls it with the same @p nbytes
 * and @p root (a rank of the node communicator). @p copier NULL: the bytes
 * are contiguous at @p buf; otherwise @p buf is ignored. */
void tc_shm_bcast_pipelined(tc_shm_comm_t *s, void *buf, size_t nbytes, int root,
                            const tc_shm_copier_t *copier);

/* Reduction of @p nelem packed elements (see base/redop.h) over the segment's
 * processes, combined in segment rank order (so non-commutative ops give the
 * rank-ordered result, and an allreduce gives the same bits everywhere).
 * @p root: a segment rank (Reduce) or -1 (Allreduce: every process receives).
 * @p sendbuf: this process's contribution, contiguous packed elements; NULL
 * means "in place": the contribution is in @p recvbuf (only where a result is
 * received). @p recvbuf: the result where one is received (ignored
 * elsewhere). Every process calls with the same nelem, op->elem and root.
 * On more than two processes, small fragments (at most s->reduce_tree_max
 * bytes and below s->reduce_slice_min) go up a tree of partial results rooted
 * at rank 0 (s->reduce_tree_arity children per process, each heading a
 * contiguous rank range, so rank order is kept): the result's bits then
 * depend on (p, arity), and are the same on every receiver. See reduce.c.
 * Returns TC_OK, or TC_ERR_NOTSUP (on every process alike, before anything
 * moves) when the segment has no reduce area or an element does not fit in a
 * slot: the caller then uses another algorithm. */
tc_err_t tc_shm_reduce(tc_shm_comm_t *s, const void *sendbuf, void *recvbuf, size_t nelem,
                       const tc_redop_t *op, int root);

/* Whether a tc_shm_reduce() of @p nbytes bytes in elements of @p elem bytes
 * gives the same bits with fragments of up to layout.rslot_bytes as of up to
 * rfrag_default (s->rfrag_call): true unless the default fragments would go
 * up the tree (the direct and slice folds combine each element in rank order
 * whatever the fragment; a wider fragment takes the tree only where the
 * default one does). The same on every process. Reduce_scatter has no tree:
 * always the same bits. */
bool tc_shm_reduce_wide_same(const tc_shm_comm_t *s, size_t nbytes, size_t elem);

/* The cap of the next reductions' fragments: the slots' size when @p wide
 * (the fragment race chose wide fragments), else the default. */
static inline void tc_shm_reduce_set_wide(tc_shm_comm_t *s, bool wide)
{
    s->rfrag_call = wide ? s->layout.rslot_bytes : s->rfrag_default;
}

/* Barrier lines (layout.h: who writes each). */
static inline tc_atomic_u64_t *tc_shm_bar_line(const tc_shm_comm_t *s, int i, int which)
{
    return (tc_atomic_u64_t *)(void *)(s->base + tc_shm_layout_bline(&s->layout, i, which));
}
static inline tc_atomic_u64_t *tc_shm_bar_round(const tc_shm_comm_t *s, int i, int r)
{
    return (tc_atomic_u64_t *)(void *)(s->base + tc_shm_layout_bround(&s->layout, i, r));
}
static inline tc_atomic_u64_t *tc_shm_bar_tround(const tc_shm_comm_t *s, int i, int r)
{
    return (tc_atomic_u64_t *)(void *)(s->base + tc_shm_layout_btround(&s->layout, i, r));
}

#endif /* TC_SHM_SEGMENT_H */
