/* MPI test of the per-level group broadcast (src/hier/level_bcast.c).
 *
 * For several groups of MPI_COMM_WORLD's ranks (all, even, odd, sparse
 * subsets, a single member), every algorithm (k-nomial with k = 2, 3, 4),
 * every root index and several sizes, the members broadcast and compare
 * their buffer with a pattern each rank computes on its own from (case,
 * root, byte index, size). Receivers start from a sentinel the pattern never
 * produces, so a byte that was not delivered is caught; guard bytes after the
 * buffer catch overruns; non-members' buffers must stay untouched and, after
 * each (group, algorithm) batch, no message may be left unreceived anywhere.
 * A second pass shrinks the piece size so the splitting of long transfers
 * (the > 1 GiB path) runs with small buffers.
 *
 * Options: --quick (slow, oversubscribed MPICH: sizes 0, 7, 4099 on every
 * group, 1 MiB + 5 and the piece pass on the full group only).
 */
#include "base/err_mpi.h"
#include "hier/level_bcast.h"

#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tc_test_common.h"

/* Odd sizes wait through base/wait_mpi.h's polling waits (yield after a
 * short spin, as on an oversubscribed node), even ones through the MPI's
 * blocking calls (NULL). */
static const tc_wait_info_t poll_wait = {
    .comm_name = "test", .timeout_s = 120.0, .spin_polls = 50, .policy = TC_WAIT_YIELD};

#define SENTINEL  0xA5u /* receivers' initial bytes; never a pattern byte */
#define OUTSIDER  0x3Cu /* non-members' bytes; must survive every case */
#define GUARD     64    /* bytes checked after the buffer */
#define MAX_GROUP 64

typedef struct {
    const char *name;
    int n;
    int ranks[MAX_GROUP];
} group_t;

typedef struct {
    tc_hier_bcast_alg_t alg;
    int k;
} config_t;

static int rank, size;

/* A broken algorithm usually hangs (a missing or misdirected send). Before
 * ctest's TIMEOUT kills us silently, SIGALRM prints the case each rank is
 * in. TC_LB_ALARM overrides the delay (seconds, default 100). */
static char current[512] = "setup";

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "FAIL (timeout) in ";
    if (write(2, msg, sizeof(msg) - 1) < 0 || write(2, current, strlen(current)) < 0)
        _exit(1);
    _exit(1);
}

static uint8_t pattern(unsigned long long ccase, int root, size_t size_bytes, size_t i)
{
    uint64_t x = ccase * 0x9E3779B97F4A7C15ull ^ (uint64_t)root * 0xBF58476D1CE4E5B9ull ^
                 (uint64_t)size_bytes * 0x94D049BB133111EBull ^ (uint64_t)i;
    x ^= x >> 31;
    x *= 0xD6E8FEB86659FD93ull;
    x ^= x >> 29;
    uint8_t v = (uint8_t)(x >> 24);
    return v == SENTINEL ? (uint8_t)(SENTINEL ^ 0xFF) : v;
}

static void group_print(char *out, size_t len, const group_t *g)
{
    int w = snprintf(out, len, "%s{", g->name);
    for (int i = 0; i < g->n && w > 0 && (size_t)w < len; i++)
        w += snprintf(out + w, len - (size_t)w, i ? ",%d" : "%d", g->ranks[i]);
    if (w > 0 && (size_t)w < len)
        snprintf(out + w, len - (size_t)w, "}");
}

static void fail(const config_t *c, const group_t *g, int root_index, size_t nbytes, size_t piece,
                 const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static void fail(const config_t *c, const group_t *g, int root_index, size_t nbytes, size_t piece,
                 const char *fmt, ...)
{
    char gtext[512], what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    group_print(gtext, sizeof(gtext), g);
    tt_fail("alg=%s k=%d group=%s root_index=%d (rank %d) size=%zu piece=%zu: %s",
            tc_hier_bcast_alg_name(c->alg), c->k, gtext, root_index, g->ranks[root_index], nbytes,
            piece, what);
}

static void add_group(group_t *groups, int *ngroups, const char *name, const int *cand, int ncand)
{
    group_t *g = &groups[*ngroups];
    g->name = name;
    g->n = 0;
    for (int i = 0; i < ncand; i++)
        if (cand[i] >= 0 && cand[i] < size && g->n < MAX_GROUP)
            g->ranks[g->n++] = cand[i];
    if (g->n > 0)
        (*ngroups)++;
}

/* One (group, config) batch over every size and root; *ccase numbers the cases
 * identically at every rank. */
static void run_batch(MPI_Comm comm, const group_t *g, const config_t *c, const size_t *sizes,
                      int nsizes, size_t piece, uint8_t *buf, unsigned long long *ccase)
{
    /* A tag per batch: the probe below must not see the next batch's first
     * messages, sent by ranks that left the barrier earlier. */
    static int batch;
    int tag = 100 + batch++ % 30000;
    int me = -1;
    for (int i = 0; i < g->n; i++)
        if (g->ranks[i] == rank)
            me = i;
    for (int s = 0; s < nsizes; s++) {
        size_t n = sizes[s];
        for (int root = 0; root < g->n; root++) {
            unsigned long long cc = ++*ccase;
            int root_rank = g->ranks[root];
            if (me < 0) {
                memset(buf, OUTSIDER, n + GUARD);
                /* Non-members take no part; their buffer is re-checked after
                 * the batch's barrier, when every member is done. */
                continue;
            }
            if (me == root)
                for (size_t i = 0; i < n; i++)
                    buf[i] = pattern(cc, root_rank, n, i);
            else
                memset(buf, SENTINEL, n);
            memset(buf + n, SENTINEL, GUARD);
            char gtext[400];
            group_print(gtext, sizeof(gtext), g);
            snprintf(current, sizeof(current),
                     "rank %d: alg=%s k=%d group=%s root_index=%d size=%zu piece=%zu\n", rank,
                     tc_hier_bcast_alg_name(c->alg), c->k, gtext, root, n, piece);
            int rc = tc_hier_bcast_group(buf, n, g->ranks, g->n, me, root, c->alg, c->k, comm, tag,
                                         (n & 1) ? &poll_wait : NULL);
            if (rc != MPI_SUCCESS) {
                char err[MPI_MAX_ERROR_STRING];
                int len = 0;
                MPI_Error_string(rc, err, &len);
                fail(c, g, root, n, piece, "returned %d (%s)", rc, err);
                continue;
            }
            for (size_t i = 0; i < n; i++) {
                uint8_t want = pattern(cc, root_rank, n, i);
                if (buf[i] != want) {
                    fail(c, g, root, n, piece,
                         "first bad byte index %zu: got 0x%02x expected 0x%02x", i, buf[i], want);
                    break;
                }
            }
            for (size_t i = n; i < n + GUARD; i++) {
                if (buf[i] != SENTINEL) {
                    fail(c, g, root, n, piece, "guard byte %zu past the end overwritten", i - n);
                    break;
                }
            }
        }
    }
    /* After the barrier every member is done with this batch: a non-member's
     * buffer must still be all OUTSIDER, and no rank may have a message
     * waiting (a stray send to a non-member, or a surplus piece). The probe
     * is best-effort: an eager message sent just before the barrier is
     * normally visible by then. */
    MPI_Barrier(comm);
    size_t last = nsizes > 0 ? sizes[nsizes - 1] : 0;
    if (me < 0 && nsizes > 0) {
        for (size_t i = 0; i < last + GUARD; i++) {
            if (buf[i] != OUTSIDER) {
                fail(c, g, 0, last, piece, "non-member rank %d: byte %zu changed to 0x%02x", rank,
                     i, buf[i]);
                break;
            }
        }
    }
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, tag, comm, &flag, &st);
    if (flag) {
        fail(c, g, 0, last, piece, "%s rank %d has an unreceived message from rank %d (tag %d)",
             me < 0 ? "non-member" : "member", rank, st.MPI_SOURCE, st.MPI_TAG);
        /* Drain it so the next batch does not inherit it. */
        int cnt = 0;
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        uint8_t *tmp = malloc(cnt > 0 ? (size_t)cnt : 1);
        MPI_Recv(tmp, cnt, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, comm, MPI_STATUS_IGNORE);
        free(tmp);
    }
}

/* Local checks: names, parser, and argument errors (no message is sent). */
static void check_api(MPI_Comm comm)
{
    static const struct {
        const char *word;
        int ok;
        tc_hier_bcast_alg_t alg;
    } words[] = {{"flat", 1, TC_HIER_BCAST_FLAT},
                 {"knomial", 1, TC_HIER_BCAST_KNOMIAL},
                 {"KNOMIAL", 1, TC_HIER_BCAST_KNOMIAL},
                 {"scatter_allgather", 1, TC_HIER_BCAST_SCATTER_ALLGATHER},
                 {"scatter-allgather", 1, TC_HIER_BCAST_SCATTER_ALLGATHER},
                 {"binomial", 0, TC_HIER_BCAST_FLAT},
                 {"", 0, TC_HIER_BCAST_FLAT},
                 {"flat ", 0, TC_HIER_BCAST_FLAT}};
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        tc_hier_bcast_alg_t a = TC_HIER_BCAST_LAST;
        int r = tc_hier_bcast_alg_parse(words[i].word, &a);
        if ((r == 0) != words[i].ok || (words[i].ok && a != words[i].alg) ||
            (!words[i].ok && a != TC_HIER_BCAST_LAST)) {
            tt_fail("parse(\"%s\") returned %d alg %d", words[i].word, r, (int)a);
        }
    }
    for (int a = 0; a < TC_HIER_BCAST_LAST; a++) {
        tc_hier_bcast_alg_t back;
        if (tc_hier_bcast_alg_parse(tc_hier_bcast_alg_name((tc_hier_bcast_alg_t)a), &back) != 0 ||
            back != (tc_hier_bcast_alg_t)a) {
            tt_fail("name/parse round trip of %d", a);
        }
    }
    if (strcmp(tc_hier_bcast_alg_name(TC_HIER_BCAST_LAST), "?") != 0) {
        tt_fail("name of TC_HIER_BCAST_LAST");
    }

    /* Argument errors must be caught locally, before any message. Each
     * member list below includes this rank at index 0 or 1. */
    uint8_t b[8] = {0};
    int self[1] = {rank};
    int other = rank == 0 ? 1 : 0;
    int desc[2] = {rank + 1, rank}; /* not ascending */
    int beyond[2] = {rank, size};   /* rank out of comm */
    struct {
        const char *what;
        void *buf;
        const int *members;
        int n, me, root;
        tc_hier_bcast_alg_t alg;
        int k;
        int want;
    } bad[] = {
        {"knomial k=1", b, self, 1, 0, 0, TC_HIER_BCAST_KNOMIAL, 1, MPI_ERR_ARG},
        {"alg=LAST", b, self, 1, 0, 0, TC_HIER_BCAST_LAST, 2, MPI_ERR_ARG},
        {"my_index out of range", b, self, 1, 1, 0, TC_HIER_BCAST_FLAT, 2, MPI_ERR_ARG},
        {"root_index negative", b, self, 1, 0, -1, TC_HIER_BCAST_FLAT, 2, MPI_ERR_ARG},
        {"nmembers 0", b, self, 0, 0, 0, TC_HIER_BCAST_FLAT, 2, MPI_ERR_ARG},
        {"members NULL", b, NULL, 1, 0, 0, TC_HIER_BCAST_FLAT, 2, MPI_ERR_ARG},
        {"buf NULL", NULL, self, 1, 0, 0, TC_HIER_BCAST_FLAT, 2, MPI_ERR_BUFFER},
        {"members[my_index] != rank", b, &other, 1, 0, 0, TC_HIER_BCAST_FLAT, 2, MPI_ERR_ARG},
        {"members not ascending", b, desc, 2, 1, 0, TC_HIER_BCAST_FLAT, 2, MPI_ERR_ARG},
        {"member beyond comm", b, beyond, 2, 0, 0, TC_HIER_BCAST_FLAT, 2, MPI_ERR_ARG},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc = tc_hier_bcast_group(bad[i].buf, sizeof(b), bad[i].members, bad[i].n, bad[i].me,
                                     bad[i].root, bad[i].alg, bad[i].k, comm, 1, NULL);
        int cls = -1;
        if (rc != MPI_SUCCESS)
            cls = tc_err_to_mpi(rc); /* the class the API would report */
        if (cls != bad[i].want) {
            tt_fail("%s returned %d, want error class %d", bad[i].what, rc, bad[i].want);
        }
    }
    /* A group of one succeeds at once, whatever the algorithm. */
    int rc = tc_hier_bcast_group(b, sizeof(b), self, 1, 0, 0, TC_HIER_BCAST_SCATTER_ALLGATHER, 2,
                                 comm, 1, NULL);
    if (rc != MPI_SUCCESS) {
        tt_fail("single member returned %d", rc);
    }
}

int main(int argc, char **argv)
{
    int quick = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            quick = 1;
        } else {
            fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
            return 2;
        }
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tt_check_np("test_level_bcast");
    if (size > MAX_GROUP) {
        fprintf(stderr, "test_level_bcast: at most %d processes\n", MAX_GROUP);
        MPI_Finalize();
        return 1;
    }
    const char *alarm_text = getenv("TC_LB_ALARM");
    signal(SIGALRM, on_alarm);
    alarm(alarm_text ? (unsigned)atoi(alarm_text) : 100u);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    double t0 = MPI_Wtime();

    check_api(comm);

    group_t groups[8];
    int ngroups = 0;
    int cand[MAX_GROUP] = {0};
    for (int i = 0; i < size; i++)
        cand[i] = i;
    add_group(groups, &ngroups, "all", cand, size);
    for (int i = 0; i < size; i++)
        cand[i] = 2 * i;
    add_group(groups, &ngroups, "even", cand, size);
    for (int i = 0; i < size; i++)
        cand[i] = 2 * i + 1;
    add_group(groups, &ngroups, "odd", cand, size);
    static const int sparse1[] = {0, 2, 3, 6, 7}, sparse2[] = {1, 4, 5, 7};
    add_group(groups, &ngroups, "sparse", sparse1, 5);
    add_group(groups, &ngroups, "sparse2", sparse2, 4);
    cand[0] = size - 1;
    add_group(groups, &ngroups, "single", cand, 1);

    static const config_t configs[] = {
        {TC_HIER_BCAST_FLAT, 2},
        {TC_HIER_BCAST_KNOMIAL, 2},
        {TC_HIER_BCAST_KNOMIAL, 3},
        {TC_HIER_BCAST_KNOMIAL, 4},
        /* k only matters when fewer bytes than members force the k-nomial fallback */
        {TC_HIER_BCAST_SCATTER_ALLGATHER, 2},
        {TC_HIER_BCAST_SCATTER_ALLGATHER, 3},
    };
    const int nconfigs = (int)(sizeof(configs) / sizeof(configs[0]));
    /* Ascending: the non-member check after a batch covers the largest size. */
    static const size_t sizes_full[] = {0, 1, 7, 4099, (1u << 20) + 5};
    static const size_t sizes_quick[] = {0, 7, 4099};
    static const size_t sizes_big[] = {(1u << 20) + 5};
    /* Piece pass: 1000-byte pieces; 7003 = 7 pieces + 3 at flat/knomial, and
     * SA chunks of a few hundred to 7003 bytes (several pieces when n is small). */
    static const size_t sizes_piece[] = {5, 999, 1000, 7003};
    uint8_t *buf = malloc(((size_t)1 << 20) + 5 + GUARD);
    if (buf == NULL) {
        fprintf(stderr, "rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    unsigned long long ccase = 0;
    for (int gi = 0; gi < ngroups; gi++)
        for (int ci = 0; ci < nconfigs; ci++)
            run_batch(comm, &groups[gi], &configs[ci], quick ? sizes_quick : sizes_full,
                      quick ? 3 : 5, TC_HIER_BCAST_PIECE_MAX, buf, &ccase);
    /* --quick keeps the 1 MiB case for the full group only. */
    if (quick)
        for (int ci = 0; ci < nconfigs; ci++)
            run_batch(comm, &groups[0], &configs[ci], sizes_big, 1, TC_HIER_BCAST_PIECE_MAX, buf,
                      &ccase);
    tc_hier_bcast_piece_max_set(1000);
    /* all, odd, sparse2 (--quick: all) */
    for (int gi = 0; gi < (quick ? 1 : ngroups); gi += 2)
        for (int ci = 0; ci < nconfigs; ci++)
            run_batch(comm, &groups[gi], &configs[ci], sizes_piece, 4, 1000, buf, &ccase);
    tc_hier_bcast_piece_max_set(0);
    free(buf);
    snprintf(current, sizeof(current), "rank %d: final reduction\n", rank);

    long total[1] = {tt_failures_all()};
    if (rank == 0)
        printf("test_level_bcast: np=%d %s groups=%d configs=%d cases=%llu failures=%ld "
               "(summed over ranks) time=%.2fs: %s\n",
               size, quick ? "quick" : "full", ngroups, nconfigs, ccase, total[0], MPI_Wtime() - t0,
               total[0] ? "FAILED" : "ok");
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return total[0] ? 1 : 0;
}
