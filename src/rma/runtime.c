/* RMA broadcast runtime (paper 002, Fig. 3): tunables, the table of
 * registered data windows, one runtime (reqwin, descrwin, donecntrwin, helper
 * thread) per process group, registration, unregistration and the
 * MPI_Finalize hook. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <topocoll.h>

#include "base/config.h"
#include "base/err_mpi.h"
#include "base/log.h"
#include "base/settings.h"
#include "base/tags.h"
#include "rma.h"
#include "settings.h"

/* Tag of MPI_Comm_create_group (collective over the window's group only). */

tc_rma_knobs_t tc_rma_knobs;

static pthread_mutex_t tc_rma_lock = PTHREAD_MUTEX_INITIALIZER; /* table and list */
static tc_rma_win_t tc_rma_wins[TC_RMA_MAX_WINDOWS];
static tc_rma_rt_t *tc_rma_rts; /* runtimes, newest first */
static int64_t tc_rma_serial_next;
static bool tc_rma_inited;
static int tc_rma_self_keyval = MPI_KEYVAL_INVALID;

/* Defaults measured here: TC_RMA_POLL_SPIN 0 because an idle helper that
 * polls back-to-back holds MPICH's global lock so often that the main
 * thread's own MPI calls starve (4-byte linear broadcast at np=2: 12 ms with
 * 100 polls before sleeping, 0.2 ms with 0; Open MPI is indifferent);
 * TC_RMA_POLL_MAX_US 1000 (the paper's WaiterTimeout) keeps an idle helper at
 * 2.5-4% of a core; TC_RMA_BCAST_SWITCH 16M: the binomial tree beat linear
 * from 16 MiB at np=8 on one 2-core node (noisy). */
_Static_assert(TC_RMA_ALG_AUTO == 0 && TC_RMA_ALG_LINEAR == 1 && TC_RMA_ALG_BINOMIAL == 2 &&
                   TC_RMA_ORDER_DOWN == 0 && TC_RMA_ORDER_UP == 1,
               "TC_RMA_BCAST / TC_RMA_PUTLOOP word lists (settings.c) match these enums");

static void tc_rma_knobs_load(void)
{
    /* The config's word lists are in the order of these enums. */
    tc_rma_knobs.alg = (tc_rma_alg_t)tc_config_int(&tc_rma_config, TC_RMA_CFG_BCAST);
    tc_rma_knobs.switch_bytes = (size_t)tc_config_int(&tc_rma_config, TC_RMA_CFG_BCAST_SWITCH);
    tc_rma_knobs.order = (tc_rma_order_t)tc_config_int(&tc_rma_config, TC_RMA_CFG_PUTLOOP);
    tc_rma_knobs.poll_spin = (int)tc_config_int(&tc_rma_config, TC_RMA_CFG_POLL_SPIN);
    tc_rma_knobs.poll_min_us = (int)tc_config_int(&tc_rma_config, TC_RMA_CFG_POLL_MIN_US);
    tc_rma_knobs.poll_max_us = (int)tc_config_int(&tc_rma_config, TC_RMA_CFG_POLL_MAX_US);
    if (tc_rma_knobs.poll_max_us < tc_rma_knobs.poll_min_us)
        tc_rma_knobs.poll_max_us = tc_rma_knobs.poll_min_us;
}

tc_err_t tc_rma_win_lookup(int wid, tc_rma_win_t *out)
{
    tc_err_t rc = tc_err(TC_ERR_NOTFOUND);
    if (wid < 0 || wid >= TC_RMA_MAX_WINDOWS)
        return rc;
    pthread_mutex_lock(&tc_rma_lock);
    if (tc_rma_wins[wid].in_use) {
        *out = tc_rma_wins[wid];
        rc = TC_OK;
    }
    pthread_mutex_unlock(&tc_rma_lock);
    return rc;
}

/* ---- runtime life cycle -------------------------------------------------------------- */

static int tc_rma_win_alloc(MPI_Comm comm, MPI_Aint bytes, int unit, MPI_Win *win)
{
    void *base;
    int rc = PMPI_Win_allocate(bytes, unit, MPI_INFO_NULL, comm, &base, win);
    if (rc != MPI_SUCCESS)
        return rc;
    /* Zeroed before any peer can touch it: peers only access it after the
     * barrier that ends registration. */
    memset(base, 0, (size_t)bytes);
    if ((rc = PMPI_Win_lock_all(MPI_MODE_NOCHECK, *win)) == MPI_SUCCESS)
        rc = PMPI_Win_sync(*win);
    return rc;
}

static void tc_rma_win_release(MPI_Win *win)
{
    if (*win == MPI_WIN_NULL)
        return;
    PMPI_Win_unlock_all(*win);
    PMPI_Win_free(win);
}

/* Collective over rt->comm. */
static void tc_rma_rt_destroy(tc_rma_rt_t *rt)
{
    if (rt->threaded) {
        /* release: pairs with the acquire in tc_rma_helper_main() */
        atomic_store_explicit(&rt->stop, 1, memory_order_release);
        pthread_join(rt->thread, NULL);
    }
    tc_rma_win_release(&rt->reqwin);
    tc_rma_win_release(&rt->descrwin);
    tc_rma_win_release(&rt->donewin);
    pthread_mutex_lock(&tc_rma_lock);
    for (tc_rma_rt_t **pp = &tc_rma_rts; *pp; pp = &(*pp)->next)
        if (*pp == rt) {
            *pp = rt->next;
            break;
        }
    pthread_mutex_unlock(&tc_rma_lock);
    PMPI_Comm_free(&rt->comm);
    PMPI_Group_free(&rt->group);
    pthread_mutex_destroy(&rt->fwd_lock);
    free(rt->seen);
    free(rt->req);
    free(rt->waited);
    free(rt);
}

/* Collective over @p comm: windows and, if @p threaded, the helper thread.
 * *thread_ok = 0 if the thread could not be started here. */
static tc_err_t tc_rma_rt_create(MPI_Comm comm, MPI_Group group, int64_t serial, int threaded,
                                 tc_rma_rt_t **out, int *thread_ok)
{
    tc_err_t rc;
    tc_rma_rt_t *rt = calloc(1, sizeof *rt);
    *thread_ok = 1;
    if (rt == NULL)
        return tc_err(TC_ERR_NOMEM);
    rt->comm = comm;
    rt->group = group;
    rt->serial = serial;
    rt->reqwin = rt->descrwin = rt->donewin = MPI_WIN_NULL;
    PMPI_Comm_rank(comm, &rt->rank);
    PMPI_Comm_size(comm, &rt->size);
    int p = rt->size;
    rt->seen = calloc((size_t)p, sizeof *rt->seen);
    rt->req = calloc((size_t)p, sizeof *rt->req);
    pthread_mutex_init(&rt->fwd_lock, NULL);
    rt->waited = calloc((size_t)p * TC_RMA_MAX_WINDOWS, sizeof *rt->waited);
    snprintf(rt->name, sizeof rt->name, "rma runtime #%lld (size %d)", (long long)serial, p);
    rt->wait_info.comm_name = rt->name;
    tc_base_settings_wait(&rt->wait_info);
    /* Every window at least a cache line (>= 64 B) per rank and a multiple of it: MPICH
     * 4.0.2 misdelivers puts and atomics to odd ranks in windows of 8 bytes
     * per rank (tests/rma: rma_mpich_small_win regression test). */
    MPI_Aint reqbytes = (MPI_Aint)(p + (size_t)p * TC_RMA_MAX_WINDOWS) * 8;
    reqbytes = (reqbytes + TC_CACHELINE - 1) / TC_CACHELINE * TC_CACHELINE;
    rc = tc_rma_win_alloc(comm, reqbytes, 8, &rt->reqwin);
    if (rc == MPI_SUCCESS)
        rc = tc_rma_win_alloc(comm, (MPI_Aint)p * (MPI_Aint)sizeof(tc_rma_descr_t),
                              (int)sizeof(tc_rma_descr_t), &rt->descrwin);
    if (rc == MPI_SUCCESS)
        rc = tc_rma_win_alloc(comm, TC_RMA_DONE_BYTES, 8, &rt->donewin);
    if (rc == MPI_SUCCESS && (rt->seen == NULL || rt->req == NULL || rt->waited == NULL))
        rc = tc_err(TC_ERR_NOMEM);
    if (rc != MPI_SUCCESS) {
        /* Window creation is collective: a failure here is the MPI's, on
         * every member alike; free what exists. */
        tc_rma_win_release(&rt->reqwin);
        tc_rma_win_release(&rt->descrwin);
        tc_rma_win_release(&rt->donewin);
        pthread_mutex_destroy(&rt->fwd_lock);
        free(rt->seen);
        free(rt->req);
        free(rt->waited);
        free(rt);
        return rc;
    }
    if (threaded) {
        atomic_init(&rt->stop, 0);
        rt->threaded = pthread_create(&rt->thread, NULL, tc_rma_helper_main, rt) == 0;
        *thread_ok = rt->threaded;
    }
    *out = rt;
    return MPI_SUCCESS;
}

/* ---- finalize hook ------------------------------------------------------------------- */

/* MPI_Finalize deletes MPI_COMM_SELF's attributes first, while MPI still
 * works: unregister what the application left registered. Window ids are
 * agreed by each group, so every process goes through them in the same
 * (ascending) order and the collectives inside match. */
static int tc_rma_self_delete_fn(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)attr;
    (void)extra;
    for (int wid = 0; wid < TC_RMA_MAX_WINDOWS; wid++) {
        tc_rma_win_t w;
        if (tc_rma_win_lookup(wid, &w) == 0) {
            tc_log(TC_LOG_DEBUG, "finalize: unregistering RMA window %d", wid);
            TC_Rma_win_unregister(wid);
        }
    }
    return MPI_SUCCESS;
}

static int tc_rma_init_once(void)
{
    int rc = MPI_SUCCESS;
    if (tc_rma_inited)
        return MPI_SUCCESS;
    tc_config_module_load(&tc_base_config); /* TC_VERBOSE, TC_WAIT_TIMEOUT, TC_SPIN_COUNT */
    if (tc_log_rank < 0)
        PMPI_Comm_rank(MPI_COMM_WORLD, &tc_log_rank);
    tc_rma_knobs_load();
    rc = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, tc_rma_self_delete_fn, &tc_rma_self_keyval,
                                 NULL);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_set_attr(MPI_COMM_SELF, tc_rma_self_keyval, NULL);
    if (rc == MPI_SUCCESS)
        PMPI_Comm_free_keyval(&tc_rma_self_keyval); /* the attribute keeps it alive */
    if (rc == MPI_SUCCESS)
        tc_rma_inited = true;
    return rc;
}

/* The window's group rebuilt from MPI_COMM_WORLD's (same ranks, same order):
 * MPICH 4.0.2's MPI_Comm_create_group crashes on the group MPI_Win_get_group
 * returns. */
static tc_err_t tc_rma_win_world_group(MPI_Win win, MPI_Group *out)
{
    MPI_Group wg = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
    int n = 0, *in = NULL, *ranks = NULL;
    tc_err_t rc;
    if ((rc = PMPI_Win_get_group(win, &wg)) != MPI_SUCCESS)
        return rc;
    if ((rc = PMPI_Comm_group(MPI_COMM_WORLD, &world)) == MPI_SUCCESS)
        rc = PMPI_Group_size(wg, &n);
    if (rc == MPI_SUCCESS) {
        in = malloc(sizeof(int) * (size_t)n);
        ranks = malloc(sizeof(int) * (size_t)n);
        if (in == NULL || ranks == NULL)
            rc = tc_err(TC_ERR_NOMEM);
    }
    for (int i = 0; rc == MPI_SUCCESS && i < n; i++)
        in[i] = i;
    if (rc == MPI_SUCCESS)
        rc = PMPI_Group_translate_ranks(wg, n, in, world, ranks);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Group_incl(world, n, ranks, out);
    free(in);
    free(ranks);
    if (world != MPI_GROUP_NULL)
        PMPI_Group_free(&world);
    PMPI_Group_free(&wg);
    return rc;
}

/* ---- public API ------------------------------------------------------------------------ */

int TC_Rma_win_register(MPI_Win win, int *wid_out)
{
    MPI_Group group = MPI_GROUP_NULL;
    MPI_Comm comm = MPI_COMM_NULL;
    tc_rma_rt_t *rt = NULL, *cand = NULL;
    int provided = MPI_THREAD_SINGLE, flag, *unit = NULL;
    tc_err_t rc;
    void *base = NULL;
    MPI_Aint *size = NULL;

    if (win == MPI_WIN_NULL || wid_out == NULL) {
        PMPI_Comm_call_errhandler(MPI_COMM_WORLD, win == MPI_WIN_NULL ? MPI_ERR_WIN : MPI_ERR_ARG);
        return win == MPI_WIN_NULL ? MPI_ERR_WIN : MPI_ERR_ARG;
    }
    if ((rc = tc_rma_init_once()) != MPI_SUCCESS)
        goto fn_fail;
    if ((rc = tc_rma_win_world_group(win, &group)) != MPI_SUCCESS)
        goto fn_fail;
    /* A communicator over the window's group, collective over that group
     * only (the window's group is a subset of MPI_COMM_WORLD's). */
    if ((rc = PMPI_Comm_create_group(MPI_COMM_WORLD, group, TC_TAG_RMA_CREATE, &comm)) !=
        MPI_SUCCESS)
        goto fn_fail;

    /* Reuse the oldest runtime over the same group, if every member has it. */
    pthread_mutex_lock(&tc_rma_lock);
    for (tc_rma_rt_t *r = tc_rma_rts; r; r = r->next) {
        int res;
        if (PMPI_Group_compare(r->group, group, &res) == MPI_SUCCESS && res == MPI_IDENT)
            cand = r; /* list is newest first: the last match is the oldest */
    }
    pthread_mutex_unlock(&tc_rma_lock);
    PMPI_Query_thread(&provided);
    int64_t c = cand ? cand->serial : -1;
    int64_t in[4] = {c, -c, -(int64_t)(provided == MPI_THREAD_MULTIPLE), tc_rma_serial_next};
    int64_t out[4];
    if ((rc = PMPI_Allreduce(in, out, 4, MPI_INT64_T, MPI_MAX, comm)) != MPI_SUCCESS)
        goto fn_fail;
    bool reuse = out[0] >= 0 && out[0] == -out[1];
    int threaded = (int)-out[2];
    int thread_ok = 1;
    if (reuse) {
        rt = cand;
        PMPI_Comm_free(&comm);
        PMPI_Group_free(&group);
    } else {
        tc_rma_serial_next = out[3] + 1;
        if ((rc = tc_rma_rt_create(comm, group, out[3], threaded, &rt, &thread_ok)) != MPI_SUCCESS)
            goto fn_fail;
        comm = MPI_COMM_NULL; /* owned by rt */
        group = MPI_GROUP_NULL;
        pthread_mutex_lock(&tc_rma_lock);
        rt->next = tc_rma_rts;
        tc_rma_rts = rt;
        pthread_mutex_unlock(&tc_rma_lock);
    }

    /* Agree on the window id (lowest free on every member) and on whether
     * every helper thread started. */
    uint64_t taken = 0, all_taken = 0;
    pthread_mutex_lock(&tc_rma_lock);
    for (int i = 0; i < TC_RMA_MAX_WINDOWS; i++)
        if (tc_rma_wins[i].in_use)
            taken |= 1ull << i;
    pthread_mutex_unlock(&tc_rma_lock);
    if (!thread_ok)
        taken |= 1ull << 63;
    if ((rc = PMPI_Allreduce(&taken, &all_taken, 1, MPI_UINT64_T, MPI_BOR, rt->comm)) !=
        MPI_SUCCESS)
        goto fn_fail;
    if (rt->threaded && (all_taken >> 63)) {
        /* A member could not start its helper: nobody runs one (binomial
         * then falls back to linear everywhere). */
        atomic_store_explicit(&rt->stop, 1, memory_order_release);
        pthread_join(rt->thread, NULL);
        rt->threaded = 0;
        tc_log(TC_LOG_INFO, "rma: a helper thread could not be started: linear only");
    }
    int wid = 0;
    while (wid < TC_RMA_MAX_WINDOWS && (all_taken >> wid) & 1)
        wid++;
    if (wid == TC_RMA_MAX_WINDOWS) {
        tc_log(TC_LOG_ERROR, "TC_Rma_win_register: at most %d windows can be registered at once",
               TC_RMA_MAX_WINDOWS);
        rc = MPI_ERR_OTHER; /* an MPI class: the API function itself */
        if (rt->refs == 0)
            tc_rma_rt_destroy(rt);
        goto fn_fail;
    }

    /* The library's passive epoch on the data window, open while registered. */
    if ((rc = PMPI_Win_lock_all(MPI_MODE_NOCHECK, win)) != MPI_SUCCESS)
        goto fn_fail;
    PMPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag);
    PMPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &unit, &flag);
    PMPI_Win_get_attr(win, MPI_WIN_SIZE, &size, &flag);
    pthread_mutex_lock(&tc_rma_lock);
    tc_rma_wins[wid] = (tc_rma_win_t){.in_use = 1,
                                      .win = win,
                                      .rt = rt,
                                      .base = base,
                                      .disp_unit = unit ? *unit : 1,
                                      .size = size ? *size : 0};
    pthread_mutex_unlock(&tc_rma_lock);
    rt->refs++;
    rt->wseq[wid] = 0;
    for (int r = 0; r < rt->size; r++)
        rt->waited[(size_t)r * TC_RMA_MAX_WINDOWS + (size_t)wid] = 0;
    /* Nobody broadcasts on the window before every member has its entry. */
    if ((rc = PMPI_Barrier(rt->comm)) != MPI_SUCCESS)
        goto fn_fail;
    tc_log(TC_LOG_DEBUG, "rma: window %d registered on %s%s", wid, rt->name,
           rt->threaded ? ", helper thread running" : ", no helper thread");
    *wid_out = wid;
    return MPI_SUCCESS;

fn_fail:
    if (comm != MPI_COMM_NULL)
        PMPI_Comm_free(&comm);
    if (group != MPI_GROUP_NULL)
        PMPI_Group_free(&group);
    rc = tc_err_to_mpi(rc); /* the API boundary */
    PMPI_Win_call_errhandler(win, rc);
    return rc;
}

int TC_Rma_win_unregister(int wid)
{
    tc_rma_win_t w;
    int rc, done;
    if (tc_rma_win_lookup(wid, &w) != 0) {
        tc_log(TC_LOG_ERROR, "TC_Rma_win_unregister: %d is not a registered window id", wid);
        PMPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_ARG);
        return MPI_ERR_ARG;
    }
    tc_rma_rt_t *rt = w.rt;
    /* Our own broadcast in flight completes; after the barrier every
     * member's has (binomial: the done counter counts a member after it has
     * forwarded), so no request, put or helper forward is left anywhere. */
    rc = tc_rma_root_complete(rt, 1, &done);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Barrier(rt->comm);
    pthread_mutex_lock(&tc_rma_lock);
    tc_rma_wins[wid].in_use = 0;
    pthread_mutex_unlock(&tc_rma_lock);
    int rc2 = PMPI_Win_unlock_all(w.win);
    if (rc == MPI_SUCCESS)
        rc = rc2;
    if (--rt->refs == 0)
        tc_rma_rt_destroy(rt);
    if (rc != MPI_SUCCESS)
        PMPI_Win_call_errhandler(w.win, rc);
    return rc;
}
