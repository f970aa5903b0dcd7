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
 *        the fit's R^2.
 * Each parameter is reported as the median over R repetitions with its
 * quartiles and min..max; the file gets the medians (and the min..max after
 * a '#', which the loader ignores). Levels not measured keep the defaults.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/ctx.h"
#include "hier/hier.h"
#include "model/logp.h"

_Static_assert((int)TC_MODEL_LEVEL_LAST == (int)TC_LEVEL_LAST,
               "model levels and hierarchy levels must be the same list");

/* Pair levels: TC_LEVEL_CORE..TC_LEVEL_SWITCH4, and TOP for ranks with no
 * known unit in common. */
#define LV_TOP TC_LEVEL_LAST
#define NLV    (TC_LEVEL_LAST + 1)

enum { P_L, P_OS, P_OR, P_G, P_GB, NPARAM };
static const char *const param_name[NPARAM] = {"L", "o_s", "o_r", "g", "G"};

enum { TAG_CAL = 100, TAG_OS, TAG_OR, TAG_ACK, TAG_RDY, TAG_G, TAG_PP, TAG_BIG, TAG_RES };

#define SMALL 8 /* bytes of a small (eager) message */

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
} plan_t;

/* Result of one level, computed on rank a and broadcast. */
typedef struct result {
    double med[NPARAM], q1[NPARAM], q3[NPARAM], min[NPARAM], max[NPARAM];
    double r2_med, r2_min; /* fit quality of G */
    double rtt;            /* median round trip of 8 bytes */
    double delay;          /* D */
    double timer;          /* cost of one clock reading, taken off o_s and o_r */
    double nclamped;       /* repetitions where L was clamped to 0 */
    double ng_clamped;     /* repetitions where g came out negative (clamped) */
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

static void summarize(double *v, int n, int k, result_t *r)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    r->med[k] = quantile(v, n, 0.5);
    r->q1[k] = quantile(v, n, 0.25);
    r->q3[k] = quantile(v, n, 0.75);
    r->min[k] = v[0];
    r->max[k] = v[n - 1];
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

/* G and R^2 of one repetition (a only). */
static double measure_G(MPI_Comm comm, int peer, int is_a, const plan_t *pl, char *big, double *r2)
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
    }
    *r2 = 0;
    return is_a ? fit_slope(x, y, pl->nsizes, r2) : 0;
}

static void oom(void)
{
    fprintf(stderr, "topocoll-logp: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* The whole measurement between a and b; the result is valid on a. */
static void measure_pair(MPI_Comm comm, int peer, int is_a, const plan_t *pl, result_t *res)
{
    int R = pl->reps;
    size_t maxsize = pl->sizes[pl->nsizes - 1];
    char *big = malloc(maxsize), *bufs = malloc((size_t)pl->n2 * SMALL);
    MPI_Request *reqs = malloc((size_t)pl->n2 * sizeof *reqs);
    MPI_Status *st = malloc((size_t)pl->n2 * sizeof *st);
    double *v[NPARAM], *r2 = malloc((size_t)R * sizeof *r2);
    double *samples = malloc((size_t)(pl->n_os > pl->n_or ? pl->n_os : pl->n_or) * sizeof *samples);
    if (!big || !bufs || !reqs || !st || !r2 || !samples)
        oom();
    for (int k = 0; k < NPARAM; k++)
        if (!(v[k] = malloc((size_t)R * sizeof *v[k])))
            oom();
    memset(big, 1, maxsize); /* first touch outside the timed loops */
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
        double G = measure_G(comm, peer, is_a, pl, big, &r2[r]);
        if (!is_a)
            continue;
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
        v[P_L][r] = L;
        v[P_OS][r] = os;
        v[P_OR][r] = orv;
        v[P_G][r] = g;
        v[P_GB][r] = G;
    }
    if (is_a) {
        for (int k = 0; k < NPARAM; k++)
            summarize(v[k], R, k, res);
        qsort(r2, (size_t)R, sizeof *r2, cmp_double);
        res->r2_med = quantile(r2, R, 0.5);
        res->r2_min = r2[0];
    }
    for (int k = 0; k < NPARAM; k++)
        free(v[k]);
    free(r2);
    free(samples);
    free(st);
    free(reqs);
    free(bufs);
    free(big);
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
    tc_ctx_t *ctx;
    if (!locs)
        oom();
    /* A context of our own, freed before measuring: no segment of the library
     * stays mapped and no library traffic runs while we measure. */
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    if (tc_ctx_get(dup, &ctx) != MPI_SUCCESS) {
        fprintf(stderr, "topocoll-logp: the library's context could not be created\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (ctx->hier) {
        memcpy(locs, ctx->hier->locs, (size_t)p * sizeof *locs);
    } else {
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
           "  Measures LogP/LogGP parameters (L, o_s, o_r, g in us, G in us/byte) between the\n"
           "  lowest pair of ranks at each level of the machine and writes a TC_LOGP_FILE.\n"
           "  -o PATH       output file (default topocoll-logp.txt)\n"
           "  -r REPS       repetitions per parameter (default 20; 5 with --quick)\n"
           "  --quick       fewer messages and sizes (64 KiB..1 MiB): for tests\n"
           "  --level NAME  measure only this level (core, l2, l3, numa, package, node,\n"
           "                switch1..switch4, top)\n"
           "  -h            this help\n"
           "  Needs N >= 2. Levels come from hwloc, TC_LOCALITY_FILE, TC_NETWORK_TOPOLOGY_FILE.\n");
}

static void print_level(int lv, int a, int b, const result_t *r, int reps)
{
    printf("\n## level %s: ranks %d and %d, %d repetitions\n", level_name(lv), a, b, reps);
    printf("8-byte round trip %.3f us (median of the calibration), delay D = %.2f us, clock "
           "reading %.3f us (taken off o_s, o_r)\n",
           r->rtt, r->delay, r->timer);
    printf("%-5s %12s %25s %25s  %s\n", "param", "median", "q1 .. q3", "min .. max", "unit");
    for (int k = 0; k < NPARAM; k++) {
        const char *fmt = k == P_GB ? "%.6f" : "%.4f";
        char med[32], iqr[80], mm[80], a1[32], a2[32];
        snprintf(med, sizeof med, fmt, r->med[k]);
        snprintf(a1, sizeof a1, fmt, r->q1[k]);
        snprintf(a2, sizeof a2, fmt, r->q3[k]);
        snprintf(iqr, sizeof iqr, "%s .. %s", a1, a2);
        snprintf(a1, sizeof a1, fmt, r->min[k]);
        snprintf(a2, sizeof a2, fmt, r->max[k]);
        snprintf(mm, sizeof mm, "%s .. %s", a1, a2);
        printf("%-5s %12s %25s %25s  %s\n", param_name[k], med, iqr, mm,
               k == P_GB ? "us/byte" : "us");
    }
    if (r->med[P_GB] > 0)
        printf("G: %.2f GB/s at the median; fit R^2 median %.5f, min %.5f\n", 1e-3 / r->med[P_GB],
               r->r2_med, r->r2_min);
    if (r->nclamped > 0)
        printf("note: L clamped to 0 in %.0f of %d repetitions (round trip / 2 < o_s + o_r: the "
               "overheads overlap the transfer)\n",
               r->nclamped, reps);
    if (r->ng_clamped > 0)
        printf("note: g came out negative (noise) and was clamped to 0 in %.0f of %d "
               "repetitions\n",
               r->ng_clamped, reps);
}

/* Append each measured level's min..max after a '#' (the loader ignores what
 * follows the five numbers). Returns 0 or -1. */
static int annotate_file(const char *path, const int *written_from, const result_t *res)
{
    FILE *f = fopen(path, "r");
    char *text = NULL, line[512];
    size_t len = 0, cap = 0;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f)) {
        char word[32] = "", add[256] = "";
        size_t n = strcspn(line, "\n");
        line[n] = '\0';
        if (sscanf(line, "%31s", word) == 1 && word[0] != '#') {
            int ml = tc_model_level_parse(word);
            if (ml >= 0 && written_from[ml] >= 0) {
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
                      const int *written_from, const result_t *res)
{
    char err[512];
    tc_logp_table_t back;
    if (tc_logp_table_write(t, path, origin) != 0) {
        fprintf(stderr, "topocoll-logp: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    tc_logp_table_defaults(&back);
    if (annotate_file(path, written_from, res) != 0 ||
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
    }
    return 0;
}

/* Four significant digits: more than the spread supports, and the writer
 * prints every digit of a double. */
static double round4(double v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.4g", v);
    return strtod(buf, NULL);
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
            o->level = !strcmp(name, "top") ? LV_TOP : tc_model_level_parse(name);
            if (o->level < 0) {
                if (rank == 0)
                    fprintf(stderr,
                            "topocoll-logp: --level %s: expected core, l2, l3, numa, package, "
                            "node, switch1..switch4 or top\n",
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
    if (o.level >= 0 && pa[o.level] < 0) {
        if (rank == 0)
            fprintf(stderr,
                    "topocoll-logp: --level %s: no pair of ranks has that level as "
                    "closest common unit here; nothing measured, no file written\n",
                    level_name(o.level));
        MPI_Finalize();
        return 1;
    }

    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    result_t res[NLV];
    int measured[NLV] = {0};
    for (int lv = 0; lv < NLV; lv++) {
        if (pa[lv] < 0 || (o.level >= 0 && o.level != lv))
            continue;
        sleepy_barrier(comm);
        if (rank == pa[lv] || rank == pb[lv])
            measure_pair(comm, rank == pa[lv] ? pb[lv] : pa[lv], rank == pa[lv], &pl, &res[lv]);
        sleepy_barrier(comm);
        MPI_Bcast(&res[lv], (int)sizeof res[lv], MPI_BYTE, pa[lv], comm);
        measured[lv] = 1;
        if (rank == 0) {
            print_level(lv, pa[lv], pb[lv], &res[lv], pl.reps);
            fflush(stdout);
        }
    }
    MPI_Comm_free(&comm);

    rc = 0;
    if (rank == 0) {
        tc_logp_table_t t;
        int from[TC_MODEL_LEVEL_LAST];
        tc_logp_table_defaults(&t);
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
            t.level[l] = (tc_logp_t){.L = round4(r->med[P_L]),
                                     .o_s = round4(r->med[P_OS]),
                                     .o_r = round4(r->med[P_OR]),
                                     .g = round4(r->med[P_G]),
                                     .G = round4(r->med[P_GB])};
            t.source[l] = TC_LOGP_SOURCE_FILE;
        }

        printf("\n## Summary (medians; written to %s, other levels keep their defaults)\n", o.out);
        printf("%-8s %10s %10s %10s %10s %12s\n", "level", "L", "o_s", "o_r", "g", "G");
        for (int l = 0; l < TC_MODEL_LEVEL_LAST; l++) {
            if (from[l] < 0)
                continue;
            const tc_logp_t *x = &t.level[l];
            printf("%-8s %10.4f %10.4f %10.4f %10.4f %12.7f%s\n",
                   tc_model_level_name((tc_model_level_t)l), x->L, x->o_s, x->o_r, x->g, x->G,
                   from[l] == LV_TOP ? "  (measured as top)" : "");
        }
        if (measured[LV_TOP] && top_as < 0)
            printf("note: level top measured but not written: no model level above the known "
                   "ones is free\n");

        char origin[512];
        snprintf(origin, sizeof origin, "topocoll-logp, np=%d, %s, %s, %d repetitions%s", p, lib,
                 date, pl.reps, o.quick ? " (--quick)" : "");
        if (write_file(o.out, &t, origin, from, res) != 0)
            rc = 1;
        else
            printf("wrote %s\n", o.out);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return rc;
}
