/* One-sided broadcast (paper 002): the root's linear and binomial variants,
 * PutRequest and PutLoop, the Broadcaster helper thread, flush/test at the
 * root and wait/test at a non-root. */
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include <topocoll.h>

#include "base/err_mpi.h"
#include "base/log.h"
#include "rma.h"

/* ---- PutRequest, PutLoop ---------------------------------------------------- */

tc_err_t tc_rma_put_request(tc_rma_rt_t *rt, const tc_rma_win_t *w, int j, const void *src,
                            const tc_rma_descr_t *d, int set_req)
{
    int rc = MPI_SUCCESS;
    int bytes = (int)d->bytes; /* <= INT_MAX: checked by TC_Rma_bcast */
    uint64_t seq = d->seq, wseq = d->wseq;
    int root = (int)d->root, wid = (int)d->wid;

    if (bytes > 0)
        rc = PMPI_Put(src, bytes, MPI_BYTE, j, (MPI_Aint)d->disp, bytes, MPI_BYTE, w->win);
    if (rc == MPI_SUCCESS && set_req)
        rc = PMPI_Put(d, TC_RMA_DESCR_WORDS, MPI_UINT64_T, j, root, TC_RMA_DESCR_WORDS,
                      MPI_UINT64_T, rt->descrwin);
    /* Data and descriptor are complete at j before either flag is issued:
     * whoever sees a flag (j's helper, or j's wait) may read both. */
    if (rc == MPI_SUCCESS && bytes > 0)
        rc = PMPI_Win_flush(j, w->win);
    if (rc == MPI_SUCCESS && set_req)
        rc = PMPI_Win_flush(j, rt->descrwin);
    /* Without a request (linear) the flag for j's wait goes with the data;
     * with one, j's helper sets it itself once it has forwarded, so the
     * application may overwrite the region as soon as its wait returns. */
    if (rc == MPI_SUCCESS && !set_req)
        rc = PMPI_Accumulate(&wseq, 1, MPI_UINT64_T, j, tc_rma_cnt_index(rt, root, wid), 1,
                             MPI_UINT64_T, MPI_REPLACE, rt->reqwin);
    if (rc == MPI_SUCCESS && set_req)
        rc = PMPI_Accumulate(&seq, 1, MPI_UINT64_T, j, tc_rma_req_index(root), 1, MPI_UINT64_T,
                             MPI_REPLACE, rt->reqwin);
    /* The flags must land now, not whenever the MPI gets round to it (and
     * seq/wseq live on this stack). */
    if (rc == MPI_SUCCESS)
        rc = PMPI_Win_flush(j, rt->reqwin);
    return rc;
}

tc_err_t tc_rma_put_loop(tc_rma_rt_t *rt, const tc_rma_win_t *w, const void *src,
                         const tc_rma_descr_t *d)
{
    int p = rt->size, root = (int)d->root, ch[32];
    int srank = (rt->rank - root + p) % p;
    int n = tc_rma_tree_children(srank, p, (tc_rma_order_t)d->order, ch);
    for (int i = 0; i < n; i++) {
        int rc = tc_rma_put_request(rt, w, (ch[i] + root) % p, src, d, 1);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* Atomic read of word @p index of this process's part of @p win (reqwin or
 * donewin). */
static tc_err_t tc_rma_word_read(tc_rma_rt_t *rt, MPI_Win win, MPI_Aint index, uint64_t *val)
{
    /* Words of these windows are only touched by MPI atomics (accumulate-family
     * operations are atomic with respect to each other, plain loads are not). */
    int rc = PMPI_Fetch_and_op(NULL, val, MPI_UINT64_T, rt->rank, index, MPI_NO_OP, win);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Win_flush(rt->rank, win);
    return rc;
}

/* ---- Broadcaster (helper thread) ------------------------------------------------- */

/* Forward the broadcast of root @p r announced by req[r] == @p seq, then
 * count this process in the root's done counter. */
static void tc_rma_helper_forward(tc_rma_rt_t *rt, int r, uint64_t seq)
{
    tc_rma_descr_t d;
    tc_rma_win_t w;
    uint64_t one = 1;

    PMPI_Get(&d, TC_RMA_DESCR_WORDS, MPI_UINT64_T, rt->rank, r, TC_RMA_DESCR_WORDS, MPI_UINT64_T,
             rt->descrwin);
    PMPI_Win_flush(rt->rank, rt->descrwin);
    if (d.seq != seq || d.root != (uint64_t)r || tc_rma_win_lookup((int)d.wid, &w) != 0) {
        /* Cannot happen unless the protocol is broken: say so loudly, still
         * count ourselves so the root does not hang. */
        tc_log(TC_LOG_ERROR,
               "rma: helper got a bad descriptor from root %d (seq %llu, expected %llu, "
               "window %llu)",
               r, (unsigned long long)d.seq, (unsigned long long)seq, (unsigned long long)d.wid);
    } else {
        /* The data was flushed to us before the flag we saw; make it visible
         * to the loads of the puts that forward it. */
        PMPI_Win_sync(w.win);
        const char *src = w.base + (MPI_Aint)d.disp * w.disp_unit;
        tc_rma_put_loop(rt, &w, src, &d);
        /* Our own wait/test may now report the data (see tc_rma_put_request). */
        uint64_t wseq = d.wseq;
        PMPI_Accumulate(&wseq, 1, MPI_UINT64_T, rt->rank, tc_rma_cnt_index(rt, r, (int)d.wid), 1,
                        MPI_UINT64_T, MPI_REPLACE, rt->reqwin);
        PMPI_Win_flush(rt->rank, rt->reqwin);
    }
    PMPI_Accumulate(&one, 1, MPI_UINT64_T, r, 0, 1, MPI_UINT64_T, MPI_SUM, rt->donewin);
    PMPI_Win_flush(r, rt->donewin);
}

/* Idle back-off: poll_spin polls separated by sched_yield(), then sleeps
 * doubling from poll_min_us to poll_max_us (the paper's WaiterTimeout was a
 * fixed 1 ms). Any request resets it. */
static void tc_rma_helper_backoff(unsigned *idle)
{
    const tc_rma_knobs_t *k = &tc_rma_knobs;
    if (*idle < (unsigned)k->poll_spin) {
        (*idle)++;
        sched_yield();
        return;
    }
    unsigned shift = *idle - (unsigned)k->poll_spin;
    long us = k->poll_max_us;
    if (shift < 20 && ((long)k->poll_min_us << shift) < us)
        us = (long)k->poll_min_us << shift;
    (*idle)++;
    struct timespec ts = {.tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* One pass of the Broadcaster: read this process's request words and forward
 * every broadcast announced since the last pass. The caller holds
 * rt->fwd_lock. Returns whether anything was forwarded. */
static bool tc_rma_forward_pass(tc_rma_rt_t *rt)
{
    int p = rt->size;
    bool work = false;
    PMPI_Get_accumulate(NULL, 0, MPI_UINT64_T, rt->req, p, MPI_UINT64_T, rt->rank, 0, p,
                        MPI_UINT64_T, MPI_NO_OP, rt->reqwin);
    PMPI_Win_flush(rt->rank, rt->reqwin);
    for (int r = 0; r < p; r++) {
        if (rt->req[r] > rt->seen[r]) {
            tc_rma_helper_forward(rt, r, rt->req[r]);
            rt->seen[r] = rt->req[r];
            work = true;
        }
    }
    return work;
}

bool tc_rma_forward_help(tc_rma_rt_t *rt)
{
    /* Only with helper threads (binomial exists only then); never block: if
     * the helper is forwarding right now, it is doing our work already. */
    if (!rt->threaded || pthread_mutex_trylock(&rt->fwd_lock) != 0)
        return false;
    bool work = tc_rma_forward_pass(rt);
    pthread_mutex_unlock(&rt->fwd_lock);
    return work;
}

void *tc_rma_helper_main(void *arg)
{
    tc_rma_rt_t *rt = arg;
    unsigned idle = 0;

    /* acquire: pairs with the release in tc_rma_rt_destroy() */
    while (!atomic_load_explicit(&rt->stop, memory_order_acquire)) {
        pthread_mutex_lock(&rt->fwd_lock);
        bool work = tc_rma_forward_pass(rt);
        pthread_mutex_unlock(&rt->fwd_lock);
        /* The back-off sleeps outside the lock: a waiting main thread
         * forwards in the meantime (tc_rma_forward_help). */
        if (work)
            idle = 0;
        else
            tc_rma_helper_backoff(&idle);
    }
    /* Its own CPU time (what the 5%-of-a-core target is about). */
    struct rusage ru;
    if (tc_log_level >= TC_LOG_DEBUG && getrusage(RUSAGE_THREAD, &ru) == 0)
        tc_log(TC_LOG_DEBUG, "rma: helper thread used %.3f s user + %.3f s system",
               (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec,
               (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec);
    return NULL;
}

/* ---- root side ---------------------------------------------------------------------- */

/* The wait of the root's flush/test and of a non-root's wait/test: until word
 * @p index of our part of @p win reaches @p target, spin-then-yield
 * (tc_waiter: TC_WAIT_TIMEOUT names @p stage and @p peer). Meanwhile forward
 * what is pending: the broadcasts of other roots may be waiting for us, and our
 * data may be here with forwarding still to do (do it now rather than wait for
 * the helper's next poll, up to TC_RMA_POLL_MAX_US). Not @p block: return
 * after one look. @return MPI_SUCCESS with *reached 1 (reached) or 0 (not
 * yet, not @p block), or the error of the read. */
static tc_err_t tc_rma_poll(tc_rma_rt_t *rt, MPI_Win win, MPI_Aint index, uint64_t target,
                            int block, const char *stage, int peer, int *reached)
{
    tc_waiter_t wt;
    tc_waiter_init(&wt, &rt->wait_info, stage, peer);
    *reached = 0;
    for (;;) {
        uint64_t v = 0;
        int rc = tc_rma_word_read(rt, win, index, &v);
        if (rc != MPI_SUCCESS)
            return rc;
        if (v >= target) {
            *reached = 1;
            return MPI_SUCCESS;
        }
        if (tc_rma_forward_help(rt))
            continue;
        if (!block)
            return MPI_SUCCESS;
        tc_waiter_pause(&wt);
    }
}

/* Linear completion: the data puts complete at every target, then each
 * target's flag for the non-root wait. */
static tc_err_t tc_rma_linear_complete(tc_rma_rt_t *rt)
{
    tc_rma_win_t w;
    int wid = rt->inflight_wid;
    tc_err_t rc;
    uint64_t wseq = rt->wseq[wid];

    if (tc_rma_win_lookup(wid, &w) != TC_OK)
        return tc_err(TC_ERR_WIN);
    rc = PMPI_Win_flush_all(w.win);
    for (int j = 0; j < rt->size && rc == MPI_SUCCESS; j++)
        if (j != rt->rank)
            rc = PMPI_Accumulate(&wseq, 1, MPI_UINT64_T, j, tc_rma_cnt_index(rt, rt->rank, wid), 1,
                                 MPI_UINT64_T, MPI_REPLACE, rt->reqwin);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Win_flush_all(rt->reqwin);
    return rc;
}

tc_err_t tc_rma_root_complete(tc_rma_rt_t *rt, int block, int *done)
{
    tc_err_t rc = TC_OK;
    *done = 0;
    if (rt->inflight == TC_RMA_ALG_LINEAR) {
        rc = tc_rma_linear_complete(rt);
    } else if (rt->inflight == TC_RMA_ALG_BINOMIAL) {
        /* Every other member adds 1 to our done counter once it has its data
         * and has forwarded it (paper 002, RMABcastFlush). */
        int reached;
        rc = tc_rma_poll(rt, rt->donewin, 0, rt->done_target, block,
                         "rma bcast flush: done counter", -1, &reached);
        if (rc == MPI_SUCCESS && !reached)
            return MPI_SUCCESS;
    }
    if (rc == MPI_SUCCESS) {
        rt->inflight = 0;
        *done = 1;
    }
    return rc;
}

/* ---- public API ----------------------------------------------------------------------- */

/* The API boundary: @p err as an MPI class to the window's handler (errors
 * without a window go to MPI_COMM_WORLD's); returns the class. */
static int tc_rma_error(MPI_Win win, tc_err_t err)
{
    const int code = tc_err_to_mpi(err);
    if (win != MPI_WIN_NULL)
        PMPI_Win_call_errhandler(win, code);
    else
        PMPI_Comm_call_errhandler(MPI_COMM_WORLD, code);
    return code;
}

static int tc_rma_get(int wid, tc_rma_win_t *w, const char *fn)
{
    if (tc_rma_win_lookup(wid, w) != TC_OK) {
        tc_log(TC_LOG_ERROR, "%s: %d is not a registered window id", fn, wid);
        return tc_rma_error(MPI_WIN_NULL, tc_err(TC_ERR_ARG));
    }
    return MPI_SUCCESS;
}

int TC_Rma_bcast(const void *buf, int count, MPI_Datatype datatype, MPI_Aint disp, int wid, int alg)
{
    static bool said_fallback;
    tc_rma_win_t w;
    int rc, tsize, done;
    MPI_Aint lb, extent, tlb, textent;

    if ((rc = tc_rma_get(wid, &w, "TC_Rma_bcast")) != MPI_SUCCESS)
        return rc;
    tc_rma_rt_t *rt = w.rt;
    if (count < 0)
        return tc_rma_error(w.win, tc_err(TC_ERR_COUNT));
    if (disp < 0)
        return tc_rma_error(w.win, tc_err(TC_ERR_DISP));
    if (alg < TC_RMA_BCAST_DEFAULT || alg > TC_RMA_BCAST_BINOMIAL_UP) {
        tc_log(TC_LOG_ERROR, "TC_Rma_bcast: algorithm %d is not one of TC_RMA_BCAST_*", alg);
        return tc_rma_error(w.win, tc_err(TC_ERR_ARG));
    }
    if (datatype == MPI_DATATYPE_NULL || PMPI_Type_size(datatype, &tsize) != MPI_SUCCESS ||
        PMPI_Type_get_extent(datatype, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(datatype, &tlb, &textent) != MPI_SUCCESS)
        return tc_rma_error(w.win, tc_err(TC_ERR_TYPE));
    /* The payload travels as bytes: count elements must be one gap-free run
     * (no holes in an element, and consecutive elements abut). */
    if (count > 0 && tsize > 0 && (textent != tsize || (count > 1 && extent != tsize))) {
        tc_log(TC_LOG_ERROR,
               "TC_Rma_bcast: the datatype is not contiguous (size %d, extent %ld, true extent "
               "%ld): only predefined or contiguous datatypes can be broadcast",
               tsize, (long)extent, (long)textent);
        return tc_rma_error(w.win, tc_err(TC_ERR_TYPE));
    }
    long long bytes = (long long)count * tsize;
    if (bytes > INT_MAX) {
        tc_log(TC_LOG_ERROR, "TC_Rma_bcast: %lld bytes: at most %d bytes per broadcast", bytes,
               INT_MAX);
        return tc_rma_error(w.win, tc_err(TC_ERR_COUNT));
    }
    const char *src = (const char *)buf + (bytes > 0 ? tlb : 0);

    /* One broadcast of this root in flight at a time (paper: "wait for the
     * previous operation to finish"): the request and descriptor slots of
     * this root are then free at every member. */
    if ((rc = tc_rma_root_complete(rt, 1, &done)) != MPI_SUCCESS)
        return tc_rma_error(w.win, rc);

    int kind = alg;
    tc_rma_order_t order = tc_rma_knobs.order;
    if (alg == TC_RMA_BCAST_DEFAULT) {
        tc_rma_alg_t a = tc_rma_knobs.alg;
        if (a == TC_RMA_ALG_AUTO)
            a = (size_t)bytes >= tc_rma_knobs.switch_bytes ? TC_RMA_ALG_BINOMIAL
                                                           : TC_RMA_ALG_LINEAR;
        kind = a == TC_RMA_ALG_BINOMIAL ? TC_RMA_BCAST_BINOMIAL : TC_RMA_BCAST_LINEAR;
    }
    if (kind == TC_RMA_BCAST_BINOMIAL_DOWN)
        order = TC_RMA_ORDER_DOWN;
    else if (kind == TC_RMA_BCAST_BINOMIAL_UP)
        order = TC_RMA_ORDER_UP;
    if (kind != TC_RMA_BCAST_LINEAR && !rt->threaded) {
        tc_log_once(said_fallback, TC_LOG_INFO,
                    "rma: MPI_THREAD_MULTIPLE not provided, so no helper thread: the binomial "
                    "RMA broadcast falls back to linear");
        kind = TC_RMA_BCAST_LINEAR;
    }
    if (rt->size == 1)
        return MPI_SUCCESS;

    rt->wseq[wid]++;
    rt->inflight_wid = wid;
    if (kind == TC_RMA_BCAST_LINEAR) {
        /* One passive epoch (lock_all, opened at registration): a put to
         * every other member, all completed, then the flags. Completing here
         * rather than in flush means a receiver never depends on the root
         * calling flush (two roots waiting for each other's data would
         * otherwise deadlock). */
        for (int j = 0; j < rt->size && rc == MPI_SUCCESS && bytes > 0; j++)
            if (j != rt->rank)
                rc = PMPI_Put(src, (int)bytes, MPI_BYTE, j, disp, (int)bytes, MPI_BYTE, w.win);
        rt->inflight = TC_RMA_ALG_LINEAR;
        if (rc == MPI_SUCCESS)
            rc = tc_rma_root_complete(rt, 1, &done);
        return rc == MPI_SUCCESS ? rc : tc_rma_error(w.win, rc);
    }
    tc_rma_descr_t d = {.seq = ++rt->bseq,
                        .root = (uint64_t)rt->rank,
                        .wid = (uint64_t)wid,
                        .disp = (uint64_t)disp,
                        .bytes = (uint64_t)bytes,
                        .wseq = rt->wseq[wid],
                        .order = (uint64_t)order};
    rt->done_target += (uint64_t)(rt->size - 1);
    rt->inflight = TC_RMA_ALG_BINOMIAL;
    rc = tc_rma_put_loop(rt, &w, src, &d);
    return rc == MPI_SUCCESS ? rc : tc_rma_error(w.win, rc);
}

int TC_Rma_bcast_flush(int wid)
{
    tc_rma_win_t w;
    int rc, done;
    if ((rc = tc_rma_get(wid, &w, "TC_Rma_bcast_flush")) != MPI_SUCCESS)
        return rc;
    rc = tc_rma_root_complete(w.rt, 1, &done);
    return rc == MPI_SUCCESS ? rc : tc_rma_error(w.win, rc);
}

int TC_Rma_bcast_test(int wid, int *flag)
{
    tc_rma_win_t w;
    int rc, done = 0;
    if ((rc = tc_rma_get(wid, &w, "TC_Rma_bcast_test")) != MPI_SUCCESS)
        return rc;
    if (flag == NULL)
        return tc_rma_error(w.win, tc_err(TC_ERR_ARG));
    rc = tc_rma_root_complete(w.rt, 0, &done);
    *flag = done;
    return rc == MPI_SUCCESS ? rc : tc_rma_error(w.win, rc);
}

/* Non-root: has the next broadcast of @p root on @p wid (the first one this
 * process has not waited for) delivered its data here? */
static int tc_rma_recv_poll(int wid, int root, int block, int *flag, const char *fn)
{
    tc_rma_win_t w;
    int rc;
    if ((rc = tc_rma_get(wid, &w, fn)) != MPI_SUCCESS)
        return rc;
    tc_rma_rt_t *rt = w.rt;
    if (root < 0 || root >= rt->size || root == rt->rank) {
        tc_log(TC_LOG_ERROR, "%s: root %d: must be another rank of the window's group (size %d)",
               fn, root, rt->size);
        return tc_rma_error(w.win, tc_err(TC_ERR_ROOT));
    }
    uint64_t *waited = &rt->waited[(size_t)root * TC_RMA_MAX_WINDOWS + (size_t)wid];
    rc = tc_rma_poll(rt, rt->reqwin, tc_rma_cnt_index(rt, root, wid), *waited + 1, block,
                     "rma bcast wait: data from root", root, flag);
    if (rc != MPI_SUCCESS)
        return tc_rma_error(w.win, rc);
    if (!*flag)
        return MPI_SUCCESS;
    (*waited)++;
    /* The data was flushed to us before the flag: make it visible to the
     * caller's loads of the window memory. */
    rc = PMPI_Win_sync(w.win);
    return rc == MPI_SUCCESS ? rc : tc_rma_error(w.win, rc);
}

int TC_Rma_bcast_recv_wait(int wid, int root)
{
    int flag;
    return tc_rma_recv_poll(wid, root, 1, &flag, "TC_Rma_bcast_recv_wait");
}

int TC_Rma_bcast_recv_test(int wid, int root, int *flag)
{
    int dummy;
    return tc_rma_recv_poll(wid, root, 0, flag ? flag : &dummy, "TC_Rma_bcast_recv_test");
}
