/* The library's context on a communicator (DESIGN.md "The context").
 *
 * Cached as an MPI attribute (keyval with MPI_COMM_NULL_COPY_FN, so a dup'd
 * communicator gets its own, and a delete callback, so MPI_Comm_free releases
 * it). Created collectively by the first TC_ call on the communicator. Every
 * choice that changes what a process does inside a collective is agreed by
 * all processes here (one small allreduce), never per rank at call time.
 */
#ifndef TC_CORE_CTX_H
#define TC_CORE_CTX_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/atomics.h"
#include "base/err.h"
#include "base/redop.h"
#include "base/stats.h"
#include "base/wait.h"
#include "hier/hier.h"
#include "race.h"
#include "select.h"
#include "shm/segment.h"

struct tc_hier_a2a_plan;

typedef struct tc_ctx {
    MPI_Comm comm; /* the user's communicator (not ours) */
    MPI_Comm priv; /* private duplicate for internal traffic; MPI_COMM_NULL for intercomms */
    MPI_Comm node; /* processes of priv on this node (MPI_COMM_TYPE_SHARED) */
    int rank, size;
    int node_rank, node_size;
    int oversubscribed; /* node_size > online CPUs: waits yield at once, and see select.h */
    int is_inter;
    int id;                     /* creation number in this process, for messages */
    tc_path_t bcast_path;       /* agreed: TC_PATH_SHM or the reason for PMPI */
    tc_hier_t *hier;            /* the hierarchy (size > 1, not an intercomm; NULL with TC_HIER=0
                                   across nodes or after a failure on some rank) */
    MPI_Comm shmcomm;           /* this rank's group at the shared-memory level (ranks in member
                                   order), or MPI_COMM_NULL; spans priv when hier->single_shm */
    tc_shm_comm_t *shm;         /* the segment over shmcomm, or NULL; serves hier's level with
                                   .shm set (all ranks when bcast_path == TC_PATH_SHM) */
    tc_shm_params_t shm_params; /* the agreed values */
    tc_logp_table_t logp;       /* rank 0's LogP/LogGP parameters (select.h) */
    tc_barrier_plan_t barrier;  /* TC_Barrier's algorithms, chosen at creation */
    tc_race_t race;             /* large messages: the library's path or the MPI's own (race.h);
                                   identical on every rank */
    struct tc_scan_units *scan_units; /* core/scan.c: the hierarchical Scan's agreed units
                                         (one malloc'd block), NULL until its first call */
    tc_redop_last_t scan_last;        /* core/scan.c: the direct path's last (datatype, op) */
    _Atomic(struct tc_hier_a2a_plan *) a2a_plan; /* core/alltoall.c: the nodes of the Alltoall(v)
                                                    aggregation (hier/hier_alltoall.h), NULL
                                                    until its first call across nodes */
    char comm_name[MPI_MAX_OBJECT_NAME + 32];
    tc_wait_info_t wait_info;
    tc_wait_info_t shm_wait_info; /* the segment's: wait_info, its peers the group's members */
    tc_wait_info_t msg_wait_info; /* point-to-point waits (base/wait_mpi.h): wait_info, auto
                                     resolved to yield (oversubscribed machine) or spin */
    struct tc_ctx *newer, *older; /* list of live contexts (for finalize) */
} tc_ctx_t;

/* core/scan.c's agreed units of the hierarchical Scan (ctx->scan_units, not
 * NULL): 1 when every unit's ranks are consecutive; how many units. */
int tc_scan_units_contiguous(const struct tc_scan_units *u);
int tc_scan_units_count(const struct tc_scan_units *u);

/* The node plan of the Alltoall(v) aggregation on @p ctx (*out; built at
 * the first use, local: every process builds its own from the agreed
 * hierarchy, hier/hier_alltoall.h), kept until the context goes. Returns
 * TC_OK or TC_ERR_NOMEM (nothing kept then). Safe beside another thread's
 * call on the same context (TC_Comm_predict): one plan is kept. */
tc_err_t tc_ctx_a2a_plan(tc_ctx_t *ctx, const struct tc_hier_a2a_plan **out);

/* The context of @p comm, created collectively if needed. Returns TC_OK or
 * why not (nothing cached then). */
tc_err_t tc_ctx_get(MPI_Comm comm, tc_ctx_t **out);

/* The context of @p comm if it exists already (the cache below, else the
 * attribute lookup; nothing created), else NULL. For argument checks on the
 * call path; @p comm must not be MPI_COMM_NULL. */
tc_ctx_t *tc_ctx_peek(MPI_Comm comm);

/* The communicator cache: the call path finds a context without
 * PMPI_Comm_get_attr (about 100-200 instructions in both MPIs, more than
 * the rest of a 4-byte call at np=1). Direct-mapped on the handle's value;
 * a slot holds (handle, context) under a sequence lock, written only under
 * the context lock (ctx.c): when a context is attached (created or found by
 * the attribute lookup), and cleared by the attribute's delete callback
 * before MPI_Comm_free releases the handle, so a handle value the MPI reuses
 * later never finds the freed context. Readers take no lock: threads calling
 * on distinct communicators (MPI_THREAD_MULTIPLE) never wait for each other;
 * a slot being rewritten reads as a miss. */
#define TC_CTX_CACHE_BITS  6
#define TC_CTX_CACHE_SLOTS (1 << TC_CTX_CACHE_BITS)

typedef struct tc_ctx_slot {
    _Alignas(TC_CACHELINE) tc_atomic_u64_t seq; /* odd while the slot is written */
    _Atomic uintptr_t key;                      /* tc_ctx_key() of the communicator */
    _Atomic(tc_ctx_t *) ctx;                    /* NULL: empty */
} tc_ctx_slot_t;
_Static_assert(sizeof(tc_ctx_slot_t) == TC_CACHELINE, "one slot per cache line");

extern tc_ctx_slot_t tc_ctx_cache[TC_CTX_CACHE_SLOTS];

/* A communicator handle as an integer: a pointer in Open MPI, an int in
 * MPICH; the cast compiles for both. */
static inline uintptr_t tc_ctx_key(MPI_Comm comm)
{
    return (uintptr_t)comm;
}

static inline unsigned tc_ctx_cache_index(uintptr_t key)
{
    /* Fibonacci hashing: Open MPI's handles are aligned pointers, MPICH's
     * differ in their low bits; both spread over the slots. */
    return (unsigned)(((uint64_t)key * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - TC_CTX_CACHE_BITS));
}

/* The cached context of @p comm, or NULL (not cached: ask tc_ctx_peek or
 * tc_ctx_get). No MPI call, no lock, no store. */
static inline tc_ctx_t *tc_ctx_lookup(MPI_Comm comm)
{
    const uintptr_t key = tc_ctx_key(comm);
    tc_ctx_slot_t *s = &tc_ctx_cache[tc_ctx_cache_index(key)];
    /* acquire: pairs with the final release store of seq in tc_ctx_slot_write() */
    const uint64_t seq = tc_load_acquire_u64(&s->seq);
    /* acquire (each): these loads happen before the re-read of seq below;
     * pairs with the release stores of key and ctx in tc_ctx_slot_write().
     * (Acquire loads rather than an acquire fence: ThreadSanitizer does not
     * support fences; on x86 both are plain loads.) */
    const uintptr_t k = atomic_load_explicit(&s->key, memory_order_acquire);
    tc_ctx_t *ctx = atomic_load_explicit(&s->ctx, memory_order_acquire);
    if ((seq & 1) || k != key || !ctx || tc_load_relaxed_u64(&s->seq) != seq)
        return NULL;
    return ctx;
}

/* Release @p comm's context now (TC_Comm_detach). */
tc_err_t tc_ctx_release(MPI_Comm comm);

/* The API boundary of a failure: log @p what and @p err's cause at verbosity
 * >= 1, call the error handler of @p comm with @p err's MPI class
 * (tc_err_to_mpi, base/err_mpi.h); returns that class (as MPI functions do when
 * the handler returns). */
int tc_ctx_error(MPI_Comm comm, tc_err_t err, const char *what);

/* tc_ctx_error with the message "fn: what" (an entry point's failed check). Out
 * of line and cold, so the checks on the fast path build no message. */
int tc_ctx_fail(MPI_Comm comm, tc_err_t err, const char *fn, const char *what)
    __attribute__((cold, noinline));

/* tc_ctx_fail with the message formatted from @p fmt (printf; up to 127
 * characters). */
int tc_ctx_failf(MPI_Comm comm, tc_err_t err, const char *fn, const char *fmt, ...)
    __attribute__((cold, noinline, format(printf, 4, 5)));

/* An entry point's first check, the same for every operation: @p comm is not
 * MPI_COMM_NULL and is a communicator; *cached = its context if one exists
 * (cached or attached, no creation), *inter = whether it is an
 * intercommunicator (from the context, else asked of the MPI). Returns
 * MPI_SUCCESS or the error class through MPI_COMM_WORLD's handler. */
static inline int tc_ctx_enter(MPI_Comm comm, const char *fn, tc_ctx_t **cached, int *inter)
{
    if (comm == MPI_COMM_NULL)
        return tc_ctx_fail(MPI_COMM_WORLD, tc_err(TC_ERR_COMM), fn, "MPI_COMM_NULL");
    tc_ctx_t *ctx = tc_ctx_lookup(comm);
    if (!ctx)
        ctx = tc_ctx_peek(comm);
    *cached = ctx;
    if (ctx)
        *inter = ctx->is_inter;
    else if (PMPI_Comm_test_inter(comm, inter) != MPI_SUCCESS)
        return tc_ctx_fail(MPI_COMM_WORLD, tc_err(TC_ERR_COMM), fn, "invalid communicator");
    return MPI_SUCCESS;
}

/* After tc_ctx_enter, on an intracommunicator: this process's rank in
 * @p comm and its size, from the context @p ctx when there is one (no MPI
 * call), else asked of the MPI. */
static inline void tc_ctx_rank_size(const tc_ctx_t *ctx, MPI_Comm comm, int *rank, int *size)
{
    if (ctx) {
        *size = ctx->size;
        *rank = ctx->rank;
    } else {
        PMPI_Comm_size(comm, size);
        PMPI_Comm_rank(comm, rank);
    }
}

/* A v-variant's counts (Allgatherv's; Gatherv's and Scatterv's at the
 * root), checked after the other arguments: @p counts and @p displs not
 * NULL (tc_err(TC_ERR_ARG)), every one of the @p p counts >= 0
 * (tc_err(TC_ERR_COUNT)); then block j's bytes, counts[j] x @p esize, in
 * *bytes, which is @p stack when its @p nstack entries hold them, else
 * malloc'd (tc_err(TC_ERR_NOMEM); the caller frees it), and their sum in
 * *total. @p side names the counts in the messages ("recv": "recvcounts or
 * displs is NULL", "negative recvcounts[j]"). Returns MPI_SUCCESS, or the
 * error class through @p comm's error handler (*bytes untouched then). */
static inline int tc_ctx_check_counts(MPI_Comm comm, const char *fn, const char *side,
                                      const int *counts, const int *displs, int p, int esize,
                                      size_t *stack, int nstack, size_t **bytes, size_t *total)
{
    if (!counts || !displs)
        return tc_ctx_failf(comm, tc_err(TC_ERR_ARG), fn, "%scounts or displs is NULL", side);
    for (int j = 0; j < p; j++)
        if (counts[j] < 0)
            return tc_ctx_failf(comm, tc_err(TC_ERR_COUNT), fn, "negative %scounts[j]", side);
    size_t *b = stack, sum = 0;
    if (p > nstack && !(b = malloc((size_t)p * sizeof *b)))
        return tc_ctx_fail(comm, tc_err(TC_ERR_NOMEM), fn, "out of memory");
    for (int j = 0; j < p; j++) {
        b[j] = (size_t)counts[j] * (size_t)esize;
        sum += b[j];
    }
    *bytes = b;
    *total = sum;
    return MPI_SUCCESS;
}

#endif /* TC_CORE_CTX_H */
