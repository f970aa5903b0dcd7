/* The node store: see store.h. */
#include "store.h"

#include <errno.h>
#include <string.h>

#include "base/log.h"
#include "segment.h"

#define TC_STORE_MAGIC     0x53544f5245763031ULL /* "STOREv01" */
#define TC_STORE_KEY_BYTES (TC_SHM_STORE_KEY_MAX + 1)

/* The area's first line. Written by the leader under the writer lock, except
 * `broken`, which any process may raise without the lock. */
typedef struct tc_store_ctl {
    uint64_t magic;         /* TC_STORE_MAGIC once the creator has initialised the lock */
    tc_atomic_u64_t seq;    /* odd while the leader changes the area */
    tc_atomic_u64_t broken; /* non-zero: the store is unusable, in every process */
    uint64_t used;          /* bytes of records, from the line after this one */
    uint64_t nrec;
} tc_store_ctl_t;
_Static_assert(sizeof(tc_store_ctl_t) <= TC_CACHELINE, "control fits in one line");

/* A record's header line; the value follows on the next line. */
typedef struct tc_store_rec {
    char key[TC_STORE_KEY_BYTES];
    uint64_t version; /* puts of this key so far */
    uint64_t len;     /* value bytes */
    uint64_t cap;     /* value bytes the record has room for (line multiple) */
    uint64_t sum;     /* tc_shm_store_sum() of the value */
} tc_store_rec_t;
_Static_assert(sizeof(tc_store_rec_t) <= TC_CACHELINE, "record header fits in one line");
_Static_assert(TC_SHM_STORE_BYTES % TC_CACHELINE == 0, "area is whole lines");

static tc_store_ctl_t *tc_shm_store_ctl(const tc_shm_comm_t *s)
{
    return (tc_store_ctl_t *)(void *)(s->base + s->layout.store_off);
}

static char *tc_shm_store_records(const tc_shm_comm_t *s)
{
    return s->base + s->layout.store_off + TC_CACHELINE;
}

/* FNV-1a over the length and the bytes: catches a torn or half-written value
 * (not an adversary). */
static uint64_t tc_shm_store_sum(const void *buf, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ULL ^ (uint64_t)len;
    const unsigned char *b = buf;
    for (size_t i = 0; i < len; i++)
        h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

size_t tc_shm_store_lock_bytes(int p)
{
    size_t max = 0;
    for (int k = 0; k < TC_LOCK_SCHEME_LAST; k++) {
        size_t b = tc_rwlock_size((tc_lock_scheme_t)k, p);
        if (b > max)
            max = b;
    }
    return max;
}

/* The lock module's messages (a wait given up, a dead holder recovered). */
static void tc_shm_store_lock_log(void *arg, const char *msg)
{
    const tc_shm_comm_t *s = arg;
    tc_log(TC_LOG_ERROR, "%s: node store of segment %s: %s", s->wait ? s->wait->comm_name : "?",
           s->name, msg);
}

static tc_lock_opts_t tc_shm_store_opts(tc_shm_comm_t *s)
{
    tc_lock_opts_t o = {
        .timeout_s = s->wait ? s->wait->timeout_s : 0.0,
        .spin_polls = s->wait ? s->wait->spin_polls : 100,
        .log = tc_shm_store_lock_log,
        .log_arg = s,
        .wait_policy = s->wait ? s->wait->policy : TC_WAIT_AUTO,
    };
    return o;
}

/* Mark the store unusable everywhere, say why (@p rc) once. Returns
 * TC_ERR_NOTRECOVERABLE with @p rc's cause. */
static tc_err_t tc_shm_store_fail(tc_shm_comm_t *s, const char *what, tc_err_t rc)
{
    /* relaxed: a stop flag; nothing is published through it. */
    tc_store_relaxed_u64(&tc_shm_store_ctl(s)->broken, 1);
    s->store_ok = 0;
    if (!s->store_logged) {
        char why[128];
        s->store_logged = 1;
        tc_log(TC_LOG_ERROR,
               "%s: node store of segment %s is unusable (%s: %s); each process computes "
               "or loads its values itself",
               s->wait ? s->wait->comm_name : "?", s->name, what,
               tc_err_string(rc, why, sizeof why));
    }
    return tc_err_errno(TC_ERR_NOTRECOVERABLE, tc_err_cause(rc));
}

void tc_shm_store_create(tc_shm_comm_t *s, tc_lock_scheme_t scheme)
{
    s->store_ok = 0;
    if (s->layout.store_bytes == 0)
        return;
    memset(s->base + s->layout.store_off, 0, s->layout.store_bytes);
    tc_lock_opts_t opts = tc_shm_store_opts(s);
    tc_err_t rc =
        tc_rwlock_init(&s->store_lock, s->base + s->layout.store_lock_off,
                       s->layout.store_off - s->layout.store_lock_off, scheme, s->p, &opts);
    if (rc != TC_OK) {
        char why[128];
        /* magic stays 0: the others find no store when they attach. */
        s->store_lock.mem = NULL;
        tc_log(TC_LOG_INFO, "segment %s: node store lock (scheme %d) not initialised: %s", s->name,
               (int)scheme, tc_err_string(rc, why, sizeof why));
        return;
    }
    /* Published to the others by the barrier between creation and attach. */
    tc_shm_store_ctl(s)->magic = TC_STORE_MAGIC;
    s->store_ok = 1;
}

void tc_shm_store_attach(tc_shm_comm_t *s)
{
    if (s->store_lock.mem != NULL || s->layout.store_bytes == 0)
        return;                            /* the creator, or no store */
    tc_err_t rc = tc_err(TC_ERR_NOTFOUND); /* the creator made none */
    tc_lock_opts_t opts = tc_shm_store_opts(s);
    if (tc_shm_store_ctl(s)->magic != TC_STORE_MAGIC ||
        (rc = tc_rwlock_attach(&s->store_lock, s->base + s->layout.store_lock_off,
                               s->layout.store_off - s->layout.store_lock_off, &opts)) != TC_OK) {
        char why[128];
        s->store_lock.mem = NULL;
        tc_log(TC_LOG_INFO, "segment %s: no node store (%s)", s->name,
               tc_err_string(rc, why, sizeof why));
        return;
    }
    s->store_ok = 1;
}

void tc_shm_store_detach(tc_shm_comm_t *s)
{
    /* Nothing to destroy: the lock holds no kernel resources, and the others may
     * still use it until they unmap. */
    s->store_lock.mem = NULL;
    s->store_ok = 0;
}

int tc_shm_store_usable(const tc_shm_comm_t *s)
{
    /* relaxed: see tc_shm_store_fail(). */
    return s && s->store_ok && tc_load_relaxed_u64(&tc_shm_store_ctl(s)->broken) == 0;
}

static tc_err_t tc_shm_store_key_check(const char *key)
{
    if (key == NULL)
        return tc_err(TC_ERR_ARG);
    size_t n = strnlen(key, TC_STORE_KEY_BYTES);
    return n == 0 || n > TC_SHM_STORE_KEY_MAX ? tc_err(TC_ERR_ARG) : TC_OK;
}

/* The record of @p key, or NULL; *off gets its offset among the records. */
static tc_store_rec_t *tc_shm_store_find(const tc_shm_comm_t *s, const char *key, size_t *off)
{
    const tc_store_ctl_t *c = tc_shm_store_ctl(s);
    char *recs = tc_shm_store_records(s);
    size_t o = 0;
    for (uint64_t i = 0; i < c->nrec && o < c->used; i++) {
        tc_store_rec_t *r = (tc_store_rec_t *)(void *)(recs + o);
        if (strncmp(r->key, key, TC_STORE_KEY_BYTES) == 0) {
            *off = o;
            return r;
        }
        o += TC_CACHELINE + r->cap;
    }
    return NULL;
}

/* After an acquisition (TC_OK or TC_ERR_OWNERDEAD): is the area consistent? A
 * dead holder is harmless if it was a reader; a writer that died between the
 * two sequence increments leaves the count odd. */
static tc_err_t tc_shm_store_check(tc_shm_comm_t *s)
{
    tc_store_ctl_t *c = tc_shm_store_ctl(s);
    /* relaxed: see tc_shm_store_fail(). */
    if (tc_load_relaxed_u64(&c->broken)) {
        s->store_ok = 0;
        return tc_err(TC_ERR_NOTRECOVERABLE);
    }
    /* relaxed: the lock orders it (we hold it). */
    if (tc_load_relaxed_u64(&c->seq) & 1)
        return tc_shm_store_fail(s, "the leader died while writing it", tc_err_sys(EIO));
    return TC_OK;
}

tc_err_t tc_shm_store_put(tc_shm_comm_t *s, const char *key, const void *val, size_t len)
{
    if (tc_shm_store_key_check(key) != TC_OK || (len > 0 && val == NULL))
        return tc_err(TC_ERR_ARG);
    if (s && s->rank != 0)
        return tc_err_errno(TC_ERR_ARG, EPERM); /* only the leader writes */
    if (!tc_shm_store_usable(s))
        return tc_err(TC_ERR_NOTRECOVERABLE);
    if (len > TC_SHM_STORE_CAPACITY || TC_SHM_STORE_RECORD_BYTES(len) > TC_SHM_STORE_CAPACITY)
        return tc_err_errno(TC_ERR_LIMIT, ENOSPC);
    tc_err_t rc = tc_rwlock_wrlock(&s->store_lock);
    if (rc != TC_OK && tc_err_kind(rc) != TC_ERR_OWNERDEAD)
        return tc_shm_store_fail(s, "writer lock", rc);
    if ((rc = tc_shm_store_check(s)) != TC_OK)
        goto fn_unlock;

    tc_store_ctl_t *c = tc_shm_store_ctl(s);
    char *recs = tc_shm_store_records(s);
    size_t off = 0;
    tc_store_rec_t *r = tc_shm_store_find(s, key, &off);
    const size_t need = TC_SHM_STORE_RECORD_BYTES(len);
    uint64_t version = r ? r->version + 1 : 1;
    int in_place = r && len <= r->cap;
    if (!in_place && c->used - (r ? TC_CACHELINE + r->cap : 0) + need > TC_SHM_STORE_CAPACITY) {
        rc = tc_err_errno(TC_ERR_LIMIT, ENOSPC);
        goto fn_unlock;
    }
    /* relaxed: ordered for readers by the writer lock (they hold theirs while
     * they look); odd until the area is consistent again. */
    tc_store_relaxed_u64(&c->seq, tc_load_relaxed_u64(&c->seq) + 1);
    if (!in_place) {
        if (r) {
            /* Slide the later records over this one: no holes, no lost space. */
            size_t rbytes = TC_CACHELINE + r->cap;
            memmove(recs + off, recs + off + rbytes, c->used - off - rbytes);
            c->used -= rbytes;
            c->nrec--;
        }
        r = (tc_store_rec_t *)(void *)(recs + c->used);
        memset(r, 0, TC_CACHELINE);
        memcpy(r->key, key, strlen(key)); /* checked: at most KEY_MAX; NUL from memset */
        r->cap = need - TC_CACHELINE;
        c->used += need;
        c->nrec++;
    }
    if (len > 0)
        memcpy((char *)r + TC_CACHELINE, val, len);
    r->len = len;
    r->version = version;
    r->sum = tc_shm_store_sum(val, len);
    tc_store_relaxed_u64(&c->seq, tc_load_relaxed_u64(&c->seq) + 1);
    rc = TC_OK;
fn_unlock:;
    tc_err_t urc = tc_rwlock_wrunlock(&s->store_lock);
    if (urc != TC_OK)
        return tc_shm_store_fail(s, "writer unlock", urc);
    return rc;
}

tc_err_t tc_shm_store_get(tc_shm_comm_t *s, const char *key, void *buf, size_t cap, size_t *len,
                          uint64_t *version)
{
    if (tc_shm_store_key_check(key) != TC_OK || (cap > 0 && buf == NULL))
        return tc_err(TC_ERR_ARG);
    if (!tc_shm_store_usable(s))
        return tc_err(TC_ERR_NOTRECOVERABLE);
    tc_err_t rc = tc_rwlock_rdlock(&s->store_lock, s->rank);
    if (rc != TC_OK && tc_err_kind(rc) != TC_ERR_OWNERDEAD)
        return tc_shm_store_fail(s, "reader lock", rc);
    if ((rc = tc_shm_store_check(s)) != TC_OK)
        goto fn_unlock;
    size_t off;
    const tc_store_rec_t *r = tc_shm_store_find(s, key, &off);
    if (!r) {
        rc = tc_err(TC_ERR_NOTFOUND);
        goto fn_unlock;
    }
    if (len)
        *len = r->len;
    if (version)
        *version = r->version;
    if (r->len > cap) {
        rc = tc_err_errno(TC_ERR_BUFFER, ENOBUFS);
        goto fn_unlock;
    }
    if (r->len > 0)
        memcpy(buf, (const char *)r + TC_CACHELINE, r->len);
    /* Checked on the copy: what the caller gets is what the leader put. */
    if (tc_shm_store_sum(buf, r->len) != r->sum) {
        rc = tc_shm_store_fail(s, "checksum mismatch", tc_err_sys(EIO));
        goto fn_unlock;
    }
    rc = TC_OK;
fn_unlock:;
    tc_err_t urc = tc_rwlock_rdunlock(&s->store_lock, s->rank);
    if (urc != TC_OK)
        return tc_shm_store_fail(s, "reader unlock", urc);
    return rc;
}

tc_err_t tc_shm_store_get_or_put(tc_shm_comm_t *s, MPI_Comm node_comm, const char *key, void *buf,
                                 size_t len, tc_shm_store_compute_fn compute, void *arg,
                                 int *from_store)
{
    if (from_store)
        *from_store = 0;
    if (s == NULL || node_comm == MPI_COMM_NULL)
        return compute(buf, len, arg);
    int rank, stored = 0;
    tc_err_t rc = TC_OK;
    PMPI_Comm_rank(node_comm, &rank);
    if (rank == 0) {
        rc = compute(buf, len, arg);
        stored = rc == TC_OK && tc_shm_store_put(s, key, buf, len) == TC_OK;
    }
    /* Tells the others whether to look, and that the put is over (the reader
     * lock then orders the value's bytes). */
    int mrc = PMPI_Bcast(&stored, 1, MPI_INT, 0, node_comm);
    if (mrc != MPI_SUCCESS)
        return mrc; /* an MPI code is a tc_err_t */
    if (rank == 0)
        return rc;
    size_t got = 0;
    if (stored && tc_shm_store_get(s, key, buf, len, &got, NULL) == TC_OK && got == len) {
        if (from_store)
            *from_store = 1;
        return TC_OK;
    }
    return compute(buf, len, arg);
}
