/* MPI tests of TC_Reduce and TC_Allreduce (public header + MPI only).
 *
 * The oracle: element j of comm rank r's contribution is a pure function
 * gen(kind, op, seed, r, j), so every rank folds the expected result itself,
 * in rank order, without communication. PMPI_Reduce / PMPI_Allreduce on the
 * same inputs are a second opinion (they must agree with the fold too), never
 * the reference. The tests check results, not the path the library took
 * (except part "shmcheck", whose stats lines the ctest driver checks).
 *
 * Parts (--parts a,b,...; default types,sizes,float,comms):
 *   types    predefined ops x types, MINLOC/MAXLOC with ties, derived types
 *            (vector with holes, contiguous(3, double)), a commutative user
 *            op and a non-commutative one (2x2 matrix product mod 2^32)
 *   sizes    counts 0..65537 (+ a ~4 MiB case on np <= 3), every root,
 *            MPI_IN_PLACE, Reduce / Bcast / Allreduce interleaved
 *   float    random-ish float and double sums within a stated tolerance;
 *            TC_Allreduce must give every rank the same bits
 *   comms    a dup'd and an odd/even split communicator, interleaved with
 *            the world communicator
 *   layouts  regression: ranks pass different (count, datatype) layouts of
 *            one type signature
 *   errors   bad arguments -> MPI error classes, buffers untouched
 *   shmcheck a few MPI_INT sums (run with TC_STATS=1 by the *_shm_used tests)
 *   runahead small reductions (one line's payload at most) in runs of one
 *            root that is late now and then, so the others run the inline
 *            ring's length ahead and wrap it, then the same with only
 *            messages of at most 8 bytes (the packed ring; run with --pmpi 0)
 * --quick shrinks the matrix (MPICH with np > 2 on 2 cores; --all-roots keeps
 * every root in part sizes), --pmpi N runs the second opinion on every N-th
 * case (0: never; the non-commutative op always), --big BYTES sizes the big
 * case (0: none), --expect-unbound fails when the process is bound to fewer
 * CPUs than the machine has (the unbound tests' premise).
 *
 * A TC_ call that returns an error aborts the job after reporting the case
 * (its peers may be stuck in the collective); wrong results are counted and
 * the run goes on. Rank 0 prints one summary line; exit 0 only when no rank
 * failed and cases ran.
 *
 * Never calls PMPI_Reduce with MPI_IN_PLACE: Debian's MPICH 4.0.2 segfaults
 * there at root != 0 above ~2 KiB; the second opinion always gets a send
 * buffer.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <float.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <topocoll.h>
#include <unistd.h>

#include "tc_test_common.h"

#define SENTINEL 0xA5u
#define GUARD    64 /* bytes after the data that must keep the sentinel */

/* ------------------------------------------------------------------------ */
/* Bookkeeping (after tc_test_common.c)                                      */

static const char *prog = "tc_mpitest_reduce";
static int wrank = -1, wsize;
static long ncases;
static unsigned long case_serial; /* identical on every rank: every rank runs every case */

static struct {
    int quick;
    long pmpi_every;
    long big_bytes;
    int expect_unbound;
    int all_roots; /* sizes part: every root even with --quick */
} opt;

/* A collective that returned an error leaves its peers in an unknown state
 * (some may wait in it forever): report the case, with the MPI's error
 * text, and end the job now rather than at the test's timeout. */
static void fail_call_abort(const char *what, int rc)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        len = 0;
    text[len] = '\0';
    tt_fail("%s: returned %d (%s): aborting the job", what, rc, text);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "%s rank %d: out of memory (%zu bytes)\n", prog, wrank, n);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

static const char *arg(int argc, char **argv, const char *name, const char *def)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return argv[i + 1];
    return def;
}

static int has_flag(int argc, char **argv, const char *name)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return 1;
    return 0;
}

static long parse_size(const char *text)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (end == text || v < 0)
        return -1;
    if (*end == 'K' || *end == 'k')
        v <<= 10, end++;
    else if (*end == 'M' || *end == 'm')
        v <<= 20, end++;
    return *end ? -1 : v;
}

static int in_list(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; (p = strstr(p, word)) != NULL; p += n)
        if ((p == list || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
            return 1;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Values                                                                    */

static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static uint64_t hval(uint64_t seed, int r, size_t j)
{
    return mix(seed ^ mix((uint64_t)(uint32_t)r * 0xD1B54A32D192ED03ull + (uint64_t)j));
}

/* Base element kinds: what one primitive slot (or MPI pair, or matrix) is. */
typedef enum { K_I32, K_I64, K_U8, K_F32, K_F64, K_U64, K_DI, K_2I, K_M22, K_LAST } kind_t;

typedef enum {
    O_SUM,
    O_PROD,
    O_MAX,
    O_MIN,
    O_BAND,
    O_BOR,
    O_BXOR,
    O_LAND,
    O_LOR,
    O_MINLOC,
    O_MAXLOC,
    O_USERMAX, /* user-defined, commutative: elementwise max on int */
    O_MATMUL,  /* user-defined, non-commutative: 2x2 product mod 2^32 */
    O_LAST
} opk_t;

typedef struct {
    double v;
    int loc;
} di_t; /* MPI_DOUBLE_INT; the 4 bytes of padding are not in its type map */

typedef struct {
    int v, loc;
} ii_t;

/* Bytes of a base element, and bytes of it in the type map. */
static const size_t kind_size[K_LAST] = {4, 8, 1, 4, 8, 8, sizeof(di_t), 8, 16};
static const size_t kind_mapped[K_LAST] = {4, 8, 1, 4, 8, 8, sizeof(double) + sizeof(int), 8, 16};

static void gen(kind_t k, opk_t o, uint64_t seed, int r, size_t j, void *out)
{
    static const int small_prod[8] = {1, -1, 2, 1, -2, 1, 3, 1};
    static const double fprod[8] = {1, 2, 0.5, -1, -2, 1, 0.5, 1};
    uint64_t h = hval(seed, r, j);
    uint64_t h2 = mix(h), h3 = mix(h2);
    /* Nonzero small value for the logical ops: 1..4, -1..-4. */
    int idx = (int)((h >> 8) % 8);
    int nz = idx < 4 ? idx + 1 : -(idx - 3);

    switch (k) {
    case K_I32: {
        int32_t v;
        switch (o) {
        case O_SUM:
            v = (int32_t)(h % 201) - 100;
            break;
        case O_PROD:
            v = small_prod[h & 7];
            break;
        case O_BAND:
            v = (int32_t)(uint32_t)(h | h2 | h3); /* ~7/8 ones */
            break;
        case O_BOR:
            v = (int32_t)(uint32_t)(h & h2 & h3); /* ~1/8 ones */
            break;
        case O_LAND:
            v = (h & 7) == 0 ? 0 : nz;
            break;
        case O_LOR:
            v = (h & 7) == 0 ? nz : 0;
            break;
        default:
            v = (int32_t)(uint32_t)h;
            break;
        }
        memcpy(out, &v, 4);
        return;
    }
    case K_I64: {
        int64_t v;
        if (o == O_SUM)
            v = (int64_t)(h >> 24) - ((int64_t)1 << 39); /* |v| < 2^40: no overflow */
        else if (o == O_PROD)
            v = small_prod[h & 7];
        else
            v = (int64_t)h;
        memcpy(out, &v, 8);
        return;
    }
    case K_U8: {
        /* SUM and PROD wrap around mod 256; PROD avoids 0 so it stays
         * interesting. */
        uint8_t v = (uint8_t)h;
        if (o == O_PROD && v == 0)
            v = 3;
        memcpy(out, &v, 1);
        return;
    }
    case K_F32:
    case K_F64: {
        double v;
        if (o == O_SUM)
            v = (double)((int)(h % 201) - 100); /* sums of <= 8 stay exact */
        else if (o == O_PROD)
            v = fprod[h & 7]; /* powers of two: exact */
        else
            v = (double)(int32_t)(uint32_t)h / 1024.0;
        if (k == K_F32) {
            float f = (float)v;
            memcpy(out, &f, 4);
        } else {
            memcpy(out, &v, 8);
        }
        return;
    }
    case K_U64: {
        uint64_t v = o == O_BAND ? (h | h2 | h3) : o == O_BOR ? (h & h2 & h3) : h;
        memcpy(out, &v, 8);
        return;
    }
    case K_DI: {
        /* Values 0, 1, 2: many ties, broken by the lowest index. */
        di_t v;
        memset(&v, SENTINEL, sizeof v); /* padding keeps the sentinel */
        v.v = (double)(h % 3);
        v.loc = (int)((h >> 8) % 2001) - 1000;
        memcpy(out, &v, sizeof v);
        return;
    }
    case K_2I: {
        ii_t v = {(int)(h % 3) - 1, (int)((h >> 8) % 2001) - 1000};
        memcpy(out, &v, sizeof v);
        return;
    }
    case K_M22: {
        uint32_t m[4] = {(uint32_t)h, (uint32_t)(h >> 32), (uint32_t)h2, (uint32_t)(h2 >> 32)};
        memcpy(out, m, sizeof m);
        return;
    }
    default:
        abort();
    }
}

/* c = a * b (row-major 2x2, mod 2^32); c may alias a or b. */
static void m22_mul(const uint32_t *a, const uint32_t *b, uint32_t *c)
{
    uint32_t t[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                     a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
    memcpy(c, t, sizeof t);
}

#define ARITH(T)                                                                                   \
    do {                                                                                           \
        T x, y;                                                                                    \
        memcpy(&x, acc, sizeof x);                                                                 \
        memcpy(&y, in, sizeof y);                                                                  \
        switch (o) {                                                                               \
        case O_SUM:                                                                                \
            x = (T)(x + y);                                                                        \
            break;                                                                                 \
        case O_PROD:                                                                               \
            x = (T)(x * y);                                                                        \
            break;                                                                                 \
        case O_MAX:                                                                                \
        case O_USERMAX:                                                                            \
            x = y > x ? y : x;                                                                     \
            break;                                                                                 \
        case O_MIN:                                                                                \
            x = y < x ? y : x;                                                                     \
            break;                                                                                 \
        default:                                                                                   \
            abort();                                                                               \
        }                                                                                          \
        memcpy(acc, &x, sizeof x);                                                                 \
    } while (0)

#define BITS(T)                                                                                    \
    do {                                                                                           \
        T x, y;                                                                                    \
        memcpy(&x, acc, sizeof x);                                                                 \
        memcpy(&y, in, sizeof y);                                                                  \
        x = o == O_BAND ? (T)(x & y) : o == O_BOR ? (T)(x | y) : (T)(x ^ y);                       \
        memcpy(acc, &x, sizeof x);                                                                 \
    } while (0)

#define PAIR(T)                                                                                    \
    do {                                                                                           \
        T x, y;                                                                                    \
        memcpy(&x, acc, sizeof x);                                                                 \
        memcpy(&y, in, sizeof y);                                                                  \
        if (o == O_MINLOC ? y.v < x.v : y.v > x.v)                                                 \
            x = y;                                                                                 \
        else if (y.v == x.v && y.loc < x.loc)                                                      \
            x.loc = y.loc;                                                                         \
        memcpy(acc, &x, sizeof x);                                                                 \
    } while (0)

/* acc = acc (lower ranks) op in (the next rank): MPI's order. */
static void combine(kind_t k, opk_t o, void *acc, const void *in)
{
    switch (k) {
    case K_I32:
        if (o == O_BAND || o == O_BOR || o == O_BXOR) {
            BITS(uint32_t);
        } else if (o == O_LAND || o == O_LOR) {
            int32_t x, y;
            memcpy(&x, acc, 4);
            memcpy(&y, in, 4);
            x = o == O_LAND ? (x && y) : (x || y);
            memcpy(acc, &x, 4);
        } else if (o == O_SUM || o == O_PROD) {
            /* Wrap-free by construction; unsigned keeps the fold defined. */
            uint32_t x, y;
            memcpy(&x, acc, 4);
            memcpy(&y, in, 4);
            x = o == O_SUM ? x + y : x * y;
            memcpy(acc, &x, 4);
        } else {
            ARITH(int32_t);
        }
        return;
    case K_I64:
        if (o == O_SUM || o == O_PROD) {
            uint64_t x, y;
            memcpy(&x, acc, 8);
            memcpy(&y, in, 8);
            x = o == O_SUM ? x + y : x * y;
            memcpy(acc, &x, 8);
        } else {
            ARITH(int64_t);
        }
        return;
    case K_U8:
        ARITH(uint8_t);
        return;
    case K_F32:
        ARITH(float);
        return;
    case K_F64:
        ARITH(double);
        return;
    case K_U64:
        BITS(uint64_t);
        return;
    case K_DI:
        PAIR(di_t);
        return;
    case K_2I:
        PAIR(ii_t);
        return;
    case K_M22: {
        uint32_t x[4], y[4];
        memcpy(x, acc, sizeof x);
        memcpy(y, in, sizeof y);
        m22_mul(x, y, x);
        memcpy(acc, x, sizeof x);
        return;
    }
    default:
        abort();
    }
}

/* ------------------------------------------------------------------------ */
/* Datatypes and user ops                                                    */

static void user_max_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const int *a = in;
    int *b = inout;
    (void)dt;
    for (int i = 0; i < *len; i++)
        if (a[i] > b[i])
            b[i] = a[i];
}

/* MPI: inoutvec[i] = invec[i] o inoutvec[i], invec holding the lower ranks. */
static void matmul_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const uint32_t *a = in;
    uint32_t *b = inout;
    (void)dt;
    for (int i = 0; i < *len; i++)
        m22_mul(a + 4 * i, b + 4 * i, b + 4 * i);
}

static MPI_Op op_usermax, op_matmul;
static MPI_Datatype dt_vec_holes; /* vector(3 blocks of 2 int, stride 3), resized to 36 B */
static MPI_Datatype dt_contig3d;  /* contiguous(3, MPI_DOUBLE) */
static MPI_Datatype dt_m22;       /* contiguous(4, MPI_UINT32_T) */
static MPI_Datatype dt_contig4i;  /* contiguous(4, MPI_INT) */
static MPI_Datatype dt_vec224;    /* vector(2, 2, 4, MPI_INT): ii..ii, extent 24 B */
static MPI_Datatype dt_contig2i;  /* contiguous(2, MPI_INT) */
static const size_t off_vec_holes[6] = {0, 4, 12, 16, 24, 28};
static const size_t off_vec224[4] = {0, 4, 16, 20};

static void types_create(void)
{
    MPI_Datatype v;
    MPI_Type_vector(3, 2, 3, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, 36, &dt_vec_holes);
    MPI_Type_free(&v);
    MPI_Type_commit(&dt_vec_holes);
    MPI_Type_contiguous(3, MPI_DOUBLE, &dt_contig3d);
    MPI_Type_commit(&dt_contig3d);
    MPI_Type_contiguous(4, MPI_UINT32_T, &dt_m22);
    MPI_Type_commit(&dt_m22);
    MPI_Type_contiguous(4, MPI_INT, &dt_contig4i);
    MPI_Type_commit(&dt_contig4i);
    MPI_Type_vector(2, 2, 4, MPI_INT, &dt_vec224);
    MPI_Type_commit(&dt_vec224);
    MPI_Type_contiguous(2, MPI_INT, &dt_contig2i);
    MPI_Type_commit(&dt_contig2i);
    MPI_Op_create(user_max_fn, 1, &op_usermax);
    MPI_Op_create(matmul_fn, 0, &op_matmul);
}

static void types_free(void)
{
    MPI_Type_free(&dt_vec_holes);
    MPI_Type_free(&dt_contig3d);
    MPI_Type_free(&dt_m22);
    MPI_Type_free(&dt_contig4i);
    MPI_Type_free(&dt_vec224);
    MPI_Type_free(&dt_contig2i);
    MPI_Op_free(&op_usermax);
    MPI_Op_free(&op_matmul);
}

/* Per (kind, op): 1 when this MPI's own operation is known wrong on this
 * machine (mpi_u8_probe), so the second opinion is skipped for it; the
 * library is still checked against the fold. */
static signed char mpi_op_broken[K_LAST][O_LAST];

/* What one rank passes: datatype and op of the call and where the base
 * elements of one datatype element lie. */
typedef struct {
    const char *name;
    kind_t kind;
    opk_t opk;
    MPI_Datatype dt;
    MPI_Op op;
    int per;            /* base elements per datatype element */
    size_t extent;      /* bytes per datatype element */
    const size_t *offs; /* byte offsets of the base elements in one element; NULL: packed */
} spec_t;

static size_t base_off(const spec_t *s, size_t j)
{
    size_t e = j / (size_t)s->per, w = j % (size_t)s->per;
    return e * s->extent + (s->offs ? s->offs[w] : w * kind_size[s->kind]);
}

static size_t buf_bytes(const spec_t *s, int count)
{
    return (size_t)count * s->extent + GUARD;
}

/* Rank r's contribution in layout s. */
static void fill(void *buf, const spec_t *s, int count, uint64_t seed, int r)
{
    unsigned char *b = buf, v[32];
    size_t nb = (size_t)count * (size_t)s->per;
    memset(b, SENTINEL, buf_bytes(s, count));
    for (size_t j = 0; j < nb; j++) {
        gen(s->kind, s->opk, seed, r, j, v);
        memcpy(b + base_off(s, j), v, kind_mapped[s->kind]);
    }
}

/* The reduction over ranks 0..n-1, folded in rank order, in layout s. */
static void expect_build(void *buf, const spec_t *s, int count, uint64_t seed, int n)
{
    unsigned char *b = buf, acc[32], v[32];
    size_t nb = (size_t)count * (size_t)s->per;
    memset(b, SENTINEL, buf_bytes(s, count));
    for (size_t j = 0; j < nb; j++) {
        gen(s->kind, s->opk, seed, 0, j, acc);
        for (int r = 1; r < n; r++) {
            gen(s->kind, s->opk, seed, r, j, v);
            combine(s->kind, s->opk, acc, v);
        }
        memcpy(b + base_off(s, j), acc, kind_mapped[s->kind]);
    }
}

static void hex(char *out, size_t outlen, const unsigned char *b, size_t n)
{
    size_t pos = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n && pos + 3 < outlen; i++)
        pos += (size_t)snprintf(out + pos, outlen - pos, "%02x", b[i]);
}

/* 0 when got matches expect: every mapped byte, and the holes and the guard
 * (the sentinel) too, except the padding of MPI_DOUBLE_INT, which is not in
 * its type map. Otherwise describes the first difference into msg. */
static int compare(const void *got, const void *expect, const spec_t *s, int count, char *msg,
                   size_t msglen)
{
    const unsigned char *g = got, *e = expect;
    size_t nbytes = buf_bytes(s, count), nb = (size_t)count * (size_t)s->per, ndiff = 0;
    size_t first = (size_t)-1;
    char he[80], hg[80];

    if (s->kind != K_DI) {
        if (memcmp(g, e, nbytes) == 0)
            return 0;
    } else {
        int bad = memcmp(g + nbytes - GUARD, e + nbytes - GUARD, GUARD) != 0;
        for (size_t j = 0; j < nb && !bad; j++)
            bad = memcmp(g + base_off(s, j), e + base_off(s, j), kind_mapped[K_DI]) != 0;
        if (!bad)
            return 0;
    }
    for (size_t j = 0; j < nb; j++) {
        size_t off = base_off(s, j);
        if (memcmp(g + off, e + off, kind_mapped[s->kind]) != 0) {
            if (first == (size_t)-1)
                first = j;
            ndiff++;
        }
    }
    if (first != (size_t)-1) {
        size_t off = base_off(s, first);
        hex(he, sizeof he, e + off, kind_mapped[s->kind]);
        hex(hg, sizeof hg, g + off, kind_mapped[s->kind]);
        snprintf(msg, msglen, "element %zu (byte %zu): expected %s got %s; %zu of %zu differ",
                 first, off, he, hg, ndiff, nb);
        return 1;
    }
    for (size_t i = 0; i < nbytes; i++)
        if (g[i] != e[i]) {
            snprintf(msg, msglen, "byte %zu in a %s must keep 0x%02x, got 0x%02x", i,
                     i >= nbytes - GUARD ? "guard after the data" : "hole of the datatype",
                     SENTINEL, g[i]);
            return 1;
        }
    return 1; /* only DI padding differed: unreachable */
}

/* ------------------------------------------------------------------------ */
/* One exact case                                                            */

static int pmpi_now(void)
{
    return opt.pmpi_every > 0 && case_serial % (unsigned long)opt.pmpi_every == 0;
}

static const char *comm_label(MPI_Comm comm)
{
    static char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Comm_get_name(comm, name, &len);
    return len > 0 ? name : "comm";
}

/* The element type of a derived datatype built from one predefined type. */
static MPI_Datatype base_type(kind_t k)
{
    switch (k) {
    case K_I32:
        return MPI_INT;
    case K_F64:
        return MPI_DOUBLE;
    default:
        abort();
    }
}

/* Second opinion: the MPI itself on the same inputs, never in place (see
 * the top of the file). MPI defines predefined ops on predefined datatypes
 * only (MPI-4.0 6.9.2; both MPIs reject a derived type with MPI_SUM), which
 * the library extends: for those the MPI gets the same elements packed, as
 * `count * per` elements of the base type. */
static void run_pmpi(MPI_Comm comm, const spec_t *mine, int count, int root, uint64_t seed,
                     const void *sendbuf, void *recv, const void *expect)
{
    int rank, n, rc;
    char msg[400];
    const int derived = mine->per > 1 || mine->offs != NULL;
    const int user_op = mine->opk == O_USERMAX || mine->opk == O_MATMUL;
    spec_t packed = {
        "packed", mine->kind, mine->opk, MPI_DATATYPE_NULL, mine->op, 1, kind_size[mine->kind],
        NULL};
    const spec_t *s = mine;
    const void *sb = sendbuf, *eb = expect;
    void *rb = recv, *own[3] = {NULL, NULL, NULL};
    int c = count;
    const char *what = root < 0 ? "PMPI_Allreduce" : "PMPI_Reduce";

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n);
    const int receives = root < 0 || rank == root;
    if (derived && !user_op) {
        packed.dt = base_type(mine->kind);
        s = &packed;
        c = count * mine->per;
        own[0] = xmalloc(buf_bytes(s, c));
        own[1] = xmalloc(buf_bytes(s, c));
        fill(own[0], s, c, seed, rank);
        if (receives) {
            own[2] = xmalloc(buf_bytes(s, c));
            expect_build(own[2], s, c, seed, n);
        }
        sb = own[0];
        rb = own[1];
        eb = own[2];
    }
    memset(rb, SENTINEL, buf_bytes(s, c));
    if (root < 0)
        rc = PMPI_Allreduce(sb, rb, c, s->dt, s->op, comm);
    else
        rc = PMPI_Reduce(sb, rb, c, s->dt, s->op, root, comm);
    if (rc != MPI_SUCCESS) {
        char d[300];
        snprintf(d, sizeof d, "second opinion %s %s on %s (np %d) count %d root %d", what,
                 mine->name, comm_label(comm), n, c, root);
        fail_call_abort(d, rc);
    } else if (receives && compare(rb, eb, s, c, msg, sizeof msg))
        tt_fail("second opinion %s %s on %s (np %d) count %d root %d disagrees with the expected "
                "values: %s",
                what, mine->name, comm_label(comm), n, c, root, msg);
    for (int i = 0; i < 3; i++)
        free(own[i]);
}

/* TC_Reduce (root >= 0) or TC_Allreduce (root < 0) of `count` elements of
 * layout `mine` (which may differ between ranks with the same signature).
 * in_place: MPI_IN_PLACE at the root / on every rank. null_recv: a non-root
 * passes recvbuf NULL, as applications do. */
static void run_case(MPI_Comm comm, const spec_t *mine, int count, int root, int in_place,
                     uint64_t seed)
{
    int rank, n, rc;
    char msg[400];
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n);
    const int receives = root < 0 || rank == root;
    const int null_recv = (case_serial & 1) != 0;
    const size_t nbytes = buf_bytes(mine, count);
    unsigned char *send = xmalloc(nbytes), *sendcopy = xmalloc(nbytes);
    unsigned char *recv = xmalloc(nbytes), *expect = NULL;
    const void *sbuf = send;
    void *rbuf = recv;
    const char *what = root < 0 ? "TC_Allreduce" : "TC_Reduce";

    case_serial++;
    fill(send, mine, count, seed, rank);
    memcpy(sendcopy, send, nbytes);
    memset(recv, SENTINEL, nbytes);
    if (receives) {
        expect = xmalloc(nbytes);
        expect_build(expect, mine, count, seed, n);
        if (in_place) {
            memcpy(recv, send, nbytes);
            sbuf = MPI_IN_PLACE;
        }
    } else if (null_recv) {
        rbuf = NULL;
    }
    if (root < 0)
        rc = TC_Allreduce(sbuf, rbuf, count, mine->dt, mine->op, comm);
    else
        rc = TC_Reduce(sbuf, rbuf, count, mine->dt, mine->op, root, comm);

#define CASE_FMT "%s %s on %s (np %d) count %d root %d%s: "
#define CASE_ARGS                                                                                  \
    what, mine->name, comm_label(comm), n, count, root, in_place ? " MPI_IN_PLACE" : ""
    if (rc != MPI_SUCCESS) {
        char d[300];
        snprintf(d, sizeof d, CASE_FMT, CASE_ARGS);
        d[strlen(d) - 2] = '\0'; /* the ": " */
        fail_call_abort(d, rc);
    } else if (receives && compare(recv, expect, mine, count, msg, sizeof msg))
        tt_fail(CASE_FMT "wrong result: %s", CASE_ARGS, msg);
    if (sbuf != MPI_IN_PLACE && memcmp(send, sendcopy, nbytes) != 0)
        tt_fail(CASE_FMT "sendbuf was modified", CASE_ARGS);

    /* The non-commutative op always: PMPI's rank order is the reference
     * the library's header promises to match. */
    if ((pmpi_now() || mine->opk == O_MATMUL) && !mpi_op_broken[mine->kind][mine->opk])
        run_pmpi(comm, mine, count, root, seed, sendcopy, recv, expect);
    ncases++;
    free(send);
    free(sendcopy);
    free(recv);
    free(expect);
}

/* TC_Bcast of count ints from root, interleaved with the reductions. */
static void run_bcast(MPI_Comm comm, int count, int root, uint64_t seed)
{
    int rank, n, rc;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n);
    int *buf = xmalloc((size_t)count * sizeof(int) + 1);
    for (int i = 0; i < count; i++)
        buf[i] = rank == root ? (int)(uint32_t)hval(seed, root, (size_t)i) : -1;
    case_serial++;
    rc = TC_Bcast(buf, count, MPI_INT, root, comm);
    if (rc != MPI_SUCCESS) {
        char d[200];
        snprintf(d, sizeof d, "TC_Bcast on %s count %d root %d", comm_label(comm), count, root);
        fail_call_abort(d, rc);
    } else {
        for (int i = 0; i < count; i++)
            if (buf[i] != (int)(uint32_t)hval(seed, root, (size_t)i)) {
                tt_fail("TC_Bcast on %s (np %d) count %d root %d: element %d wrong",
                        comm_label(comm), n, count, root, i);
                break;
            }
    }
    ncases++;
    free(buf);
}

/* ------------------------------------------------------------------------ */
/* Specs                                                                     */

/* Known bugs of the MPIs installed here, detected by their exact signature
 * so that the second opinion is skipped for them (and only them: a probe
 * that excused every mismatch would also excuse a wrong oracle):
 * - Open MPI 4.1's op/avx saturates MPI_SUM on MPI_UNSIGNED_CHAR instead of
 *   wrapping (open-mpi/ompi#8045);
 * - MPICH 4.0.2 compares MPI_UNSIGNED_CHAR as signed in MPI_MAX / MPI_MIN
 *   (the family of pmodels/mpich#6083).
 * A sign that the MPI's own result is wrong whenever the library hands such
 * a call to PMPI_* (or PMPI_Reduce_local): those TC_ results are still
 * checked against the fold and fail. */
static void mpi_u8_probe(opk_t o, MPI_Op op, const char *what)
{
    enum { N = 1024 }; /* long enough for vectorised code paths */
    unsigned char a[N], b[N];
    int buggy = 0, other = 0;
    for (int j = 0; j < N; j++) {
        a[j] = (unsigned char)(100 + j % 156);
        b[j] = (unsigned char)(j % 256);
    }
    MPI_Reduce_local(a, b, N, MPI_UNSIGNED_CHAR, op); /* b = a op b */
    for (int j = 0; j < N; j++) {
        unsigned x = (unsigned)(100 + j % 156), y = (unsigned)(j % 256);
        signed char sx = (signed char)x, sy = (signed char)y;
        unsigned char want = o == O_SUM   ? (unsigned char)(x + y)
                             : o == O_MAX ? (unsigned char)(x > y ? x : y)
                                          : (unsigned char)(x < y ? x : y);
        unsigned char bug = o == O_SUM   ? (unsigned char)(x + y > 255 ? 255 : x + y)
                            : o == O_MAX ? (unsigned char)(sx > sy ? sx : sy)
                                         : (unsigned char)(sx < sy ? sx : sy);
        if (b[j] == want)
            continue;
        if (b[j] == bug)
            buggy++;
        else
            other++;
    }
    if (buggy > 0 && other == 0) {
        mpi_op_broken[K_U8][o] = 1;
        if (wrank == 0)
            printf("%s: note: this MPI's own %s on MPI_UNSIGNED_CHAR is wrong (%s): no second "
                   "opinion from PMPI for it; TC_ results are still checked\n",
                   prog,
                   o == O_SUM   ? "MPI_SUM"
                   : o == O_MAX ? "MPI_MAX"
                                : "MPI_MIN",
                   what);
    }
}

static spec_t type_specs[64];
static int n_type_specs;

static void add_spec(const char *name, kind_t k, opk_t o, MPI_Datatype dt, MPI_Op op, int per,
                     size_t extent, const size_t *offs)
{
    spec_t s = {name, k, o, dt, op, per, extent ? extent : (size_t)per * kind_size[k], offs};
    type_specs[n_type_specs++] = s;
}

static void specs_create(void)
{
    static const struct {
        const char *t;
        kind_t k;
        MPI_Datatype dt;
    } arith[] = {{"int", K_I32, MPI_INT},
                 {"long long", K_I64, MPI_LONG_LONG},
                 {"unsigned char", K_U8, MPI_UNSIGNED_CHAR},
                 {"float", K_F32, MPI_FLOAT},
                 {"double", K_F64, MPI_DOUBLE}};
    static const struct {
        const char *o;
        opk_t k;
        MPI_Op op;
    } aops[] = {{"SUM", O_SUM, MPI_SUM},
                {"PROD", O_PROD, MPI_PROD},
                {"MAX", O_MAX, MPI_MAX},
                {"MIN", O_MIN, MPI_MIN}},
      bops[] = {{"BAND", O_BAND, MPI_BAND}, {"BOR", O_BOR, MPI_BOR}, {"BXOR", O_BXOR, MPI_BXOR}};
    static char names[64][48];
    int nn = 0;

    n_type_specs = 0;
    mpi_u8_probe(O_SUM, MPI_SUM, "saturates instead of wrapping, open-mpi/ompi#8045");
    mpi_u8_probe(O_MAX, MPI_MAX, "compares as signed, cf. pmodels/mpich#6083");
    mpi_u8_probe(O_MIN, MPI_MIN, "compares as signed, cf. pmodels/mpich#6083");
    for (size_t t = 0; t < sizeof arith / sizeof arith[0]; t++)
        for (size_t o = 0; o < sizeof aops / sizeof aops[0]; o++) {
            snprintf(names[nn], sizeof names[nn], "MPI_%s %s", aops[o].o, arith[t].t);
            add_spec(names[nn++], arith[t].k, aops[o].k, arith[t].dt, aops[o].op, 1, 0, NULL);
        }
    for (size_t o = 0; o < sizeof bops / sizeof bops[0]; o++) {
        snprintf(names[nn], sizeof names[nn], "MPI_%s int", bops[o].o);
        add_spec(names[nn++], K_I32, bops[o].k, MPI_INT, bops[o].op, 1, 0, NULL);
        snprintf(names[nn], sizeof names[nn], "MPI_%s uint64_t", bops[o].o);
        add_spec(names[nn++], K_U64, bops[o].k, MPI_UINT64_T, bops[o].op, 1, 0, NULL);
    }
    add_spec("MPI_LAND int", K_I32, O_LAND, MPI_INT, MPI_LAND, 1, 0, NULL);
    add_spec("MPI_LOR int", K_I32, O_LOR, MPI_INT, MPI_LOR, 1, 0, NULL);
    add_spec("MPI_MINLOC double_int", K_DI, O_MINLOC, MPI_DOUBLE_INT, MPI_MINLOC, 1, 0, NULL);
    add_spec("MPI_MAXLOC double_int", K_DI, O_MAXLOC, MPI_DOUBLE_INT, MPI_MAXLOC, 1, 0, NULL);
    add_spec("MPI_MINLOC 2int", K_2I, O_MINLOC, MPI_2INT, MPI_MINLOC, 1, 0, NULL);
    add_spec("MPI_MAXLOC 2int", K_2I, O_MAXLOC, MPI_2INT, MPI_MAXLOC, 1, 0, NULL);
    add_spec("MPI_SUM vector(3x2 int, stride 3, extent 36) with holes", K_I32, O_SUM, dt_vec_holes,
             MPI_SUM, 6, 36, off_vec_holes);
    add_spec("MPI_MAX vector(3x2 int, stride 3, extent 36) with holes", K_I32, O_MAX, dt_vec_holes,
             MPI_MAX, 6, 36, off_vec_holes);
    add_spec("MPI_SUM contiguous(3, double)", K_F64, O_SUM, dt_contig3d, MPI_SUM, 3, 0, NULL);
    add_spec("MPI_MIN contiguous(3, double)", K_F64, O_MIN, dt_contig3d, MPI_MIN, 3, 0, NULL);
    add_spec("user commutative max int", K_I32, O_USERMAX, MPI_INT, op_usermax, 1, 0, NULL);
    add_spec("user NON-commutative 2x2 uint32 product", K_M22, O_MATMUL, dt_m22, op_matmul, 1, 0,
             NULL);
}

static const spec_t *spec_find(const char *name)
{
    for (int i = 0; i < n_type_specs; i++)
        if (strcmp(type_specs[i].name, name) == 0)
            return &type_specs[i];
    fprintf(stderr, "%s: no spec '%s'\n", prog, name);
    MPI_Abort(MPI_COMM_WORLD, 2);
    return NULL;
}

/* A small deterministic sample of roots: 0, n-1, and the two in the middle
 * (on the posed 2-node machines: the global leader, another node's leader,
 * and non-leaders on both nodes). */
static int roots_of(int n, int *roots)
{
    int k = 0;
    roots[k++] = 0;
    if (n > 1)
        roots[k++] = n - 1;
    if (n > 2)
        roots[k++] = n / 2;
    if (n > 3)
        roots[k++] = n / 2 - 1;
    return k;
}

/* ------------------------------------------------------------------------ */
/* Parts                                                                     */

static void part_types(MPI_Comm comm)
{
    static const int full_counts[] = {1, 15, 1000, 20000};
    static const int quick_counts[] = {1, 15, 3000};
    const int *counts = opt.quick ? quick_counts : full_counts;
    int ncounts = opt.quick ? 3 : 4, n, roots[4], nroots;
    MPI_Comm_size(comm, &n);
    nroots = roots_of(n, roots);
    for (int t = 0; t < n_type_specs; t++)
        for (int c = 0; c < ncounts; c++) {
            uint64_t seed = 1000u * (uint64_t)t + (uint64_t)c;
            int nr = opt.quick ? 1 : nroots;
            for (int k = 0; k < nr; k++) {
                /* quick: one root per count, rotating */
                int root = opt.quick ? roots[(t + c) % nroots] : roots[k];
                run_case(comm, &type_specs[t], counts[c], root, (t + c + k) & 1, seed + 7u * k);
            }
            run_case(comm, &type_specs[t], counts[c], -1, (t + c) & 1, seed + 100);
        }
    /* The non-commutative op at every root (the order of the ranks is the
     * whole point) and in place. */
    const spec_t *mm = spec_find("user NON-commutative 2x2 uint32 product");
    for (int root = 0; root < n; root++)
        for (int ip = 0; ip < 2; ip++)
            run_case(comm, mm, opt.quick ? 500 : 5000, root, ip, 555u + (uint64_t)root);
}

static void part_sizes(MPI_Comm comm)
{
    int n;
    MPI_Comm_size(comm, &n);
    int counts[12], nc = 0;
    static const int base[] = {0, 1, 2, 13, 14, 15, 1000, 8191, 65537};
    for (size_t i = 0; i < sizeof base / sizeof base[0]; i++)
        if (!opt.quick || base[i] <= 8191)
            counts[nc++] = base[i];
    if (opt.quick)
        counts[nc++] = 65537; /* once below, at one root */
    if (!opt.quick && opt.big_bytes > 0 && n <= 3)
        counts[nc++] = (int)(opt.big_bytes / (long)sizeof(int));
    const spec_t *isum = spec_find("MPI_SUM int");
    const spec_t *extra[3] = {spec_find("MPI_SUM double"), spec_find("MPI_SUM unsigned char"),
                              spec_find("MPI_SUM vector(3x2 int, stride 3, extent 36) with holes")};
    for (int c = 0; c < nc; c++) {
        int count = counts[c];
        int big = count > 65537 || (opt.quick && c == nc - 1);
        int roots[4], nroots;
        if ((opt.quick && !opt.all_roots) || big)
            nroots = roots_of(n, roots);
        else
            nroots = 0;
        int nr = nroots ? nroots : n;
        if (big)
            nr = n > 1 ? 2 : 1; /* root 0 and n-1 */
        for (int k = 0; k < nr; k++) {
            int root = nroots ? roots[k] : k;
            uint64_t seed = 50000u + 100u * (uint64_t)c + (uint64_t)root;
            run_case(comm, isum, count, root, 0, seed);
            run_bcast(comm, count, root, seed + 1);
            run_case(comm, isum, count, root, 1, seed + 2);
            run_case(comm, isum, count, -1, k & 1, seed + 3);
            if (!big) {
                const spec_t *x = extra[(c + k) % 3];
                /* in place on half of them; a vector element holds 6 ints */
                int xc = x->per > 1 ? (count + x->per - 1) / x->per : count;
                run_case(comm, x, xc, root, (c + k) & 1, seed + 4);
            }
        }
        run_case(comm, isum, count, -1, 1, 50000u + 100u * (uint64_t)c + 99u);
    }
}

/* Floating-point sums of random-ish values. Tolerance: summing n terms in
 * any order and association with rounding to nearest errs by at most
 * (n-1) * u * sum|x_i| (u = eps/2; Higham, Accuracy and Stability, 4.2), so
 * |got - exact| <= n * eps * sum|x_i| holds for every algorithm. The exact
 * sum is taken in long double (64-bit mantissa: error far below the bound). */
static double fvalue(int is_double, uint64_t seed, int r, size_t j)
{
    uint64_t h = hval(seed, r, j);
    double mant = (double)(h >> 11) * 0x1p-53 * 2.0 - 1.0; /* [-1, 1) */
    double v = ldexp(mant, (int)((h >> 3) % 9) - 4);       /* magnitudes 2^-4 .. 2^4 */
    return is_double ? v : (double)(float)v;
}

static void run_float_case(MPI_Comm comm, int is_double, int count, int root, int in_place,
                           uint64_t seed)
{
    int rank, n, rc;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n);
    const size_t esz = is_double ? sizeof(double) : sizeof(float);
    const double eps = is_double ? DBL_EPSILON : FLT_EPSILON;
    const int receives = root < 0 || rank == root;
    MPI_Datatype dt = is_double ? MPI_DOUBLE : MPI_FLOAT;
    unsigned char *send = xmalloc((size_t)count * esz), *recv = xmalloc((size_t)count * esz);
    unsigned char *recv2 = xmalloc((size_t)count * esz);
    const char *what = root < 0 ? "TC_Allreduce" : "TC_Reduce";
    const char *tname = is_double ? "double" : "float";

    for (int i = 0; i < count; i++) {
        double v = fvalue(is_double, seed, rank, (size_t)i);
        float f = (float)v;
        if (is_double)
            memcpy(send + (size_t)i * esz, &v, esz);
        else
            memcpy(send + (size_t)i * esz, &f, esz);
    }
    memcpy(recv, send, (size_t)count * esz);
    case_serial++;
    if (root < 0)
        rc = TC_Allreduce(in_place ? MPI_IN_PLACE : send, recv, count, dt, MPI_SUM, comm);
    else
        rc = TC_Reduce(in_place && receives ? MPI_IN_PLACE : send, recv, count, dt, MPI_SUM, root,
                       comm);
    if (rc != MPI_SUCCESS) {
        char d[200];
        snprintf(d, sizeof d, "%s MPI_SUM %s random on %s count %d root %d", what, tname,
                 comm_label(comm), count, root);
        fail_call_abort(d, rc);
    }
    int do_pmpi = pmpi_now();
    if (do_pmpi) {
        if (root < 0)
            rc = PMPI_Allreduce(send, recv2, count, dt, MPI_SUM, comm);
        else
            rc = PMPI_Reduce(send, recv2, count, dt, MPI_SUM, root, comm);
        if (rc != MPI_SUCCESS)
            fail_call_abort("second opinion on a random float sum", rc);
    }
    if (receives) {
        int bad = 0, badp = 0;
        for (int i = 0; i < count; i++) {
            long double exact = 0, mag = 0;
            for (int r = 0; r < n; r++) {
                double v = fvalue(is_double, seed, r, (size_t)i);
                exact += v;
                mag += fabs(v);
            }
            double got, pm = 0;
            if (is_double) {
                memcpy(&got, recv + (size_t)i * 8, 8);
                if (do_pmpi)
                    memcpy(&pm, recv2 + (size_t)i * 8, 8);
            } else {
                float g, p = 0;
                memcpy(&g, recv + (size_t)i * 4, 4);
                if (do_pmpi)
                    memcpy(&p, recv2 + (size_t)i * 4, 4);
                got = g;
                pm = p;
            }
            long double tol = (long double)n * eps * mag;
            if (!bad && !(fabsl((long double)got - exact) <= tol)) {
                bad = 1;
                tt_fail(
                    "%s MPI_SUM %s random on %s (np %d) count %d root %d%s: element %d = %.17g, "
                    "exact %.17Lg, off by more than n*eps*sum|x| = %.3Lg",
                    what, tname, comm_label(comm), n, count, root, in_place ? " in place" : "", i,
                    got, exact, tol);
            }
            if (do_pmpi && !badp && !(fabsl((long double)pm - exact) <= tol)) {
                badp = 1;
                tt_fail("PMPI (second opinion) %s float sum element %d off: %.17g vs %.17Lg", what,
                        i, pm, exact);
            }
        }
    }
    if (root < 0) {
        /* Same bits everywhere: gather every rank's result at rank 0. */
        unsigned char *all = rank == 0 ? xmalloc((size_t)n * (size_t)count * esz) : NULL;
        PMPI_Gather(recv, count * (int)esz, MPI_BYTE, all, count * (int)esz, MPI_BYTE, 0, comm);
        if (rank == 0)
            for (int r = 1; r < n; r++)
                if (memcmp(all, all + (size_t)r * (size_t)count * esz, (size_t)count * esz)) {
                    tt_fail("TC_Allreduce MPI_SUM %s random on %s (np %d) count %d: rank %d got "
                            "different bits from rank 0",
                            tname, comm_label(comm), n, count, r);
                    break;
                }
        free(all);
    }
    ncases++;
    free(send);
    free(recv);
    free(recv2);
}

static void part_float(MPI_Comm comm)
{
    static const int counts[] = {1, 15, 1000, 65537};
    int nc = opt.quick ? 3 : 4, n;
    MPI_Comm_size(comm, &n);
    for (int d = 0; d < 2; d++)
        for (int c = 0; c < nc; c++) {
            uint64_t seed = 70000u + 10u * (uint64_t)c + (uint64_t)d;
            run_float_case(comm, d, counts[c], 0, c & 1, seed);
            if (n > 1)
                run_float_case(comm, d, counts[c], n - 1, !(c & 1), seed + 1);
            run_float_case(comm, d, counts[c], -1, 0, seed + 2);
            run_float_case(comm, d, counts[c], -1, 1, seed + 3);
        }
}

static void part_comms(void)
{
    MPI_Comm dup, split;
    static const int counts[] = {0, 15, 1000, 8191};
    const spec_t *isum = spec_find("MPI_SUM int");
    const spec_t *mm = spec_find("user NON-commutative 2x2 uint32 product");
    const spec_t *minloc = spec_find("MPI_MINLOC double_int");
    int nd, ns;

    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_name(dup, "dup(world)");
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &split);
    MPI_Comm_set_name(split, wrank % 2 ? "split(odd)" : "split(even)");
    MPI_Comm_size(dup, &nd);
    MPI_Comm_size(split, &ns);
    /* Every rank runs the same sequence, so both halves of the split make
     * the same calls on their own communicators, interleaved with world's. */
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        int count = counts[c];
        uint64_t seed = 90000u + 100u * c;
        for (int root = 0; root < nd; root++) {
            if (opt.quick && root != 0 && root != nd - 1)
                continue;
            /* In place at a root != 0 on a dup'd communicator above 2 KiB:
             * what Debian's MPICH 4.0.2 itself crashes on. */
            run_case(dup, isum, count, root, 1, seed + (uint64_t)root);
            run_case(MPI_COMM_WORLD, isum, count, -1, (int)c & 1, seed + 20);
            run_case(split, isum, count, root % ns, 0, seed + 30);
            run_case(dup, isum, count, root, 0, seed + 40);
            run_bcast(split, count, (root + 1) % ns, seed + 50);
            run_case(split, mm, count, -1, root & 1, seed + 60);
            run_case(dup, minloc, count, root, root & 1, seed + 70);
        }
        run_case(dup, mm, count, nd - 1, 1, seed + 80);
        run_case(split, minloc, count, -1, 1, seed + 90);
    }
    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);
}

/* Regression: rank r passes layout r % 4 of the same signature (4n ints). */
static void part_layouts(MPI_Comm comm)
{
    static const int ns_full[] = {1, 3, 250, 2500, 20000};
    static const int ns_quick[] = {1, 3, 250, 2500};
    const int *nsz = opt.quick ? ns_quick : ns_full;
    int nn = opt.quick ? 4 : 5, rank, n;
    const spec_t layouts[4] = {
        {"layout A: 4n x MPI_INT", K_I32, O_SUM, MPI_INT, MPI_SUM, 1, 4, NULL},
        {"layout B: n x contiguous(4, MPI_INT)", K_I32, O_SUM, dt_contig4i, MPI_SUM, 4, 16, NULL},
        {"layout C: n x vector(2, 2, 4, MPI_INT)", K_I32, O_SUM, dt_vec224, MPI_SUM, 4, 24,
         off_vec224},
        {"layout D: 2n x contiguous(2, MPI_INT)", K_I32, O_SUM, dt_contig2i, MPI_SUM, 2, 8, NULL}};
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n);
    const spec_t *mine = &layouts[rank % 4];
    for (int i = 0; i < nn; i++) {
        int count = 4 * nsz[i] / mine->per;
        for (int root = 0; root < n; root++) {
            uint64_t seed = 110000u + 100u * (uint64_t)i + (uint64_t)root;
            run_case(comm, mine, count, root, root & 1, seed);
            run_case(comm, mine, count, -1, (root + i) & 1, seed + 50);
        }
    }
}

static const char *class_name(int cls)
{
    switch (cls) {
    case MPI_SUCCESS:
        return "MPI_SUCCESS";
    case MPI_ERR_COUNT:
        return "MPI_ERR_COUNT";
    case MPI_ERR_ROOT:
        return "MPI_ERR_ROOT";
    case MPI_ERR_TYPE:
        return "MPI_ERR_TYPE";
    case MPI_ERR_OP:
        return "MPI_ERR_OP";
    case MPI_ERR_COMM:
        return "MPI_ERR_COMM";
    case MPI_ERR_BUFFER:
        return "MPI_ERR_BUFFER";
    default:
        return "another class";
    }
}

/* A bad call: returns an error of class `want` and touches no buffer. */
static void expect_error(const char *what, int rc, int want, const int *send, const int *recv,
                         int n)
{
    int cls = -1;
    if (rc == MPI_SUCCESS)
        cls = MPI_SUCCESS;
    else
        MPI_Error_class(rc, &cls);
    if (cls != want)
        tt_fail("errors: %s: got %s (%d), want %s", what, class_name(cls), rc, class_name(want));
    for (int i = 0; i < n; i++)
        if (send[i] != 1000 + i || recv[i] != -7) {
            tt_fail("errors: %s: a buffer changed (element %d: send %d recv %d)", what, i, send[i],
                    recv[i]);
            break;
        }
    ncases++;
}

static void part_errors(void)
{
    enum { N = 8 };
    int send[N], recv[N], n, rank;
    MPI_Comm c, fresh;

    for (int i = 0; i < N; i++)
        send[i] = 1000 + i, recv[i] = -7;
    /* MPI_COMM_NULL's errors go to world's handler: MPI_ERRORS_RETURN (main). */

    /* The first TC_ call on this communicator is a bad one. */
    MPI_Comm_dup(MPI_COMM_WORLD, &fresh);
    MPI_Comm_set_errhandler(fresh, MPI_ERRORS_RETURN);
    expect_error("first call, TC_Reduce count -1",
                 TC_Reduce(send, recv, -1, MPI_INT, MPI_SUM, 0, fresh), MPI_ERR_COUNT, send, recv,
                 N);
    expect_error("first call, TC_Allreduce MPI_OP_NULL",
                 TC_Allreduce(send, recv, N, MPI_INT, MPI_OP_NULL, fresh), MPI_ERR_OP, send, recv,
                 N);
    MPI_Comm_free(&fresh);

    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_name(c, "dup(world) errors");
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(c, &rank);
    run_case(c, spec_find("MPI_SUM int"), 100, -1, 0, 1); /* context exists from here on */

    expect_error("TC_Reduce count -1", TC_Reduce(send, recv, -1, MPI_INT, MPI_SUM, 0, c),
                 MPI_ERR_COUNT, send, recv, N);
    expect_error("TC_Allreduce count -1", TC_Allreduce(send, recv, -1, MPI_INT, MPI_SUM, c),
                 MPI_ERR_COUNT, send, recv, N);
    expect_error("TC_Reduce MPI_DATATYPE_NULL",
                 TC_Reduce(send, recv, N, MPI_DATATYPE_NULL, MPI_SUM, 0, c), MPI_ERR_TYPE, send,
                 recv, N);
    expect_error("TC_Allreduce MPI_DATATYPE_NULL",
                 TC_Allreduce(send, recv, N, MPI_DATATYPE_NULL, MPI_SUM, c), MPI_ERR_TYPE, send,
                 recv, N);
    expect_error("TC_Reduce MPI_OP_NULL", TC_Reduce(send, recv, N, MPI_INT, MPI_OP_NULL, 0, c),
                 MPI_ERR_OP, send, recv, N);
    expect_error("TC_Allreduce MPI_OP_NULL", TC_Allreduce(send, recv, N, MPI_INT, MPI_OP_NULL, c),
                 MPI_ERR_OP, send, recv, N);
    expect_error("TC_Reduce root -1", TC_Reduce(send, recv, N, MPI_INT, MPI_SUM, -1, c),
                 MPI_ERR_ROOT, send, recv, N);
    expect_error("TC_Reduce root = size", TC_Reduce(send, recv, N, MPI_INT, MPI_SUM, n, c),
                 MPI_ERR_ROOT, send, recv, N);
    expect_error("TC_Reduce root = size + 5", TC_Reduce(send, recv, N, MPI_INT, MPI_SUM, n + 5, c),
                 MPI_ERR_ROOT, send, recv, N);
    expect_error("TC_Reduce MPI_COMM_NULL",
                 TC_Reduce(send, recv, N, MPI_INT, MPI_SUM, 0, MPI_COMM_NULL), MPI_ERR_COMM, send,
                 recv, N);
    expect_error("TC_Allreduce MPI_COMM_NULL",
                 TC_Allreduce(send, recv, N, MPI_INT, MPI_SUM, MPI_COMM_NULL), MPI_ERR_COMM, send,
                 recv, N);
    /* MPI_IN_PLACE at a non-root: the check is local, so only the non-roots
     * call (the root would otherwise wait for them); a library that moved
     * data first would hang here and hit the test's timeout. */
    if (n > 1) {
        if (rank != n - 1)
            expect_error("TC_Reduce MPI_IN_PLACE at a non-root",
                         TC_Reduce(MPI_IN_PLACE, recv, N, MPI_INT, MPI_SUM, n - 1, c),
                         MPI_ERR_BUFFER, send, recv, N);
        PMPI_Barrier(c);
    }
    /* Still works afterwards, in place at a root != 0 included. */
    run_case(c, spec_find("MPI_SUM int"), 1000, n - 1, 1, 2);
    run_case(c, spec_find("MPI_SUM int"), 1000, -1, 1, 3);
    MPI_Comm_free(&c);
}

/* Run-ahead through the inline lines: 900 (--quick 450) reductions of at
 * most one line's payload (1-14 ints, 1-7 doubles, 1-3 2x2 products), in
 * runs of 150 with one root. Before calls 5, 42, 79 and 116 of a run the
 * root sleeps 2 ms, so the others' contributions run the inline ring's
 * length ahead of it and wait for its published D (every eighth inline
 * fragment, reduce_proto.h) to reuse a line; every call here is one inline
 * fragment, so the late fragment falls on every residue mod 8 over the
 * runs. A D published too rarely deadlocks here; one published before the
 * read, or a wait one fragment short, lets a line be overwritten under the
 * root (a wrong result). Allreduces (in place on every other call), MAX
 * and the non-commutative product between. With --pmpi 0 (a second opinion
 * every call would hold the writers back; the product always gets one). */
static void part_runahead(MPI_Comm comm)
{
    int n, rank;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &rank);
    const spec_t *isum = spec_find("MPI_SUM int"), *dmax = spec_find("MPI_MAX double"),
                 *mat = spec_find("user NON-commutative 2x2 uint32 product");
    const struct timespec nap = {0, 2000000};
    const long iters = opt.quick ? 450 : 900;
    for (long i = 0; i < iters; i++) {
        const int root = (int)((i / 150) % n), at = (int)(i % 150);
        const uint64_t seed = 140000u + (uint64_t)i;
        if (at % 37 == 5 && rank == root)
            nanosleep(&nap, NULL);
        if (at == 149)
            run_case(comm, mat, 1 + (int)(i / 150 % 3), root, 0, seed);
        else if (at >= 100 && at < 120)
            run_case(comm, isum, 1 + (int)(i * 5 % 14), -1, (int)(i & 1), seed);
        else if (i % 7 == 3)
            run_case(comm, dmax, 1 + (int)(i / 7 % 7), root, (int)(i / 7 & 1), seed);
        else
            run_case(comm, isum, 1 + (int)(i * 7 % 14), root, i % 3 == 0, seed);
    }
    /* The packed ring (a Reduce to a root of at most 8 bytes on the direct
     * scheme, reduce.c): the same runs with only such calls (1-2 ints, one
     * double's MAX), so the others run its TC_SHM_PACKED_RING entries ahead
     * of the late root and wait for its pdone (every 16th packed call,
     * reduce_proto.h). The root is late every 17th call (nine a run), so
     * the late call falls on nine consecutive residues mod 16 a run, and on
     * all sixteen within three runs (a run moves them by 150 = 6 mod 16),
     * wherever the packed calls of the first part left the count. */
    for (long i = 0; i < iters; i++) {
        const int root = (int)((i / 150 + 1) % n), at = (int)(i % 150);
        const uint64_t seed = 150000u + (uint64_t)i;
        if (at % 17 == 5 && rank == root)
            nanosleep(&nap, NULL);
        if (i % 5 == 2)
            run_case(comm, dmax, 1, root, (int)(i / 5 & 1), seed);
        else
            run_case(comm, isum, 1 + (int)(i & 1), root, i % 3 == 0, seed);
    }
}

/* Enough MPI_INT sums that the stats lines say which path they took. */
static void part_shmcheck(MPI_Comm comm)
{
    static const int counts[] = {1, 1000, 65537};
    int n;
    MPI_Comm_size(comm, &n);
    const spec_t *isum = spec_find("MPI_SUM int");
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        for (int root = 0; root < n; root++)
            run_case(comm, isum, counts[c], root, root & 1, 130000u + 10u * c + (uint64_t)root);
        run_case(comm, isum, counts[c], -1, 0, 130000u + 10u * c + 9u);
        run_case(comm, isum, counts[c], -1, 1, 130000u + 10u * c + 8u);
    }
}

static void check_unbound(void)
{
    cpu_set_t set;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (sched_getaffinity(0, sizeof set, &set) != 0) {
        tt_fail("sched_getaffinity failed");
        return;
    }
    if (CPU_COUNT(&set) < online)
        tt_fail("--expect-unbound: the process is bound to %d of %ld CPUs (the launcher bound it; "
                "the test would not test unbound processes)",
                CPU_COUNT(&set), online);
}

int main(int argc, char **argv)
{
    const char *parts;
    long sum[2], local[2], maxc;
    double t0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    tt_check_np(prog);
    opt.quick = has_flag(argc, argv, "--quick");
    opt.expect_unbound = has_flag(argc, argv, "--expect-unbound");
    opt.all_roots = has_flag(argc, argv, "--all-roots");
    opt.pmpi_every = parse_size(arg(argc, argv, "--pmpi", opt.quick ? "4" : "1"));
    opt.big_bytes = parse_size(arg(argc, argv, "--big", "4M"));
    parts = arg(argc, argv, "--parts", "types,sizes,float,comms");
    if (opt.pmpi_every < 0 || opt.big_bytes < 0) {
        fprintf(stderr, "%s: bad --pmpi or --big value\n", prog);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_set_name(MPI_COMM_WORLD, "world");
    /* A call that fails is reported with its case (run_case checks every
     * return code) and the other cases still run; communicators made from
     * world inherit this. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    types_create();
    specs_create();
    t0 = MPI_Wtime();

    if (opt.expect_unbound)
        check_unbound();
    if (in_list(parts, "types"))
        part_types(MPI_COMM_WORLD);
    if (in_list(parts, "sizes"))
        part_sizes(MPI_COMM_WORLD);
    if (in_list(parts, "float"))
        part_float(MPI_COMM_WORLD);
    if (in_list(parts, "comms"))
        part_comms();
    if (in_list(parts, "layouts"))
        part_layouts(MPI_COMM_WORLD);
    if (in_list(parts, "errors"))
        part_errors();
    if (in_list(parts, "shmcheck"))
        part_shmcheck(MPI_COMM_WORLD);
    if (in_list(parts, "runahead"))
        part_runahead(MPI_COMM_WORLD);

    types_free();
    local[0] = tt_failures();
    local[1] = ncases;
    PMPI_Allreduce(local, sum, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    PMPI_Allreduce(&ncases, &maxc, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (wrank == 0) {
        printf("%s: np=%d parts=%s%s: %ld cases (max per rank), %ld failures (all ranks), "
               "%.1f s: %s\n",
               prog, wsize, parts, opt.quick ? " quick" : "", maxc, sum[0], MPI_Wtime() - t0,
               sum[0] == 0 && maxc > 0 ? "PASS" : "FAIL");
        fflush(stdout);
    }
    MPI_Finalize();
    return sum[0] == 0 && maxc > 0 ? 0 : 1;
}
