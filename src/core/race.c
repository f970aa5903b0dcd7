/* The library's path against the MPI's own on large messages (race.h). */
#include "race.h"

#include <string.h>
#include <time.h>

#include "base/atomics.h"
#include "base/log.h"
#include "base/median3.h"
#include "shm/layout.h"
#include "shm/segment.h"

_Static_assert(TC_RACE_WINDOW == TC_MEDIAN3_WINDOW, "the estimate is tc_median3");
_Static_assert(TC_RACE_LAG <= TC_SHM_RACE_RING, "a ring slot is reused only once read (race.h)");
_Static_assert(TC_RACE_FAR_CONFIRM >= 1, "the decision counts as the first");

double (*tc_race_test_time)(const tc_race_call_t *call, double ns);
void (*tc_race_test_chosen)(const tc_race_call_t *call);
_Static_assert(TC_RACE_EXPLORE >= TC_RACE_WINDOW, "the first decision has a full window");
_Static_assert(TC_RACE_PROBE % TC_RACE_MEASURE == 0 && TC_RACE_PROBE_FAR % TC_RACE_MEASURE == 0,
               "every probe is timed");

void tc_race_init(tc_race_t *r, size_t min)
{
    memset(r, 0, sizeof *r);
    r->min = min;
    for (int k = 0; k < TC_RACE_KINDS; k++)
        for (int op = 0; op < TC_OP_LAST; op++)
            for (int c = 0; c < TC_RACE_CLASSES; c++)
                r->cls[k][op][c].last_best = -1;
}

int tc_race_class(size_t nbytes)
{
    int cls = 0;
    while (cls + 1 < TC_RACE_CLASSES && (nbytes >> (TC_RACE_CLASS_LOG0 + cls + 1)) != 0)
        cls++;
    return cls;
}

double tc_race_estimate_kind(const tc_race_t *r, tc_race_kind_t kind, tc_op_t op, int cls,
                             tc_race_impl_t impl)
{
    const tc_race_est_t *e = &r->cls[kind][op][cls].est[impl];
    return tc_median3(e->ns_per_byte, e->n);
}

double tc_race_estimate(const tc_race_t *r, tc_op_t op, int cls, tc_race_impl_t impl)
{
    return tc_race_estimate_kind(r, TC_RACE_KIND_PMPI, op, cls, impl);
}

/* The two implementations of a kind, for the logs. */
static const char *const tc_race_impl_names[TC_RACE_KINDS][TC_RACE_IMPL_LAST] = {
    {"the library's path", "the MPI's own"},
    {"the library's default fragments", "its wide fragments"}};

/* The probe interval once the other was confirmed far slower, @p ratio
 * times the one in use (race.h): TC_RACE_PROBE_FAR, doubled while a probe
 * would cost more than 1/TC_RACE_PROBE_SHARE of the calls between two.
 * A power of two times TC_RACE_PROBE_FAR, so a multiple of
 * TC_RACE_MEASURE; the same on every process (the estimates are). */
static unsigned tc_race_far_interval(double ratio)
{
    unsigned interval = TC_RACE_PROBE_FAR;
    while (interval < TC_RACE_PROBE_MAX && ratio * TC_RACE_PROBE_SHARE > (double)interval)
        interval *= 2;
    return interval;
}

/* A raced call of @p kind: the decision (race.h), both kinds alike. */
static tc_race_impl_t tc_race_pick(tc_race_t *r, tc_race_kind_t kind, tc_op_t op, size_t nbytes,
                                   tc_race_call_t *call)
{
    *call = (tc_race_call_t){.kind = kind, .op = op, .impl = TC_RACE_TC, .nbytes = nbytes};
    call->raced = true;
    call->cls = tc_race_class(nbytes);
    tc_race_class_t *c = &r->cls[kind][op][call->cls];
    const unsigned n = c->calls++;
    const tc_race_est_t *e = c->est;
    if (n < TC_RACE_IMPL_LAST) {
        /* Warm-up, untimed: the library's first, then the MPI's. */
        call->impl = (tc_race_impl_t)n;
        return call->impl;
    }
    if (e[TC_RACE_TC].n < TC_RACE_EXPLORE || e[TC_RACE_PMPI].n < TC_RACE_EXPLORE) {
        if (c->issued[TC_RACE_TC] >= TC_RACE_EXPLORE && c->issued[TC_RACE_PMPI] >= TC_RACE_EXPLORE)
            return call->impl; /* the times are on their way: the library's, untimed */
        /* Alternate, the one with fewer timed calls first. */
        call->measured = true;
        call->impl = c->issued[TC_RACE_PMPI] < c->issued[TC_RACE_TC] ? TC_RACE_PMPI : TC_RACE_TC;
        c->issued[call->impl]++;
        return call->impl;
    }
    const double t_tc = tc_median3(e[TC_RACE_TC].ns_per_byte, e[TC_RACE_TC].n);
    const double t_pmpi = tc_median3(e[TC_RACE_PMPI].ns_per_byte, e[TC_RACE_PMPI].n);
    const tc_race_impl_t best = t_pmpi < t_tc ? TC_RACE_PMPI : TC_RACE_TC;
    const double other = best == TC_RACE_TC ? t_pmpi : t_tc,
                 mine = best == TC_RACE_TC ? t_tc : t_pmpi;
    if (c->last_best != (int)best) {
        c->last_best = (int)best;
        c->ref = mine;
        c->far = other >= TC_RACE_FAR_RATIO * mine ? 1 : 0;
        c->reprobe = false;
        tc_log(TC_LOG_DEBUG, "race: %s of %zu bytes and up (class %d): %s (%.3g vs %.3g ns/B)",
               tc_stats_op_name(op), (size_t)1 << (TC_RACE_CLASS_LOG0 + call->cls), call->cls,
               tc_race_impl_names[kind][best], mine, other);
    }
    const unsigned probe =
        c->far >= TC_RACE_FAR_CONFIRM ? tc_race_far_interval(other / mine) : TC_RACE_PROBE;
    call->impl = best;
    call->measured = n % TC_RACE_MEASURE == 0;
    if (call->measured && (n % probe == 0 || c->reprobe)) {
        call->impl = (tc_race_impl_t)(1 - best);
        c->reprobe = false;
        c->ref = mine;
    }
    if (call->measured)
        c->issued[call->impl]++;
    return call->impl;
}

tc_race_impl_t tc_race_choose(tc_race_t *r, tc_op_t op, size_t nbytes, bool order_free,
                              tc_race_call_t *call)
{
    if (r->min == 0 || nbytes < r->min || !order_free) {
        *call = (tc_race_call_t){.op = op, .impl = TC_RACE_TC, .nbytes = nbytes};
        return TC_RACE_TC;
    }
    return tc_race_pick(r, TC_RACE_KIND_PMPI, op, nbytes, call);
}

tc_race_impl_t tc_race_choose_wide(tc_race_t *r, tc_op_t op, size_t nbytes, bool eligible,
                                   tc_race_call_t *call)
{
    if (r->wide_min == 0 || nbytes < r->wide_min || !eligible) {
        *call = (tc_race_call_t){.kind = TC_RACE_KIND_WIDE, .op = op, .nbytes = nbytes};
        return TC_RACE_TC;
    }
    return tc_race_pick(r, TC_RACE_KIND_WIDE, op, nbytes, call);
}

void tc_race_record(tc_race_t *r, tc_op_t op, int cls, tc_race_impl_t impl, size_t nbytes,
                    double ns)
{
    tc_race_record_kind(r, TC_RACE_KIND_PMPI, op, cls, impl, nbytes, ns);
}

void tc_race_record_kind(tc_race_t *r, tc_race_kind_t kind, tc_op_t op, int cls,
                         tc_race_impl_t impl, size_t nbytes, double ns)
{
    tc_race_class_t *c = &r->cls[kind][op][cls];
    tc_race_est_t *e = &c->est[impl];
    e->ns_per_byte[e->n % TC_RACE_WINDOW] = ns / (double)(nbytes ? nbytes : 1);
    e->n++;
    if (c->last_best < 0)
        return;
    /* Decided: a probe's time confirms (or not) that the other is far
     * slower; a time of the one in use may show that the machine changed
     * since it was chosen. */
    const double mine = tc_median3(c->est[c->last_best].ns_per_byte, c->est[c->last_best].n),
                 other =
                     tc_median3(c->est[1 - c->last_best].ns_per_byte, c->est[1 - c->last_best].n);
    if ((int)impl != c->last_best) {
        c->far = other >= TC_RACE_FAR_RATIO * mine ? c->far + 1 : 0;
    } else if (mine > TC_RACE_GROW_RATIO * c->ref) {
        c->reprobe = true;
        c->far = 0;
    }
}

static double tc_race_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Hierarchy: the pending time as the mean over all processes (race.h),
 * summed in whole nanoseconds so that every process gets the same bits. */
static int tc_race_agree(tc_race_t *r, MPI_Comm priv)
{
    long long mine = (long long)r->pending_ns, sum = mine;
    int p = 1;
    int rc = PMPI_Comm_size(priv, &p);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Allreduce(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, priv);
    r->pending = false;
    if (rc == MPI_SUCCESS)
        tc_race_record_kind(r, r->pending_kind, r->pending_op, r->pending_cls, r->pending_impl,
                            r->pending_bytes, (double)sum / p);
    return rc;
}

/* Segment mode (race.h): process i's race line @p which, and its ring. */
static tc_atomic_u64_t *tc_race_line(const tc_shm_comm_t *s, int i, int which)
{
    return (tc_atomic_u64_t *)(void *)(s->base + tc_shm_layout_race(&s->layout, i, which));
}
static double *tc_race_ring(const tc_shm_comm_t *s, int i)
{
    return (double *)(void *)(s->base + tc_shm_layout_race(&s->layout, i, TC_SHM_RACE_RING0));
}

/* Segment mode: the lag of a timed call of @p nbytes (race.h), the same on
 * every process (agreed geometry, the call's size). */
static unsigned tc_race_lag(const tc_shm_comm_t *s, size_t nbytes)
{
    size_t ring = (size_t)s->layout.S * s->layout.f;
    const size_t slots = (size_t)s->layout.rdepth * s->layout.rslot_bytes;
    if (slots > ring)
        ring = slots;
    return nbytes / 2 >= ring ? TC_RACE_LAG_LARGE : TC_RACE_LAG;
}

/* Segment mode: at the start of raced call r->seq, the timed calls made
 * their lag ago or earlier enter the estimates, in the order they were made
 * (a call with the short lag waits behind an older one with the long lag),
 * with the mean of every process's time (race.h), summed in rank order so
 * that every process gets the same bits (waiting for a peer that has not
 * written it yet: race.h says why that ends). At most TC_RACE_LAG timed
 * calls are in flight: the oldest is taken in TC_RACE_LAG raced calls after
 * it was made at the latest. */
static void tc_race_take_in(tc_race_t *r, tc_shm_comm_t *s)
{
    while (r->applied < r->timed &&
           r->inflight[r->applied % TC_RACE_LAG].seq + r->inflight[r->applied % TC_RACE_LAG].lag <=
               r->seq) {
        const unsigned long long j = r->applied;
        const tc_race_inflight_t *f = &r->inflight[j % TC_RACE_LAG];
        double sum = 0;
        bool timed = true;
        for (int q = 0; q < s->p && timed; q++) {
            if (q != s->rank)
                tc_shm_wait_ge(s, tc_race_line(s, q, TC_SHM_RACE_PUBLISHED), q, j + 1,
                               "race: wait for a peer's time of a timed call", q);
            const double t = tc_race_ring(s, q)[j % TC_SHM_RACE_RING];
            timed = t >= 0; /* < 0: nothing timed (tc_race_skip) */
            sum += t;
        }
        if (timed) {
            tc_race_record_kind(r, f->kind, f->op, f->cls, f->impl, f->nbytes, sum / s->p);
        } else {
            /* Not a time: the exploration counts it no more. */
            unsigned *issued = &r->cls[f->kind][f->op][f->cls].issued[f->impl];
            *issued -= *issued > 0;
        }
        r->applied = j + 1;
        /* The writers may reuse the slot. */
        tc_shm_publish(s, tc_race_line(s, s->rank, TC_SHM_RACE_CONSUMED), s->rank, j + 1);
    }
}

/* Segment mode: this process's time of timed call @p j into its ring, once
 * every peer has taken in the time the slot held (race.h). */
static void tc_race_publish(tc_shm_comm_t *s, unsigned long long j, double ns)
{
    if (j >= TC_SHM_RACE_RING)
        for (int q = 0; q < s->p; q++)
            if (q != s->rank)
                tc_shm_wait_ge(s, tc_race_line(s, q, TC_SHM_RACE_CONSUMED), q,
                               j - TC_SHM_RACE_RING + 1,
                               "race: wait for a peer to take in an older time", q);
    tc_race_ring(s, s->rank)[j % TC_SHM_RACE_RING] = ns;
    tc_shm_publish(s, tc_race_line(s, s->rank, TC_SHM_RACE_PUBLISHED), s->rank, j + 1);
}

/* A raced call's choice is made: its place in the sequence, and its clock. */
static void tc_race_started(tc_race_t *r, tc_shm_comm_t *shm, tc_race_call_t *call)
{
    if (shm) {
        if (call->measured) {
            call->board = shm;
            call->timed = r->timed++;
            r->inflight[call->timed % TC_RACE_LAG] =
                (tc_race_inflight_t){.kind = call->kind,
                                     .op = call->op,
                                     .cls = call->cls,
                                     .impl = call->impl,
                                     .nbytes = call->nbytes,
                                     .seq = r->seq,
                                     .lag = tc_race_lag(shm, call->nbytes)};
        }
        r->seq++;
    }
    if (tc_race_test_chosen)
        tc_race_test_chosen(call);
    if (call->measured)
        call->t0_ns = tc_race_now_ns();
}

int tc_race_begin_raced(tc_race_t *r, tc_shm_comm_t *shm, MPI_Comm priv, tc_op_t op, size_t nbytes,
                        bool order_free, tc_race_call_t *call, tc_race_impl_t *impl)
{
    int rc = MPI_SUCCESS;
    /* Whether this call races depends on agreed values only (min, the
     * message size, the operation), so every process takes times in (or
     * agrees) here or none does. */
    const bool races = r->min != 0 && nbytes >= r->min && order_free;
    if (races && shm)
        tc_race_take_in(r, shm);
    else if (races && r->pending)
        rc = tc_race_agree(r, priv);
    *impl = tc_race_choose(r, op, nbytes, order_free, call);
    if (call->raced)
        tc_race_started(r, shm, call);
    return rc;
}

void tc_race_begin_wide(tc_race_t *r, tc_shm_comm_t *shm, tc_op_t op, size_t nbytes, bool eligible,
                        tc_race_call_t *call, bool *wide)
{
    /* As in tc_race_begin_raced(): agreed values decide whether it races. */
    const bool races = shm && r->wide_min != 0 && nbytes >= r->wide_min && eligible;
    if (races)
        tc_race_take_in(r, shm);
    *wide = tc_race_choose_wide(r, op, nbytes, races, call) == TC_RACE_WIDE;
    if (call->raced)
        tc_race_started(r, shm, call);
}

void tc_race_end_measured(tc_race_t *r, const tc_race_call_t *call)
{
    double ns = tc_race_now_ns() - call->t0_ns;
    if (tc_race_test_time)
        ns = tc_race_test_time(call, ns);
    if (call->board) {
        tc_race_publish(call->board, call->timed, ns);
        return;
    }
    r->pending = true;
    r->pending_kind = call->kind;
    r->pending_op = call->op;
    r->pending_cls = call->cls;
    r->pending_impl = call->impl;
    r->pending_bytes = call->nbytes;
    r->pending_ns = ns;
}

void tc_race_skip(tc_race_t *r, const tc_race_call_t *call)
{
    (void)r;
    if (call->measured && call->board)
        tc_race_publish(call->board, call->timed, -1.0);
}
