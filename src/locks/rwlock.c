/* The lock interface: scheme table, size, init/attach, dispatch, and the helpers
 * every scheme shares (waits, robust mutexes, logging). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "lock_internal.h"

static const tc_lock_ops_t *const tc_lock_table[TC_LOCK_SCHEME_LAST] = {
    [TC_LOCK_SCHEME_RWLOCK] = &tc_lock_ops_rwlock,
    [TC_LOCK_SCHEME_1N_MUTEX] = &tc_lock_ops_1n_mutex,
    [TC_LOCK_SCHEME_2N_MUTEX] = &tc_lock_ops_2n_mutex,
    [TC_LOCK_SCHEME_N_MUTEX_SIGNAL] = &tc_lock_ops_n_mutex_signal,
    [TC_LOCK_SCHEME_N_MCS] = &tc_lock_ops_n_mcs,
};

static const tc_lock_ops_t *tc_lock_ops_get(tc_lock_scheme_t scheme)
{
    if ((unsigned)scheme >= TC_LOCK_SCHEME_LAST)
        return NULL;
    return tc_lock_table[scheme];
}

const char *tc_lock_scheme_name(tc_lock_scheme_t scheme)
{
    const tc_lock_ops_t *ops = tc_lock_ops_get(scheme);
    return ops ? ops->name : NULL;
}

tc_err_t tc_lock_scheme_parse(const char *name, tc_lock_scheme_t *scheme)
{
    if (name == NULL || scheme == NULL)
        return tc_err(TC_ERR_ARG);
    for (int s = 0; s < TC_LOCK_SCHEME_LAST; s++) {
        if (strcasecmp(name, tc_lock_table[s]->name) == 0) {
            *scheme = (tc_lock_scheme_t)s;
            return TC_OK;
        }
    }
    return tc_err(TC_ERR_ARG);
}

size_t tc_rwlock_size(tc_lock_scheme_t scheme, int nreaders)
{
    const tc_lock_ops_t *ops = tc_lock_ops_get(scheme);
    if (ops == NULL || nreaders < 1)
        return 0;
    return sizeof(tc_lock_hdr_t) + ops->body_size(nreaders);
}

static tc_err_t tc_lock_args_check(const void *mem, size_t bytes, const tc_lock_opts_t *opts)
{
    if (mem == NULL || opts == NULL || (uintptr_t)mem % TC_CACHELINE != 0 ||
        bytes < sizeof(tc_lock_hdr_t) || !(opts->timeout_s >= 0.0) ||
        (unsigned)opts->wait_policy >= TC_WAIT_LAST)
        return tc_err(TC_ERR_ARG);
    return TC_OK;
}

tc_err_t tc_rwlock_init(tc_rwlock_t *lk, void *mem, size_t bytes, tc_lock_scheme_t scheme,
                        int nreaders, const tc_lock_opts_t *opts)
{
    size_t need = tc_rwlock_size(scheme, nreaders);
    if (lk == NULL || need == 0 || tc_lock_args_check(mem, bytes, opts) != 0 || bytes < need)
        return tc_err(TC_ERR_ARG);
    memset(mem, 0, need);
    lk->mem = mem;
    lk->scheme = scheme;
    lk->nreaders = nreaders;
    lk->opts = *opts;
    tc_lock_hdr_t *h = tc_lock_hdr(lk);
    h->scheme = (uint32_t)scheme;
    h->nreaders = nreaders;
    tc_lock_store_relaxed(&h->broken, 0);
    tc_err_t rc = tc_lock_ops_get(scheme)->init(lk);
    if (rc != TC_OK)
        return rc;
    /* release: pairs with the acquire in tc_rwlock_attach(); publishes the
     * scheme's initialised state to attaching processes. */
    tc_lock_store_release(&h->magic, TC_LOCK_MAGIC);
    return TC_OK;
}

tc_err_t tc_rwlock_attach(tc_rwlock_t *lk, void *mem, size_t bytes, const tc_lock_opts_t *opts)
{
    if (lk == NULL || tc_lock_args_check(mem, bytes, opts) != 0)
        return tc_err(TC_ERR_ARG);
    tc_lock_hdr_t *h = mem;
    /* acquire: pairs with the release in tc_rwlock_init(). */
    uint32_t magic = tc_lock_load_acquire(&h->magic);
    if (magic == 0)
        return tc_err_errno(TC_ERR_BUSY, EAGAIN); /* not initialised yet */
    if (magic != TC_LOCK_MAGIC || h->scheme >= TC_LOCK_SCHEME_LAST ||
        bytes < tc_rwlock_size((tc_lock_scheme_t)h->scheme, h->nreaders))
        return tc_err(TC_ERR_ARG);
    lk->mem = mem;
    lk->scheme = (tc_lock_scheme_t)h->scheme;
    lk->nreaders = h->nreaders;
    lk->opts = *opts;
    return TC_OK;
}

tc_err_t tc_rwlock_rdlock(tc_rwlock_t *lk, int x)
{
    if (x < 0 || x >= lk->nreaders)
        return tc_err(TC_ERR_ARG);
    return tc_lock_table[lk->scheme]->rdlock(lk, x);
}

tc_err_t tc_rwlock_rdunlock(tc_rwlock_t *lk, int x)
{
    if (x < 0 || x >= lk->nreaders)
        return tc_err(TC_ERR_ARG);
    return tc_lock_table[lk->scheme]->rdunlock(lk, x);
}

tc_err_t tc_rwlock_wrlock(tc_rwlock_t *lk)
{
    return tc_lock_table[lk->scheme]->wrlock(lk);
}

tc_err_t tc_rwlock_wrunlock(tc_rwlock_t *lk)
{
    return tc_lock_table[lk->scheme]->wrunlock(lk);
}

tc_err_t tc_rwlock_destroy(tc_rwlock_t *lk)
{
    if (lk == NULL || lk->mem == NULL)
        return tc_err(TC_ERR_ARG);
    tc_err_t rc = tc_lock_table[lk->scheme]->destroy(lk);
    tc_lock_store_relaxed(&tc_lock_hdr(lk)->magic, 0);
    lk->mem = NULL;
    return rc;
}

/* ---- helpers shared by the schemes ------------------------------------- */

void tc_lock_log(const tc_rwlock_t *lk, const char *fmt, ...)
{
    if (lk->opts.log == NULL)
        return;
    char msg[256];
    int off = snprintf(msg, sizeof msg, "lock %s: ", tc_lock_scheme_name(lk->scheme));
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + off, sizeof msg - (size_t)off, fmt, ap);
    va_end(ap);
    lk->opts.log(lk->opts.log_arg, msg);
}

void tc_lock_wait_init(tc_lock_wait_t *w, const tc_rwlock_t *lk, tc_atomic_u64_t *sleepers,
                       tc_wait_check_fn check, void *check_arg, const char *stage, int peer)
{
    /* The lock's waits return TC_ERR_TIMEOUT (they never call on_timeout), so the
     * name is only for the helper's statistics. */
    w->info = (tc_wait_info_t){
        .comm_name = "lock",
        .timeout_s = lk->opts.timeout_s,
        .spin_polls = lk->opts.spin_polls,
        .policy = lk->opts.wait_policy,
    };
    tc_wait_word_init(&w->ww, &w->info, sleepers, check, check_arg, stage, peer);
}

tc_err_t tc_lock_check_broken(void *arg)
{
    const tc_rwlock_t *lk = arg;
    /* relaxed: `broken` only tells a waiter to stop waiting; it publishes no data. */
    return tc_lock_load_relaxed(&tc_lock_hdr(lk)->broken) ? tc_err(TC_ERR_NOTRECOVERABLE) : TC_OK;
}

tc_err_t tc_lock_mutex_init(tc_lock_mutex_t *m)
{
    pthread_mutexattr_t a;
    int rc = pthread_mutexattr_init(&a);
    if (rc != TC_OK)
        return tc_err_from_errno(rc);
    rc = pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    if (rc == TC_OK)
        rc = pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    if (rc == TC_OK)
        rc = pthread_mutex_init(&m->m, &a);
    pthread_mutexattr_destroy(&a);
    return tc_err_from_errno(rc);
}

tc_err_t tc_lock_mutex_destroy(tc_lock_mutex_t *m)
{
    return tc_err_from_errno(pthread_mutex_destroy(&m->m));
}

/* @p rc: what pthread_mutex_(try)lock returned (an errno value). */
static tc_err_t tc_lock_mutex_recover(const tc_rwlock_t *lk, tc_lock_mutex_t *m, int rc,
                                      const char *what, int x)
{
    if (rc != EOWNERDEAD)
        return tc_err_from_errno(rc);
    /* We hold the mutex; without this, unlocking it would make it unusable
     * (ENOTRECOVERABLE) for everyone. */
    int crc = pthread_mutex_consistent(&m->m);
    if (crc != 0) {
        pthread_mutex_unlock(&m->m);
        return tc_err_from_errno(crc);
    }
    tc_lock_log(lk, "%s %d: previous holder died, mutex recovered (data may be inconsistent)", what,
                x);
    return tc_err(TC_ERR_OWNERDEAD);
}

tc_err_t tc_lock_mutex_take(const tc_rwlock_t *lk, tc_lock_mutex_t *m, const char *what, int x)
{
    return tc_lock_mutex_recover(lk, m, pthread_mutex_lock(&m->m), what, x);
}

tc_err_t tc_lock_mutex_try(const tc_rwlock_t *lk, tc_lock_mutex_t *m, const char *what, int x)
{
    return tc_lock_mutex_recover(lk, m, pthread_mutex_trylock(&m->m), what, x);
}
