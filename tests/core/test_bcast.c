/* TC_Bcast correctness against an independently computed pattern, with
 * PMPI_Bcast on the same inputs as a second opinion.
 *
 * Modes (--mode):
 *   matrix  every communicator (world, even/odd split, dup, reversed order)
 *           x type pair x size x root. Sizes straddle the fragment size f and
 *           the queue S*f: 0, 1, f-1, f, f+1, S*f-1, S*f, S*f+1, 10*S*f+3
 *           bytes (counts rounded for multi-byte types). Type pairs (root /
 *           others): byte, int, double, strided vector of ints, struct
 *           {int; double} with padding, contiguous doubles -> strided
 *           doubles, strided -> contiguous (same signature).
 *   many    --iters consecutive broadcasts with alternating roots and sizes on
 *           two interleaved communicators: queue wrap-around, bank reuse.
 *   big     --big bytes (default 64 MiB) as bytes, doubles, ints and
 *           contiguous -> strided (a quarter of it): many queue wraps.
 *   inline  the inline boundaries (one line carries 56 bytes, a broadcast
 *           up to three lines rides in the control block): 0..169 bytes around
 *           1, 2 and 3 lines' payload, every type pair and root on world, the
 *           split halves and the reversed order, each case followed by a
 *           queued broadcast (f + 1 bytes) or a TC_Allgather of 8-100 bytes
 *           per process (checked), so inline, queued and Allgather uses of
 *           the banks interleave.
 *   runahead --iters broadcasts (and Scatters) of 0-56 bytes in runs from one
 *           root, some readers late, so the root laps the run-ahead ring,
 *           with larger broadcasts and Allgathers in between (use --pmpi 0).
 * Options: --roots all|some (some: 0, 1, p/2, p-1), --pmpi N (compare with
 * PMPI_Bcast on about every Nth case, 0 = never; default 1), --comms
 * world,split,dup,rev, --types byte,int,double,vector,struct,c2s,s2c.
 *
 * f and S are those the test was given in TC_SHM_FRAGMENT_SIZE and
 * TC_SHM_QUEUE_LENGTH (8192 and 4 when unset or 0 = auto).
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <topocoll.h>

#include "tc_test_common.h"

typedef struct tcomm {
    char name[32];
    MPI_Comm comm;
    int index; /* enters the case id */
} tcomm_t;

typedef struct type_pair {
    const char *name;
    tt_layout_kind_t root_kind, other_kind;
} type_pair_t;

static const type_pair_t type_pairs[] = {
    {"byte", TT_LAYOUT_BYTES, TT_LAYOUT_BYTES},
    {"int", TT_LAYOUT_INTS, TT_LAYOUT_INTS},
    {"double", TT_LAYOUT_DOUBLES, TT_LAYOUT_DOUBLES},
    {"vector", TT_LAYOUT_VECTOR_INT, TT_LAYOUT_VECTOR_INT},
    {"struct", TT_LAYOUT_STRUCT, TT_LAYOUT_STRUCT},
    {"c2s", TT_LAYOUT_DOUBLES, TT_LAYOUT_STRIDED_DOUBLES},
    {"s2c", TT_LAYOUT_STRIDED_DOUBLES, TT_LAYOUT_DOUBLES},
};
enum { NTYPE_PAIRS = sizeof(type_pairs) / sizeof(type_pairs[0]) };

static long opt_pmpi_every = 1;

/* Whether case @p id is also run through PMPI_Bcast: a function of the id
 * only, so every rank of the communicator decides the same. */
static int use_pmpi(uint64_t id)
{
    if (opt_pmpi_every <= 0)
        return 0;
    return ((id * 0x9E3779B97F4A7C15ull) >> 40) % (uint64_t)opt_pmpi_every == 0;
}

/* One broadcast on @p c from @p root of about @p target bytes. */
static void run_case(const char *mode, const tcomm_t *c, int root, const type_pair_t *tp,
                     size_t target, uint64_t id)
{
    int crank, rc;
    tt_layout_t lay, rlay;
    unsigned char *buf, *expect, *buf2;
    char msg[400], what[400];

    MPI_Comm_rank(c->comm, &crank);
    tt_layout_make(&lay, crank == root ? tp->root_kind : tp->other_kind, target);
    tt_layout_make(&rlay, tp->root_kind, target); /* for the description only */
    snprintf(what, sizeof(what),
             "mode=%s comm=%s root=%d bytes=%zu type=%s (root %s x %d, here %s x %d) case=%llu",
             mode, c->name, root, target, tp->name, tt_layout_name(tp->root_kind), rlay.count,
             tt_layout_name(lay.kind), lay.count, (unsigned long long)id);
    tt_layout_free(&rlay);

    buf = tt_xmalloc(lay.bytes);
    expect = tt_xmalloc(lay.bytes);
    /* Root: its data; others: what must arrive. Both from the pattern. */
    tt_image_build(expect, &lay, root, id);
    if (crank == root)
        memcpy(buf, expect, lay.bytes);
    else
        memset(buf, TT_SENTINEL, lay.bytes);

    rc = TC_Bcast(buf, lay.count, lay.type, root, c->comm);
    if (rc != MPI_SUCCESS) {
        int cls = -1;
        MPI_Error_class(rc, &cls);
        tt_fail("%s: TC_Bcast returned %d (class %d)", what, rc, cls);
    } else if (tt_image_compare(buf, expect, &lay, msg, sizeof(msg))) {
        tt_fail("%s: TC_Bcast %s: %s", what,
                crank == root ? "modified the root's buffer" : "wrong result", msg);
    }

    if (use_pmpi(id)) {
        buf2 = tt_xmalloc(lay.bytes);
        if (crank == root)
            memcpy(buf2, expect, lay.bytes);
        else
            memset(buf2, TT_SENTINEL, lay.bytes);
        rc = PMPI_Bcast(buf2, lay.count, lay.type, root, c->comm);
        if (rc != MPI_SUCCESS)
            tt_fail("%s: PMPI_Bcast returned %d", what, rc);
        else if (tt_image_compare(buf2, expect, &lay, msg, sizeof(msg)))
            tt_fail("%s: PMPI_Bcast (second opinion) disagrees with the expected pattern: %s", what,
                    msg);
        if (tt_image_compare(buf, buf2, &lay, msg, sizeof(msg)))
            tt_fail("%s: TC_Bcast differs from PMPI_Bcast (got vs PMPI): %s", what, msg);
        free(buf2);
    }
    free(buf);
    free(expect);
    tt_layout_free(&lay);
    tt_case_done();
}

static int list_has(const char *list, const char *word)
{
    size_t n = strlen(word);
    const char *p = list;

    if (strcmp(list, "all") == 0)
        return 1;
    while ((p = strstr(p, word)) != NULL) {
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
            return 1;
        p += n;
    }
    return 0;
}

/* The communicators of the matrix; returns how many. */
static int make_comms(tcomm_t *comms, const char *which)
{
    int n = 0;

    if (list_has(which, "world")) {
        comms[n].comm = MPI_COMM_WORLD;
        snprintf(comms[n].name, sizeof(comms[n].name), "world");
        comms[n].index = 0;
        n++;
    }
    if (list_has(which, "split")) {
        MPI_Comm_split(MPI_COMM_WORLD, tt_rank % 2, tt_rank, &comms[n].comm);
        snprintf(comms[n].name, sizeof(comms[n].name), "split-%s", tt_rank % 2 ? "odd" : "even");
        comms[n].index = 1 + tt_rank % 2;
        n++;
    }
    if (list_has(which, "dup")) {
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[n].comm);
        snprintf(comms[n].name, sizeof(comms[n].name), "dup(world)");
        comms[n].index = 3;
        n++;
    }
    if (list_has(which, "rev")) {
        MPI_Comm_split(MPI_COMM_WORLD, 0, tt_size - tt_rank, &comms[n].comm);
        snprintf(comms[n].name, sizeof(comms[n].name), "reversed");
        comms[n].index = 4;
        n++;
    }
    for (int i = 0; i < n; i++)
        MPI_Comm_set_errhandler(comms[i].comm, MPI_ERRORS_RETURN);
    return n;
}

static void free_comms(tcomm_t *comms, int n)
{
    for (int i = 0; i < n; i++)
        if (comms[i].comm != MPI_COMM_WORLD)
            MPI_Comm_free(&comms[i].comm);
}

/* Roots to try on a communicator of @p p processes. */
static int pick_roots(int p, const char *which, int *roots)
{
    int n = 0;

    if (strcmp(which, "all") == 0) {
        for (int r = 0; r < p; r++)
            roots[n++] = r;
        return n;
    }
    int cand[4] = {0, 1, p / 2, p - 1};
    for (int i = 0; i < 4; i++) {
        int dup = 0;
        if (cand[i] < 0 || cand[i] >= p)
            continue;
        for (int j = 0; j < n; j++)
            dup |= roots[j] == cand[i];
        if (!dup)
            roots[n++] = cand[i];
    }
    return n;
}

static void mode_matrix(size_t f, size_t s, const char *which_comms, const char *which_roots,
                        const char *which_types)
{
    size_t sizes_all[] = {0, 1, f - 1, f, f + 1, s * f - 1, s * f, s * f + 1, 10 * s * f + 3};
    size_t sizes[9];
    int nsizes = 0;
    tcomm_t comms[5];
    int ncomms = make_comms(comms, which_comms);

    /* With S = 1 several targets coincide. */
    for (size_t i = 0; i < sizeof(sizes_all) / sizeof(sizes_all[0]); i++) {
        int dup = 0;
        for (int j = 0; j < nsizes; j++)
            dup |= sizes[j] == sizes_all[i];
        if (!dup)
            sizes[nsizes++] = sizes_all[i];
    }
    for (int ci = 0; ci < ncomms; ci++) {
        int p, nroots, *roots;
        MPI_Comm_size(comms[ci].comm, &p);
        roots = tt_xmalloc(sizeof(int) * (size_t)p + 4 * sizeof(int));
        nroots = pick_roots(p, which_roots, roots);
        for (int ti = 0; ti < (int)NTYPE_PAIRS; ti++) {
            if (!list_has(which_types, type_pairs[ti].name))
                continue;
            for (int si = 0; si < nsizes; si++)
                for (int ri = 0; ri < nroots; ri++) {
                    uint64_t id =
                        ((((uint64_t)comms[ci].index * 16 + (uint64_t)ti) * 16 + (uint64_t)si) *
                             4096 +
                         (uint64_t)roots[ri]);
                    run_case("matrix", &comms[ci], roots[ri], &type_pairs[ti], sizes[si], id);
                }
        }
        free(roots);
    }
    free_comms(comms, ncomms);
}

static void mode_many(size_t f, size_t s, long iters)
{
    tcomm_t comms[2];
    size_t sizes[] = {1, f + 1, s * f + 1, 2 * s * f + 5, f - 1, 3 * s * f + 7, 0, 17, s * f};
    int nsizes = (int)(sizeof(sizes) / sizeof(sizes[0]));

    comms[0].comm = MPI_COMM_WORLD;
    snprintf(comms[0].name, sizeof(comms[0].name), "world");
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[1].comm);
    snprintf(comms[1].name, sizeof(comms[1].name), "dup(world)");
    for (int i = 0; i < 2; i++) {
        comms[i].index = i;
        MPI_Comm_set_errhandler(comms[i].comm, MPI_ERRORS_RETURN);
    }
    for (long i = 0; i < iters; i++) {
        /* Roots alternate between the two ends: 0, p-1, 1, p-2, ... */
        long j = i / 2;
        int root = (int)(i % 2 ? tt_size - 1 - j % tt_size : j % tt_size);
        const type_pair_t *tp = &type_pairs[0];
        if (i % 7 == 3)
            tp = &type_pairs[5]; /* c2s */
        else if (i % 7 == 5)
            tp = &type_pairs[4]; /* struct */
        /* Mostly world, every third on the dup: two contexts interleaved. */
        run_case("many", &comms[i % 3 == 2], root, tp, sizes[i % nsizes], 1000000ull + (uint64_t)i);
    }
    MPI_Comm_free(&comms[1].comm);
}

/* A TC_Allgather of @p n bytes per process on @p c, checked against the
 * pattern each rank's block is built from. */
static void run_allgather(const tcomm_t *c, size_t n, uint64_t id)
{
    int p, crank;
    MPI_Comm_size(c->comm, &p);
    MPI_Comm_rank(c->comm, &crank);
    unsigned char *mine = tt_xmalloc(n), *all = tt_xmalloc(n * (size_t)p);
    for (size_t k = 0; k < n; k++)
        mine[k] = (unsigned char)(id * 131 + (uint64_t)crank * 31 + k * 7 + 1);
    memset(all, TT_SENTINEL, n * (size_t)p);
    int rc = TC_Allgather(mine, (int)n, MPI_BYTE, all, (int)n, MPI_BYTE, c->comm);
    if (rc != MPI_SUCCESS)
        tt_fail("mode=inline comm=%s allgather bytes=%zu case=%llu: returned %d", c->name, n,
                (unsigned long long)id, rc);
    for (int r = 0; rc == MPI_SUCCESS && r < p; r++)
        for (size_t k = 0; k < n; k++) {
            unsigned char want = (unsigned char)(id * 131 + (uint64_t)r * 31 + k * 7 + 1);
            if (all[(size_t)r * n + k] != want) {
                tt_fail("mode=inline comm=%s allgather bytes=%zu case=%llu: block %d byte %zu = "
                        "%d, expected %d",
                        c->name, n, (unsigned long long)id, r, k, all[(size_t)r * n + k], want);
                r = p;
                break;
            }
        }
    free(mine);
    free(all);
    tt_case_done();
}

static void mode_inline(size_t f, const char *which_roots, const char *which_types)
{
    /* 56 = one line's payload, 112 = two lines', 168 = three (the largest
     * inline broadcast with TC_SHM_BCAST_INLINE_LINES = 3). */
    static const size_t sizes[] = {0,   1,   8,   55,  56,  57,  63,  64,  65, 96,
                                   104, 111, 112, 113, 120, 128, 167, 168, 169};
    static const size_t ag_sizes[] = {8, 56, 57, 100};
    enum { NSIZES = sizeof sizes / sizeof sizes[0] };
    tcomm_t comms[5];
    int ncomms = make_comms(comms, "world,split,rev");

    for (int ci = 0; ci < ncomms; ci++) {
        /* Counted per communicator: the split halves differ in size. */
        uint64_t n = 0;
        int p, nroots, *roots;
        MPI_Comm_size(comms[ci].comm, &p);
        roots = tt_xmalloc(sizeof(int) * (size_t)p + 4 * sizeof(int));
        nroots = pick_roots(p, which_roots, roots);
        for (int ti = 0; ti < (int)NTYPE_PAIRS; ti++) {
            if (!list_has(which_types, type_pairs[ti].name))
                continue;
            for (int si = 0; si < (int)NSIZES; si++)
                for (int ri = 0; ri < nroots; ri++, n++) {
                    uint64_t id =
                        3000000ull +
                        ((((uint64_t)comms[ci].index * 16 + (uint64_t)ti) * 32 + (uint64_t)si) *
                             4096 +
                         (uint64_t)roots[ri]) *
                            2;
                    run_case("inline", &comms[ci], roots[ri], &type_pairs[ti], sizes[si], id);
                    /* Interleave: every other case a queued broadcast from
                     * the next root, else an Allgather. */
                    if (n % 2 == 0)
                        run_case("inline", &comms[ci], (roots[ri] + 1) % p, &type_pairs[0], f + 1,
                                 id + 1);
                    else
                        run_allgather(&comms[ci], ag_sizes[(n / 2) % 4], id + 1);
                }
        }
        free(roots);
    }
    free_comms(comms, ncomms);
}

/* A TC_Scatter of @p n bytes per process from @p root on @p c, or, with
 * @p zero_rank >= 0, a TC_Scatterv in which that rank's block is empty;
 * every rank checks its block against the pattern. */
static void run_scatter(const tcomm_t *c, int root, size_t n, int zero_rank, uint64_t id)
{
    int p, crank, rc;
    MPI_Comm_size(c->comm, &p);
    MPI_Comm_rank(c->comm, &crank);
    int *counts = tt_xmalloc(sizeof(int) * (size_t)p),
        *displs = tt_xmalloc(sizeof(int) * (size_t)p);
    unsigned char *all = tt_xmalloc(n * (size_t)p + 1), *mine = tt_xmalloc(n + 1);
    for (int j = 0; j < p; j++) {
        counts[j] = j == zero_rank ? 0 : (int)n;
        displs[j] = (int)n * j;
        for (size_t k = 0; k < n; k++)
            all[(size_t)j * n + k] = (unsigned char)(id * 131 + (uint64_t)j * 31 + k * 7 + 3);
    }
    memset(mine, TT_SENTINEL, n + 1);
    if (zero_rank >= 0)
        rc = TC_Scatterv(all, counts, displs, MPI_BYTE, mine, counts[crank], MPI_BYTE, root,
                         c->comm);
    else
        rc = TC_Scatter(all, (int)n, MPI_BYTE, mine, (int)n, MPI_BYTE, root, c->comm);
    if (rc != MPI_SUCCESS)
        tt_fail("mode=runahead comm=%s scatter%s root=%d bytes=%zu case=%llu: returned %d", c->name,
                zero_rank >= 0 ? "v" : "", root, n, (unsigned long long)id, rc);
    for (size_t k = 0; rc == MPI_SUCCESS && k <= n; k++) {
        const size_t got = (size_t)counts[crank];
        unsigned char want = k < got ? all[(size_t)crank * n + k] : TT_SENTINEL;
        if (mine[k] != want) {
            tt_fail("mode=runahead comm=%s scatter%s root=%d bytes=%zu case=%llu: byte %zu = %d, "
                    "expected %d",
                    c->name, zero_rank >= 0 ? "v" : "", root, n, (unsigned long long)id, k, mine[k],
                    want);
            break;
        }
    }
    free(counts);
    free(displs);
    free(all);
    free(mine);
    tt_case_done();
}

/* Runs of small broadcasts and scatters from one root, so the root runs
 * ahead of its readers through the run-ahead ring (TC_SHM_BCAST_RING lines,
 * src/shm/ring_lines.h) and laps it: @p iters calls of 0-56 bytes (one
 * line's payload; every 5th a Scatter of that many bytes per process, every
 * 15th a Scatterv with one empty block) on world, then the reversed order
 * (300 calls each), the root changing every 150 calls. At the 6th call of a run every odd rank
 * that is not the root sleeps 2 ms, so the root and the others run up to
 * the ring's length ahead of it. At the 50th, 100th and 150th come a
 * broadcast of 57-168 bytes from the same root (the banks' inline lines), a
 * queued one (f + 1 bytes) and an Allgather. Run with --pmpi 0: a second
 * opinion by PMPI_Bcast would hold the root back every call. */
static void mode_runahead(size_t f, long iters)
{
    tcomm_t comms[2];
    int ncomms = make_comms(comms, "world,rev");
    const struct timespec nap = {0, 2000000};

    for (long i = 0; i < iters; i++) {
        const tcomm_t *c = &comms[(i / 300) % ncomms];
        int p, crank;
        MPI_Comm_size(c->comm, &p);
        MPI_Comm_rank(c->comm, &crank);
        const int root = (int)((i / 150) % p);
        const uint64_t id = 4000000ull + (uint64_t)i * 4;
        const type_pair_t *tp = &type_pairs[i % 11 == 4 ? 5 : i % 11 == 7 ? 4 : 0];
        if (i % 150 == 5 && crank != root && crank % 2 == 1)
            nanosleep(&nap, NULL);
        if (i % 5 == 2) /* the Scatter's small blocks share the ring */
            run_scatter(c, root, (size_t)(i * 13) % 57, i % 15 == 7 ? (root + 1) % p : -1, id);
        else
            run_case("runahead", c, root, tp, (size_t)(i * 13) % 57, id);
        if (i % 50 == 49) {
            switch ((i / 50) % 3) {
            case 0:
                run_case("runahead", c, root, &type_pairs[0], 57 + (size_t)i % 112, id + 1);
                break;
            case 1:
                run_case("runahead", c, root, &type_pairs[0], f + 1, id + 2);
                break;
            default:
                run_allgather(c, 8 + (size_t)i % 100, id + 3);
            }
        }
    }
    free_comms(comms, ncomms);
}

static void mode_big(size_t big)
{
    tcomm_t w, d;

    w.comm = MPI_COMM_WORLD;
    snprintf(w.name, sizeof(w.name), "world");
    w.index = 0;
    MPI_Comm_dup(MPI_COMM_WORLD, &d.comm);
    snprintf(d.name, sizeof(d.name), "dup(world)");
    d.index = 1;
    MPI_Comm_set_errhandler(w.comm, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(d.comm, MPI_ERRORS_RETURN);
    run_case("big", &w, 0, &type_pairs[0], big, 2000001);
    run_case("big", &w, tt_size - 1, &type_pairs[2], big, 2000002);
    run_case("big", &d, 1 % tt_size, &type_pairs[1], big + 3, 2000003);
    run_case("big", &w, tt_size / 2, &type_pairs[5], big / 4, 2000004);
    run_case("big", &d, 0, &type_pairs[6], big / 4 + 8, 2000005);
    MPI_Comm_free(&d.comm);
}

int main(int argc, char **argv)
{
    size_t f, s;
    const char *mode;

    tt_init(&argc, &argv, "test_bcast", 8192, 4, &f, &s);
    mode = tt_arg(argc, argv, "--mode", "matrix");
    opt_pmpi_every = tt_arg_long(argc, argv, "--pmpi", 1);
    tt_types_create();
    if (tt_rank == 0) {
        printf("test_bcast: mode %s, np %d, f %zu, S %zu, PMPI every %ld\n", mode, tt_size, f, s,
               opt_pmpi_every);
        fflush(stdout);
    }
    if (strcmp(mode, "matrix") == 0)
        mode_matrix(f, s, tt_arg(argc, argv, "--comms", "all"),
                    tt_arg(argc, argv, "--roots", "all"), tt_arg(argc, argv, "--types", "all"));
    else if (strcmp(mode, "many") == 0)
        mode_many(f, s, tt_arg_long(argc, argv, "--iters", 300));
    else if (strcmp(mode, "inline") == 0)
        mode_inline(f, tt_arg(argc, argv, "--roots", "all"), tt_arg(argc, argv, "--types", "all"));
    else if (strcmp(mode, "big") == 0)
        mode_big((size_t)tt_arg_long(argc, argv, "--big", 64L << 20));
    else if (strcmp(mode, "runahead") == 0)
        mode_runahead(f, tt_arg_long(argc, argv, "--iters", 600));
    else {
        if (tt_rank == 0)
            fprintf(stderr, "test_bcast: unknown --mode %s\n", mode);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    tt_types_free();
    return tt_finish();
}
