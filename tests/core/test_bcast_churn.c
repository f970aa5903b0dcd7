/* Communicator churn: --iters (default 1000) communicators are created
 * (MPI_Comm_dup, every fourth by MPI_Comm_split), used by one TC_Bcast
 * (checked against the pattern) and freed; then --attach-iters (default 200)
 * TC_Comm_attach / TC_Bcast / TC_Comm_detach cycles on one long-lived
 * communicator. After a warm-up of --warmup (50) iterations the process's
 * resources are recorded and must not grow:
 *   VmRSS (/proc/self/status)                less than --rss-slack (8 MiB) more,
 *   open descriptors (/proc/self/fd)         at most 4 more (MPI's own noise),
 *   mappings of topocoll segments            none more (/proc/self/maps),
 *   /dev/shm/topocoll-* entries              none more (segments are unlinked
 *                                            right after mapping).
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <topocoll.h>

#include "tc_test_common.h"

typedef struct usage {
    long rss_kib;
    long fds;
    long seg_maps; /* lines of /proc/self/maps naming topocoll */
    long shm_files;
} usage_t;

static long read_rss_kib(void)
{
    FILE *fp = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;

    if (!fp)
        return -1;
    while (fgets(line, sizeof(line), fp))
        if (strncmp(line, "VmRSS:", 6) == 0) {
            kib = strtol(line + 6, NULL, 10);
            break;
        }
    fclose(fp);
    return kib;
}

/* Entries of /proc/self/fd (-1 if unreadable). */
static long count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    long n = 0;

    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

static void measure(usage_t *u)
{
    u->rss_kib = read_rss_kib();
    u->fds = count_fds() - 1; /* minus opendir's own */
    u->seg_maps = tt_maps_count("topocoll-");
    u->shm_files = tt_dev_shm_count(NULL, 0);
}

/* One TC_Bcast on @p comm, checked. */
static void bcast_once(MPI_Comm comm, const char *how, long iter, size_t f)
{
    int me, p, root, rc;
    tt_layout_t l;
    unsigned char *buf, *expect;
    /* Sizes alternate: below one fragment and a few fragments. */
    size_t target = iter % 2 ? 3 * f + 5 : 100;
    char msg[400];

    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &p);
    root = (int)(iter % p);
    tt_layout_make(&l, TT_LAYOUT_BYTES, target);
    buf = tt_xmalloc(l.bytes);
    expect = tt_xmalloc(l.bytes);
    tt_image_build(expect, &l, root, (uint64_t)iter);
    if (me == root)
        memcpy(buf, expect, l.bytes);
    else
        memset(buf, TT_SENTINEL, l.bytes);
    rc = TC_Bcast(buf, l.count, l.type, root, comm);
    if (rc != MPI_SUCCESS)
        tt_fail("%s iteration %ld: TC_Bcast (root %d, %zu bytes) returned %d", how, iter, root,
                target, rc);
    else if (tt_image_compare(buf, expect, &l, msg, sizeof(msg)))
        tt_fail("%s iteration %ld: TC_Bcast (root %d, %zu bytes): %s", how, iter, root, target,
                msg);
    free(buf);
    free(expect);
    tt_case_done();
}

static void churn_one(long i, size_t f)
{
    MPI_Comm c;

    if (i % 4 == 3)
        MPI_Comm_split(MPI_COMM_WORLD, 0, -tt_rank, &c);
    else
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    bcast_once(c, i % 4 == 3 ? "split churn" : "dup churn", i, f);
    MPI_Comm_free(&c);
}

static void attach_one(MPI_Comm c, long i, size_t f)
{
    int rc = TC_Comm_attach(c);
    if (rc != MPI_SUCCESS)
        tt_fail("attach/detach iteration %ld: TC_Comm_attach returned %d", i, rc);
    bcast_once(c, "attach/detach", 500000 + i, f);
    rc = TC_Comm_detach(c);
    if (rc != MPI_SUCCESS)
        tt_fail("attach/detach iteration %ld: TC_Comm_detach returned %d", i, rc);
    /* After a detach the next TC_ call recreates the context by itself. */
    if (i % 10 == 0) {
        bcast_once(c, "bcast after detach", 600000 + i, f);
        rc = TC_Comm_detach(c);
        if (rc != MPI_SUCCESS)
            tt_fail("attach/detach iteration %ld: second TC_Comm_detach returned %d", i, rc);
    }
}

/* /dev/shm is shared with concurrently running tests, whose segments exist
 * for an instant between creation and unlink: give them 10 s to go (the
 * churn tests are RUN_SERIAL, tests/ctest_properties.cmake; this covers a
 * busy machine still tearing down another job). */
static long shm_files_settled(long base)
{
    struct timespec ts = {0, 100 * 1000 * 1000};
    long n = tt_dev_shm_count(NULL, 0);

    for (int i = 0; i < 100 && n > base; i++) {
        nanosleep(&ts, NULL);
        n = tt_dev_shm_count(NULL, 0);
    }
    return n;
}

/* Compare with the baseline; one line per resource that grew. */
static void check_growth(const char *phase, const usage_t *a, usage_t *b, long rss_slack)
{
    if (a->rss_kib < 0 || b->rss_kib < 0 || a->fds < 0 || b->fds < 0)
        tt_fail("%s: cannot read /proc/self (rss %ld/%ld fds %ld/%ld)", phase, a->rss_kib,
                b->rss_kib, a->fds, b->fds);
    if (b->rss_kib - a->rss_kib >= rss_slack)
        tt_fail("%s: VmRSS grew from %ld KiB to %ld KiB (limit +%ld KiB)", phase, a->rss_kib,
                b->rss_kib, rss_slack);
    if (b->fds - a->fds > 4)
        tt_fail("%s: open file descriptors grew from %ld to %ld", phase, a->fds, b->fds);
    if (b->seg_maps > a->seg_maps)
        tt_fail("%s: mappings of topocoll segments grew from %ld to %ld", phase, a->seg_maps,
                b->seg_maps);
    if (b->shm_files > a->shm_files)
        b->shm_files = shm_files_settled(a->shm_files);
    if (b->shm_files > a->shm_files)
        tt_fail("%s: /dev/shm/topocoll-* entries grew from %ld to %ld", phase, a->shm_files,
                b->shm_files);
}

int main(int argc, char **argv)
{
    size_t f, s;
    long iters, warmup, attach_iters, rss_slack;
    usage_t u0, u1, u2;
    MPI_Comm longlived;
    double t0;

    tt_init(&argc, &argv, "test_bcast_churn", 8192, 4, &f, &s);
    iters = tt_arg_long(argc, argv, "--iters", 1000);
    warmup = tt_arg_long(argc, argv, "--warmup", 50);
    attach_iters = tt_arg_long(argc, argv, "--attach-iters", 200);
    rss_slack = tt_arg_long(argc, argv, "--rss-slack", 8L << 20) / 1024;
    t0 = MPI_Wtime();

    for (long i = 0; i < warmup; i++)
        churn_one(i, f);
    MPI_Comm_dup(MPI_COMM_WORLD, &longlived);
    MPI_Comm_set_errhandler(longlived, MPI_ERRORS_RETURN);
    for (long i = 0; i < (warmup < attach_iters ? warmup : attach_iters); i++)
        attach_one(longlived, i, f);
    measure(&u0);

    for (long i = warmup; i < iters; i++)
        churn_one(i, f);
    measure(&u1);
    check_growth("comm churn", &u0, &u1, rss_slack);

    for (long i = 0; i < attach_iters; i++)
        attach_one(longlived, i, f);
    measure(&u2);
    check_growth("attach/detach", &u0, &u2, rss_slack);
    MPI_Comm_free(&longlived);

    printf("test_bcast_churn rank %d: %.1f s; rss %ld -> %ld -> %ld KiB, fds %ld -> %ld -> %ld, "
           "segment maps %ld -> %ld -> %ld, /dev/shm entries %ld -> %ld -> %ld\n",
           tt_rank, MPI_Wtime() - t0, u0.rss_kib, u1.rss_kib, u2.rss_kib, u0.fds, u1.fds, u2.fds,
           u0.seg_maps, u1.seg_maps, u2.seg_maps, u0.shm_files, u1.shm_files, u2.shm_files);
    fflush(stdout);
    return tt_finish();
}
