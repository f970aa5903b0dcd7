#include "ctx.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "barrier/settings.h"
#include "base/datatype.h"
#include "base/err_mpi.h"
#include "base/log.h"
#include "base/settings.h"
#include "hier/hier_alltoall.h"
#include "hier/hier_build.h"
#include "settings.h"
#include "shm/params.h"

static pthread_mutex_t tc_ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static int tc_ctx_keyval = MPI_KEYVAL_INVALID;  /* the context on a communicator */
static int tc_self_keyval = MPI_KEYVAL_INVALID; /* finalize hook on MPI_COMM_SELF */
static tc_ctx_t *tc_ctx_newest;                 /* live contexts, newest first */
static int tc_ctx_created;                      /* creation counter */
/* Set once the keyvals exist (acquire/release: pairs between
 * tc_ctx_init_once() and tc_ctx_get()). */
static atomic_int tc_ctx_ready;
/* Set by the finalize hook: every context is gone, later delete callbacks
 * (MPICH deletes MPI_COMM_WORLD's attributes after MPI_COMM_SELF's) must not
 * touch their attribute again. */
static atomic_int tc_ctx_disarmed;

tc_ctx_slot_t tc_ctx_cache[TC_CTX_CACHE_SLOTS];

/* Sequence-lock write of one slot; the caller holds tc_ctx_lock (the only
 * writer). */
static void tc_ctx_slot_write(tc_ctx_slot_t *s, uintptr_t key, tc_ctx_t *ctx)
{
    const uint64_t seq = tc_load_relaxed_u64(&s->seq);
    tc_store_relaxed_u64(&s->seq, seq + 1);
    /* release (each): a reader whose acquire load sees one of these stores
     * also sees the odd seq above on its re-read; pairs with the acquire loads
     * of key and ctx in tc_ctx_lookup(). (Release stores rather than a release
     * fence: ThreadSanitizer does not support fences; on x86 both are plain
     * stores.) */
    atomic_store_explicit(&s->key, key, memory_order_release);
    atomic_store_explicit(&s->ctx, ctx, memory_order_release);
    /* release: the slot (and the context it points to) is complete; pairs
     * with the acquire load of seq in tc_ctx_lookup() */
    tc_store_release_u64(&s->seq, seq + 2);
}

/* Cache @p ctx (of a live communicator). Caller holds tc_ctx_lock. */
static void tc_ctx_cache_put_locked(tc_ctx_t *ctx)
{
    const uintptr_t key = tc_ctx_key(ctx->comm);
    tc_ctx_slot_t *s = &tc_ctx_cache[tc_ctx_cache_index(key)];
    if (atomic_load_explicit(&s->ctx, memory_order_relaxed) != ctx)
        tc_ctx_slot_write(s, key, ctx);
}

static void tc_ctx_cache_put(tc_ctx_t *ctx)
{
    pthread_mutex_lock(&tc_ctx_lock);
    tc_ctx_cache_put_locked(ctx);
    pthread_mutex_unlock(&tc_ctx_lock);
}

/* Forget @p ctx if cached. Caller holds tc_ctx_lock. */
static void tc_ctx_cache_drop_locked(const tc_ctx_t *ctx)
{
    tc_ctx_slot_t *s = &tc_ctx_cache[tc_ctx_cache_index(tc_ctx_key(ctx->comm))];
    if (atomic_load_explicit(&s->ctx, memory_order_relaxed) == ctx)
        tc_ctx_slot_write(s, 0, NULL);
}

static void tc_ctx_free(tc_ctx_t *ctx)
{
    tc_shm_comm_destroy(ctx->shm);
    tc_hier_free(ctx->hier);
    free(ctx->scan_units);
    tc_hier_alltoall_plan_free(atomic_load_explicit(&ctx->a2a_plan, memory_order_relaxed));
    /* Freeing a communicator is local in practice in both MPIs (no message
     * is exchanged), so contexts may be released in any order at finalize. */
    if (ctx->shmcomm != MPI_COMM_NULL)
        PMPI_Comm_free(&ctx->shmcomm);
    if (ctx->node != MPI_COMM_NULL)
        PMPI_Comm_free(&ctx->node);
    if (ctx->priv != MPI_COMM_NULL)
        PMPI_Comm_free(&ctx->priv);
    free(ctx);
}

tc_err_t tc_ctx_a2a_plan(tc_ctx_t *ctx, const struct tc_hier_a2a_plan **out)
{
    /* acquire: pairs with the release of the compare-exchange below (the
     * plan's contents are visible once its pointer is) */
    tc_hier_a2a_plan_t *pl = atomic_load_explicit(&ctx->a2a_plan, memory_order_acquire);
    if (!pl) {
        tc_hier_a2a_plan_t *mine = NULL;
        const tc_err_t err = tc_hier_alltoall_plan_new(ctx->hier, ctx->rank, ctx->size, &mine);
        if (err != TC_OK)
            return err;
        /* release: publishes the plan built above; pairs with the acquire
         * load above. A thread that lost the race keeps the winner's. */
        if (atomic_compare_exchange_strong_explicit(&ctx->a2a_plan, &pl, mine, memory_order_acq_rel,
                                                    memory_order_acquire))
            pl = mine;
        else
            tc_hier_alltoall_plan_free(mine);
    }
    *out = pl;
    return TC_OK;
}

static void tc_ctx_unlink(tc_ctx_t *ctx)
{
    pthread_mutex_lock(&tc_ctx_lock);
    /* Before the MPI can reuse the handle: the delete callback runs first. */
    tc_ctx_cache_drop_locked(ctx);
    if (ctx->newer)
        ctx->newer->older = ctx->older;
    else
        tc_ctx_newest = ctx->older;
    if (ctx->older)
        ctx->older->newer = ctx->newer;
    pthread_mutex_unlock(&tc_ctx_lock);
}

/* Delete callback of tc_ctx_keyval: MPI_Comm_free, MPI_Comm_delete_attr, or
 * our own finalize hook below. */
static int tc_ctx_delete_fn(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    tc_ctx_t *ctx = attr;
    if (atomic_load_explicit(&tc_ctx_disarmed, memory_order_relaxed))
        return MPI_SUCCESS; /* already freed by tc_self_delete_fn() */
    tc_log(TC_LOG_DEBUG, "releasing context #%d (%s)", ctx->id, ctx->comm_name);
    tc_ctx_unlink(ctx);
    tc_ctx_free(ctx);
    return MPI_SUCCESS;
}

/* MPI_Finalize deletes MPI_COMM_SELF's attributes first, while MPI is still
 * fully usable, but never calls the delete callback of a communicator the
 * application forgot to free. So this hook releases every live context,
 * newest first, and disarms tc_ctx_delete_fn() so that a callback MPI still
 * runs later (MPICH does for MPI_COMM_WORLD) frees nothing twice. */
static int tc_self_delete_fn(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)attr;
    (void)extra;
    tc_stats_print();
    pthread_mutex_lock(&tc_ctx_lock);
    atomic_store_explicit(&tc_ctx_disarmed, 1, memory_order_relaxed);
    tc_ctx_t *ctx = tc_ctx_newest;
    tc_ctx_newest = NULL;
    for (int i = 0; i < TC_CTX_CACHE_SLOTS; i++)
        if (atomic_load_explicit(&tc_ctx_cache[i].ctx, memory_order_relaxed))
            tc_ctx_slot_write(&tc_ctx_cache[i], 0, NULL);
    pthread_mutex_unlock(&tc_ctx_lock);
    while (ctx) {
        tc_ctx_t *older = ctx->older;
        tc_log(TC_LOG_DEBUG, "finalize: releasing context #%d (%s)", ctx->id, ctx->comm_name);
        tc_ctx_free(ctx);
        ctx = older;
    }
    PMPI_Comm_free_keyval(&tc_ctx_keyval);
    return MPI_SUCCESS;
}

static int tc_ctx_init_once(void)
{
    int rc = MPI_SUCCESS;
    pthread_mutex_lock(&tc_ctx_lock);
    if (!atomic_load_explicit(&tc_ctx_ready, memory_order_relaxed)) {
        tc_settings_load();
        tc_stats_init();
        tc_datatype_table_init();
        PMPI_Comm_rank(MPI_COMM_WORLD, &tc_log_rank);
        rc = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, tc_ctx_delete_fn, &tc_ctx_keyval, NULL);
        if (rc == MPI_SUCCESS)
            rc = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, tc_self_delete_fn, &tc_self_keyval,
                                         NULL);
        if (rc == MPI_SUCCESS)
            rc = PMPI_Comm_set_attr(MPI_COMM_SELF, tc_self_keyval, NULL);
        if (rc == MPI_SUCCESS)
            PMPI_Comm_free_keyval(&tc_self_keyval); /* the attribute keeps it alive */
        if (rc == MPI_SUCCESS)
            /* release: pairs with the acquire in tc_ctx_get() */
            atomic_store_explicit(&tc_ctx_ready, 1, memory_order_release);
    }
    pthread_mutex_unlock(&tc_ctx_lock);
    return rc;
}

/* Parameters a process proposes (from its own environment). */
enum {
    TC_AGREE_SHM,        /* TC_SHM set and the communicator is within one node */
    TC_AGREE_SINGLENODE, /* node_size == size */
    TC_AGREE_F,
    TC_AGREE_S,
    TC_AGREE_Q,
    TC_AGREE_TREE,
    TC_AGREE_ARITY,
    TC_AGREE_TW,
    TC_AGREE_STREAM,
    TC_AGREE_RSLOTS,
    TC_AGREE_RSLOT_BYTES,
    TC_AGREE_RSLICE,
    TC_AGREE_RTREE,
    TC_AGREE_RTREE_ARITY,
    TC_AGREE_BARRIER,
    TC_AGREE_BARRIER_ARITY,
    TC_AGREE_SHM_BARRIER,
    TC_AGREE_SHM_BARRIER_ARITY,
    TC_AGREE_LOCK_SCHEME,
    TC_AGREE_RACE_MIN,
    TC_AGREE_SCAN_TREE_MIN,
    TC_AGREE_RSLOTS_CONTENDED,
    TC_AGREE_RWIDE_BYTES,
    TC_AGREE_RWIDE_MIN,
    TC_AGREE_LAST
};
static const char *const tc_agree_names[TC_AGREE_LAST] = {"TC_SHM",
                                                          "(node)",
                                                          "TC_SHM_FRAGMENT_SIZE",
                                                          "TC_SHM_QUEUE_LENGTH",
                                                          "TC_SHM_BANKS",
                                                          "TC_SHM_TREE",
                                                          "TC_SHM_TREE_ARITY",
                                                          "TC_SHM_TW_RATIO",
                                                          "TC_SHM_STREAM_BYTES",
                                                          "TC_SHM_REDUCE_SLOTS",
                                                          "TC_SHM_REDUCE_SLOT_BYTES",
                                                          "TC_SHM_REDUCE_SLICE_MIN",
                                                          "TC_SHM_REDUCE_TREE_MAX",
                                                          "TC_SHM_REDUCE_TREE_ARITY",
                                                          "TC_BARRIER",
                                                          "TC_BARRIER_ARITY",
                                                          "TC_SHM_BARRIER",
                                                          "TC_SHM_BARRIER_ARITY",
                                                          "TC_LOCK_SCHEME",
                                                          "TC_PMPI_RACE_MIN",
                                                          "TC_SHM_SCAN_TREE_MIN",
                                                          "TC_SHM_REDUCE_SLOTS_CONTENDED",
                                                          "TC_SHM_REDUCE_WIDE_BYTES",
                                                          "TC_SHM_REDUCE_WIDE_MIN"};
/* This process's machine: a hash of the kernel's boot id, which every
 * process under one kernel shares whatever hostname, container or UTS
 * namespace it runs in; the hostname where /proc does not say. */
static uint64_t tc_ctx_machine_id(void)
{
    char id[256] = "";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (!f || !fgets(id, sizeof id, f))
        gethostname(id, sizeof id - 1);
    if (f)
        fclose(f);
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (const char *c = id; *c && *c != '\n'; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ull;
    return h;
}

/* More processes of this communicator on this machine than online CPUs (the
 * test machine's 8 ranks on 2 cores): a process that waits is usually waiting
 * for one that is not running, so spinning only delays it, and every extra
 * synchronisation stage (a tree level) costs a scheduler round. The machine,
 * not the MPI's node: containers or namespaces that the MPI takes for
 * separate nodes (the emulated clusters of tools/topocoll-vcluster) share the
 * cores of one kernel. A communicator that spans several of the MPI's nodes
 * pays one MPI_Comm_split for it, at creation; the decision to make it is the
 * same on every rank (node_size < size). */
static int tc_ctx_count_oversubscribed(const tc_ctx_t *ctx, int *rc)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int on_machine = ctx->node_size;
    *rc = MPI_SUCCESS;
    if (ctx->node_size < ctx->size) {
        /* Split by machine (a 31-bit fold of the id: two machines that
         * collide only make each other look busier). */
        const uint64_t id = tc_ctx_machine_id();
        MPI_Comm machine = MPI_COMM_NULL;
        *rc = PMPI_Comm_split(ctx->priv, (int)((id ^ (id >> 31) ^ (id >> 62)) & 0x7fffffff),
                              ctx->rank, &machine);
        if (*rc != MPI_SUCCESS)
            return 0;
        PMPI_Comm_size(machine, &on_machine);
        PMPI_Comm_free(&machine);
    }
    return cpus > 0 && on_machine > cpus;
}

/* The message levels' waits (base/wait_mpi.h). There is no word to sleep
 * on, so auto (and futex) yield between polls only where a yield lets a peer
 * of this job run: more of the communicator's processes on the machine than
 * cores (tc_ctx_count_oversubscribed). Elsewhere they spin, as the MPI's own blocking calls do, and
 * keep their core from an unrelated CPU-bound process (a yield to it costs a time slice). spin and
 * yield are taken as they are. */
static void tc_ctx_msg_wait_info(tc_ctx_t *ctx)
{
    ctx->msg_wait_info = ctx->wait_info;
    if (ctx->msg_wait_info.policy == TC_WAIT_AUTO || ctx->msg_wait_info.policy == TC_WAIT_FUTEX)
        ctx->msg_wait_info.policy = ctx->oversubscribed ? TC_WAIT_YIELD : TC_WAIT_SPIN;
}

/* This process's proposal: the modules' own parameters (@p sp, @p bs) and
 * the context's. */
static void tc_ctx_propose(const tc_ctx_t *ctx, const tc_shm_params_t *sp,
                           const tc_barrier_settings_t *bs, long long v[TC_AGREE_LAST])
{
    v[TC_AGREE_SHM] = tc_shm_params_enabled();
    v[TC_AGREE_SINGLENODE] = ctx->node_size == ctx->size;
    v[TC_AGREE_F] = (long long)sp->f;
    v[TC_AGREE_S] = sp->S;
    v[TC_AGREE_Q] = sp->q;
    v[TC_AGREE_TREE] = sp->tree;
    v[TC_AGREE_ARITY] = sp->arity;
    v[TC_AGREE_TW] = (long long)sp->tw_over_t;
    v[TC_AGREE_STREAM] = (long long)sp->stream_bytes;
    v[TC_AGREE_RSLOTS] = sp->reduce_slots;
    v[TC_AGREE_RSLOT_BYTES] = (long long)sp->reduce_slot_bytes;
    v[TC_AGREE_RSLICE] = (long long)sp->reduce_slice_min;
    v[TC_AGREE_RTREE] = (long long)sp->reduce_tree_max;
    v[TC_AGREE_RTREE_ARITY] = sp->reduce_tree_arity;
    v[TC_AGREE_BARRIER] = bs->msg_override;
    v[TC_AGREE_BARRIER_ARITY] = bs->msg_arity;
    v[TC_AGREE_SHM_BARRIER] = bs->shm_override;
    v[TC_AGREE_SHM_BARRIER_ARITY] = bs->shm_arity;
    v[TC_AGREE_LOCK_SCHEME] = sp->lock_scheme;
    v[TC_AGREE_RACE_MIN] = tc_config_int(&tc_core_config, TC_CORE_CFG_PMPI_RACE_MIN);
    v[TC_AGREE_SCAN_TREE_MIN] = sp->scan_tree_min;
    v[TC_AGREE_RSLOTS_CONTENDED] = sp->reduce_slots_contended;
    v[TC_AGREE_RWIDE_BYTES] = (long long)sp->reduce_wide_bytes;
    v[TC_AGREE_RWIDE_MIN] = (long long)sp->reduce_wide_min;
}

/* One allreduce gives each value's minimum and maximum (MAX over v and -v).
 * The minimum is used: the conservative choice for sizes, "off" for flags;
 * a disagreement is reported once at verbosity >= 1. */
static int tc_ctx_agree(tc_ctx_t *ctx, long long v[TC_AGREE_LAST])
{
    long long both[2 * TC_AGREE_LAST], res[2 * TC_AGREE_LAST];
    for (int i = 0; i < TC_AGREE_LAST; i++) {
        both[2 * i] = v[i];
        both[2 * i + 1] = -v[i];
    }
    int rc = PMPI_Allreduce(both, res, 2 * TC_AGREE_LAST, MPI_LONG_LONG, MPI_MAX, ctx->priv);
    if (rc != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < TC_AGREE_LAST; i++) {
        long long max = res[2 * i], min = -res[2 * i + 1];
        if (max != min && i != TC_AGREE_SINGLENODE && ctx->rank == 0)
            tc_log(TC_LOG_INFO, "%s: %s differs between ranks (%lld..%lld); all use %lld",
                   ctx->comm_name, tc_agree_names[i], min, max, min);
        v[i] = min;
    }
    return MPI_SUCCESS;
}

static void tc_ctx_name(tc_ctx_t *ctx)
{
    char name[MPI_MAX_OBJECT_NAME] = "";
    int len = 0;
    PMPI_Comm_get_name(ctx->comm, name, &len);
    if (len > 0)
        snprintf(ctx->comm_name, sizeof ctx->comm_name, "%s (size %d)", name, ctx->size);
    else
        snprintf(ctx->comm_name, sizeof ctx->comm_name, "comm#%d (size %d)", ctx->id, ctx->size);
}

/* The segment of this rank's group at the hierarchy's shared-memory level:
 * priv split by group leader (ranks alone in their unit get none), then the
 * segment over that communicator, agreed all-or-nothing over priv. On
 * failure no level uses shared memory and *seg_failed is set. */
static tc_err_t tc_ctx_shm_create(tc_ctx_t *ctx, int *seg_failed)
{
    static bool logged_segment;
    tc_hier_t *h = ctx->hier;
    tc_err_t rc, local = TC_OK;
    int ok, all_ok;

    *seg_failed = 0;
    if (!h || h->shm_level < 0)
        return MPI_SUCCESS; /* the same on every rank: the hierarchy is */
    const int i = tc_hier_shm_index(h);
    /* key = rank: shmcomm ranks are the group's member indices. */
    if ((rc = PMPI_Comm_split(ctx->priv, i >= 0 ? h->level[i].members[0] : MPI_UNDEFINED, ctx->rank,
                              &ctx->shmcomm)) != MPI_SUCCESS)
        return rc;
    if (ctx->shmcomm != MPI_COMM_NULL) {
        tc_shm_policy_t policy;
        tc_shm_params_policy(&policy);
        /* The segment's waits name peers by their index in the group: the
         * timeout message translates them to ranks of the communicator. */
        ctx->shm_wait_info = ctx->wait_info;
        ctx->shm_wait_info.peer_ranks = i >= 0 ? h->level[i].members : NULL;
        local = tc_shm_comm_create(&ctx->shm, ctx->shmcomm, &ctx->shm_params, &policy,
                                   &ctx->shm_wait_info);
    }
    /* Each group's creation agrees within the group only: a level is either
     * shared memory everywhere or nowhere, so agree over priv. */
    ok = local == TC_OK;
    if ((rc = PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, ctx->priv)) != MPI_SUCCESS)
        return rc;
    if (all_ok) {
        if (i >= 0) {
            h->level[i].shm = 1;
            h->single_shm = h->level[i].size == ctx->size;
        }
        return MPI_SUCCESS;
    }
    tc_shm_comm_destroy(ctx->shm);
    ctx->shm = NULL;
    if (ctx->shmcomm != MPI_COMM_NULL)
        PMPI_Comm_free(&ctx->shmcomm);
    h->shm_level = -1;
    *seg_failed = 1;
    char why[MPI_MAX_ERROR_STRING + 32] = "its part succeeded";
    if (local != TC_OK)
        tc_err_describe(local, why, sizeof why);
    tc_log_once(logged_segment, TC_LOG_INFO,
                "%s: a shared-memory segment could not be created on some rank (this rank: %s; "
                "TC_VERBOSE=1 on each rank says why): no level uses shared memory (one node: the "
                "MPI's own collectives; several: point-to-point algorithms at every level)",
                ctx->comm_name, why);
    return MPI_SUCCESS;
}

static tc_err_t tc_ctx_create(MPI_Comm comm, tc_ctx_t **out)
{
    tc_err_t rc;
    tc_ctx_t *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return tc_err(TC_ERR_NOMEM);
    ctx->comm = comm;
    ctx->priv = ctx->node = ctx->shmcomm = MPI_COMM_NULL;
    pthread_mutex_lock(&tc_ctx_lock);
    ctx->id = ++tc_ctx_created;
    pthread_mutex_unlock(&tc_ctx_lock);
    PMPI_Comm_test_inter(comm, &ctx->is_inter);
    PMPI_Comm_rank(comm, &ctx->rank);
    PMPI_Comm_size(comm, &ctx->size);
    tc_ctx_name(ctx);
    ctx->wait_info.comm_name = ctx->comm_name;
    tc_base_settings_wait(&ctx->wait_info);
    ctx->bcast_path = TC_PATH_PMPI_INTERCOMM;
    if (ctx->is_inter)
        goto fn_exit; /* everything goes to PMPI_*: no resources */

    if ((rc = PMPI_Comm_dup(comm, &ctx->priv)) != MPI_SUCCESS ||
        (rc = PMPI_Comm_split_type(ctx->priv, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                                   &ctx->node)) != MPI_SUCCESS)
        goto fn_fail;
    PMPI_Comm_rank(ctx->node, &ctx->node_rank);
    PMPI_Comm_size(ctx->node, &ctx->node_size);
    ctx->oversubscribed = tc_ctx_count_oversubscribed(ctx, &rc);
    if (rc != MPI_SUCCESS)
        goto fn_fail;
    /* Oversubscribed: yield at once (measured: shm barrier at np=4 on 2 cores
     * 25-73 us with 200 polls first, 14-34 us without), unless TC_SPIN_COUNT
     * says otherwise. */
    if (ctx->oversubscribed &&
        tc_config_source(&tc_base_config, TC_BASE_CFG_SPIN_COUNT) != TC_CFG_SRC_ENV)
        ctx->wait_info.spin_polls = 0;
    tc_ctx_msg_wait_info(ctx);

    long long v[TC_AGREE_LAST];
    tc_shm_params_t *sp = &ctx->shm_params;
    tc_barrier_settings_t bs;
    tc_shm_params_local(sp, ctx->oversubscribed, ctx->node_size);
    tc_barrier_settings_get(&bs);
    tc_ctx_propose(ctx, sp, &bs, v);
    if ((rc = tc_ctx_agree(ctx, v)) != MPI_SUCCESS)
        goto fn_fail;
    /* The agreed values; the copy choices stay local. */
    sp->f = (size_t)v[TC_AGREE_F];
    sp->S = (int)v[TC_AGREE_S];
    sp->q = (int)v[TC_AGREE_Q];
    sp->tree = (tc_tree_kind_t)v[TC_AGREE_TREE];
    sp->arity = (int)v[TC_AGREE_ARITY];
    sp->tw_over_t = (double)v[TC_AGREE_TW];
    sp->stream_bytes = (size_t)v[TC_AGREE_STREAM];
    sp->reduce_slots = (int)v[TC_AGREE_RSLOTS];
    sp->reduce_slot_bytes = (size_t)v[TC_AGREE_RSLOT_BYTES];
    sp->reduce_slice_min = (size_t)v[TC_AGREE_RSLICE];
    sp->reduce_tree_max = (size_t)v[TC_AGREE_RTREE];
    sp->reduce_tree_arity = (int)v[TC_AGREE_RTREE_ARITY];
    sp->scan_tree_min = (int)v[TC_AGREE_SCAN_TREE_MIN];
    sp->reduce_slots_contended = (int)v[TC_AGREE_RSLOTS_CONTENDED];
    sp->reduce_wide_bytes = (size_t)v[TC_AGREE_RWIDE_BYTES];
    sp->reduce_wide_min = (size_t)v[TC_AGREE_RWIDE_MIN];
    sp->lock_scheme = (tc_lock_scheme_t)v[TC_AGREE_LOCK_SCHEME];
    tc_shm_params_settle(sp);
    bs = (tc_barrier_settings_t){.shm_override = (int)v[TC_AGREE_SHM_BARRIER],
                                 .shm_arity = (int)v[TC_AGREE_SHM_BARRIER_ARITY],
                                 .msg_override = (int)v[TC_AGREE_BARRIER],
                                 .msg_arity = (int)v[TC_AGREE_BARRIER_ARITY]};
    /* The minimum: a rank that set 0 switches the race off for all. */
    tc_race_init(&ctx->race, (size_t)v[TC_AGREE_RACE_MIN]);

    static bool logged_multinode, logged_shm_off;
    int seg_failed = 0;
    if (ctx->size == 1) {
        ctx->bcast_path = TC_PATH_TRIVIAL;
    } else {
        if ((rc = tc_hier_create(&ctx->hier, ctx->priv, ctx->node, (int)v[TC_AGREE_SHM],
                                 ctx->comm_name)) != MPI_SUCCESS ||
            (rc = tc_ctx_shm_create(ctx, &seg_failed)) != MPI_SUCCESS)
            goto fn_fail;
        if (ctx->hier)
            ctx->hier->msg_wait = &ctx->msg_wait_info;
        /* Every input below is agreed (v) or the same on every rank (the
         * hierarchy and the segment's all-or-nothing outcome). */
        if (ctx->hier && ctx->hier->single_shm) {
            ctx->bcast_path = TC_PATH_SHM; /* one segment serves the whole communicator */
        } else if (ctx->hier && (!v[TC_AGREE_SINGLENODE] || (v[TC_AGREE_SHM] && !seg_failed))) {
            /* Several nodes (real, or posed by TC_LOCALITY_FILE), or one node
             * whose shared-memory level is below it or switched off with
             * TC_HIER_SHM_LEVEL=none: the groups of the hierarchy. */
            ctx->bcast_path = TC_PATH_HIER;
        } else if (!v[TC_AGREE_SINGLENODE]) {
            ctx->bcast_path = TC_PATH_PMPI_MULTINODE;
            tc_log_once(logged_multinode, TC_LOG_INFO,
                        "%s spans several nodes and TC_HIER=0 (or the hierarchy could not be "
                        "built): TC_Bcast, TC_Reduce and TC_Allreduce use the MPI's own",
                        ctx->comm_name);
        } else if (!v[TC_AGREE_SHM]) {
            ctx->bcast_path = TC_PATH_PMPI_SHM_OFF;
            tc_log_once(logged_shm_off, TC_LOG_INFO,
                        "%s: TC_SHM=0 on some rank: the MPI's own collectives are used",
                        ctx->comm_name);
        } else {
            ctx->bcast_path = TC_PATH_PMPI_NO_SEGMENT;
        }
    }
    /* The fragment race (race.h) needs the one segment's ring of times and
     * its wide slots: agreed parameters, the same outcome everywhere. */
    if (ctx->bcast_path == TC_PATH_SHM && ctx->shm)
        ctx->race.wide_min = ctx->shm->reduce_wide_min;
    if (ctx->size > 1) {
        /* Rank 0's parameters, so every rank computes the same choices. */
        if ((rc = tc_select_logp_agree(ctx->priv, ctx->shm, ctx->shmcomm, &ctx->logp)) !=
            MPI_SUCCESS)
            goto fn_fail;
        /* The tuning file and gamma as rank 0 sees them, then the hierarchy's
         * decision tables and the barrier plan. */
        const tc_select_scope_t scope = {.shm_P = ctx->shm ? ctx->shm->p : 0,
                                         .singlenode = (int)v[TC_AGREE_SINGLENODE],
                                         .oversubscribed = ctx->oversubscribed};
        if ((rc = tc_select_ctx_plans(ctx->priv, ctx->hier, &ctx->logp, &scope, &bs,
                                      &ctx->barrier)) != MPI_SUCCESS)
            goto fn_fail;
    }
    tc_log(TC_LOG_DEBUG,
           "context #%d on %s: node %d/%d, bcast path %d, f=%zu S=%d q=%d tree=%s arity=%d",
           ctx->id, ctx->comm_name, ctx->node_rank, ctx->node_size, (int)ctx->bcast_path,
           ctx->shm_params.f, ctx->shm_params.S, ctx->shm_params.q,
           tc_config_enum_name(&tc_shm_config, TC_SHM_CFG_TREE, ctx->shm_params.tree),
           ctx->shm_params.arity);

fn_exit:
    if ((rc = PMPI_Comm_set_attr(comm, tc_ctx_keyval, ctx)) != MPI_SUCCESS)
        goto fn_fail;
    pthread_mutex_lock(&tc_ctx_lock);
    ctx->older = tc_ctx_newest;
    if (tc_ctx_newest)
        tc_ctx_newest->newer = ctx;
    tc_ctx_newest = ctx;
    tc_ctx_cache_put_locked(ctx);
    pthread_mutex_unlock(&tc_ctx_lock);
    *out = ctx;
    return MPI_SUCCESS;
fn_fail:
    tc_ctx_free(ctx);
    return rc;
}

tc_err_t tc_ctx_get(MPI_Comm comm, tc_ctx_t **out)
{
    tc_err_t rc;
    int found = 0;
    void *attr = NULL;
    if ((*out = tc_ctx_lookup(comm)) != NULL)
        return MPI_SUCCESS;
    /* acquire: pairs with the release in tc_ctx_init_once() */
    if (!atomic_load_explicit(&tc_ctx_ready, memory_order_acquire) &&
        (rc = tc_ctx_init_once()) != MPI_SUCCESS)
        return rc;
    if ((rc = PMPI_Comm_get_attr(comm, tc_ctx_keyval, &attr, &found)) != MPI_SUCCESS)
        return rc;
    if (found) {
        *out = attr;
        tc_ctx_cache_put(attr); /* evicted by another communicator, or a dup's slot */
        return MPI_SUCCESS;
    }
    return tc_ctx_create(comm, out);
}

tc_ctx_t *tc_ctx_peek(MPI_Comm comm)
{
    int found = 0;
    void *attr = NULL;
    tc_ctx_t *ctx = tc_ctx_lookup(comm);
    if (ctx)
        return ctx;
    /* acquire: pairs with the release in tc_ctx_init_once() */
    if (!atomic_load_explicit(&tc_ctx_ready, memory_order_acquire))
        return NULL;
    if (PMPI_Comm_get_attr(comm, tc_ctx_keyval, &attr, &found) != MPI_SUCCESS || !found)
        return NULL;
    tc_ctx_cache_put(attr);
    return attr;
}

tc_err_t tc_ctx_release(MPI_Comm comm)
{
    int found = 0;
    void *attr = NULL;
    /* acquire: pairs with the release in tc_ctx_init_once() */
    if (!atomic_load_explicit(&tc_ctx_ready, memory_order_acquire))
        return MPI_SUCCESS; /* no context was ever created */
    int rc = PMPI_Comm_get_attr(comm, tc_ctx_keyval, &attr, &found);
    if (rc != MPI_SUCCESS || !found)
        return rc;
    return PMPI_Comm_delete_attr(comm, tc_ctx_keyval);
}

int tc_ctx_error(MPI_Comm comm, tc_err_t err, const char *what)
{
    const int errclass = tc_err_to_mpi(err);
    if (tc_log_level >= TC_LOG_INFO) {
        char why[MPI_MAX_ERROR_STRING + 32];
        tc_log(TC_LOG_INFO, "%s (%s)", what, tc_err_describe(err, why, sizeof why));
    }
    PMPI_Comm_call_errhandler(comm, errclass);
    return errclass;
}

int tc_ctx_fail(MPI_Comm comm, tc_err_t err, const char *fn, const char *what)
{
    char msg[128];
    snprintf(msg, sizeof msg, "%s: %s", fn, what);
    return tc_ctx_error(comm, err, msg);
}

int tc_ctx_failf(MPI_Comm comm, tc_err_t err, const char *fn, const char *fmt, ...)
{
    char what[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return tc_ctx_fail(comm, err, fn, what);
}
