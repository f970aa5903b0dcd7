/* The library's path against the MPI's own on large messages (race.h). */
#include "race.h"

#include <string.h>
#include <time.h>

#include "base/log.h"
#include "base/median3.h"
#include "base/redop.h"
#include "shm/segment.h"

_Static_assert(TC_RACE_WINDOW == TC_MEDIAN3_WINDOW, "the estimate is tc_median3");
_Static_assert(TC_RACE_EXPLORE >= TC_RACE_WINDOW, "the first decision has a full window");
_Static_assert(TC_RACE_PROBE % TC_RACE_MEASURE == 0 && TC_RACE_PROBE_FAR % TC_RACE_MEASURE == 0,
               "every probe is timed");

void tc_race_init(tc_race_t *r, size_t min)
{
    memset(r, 0, sizeof *r);
    r->min = min;
    for (int op = 0; op < TC_OP_LAST; op++)
        for (int c = 0; c < TC_RACE_CLASSES; c++)
            r->cls[op][c].last_best = -1;
}

int tc_race_class(size_t nbytes)
{
    int cls = 0;
    while (cls + 1 < TC_RACE_CLASSES && (nbytes >> (TC_RACE_CLASS_LOG0 + cls + 1)) != 0)
        cls++;
    return cls;
}

double tc_race_estimate(const tc_race_t *r, tc_op_t op, int cls, tc_race_impl_t impl)
{
    return tc_median3(r->cls[op][cls].est[impl].ns_per_byte, r->cls[op][cls].est[impl].n);
}

tc_race_impl_t tc_race_choose(tc_race_t *r, tc_op_t op, size_t nbytes, bool order_free,
                              tc_race_call_t *call)
{
    *call = (tc_race_call_t){.op = op, .impl = TC_RACE_TC, .nbytes = nbytes};
    if (r->min == 0 || nbytes < r->min || !order_free)
        return TC_RACE_TC;
    call->raced = true;
    call->cls = tc_race_class(nbytes);
    tc_race_class_t *c = &r->cls[op][call->cls];
    const unsigned n = c->calls++;
    const tc_race_est_t *e = c->est;
    if (n < TC_RACE_IMPL_LAST) {
        /* Warm-up, untimed: the library's first, then the MPI's. */
        call->impl = (tc_race_impl_t)n;
        return call->impl;
    }
    call->measured = true;
    if (e[TC_RACE_TC].n < TC_RACE_EXPLORE || e[TC_RACE_PMPI].n < TC_RACE_EXPLORE) {
        /* Alternate, the one with fewer times first. */
        call->impl = e[TC_RACE_PMPI].n < e[TC_RACE_TC].n ? TC_RACE_PMPI : TC_RACE_TC;
        return call->impl;
    }
    const double t_tc = tc_median3(e[TC_RACE_TC].ns_per_byte, e[TC_RACE_TC].n);
    const double t_pmpi = tc_median3(e[TC_RACE_PMPI].ns_per_byte, e[TC_RACE_PMPI].n);
    const tc_race_impl_t best = t_pmpi < t_tc ? TC_RACE_PMPI : TC_RACE_TC;
    const double other = best == TC_RACE_TC ? t_pmpi : t_tc,
                 mine = best == TC_RACE_TC ? t_tc : t_pmpi;
    const unsigned probe = other >= TC_RACE_FAR_RATIO * mine ? TC_RACE_PROBE_FAR : TC_RACE_PROBE;
    call->impl = n % probe == 0 ? (tc_race_impl_t)(1 - best) : best;
    call->measured = n % TC_RACE_MEASURE == 0;
    if (c->last_best != (int)best) {
        c->last_best = (int)best;
        tc_log(TC_LOG_DEBUG, "race: %s of %zu bytes and up (class %d): %s (%.3g vs %.3g ns/B)",
               tc_stats_op_name(op), (size_t)1 << (TC_RACE_CLASS_LOG0 + call->cls), call->cls,
               best == TC_RACE_TC ? "the library's path" : "the MPI's own", mine, other);
    }
    return call->impl;
}

void tc_race_record(tc_race_t *r, tc_op_t op, int cls, tc_race_impl_t impl, size_t nbytes,
                    double ns)
{
    tc_race_est_t *e = &r->cls[op][cls].est[impl];
    e->ns_per_byte[e->n % TC_RACE_WINDOW] = ns / (double)(nbytes ? nbytes : 1);
    e->n++;
}

static double tc_race_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The pending time as the maximum over all processes: the call is over for
 * the communicator when its last process leaves it. */
static int tc_race_agree(tc_race_t *r, tc_shm_comm_t *shm, MPI_Comm priv)
{
    double mine = r->pending_ns, all = mine;
    int rc = MPI_SUCCESS;
    tc_redop_t max;
    if (shm && tc_redop_init(&max, 1, MPI_DOUBLE, MPI_MAX) == 0) {
        if (tc_shm_reduce(shm, &mine, &all, 1, &max, -1) != 0)
            shm = NULL; /* no reduce area: the same on every process */
        tc_redop_free(&max);
    } else {
        shm = NULL;
    }
    if (!shm)
        rc = PMPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_MAX, priv);
    r->pending = false;
    if (rc == MPI_SUCCESS)
        tc_race_record(r, r->pending_op, r->pending_cls, r->pending_impl, r->pending_bytes, all);
    return rc;
}

int tc_race_begin(tc_race_t *r, tc_shm_comm_t *shm, MPI_Comm priv, tc_op_t op, size_t nbytes,
                  bool order_free, tc_race_call_t *call, tc_race_impl_t *impl)
{
    int rc = MPI_SUCCESS;
    /* Whether this call races depends on agreed values only (min, the
     * message size, the operation), so every process agrees here or none. */
    if (r->pending && r->min != 0 && nbytes >= r->min && order_free)
        rc = tc_race_agree(r, shm, priv);
    *impl = tc_race_choose(r, op, nbytes, order_free, call);
    if (call->measured)
        call->t0_ns = tc_race_now_ns();
    return rc;
}

void tc_race_end(tc_race_t *r, const tc_race_call_t *call)
{
    if (!call->measured)
        return;
    r->pending = true;
    r->pending_op = call->op;
    r->pending_cls = call->cls;
    r->pending_impl = call->impl;
    r->pending_bytes = call->nbytes;
    r->pending_ns = tc_race_now_ns() - call->t0_ns;
}
