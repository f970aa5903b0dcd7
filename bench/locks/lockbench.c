/* topocoll-lockbench: paper 004's reader-writer lock benchmark, without MPI.
 *
 * One writer and N readers, each a forked process bound to a core where the
 * machine has one for it, sharing an anonymous MAP_SHARED mapping that holds the
 * lock and the "database" (a counter). Modes:
 *   read-only   N readers: rdlock(own) / read / rdunlock for --duration ms.
 *   write-only  the writer: wrlock(all) / increment / wrunlock for --duration ms.
 *   concurrent  the writer: --iterations x {wrlock(all); cnt++; wrunlock; usleep(10)};
 *               each reader: rdlock(own); local = cnt; rdunlock until local reaches
 *               --iterations.
 * Metrics: read and write throughput (acquisitions per second); in concurrent mode
 * also the write overhead, the time from the start of wrlock() to holding all N.
 * Every (mode, scheme, N) runs --reps times: mean, sample standard deviation and
 * relative error (sd / mean). CSV on stdout (or --csv FILE); --plot PREFIX writes
 * PREFIX-<mode>.png with gnuplot, one curve per scheme. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/wait.h" /* TC_WAIT_* */
#include "locks/rwlock.h"

#define LB_MAX_READERS 64
#define LB_LINE        TC_CACHELINE /* lock memory must be aligned to it */

enum lb_mode { LB_READ_ONLY, LB_WRITE_ONLY, LB_CONCURRENT, LB_MODE_LAST };
static const char *const lb_mode_names[LB_MODE_LAST] = {"read-only", "write-only", "concurrent"};

enum lb_metric { LB_READ_TPUT, LB_WRITE_TPUT, LB_WRITE_OVERHEAD, LB_METRIC_LAST };
static const char *const lb_metric_names[LB_METRIC_LAST] = {"read_throughput", "write_throughput",
                                                            "write_overhead"};
static const char *const lb_metric_units[LB_METRIC_LAST] = {"acq/s", "acq/s", "us"};

/* One result slot per process, each on its own line (no false sharing with the
 * lock or with each other). */
typedef struct lb_slot {
    _Alignas(LB_LINE) uint64_t count; /* acquisitions */
    double elapsed_s;
    double wlock_s; /* writer: total time inside wrlock() */
    int rc;         /* first nonzero lock return code */
} lb_slot_t;

typedef struct lb_shared {
    _Alignas(LB_LINE) _Atomic uint32_t go; /* set by the parent once all are ready */
    _Atomic uint32_t stop;                 /* set by the parent after --duration */
    _Alignas(LB_LINE) _Atomic uint32_t ready;
    _Alignas(LB_LINE) uint64_t cnt; /* the protected "database" */
    lb_slot_t writer;
    lb_slot_t reader[LB_MAX_READERS];
    _Alignas(LB_LINE) unsigned char lock_mem[];
} lb_shared_t;

typedef struct lb_config {
    int rmin, rmax, reps, iterations;
    double duration_s;
    uint32_t spin;
    int wait; /* tc_wait_policy_t */
    int schemes[TC_LOCK_SCHEME_LAST];
    int nschemes;
    int modes[LB_MODE_LAST];
    const char *csv, *plot;
    double run_timeout_s;
} lb_config_t;

static int lb_ncpus;
static int lb_cpus[1024];

static double lb_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void lb_bind(int slot)
{
    if (lb_ncpus <= 0)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(lb_cpus[slot % lb_ncpus], &set);
    sched_setaffinity(0, sizeof set, &set);
}

static void lb_pause_until(_Atomic uint32_t *flag)
{
    unsigned polls = 0;
    /* acquire: pairs with the parent's release store of go */
    while (atomic_load_explicit(flag, memory_order_acquire) == 0)
        if (++polls > 100)
            sched_yield();
}

/* The words of --wait (TC_WAIT's), in tc_wait_policy_t order. */
static const char *const lb_wait_names[] = {"auto", "spin", "yield", "futex"};
_Static_assert(sizeof lb_wait_names / sizeof lb_wait_names[0] == TC_WAIT_LAST, "--wait words");

static tc_lock_opts_t lb_opts(const lb_config_t *c)
{
    tc_lock_opts_t o = {.timeout_s = 0.0, .spin_polls = c->spin, .wait_policy = c->wait};
    return o;
}

static int lb_attach(lb_shared_t *sh, size_t lock_bytes, const lb_config_t *c, tc_rwlock_t *lk)
{
    tc_lock_opts_t o = lb_opts(c);
    return tc_rwlock_attach(lk, sh->lock_mem, lock_bytes, &o);
}

static int lb_reader(lb_shared_t *sh, size_t lock_bytes, const lb_config_t *c, enum lb_mode mode,
                     int x)
{
    tc_rwlock_t lk;
    lb_slot_t *s = &sh->reader[x];
    if ((s->rc = lb_attach(sh, lock_bytes, c, &lk)) != 0)
        return 1;
    atomic_fetch_add_explicit(&sh->ready, 1, memory_order_relaxed);
    lb_pause_until(&sh->go);
    uint64_t n = 0, local = 0;
    double t0 = lb_now();
    for (;;) {
        if (mode == LB_READ_ONLY) {
            /* relaxed: only ends the loop */
            if (atomic_load_explicit(&sh->stop, memory_order_relaxed))
                break;
        } else if (local >= (uint64_t)c->iterations) {
            break;
        }
        int rc = tc_rwlock_rdlock(&lk, x);
        if (rc != 0) {
            s->rc = rc;
            break;
        }
        local = sh->cnt;
        tc_rwlock_rdunlock(&lk, x);
        n++;
    }
    s->elapsed_s = lb_now() - t0;
    s->count = n;
    return 0;
}

static int lb_writer(lb_shared_t *sh, size_t lock_bytes, const lb_config_t *c, enum lb_mode mode)
{
    tc_rwlock_t lk;
    lb_slot_t *s = &sh->writer;
    if ((s->rc = lb_attach(sh, lock_bytes, c, &lk)) != 0)
        return 1;
    atomic_fetch_add_explicit(&sh->ready, 1, memory_order_relaxed);
    lb_pause_until(&sh->go);
    uint64_t n = 0;
    double wl = 0.0;
    double t0 = lb_now();
    for (;;) {
        if (mode == LB_WRITE_ONLY) {
            if (atomic_load_explicit(&sh->stop, memory_order_relaxed))
                break;
        } else if (n >= (uint64_t)c->iterations) {
            break;
        }
        double a = mode == LB_CONCURRENT ? lb_now() : 0.0;
        int rc = tc_rwlock_wrlock(&lk);
        if (mode == LB_CONCURRENT)
            wl += lb_now() - a;
        if (rc != 0) {
            s->rc = rc;
            break;
        }
        sh->cnt++;
        tc_rwlock_wrunlock(&lk);
        n++;
        if (mode == LB_CONCURRENT)
            usleep(10);
    }
    s->elapsed_s = lb_now() - t0;
    s->count = n;
    s->wlock_s = wl;
    return 0;
}

/* One run; fills m[metric] (NAN when not measured). @return 0 or -1 on failure. */
static int lb_run(const lb_config_t *c, enum lb_mode mode, tc_lock_scheme_t scheme, int nreaders,
                  double m[LB_METRIC_LAST])
{
    for (int k = 0; k < LB_METRIC_LAST; k++)
        m[k] = NAN;
    size_t lock_bytes = tc_rwlock_size(scheme, nreaders);
    size_t bytes = sizeof(lb_shared_t) + lock_bytes;
    lb_shared_t *sh = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED)
        return -1;
    tc_rwlock_t lk;
    tc_lock_opts_t o = lb_opts(c);
    int rc = tc_rwlock_init(&lk, sh->lock_mem, lock_bytes, scheme, nreaders, &o);
    if (rc != 0) {
        char why[128];
        fprintf(stderr, "lockbench: init %s: %s\n", tc_lock_scheme_name(scheme),
                tc_err_string(rc, why, sizeof why));
        munmap(sh, bytes);
        return -1;
    }
    pid_t pids[LB_MAX_READERS + 1];
    int np = 0;
    int with_writer = mode != LB_READ_ONLY, with_readers = mode != LB_WRITE_ONLY;
    fflush(NULL);
    if (with_writer) {
        pid_t p = fork();
        if (p == 0) {
            lb_bind(0);
            _exit(lb_writer(sh, lock_bytes, c, mode));
        }
        pids[np++] = p;
    }
    for (int x = 0; with_readers && x < nreaders; x++) {
        pid_t p = fork();
        if (p == 0) {
            /* the writer has core 0; readers fill the others first */
            lb_bind(with_writer ? x + 1 : x);
            _exit(lb_reader(sh, lock_bytes, c, mode, x));
        }
        pids[np++] = p;
    }
    int failed = 0;
    double deadline = lb_now() + c->run_timeout_s;
    while (atomic_load_explicit(&sh->ready, memory_order_relaxed) < (uint32_t)np &&
           lb_now() < deadline)
        usleep(100);
    /* release: pairs with the children's acquire in lb_pause_until() */
    atomic_store_explicit(&sh->go, 1, memory_order_release);
    if (mode != LB_CONCURRENT) {
        usleep((useconds_t)(c->duration_s * 1e6));
        atomic_store_explicit(&sh->stop, 1, memory_order_relaxed);
    }
    for (int i = 0; i < np; i++) {
        int st;
        for (;;) {
            pid_t r = waitpid(pids[i], &st, WNOHANG);
            if (r == pids[i])
                break;
            if (lb_now() > deadline) {
                fprintf(stderr, "lockbench: %s %s N=%d: run exceeded %.0f s, killed\n",
                        lb_mode_names[mode], tc_lock_scheme_name(scheme), nreaders,
                        c->run_timeout_s);
                for (int k = 0; k < np; k++)
                    kill(pids[k], SIGKILL);
                deadline = 1e300;
                failed = 1;
            }
            usleep(200);
        }
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            failed = 1;
    }
    if (!failed && with_writer && sh->writer.rc != 0)
        failed = 1;
    for (int x = 0; !failed && with_readers && x < nreaders; x++)
        if (sh->reader[x].rc != 0)
            failed = 1;
    if (!failed) {
        if (with_readers) {
            double total = 0.0, longest = 0.0;
            for (int x = 0; x < nreaders; x++) {
                total += (double)sh->reader[x].count;
                if (sh->reader[x].elapsed_s > longest)
                    longest = sh->reader[x].elapsed_s;
            }
            m[LB_READ_TPUT] = total / longest;
        }
        if (with_writer) {
            m[LB_WRITE_TPUT] = (double)sh->writer.count / sh->writer.elapsed_s;
            if (mode == LB_CONCURRENT)
                m[LB_WRITE_OVERHEAD] = 1e6 * sh->writer.wlock_s / (double)sh->writer.count;
        }
        if (mode == LB_CONCURRENT && sh->cnt != (uint64_t)c->iterations)
            failed = 1; /* the writer lost an increment: a lock bug, not noise */
    }
    if (!failed)
        tc_rwlock_destroy(&lk);
    munmap(sh, bytes);
    return failed ? -1 : 0;
}

typedef struct lb_stat {
    double mean, sd, relerr;
    int n;
} lb_stat_t;

static lb_stat_t lb_stats(const double *v, int n)
{
    lb_stat_t s = {NAN, NAN, NAN, 0};
    double sum = 0.0;
    for (int i = 0; i < n; i++)
        if (!isnan(v[i])) {
            sum += v[i];
            s.n++;
        }
    if (s.n == 0)
        return s;
    s.mean = sum / s.n;
    double ss = 0.0;
    for (int i = 0; i < n; i++)
        if (!isnan(v[i]))
            ss += (v[i] - s.mean) * (v[i] - s.mean);
    s.sd = s.n > 1 ? sqrt(ss / (s.n - 1)) : 0.0;
    s.relerr = s.mean != 0.0 ? s.sd / s.mean : NAN;
    return s;
}

static void lb_usage(FILE *f)
{
    fprintf(f, "usage: topocoll-lockbench [options]\n"
               "  --modes LIST        read-only,write-only,concurrent (default all)\n"
               "  --schemes LIST      rwlock,1n-mutex,2n-mutex,n-mutex-signal,n-mcs (default all)\n"
               "  --readers MIN[-MAX] reader processes (default 1-8)\n"
               "  --reps R            repetitions per point (default 10)\n"
               "  --duration MS       read-only / write-only run length (default 50)\n"
               "  --iterations I      concurrent-mode writer iterations (default 100)\n"
               "  --spin S            polls before each wait yields or sleeps (default 200)\n"
               "  --wait W            after the spin: auto,spin,yield,futex (TC_WAIT; default\n"
               "                      auto: sleep on a futex; yield: the locks before they\n"
               "                      used the wait helper)\n"
               "  --csv FILE          CSV output (default stdout)\n"
               "  --plot PREFIX       also write PREFIX-<mode>.png (gnuplot)\n");
}

/* Comma-separated names -> flags; @return count, -1 on an unknown name. */
static int lb_parse_list(const char *arg, int *flags, int nflags, const char *(*name)(int))
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", arg);
    memset(flags, 0, sizeof(int) * (size_t)nflags);
    int count = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int k = 0;
        while (k < nflags && strcmp(t, name(k)) != 0)
            k++;
        if (k == nflags) {
            fprintf(stderr, "lockbench: unknown name '%s'\n", t);
            return -1;
        }
        count += !flags[k];
        flags[k] = 1;
    }
    return count;
}

static const char *lb_mode_name(int k)
{
    return lb_mode_names[k];
}

static const char *lb_scheme_name(int k)
{
    return tc_lock_scheme_name((tc_lock_scheme_t)k);
}

/* Results: [mode][scheme][readers][metric] */
typedef struct lb_point {
    lb_stat_t st[LB_METRIC_LAST];
} lb_point_t;

static lb_point_t lb_results[LB_MODE_LAST][TC_LOCK_SCHEME_LAST][LB_MAX_READERS + 1];

static void lb_plot(const lb_config_t *c, enum lb_mode mode)
{
    enum lb_metric metric = mode == LB_READ_ONLY    ? LB_READ_TPUT
                            : mode == LB_WRITE_ONLY ? LB_WRITE_TPUT
                                                    : LB_WRITE_OVERHEAD;
    char dat[512], png[512];
    snprintf(dat, sizeof dat, "%s-%s.dat", c->plot, lb_mode_names[mode]);
    snprintf(png, sizeof png, "%s-%s.png", c->plot, lb_mode_names[mode]);
    FILE *d = fopen(dat, "w");
    if (d == NULL) {
        perror(dat);
        return;
    }
    /* one gnuplot data block (index) per scheme */
    for (int s = 0; s < TC_LOCK_SCHEME_LAST; s++) {
        if (!c->schemes[s])
            continue;
        fprintf(d, "# %s\n", tc_lock_scheme_name((tc_lock_scheme_t)s));
        for (int n = c->rmin; n <= c->rmax; n++) {
            lb_stat_t st = lb_results[mode][s][n].st[metric];
            fprintf(d, "%d %.6g %.6g\n", n, st.mean, st.sd);
        }
        fprintf(d, "\n\n");
    }
    fclose(d);
    FILE *g = popen("gnuplot", "w");
    if (g == NULL) {
        perror("gnuplot");
        return;
    }
    fprintf(g, "set terminal pngcairo size 900,600 noenhanced\nset output '%s'\n", png);
    char over[64] = "one process: never oversubscribed";
    if (mode != LB_WRITE_ONLY)
        snprintf(over, sizeof over, "N > %d oversubscribed", lb_ncpus - (mode == LB_CONCURRENT));
    fprintf(g, "set title 'topocoll-lockbench %s: %s (%d reps, mean +- sd, %s)'\n",
            lb_mode_names[mode], lb_metric_names[metric], c->reps, over);
    fprintf(g,
            "set xlabel 'readers N'\nset ylabel '%s'\nset key outside right\nset grid\n"
            "set xtics 1\nset yrange [0:*]\n",
            lb_metric_units[metric]);
    if (metric != LB_WRITE_OVERHEAD)
        fprintf(g, "set format y '%%.1s%%c'\n");
    fprintf(g, "plot ");
    int idx = 0;
    for (int s = 0; s < TC_LOCK_SCHEME_LAST; s++) {
        if (!c->schemes[s])
            continue;
        fprintf(g, "%s'%s' index %d using 1:2:3 with yerrorlines title '%s'", idx ? ", " : "", dat,
                idx, tc_lock_scheme_name((tc_lock_scheme_t)s));
        idx++;
    }
    fprintf(g, "\n");
    if (pclose(g) != 0)
        fprintf(stderr, "lockbench: gnuplot failed for %s\n", png);
    else
        fprintf(stderr, "lockbench: wrote %s\n", png);
}

int main(int argc, char **argv)
{
    lb_config_t c = {.rmin = 1,
                     .rmax = 8,
                     .reps = 10,
                     .iterations = 100,
                     .duration_s = 0.05,
                     .spin = 200,
                     .wait = TC_WAIT_AUTO,
                     .run_timeout_s = 30.0};
    for (int s = 0; s < TC_LOCK_SCHEME_LAST; s++)
        c.schemes[s] = 1;
    for (int k = 0; k < LB_MODE_LAST; k++)
        c.modes[k] = 1;
    static const struct option opts[] = {
        {"modes", required_argument, 0, 'm'},    {"schemes", required_argument, 0, 's'},
        {"readers", required_argument, 0, 'n'},  {"reps", required_argument, 0, 'r'},
        {"duration", required_argument, 0, 'd'}, {"iterations", required_argument, 0, 'i'},
        {"spin", required_argument, 0, 'S'},     {"wait", required_argument, 0, 'w'},
        {"csv", required_argument, 0, 'c'},      {"plot", required_argument, 0, 'p'},
        {"help", no_argument, 0, 'h'},           {0, 0, 0, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (ch) {
        case 'm':
            if (lb_parse_list(optarg, c.modes, LB_MODE_LAST, lb_mode_name) <= 0)
                return 2;
            break;
        case 's':
            if (lb_parse_list(optarg, c.schemes, TC_LOCK_SCHEME_LAST, lb_scheme_name) <= 0)
                return 2;
            break;
        case 'n':
            if (sscanf(optarg, "%d-%d", &c.rmin, &c.rmax) == 1)
                c.rmax = c.rmin;
            break;
        case 'r':
            c.reps = atoi(optarg);
            break;
        case 'd':
            c.duration_s = atof(optarg) / 1000.0;
            break;
        case 'i':
            c.iterations = atoi(optarg);
            break;
        case 'S':
            c.spin = (uint32_t)strtoul(optarg, NULL, 10);
            break;
        case 'w':
            c.wait = TC_WAIT_LAST;
            for (int k = 0; k < TC_WAIT_LAST; k++)
                if (strcmp(optarg, lb_wait_names[k]) == 0)
                    c.wait = k;
            if (c.wait == TC_WAIT_LAST) {
                fprintf(stderr, "lockbench: --wait %s: expected auto, spin, yield or futex\n",
                        optarg);
                return 2;
            }
            break;
        case 'c':
            c.csv = optarg;
            break;
        case 'p':
            c.plot = optarg;
            break;
        case 'h':
            lb_usage(stdout);
            return 0;
        default:
            lb_usage(stderr);
            return 2;
        }
    }
    if (c.rmin < 1 || c.rmax > LB_MAX_READERS || c.rmin > c.rmax || c.reps < 1 ||
        c.iterations < 1 || !(c.duration_s > 0.0)) {
        fprintf(stderr, "lockbench: bad --readers/--reps/--iterations/--duration\n");
        return 2;
    }
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int i = 0; i < CPU_SETSIZE && lb_ncpus < 1024; i++)
            if (CPU_ISSET(i, &set))
                lb_cpus[lb_ncpus++] = i;
    FILE *out = c.csv ? fopen(c.csv, "w") : stdout;
    if (out == NULL) {
        perror(c.csv);
        return 1;
    }
    fprintf(out,
            "# topocoll-lockbench: %d usable cores; processes bound round-robin; "
            "relerr = sd/mean\n",
            lb_ncpus);
    fprintf(out, "mode,scheme,readers,oversubscribed,reps_ok,metric,mean,sd,relerr,unit\n");
    int any_failed = 0;
    double *v[LB_METRIC_LAST];
    for (int k = 0; k < LB_METRIC_LAST; k++)
        v[k] = calloc((size_t)c.reps, sizeof(double));
    for (int mode = 0; mode < LB_MODE_LAST; mode++) {
        if (!c.modes[mode])
            continue;
        for (int n = c.rmin; n <= c.rmax; n++) {
            int procs = (mode != LB_WRITE_ONLY ? n : 0) + (mode != LB_READ_ONLY);
            for (int s = 0; s < TC_LOCK_SCHEME_LAST; s++) {
                if (!c.schemes[s])
                    continue;
                for (int r = 0; r < c.reps; r++) {
                    double m[LB_METRIC_LAST];
                    if (lb_run(&c, (enum lb_mode)mode, (tc_lock_scheme_t)s, n, m) != 0)
                        any_failed = 1;
                    for (int k = 0; k < LB_METRIC_LAST; k++)
                        v[k][r] = m[k];
                }
                for (int k = 0; k < LB_METRIC_LAST; k++) {
                    lb_stat_t st = lb_stats(v[k], c.reps);
                    lb_results[mode][s][n].st[k] = st;
                    if (st.n == 0)
                        continue;
                    fprintf(out, "%s,%s,%d,%s,%d,%s,%.6g,%.6g,%.4f,%s\n", lb_mode_names[mode],
                            tc_lock_scheme_name((tc_lock_scheme_t)s), n,
                            procs > lb_ncpus ? "yes" : "no", st.n, lb_metric_names[k], st.mean,
                            st.sd, st.relerr, lb_metric_units[k]);
                }
                fflush(out);
            }
        }
    }
    if (out != stdout)
        fclose(out);
    if (c.plot)
        for (int mode = 0; mode < LB_MODE_LAST; mode++)
            if (c.modes[mode])
                lb_plot(&c, (enum lb_mode)mode);
    for (int k = 0; k < LB_METRIC_LAST; k++)
        free(v[k]);
    return any_failed ? 1 : 0;
}
