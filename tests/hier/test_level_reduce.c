/* MPI test of the per-level group reductions (src/hier/level_reduce.c).
 *
 * For several groups of MPI_COMM_WORLD's ranks (all, every other rank, all
 * but rank 0, a sparse subset leaning on the high ranks, a single member),
 * every reduce algorithm with every root index and every allreduce
 * algorithm, over sizes around the group size and up to 64 Ki + 3 elements
 * (and ~1 MiB of ints on the full group), the members reduce inputs that are
 * a known function of (rank, element index) and compare with the result each
 * rank computes on its own:
 *  - MPI_INT / MPI_SUM and MPI_DOUBLE / MPI_SUM (values exact in any order),
 *    MPI_INT / MPI_MAX: exact comparison;
 *  - a non-commutative user op (2x2 integer matrix product mod 251 on
 *    MPI_Type_contiguous(4, MPI_INT)): FLAT, BINOMIAL and RECDBL must give
 *    the member-ordered product; RSG and RING must refuse it with MPI_ERR_OP
 *    and send nothing;
 *  - MPI_FLOAT / MPI_SUM of irregular values: within rounding of the exact
 *    sum, and for the allreduces every member's result gathered to member 0
 *    must be bitwise identical.
 * PMPI_Reduce / PMPI_Allreduce on a communicator of the group give a second
 * opinion for the exact types. Guard bytes after buf and scratch catch
 * overruns; non-members' buffers must stay untouched, and after each batch no
 * message may be left unreceived. A last pass shrinks the piece size so the
 * splitting of > 1 GiB transfers runs with small buffers.
 *
 * Options: --quick (slow, oversubscribed MPICH: fewer types, sizes and
 * roots, see main(); ~1 MiB only at np <= 3). Environment: TC_LR_ALARM
 * (seconds before a hung run prints its case, default 110), TC_LR_TIMES (rank
 * 0 prints the time of every case and batch).
 */
#include "base/err_mpi.h"
#include "hier/level_bcast.h"
#include "hier/level_reduce.h"

#include <math.h>
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

#define SENTINEL  0xA5u
#define OUTSIDER  0x3Cu
#define GUARD     64
#define MAX_GROUP 64
#define MOD       251
#define BIG_INTS  ((1u << 18) + 5) /* ~1 MiB of ints */

typedef enum { T_INT_SUM, T_DBL_SUM, T_INT_MAX, T_MAT, T_FLT_SUM, T_LAST } type_t;
static const char *const type_names[T_LAST] = {"int/sum", "double/sum", "int/max", "mat2x2/prod",
                                               "float/sum"};

typedef struct {
    const char *name;
    int n;
    int ranks[MAX_GROUP];
    MPI_Comm sub; /* the members, ordered by rank; MPI_COMM_NULL elsewhere */
} group_t;

typedef struct {
    int allreduce; /* 0: tc_hier_reduce_group, 1: tc_hier_allreduce_group */
    int alg;
} config_t;

static int rank, size;
static tc_redop_t redops[T_LAST];
static MPI_Datatype mpi_types[T_LAST];
static MPI_Op mpi_ops[T_LAST];
static size_t esize[T_LAST];

static char current[512] = "setup";

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "FAIL (timeout) in ";
    if (write(2, msg, sizeof(msg) - 1) < 0 || write(2, current, strlen(current)) < 0)
        _exit(1);
    _exit(1);
}

static uint32_t hash(uint32_t r, size_t i, uint32_t salt)
{
    uint64_t x = (uint64_t)r * 0x9E3779B97F4A7C15ull ^ (uint64_t)i * 0xBF58476D1CE4E5B9ull ^
                 (uint64_t)salt * 0x94D049BB133111EBull;
    x ^= x >> 31;
    x *= 0xD6E8FEB86659FD93ull;
    x ^= x >> 29;
    return (uint32_t)(x >> 16);
}

/* The user op: inout = in x inout, 2x2 row-major matrices mod MOD. Matrix
 * product does not commute, so any reordering of members shows. */
static void matmul_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const int *a = in;
    int *b = inout;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        int c0 = (a[0] * b[0] + a[1] * b[2]) % MOD, c1 = (a[0] * b[1] + a[1] * b[3]) % MOD;
        int c2 = (a[2] * b[0] + a[3] * b[2]) % MOD, c3 = (a[2] * b[1] + a[3] * b[3]) % MOD;
        b[0] = c0, b[1] = c1, b[2] = c2, b[3] = c3;
    }
}

/* Rank r's element i of type t, written at dst. */
static void gen(type_t t, int r, size_t i, void *dst)
{
    switch (t) {
    case T_INT_SUM: {
        int v = (int)((r * 131u + i * 7u) % 2001u) - 1000;
        memcpy(dst, &v, sizeof v);
        break;
    }
    case T_DBL_SUM: {
        /* Multiples of 1/4 below 2^10: every partial sum is exact. */
        double v = ((double)((r * 37u + i * 11u) % 1001u) - 500.0) * 0.25;
        memcpy(dst, &v, sizeof v);
        break;
    }
    case T_INT_MAX: {
        int v = (int)(hash((uint32_t)r, i, 1) % 1000003u) - 500000;
        memcpy(dst, &v, sizeof v);
        break;
    }
    case T_MAT: {
        int m[4];
        for (int k = 0; k < 4; k++)
            m[k] = (int)(hash((uint32_t)r, i, 10u + (uint32_t)k) % MOD);
        memcpy(dst, m, sizeof m);
        break;
    }
    case T_FLT_SUM:
    default: {
        float v = (float)((double)(hash((uint32_t)r, i, 2) % 2000001u) - 1000000.0) / 1234567.0f *
                  (float)(1 + r % 3);
        memcpy(dst, &v, sizeof v);
        break;
    }
    }
}

/* Independent expectation of element i over the group's members in order.
 * For T_FLT_SUM *tol receives the allowed deviation (0 elsewhere). */
static void expect(type_t t, const group_t *g, size_t i, void *dst, double *tol)
{
    *tol = 0;
    switch (t) {
    case T_INT_SUM: {
        int s = 0, v;
        for (int j = 0; j < g->n; j++)
            gen(t, g->ranks[j], i, &v), s += v;
        memcpy(dst, &s, sizeof s);
        break;
    }
    case T_DBL_SUM: {
        double s = 0, v;
        for (int j = 0; j < g->n; j++)
            gen(t, g->ranks[j], i, &v), s += v;
        memcpy(dst, &s, sizeof s);
        break;
    }
    case T_INT_MAX: {
        int s = INT32_MIN, v;
        for (int j = 0; j < g->n; j++)
            gen(t, g->ranks[j], i, &v), s = v > s ? v : s;
        memcpy(dst, &s, sizeof s);
        break;
    }
    case T_MAT: {
        int p[4] = {1, 0, 0, 1}, m[4];
        /* m0 x m1 x ... in member order, directly (not through matmul_fn). */
        for (int j = 0; j < g->n; j++) {
            gen(t, g->ranks[j], i, m);
            int q[4] = {(p[0] * m[0] + p[1] * m[2]) % MOD, (p[0] * m[1] + p[1] * m[3]) % MOD,
                        (p[2] * m[0] + p[3] * m[2]) % MOD, (p[2] * m[1] + p[3] * m[3]) % MOD};
            memcpy(p, q, sizeof p);
        }
        memcpy(dst, p, sizeof p);
        break;
    }
    case T_FLT_SUM:
    default: {
        double s = 0, a = 0;
        float v;
        for (int j = 0; j < g->n; j++)
            gen(t, g->ranks[j], i, &v), s += v, a += fabs(v);
        float f = (float)s;
        memcpy(dst, &f, sizeof f);
        *tol = 4e-6 * a + 1e-30;
        break;
    }
    }
}

static const char *alg_name(const config_t *c)
{
    return c->allreduce ? tc_hier_allreduce_alg_name((tc_hier_allreduce_alg_t)c->alg)
                        : tc_hier_reduce_alg_name((tc_hier_reduce_alg_t)c->alg);
}

static void group_print(char *out, size_t len, const group_t *g)
{
    int w = snprintf(out, len, "%s{", g->name);
    for (int i = 0; i < g->n && w > 0 && (size_t)w < len; i++)
        w += snprintf(out + w, len - (size_t)w, i ? ",%d" : "%d", g->ranks[i]);
    if (w > 0 && (size_t)w < len)
        snprintf(out + w, len - (size_t)w, "}");
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Reports against the case in `current`. */
static void fail(const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    tt_fail("%s: %s", current, what);
}

static void add_group(group_t *groups, int *ngroups, const char *name, const int *cand, int ncand)
{
    group_t *g = &groups[*ngroups];
    g->name = name;
    g->n = 0;
    for (int i = 0; i < ncand; i++)
        if (cand[i] >= 0 && cand[i] < size && g->n < MAX_GROUP &&
            (g->n == 0 || cand[i] > g->ranks[g->n - 1]))
            g->ranks[g->n++] = cand[i];
    if (g->n > 0)
        (*ngroups)++;
}

static int group_index(const group_t *g)
{
    for (int i = 0; i < g->n; i++)
        if (g->ranks[i] == rank)
            return i;
    return -1;
}

/* Compare n elements of type t at got with the expectation. */
static void check_result(type_t t, const group_t *g, const uint8_t *got, size_t nelem,
                         const char *who)
{
    size_t e = esize[t];
    uint8_t want[16];
    double tol;
    for (size_t i = 0; i < nelem; i++) {
        expect(t, g, i, want, &tol);
        int bad;
        if (t == T_FLT_SUM) {
            float a, b;
            memcpy(&a, got + i * e, sizeof a);
            memcpy(&b, want, sizeof b);
            bad = !(fabs((double)a - (double)b) <= tol);
        } else {
            bad = memcmp(got + i * e, want, e) != 0;
        }
        if (bad) {
            int gv, wv;
            memcpy(&gv, got + i * e, sizeof gv);
            memcpy(&wv, want, sizeof wv);
            fail("%s: first bad element %zu (first word got %d / 0x%x, want %d / 0x%x)", who, i, gv,
                 (unsigned)gv, wv, (unsigned)wv);
            return;
        }
    }
}

static void check_guard(const uint8_t *p, const char *what)
{
    for (int i = 0; i < GUARD; i++) {
        if (p[i] != SENTINEL) {
            fail("%s guard byte %d overwritten", what, i);
            return;
        }
    }
}

/* One call of the function under test by the members (and the second
 * opinion on the group's communicator). */
static void run_case(MPI_Comm comm, const group_t *g, int me, const config_t *c, type_t t, int root,
                     size_t nelem, int tag, uint8_t *buf, uint8_t *scratch, uint8_t *aux,
                     int second)
{
    size_t e = esize[t], nb = nelem * e;
    for (size_t i = 0; i < nelem; i++)
        gen(t, rank, i, buf + i * e);
    memset(buf + nb, SENTINEL, GUARD);
    memset(scratch, SENTINEL, nb + GUARD);
    int rc;
    if (c->allreduce)
        rc = tc_hier_allreduce_group(buf, scratch, nelem, &redops[t], g->ranks, g->n, me,
                                     (tc_hier_allreduce_alg_t)c->alg, comm, tag,
                                     (nelem & 1) ? &poll_wait : NULL);
    else
        rc = tc_hier_reduce_group(buf, scratch, nelem, &redops[t], g->ranks, g->n, me, root,
                                  (tc_hier_reduce_alg_t)c->alg, comm, tag,
                                  (nelem & 1) ? &poll_wait : NULL);
    int needs_commutative = (c->allreduce && c->alg == TC_HIER_ALLREDUCE_RING) ||
                            (!c->allreduce && c->alg == TC_HIER_REDUCE_RSG);
    if (t == T_MAT && needs_commutative) {
        int cls = -1;
        if (rc != MPI_SUCCESS)
            cls = tc_err_to_mpi(rc); /* the class the API would report */
        if (cls != MPI_ERR_OP)
            fail("non-commutative op: returned %d, want MPI_ERR_OP", rc);
        /* Refused before anything moved: the input is intact. */
        for (size_t i = 0; i < nelem; i++) {
            uint8_t want[16];
            gen(t, rank, i, want);
            if (memcmp(buf + i * e, want, e) != 0) {
                fail("refused call changed element %zu of buf", i);
                break;
            }
        }
        check_guard(buf + nb, "buf");
        return;
    }
    if (rc != MPI_SUCCESS) {
        char err[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, err, &len);
        fail("returned %d (%s)", rc, err);
        return;
    }
    check_guard(buf + nb, "buf");
    check_guard(scratch + nb, "scratch");
    if (c->allreduce || me == root)
        check_result(t, g, buf, nelem, "result");

    if (c->allreduce && g->n > 1 && nb > 0) {
        /* Every member must hold the same bits: gather to member 0. */
        if (me == 0) {
            for (int j = 1; j < g->n; j++) {
                MPI_Recv(aux, (int)nb, MPI_BYTE, g->ranks[j], tag + 1, comm, MPI_STATUS_IGNORE);
                if (memcmp(aux, buf, nb) != 0) {
                    size_t i = 0;
                    while (i < nb && aux[i] == buf[i])
                        i++;
                    fail("member %d's result differs from member 0's at byte %zu", j, i);
                }
            }
        } else {
            MPI_Send(buf, (int)nb, MPI_BYTE, g->ranks[0], tag + 1, comm);
        }
    }

    /* Second opinion: the MPI's own reduction over the same inputs (separate
     * send and receive buffers: MPICH 4.0.2's in-place Reduce at root != 0
     * crashes). */
    if (second && t != T_FLT_SUM && nelem > 0) {
        for (size_t i = 0; i < nelem; i++)
            gen(t, rank, i, scratch + i * e);
        int mrc;
        if (c->allreduce)
            mrc = PMPI_Allreduce(scratch, aux, (int)nelem, mpi_types[t], mpi_ops[t], g->sub);
        else
            mrc = PMPI_Reduce(scratch, aux, (int)nelem, mpi_types[t], mpi_ops[t], root, g->sub);
        if (mrc != MPI_SUCCESS) {
            fail("PMPI second opinion returned %d", mrc);
        } else if ((c->allreduce || me == root) && memcmp(aux, buf, nb) != 0) {
            fail("result differs from PMPI's");
            /* Tells whether the MPI agrees with the test's expectation. */
            check_result(t, g, aux, nelem, "PMPI's result");
        }
    }
}

static void run_batch(MPI_Comm comm, const group_t *g, const config_t *c, type_t t,
                      const size_t *sizes, int nsizes, int all_roots, size_t piece, uint8_t *buf,
                      uint8_t *scratch, uint8_t *aux, int second, unsigned long long *ncases)
{
    static int batch;
    double tb = MPI_Wtime();
    int tag = 100 + 2 * (batch++ % 15000);
    int me = group_index(g);
    size_t maxnb = 0;
    for (int s = 0; s < nsizes; s++)
        if (sizes[s] * esize[t] > maxnb)
            maxnb = sizes[s] * esize[t];
    if (me < 0) {
        memset(buf, OUTSIDER, maxnb + GUARD);
        memset(scratch, OUTSIDER, maxnb + GUARD);
    }
    char gtext[300];
    group_print(gtext, sizeof(gtext), g);
    for (int s = 0; s < nsizes && me >= 0; s++) {
        int nroots = c->allreduce ? 1 : g->n;
        for (int root = 0; root < nroots; root++) {
            /* Only root 0, the middle and the last unless all_roots. */
            if (!all_roots && root != 0 && root != g->n / 2 && root != g->n - 1)
                continue;
            snprintf(current, sizeof(current),
                     "rank %d: %s alg=%s type=%s group=%s root_index=%d nelem=%zu piece=%zu", rank,
                     c->allreduce ? "allreduce" : "reduce", alg_name(c), type_names[t], gtext, root,
                     sizes[s], piece);
            double tc0 = MPI_Wtime();
            run_case(comm, g, me, c, t, root, sizes[s], tag, buf, scratch, aux, second);
            if (getenv("TC_LR_TIMES") && rank == 0)
                fprintf(stderr, "  case %.3fs %s\n", MPI_Wtime() - tc0, current);
            ++*ncases;
        }
    }
    snprintf(current, sizeof(current), "rank %d: after %s alg=%s type=%s group=%s", rank,
             c->allreduce ? "allreduce" : "reduce", alg_name(c), type_names[t], gtext);
    MPI_Barrier(comm);
    if (me < 0) {
        for (size_t i = 0; i < maxnb + GUARD; i++) {
            if (buf[i] != OUTSIDER || scratch[i] != OUTSIDER) {
                fail("non-member rank %d: byte %zu of buf/scratch changed", rank, i);
                break;
            }
        }
    }
    if (rank == 0 && getenv("TC_LR_TIMES"))
        fprintf(stderr, "%.3fs %s\n", MPI_Wtime() - tb, current);
    /* Only this batch's tags: ranks that left the barrier early may already
     * be sending the next batch's messages. */
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, tag, comm, &flag, &st);
    if (!flag)
        MPI_Iprobe(MPI_ANY_SOURCE, tag + 1, comm, &flag, &st);
    if (flag) {
        fail("%s rank %d has an unreceived message from rank %d (tag %d)",
             me < 0 ? "non-member" : "member", rank, st.MPI_SOURCE, st.MPI_TAG);
        int cnt = 0;
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        uint8_t *tmp = malloc(cnt > 0 ? (size_t)cnt : 1);
        MPI_Recv(tmp, cnt, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, comm, MPI_STATUS_IGNORE);
        free(tmp);
    }
}

/* Names, parsers and argument errors (local: no message is sent). */
static void check_api(MPI_Comm comm)
{
    static const struct {
        const char *word;
        int ok, alg;
    } rwords[] = {{"flat", 1, TC_HIER_REDUCE_FLAT},
                  {"BINOMIAL", 1, TC_HIER_REDUCE_BINOMIAL},
                  {"rsg", 1, TC_HIER_REDUCE_RSG},
                  {"Rsg", 1, TC_HIER_REDUCE_RSG},
                  {"recdbl", 0, 0},
                  {"", 0, 0},
                  {"flat ", 0, 0}},
      awords[] = {{"recdbl", 1, TC_HIER_ALLREDUCE_RECDBL},
                  {"RING", 1, TC_HIER_ALLREDUCE_RING},
                  {"flat", 0, 0},
                  {"ring2", 0, 0}};
    for (size_t i = 0; i < sizeof(rwords) / sizeof(rwords[0]); i++) {
        tc_hier_reduce_alg_t a = TC_HIER_REDUCE_LAST;
        int r = tc_hier_reduce_alg_parse(rwords[i].word, &a);
        if ((r == 0) != rwords[i].ok ||
            (rwords[i].ok ? (int)a != rwords[i].alg : a != TC_HIER_REDUCE_LAST))
            fail("reduce parse(\"%s\") returned %d alg %d", rwords[i].word, r, (int)a);
    }
    for (size_t i = 0; i < sizeof(awords) / sizeof(awords[0]); i++) {
        tc_hier_allreduce_alg_t a = TC_HIER_ALLREDUCE_LAST;
        int r = tc_hier_allreduce_alg_parse(awords[i].word, &a);
        if ((r == 0) != awords[i].ok ||
            (awords[i].ok ? (int)a != awords[i].alg : a != TC_HIER_ALLREDUCE_LAST))
            fail("allreduce parse(\"%s\") returned %d alg %d", awords[i].word, r, (int)a);
    }
    for (int a = 0; a < TC_HIER_REDUCE_LAST; a++) {
        tc_hier_reduce_alg_t back;
        if (tc_hier_reduce_alg_parse(tc_hier_reduce_alg_name((tc_hier_reduce_alg_t)a), &back) ||
            (int)back != a)
            fail("reduce name/parse round trip of %d", a);
    }
    for (int a = 0; a < TC_HIER_ALLREDUCE_LAST; a++) {
        tc_hier_allreduce_alg_t back;
        if (tc_hier_allreduce_alg_parse(tc_hier_allreduce_alg_name((tc_hier_allreduce_alg_t)a),
                                        &back) ||
            (int)back != a)
            fail("allreduce name/parse round trip of %d", a);
    }
    if (strcmp(tc_hier_reduce_alg_name(TC_HIER_REDUCE_LAST), "?") ||
        strcmp(tc_hier_allreduce_alg_name(TC_HIER_ALLREDUCE_LAST), "?") ||
        tc_hier_reduce_alg_parse(NULL, NULL) != tc_err(TC_ERR_PARSE))
        fail("name of LAST / parse(NULL)");

    /* Argument errors, caught before any message. */
    int b[8] = {0}, s[8];
    int self[1] = {rank}, other = rank == 0 ? 1 : 0;
    int desc[2] = {rank + 1, rank}, beyond[2] = {rank, size};
    int two[2] = {rank, rank + 1};
    const tc_redop_t *op = &redops[T_INT_SUM];
    struct {
        const char *what;
        void *buf, *scratch;
        const tc_redop_t *op;
        const int *members;
        int n, me, root, alg, allreduce, want;
    } bad[] = {
        {"reduce alg=LAST", b, s, op, self, 1, 0, 0, TC_HIER_REDUCE_LAST, 0, MPI_ERR_ARG},
        {"allreduce alg=LAST", b, s, op, self, 1, 0, 0, TC_HIER_ALLREDUCE_LAST, 1, MPI_ERR_ARG},
        {"my_index out of range", b, s, op, self, 1, 1, 0, 0, 0, MPI_ERR_ARG},
        {"root_index out of range", b, s, op, self, 1, 0, 1, 0, 0, MPI_ERR_ARG},
        {"root_index negative", b, s, op, self, 1, 0, -1, 0, 0, MPI_ERR_ARG},
        {"nmembers 0", b, s, op, self, 0, 0, 0, 0, 1, MPI_ERR_ARG},
        {"members NULL", b, s, op, NULL, 1, 0, 0, 0, 0, MPI_ERR_ARG},
        {"op NULL", b, s, NULL, self, 1, 0, 0, 0, 0, MPI_ERR_OP},
        {"buf NULL", NULL, s, op, self, 1, 0, 0, 0, 1, MPI_ERR_ARG},
        {"scratch NULL", b, NULL, op, two, 2, 0, 0, 0, 1, MPI_ERR_ARG},
        {"scratch overlaps buf", b, b + 1, op, two, 2, 0, 0, 0, 0, MPI_ERR_ARG},
        {"members[my_index] != rank", b, s, op, &other, 1, 0, 0, 0, 0, MPI_ERR_ARG},
        {"members not ascending", b, s, op, desc, 2, 1, 0, 0, 1, MPI_ERR_ARG},
        {"member beyond comm", b, s, op, beyond, 2, 0, 0, 0, 0, MPI_ERR_ARG},
        {"rsg non-commutative", b, s, &redops[T_MAT], self, 1, 0, 0, TC_HIER_REDUCE_RSG, 0,
         MPI_ERR_OP},
        {"ring non-commutative", b, s, &redops[T_MAT], self, 1, 0, 0, TC_HIER_ALLREDUCE_RING, 1,
         MPI_ERR_OP},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc = bad[i].allreduce
                     ? tc_hier_allreduce_group(bad[i].buf, bad[i].scratch, 2, bad[i].op,
                                               bad[i].members, bad[i].n, bad[i].me,
                                               (tc_hier_allreduce_alg_t)bad[i].alg, comm, 1, NULL)
                     : tc_hier_reduce_group(bad[i].buf, bad[i].scratch, 2, bad[i].op,
                                            bad[i].members, bad[i].n, bad[i].me, bad[i].root,
                                            (tc_hier_reduce_alg_t)bad[i].alg, comm, 1, NULL);
        int cls = -1;
        if (rc != MPI_SUCCESS)
            cls = tc_err_to_mpi(rc); /* the class the API would report */
        if (cls != bad[i].want)
            fail("%s returned %d, want error class %d", bad[i].what, rc, bad[i].want);
    }
    /* One member, or no elements: success at once, buffer untouched. */
    b[0] = 42;
    if (tc_hier_reduce_group(b, NULL, 2, op, self, 1, 0, 0, TC_HIER_REDUCE_RSG, comm, 1, NULL) ||
        tc_hier_allreduce_group(b, NULL, 2, op, self, 1, 0, TC_HIER_ALLREDUCE_RING, comm, 1,
                                NULL) ||
        b[0] != 42)
        fail("single member without scratch");
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
    tt_check_np("test_level_reduce");
    if (size > MAX_GROUP) {
        fprintf(stderr, "test_level_reduce: at most %d processes\n", MAX_GROUP);
        MPI_Finalize();
        return 1;
    }
    const char *alarm_text = getenv("TC_LR_ALARM");
    signal(SIGALRM, on_alarm);
    alarm(alarm_text ? (unsigned)atoi(alarm_text) : 110u);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    double t0 = MPI_Wtime();

    MPI_Datatype mat;
    MPI_Type_contiguous(4, MPI_INT, &mat);
    MPI_Type_commit(&mat);
    MPI_Op matop;
    MPI_Op_create(matmul_fn, 0, &matop);
    mpi_types[T_INT_SUM] = MPI_INT, mpi_ops[T_INT_SUM] = MPI_SUM;
    mpi_types[T_DBL_SUM] = MPI_DOUBLE, mpi_ops[T_DBL_SUM] = MPI_SUM;
    mpi_types[T_INT_MAX] = MPI_INT, mpi_ops[T_INT_MAX] = MPI_MAX;
    mpi_types[T_MAT] = mat, mpi_ops[T_MAT] = matop;
    mpi_types[T_FLT_SUM] = MPI_FLOAT, mpi_ops[T_FLT_SUM] = MPI_SUM;
    for (int t = 0; t < T_LAST; t++) {
        if (tc_redop_init(&redops[t], 1, mpi_types[t], mpi_ops[t]) != 0) {
            fprintf(stderr, "rank %d: tc_redop_init refused %s\n", rank, type_names[t]);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        esize[t] = redops[t].elem;
    }
    if (esize[T_MAT] != 16 || redops[T_MAT].commutative || !redops[T_INT_SUM].commutative) {
        fprintf(stderr, "rank %d: unexpected redop classification\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

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
        cand[i] = i + 1;
    add_group(groups, &ngroups, "not0", cand, size);
    /* The highest ranks and one low one: member order != world's crowding. */
    int high[4] = {1, size - 3, size - 2, size - 1};
    add_group(groups, &ngroups, "high", high, 4);
    cand[0] = size / 2;
    add_group(groups, &ngroups, "single", cand, 1);
    for (int gi = 0; gi < ngroups; gi++) {
        int member = group_index(&groups[gi]) >= 0;
        MPI_Comm_split(comm, member ? 0 : MPI_UNDEFINED, rank, &groups[gi].sub);
    }

    static const config_t configs[] = {
        {0, TC_HIER_REDUCE_FLAT},      {0, TC_HIER_REDUCE_BINOMIAL}, {0, TC_HIER_REDUCE_RSG},
        {1, TC_HIER_ALLREDUCE_RECDBL}, {1, TC_HIER_ALLREDUCE_RING},
    };
    const int nconfigs = (int)(sizeof(configs) / sizeof(configs[0]));
    size_t maxbytes = (size_t)BIG_INTS * sizeof(int);
    if ((size_t)(65536 + 3) * 16 > maxbytes)
        maxbytes = (size_t)(65536 + 3) * 16;
    uint8_t *buf = malloc(maxbytes + GUARD), *scratch = malloc(maxbytes + GUARD),
            *aux = malloc(maxbytes + GUARD);
    if (!buf || !scratch || !aux) {
        fprintf(stderr, "rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    unsigned long long ncases = 0;
    for (int gi = 0; gi < ngroups; gi++) {
        const group_t *g = &groups[gi];
        size_t n = (size_t)g->n;
        /* Ascending (the non-member check covers the largest), duplicates
         * harmless; around the group size (empty and single-element blocks,
         * the RSG -> BINOMIAL switch), then larger. */
        size_t full[] = {0, 1, 2, 3, 7, n - 1, n, n + 1, 1000, 65536 + 3};
        /* --quick (MPICH oversubscribed, where every hop costs a time
         * slice): int/sum (member mapping) and the matrix product (member
         * order) on every group, the other types on the full group only;
         * the full set of quick sizes for those two on the full group, else
         * fewer elements than members, one more, and many; roots 0, middle
         * and last in groups of more than 3; the PMPI second opinion for
         * those two on the full group. */
        size_t quick_full[] = {0, 1, n, n + 1, 1000, 65536 + 3}, quick_few[] = {1, n + 1, 1000};
        for (int ci = 0; ci < nconfigs; ci++) {
            for (int t = 0; t < T_LAST; t++) {
                int key = t == T_INT_SUM || t == T_MAT;
                if (!quick)
                    run_batch(comm, g, &configs[ci], (type_t)t, full, 10, 1,
                              TC_HIER_BCAST_PIECE_MAX, buf, scratch, aux, 1, &ncases);
                else if (gi == 0 && key)
                    run_batch(comm, g, &configs[ci], (type_t)t, quick_full, 6, n <= 3,
                              TC_HIER_BCAST_PIECE_MAX, buf, scratch, aux, 1, &ncases);
                else if (gi == 0 || t == T_INT_SUM ||
                         (t == T_MAT &&
                          !(configs[ci].allreduce ? configs[ci].alg == TC_HIER_ALLREDUCE_RING
                                                  : configs[ci].alg == TC_HIER_REDUCE_RSG)))
                    run_batch(comm, g, &configs[ci], (type_t)t, quick_few, 3, n <= 3,
                              TC_HIER_BCAST_PIECE_MAX, buf, scratch, aux, 0, &ncases);
            }
        }
    }
    /* ~1 MiB of ints on the full group: root 0, the middle, the last. */
    if (!quick || size <= 3) {
        size_t big[1] = {BIG_INTS};
        for (int ci = 0; ci < nconfigs; ci++)
            run_batch(comm, &groups[0], &configs[ci], T_INT_SUM, big, 1, 0, TC_HIER_BCAST_PIECE_MAX,
                      buf, scratch, aux, 1, &ncases);
    }
    /* Pieces of 1000 bytes: not a multiple of the 16-byte matrix element, so
     * pieces cut elements and the reassembly must still be exact. */
    tc_hier_bcast_piece_max_set(1000);
    {
        size_t psizes[] = {3, 250, 1000};
        for (int gi = 0; gi < (quick ? 1 : ngroups); gi += 2)
            for (int ci = 0; ci < nconfigs; ci++)
                for (int t = 0; t < T_LAST; t++)
                    if (!quick || t == T_INT_SUM || t == T_MAT)
                        run_batch(comm, &groups[gi], &configs[ci], (type_t)t, psizes, 3, 0, 1000,
                                  buf, scratch, aux, 0, &ncases);
    }
    tc_hier_bcast_piece_max_set(0);
    snprintf(current, sizeof(current), "rank %d: final reduction", rank);

    for (int gi = 0; gi < ngroups; gi++)
        if (groups[gi].sub != MPI_COMM_NULL)
            MPI_Comm_free(&groups[gi].sub);
    for (int t = 0; t < T_LAST; t++)
        tc_redop_free(&redops[t]);
    MPI_Op_free(&matop);
    MPI_Type_free(&mat);
    free(buf);
    free(scratch);
    free(aux);

    long total[1] = {tt_failures_all()};
    if (rank == 0)
        printf("test_level_reduce: np=%d %s groups=%d configs=%d cases=%llu failures=%ld "
               "(summed over ranks) time=%.2fs: %s\n",
               size, quick ? "quick" : "full", ngroups, nconfigs, ncases, total[0],
               MPI_Wtime() - t0, total[0] ? "FAILED" : "ok");
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return total[0] ? 1 : 0;
}
