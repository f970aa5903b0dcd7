/* "1n-mutex" and "2n-mutex" (paper 004): per-reader robust process-shared mutexes.
 *
 * 1N-mutex: reader x takes its mutex LP_x; the writer takes all N in index order.
 * 2N-mutex (what OpenPMIx uses): per reader a signal mutex LS_x and a data mutex LP_x.
 *   Reader x: lock(LS_x); lock(LP_x); unlock(LS_x); read; unlock(LP_x).
 *   Writer: lock all LS_i (readers hold them only briefly), then all LP_i; holding the
 *   LS_i keeps new readers from queueing on LP_i ahead of it (glibc mutexes are not
 *   FIFO).
 * Unlock (left implicit by the paper): the writer releases in the reverse order of
 * acquisition, LP_N-1..LP_0 then LS_N-1..LS_0; any order is correct (each reader needs
 * only its own pair), reverse order releases the LP_i while the LS_i still hold new
 * readers back, so every LP_i is free by the time its reader gets past LS_i.
 *
 * Index-ordered acquisition also makes several writers exclude each other without
 * deadlock. A holder that dies leaves EOWNERDEAD on its mutexes: the next taker makes
 * each consistent (tc_lock_mutex_take) and the caller sees EOWNERDEAD once. */
#include "lock_internal.h"

/* Initialise m[0..n-1]; stops at the first failure. */
static tc_err_t tc_lock_mutex_init_all(tc_lock_mutex_t *m, int n)
{
    for (int i = 0; i < n; i++) {
        tc_err_t rc = tc_lock_mutex_init(&m[i]);
        if (rc != TC_OK)
            return rc;
    }
    return TC_OK;
}

/* Destroy m[0..n-1], all of them; the worst code. */
static tc_err_t tc_lock_mutex_destroy_all(tc_lock_mutex_t *m, int n)
{
    tc_err_t acc = TC_OK;
    for (int i = 0; i < n; i++)
        acc = tc_lock_rc_merge(acc, tc_lock_mutex_destroy(&m[i]));
    return acc;
}

/* ---- 1N-mutex ------------------------------------------------------------ */

static tc_lock_mutex_t *tc_lock_1n_lp(const tc_rwlock_t *lk)
{
    return tc_lock_body(lk);
}

static size_t tc_lock_1n_body_size(int nreaders)
{
    return (size_t)nreaders * sizeof(tc_lock_mutex_t);
}

static tc_err_t tc_lock_1n_init(tc_rwlock_t *lk)
{
    return tc_lock_mutex_init_all(tc_lock_1n_lp(lk), lk->nreaders);
}

static tc_err_t tc_lock_1n_destroy(tc_rwlock_t *lk)
{
    return tc_lock_mutex_destroy_all(tc_lock_1n_lp(lk), lk->nreaders);
}

static tc_err_t tc_lock_1n_rdlock(tc_rwlock_t *lk, int x)
{
    return tc_lock_mutex_take(lk, &tc_lock_1n_lp(lk)[x], "reader mutex", x);
}

static tc_err_t tc_lock_1n_rdunlock(tc_rwlock_t *lk, int x)
{
    return tc_lock_mutex_give(&tc_lock_1n_lp(lk)[x]);
}

/* Take m[0..n-1] (stride in elements); on a hard error release those taken. */
static tc_err_t tc_lock_mutex_take_all(const tc_rwlock_t *lk, tc_lock_mutex_t *m, int n, int stride,
                                       const char *what)
{
    tc_err_t acc = TC_OK;
    for (int i = 0; i < n; i++) {
        tc_err_t rc = tc_lock_mutex_take(lk, &m[(size_t)i * stride], what, i);
        if (rc != TC_OK && tc_err_kind(rc) != TC_ERR_OWNERDEAD) {
            while (i-- > 0)
                tc_lock_mutex_give(&m[(size_t)i * stride]);
            return rc;
        }
        acc = tc_lock_rc_merge(acc, rc);
    }
    return acc;
}

static tc_err_t tc_lock_mutex_give_all(tc_lock_mutex_t *m, int n, int stride)
{
    tc_err_t acc = TC_OK;
    for (int i = n - 1; i >= 0; i--)
        acc = tc_lock_rc_merge(acc, tc_lock_mutex_give(&m[(size_t)i * stride]));
    return acc;
}

static tc_err_t tc_lock_1n_wrlock(tc_rwlock_t *lk)
{
    return tc_lock_mutex_take_all(lk, tc_lock_1n_lp(lk), lk->nreaders, 1, "writer: mutex");
}

static tc_err_t tc_lock_1n_wrunlock(tc_rwlock_t *lk)
{
    return tc_lock_mutex_give_all(tc_lock_1n_lp(lk), lk->nreaders, 1);
}

const tc_lock_ops_t tc_lock_ops_1n_mutex = {
    .name = "1n-mutex",
    .body_size = tc_lock_1n_body_size,
    .init = tc_lock_1n_init,
    .destroy = tc_lock_1n_destroy,
    .rdlock = tc_lock_1n_rdlock,
    .rdunlock = tc_lock_1n_rdunlock,
    .wrlock = tc_lock_1n_wrlock,
    .wrunlock = tc_lock_1n_wrunlock,
};

/* ---- 2N-mutex ------------------------------------------------------------ */

/* A flat array of 2N mutexes, each on its own line: LS_x = m[2x], LP_x = m[2x + 1]. */
static tc_lock_mutex_t *tc_lock_2n_m(const tc_rwlock_t *lk)
{
    return tc_lock_body(lk);
}

static size_t tc_lock_2n_body_size(int nreaders)
{
    return 2 * (size_t)nreaders * sizeof(tc_lock_mutex_t);
}

static tc_err_t tc_lock_2n_init(tc_rwlock_t *lk)
{
    return tc_lock_mutex_init_all(tc_lock_2n_m(lk), 2 * lk->nreaders);
}

static tc_err_t tc_lock_2n_destroy(tc_rwlock_t *lk)
{
    return tc_lock_mutex_destroy_all(tc_lock_2n_m(lk), 2 * lk->nreaders);
}

static tc_err_t tc_lock_2n_rdlock(tc_rwlock_t *lk, int x)
{
    tc_lock_mutex_t *ls = &tc_lock_2n_m(lk)[2 * x], *lp = ls + 1;
    tc_err_t rc = tc_lock_mutex_take(lk, ls, "reader signal mutex", x);
    if (rc != TC_OK && tc_err_kind(rc) != TC_ERR_OWNERDEAD)
        return rc;
    tc_err_t rc2 = tc_lock_mutex_take(lk, lp, "reader data mutex", x);
    tc_lock_mutex_give(ls);
    return tc_lock_rc_merge(rc, rc2);
}

static tc_err_t tc_lock_2n_rdunlock(tc_rwlock_t *lk, int x)
{
    return tc_lock_mutex_give(&tc_lock_2n_m(lk)[2 * x + 1]);
}

static tc_err_t tc_lock_2n_wrlock(tc_rwlock_t *lk)
{
    tc_lock_mutex_t *m = tc_lock_2n_m(lk);
    const int n = lk->nreaders;
    tc_err_t rc = tc_lock_mutex_take_all(lk, m, n, 2, "writer: signal mutex");
    if (rc != TC_OK && tc_err_kind(rc) != TC_ERR_OWNERDEAD)
        return rc;
    tc_err_t rc2 = tc_lock_mutex_take_all(lk, m + 1, n, 2, "writer: data mutex");
    if (rc2 != TC_OK && tc_err_kind(rc2) != TC_ERR_OWNERDEAD) {
        tc_lock_mutex_give_all(m, n, 2);
        return rc2;
    }
    return tc_lock_rc_merge(rc, rc2);
}

static tc_err_t tc_lock_2n_wrunlock(tc_rwlock_t *lk)
{
    tc_lock_mutex_t *m = tc_lock_2n_m(lk);
    tc_err_t rc = tc_lock_mutex_give_all(m + 1, lk->nreaders, 2);
    return tc_lock_rc_merge(rc, tc_lock_mutex_give_all(m, lk->nreaders, 2));
}

const tc_lock_ops_t tc_lock_ops_2n_mutex = {
    .name = "2n-mutex",
    .body_size = tc_lock_2n_body_size,
    .init = tc_lock_2n_init,
    .destroy = tc_lock_2n_destroy,
    .rdlock = tc_lock_2n_rdlock,
    .rdunlock = tc_lock_2n_rdunlock,
    .wrlock = tc_lock_2n_wrlock,
    .wrunlock = tc_lock_2n_wrunlock,
};
