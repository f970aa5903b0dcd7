/* "n-mcs": one two-party MCS lock per reader (paper 004, proposed).
 *
 * Lock x is shared by reader x (record 1, the "client") and the writer (record 2,
 * the "server"); head = 0 when free, else the index of the tail record. Each record
 * is {blocked, next}. As the paper specifies:
 *   Acquire: rec.next = 0; prev = swap(head, me); if prev == 0: done;
 *            rec.blocked = 1; record[prev].next = me; while rec.blocked: wait.
 *   Release: if CAS(head, me, 0): done; while rec.next == 0: wait;
 *            record[rec.next].blocked = 0.
 * One atomic read-modify-write per acquire (swap) and per release (CAS), FIFO
 * hand-over: a party that enqueued while the other held the lock gets it before the
 * holder can take it again. The writer takes the N locks in index order.
 *
 * Layout: per reader three lines: head (touched by both parties' RMWs, and the count
 * of the parties asleep on this lock), the client record (written by the server: next
 * and the hand-over; waited on by the client), the server record (the mirror image).
 * A party therefore waits on a line only the other party writes, once.
 *
 * Every "wait" above is base/wait.h's tc_wait_word(): spin opts.spin_polls polls,
 * then sleep on a shared futex on the record's word; the other party writes the word
 * with tc_wait_publish_u32(), which makes a FUTEX_WAKE only when the lock's sleepers
 * count is nonzero (uncontended: one load of the head line, no system call).
 *
 * Additions:
 * - A writer gate (test-and-test-and-set word on its own line) so several writers
 *   exclude each other: the two-record lock has one server record. Uncontended it
 *   costs one CAS and one store per write.
 * - Timeouts. An MCS waiter cannot leave the queue (its predecessor will hand the lock
 *   to it later), so a wait that exceeds opts.timeout_s -- the holder or the
 *   successor died, or stalled that long -- marks the whole lock broken, logs, and
 *   returns TC_ERR_TIMEOUT; every later call and every other waiter (at its next clock
 *   check) returns TC_ERR_NOTRECOVERABLE. The owner of the memory re-initialises it. */
#include "lock_internal.h"

enum { TC_NMCS_FREE = 0, TC_NMCS_CLIENT = 1, TC_NMCS_SERVER = 2 };

typedef struct tc_nmcs_rec {
    _Alignas(TC_CACHELINE) tc_lock_atomic_u32_t blocked;
    tc_lock_atomic_u32_t next;
} tc_nmcs_rec_t;

/* The head (of a reader's lock, or the writers' gate) and the count of the parties
 * asleep on a word of that lock (its records, or the gate). The line is already
 * written by every party of the lock (its swap / CAS), so the count adds no writer;
 * a publisher reads it right after its own RMW or store on the lock. */
typedef struct tc_nmcs_head {
    _Alignas(TC_CACHELINE) tc_lock_atomic_u32_t head;
    tc_atomic_u64_t sleepers;
} tc_nmcs_head_t;
_Static_assert(sizeof(tc_nmcs_head_t) == TC_CACHELINE, "head and sleepers on one line");

typedef struct tc_nmcs_lock {
    tc_nmcs_head_t h;
    tc_nmcs_rec_t rec[2]; /* rec[TC_NMCS_CLIENT - 1], rec[TC_NMCS_SERVER - 1] */
} tc_nmcs_lock_t;
_Static_assert(sizeof(tc_nmcs_lock_t) == 3 * TC_CACHELINE, "three lines per reader");

typedef struct tc_nmcs {
    tc_nmcs_head_t gate; /* writers' gate: 0 free, 1 held */
    tc_nmcs_lock_t q[];  /* nreaders */
} tc_nmcs_t;

static tc_nmcs_t *tc_nmcs(const tc_rwlock_t *lk)
{
    return tc_lock_body(lk);
}

static size_t tc_nmcs_body_size(int nreaders)
{
    return sizeof(tc_nmcs_t) + (size_t)nreaders * sizeof(tc_nmcs_lock_t);
}

static tc_err_t tc_nmcs_init(tc_rwlock_t *lk)
{
    /* tc_rwlock_init() zeroed the memory: every head free, gate open. */
    (void)lk;
    return TC_OK;
}

static tc_err_t tc_nmcs_destroy(tc_rwlock_t *lk)
{
    (void)lk;
    return TC_OK;
}

static int tc_nmcs_broken(const tc_rwlock_t *lk)
{
    /* relaxed: a stop flag, it publishes nothing. */
    return tc_lock_load_relaxed(&tc_lock_hdr(lk)->broken) != 0;
}

static tc_err_t tc_nmcs_give_up(const tc_rwlock_t *lk, tc_err_t rc, const char *what, int x)
{
    if (tc_err_kind(rc) == TC_ERR_TIMEOUT) {
        tc_lock_store_relaxed(&tc_lock_hdr(lk)->broken, 1);
        tc_lock_log(lk,
                    "%s %d: gave up after %.3g s (the other party died or stalled); lock "
                    "marked broken",
                    what, x, lk->opts.timeout_s);
    }
    return rc;
}

static tc_err_t tc_nmcs_acquire(tc_rwlock_t *lk, int x, uint32_t me)
{
    tc_nmcs_lock_t *q = &tc_nmcs(lk)->q[x];
    tc_nmcs_rec_t *r = &q->rec[me - 1];
    if (tc_nmcs_broken(lk))
        return tc_err(TC_ERR_NOTRECOVERABLE);
    /* relaxed: published to our successor by the release half of the swap below. */
    tc_lock_store_relaxed(&r->next, 0);
    /* acq_rel: acquire pairs with the release CAS in tc_nmcs_release() (lock handed
     * back through head = 0); release pairs with the successor's swap, so its store
     * to our `next` is ordered after our reset above. */
    uint32_t prev = tc_lock_exchange_acq_rel(&q->h.head, me);
    if (prev == TC_NMCS_FREE)
        return TC_OK;
    /* relaxed: ordered before the predecessor's hand-over by the release below. */
    tc_lock_store_relaxed(&r->blocked, 1);
    /* release: pairs with the acquire load of `next` in the predecessor's
     * tc_nmcs_release() (the helper's acquire in tc_wait_word()); it then clears our
     * `blocked` after our store of 1. Published through the helper: the predecessor
     * may sleep on `next`. */
    tc_wait_publish_u32(&q->rec[prev - 1].next, me, &q->h.sleepers);
    tc_lock_wait_t w;
    tc_lock_wait_init(&w, lk, &q->h.sleepers, tc_lock_check_broken, lk,
                      me == TC_NMCS_CLIENT ? "lock n-mcs: reader waits for the hand-over"
                                           : "lock n-mcs: writer waits for the hand-over",
                      x);
    /* acquire (in tc_wait_word()): pairs with the release of blocked = 0 in the
     * predecessor's tc_nmcs_release() (tc_wait_publish_u32()): its critical section
     * happens before ours. */
    tc_err_t rc = tc_wait_word(&w.ww, &r->blocked, TC_WAIT_UNTIL_EQ, 0, NULL);
    if (rc != TC_OK)
        return tc_nmcs_give_up(lk, rc, me == TC_NMCS_CLIENT ? "reader" : "writer on lock", x);
    return TC_OK;
}

static tc_err_t tc_nmcs_release(tc_rwlock_t *lk, int x, uint32_t me)
{
    tc_nmcs_lock_t *q = &tc_nmcs(lk)->q[x];
    tc_nmcs_rec_t *r = &q->rec[me - 1];
    if (tc_nmcs_broken(lk))
        return tc_err(TC_ERR_NOTRECOVERABLE);
    /* release: pairs with the acquire half of the next acquirer's swap. */
    if (tc_lock_cas_release(&q->h.head, me, TC_NMCS_FREE))
        return TC_OK;
    /* A successor swapped head; wait until it links itself. */
    tc_lock_wait_t w;
    tc_lock_wait_init(&w, lk, &q->h.sleepers, tc_lock_check_broken, lk,
                      me == TC_NMCS_CLIENT ? "lock n-mcs: reader waits for its successor"
                                           : "lock n-mcs: writer waits for its successor",
                      x);
    uint32_t nx;
    /* acquire (in tc_wait_word()): pairs with the successor's release of our `next`
     * (tc_wait_publish_u32() in tc_nmcs_acquire()). */
    tc_err_t rc = tc_wait_word(&w.ww, &r->next, TC_WAIT_UNTIL_NE, TC_NMCS_FREE, &nx);
    if (rc != TC_OK)
        return tc_nmcs_give_up(lk, rc,
                               me == TC_NMCS_CLIENT ? "reader (release)" : "writer (release)", x);
    /* release: pairs with the successor's acquire wait on `blocked` (tc_wait_word()
     * in tc_nmcs_acquire()); hands over our critical section, and wakes the successor
     * if it sleeps. */
    tc_wait_publish_u32(&q->rec[nx - 1].blocked, 0, &q->h.sleepers);
    return TC_OK;
}

static tc_err_t tc_nmcs_rdlock(tc_rwlock_t *lk, int x)
{
    return tc_nmcs_acquire(lk, x, TC_NMCS_CLIENT);
}

static tc_err_t tc_nmcs_rdunlock(tc_rwlock_t *lk, int x)
{
    return tc_nmcs_release(lk, x, TC_NMCS_CLIENT);
}

static tc_err_t tc_nmcs_wrlock(tc_rwlock_t *lk)
{
    tc_nmcs_head_t *g = &tc_nmcs(lk)->gate;
    tc_lock_atomic_u32_t *gate = &g->head;
    tc_lock_wait_t w;
    int waiting = 0; /* w is set up at the first wait, off the uncontended path */
    if (tc_nmcs_broken(lk))
        return tc_err(TC_ERR_NOTRECOVERABLE);
    /* acquire: pairs with the release opening the gate in tc_nmcs_wrunlock(). The
     * relaxed pre-check keeps waiting writers off the line (test-and-test-and-set);
     * while the gate is closed the helper waits for it to read 0 (its acquire there
     * pairs with the same release), then the CAS is tried again. One waiter for all
     * the tries: the timeout runs from the first. */
    while (tc_lock_load_relaxed(gate) != 0 || !tc_lock_cas_acquire(gate, 0, 1)) {
        if (!waiting) {
            tc_lock_wait_init(&w, lk, &g->sleepers, tc_lock_check_broken, lk,
                              "lock n-mcs: writer waits for the writers' gate", 0);
            waiting = 1;
        }
        tc_err_t rc = tc_wait_word(&w.ww, gate, TC_WAIT_UNTIL_EQ, 0, NULL);
        if (rc != TC_OK)
            return tc_nmcs_give_up(lk, rc, "writer gate", 0);
    }
    for (int i = 0; i < lk->nreaders; i++) {
        tc_err_t rc = tc_nmcs_acquire(lk, i, TC_NMCS_SERVER);
        if (rc != TC_OK)
            return rc; /* the lock is broken now: nothing to hand back */
    }
    return TC_OK;
}

static tc_err_t tc_nmcs_wrunlock(tc_rwlock_t *lk)
{
    for (int i = lk->nreaders - 1; i >= 0; i--) {
        tc_err_t rc = tc_nmcs_release(lk, i, TC_NMCS_SERVER);
        if (rc != TC_OK)
            return rc;
    }
    /* release: pairs with the acquire CAS (and the helper's acquire wait) of the next
     * writer in tc_nmcs_wrlock(); wakes it if it sleeps on the gate. */
    tc_nmcs_head_t *g = &tc_nmcs(lk)->gate;
    tc_wait_publish_u32(&g->head, 0, &g->sleepers);
    return TC_OK;
}

int tc_rwlock_nmcs_tail(const tc_rwlock_t *lk, int x)
{
    if (lk->scheme != TC_LOCK_SCHEME_N_MCS || x < 0 || x >= lk->nreaders)
        return -1;
    /* relaxed: a snapshot for tests; whoever acts on it synchronises otherwise. */
    return (int)tc_lock_load_relaxed(&tc_nmcs(lk)->q[x].h.head);
}

const tc_lock_ops_t tc_lock_ops_n_mcs = {
    .name = "n-mcs",
    .body_size = tc_nmcs_body_size,
    .init = tc_nmcs_init,
    .destroy = tc_nmcs_destroy,
    .rdlock = tc_nmcs_rdlock,
    .rdunlock = tc_nmcs_rdunlock,
    .wrlock = tc_nmcs_wrlock,
    .wrunlock = tc_nmcs_wrunlock,
};
