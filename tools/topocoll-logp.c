/* topocoll-logp: measure LogP/LogGP parameters Netgauge-style between pairs of
 * ranks at each level of the machine (paper 003), and write a TC_LOGP_FILE.
 *
 *   mpirun -n N topocoll-logp [-o PATH] [-r REPS] [--quick] [--level NAME] [-h]
 *
 * Levels: the closest common unit of two ranks (src/model/logp.h): "numa" =
 * same NUMA node, "package" = same socket, other NUMA node, "node" = same
 * node, other socket, "switch1" = other nodes under one leaf switch, ... The
 * locality vectors are the library's own (hwloc, TC_LOCALITY_FILE,
 * TC_NETWORK_TOPOLOGY_FILE), read once from a context on a duplicate of
 * MPI_COMM_WORLD which is released before anything is measured. Two ranks on
 * different nodes with no switch above them in common (no network file) are
 * reported as "top" and written under the next level above the highest one
 * every rank knows (switch1 when no network file is given).
 *
 * Per level the lowest pair (a, b) is measured while every other rank waits in
 * a barrier that sleeps between polls (a spinning waiter would take a core
 * from the pair on an oversubscribed machine). Rank a sends, rank b receives;
 * one repetition measures (times in microseconds):
 *   o_s  time inside MPI_Send of 8 bytes (eager), averaged over many sends
 *        spaced by a delay D (3 x the calibrated round trip, >= 5 us) so no
 *        send waits for the previous one; b sits in MPI_Recv;
 *   o_r  time inside MPI_Recv of 8 bytes that has already arrived: b spins D
 *        before each receive, a sends the next message when b acknowledges;
 *   g    steady-state time per message of a burst: T(n) = time from the first
 *        of n back-to-back 8-byte sends until b's acknowledgement of all n
 *        (b pre-posts the n receives), g = (T(n2) - T(n1)) / (n2 - n1), which
 *        removes the acknowledgement's latency and the start-up (each T the
 *        minimum of 3 bursts);
 *   L    round trip of an 8-byte ping-pong / 2 - o_s - o_r (same repetition),
 *        clamped at 0 (the overheads then cover the whole transfer: the
 *        report says in how many repetitions);
 *   G    least-squares slope of T(s) = send of s bytes + 0-byte reply over
 *        s = 64 KiB .. 4 MiB (powers of two; each T the minimum of 5), with
 *        the fit's R^2;
 *   X    the duplex factor (model/logp.h): over the same sizes, the slope of
 *        an exchange (both send s and receive s at once, MPI_Sendrecv,
 *        timed after one untimed exchange that lines the two up) divided by
 *        the slope of the one-way time of an s-byte ping-pong (round trip /
 *        2: the same two messages one after the other); each time the
 *        minimum of 5. 1: the two directions overlap; 2: they serialise
 *        (the CPU copies both). Written clamped to [1, 2]; each size's
 *        one-way and exchange minima are printed.
 * After the repetitions, once per pair (not when oversubscribed):
 *   E, rdv  the eager limit and the rendezvous step (model/logp.h): one-way
 *        ping-pong times over 1 KiB .. 256 KiB, sqrt(2) apart; the largest
 *        jump above the G line (>= 0.25 us and 20%) is bisected to 8 bytes;
 *        E = the largest size still eager, rdv = the step there less G x
 *        the bytes between; no such jump: E = 0.
 * Oversubscribed (some node runs more ranks than CPUs) only w is measured:
 * an 8-byte token around a ring of all ranks, per hop, less o_s + L + o_r of
 * the base table (TC_LOGP_FILE, e.g. an np=2 file, else the defaults); every
 * other parameter and the shm row are written as the base has them.
 * Each parameter is reported as the median over R repetitions with its
 * quartiles and min..max; the file gets the medians (and the min..max after
 * a '#', which the loader ignores). Levels not measured keep the defaults.
 * A repetition during which a process of the pair lost its core (other jobs
 * on the machine: a 0.08 us flag wait once came out as 2598 us) measures the
 * scheduler: such values, more than TC_LOGP_OUTLIER_MADS median absolute
 * deviations from the median of the repetitions, are dropped and counted
 * ("note: outliers dropped"), and where more than a quarter were dropped or
 * the rest still spread wide a "warning: large spread" line names the
 * parameters (tc_logp_robust). The values are still written: this is a
 * measurement, and the warning says how far to trust it.
 *
 * The shm row (model/logp.h: flags through shared memory, for the segment's
 * barriers) is measured between the two lowest ranks of the first node
 * holding two, on flags in an MPI_Win_allocate_shared window: see "the shm
 * row" below. Without --level it follows the levels; --level shm measures
 * only it; --level LEVEL skips it.
 *
 * Exit status: 0 on success; 0 also at np = 1, where there is no pair to
 * measure (a message says so and no file is written); 1 when --level names a
 * level with no pair here or the file cannot be written or read back; 2 on a
 * bad option.
 *
 * A tool, not the library: it calls MPI_* directly and is never run from a
 * collective.
 */
#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/atomics.h"
#include "core/query.h"
#include "model/logp.h"
#include "topocoll.h"

_Static_assert((int)TC_MODEL_LEVEL_LAST == (int)TC_LEVEL_LAST,
               "model levels and hierarchy levels must be the same list");

/* Pair levels: TC_LEVEL_CORE..TC_LEVEL_SWITCH4, and TOP for ranks with no
 * known unit in common. */
#define LV_TOP TC_LEVEL_LAST
#define NLV    (TC_LEVEL_LAST + 1)
#define LV_SHM NLV /* --level shm: the shm row only */

enum { P_L, P_OS, P_OR, P_G, P_GB, NPARAM };
static const char *const param_name[NPARAM] = {"L", "o_s", "o_r", "g", "G"};

enum { TAG_CAL = 100, TAG_OS, TAG_OR, TAG_ACK, TAG_RDY, TAG_G, TAG_PP, TAG_BIG, TAG_RES, TAG_X };

#define SMALL 8 /* bytes of a small (eager) message */
/* The eager-limit scan: 1 KiB .. 256 KiB in steps of sqrt(2). */
#define EAGER_NSIZES 17
#define EAGER_MIN    1024.0

typedef struct opts {
    const char *out;
    int reps;
    int quick;
    int level; /* a pair level, or -1 for all */
} opts_t;

/* What one repetition schedule uses. */
typedef struct plan {
    int reps;
    int n_os, n_or; /* messages per repetition for o_s, o_r */
    int n1, n2;     /* burst lengths for g */
    int n_pp;       /* round trips for L */
    int nsizes;
    size_t sizes[8]; /* for G */
    int tries;       /* bursts per point; the minimum is kept */
    int tries_big;   /* large transfers per size; the minimum is kept */
    int quick;       /* --quick: shorter eager-limit scan */
} plan_t;

/* Result of one level, computed on rank a and broadcast. */
typedef struct result {
    double med[NPARAM], q1[NPARAM], q3[NPARAM], min[NPARAM], max[NPARAM];
    double dropped[NPARAM], wide[NPARAM]; /* tc_logp_robust: outliers, spread large */
    double r2_med, r2_min;                /* fit quality of G */
    /* Written: g and G from each point's minimum over all repetitions (one
     * undisturbed burst or transfer per point suffices on a busy machine). */
    double g_pool, G_pool, r2_pool;
    double rtt;        /* median round trip of 8 bytes */
    double delay;      /* D */
    double timer;      /* cost of one clock reading, taken off o_s and o_r */
    double nclamped;   /* repetitions where L was clamped to 0 */
    double ng_clamped; /* repetitions where g came out negative (clamped) */
    double nG_clamped; /* repetitions where G came out negative (clamped) */
    /* Eager limit and rendezvous step (measure_eager); E = 0: no step found
     * (or not measured: eager_done = 0). */
    double E, rdv, t_lo, t_hi; /* one-way times just at and just above E */
    double eager_done;
    double eager_sizes[EAGER_NSIZES], eager_t[EAGER_NSIZES]; /* the coarse scan */
    /* The duplex factor X (measure_duplex): per repetition, summarized as
     * the other parameters (tc_logp_robust); the pooled slopes from each
     * size's minimum over all repetitions, and their ratio. */
    double X_med, X_q1, X_q3, X_min, X_max, X_dropped, X_wide;
    double X_pool, Gx_pool, Gpp_pool;    /* exchange and one-way slopes, us/byte */
    double nX_bad;                       /* repetitions without a usable slope */
    double X_size[8], X_tpp[8], X_tx[8]; /* per size: minima over the repetitions */
    double X_done;                       /* measured (not when oversubscribed) */
} result_t;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* Busy-wait without entering MPI: the peer's message lands meanwhile (eager
 * shared-memory and network transports deliver without receiver progress). */
static void spin_us(double us)
{
    double end = now_us() + us;
    while (now_us() < end)
        ;
}

/* A barrier whose waiters sleep between polls, so ranks not being measured
 * leave the cores to the pair (oversubscribed runs). */
static void sleepy_barrier(MPI_Comm comm)
{
    MPI_Request req;
    int done = 0;
    struct timespec nap = {0, 200000};
    MPI_Ibarrier(comm, &req);
    for (;;) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (done)
            break;
        nanosleep(&nap, NULL);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median of back-to-back clock readings: what a timed call measures beyond
 * the call itself (a guest may read its clock slowly). */
static double timer_cost(void)
{
    enum { N = 1001 };
    double d[N];
    for (int i = 0; i < N; i++) {
        double t0 = now_us();
        d[i] = now_us() - t0;
    }
    qsort(d, N, sizeof d[0], cmp_double);
    return d[N / 2];
}

/* Quantile q of sorted v[0..n-1], linear interpolation. */
static double quantile(const double *v, int n, double q)
{
    double pos = q * (n - 1);
    int i = (int)pos;
    if (i >= n - 1)
        return v[n - 1];
    return v[i] + (pos - i) * (v[i + 1] - v[i]);
}

/* Where a table keeps its per-parameter statistics: result_t and
 * shm_result_t have the same seven columns (one entry per parameter, each
 * table its own number of parameters). */
typedef struct columns {
    double *med, *q1, *q3, *min, *max, *dropped, *wide;
} columns_t;
#define COLUMNS_OF(r)                                                                              \
    ((columns_t){(r)->med, (r)->q1, (r)->q3, (r)->min, (r)->max, (r)->dropped, (r)->wide})

/* Parameter k over the repetitions: median, quartiles and range of the
 * values left once repetitions far from the others (a process of the pair
 * descheduled: other jobs on the machine) are dropped (tc_logp_robust);
 * @p floor: a spread this small is the clock's, not the machine's. Into
 * entry k of the columns @p c (COLUMNS_OF(a result_t or shm_result_t)). */
static void summarize(double *v, int n, int k, double floor, columns_t c)
{
    tc_logp_robust_t s;
    tc_logp_robust(v, n, floor, &s);
    c.med[k] = s.med;
    c.q1[k] = s.q1;
    c.q3[k] = s.q3;
    c.min[k] = s.min;
    c.max[k] = s.max;
    c.dropped[k] = s.dropped;
    c.wide[k] = s.wide;
}

/* The outlier note and the spread warning of a table (rank 0): which
 * parameters lost repetitions, and which are doubtful. */
static void print_robust(const char *const *names, int np, const double *dropped,
                         const double *wide, int reps)
{
    int nd = 0, nw = 0;
    for (int k = 0; k < np; k++) {
        nd += dropped[k] > 0;
        nw += wide[k] > 0;
    }
    if (nd) {
        printf("note: outliers dropped (more than %.0f MADs from the median of the "
               "repetitions):",
               TC_LOGP_OUTLIER_MADS);
        for (int k = 0; k < np; k++)
            if (dropped[k] > 0)
                printf(" %s %.0f of %d", names[k], dropped[k], reps);
        printf("\n");
    }
    if (nw) {
        printf("warning: large spread over the repetitions in");
        for (int k = 0; k < np; k++)
            if (wide[k] > 0)
                printf(" %s", names[k]);
        printf(" (a process of the pair lost its core: the machine is busy); these medians are "
               "doubtful: measure again on an idle machine, or with more repetitions (-r)\n");
    }
}

/* Least squares y = a + G x; returns G, *r2 the coefficient of
 * determination. */
static double fit_slope(const double *x, const double *y, int n, double *r2)
{
    double mx = 0, my = 0, sxx = 0, sxy = 0, syy = 0;
    for (int i = 0; i < n; i++) {
        mx += x[i];
        my += y[i];
    }
    mx /= n;
    my /= n;
    for (int i = 0; i < n; i++) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
        syy += (y[i] - my) * (y[i] - my);
    }
    double G = sxy / sxx;
    *r2 = syy > 0 ? (sxy * sxy) / (sxx * syy) : 1.0;
    return G;
}

/* ---- the measurements; a = sender, b = receiver ---- */

/* Median 8-byte round trip over @p n ping-pongs (after as many warm-up ones). */
static double calibrate_rtt(MPI_Comm comm, int peer, int is_a, int n)
{
    char buf[SMALL] = {0};
    double *t = malloc((size_t)n * sizeof *t), rtt;
    if (!t) {
        fprintf(stderr, "topocoll-logp: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int i = 0; i < 2 * n; i++) {
        if (is_a) {
            double t0 = now_us();
            MPI_Send(buf, SMALL, MPI_BYTE, peer, TAG_CAL, comm);
            MPI_Recv(buf, SMALL, MPI_BYTE, peer, TAG_CAL, comm, MPI_STATUS_IGNORE);
            if (i >= n)
                t[i - n] = now_us() - t0;
        } else {
            MPI_Recv(buf, SMALL, MPI_BYTE, peer, TAG_CAL, comm, MPI_STATUS_IGNORE);
            MPI_Send(buf, SMALL, MPI_BYTE, peer, TAG_CAL, comm);
        }
    }
    if (is_a) {
        qsort(t, (size_t)n, sizeof *t, cmp_double);
        rtt = t[n / 2];
    } else {
        rtt = 0;
    }
    free(t);
    return rtt;
}

/* Mean of the fastest 90% of @p n samples (sorts @p v): a call during which
 * the process was descheduled (other jobs on the machine) measures the
 * scheduler, not MPI, and one such sample would dominate the mean. */
static double trimmed_mean(double *v, int n)
{
    int keep = n - n / 10;
    double sum = 0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    for (int i = 0; i < keep; i++)
        sum += v[i];
    return sum / keep;
}

/* @p t: n samples of scratch. Returns o_s on a, 0 on b. */
static double measure_os(MPI_Comm comm, int peer, int is_a, int n, double delay, double *t)
{
    char buf[SMALL] = {0};
    for (int i = 0; i < n; i++) {
        if (is_a) {
            spin_us(delay);
            double t0 = now_us();
            MPI_Send(buf, SMALL, MPI_BYTE, peer, TAG_OS, comm);
            t[i] = now_us() - t0;
        } else {
            MPI_Recv(buf, SMALL, MPI_BYTE, peer, TAG_OS, comm, MPI_STATUS_IGNORE);
        }
    }
    return is_a ? trimmed_mean(t, n) : 0;
}

/* Returns o_r on b, 0 on a. */
static double measure_or(MPI_Comm comm, int peer, int is_a, int n, double delay, double *t)
{
    char buf[SMALL] = {0};
    for (int i = 0; i < n; i++) {
        if (is_a) {
            MPI_Send(buf, SMALL, MPI_BYTE, peer, TAG_OR, comm);
            MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_ACK, comm, MPI_STATUS_IGNORE);
        } else {
            spin_us(delay); /* > one round trip: the message is here before we look */
            double t0 = now_us();
            MPI_Recv(buf, SMALL, MPI_BYTE, peer, TAG_OR, comm, MPI_STATUS_IGNORE);
            t[i] = now_us() - t0;
            MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_ACK, comm);
        }
    }
    return is_a ? 0 : trimmed_mean(t, n);
}

/* Minimum over @p tries of the time from the first of @p n back-to-back sends
 * to b's acknowledgement of all of them (a only; b pre-posts its receives). */
static double burst_time(MPI_Comm comm, int peer, int is_a, int n, int tries, char *bufs,
                         MPI_Request *reqs, MPI_Status *st)
{
    double best = INFINITY;
    for (int t = 0; t < tries; t++) {
        if (is_a) {
            MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_RDY, comm, MPI_STATUS_IGNORE);
            double t0 = now_us();
            for (int i = 0; i < n; i++)
                MPI_Send(bufs, SMALL, MPI_BYTE, peer, TAG_G, comm);
            MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_ACK, comm, MPI_STATUS_IGNORE);
            double dt = now_us() - t0;
            if (dt < best)
                best = dt;
        } else {
            for (int i = 0; i < n; i++)
                MPI_Irecv(bufs + (size_t)i * SMALL, SMALL, MPI_BYTE, peer, TAG_G, comm, &reqs[i]);
            MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_RDY, comm);
            MPI_Waitall(n, reqs, st);
            MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_ACK, comm);
        }
    }
    return best;
}

static double measure_rtt(MPI_Comm comm, int peer, int is_a, int n)
{
    char buf[SMALL] = {0};
    double t0 = now_us();
    for (int i = 0; i < n; i++) {
        if (is_a) {
            MPI_Send(buf, SMALL, MPI_BYTE, peer, TAG_PP, comm);
            MPI_Recv(buf, SMALL, MPI_BYTE, peer, TAG_PP, comm, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, SMALL, MPI_BYTE, peer, TAG_PP, comm, MPI_STATUS_IGNORE);
            MPI_Send(buf, SMALL, MPI_BYTE, peer, TAG_PP, comm);
        }
    }
    return (now_us() - t0) / n;
}

/* G and R^2 of one repetition (a only); @p ybest[k]: lowered to this
 * repetition's time at size k where it is lower (the minima over all
 * repetitions). */
static double measure_G(MPI_Comm comm, int peer, int is_a, const plan_t *pl, char *big, double *r2,
                        double *ybest)
{
    double x[8], y[8];
    for (int k = 0; k < pl->nsizes; k++) {
        int s = (int)pl->sizes[k];
        double best = INFINITY;
        for (int t = 0; t < pl->tries_big; t++) {
            if (is_a) {
                double t0 = now_us();
                MPI_Send(big, s, MPI_BYTE, peer, TAG_BIG, comm);
                MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_ACK, comm, MPI_STATUS_IGNORE);
                double dt = now_us() - t0;
                if (dt < best)
                    best = dt;
            } else {
                MPI_Recv(big, s, MPI_BYTE, peer, TAG_BIG, comm, MPI_STATUS_IGNORE);
                MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_ACK, comm);
            }
        }
        x[k] = (double)s;
        y[k] = best;
        ybest[k] = fmin(ybest[k], best);
    }
    *r2 = 0;
    return is_a ? fit_slope(x, y, pl->nsizes, r2) : 0;
}

/* The slope over the plan's sizes of @p y (a only). */
static double fit_sizes(const plan_t *pl, const double *y, double *r2)
{
    double x[8];
    for (int k = 0; k < pl->nsizes; k++)
        x[k] = (double)pl->sizes[k];
    return fit_slope(x, y, pl->nsizes, r2);
}

/* One repetition of the duplex measurement: for each of the plan's sizes s
 * the minimum over tries of the one-way time of an s-byte ping-pong (round
 * trip / 2: a's message, then b's) and of an exchange (a and b send s and
 * receive s at once; an untimed exchange first lines the two up, so that
 * neither starts the timed one a whole transfer ahead). Returns, on a, the
 * ratio of the two least-squares slopes (X), or -1 when the one-way slope
 * is not positive (noise); @p ypp_best, @p yx_best[k]: lowered to this
 * repetition's times where lower (the minima over all repetitions). */
static double measure_duplex(MPI_Comm comm, int peer, int is_a, const plan_t *pl, char *sbuf,
                             char *rbuf, double *ypp_best, double *yx_best)
{
    double x[8], ypp[8], yx[8], r2;
    for (int k = 0; k < pl->nsizes; k++) {
        int s = (int)pl->sizes[k];
        double bpp = INFINITY, bx = INFINITY;
        for (int t = 0; t < pl->tries_big; t++) {
            double t0 = now_us();
            if (is_a) {
                MPI_Send(sbuf, s, MPI_BYTE, peer, TAG_X, comm);
                MPI_Recv(rbuf, s, MPI_BYTE, peer, TAG_X, comm, MPI_STATUS_IGNORE);
                bpp = fmin(bpp, (now_us() - t0) / 2);
            } else {
                MPI_Recv(rbuf, s, MPI_BYTE, peer, TAG_X, comm, MPI_STATUS_IGNORE);
                MPI_Send(sbuf, s, MPI_BYTE, peer, TAG_X, comm);
            }
            MPI_Sendrecv(sbuf, s, MPI_BYTE, peer, TAG_X, rbuf, s, MPI_BYTE, peer, TAG_X, comm,
                         MPI_STATUS_IGNORE);
            t0 = now_us();
            MPI_Sendrecv(sbuf, s, MPI_BYTE, peer, TAG_X, rbuf, s, MPI_BYTE, peer, TAG_X, comm,
                         MPI_STATUS_IGNORE);
            bx = fmin(bx, now_us() - t0);
        }
        x[k] = (double)s;
        ypp[k] = bpp;
        yx[k] = bx;
        ypp_best[k] = fmin(ypp_best[k], bpp);
        yx_best[k] = fmin(yx_best[k], bx);
    }
    if (!is_a)
        return 0;
    const double gpp = fit_slope(x, ypp, pl->nsizes, &r2);
    const double gx = fit_slope(x, yx, pl->nsizes, &r2);
    return gpp > 0 && gx > 0 ? gx / gpp : -1;
}

static void oom(void)
{
    fprintf(stderr, "topocoll-logp: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Minimum over @p tries of the one-way time (round trip / 2, mean over @p n
 * round trips) of an @p s-byte ping-pong. a decides every size of the scan
 * and sends it to b first (the bisection depends on a's measurements). */
static double pp_oneway(MPI_Comm comm, int peer, int is_a, char *buf, int s, int n, int tries)
{
    double best = INFINITY;
    for (int t = 0; t < tries; t++) {
        double t0 = now_us();
        for (int i = 0; i < n; i++) {
            if (is_a) {
                MPI_Send(buf, s, MPI_BYTE, peer, TAG_PP, comm);
                MPI_Recv(buf, s, MPI_BYTE, peer, TAG_PP, comm, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, s, MPI_BYTE, peer, TAG_PP, comm, MPI_STATUS_IGNORE);
                MPI_Send(buf, s, MPI_BYTE, peer, TAG_PP, comm);
            }
        }
        double dt = (now_us() - t0) / n / 2;
        if (dt < best)
            best = dt;
    }
    return best;
}

/* One probe of the scan: a names the size (-1 ends the scan), both time it. */
static double eager_probe(MPI_Comm comm, int peer, int is_a, char *buf, int *s, int quick)
{
    if (is_a)
        MPI_Send(s, 1, MPI_INT, peer, TAG_CAL, comm);
    else
        MPI_Recv(s, 1, MPI_INT, peer, TAG_CAL, comm, MPI_STATUS_IGNORE);
    if (*s < 0)
        return 0;
    /* Enough round trips for ~0.2 ms per try at small sizes, at least 8. */
    int n = *s <= 16384 ? (quick ? 50 : 100) : quick ? 8 : 20;
    return pp_oneway(comm, peer, is_a, buf, *s, n, quick ? 3 : 5);
}

/* The eager limit E and the rendezvous step rdv (model/logp.h), on a:
 * one-way times of a ping-pong over 1 KiB .. 256 KiB (sqrt(2) apart); of the
 * jumps above the LogGP line (t(s') - t(s) - G (s' - s), G measured above)
 * of at least 0.25 us and 20% of t(s), the relatively largest locates the
 * step (tc_logp_eager_step; the absolutely largest was once the noise
 * between 185 and 256 KiB, so Open MPI's 4 KiB step went unseen), and a
 * bisection between s and s' to 8 bytes finds E (the largest size still
 * eager), and rdv = t(just above E) - t(E), each the minimum of 3 probes.
 * No such jump: E = 0 (no rendezvous below 256 KiB, or none at all). */
static void measure_eager(MPI_Comm comm, int peer, int is_a, char *big, double G, int quick,
                          result_t *res)
{
    double *sz = res->eager_sizes, *t = res->eager_t;
    int s;
    for (int k = 0; k < EAGER_NSIZES; k++) {
        s = (int)(EAGER_MIN * pow(2.0, k / 2.0));
        sz[k] = s;
        t[k] = eager_probe(comm, peer, is_a, big, &s, quick);
    }
    int kmax = is_a ? tc_logp_eager_step(sz, t, EAGER_NSIZES, G, 0.25, 0.2) : -1;
    int found = kmax >= 0;
    if (is_a)
        MPI_Send(&found, 1, MPI_INT, peer, TAG_RES, comm);
    else
        MPI_Recv(&found, 1, MPI_INT, peer, TAG_RES, comm, MPI_STATUS_IGNORE);
    res->eager_done = 1;
    res->E = res->rdv = 0;
    if (!found)
        return;
    int lo = 0, hi = 0;
    double tlo = 0, thi = 0;
    if (is_a) {
        lo = (int)sz[kmax];
        hi = (int)sz[kmax + 1];
        tlo = t[kmax];
        thi = t[kmax + 1];
    }
    /* Bisection: the size belongs to the side whose time it is closer to. */
    for (;;) {
        if (is_a)
            s = hi - lo > 8 ? lo + (hi - lo) / 2 : -1;
        double tm = eager_probe(comm, peer, is_a, big, &s, quick);
        if (s < 0)
            break;
        if (is_a && tm - tlo > (thi - tlo) / 2) {
            hi = s;
            thi = tm;
        } else if (is_a) {
            lo = s;
            tlo = tm;
        }
    }
    /* The step itself, measured again on both sides of the limit. */
    double blo = INFINITY, bhi = INFINITY;
    for (int r = 0; r < 3; r++) {
        s = lo;
        blo = fmin(blo, eager_probe(comm, peer, is_a, big, &s, quick));
        s = hi;
        bhi = fmin(bhi, eager_probe(comm, peer, is_a, big, &s, quick));
    }
    s = -1;
    (void)eager_probe(comm, peer, is_a, big, &s, quick);
    if (is_a) {
        res->E = lo;
        res->t_lo = blo;
        res->t_hi = bhi;
        res->rdv = fmax(bhi - blo - G * (hi - lo), 0);
    }
}

/* Oversubscribed: the time per hop of an 8-byte token passed around a ring
 * of every rank, all of them running MPI (as in a collective): each hop's
 * receiver blocked in MPI_Recv and may have given its CPU away. Median over
 * @p reps of @p laps laps; valid on rank 0. */
static double ring_hop(MPI_Comm comm, int reps, int laps)
{
    int rank, p;
    char buf[SMALL] = {0};
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    double *v = malloc((size_t)reps * sizeof *v);
    if (!v) {
        fprintf(stderr, "topocoll-logp: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int r = 0; r < reps; r++) {
        MPI_Barrier(comm);
        double t0 = now_us();
        for (int i = 0; i < laps; i++) {
            if (rank == 0) {
                MPI_Send(buf, SMALL, MPI_BYTE, 1, TAG_PP, comm);
                MPI_Recv(buf, SMALL, MPI_BYTE, p - 1, TAG_PP, comm, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, SMALL, MPI_BYTE, rank - 1, TAG_PP, comm, MPI_STATUS_IGNORE);
                MPI_Send(buf, SMALL, MPI_BYTE, (rank + 1) % p, TAG_PP, comm);
            }
        }
        v[r] = (now_us() - t0) / laps / p;
    }
    qsort(v, (size_t)reps, sizeof *v, cmp_double);
    double hop = quantile(v, reps, 0.5);
    free(v);
    return hop;
}

/* The whole measurement between a and b; the result is valid on a. */
static void measure_pair(MPI_Comm comm, int peer, int is_a, const plan_t *pl, int eager,
                         result_t *res)
{
    int R = pl->reps;
    size_t maxsize = pl->sizes[pl->nsizes - 1];
    char *big = malloc(maxsize), *big2 = malloc(maxsize), *bufs = malloc((size_t)pl->n2 * SMALL);
    MPI_Request *reqs = malloc((size_t)pl->n2 * sizeof *reqs);
    MPI_Status *st = malloc((size_t)pl->n2 * sizeof *st);
    double *v[NPARAM], *r2 = malloc((size_t)R * sizeof *r2), *vX = malloc((size_t)R * sizeof *vX);
    double *samples = malloc((size_t)(pl->n_os > pl->n_or ? pl->n_os : pl->n_or) * sizeof *samples);
    if (!big || !big2 || !bufs || !reqs || !st || !r2 || !vX || !samples)
        oom();
    for (int k = 0; k < NPARAM; k++)
        if (!(v[k] = malloc((size_t)R * sizeof *v[k])))
            oom();
    memset(big, 1, maxsize); /* first touch outside the timed loops */
    memset(big2, 2, maxsize);
    memset(bufs, 0, (size_t)pl->n2 * SMALL);
    memset(res, 0, sizeof *res);

    /* Warm-up (connections, registration caches, the largest buffer), then
     * the delay that separates the sends of o_s and precedes the receives of
     * o_r: several round trips, so the previous message is out of the way
     * and the next one is already here. */
    res->rtt = calibrate_rtt(comm, peer, is_a, pl->n_pp);
    res->timer = timer_cost();
    if (is_a) {
        MPI_Send(big, (int)maxsize, MPI_BYTE, peer, TAG_BIG, comm);
        res->delay = fmin(fmax(3 * res->rtt, 5.0), 20000.0);
        MPI_Send(&res->delay, 1, MPI_DOUBLE, peer, TAG_CAL, comm);
    } else {
        MPI_Recv(big, (int)maxsize, MPI_BYTE, peer, TAG_BIG, comm, MPI_STATUS_IGNORE);
        MPI_Recv(&res->delay, 1, MPI_DOUBLE, peer, TAG_CAL, comm, MPI_STATUS_IGNORE);
    }

    double t1_best = INFINITY, t2_best = INFINITY, y_best[8], ypp_best[8], yx_best[8];
    int nX = 0;
    for (int k = 0; k < 8; k++)
        y_best[k] = ypp_best[k] = yx_best[k] = INFINITY;
    for (int r = 0; r < R; r++) {
        double os =
            fmax(measure_os(comm, peer, is_a, pl->n_os, res->delay, samples) - res->timer, 0);
        double orv =
            fmax(measure_or(comm, peer, is_a, pl->n_or, res->delay, samples) - res->timer, 0);
        if (is_a)
            MPI_Recv(&orv, 1, MPI_DOUBLE, peer, TAG_RES, comm, MPI_STATUS_IGNORE);
        else
            MPI_Send(&orv, 1, MPI_DOUBLE, peer, TAG_RES, comm);
        double t1 = burst_time(comm, peer, is_a, pl->n1, pl->tries, bufs, reqs, st);
        double t2 = burst_time(comm, peer, is_a, pl->n2, pl->tries, bufs, reqs, st);
        double rtt = measure_rtt(comm, peer, is_a, pl->n_pp);
        double G = measure_G(comm, peer, is_a, pl, big, &r2[r], y_best);
        /* Oversubscribed, an exchange measures the scheduler (X is then
         * kept from the base, as E and rdv). */
        double X = eager ? measure_duplex(comm, peer, is_a, pl, big, big2, ypp_best, yx_best) : 0;
        if (!is_a)
            continue;
        if (X > 0)
            vX[nX++] = X;
        else if (eager)
            res->nX_bad++;
        t1_best = fmin(t1_best, t1);
        t2_best = fmin(t2_best, t2);
        double g = (t2 - t1) / (pl->n2 - pl->n1);
        if (g < 0) {
            g = 0;
            res->ng_clamped++;
        }
        double L = rtt / 2 - os - orv;
        if (L < 0) {
            L = 0;
            res->nclamped++;
        }
        /* A fitted slope below 0 (noise: a loaded machine, TCP between
         * emulated nodes) is no cost per byte; the file would not read back. */
        if (G < 0) {
            G = 0;
            res->nG_clamped++;
        }
        v[P_L][r] = L;
        v[P_OS][r] = os;
        v[P_OR][r] = orv;
        v[P_G][r] = g;
        v[P_GB][r] = G;
    }
    if (is_a) {
        for (int k = 0; k < NPARAM; k++)
            summarize(v[k], R, k, k == P_GB ? 0 : res->timer, COLUMNS_OF(res));
        qsort(r2, (size_t)R, sizeof *r2, cmp_double);
        res->r2_med = quantile(r2, R, 0.5);
        res->r2_min = r2[0];
        res->g_pool = fmax((t2_best - t1_best) / (pl->n2 - pl->n1), 0);
        res->G_pool = fmax(fit_sizes(pl, y_best, &res->r2_pool), 0);
        tc_logp_robust_t xs;
        double r2x;
        res->X_done = eager;
        if (nX > 0) {
            tc_logp_robust(vX, nX, 0, &xs);
            res->X_med = xs.med;
            res->X_q1 = xs.q1;
            res->X_q3 = xs.q3;
            res->X_min = xs.min;
            res->X_max = xs.max;
            res->X_dropped = xs.dropped;
            res->X_wide = xs.wide;
        }
        for (int k = 0; k < pl->nsizes; k++) {
            res->X_size[k] = (double)pl->sizes[k];
            res->X_tpp[k] = ypp_best[k];
            res->X_tx[k] = yx_best[k];
        }
        res->Gpp_pool = fit_sizes(pl, ypp_best, &r2x);
        res->Gx_pool = fit_sizes(pl, yx_best, &r2x);
        res->X_pool = res->Gpp_pool > 0 && res->Gx_pool > 0 ? res->Gx_pool / res->Gpp_pool : 0;
    }
    /* The scan needs 256 KiB of buffer: the G sizes start at 64 KiB and go
     * to 1 or 4 MiB. */
    if (eager && maxsize >= ((size_t)256 << 10))
        measure_eager(comm, peer, is_a, big, res->G_pool, pl->quick, res);
    for (int k = 0; k < NPARAM; k++)
        free(v[k]);
    free(r2);
    free(vX);
    free(samples);
    free(st);
    free(reqs);
    free(bufs);
    free(big2);
    free(big);
}

/* ---- the shm row: flags between two processes through shared memory ---- */

/* The shm measurements, per repetition (times in microseconds; a writes,
 * b reads, both on one node; flags a page apart in a window of
 * MPI_Win_allocate_shared; waits as in the library: acquire loads with a
 * cpu relax, a yield after TC_SHM_SPIN polls). Single operations are timed
 * one by one (interquartile mean, the clock's cost taken off); where one
 * is too short for that, chunks of SHM_CHUNK are (median of chunk means):
 *   M      one-way flag time: flag ping-pong round trip / 2;
 *   store  a's release store of a flag b is polling (a spins D between
 *          stores, so the previous one has landed); reported only: it is
 *          ~0 on some runs and a whole line transfer on others (the clock
 *          read after it then waits for the line), which o_r counts too,
 *          so the row keeps the store inside L;
 *   call   the library's own path of one barrier call: TC_Barrier on
 *          MPI_COMM_SELF (context lookup, dispatch, statistics). A process
 *          released from barrier k passes it once (return, call again)
 *          before its first flag of barrier k+1: once per barrier on the
 *          critical path of a barrier loop;
 *   o_r    b's wait on a flag that a set D earlier (the line is in a's
 *          cache: the poll's miss is part of o_r);
 *   gb     burst gap: T(n) = first of n release stores to n lines b holds
 *          until b's acknowledgement of the last; (T(64) - T(8)) / 56;
 *   ga     b's fetch-add on a line a has just fetch-added (one arrival of
 *          the central counter: the line comes from the other core);
 *   gc     both hammer one line with fetch-adds: time / total adds
 *          (reported only: a barrier's arrivals alternate, they do not
 *          stream);
 *   G      slope of T(s) = a's copy-in of s bytes + b's copy-out of them,
 *          each timed by its own process (no wait inside), s = 64 KiB ..
 *          1 or 4 MiB (least squares, R^2; the flag between them is a
 *          constant, the intercept, and left out).
 * Row: L = max(M - o_r, 0) (store and transfer), o_s = call (what the
 * process released last spends before its flag leaves), o_r, g = max(gb,
 * ga), G. */
enum { S_M, S_ST, S_OC, S_OR, S_GB, S_GA, S_GC, S_G, NSHM };
static const char *const shm_name[NSHM] = {"M",       "store",    "call",     "o_r",
                                           "g_burst", "g_atomic", "g_stream", "G"};

/* Median of @p n samples (sorts @p v): the shm times are tens of ns, so a
 * single sample taken while the process lost its core would move even a
 * trimmed mean. */
static double median_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return quantile(v, n, 0.5);
}

/* Mean of the samples between the quartiles (sorts @p v): as robust as the
 * median against samples taken while the process lost its core, but it
 * averages over the clock's granularity (10 ns steps on some guests) where
 * a median would return one step. */
static double iq_mean(double *v, int n)
{
    int lo = n / 4, hi = n - n / 4;
    double sum = 0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    for (int i = lo; i < hi; i++)
        sum += v[i];
    return hi > lo ? sum / (hi - lo) : v[n / 2];
}

#define TC_SHM_SPIN 200 /* polls before a yield, as TC_SPIN_COUNT's default */
#define SHM_NBURST  64  /* burst lines */
/* The four single lines sit a page apart (as the flags of different
 * processes' control blocks in the segment: no adjacent-line prefetch
 * between them), the burst lines next to each other after them (one
 * writer's lines, as its own block's). */
#define SHM_PAGE      4096
#define SHM_BURST_OFF ((size_t)4 * SHM_PAGE)
/* The data after the burst lines, on the next page boundary: one page at a
 * 64-byte line, two at 128. */
#define SHM_DATA_OFF                                                                               \
    (SHM_BURST_OFF + ((size_t)SHM_NBURST * TC_CACHELINE + SHM_PAGE - 1) / SHM_PAGE * SHM_PAGE)

typedef struct shm_result {
    double med[NSHM], q1[NSHM], q3[NSHM], min[NSHM], max[NSHM];
    double dropped[NSHM], wide[NSHM]; /* tc_logp_robust: outliers, spread large */
    double L_med, L_min, L_max;       /* L per repetition: M - o_s - o_r */
    double r2_med, r2_min;
    double gb_pool, G_pool, r2_pool; /* as result_t's g_pool, G_pool */
    double timer, delay;
    double nclamped;
} shm_result_t;

typedef struct shm_seg {
    unsigned char *base;
    uint64_t e; /* the last value written to the ping-pong flags (both ranks) */
} shm_seg_t;

/* Lines: 0 fa (b writes), 1 fb (a writes), 2 counter, 3 streamed counter,
 * 8 + j burst line j. */
static tc_atomic_u64_t *shm_line(shm_seg_t *s, int i)
{
    size_t off = i < 8 ? (size_t)i * SHM_PAGE : SHM_BURST_OFF + (size_t)(i - 8) * TC_CACHELINE;
    return (tc_atomic_u64_t *)(void *)(s->base + off);
}
_Static_assert(SHM_BURST_OFF + SHM_NBURST * TC_CACHELINE <= SHM_DATA_OFF, "burst lines overlap");
_Static_assert(SHM_DATA_OFF % SHM_PAGE == 0, "data starts on a page");
static void shm_wait(tc_atomic_u64_t *f, uint64_t v)
{
    unsigned polls = 0;
    /* acquire: pairs with the peer's release store (or fetch-add) */
    while (tc_load_acquire_u64(f) < v) {
        if (polls++ < TC_SHM_SPIN)
            tc_cpu_relax();
        else
            sched_yield();
    }
}

static void shm_spin_us(double us)
{
    double end = now_us() + us;
    while (now_us() < end)
        tc_cpu_relax();
}

/* One-way flag time (a only): the median over chunks of SHM_CHUNK round
 * trips of each chunk's mean, so that a chunk in which a process lost its
 * core (other jobs on the machine) does not count. */
#define SHM_CHUNK 20
static double shm_pingpong(shm_seg_t *s, int is_a, int n)
{
    tc_atomic_u64_t *fa = shm_line(s, 0), *fb = shm_line(s, 1);
    int nc = n / SHM_CHUNK > 0 ? n / SHM_CHUNK : 1;
    double *c = malloc((size_t)nc * sizeof *c), m;
    if (!c)
        oom();
    for (int k = 0; k < nc; k++) {
        double t0 = now_us();
        for (int i = 0; i < SHM_CHUNK; i++) {
            uint64_t e = ++s->e;
            if (is_a) {
                tc_store_release_u64(fb, e);
                shm_wait(fa, e);
            } else {
                shm_wait(fb, e);
                tc_store_release_u64(fa, e);
            }
        }
        c[k] = (now_us() - t0) / (2.0 * SHM_CHUNK);
    }
    m = median_of(c, nc);
    free(c);
    return m;
}

static double shm_os(shm_seg_t *s, int is_a, int n, double delay, double *t)
{
    tc_atomic_u64_t *fb = shm_line(s, 1);
    for (int i = 0; i < n; i++) {
        uint64_t e = ++s->e;
        if (is_a) {
            shm_spin_us(delay);
            double t0 = now_us();
            tc_store_release_u64(fb, e);
            t[i] = now_us() - t0;
        } else {
            shm_wait(fb, e);
        }
    }
    return is_a ? iq_mean(t, n) : 0;
}

static double shm_or(shm_seg_t *s, int is_a, int n, double delay, double *t)
{
    tc_atomic_u64_t *fa = shm_line(s, 0), *fb = shm_line(s, 1);
    for (int i = 0; i < n; i++) {
        uint64_t e = ++s->e;
        if (is_a) {
            tc_store_release_u64(fb, e);
            shm_wait(fa, e);
        } else {
            shm_spin_us(delay); /* a's store has landed in a's cache */
            double t0 = now_us();
            shm_wait(fb, e);
            t[i] = now_us() - t0;
            tc_store_release_u64(fa, e);
        }
    }
    return is_a ? 0 : iq_mean(t, n);
}

/* Minimum over @p tries of a burst of @p nb stores (a only). */
static double shm_burst(shm_seg_t *s, int is_a, int nb, int tries)
{
    tc_atomic_u64_t *fa = shm_line(s, 0);
    double best = INFINITY;
    for (int t = 0; t < tries; t++) {
        uint64_t e = ++s->e;  /* b: ready */
        uint64_t e2 = ++s->e; /* b: got the burst */
        if (is_a) {
            shm_wait(fa, e);
            double t0 = now_us();
            for (int i = 0; i < nb; i++)
                /* release: pairs with b's acquire of the last line */
                tc_store_release_u64(shm_line(s, 8 + i), e2);
            shm_wait(fa, e2);
            double dt = now_us() - t0;
            best = dt < best ? dt : best;
        } else {
            /* Read every line first: a's stores must take them from us. */
            for (int i = 0; i < nb; i++)
                (void)tc_load_acquire_u64(shm_line(s, 8 + i));
            tc_store_release_u64(fa, e); /* release: pairs with a's wait */
            shm_wait(shm_line(s, 8 + nb - 1), e2);
            tc_store_release_u64(fa, e2);
        }
    }
    return best;
}

/* b's fetch-add on the counter line a has just fetch-added (b only). */
static double shm_atomic(shm_seg_t *s, int is_a, int n, double *t)
{
    tc_atomic_u64_t *fa = shm_line(s, 0), *fb = shm_line(s, 1), *c = shm_line(s, 2);
    for (int i = 0; i < n; i++) {
        uint64_t e = ++s->e;
        if (is_a) {
            tc_fetch_add_acq_rel_u64(c, 1);
            tc_store_release_u64(fb, e);
            shm_wait(fa, e);
        } else {
            shm_wait(fb, e);
            double t0 = now_us();
            tc_fetch_add_acq_rel_u64(c, 1);
            t[i] = now_us() - t0;
            tc_store_release_u64(fa, e);
        }
    }
    return is_a ? 0 : iq_mean(t, n);
}

/* Both add @p n times to one line; the time per add (a only). */
static double shm_stream(shm_seg_t *s, int is_a, int n)
{
    tc_atomic_u64_t *fa = shm_line(s, 0), *fb = shm_line(s, 1), *c = shm_line(s, 3);
    uint64_t e = ++s->e;
    uint64_t base;
    if (is_a) {
        base = tc_load_acquire_u64(c);
        tc_store_release_u64(fb, e); /* go */
    } else {
        shm_wait(fb, e);
        base = 0;
    }
    double t0 = now_us();
    for (int i = 0; i < n; i++)
        tc_fetch_add_acq_rel_u64(c, 1);
    if (is_a)
        shm_wait(c, base + 2 * (uint64_t)n);
    double dt = now_us() - t0;
    /* Both done before the line is used again. */
    e = ++s->e;
    if (is_a) {
        shm_wait(fa, e);
    } else {
        tc_store_release_u64(fa, e);
    }
    return is_a ? dt / (2.0 * n) : 0;
}

/* Time of one TC_Barrier on MPI_COMM_SELF: median over chunks of
 * SHM_CHUNK back-to-back calls of each chunk's mean. */
static double shm_call(int n)
{
    int nc = n / SHM_CHUNK > 0 ? n / SHM_CHUNK : 1;
    double *c = malloc((size_t)nc * sizeof *c), m;
    if (!c)
        oom();
    for (int k = 0; k < nc; k++) {
        double t0 = now_us();
        for (int i = 0; i < SHM_CHUNK; i++)
            TC_Barrier(MPI_COMM_SELF);
        c[k] = (now_us() - t0) / SHM_CHUNK;
    }
    m = median_of(c, nc);
    free(c);
    return m;
}

/* This process's own copy time per size, the minimum of the plan's tries:
 * a's copy-in of s bytes into the segment, b's copy-out of them (the lines
 * come from a's cache). Each side times only its own memcpy, never a wait
 * for the other: on a busy machine a wait may include the other's
 * descheduling (milliseconds), which once made the copy slope negative. */
static void shm_copy(shm_seg_t *s, int is_a, const plan_t *pl, char *priv, double *y)
{
    tc_atomic_u64_t *fa = shm_line(s, 0), *fb = shm_line(s, 1);
    unsigned char *data = s->base + SHM_DATA_OFF;
    for (int k = 0; k < pl->nsizes; k++) {
        size_t sz = pl->sizes[k];
        double best = INFINITY;
        for (int t = 0; t < pl->tries_big; t++) {
            uint64_t e = ++s->e;
            double t0 = 0, dt = 0;
            if (is_a) {
                t0 = now_us();
                memcpy(data, priv, sz);
                dt = now_us() - t0;
                tc_store_release_u64(fb, e); /* release: the data before the flag */
                shm_wait(fa, e);             /* b has copied: the next copy may overwrite */
            } else {
                shm_wait(fb, e); /* acquire (in shm_wait): pairs with a's release above */
                t0 = now_us();
                memcpy(priv, data, sz);
                dt = now_us() - t0;
                tc_store_release_u64(fa, e);
            }
            best = dt < best ? dt : best;
        }
        y[k] = best;
    }
}

/* The whole shm measurement between a and b over @p pair (two processes of
 * one node); the result is valid on a. */
static void measure_shm(MPI_Comm pair, int is_a, const plan_t *pl, shm_result_t *res)
{
    const int R = pl->reps, nmax = pl->n_os > pl->n_or ? pl->n_os : pl->n_or;
    const size_t maxsize = pl->sizes[pl->nsizes - 1];
    MPI_Win win;
    shm_seg_t seg = {NULL, 0};
    MPI_Aint size = is_a ? (MPI_Aint)(SHM_DATA_OFF + maxsize) : 0, qsize;
    int disp;
    void *mine, *base;
    MPI_Win_allocate_shared(size, 1, MPI_INFO_NULL, pair, &mine, &win);
    MPI_Win_shared_query(win, 0, &qsize, &disp, &base);
    seg.base = base;
    /* a's window starts on a page (both MPIs map it with mmap), so line i is
     * line i for both processes. */
    if (is_a)
        memset(seg.base, 0, (size_t)size);
    char *priv = malloc(maxsize);
    double *t = malloc((size_t)nmax * sizeof *t), *v[NSHM], *Lv = malloc((size_t)R * sizeof *Lv);
    double *r2 = malloc((size_t)R * sizeof *r2);
    if (!priv || !t || !Lv || !r2)
        oom();
    for (int k = 0; k < NSHM; k++)
        if (!(v[k] = malloc((size_t)R * sizeof *v[k])))
            oom();
    memset(priv, 1, maxsize);
    memset(res, 0, sizeof *res);
    MPI_Barrier(pair); /* the zeroed segment before any flag */

    /* Warm-up, then D: several one-way times, >= 1 us, from the fastest of
     * five calibrations. A calibration taken while a process had lost its
     * core once set D to the 1000 us cap, and 50 such delays per
     * repetition then spanned several scheduler slices on a busy machine,
     * so every sample waited for one (o_r 18 ms): D stays <= 50 us. */
    double m0 = INFINITY;
    for (int i = 0; i < 5; i++)
        m0 = fmin(m0, shm_pingpong(&seg, is_a, pl->n_pp));
    MPI_Bcast(&m0, 1, MPI_DOUBLE, 0, pair);
    res->timer = timer_cost();
    res->delay = fmin(fmax(10 * m0, 1.0), 50.0);
    shm_call(100); /* creates MPI_COMM_SELF's context (local: no peer involved) */
    double t1_best = INFINITY, t2_best = INFINITY, y_in[8], y_out[8];
    for (int k = 0; k < 8; k++)
        y_in[k] = y_out[k] = INFINITY;
    for (int r = 0; r < R; r++) {
        double M = shm_pingpong(&seg, is_a, pl->n_pp);
        double os = fmax(shm_os(&seg, is_a, pl->n_os, res->delay, t) - res->timer, 0);
        double oc = shm_call(4 * pl->n_pp);
        double orv = fmax(shm_or(&seg, is_a, pl->n_or, res->delay, t) - res->timer, 0);
        double ga = fmax(shm_atomic(&seg, is_a, pl->n_or, t) - res->timer, 0);
        double t1 = shm_burst(&seg, is_a, 8, pl->tries);
        double t2 = shm_burst(&seg, is_a, SHM_NBURST, pl->tries);
        double gc = shm_stream(&seg, is_a, 4 * pl->n_pp);
        double ycp[8];
        shm_copy(&seg, is_a, pl, priv, ycp);
        /* b measured o_r, g_atomic and its copy-out times: to a, over MPI
         * (not timed). */
        double bv[2 + 8] = {orv, ga};
        for (int k = 0; k < pl->nsizes; k++)
            bv[2 + k] = ycp[k];
        if (is_a)
            MPI_Recv(bv, 2 + 8, MPI_DOUBLE, 1, TAG_RES, pair, MPI_STATUS_IGNORE);
        else
            MPI_Send(bv, 2 + 8, MPI_DOUBLE, 0, TAG_RES, pair);
        if (!is_a)
            continue;
        orv = bv[0];
        ga = bv[1];
        double ysum[8];
        for (int k = 0; k < pl->nsizes; k++) {
            ysum[k] = ycp[k] + bv[2 + k];
            y_in[k] = fmin(y_in[k], ycp[k]);
            y_out[k] = fmin(y_out[k], bv[2 + k]);
        }
        double G = fit_sizes(pl, ysum, &r2[r]);
        t1_best = fmin(t1_best, t1);
        t2_best = fmin(t2_best, t2);
        double gb = fmax((t2 - t1) / (SHM_NBURST - 8), 0);
        double L = M - orv;
        if (L < 0) {
            L = 0;
            res->nclamped++;
        }
        v[S_M][r] = M;
        v[S_ST][r] = os;
        v[S_OC][r] = oc;
        v[S_OR][r] = orv;
        v[S_GB][r] = gb;
        v[S_GA][r] = ga;
        v[S_GC][r] = gc;
        v[S_G][r] = G;
        Lv[r] = L;
    }
    if (is_a) {
        for (int k = 0; k < NSHM; k++)
            summarize(v[k], R, k, k == S_G ? 0 : res->timer, COLUMNS_OF(res));
        tc_logp_robust_t Ls;
        tc_logp_robust(Lv, R, res->timer, &Ls);
        res->L_med = Ls.med;
        res->L_min = Ls.min;
        res->L_max = Ls.max;
        qsort(r2, (size_t)R, sizeof *r2, cmp_double);
        res->r2_med = quantile(r2, R, 0.5);
        res->r2_min = r2[0];
        res->gb_pool = fmax((t2_best - t1_best) / (SHM_NBURST - 8), 0);
        double ysum[8];
        for (int k = 0; k < pl->nsizes; k++)
            ysum[k] = y_in[k] + y_out[k];
        res->G_pool = fmax(fit_sizes(pl, ysum, &res->r2_pool), 0);
    }
    for (int k = 0; k < NSHM; k++)
        free(v[k]);
    free(r2);
    free(Lv);
    free(t);
    free(priv);
    MPI_Win_free(&win);
}

/* One row of a parameter table: name, median, q1 .. q3, min .. max, unit
 * (@p fmt: the number format, wider for per-byte values). */
static void print_stat_row(int namew, const char *name, const char *fmt, double med, double q1,
                           double q3, double min, double max, const char *unit)
{
    char m[32], iqr[80], mm[80], a1[32], a2[32];
    snprintf(m, sizeof m, fmt, med);
    snprintf(a1, sizeof a1, fmt, q1);
    snprintf(a2, sizeof a2, fmt, q3);
    snprintf(iqr, sizeof iqr, "%s .. %s", a1, a2);
    snprintf(a1, sizeof a1, fmt, min);
    snprintf(a2, sizeof a2, fmt, max);
    snprintf(mm, sizeof mm, "%s .. %s", a1, a2);
    printf("%-*s %12s %25s %25s  %s\n", namew, name, m, iqr, mm, unit);
}

static void print_shm(int a, int b, const shm_result_t *r, int reps)
{
    printf("\n## shm: flags in shared memory between ranks %d and %d (one node), %d "
           "repetitions\n",
           a, b, reps);
    printf("delay D = %.2f us, clock reading %.3f us (taken off store, o_r, g_atomic)\n", r->delay,
           r->timer);
    printf("%-8s %12s %25s %25s  %s\n", "param", "median", "q1 .. q3", "min .. max", "unit");
    for (int k = 0; k < NSHM; k++)
        print_stat_row(8, shm_name[k], k == S_G ? "%.7f" : "%.4f", r->med[k], r->q1[k], r->q3[k],
                       r->min[k], r->max[k], k == S_G ? "us/byte" : "us");
    printf("o_s = call = %.4f us (store reported only: see topocoll-logp.c)\n", r->med[S_OC]);
    printf("L = M - o_r: median %.4f, min .. max %.4f .. %.4f us\n", r->L_med, r->L_min, r->L_max);
    printf("g = max(g_burst, g_atomic) = %.4f us (g_burst from each burst length's minimum over "
           "the repetitions: %.4f us); g_stream (both adding at once) %.4f us is reported only\n",
           fmax(r->gb_pool, r->med[S_GA]), r->gb_pool, r->med[S_GC]);
    printf("G written: %.7f us/byte, the slope of each size's minimum over the repetitions (R^2 "
           "%.5f)\n",
           r->G_pool, r->r2_pool);
    if (r->med[S_G] > 0)
        printf("G: %.2f GB/s (copy-in + copy-out) at the median; fit R^2 median %.5f, min "
               "%.5f\n",
               1e-3 / r->med[S_G], r->r2_med, r->r2_min);
    if (r->nclamped > 0)
        printf("note: L clamped to 0 in %.0f of %d repetitions\n", r->nclamped, reps);
    print_robust(shm_name, NSHM, r->dropped, r->wide, reps);
}

/* The two lowest ranks of the first node (by lowest rank) with two ranks or
 * more; -1 if every rank is alone on its node. */
static void shm_pair_find(int *pa, int *pb)
{
    int rank, p, nrank, me[2];
    MPI_Comm node;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &nrank);
    MPI_Allreduce(&rank, &me[0], 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
    me[1] = nrank;
    int *all = malloc((size_t)p * 2 * sizeof *all);
    if (!all)
        oom();
    MPI_Allgather(me, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD);
    *pa = *pb = -1;
    for (int i = 0; i < p && *pb < 0; i++)
        if (all[2 * i + 1] == 1) { /* the second rank of node all[2i] */
            *pa = all[2 * i];
            *pb = i;
        }
    free(all);
}

/* ---- levels and pairs ---- */

static const char *level_name(int lv)
{
    return lv == LV_TOP ? "top" : tc_model_level_name((tc_model_level_t)lv);
}

/* Levels every rank knows (the group builder skips the others for everyone). */
static unsigned known_levels(const tc_hier_loc_t *locs, int p)
{
    unsigned known = 0;
    for (int l = 0; l < TC_LEVEL_LAST; l++) {
        int i = 0;
        while (i < p && locs[i].id[l] != TC_LOC_UNKNOWN)
            i++;
        if (i == p)
            known |= 1u << l;
    }
    return known;
}

/* The closest common unit of ranks a and b: the lowest known level from which
 * up every known level has the same id for both (an id names a unit only
 * together with the ids above it, locality.h); LV_TOP if there is none. */
static int pair_level(const tc_hier_loc_t *x, const tc_hier_loc_t *y, unsigned known)
{
    int lv = LV_TOP;
    for (int l = TC_LEVEL_LAST - 1; l >= 0; l--) {
        if (!(known & (1u << l)))
            continue;
        if (x->id[l] != y->id[l])
            break;
        lv = l;
    }
    return lv;
}

/* Every rank's locality as the library sees it (the same array on every
 * rank). Without a hierarchy (TC_HIER=0 across nodes) only the real node is
 * known: the lowest MPI_COMM_WORLD rank on it. */
static tc_hier_loc_t *get_localities(int p)
{
    tc_hier_loc_t *locs = malloc((size_t)p * sizeof *locs);
    MPI_Comm dup;
    int have;
    if (!locs)
        oom();
    /* A context of our own, freed before measuring: no segment of the library
     * stays mapped and no library traffic runs while we measure. */
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    if (tc_query_hier_localities(dup, locs, &have) != MPI_SUCCESS) {
        fprintf(stderr, "topocoll-logp: the library's context could not be created\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (!have) {
        MPI_Comm node;
        int rank, leader;
        tc_hier_loc_t me;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
        MPI_Allreduce(&rank, &leader, 1, MPI_INT, MPI_MIN, node);
        MPI_Comm_free(&node);
        for (int l = 0; l < TC_LEVEL_LAST; l++)
            me.id[l] = TC_LOC_UNKNOWN;
        me.id[TC_LEVEL_NODE] = leader;
        MPI_Allgather(&me, (int)sizeof me, MPI_BYTE, locs, (int)sizeof me, MPI_BYTE,
                      MPI_COMM_WORLD);
    }
    MPI_Comm_free(&dup);
    return locs;
}

/* ---- output ---- */

static void print_usage(FILE *f)
{
    fprintf(
        f, "usage: mpirun -n N topocoll-logp [-o PATH] [-r REPS] [--quick] [--level NAME] [-h]\n"
           "  Measures LogP/LogGP parameters (L, o_s, o_r, g in us, G in us/byte; E, rdv and the\n"
           "  duplex factor X) between the lowest pair of ranks at each level of the machine and\n"
           "  writes a TC_LOGP_FILE.\n"
           "  -o PATH       output file (default topocoll-logp.txt)\n"
           "  -r REPS       repetitions per parameter (default 20; 5 with --quick)\n"
           "  --quick       fewer messages and sizes (64 KiB..1 MiB): for tests\n"
           "  --level NAME  measure only this level (core, l2, l3, numa, package, node,\n"
           "                switch1..switch4, top), or shm: only the shm row (flags\n"
           "                through shared memory between two ranks of one node)\n"
           "  -h            this help\n"
           "  Needs N >= 2. Levels come from hwloc, TC_LOCALITY_FILE, TC_NETWORK_TOPOLOGY_FILE.\n");
}

/* Four significant digits: more than the spread supports, and the writer
 * prints every digit of a double. */
static double round4(double v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.4g", v);
    return strtod(buf, NULL);
}

/* A parameter the measurement could not resolve (0 after the timer's cost
 * and the clamps, as under heavy load: a burst's best time no longer than
 * a shorter burst's) is not written as 0, which the model would take as
 * free: the base's value (the defaults, or the --base file's) is kept, and
 * said. @p what names the row. */
static void keep_unresolved(tc_logp_t *x, const tc_logp_t *base, const char *what, bool shm)
{
    struct {
        const char *name;
        double *v;
        double keep;
    } f[] = {{"o_s", &x->o_s, base->o_s}, {"g", &x->g, base->g}, {"G", &x->G, base->G}};
    for (size_t k = 0; k < sizeof f / sizeof f[0]; k++)
        if (!(*f[k].v > 0)) {
            printf("note: %s %s not resolved (measured %g): the base's %g kept\n", what, f[k].name,
                   *f[k].v, f[k].keep);
            *f[k].v = f[k].keep;
        }
    /* The shm row's L may be 0 (a flag hand-over is all overhead); L + o_r
     * may not. A level's o_r may not be 0 either. */
    if (shm ? !(x->L + x->o_r > 0) : !(x->o_r > 0)) {
        printf("note: %s L + o_r not resolved (L %g, o_r %g): the base's %g, %g kept\n", what, x->L,
               x->o_r, base->L, base->o_r);
        x->L = base->L;
        x->o_r = base->o_r;
    }
}

/* The X a measured level gets in the file: the median over the
 * repetitions, within [1, 2] (1: the directions overlap; a ratio below it is
 * noise; above 2 the exchange also lost cache or cores); @p keep when no
 * repetition gave a usable ratio. */
static double duplex_written(const result_t *r, double keep)
{
    if (!(r->X_med > 0))
        return keep;
    return round4(fmin(fmax(r->X_med, 1.0), 2.0));
}

static void print_level(int lv, int a, int b, const result_t *r, int reps)
{
    printf("\n## level %s: ranks %d and %d, %d repetitions\n", level_name(lv), a, b, reps);
    printf("8-byte round trip %.3f us (median of the calibration), delay D = %.2f us, clock "
           "reading %.3f us (taken off o_s, o_r)\n",
           r->rtt, r->delay, r->timer);
    printf("%-5s %12s %25s %25s  %s\n", "param", "median", "q1 .. q3", "min .. max", "unit");
    for (int k = 0; k < NPARAM; k++)
        print_stat_row(5, param_name[k], k == P_GB ? "%.6f" : "%.4f", r->med[k], r->q1[k], r->q3[k],
                       r->min[k], r->max[k], k == P_GB ? "us/byte" : "us");
    if (r->X_done)
        print_stat_row(5, "X", "%.4f", r->X_med, r->X_q1, r->X_q3, r->X_min, r->X_max,
                       "(duplex: exchange / one-way, per byte)");
    if (r->med[P_GB] > 0)
        printf("G: %.2f GB/s at the median; fit R^2 median %.5f, min %.5f\n", 1e-3 / r->med[P_GB],
               r->r2_med, r->r2_min);
    printf("g and G written: %.4f us and %.6f us/byte, from each burst length's and size's "
           "minimum over the repetitions (G fit R^2 %.5f)\n",
           r->g_pool, r->G_pool, r->r2_pool);
    if (r->X_done && r->X_med > 0)
        printf("X written: %.4f, the median clamped to [1, 2] (exchange of s bytes each way "
               "against an s-byte ping-pong's one-way time, ratio of the slopes over the G sizes; "
               "from each size's minimum over the repetitions: %.6f / %.6f us/byte = %.4f)\n",
               duplex_written(r, 0), r->Gx_pool, r->Gpp_pool, r->X_pool);
    else if (r->X_done)
        printf("X not measured (no repetition gave a usable slope): the base's X is written\n");
    if (r->X_done) {
        printf("one-way / exchange, us (each size's minimum):");
        for (int k = 0; k < 8 && r->X_size[k] > 0; k++)
            printf(" %.0f:%.1f/%.1f", r->X_size[k], r->X_tpp[k], r->X_tx[k]);
        printf("\n");
    }
    if (r->nX_bad > 0)
        printf("note: X not computed in %.0f of %d repetitions (a slope came out <= 0: noise)\n",
               r->nX_bad, reps);
    if (r->X_dropped > 0)
        printf("note: outliers dropped (more than %.0f MADs from the median of the repetitions): "
               "X %.0f of %d\n",
               TC_LOGP_OUTLIER_MADS, r->X_dropped, reps);
    if (r->X_wide > 0)
        printf("warning: large spread over the repetitions in X (a process of the pair lost its "
               "core: the machine is busy); the median is doubtful\n");
    if (r->eager_done) {
        printf("ping-pong one-way, us:");
        for (int k = 0; k < EAGER_NSIZES; k++)
            printf(" %.0f:%.3f", r->eager_sizes[k], r->eager_t[k]);
        printf("\n");
        if (r->E > 0)
            printf("eager limit E = %.0f bytes (the largest size still eager, to 8 B); rendezvous "
                   "step rdv = %.3f us (one-way %.3f us at E, %.3f just above, less G)\n",
                   r->E, r->rdv, r->t_lo, r->t_hi);
        else
            printf("eager limit: no step of >= 0.25 us and 20%% between 1 KiB and 256 KiB: E = 0 "
                   "(no rendezvous term)\n");
    }
    if (r->nclamped > 0)
        printf("note: L clamped to 0 in %.0f of %d repetitions (round trip / 2 < o_s + o_r: the "
               "overheads overlap the transfer)\n",
               r->nclamped, reps);
    if (r->ng_clamped > 0)
        printf("note: g came out negative (noise) and was clamped to 0 in %.0f of %d "
               "repetitions\n",
               r->ng_clamped, reps);
    print_robust(param_name, NPARAM, r->dropped, r->wide, reps);
    if (r->nG_clamped > 0)
        printf("note: G came out negative (noise) and was clamped to 0 in %.0f of %d "
               "repetitions\n",
               r->nG_clamped, reps);
}

/* Append each measured level's min..max after a '#' (the loader ignores what
 * follows the five numbers). Returns 0 or -1. */
static int annotate_file(const char *path, const int *written_from, const result_t *res,
                         const shm_result_t *shm)
{
    FILE *f = fopen(path, "r");
    char *text = NULL, line[512];
    size_t len = 0, cap = 0;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f)) {
        char word[32] = "", add[512] = "";
        size_t n = strcspn(line, "\n");
        line[n] = '\0';
        if (sscanf(line, "%31s", word) == 1 && word[0] != '#') {
            int ml = tc_model_level_parse(word);
            if (shm && !strcmp(word, TC_LOGP_SHM_NAME)) {
                n = strcspn(line, "#");
                while (n > 0 && line[n - 1] == ' ')
                    n--;
                line[n] = '\0';
                snprintf(add, sizeof add,
                         " # measured; min..max M %.3g..%.3g call %.3g..%.3g o_r %.3g..%.3g "
                         "g_burst %.3g..%.3g g_atomic %.3g..%.3g G %.3g..%.3g R2 %.4f",
                         shm->min[S_M], shm->max[S_M], shm->min[S_OC], shm->max[S_OC],
                         shm->min[S_OR], shm->max[S_OR], shm->min[S_GB], shm->max[S_GB],
                         shm->min[S_GA], shm->max[S_GA], shm->min[S_G], shm->max[S_G], shm->r2_med);
            } else if (ml >= 0 && written_from[ml] >= 0) {
                const result_t *r = &res[written_from[ml]];
                /* The writer's "# file" becomes what it really is. */
                n = strcspn(line, "#");
                while (n > 0 && line[n - 1] == ' ')
                    n--;
                line[n] = '\0';
                snprintf(add, sizeof add,
                         " # measured%s; min..max L %.3g..%.3g o_s %.3g..%.3g o_r %.3g..%.3g g "
                         "%.3g..%.3g "
                         "G %.3g..%.3g R2 %.4f",
                         written_from[ml] == LV_TOP ? " (as top)" : "", r->min[P_L], r->max[P_L],
                         r->min[P_OS], r->max[P_OS], r->min[P_OR], r->max[P_OR], r->min[P_G],
                         r->max[P_G], r->min[P_GB], r->max[P_GB], r->r2_med);
                if (r->X_done && r->X_med > 0) {
                    size_t at = strlen(add);
                    snprintf(add + at, sizeof add - at, " X %.3g..%.3g", r->X_min, r->X_max);
                }
            }
        }
        size_t need = len + n + strlen(add) + 2;
        if (need > cap) {
            cap = 2 * need;
            char *t = realloc(text, cap);
            if (!t) {
                free(text);
                fclose(f);
                return -1;
            }
            text = t;
        }
        len += (size_t)sprintf(text + len, "%s%s\n", line, add);
    }
    fclose(f);
    f = fopen(path, "w");
    int rc = f && fwrite(text, 1, len, f) == len ? 0 : -1;
    if (f && fclose(f) != 0)
        rc = -1;
    free(text);
    return rc;
}

/* Write the table and read it back with the library's loader. */
static int write_file(const char *path, const tc_logp_table_t *t, const char *origin,
                      const int *written_from, const result_t *res, const shm_result_t *shm)
{
    char err[512];
    tc_logp_table_t back;
    if (tc_logp_table_write(t, path, origin) != 0) {
        fprintf(stderr, "topocoll-logp: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    tc_logp_table_defaults(&back);
    if (annotate_file(path, written_from, res, shm) != 0 ||
        tc_logp_table_load_file(&back, path, err, sizeof err) != 0) {
        /* The annotation is a nicety: fall back to the writer's own file. */
        fprintf(stderr, "topocoll-logp: note: %s without the min..max comments\n", path);
        if (tc_logp_table_write(t, path, origin) != 0) {
            fprintf(stderr, "topocoll-logp: cannot write %s: %s\n", path, strerror(errno));
            return -1;
        }
        tc_logp_table_defaults(&back);
        if (tc_logp_table_load_file(&back, path, err, sizeof err) != 0) {
            fprintf(stderr, "topocoll-logp: %s does not read back: %s\n", path, err);
            return -1;
        }
    }
    for (int l = 0; l < TC_MODEL_LEVEL_LAST; l++) {
        const double *w = &t->level[l].L, *g = &back.level[l].L;
        for (int k = 0; k < NPARAM; k++)
            if (fabs(w[k] - g[k]) > 1e-3 * fabs(w[k]) + 1e-6)
                fprintf(stderr, "topocoll-logp: note: %s %s reads back as %g (wrote %g)\n",
                        tc_model_level_name((tc_model_level_t)l), param_name[k], g[k], w[k]);
        if (tc_logp_duplex(&back.level[l]) != tc_logp_duplex(&t->level[l]))
            fprintf(stderr, "topocoll-logp: note: %s X reads back as %g (wrote %g)\n",
                    tc_model_level_name((tc_model_level_t)l), back.level[l].X, t->level[l].X);
    }
    const double *ws = &t->shm.L, *gs = &back.shm.L;
    for (int k = 0; k < NPARAM; k++)
        if (fabs(ws[k] - gs[k]) > 1e-3 * fabs(ws[k]) + 1e-6)
            fprintf(stderr, "topocoll-logp: note: shm %s reads back as %g (wrote %g)\n",
                    param_name[k], gs[k], ws[k]);
    return 0;
}

static int parse_opts(int argc, char **argv, opts_t *o, int rank)
{
    o->out = "topocoll-logp.txt";
    o->reps = 0;
    o->quick = 0;
    o->level = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            if (rank == 0)
                print_usage(stdout);
            return 1;
        } else if (!strcmp(a, "--quick")) {
            o->quick = 1;
        } else if (!strcmp(a, "-o") && i + 1 < argc) {
            o->out = argv[++i];
        } else if (!strcmp(a, "-r") && i + 1 < argc) {
            char *end;
            long r = strtol(argv[++i], &end, 10);
            if (*end || r < 1 || r > 100000) {
                if (rank == 0)
                    fprintf(stderr, "topocoll-logp: -r %s: expected an integer in 1..100000\n",
                            argv[i]);
                return 2;
            }
            o->reps = (int)r;
        } else if (!strcmp(a, "--level") && i + 1 < argc) {
            const char *name = argv[++i];
            o->level = !strcmp(name, "top")   ? LV_TOP
                       : !strcmp(name, "shm") ? LV_SHM
                                              : tc_model_level_parse(name);
            if (o->level < 0) {
                if (rank == 0)
                    fprintf(stderr,
                            "topocoll-logp: --level %s: expected core, l2, l3, numa, package, "
                            "node, switch1..switch4, top or shm\n",
                            name);
                return 2;
            }
        } else {
            if (rank == 0) {
                fprintf(stderr, "topocoll-logp: unknown or incomplete option '%s'\n", a);
                print_usage(stderr);
            }
            return 2;
        }
    }
    return 0;
}

static void make_plan(const opts_t *o, plan_t *pl)
{
    memset(pl, 0, sizeof *pl);
    pl->reps = o->reps ? o->reps : o->quick ? 5 : 20;
    pl->n_os = o->quick ? 50 : 200;
    pl->n_or = o->quick ? 50 : 200;
    pl->n1 = o->quick ? 10 : 20;
    pl->n2 = o->quick ? 100 : 200;
    pl->n_pp = o->quick ? 50 : 200;
    pl->tries = 3;
    pl->tries_big = 5;
    pl->quick = o->quick;
    size_t top = o->quick ? (size_t)1 << 20 : (size_t)4 << 20;
    for (size_t s = (size_t)64 << 10; s <= top; s *= 2)
        pl->sizes[pl->nsizes++] = s;
}

int main(int argc, char **argv)
{
    int rank, p, rc;
    opts_t o;
    plan_t pl;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    const char *want = getenv("TC_TEST_NP"); /* the test suite's launcher check */
    if (want && atoi(want) != p) {
        fprintf(stderr, "topocoll-logp: %d processes, TC_TEST_NP=%s (wrong launcher?)\n", p, want);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    rc = parse_opts(argc, argv, &o, rank); /* same argv everywhere: same outcome */
    if (rc) {
        MPI_Finalize();
        return rc == 1 ? 0 : rc;
    }
    if (p < 2) {
        printf("topocoll-logp: one process: the parameters are measured between pairs of ranks, "
               "so there is nothing to measure; no file written (run with mpirun -n 2 or "
               "more)\n");
        MPI_Finalize();
        return 0;
    }
    make_plan(&o, &pl);

    /* A path we cannot write should fail now, not after the measurement. */
    if (rank == 0) {
        int existed = access(o.out, F_OK) == 0;
        FILE *f = fopen(o.out, "a");
        rc = f ? 0 : errno;
        if (f)
            fclose(f);
        if (f && !existed)
            remove(o.out);
        if (rc)
            fprintf(stderr, "topocoll-logp: cannot write %s: %s\n", o.out, strerror(rc));
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rc) {
        MPI_Finalize();
        return 1;
    }

    tc_hier_loc_t *locs = get_localities(p);
    unsigned known = known_levels(locs, p);
    int pa[NLV], pb[NLV];
    for (int lv = 0; lv < NLV; lv++)
        pa[lv] = pb[lv] = -1;
    for (int a = 0; a < p; a++)
        for (int b = a + 1; b < p; b++) {
            int lv = pair_level(&locs[a], &locs[b], known);
            if (pa[lv] < 0) {
                pa[lv] = a;
                pb[lv] = b;
            }
        }
    free(locs);

    char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, "\n")] = '\0';
    char date[32];
    time_t tnow = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", gmtime(&tnow));

    if (rank == 0) {
        printf("# topocoll-logp: np=%d, %s, %s\n", p, lib, date);
        printf("# %d repetitions%s; times in us, G in us/byte\n", pl.reps,
               o.quick ? " (--quick)" : "");
        printf("# pairs (lowest ranks whose closest common unit is the level):");
        for (int lv = 0; lv < NLV; lv++)
            if (pa[lv] >= 0)
                printf(" %s(%d,%d)", level_name(lv), pa[lv], pb[lv]);
        printf("\n");
    }
    int sa, sb;
    shm_pair_find(&sa, &sb);
    if (o.level == LV_SHM && sa < 0) {
        if (rank == 0)
            fprintf(stderr, "topocoll-logp: --level shm: no two ranks share a node here; nothing "
                            "measured, no file written\n");
        MPI_Finalize();
        return 1;
    }
    if (o.level >= 0 && o.level < NLV && pa[o.level] < 0) {
        if (rank == 0)
            fprintf(stderr,
                    "topocoll-logp: --level %s: no pair of ranks has that level as "
                    "closest common unit here; nothing measured, no file written\n",
                    level_name(o.level));
        MPI_Finalize();
        return 1;
    }

    /* Oversubscribed (some node runs more ranks than it has CPUs): every
     * blocking wait may hand the CPU to another rank. What the pair then
     * measures on top of the unloaded one-way time is the scheduler round w
     * (model/logp.h); the other parameters, and the eager scan, would be
     * distorted by it, so they come from the base table (TC_LOGP_FILE, e.g.
     * the file of an np=2 run, else the defaults). */
    int oversub;
    {
        MPI_Comm node;
        int nsize, mine;
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
        MPI_Comm_size(node, &nsize);
        MPI_Comm_free(&node);
        mine = cpus > 0 && nsize > cpus;
        MPI_Allreduce(&mine, &oversub, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    }
    tc_logp_table_t base;
    tc_logp_table_defaults(&base);
    const char *base_path = getenv("TC_LOGP_FILE");
    int base_from_file = 0;
    if (base_path && *base_path) {
        char err[512];
        tc_logp_table_t b = base;
        if (tc_logp_table_load_file(&b, base_path, err, sizeof err) == 0) {
            base = b;
            base_from_file = 1;
        } else if (rank == 0) {
            fprintf(stderr, "topocoll-logp: TC_LOGP_FILE: %s; base: the defaults\n", err);
        }
    }
    if (rank == 0 && oversub)
        printf("# oversubscribed (more ranks than CPUs on a node): measuring w only; the other "
               "parameters come from %s\n",
               base_from_file ? base_path : "the defaults (set TC_LOGP_FILE to an np=2 file)");

    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    result_t res[NLV];
    int measured[NLV] = {0};
    for (int lv = 0; lv < NLV; lv++) {
        if (pa[lv] < 0 || (o.level >= 0 && o.level != lv))
            continue;
        sleepy_barrier(comm);
        if (rank == pa[lv] || rank == pb[lv])
            measure_pair(comm, rank == pa[lv] ? pb[lv] : pa[lv], rank == pa[lv], &pl, !oversub,
                         &res[lv]);
        sleepy_barrier(comm);
        MPI_Bcast(&res[lv], (int)sizeof res[lv], MPI_BYTE, pa[lv], comm);
        measured[lv] = 1;
        if (rank == 0) {
            print_level(lv, pa[lv], pb[lv], &res[lv], pl.reps);
            fflush(stdout);
        }
    }
    /* The shm row: flags between two ranks of one node. */
    shm_result_t shres;
    int shm_measured = 0;
    if ((o.level < 0 || o.level == LV_SHM) && sa >= 0) {
        MPI_Comm pair;
        sleepy_barrier(comm);
        MPI_Comm_split(comm, rank == sa || rank == sb ? 0 : MPI_UNDEFINED, rank == sa ? 0 : 1,
                       &pair);
        if (pair != MPI_COMM_NULL) {
            measure_shm(pair, rank == sa, &pl, &shres);
            MPI_Comm_free(&pair);
        }
        sleepy_barrier(comm);
        MPI_Bcast(&shres, (int)sizeof shres, MPI_BYTE, sa, comm);
        shm_measured = 1;
        if (rank == 0) {
            print_shm(sa, sb, &shres, pl.reps);
            fflush(stdout);
        }
    } else if (o.level < 0 && rank == 0) {
        printf("\nnote: no two ranks share a node: the shm row is not measured (default kept)\n");
    }
    double hop = 0;
    if (oversub) {
        hop = ring_hop(comm, pl.reps, o.quick ? 100 : 500);
        if (rank == 0)
            printf("\n## oversubscribed: 8-byte token around a ring of all %d ranks: %.3f us per "
                   "hop (median of %d); w = hop - (o_s + L + o_r) of the base\n",
                   p, hop, pl.reps);
    }
    MPI_Comm_free(&comm);

    rc = 0;
    if (rank == 0) {
        tc_logp_table_t t;
        int from[TC_MODEL_LEVEL_LAST];
        t = base;
        for (int l = 0; l < TC_MODEL_LEVEL_LAST; l++)
            from[l] = -1;
        for (int lv = 0; lv < TC_LEVEL_LAST; lv++)
            if (measured[lv])
                from[lv] = lv;
        /* "top": other nodes with no known switch in common. The closest unit
         * the model can name for them is the level just above the highest
         * level every rank knows (switch1 without a network file). */
        int top_as = -1;
        if (measured[LV_TOP]) {
            int hi = -1;
            for (int l = 0; l < TC_LEVEL_LAST; l++)
                if (known & (1u << l))
                    hi = l;
            if (hi >= TC_LEVEL_NODE && hi + 1 < TC_LEVEL_LAST && from[hi + 1] < 0) {
                top_as = hi + 1;
                from[top_as] = LV_TOP;
            }
        }
        for (int l = 0; l < TC_MODEL_LEVEL_LAST; l++) {
            if (from[l] < 0)
                continue;
            const result_t *r = &res[from[l]];
            tc_logp_t *x = &t.level[l];
            if (oversub) {
                /* w: a ring hop with every rank active, less the base's
                 * unloaded one-way time. (The pair's own figures, taken
                 * while the others sleep, are bimodal: 0.2 or 6 us.) */
                x->w = round4(fmax(hop - (x->o_s + x->L + x->o_r), 0));
            } else {
                /* E, rdv measured; w (not measurable here) kept from the base. */
                const tc_logp_t was = *x;
                *x = (tc_logp_t){.L = round4(r->med[P_L]),
                                 .o_s = round4(r->med[P_OS]),
                                 .o_r = round4(r->med[P_OR]),
                                 .g = round4(r->g_pool),
                                 .G = round4(r->G_pool),
                                 .E = r->E,
                                 .rdv = round4(r->rdv),
                                 .w = x->w,
                                 .X = duplex_written(r, x->X)};
                keep_unresolved(x, &was, tc_model_level_name((tc_model_level_t)l), false);
            }
            t.source[l] = TC_LOGP_SOURCE_FILE;
        }

        if (shm_measured && !oversub) {
            const tc_logp_t was = t.shm;
            t.shm = (tc_logp_t){.L = round4(shres.L_med),
                                .o_s = round4(shres.med[S_OC]),
                                .o_r = round4(shres.med[S_OR]),
                                .g = round4(fmax(shres.gb_pool, shres.med[S_GA])),
                                .G = round4(shres.G_pool),
                                .X = t.shm.X};
            keep_unresolved(&t.shm, &was, TC_LOGP_SHM_NAME, true);
            t.shm_source = TC_LOGP_SOURCE_FILE;
        }

        printf("\n## Summary (medians; written to %s, other levels keep their defaults)\n", o.out);
        printf("%-8s %10s %10s %10s %10s %12s %8s %8s %8s %6s\n", "level", "L", "o_s", "o_r", "g",
               "G", "E", "rdv", "w", "X");
        for (int l = 0; l < TC_MODEL_LEVEL_LAST; l++) {
            if (from[l] < 0)
                continue;
            const tc_logp_t *x = &t.level[l];
            printf("%-8s %10.4f %10.4f %10.4f %10.4f %12.7f %8.0f %8.3f %8.3f %6.3f%s%s\n",
                   tc_model_level_name((tc_model_level_t)l), x->L, x->o_s, x->o_r, x->g, x->G, x->E,
                   x->rdv, x->w, tc_logp_duplex(x), from[l] == LV_TOP ? "  (measured as top)" : "",
                   oversub ? "  (w measured; the rest from the base)" : "");
        }
        if (shm_measured && oversub) {
            printf("%-8s not written (oversubscribed: the base's row is kept)\n", TC_LOGP_SHM_NAME);
        } else if (shm_measured) {
            const tc_logp_t *x = &t.shm;
            printf("%-8s %10.4f %10.4f %10.4f %10.4f %12.7f  (flags in shared memory)\n",
                   TC_LOGP_SHM_NAME, x->L, x->o_s, x->o_r, x->g, x->G);
        }
        if (measured[LV_TOP] && top_as < 0)
            printf("note: level top measured but not written: no model level above the known "
                   "ones is free\n");

        /* A comment line of the file: the MPI's version string and the
         * base's path are cut at 160 bytes each (MPICH's version buffer is
         * 8 KiB: gcc's -Wformat-truncation at -O0 counts all of it). */
        char origin[512];
        snprintf(origin, sizeof origin,
                 "topocoll-logp, np=%d, %.160s, %s, %d repetitions%s%s%.160s", p, lib, date,
                 pl.reps, o.quick ? " (--quick)" : "",
                 oversub ? ", oversubscribed: w measured, the rest from " : "",
                 oversub ? (base_from_file ? base_path : "the defaults") : "");
        if (write_file(o.out, &t, origin, from, res, shm_measured && !oversub ? &shres : NULL) != 0)
            rc = 1;
        else
            printf("wrote %s\n", o.out);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return rc;
}
