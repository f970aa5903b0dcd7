/* TC_Reduce_scatter_block and TC_Reduce_scatter against results every
 * process computes itself (no MPI collective gives the expected values).
 *
 *   --parts LIST  comma-separated, default "types,sizes,comms":
 *     types   every (type, op) pair below, a few sizes, both variants,
 *             in place and not
 *     sizes   MPI_INT sum, float sum and the non-commutative 2x2 matrix
 *             product at 0, 1, inline-line, slot-1, slot, slot+1 bytes and
 *             several fragments per block; Reduce_scatter with random
 *             counts (zeros included)
 *     comms   dup'd, split (odd/even) and reversed communicators
 *     errors  bad arguments -> the right error class through the
 *             communicator's handler, buffers untouched
 *   --quick       fewer (type, op) pairs and sizes (MPICH at np > 3)
 *
 * Data: small integers (|v| <= 8, products of +-1 and 2), so sums and
 * products are exact in float and double in any order; bitwise ops get full
 * 32-bit words; the matrix product is on unsigned entries (wrapping
 * arithmetic is associative, so the rank-ordered product is one value
 * whatever the grouping, and any operand swap changes it). Every element of
 * a send buffer depends on (rank, position, case), so a block taken from
 * the wrong place or a missing operand shows. Holes of derived types hold a
 * sentinel that must survive; send buffers must come back unchanged.
 * TC_SHM_REDUCE_SLOT_BYTES (if set) gives the slot size the sizes are
 * placed around (default 32K).
 */
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <topocoll.h>

#include "tc_test_common.h"

static const char *prog = "test_reduce_scatter";
static int quick;
static size_t slot_bytes = 32768;

/* ---- element kinds and their reference operations ------------------------ */

typedef enum { K_INT, K_UINT, K_FLOAT, K_DOUBLE, K_SCHAR, K_LL, K_DINT, K_2INT, K_MAT } kind_t;
typedef enum {
    O_SUM,
    O_PROD,
    O_MAX,
    O_MIN,
    O_LAND,
    O_BAND,
    O_BOR,
    O_BXOR,
    O_MAXLOC,
    O_MINLOC,
    O_MATMUL
} opk_t;

typedef struct {
    double v;
    int i;
} dint_t; /* MPI_DOUBLE_INT's C layout */

static size_t kind_size(kind_t k)
{
    switch (k) {
    case K_INT:
    case K_UINT:
    case K_FLOAT:
        return 4;
    case K_SCHAR:
        return 1;
    case K_DOUBLE:
    case K_LL:
    case K_2INT:
        return 8;
    case K_DINT:
        return sizeof(dint_t);
    case K_MAT:
        return 4 * sizeof(unsigned);
    }
    return 0;
}

static uint32_t mix(uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t h = a * 2654435761u ^ b * 40503u ^ c * 0x9E3779B1u;
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    h *= 0x297a2d39u;
    h ^= h >> 15;
    return h;
}

/* Operand of process @p rank at packed position @p g of case @p salt. */
static void gen(kind_t k, opk_t o, int rank, size_t g, uint32_t salt, void *out)
{
    const uint32_t h = mix((uint32_t)rank + 1, (uint32_t)g, salt);
    int small = (int)(h % 17) - 8;
    if (o == O_PROD) {
        static const int f[4] = {1, -1, 2, 1};
        small = f[h % 4];
    } else if (o == O_LAND) {
        small = h % 5 != 0; /* mostly true, so the AND is not always 0 */
    }
    switch (k) {
    case K_INT:
        *(int *)out = small;
        break;
    case K_UINT:
        *(unsigned *)out = o == O_BAND ? h | mix(h, 1, 2) | mix(h, 3, 4) : h;
        break;
    case K_FLOAT:
        *(float *)out = (float)small;
        break;
    case K_DOUBLE:
        *(double *)out = (double)small;
        break;
    case K_SCHAR:
        *(signed char *)out = (signed char)small;
        break;
    case K_LL:
        *(long long *)out = (long long)small * 1000000007LL;
        break;
    case K_DINT: {
        dint_t d;
        memset(&d, 0, sizeof d);
        d.v = (double)(h % 5); /* ties are frequent: the lower index must win */
        d.i = rank * 3 + (int)(g % 3);
        memcpy(out, &d, sizeof d);
        break;
    }
    case K_2INT: {
        int v[2] = {(int)(h % 4), rank};
        memcpy(out, v, sizeof v);
        break;
    }
    case K_MAT: {
        unsigned m[4] = {h % 7, (h >> 8) % 5, (h >> 16) % 3 + 1, (h >> 24) % 7};
        memcpy(out, m, sizeof m);
        break;
    }
    }
}

#define FOLD_NUM(T)                                                                                \
    do {                                                                                           \
        T a, b;                                                                                    \
        memcpy(&a, in, sizeof a);                                                                  \
        memcpy(&b, inout, sizeof b);                                                               \
        switch (o) {                                                                               \
        case O_SUM:                                                                                \
            b = (T)(a + b);                                                                        \
            break;                                                                                 \
        case O_PROD:                                                                               \
            b = (T)(a * b);                                                                        \
            break;                                                                                 \
        case O_MAX:                                                                                \
            b = a > b ? a : b;                                                                     \
            break;                                                                                 \
        case O_MIN:                                                                                \
            b = a < b ? a : b;                                                                     \
            break;                                                                                 \
        case O_LAND:                                                                               \
            b = (T)(a && b);                                                                       \
            break;                                                                                 \
        default:                                                                                   \
            break;                                                                                 \
        }                                                                                          \
        memcpy(inout, &b, sizeof b);                                                               \
    } while (0)

/* inout = in op inout (in: the lower rank's operand). */
static void fold(kind_t k, opk_t o, const void *in, void *inout)
{
    switch (k) {
    case K_INT:
        FOLD_NUM(int);
        break;
    case K_FLOAT:
        FOLD_NUM(float);
        break;
    case K_DOUBLE:
        FOLD_NUM(double);
        break;
    case K_SCHAR:
        FOLD_NUM(signed char);
        break;
    case K_LL:
        FOLD_NUM(long long);
        break;
    case K_UINT: {
        unsigned a, b;
        memcpy(&a, in, 4);
        memcpy(&b, inout, 4);
        b = o == O_BAND ? a & b : o == O_BOR ? a | b : a ^ b;
        memcpy(inout, &b, 4);
        break;
    }
    case K_DINT:
    case K_2INT: {
        double av, bv;
        int ai, bi;
        if (k == K_DINT) {
            dint_t a, b;
            memcpy(&a, in, sizeof a);
            memcpy(&b, inout, sizeof b);
            av = a.v, ai = a.i, bv = b.v, bi = b.i;
        } else {
            int a[2], b[2];
            memcpy(a, in, sizeof a);
            memcpy(b, inout, sizeof b);
            av = a[0], ai = a[1], bv = b[0], bi = b[1];
        }
        const int a_wins = o == O_MAXLOC ? av > bv : av < bv;
        if (a_wins || (av == bv && ai < bi)) {
            bv = av;
            bi = ai;
        }
        if (k == K_DINT) {
            dint_t r;
            memcpy(&r, inout, sizeof r); /* keeps the padding bytes */
            r.v = bv, r.i = bi;
            memcpy(inout, &r, sizeof r);
        } else {
            int r[2] = {(int)bv, bi};
            memcpy(inout, r, sizeof r);
        }
        break;
    }
    case K_MAT: {
        unsigned a[4], b[4], c[4];
        memcpy(a, in, sizeof a);
        memcpy(b, inout, sizeof b);
        c[0] = a[0] * b[0] + a[1] * b[2];
        c[1] = a[0] * b[1] + a[1] * b[3];
        c[2] = a[2] * b[0] + a[3] * b[2];
        c[3] = a[2] * b[1] + a[3] * b[3];
        memcpy(inout, c, sizeof c);
        break;
    }
    }
}

static MPI_Datatype t_mat, t_mat_vector;

/* The user-defined, non-commutative op: inout = in x inout (2x2 matrices),
 * on the contiguous matrix type, or on the vector of two matrices (48-byte
 * elements, matrices at 0 and 32: only the MPI applies it, the library
 * does not take user ops on non-contiguous types). */
static void matmul_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const int vec = *dt == t_mat_vector;
    for (int j = 0; j < *len * (vec ? 2 : 1); j++) {
        const size_t off = vec ? (size_t)(j / 2) * 48 + (size_t)(j % 2) * 32 : (size_t)j * 16;
        fold(K_MAT, O_MATMUL, (char *)in + off, (char *)inout + off);
    }
}

/* ---- the cases ---------------------------------------------------------------- */

typedef struct {
    const char *name;
    kind_t k;
    opk_t o;
    int derived; /* 0: the basic type; 1: vector(2 blocks of 1, stride 2) resized to 3 prims */
    MPI_Datatype dt;
    MPI_Op op;
    size_t extent; /* bytes per element of dt */
    int nprim;     /* packed primitives per element of dt */
} spec_t;

static MPI_Op op_matmul;
static spec_t specs[32];
static int nspecs;

static MPI_Datatype basic_type(kind_t k)
{
    switch (k) {
    case K_INT:
        return MPI_INT;
    case K_UINT:
        return MPI_UNSIGNED;
    case K_FLOAT:
        return MPI_FLOAT;
    case K_DOUBLE:
        return MPI_DOUBLE;
    case K_SCHAR:
        return MPI_SIGNED_CHAR;
    case K_LL:
        return MPI_LONG_LONG;
    case K_DINT:
        return MPI_DOUBLE_INT;
    case K_2INT:
        return MPI_2INT;
    case K_MAT:
        return t_mat;
    }
    return MPI_DATATYPE_NULL;
}

static MPI_Op mpi_op(opk_t o)
{
    switch (o) {
    case O_SUM:
        return MPI_SUM;
    case O_PROD:
        return MPI_PROD;
    case O_MAX:
        return MPI_MAX;
    case O_MIN:
        return MPI_MIN;
    case O_LAND:
        return MPI_LAND;
    case O_BAND:
        return MPI_BAND;
    case O_BOR:
        return MPI_BOR;
    case O_BXOR:
        return MPI_BXOR;
    case O_MAXLOC:
        return MPI_MAXLOC;
    case O_MINLOC:
        return MPI_MINLOC;
    case O_MATMUL:
        return op_matmul;
    }
    return MPI_OP_NULL;
}

static void spec_add(const char *name, kind_t k, opk_t o, int derived)
{
    spec_t *s = &specs[nspecs++];
    s->name = name;
    s->k = k;
    s->o = o;
    s->derived = derived;
    s->op = mpi_op(o);
    const MPI_Datatype b = basic_type(k);
    const size_t sz = kind_size(k);
    if (!derived) {
        s->dt = b;
        s->extent = sz;
        s->nprim = 1;
        return;
    }
    /* Two primitives at 0 and 2 * sz, extent 3 * sz: a hole inside every
     * element and none at the end. */
    MPI_Datatype v;
    MPI_Type_vector(2, 1, 2, b, &v);
    MPI_Type_create_resized(v, 0, (MPI_Aint)(3 * sz), &s->dt);
    MPI_Type_commit(&s->dt);
    MPI_Type_free(&v);
    s->extent = 3 * sz;
    s->nprim = 2;
}

static void specs_create(void)
{
    MPI_Type_contiguous(4, MPI_UNSIGNED, &t_mat);
    MPI_Type_commit(&t_mat);
    MPI_Op_create(matmul_fn, 0, &op_matmul);
    spec_add("int sum", K_INT, O_SUM, 0);
    spec_add("matmul (user, non-commutative)", K_MAT, O_MATMUL, 0);
    spec_add("float sum", K_FLOAT, O_SUM, 0);
    spec_add("int max", K_INT, O_MAX, 0);
    spec_add("double min", K_DOUBLE, O_MIN, 0);
    spec_add("unsigned bxor", K_UINT, O_BXOR, 0);
    spec_add("vector(int) sum", K_INT, O_SUM, 1);
    spec_add("double_int maxloc", K_DINT, O_MAXLOC, 0);
    if (quick)
        return;
    spec_add("int prod", K_INT, O_PROD, 0);
    spec_add("int min", K_INT, O_MIN, 0);
    spec_add("int land", K_INT, O_LAND, 0);
    spec_add("unsigned band", K_UINT, O_BAND, 0);
    spec_add("unsigned bor", K_UINT, O_BOR, 0);
    spec_add("double sum", K_DOUBLE, O_SUM, 0);
    spec_add("float max", K_FLOAT, O_MAX, 0);
    spec_add("signed char sum", K_SCHAR, O_SUM, 0);
    spec_add("long long sum", K_LL, O_SUM, 0);
    spec_add("2int minloc", K_2INT, O_MINLOC, 0);
    spec_add("vector(double) max", K_DOUBLE, O_MAX, 1);
    spec_add("vector(matmul)", K_MAT, O_MATMUL, 1); /* user op, non-contiguous: PMPI */
    t_mat_vector = specs[nspecs - 1].dt;
}

static void specs_free(void)
{
    for (int i = 0; i < nspecs; i++)
        if (specs[i].derived)
            MPI_Type_free(&specs[i].dt);
    MPI_Type_free(&t_mat);
    MPI_Op_free(&op_matmul);
}

static const spec_t *spec_find(const char *name)
{
    for (int i = 0; i < nspecs; i++)
        if (strcmp(specs[i].name, name) == 0)
            return &specs[i];
    return NULL;
}

/* Byte offset of primitive j (0 .. nprim-1) of element e of @p s. */
static size_t prim_off(const spec_t *s, size_t e, int j)
{
    return e * s->extent + (size_t)j * 2 * kind_size(s->k);
}

/* A buffer of @p n elements of @p s: sentinel, then primitive q = e * nprim
 * + j = gen(rank, q0 + q). @p rank < 0: sentinel only. */
static void fill(const spec_t *s, char *buf, size_t n, int rank, size_t q0, uint32_t salt)
{
    memset(buf, TT_SENTINEL, n * s->extent);
    if (rank < 0)
        return;
    for (size_t e = 0; e < n; e++)
        for (int j = 0; j < s->nprim; j++)
            gen(s->k, s->o, rank, q0 + e * (size_t)s->nprim + (size_t)j, salt,
                buf + prim_off(s, e, j));
}

/* The expected result image: @p n elements starting at element @p e0 of the
 * message, each primitive the rank-ordered fold over @p p processes (of
 * communicator ranks; @p wr maps them to the ranks the data depends on). */
static void expect(const spec_t *s, char *buf, size_t n, size_t e0, int p, const int *wr,
                   uint32_t salt)
{
    const size_t sz = kind_size(s->k);
    unsigned char acc[32], v[32];
    memset(buf, TT_SENTINEL, n * s->extent);
    for (size_t e = 0; e < n; e++)
        for (int j = 0; j < s->nprim; j++) {
            const size_t q = (e0 + e) * (size_t)s->nprim + (size_t)j;
            gen(s->k, s->o, wr[p - 1], q, salt, acc);
            for (int r = p - 2; r >= 0; r--) {
                gen(s->k, s->o, wr[r], q, salt, v);
                fold(s->k, s->o, v, acc);
            }
            /* MPI_DOUBLE_INT: only the value and index bytes are data. */
            if (s->k == K_DINT) {
                dint_t d;
                memcpy(&d, acc, sizeof d);
                char *dst = buf + prim_off(s, e, j);
                memcpy(dst + offsetof(dint_t, v), &d.v, sizeof d.v);
                memcpy(dst + offsetof(dint_t, i), &d.i, sizeof d.i);
            } else {
                memcpy(buf + prim_off(s, e, j), acc, sz);
            }
        }
}

/* Compare the data bytes (and holes) of n elements; MPI_DOUBLE_INT's
 * padding is not data (the MPI may write it). Returns the first wrong byte
 * offset, or -1. */
static long compare(const spec_t *s, const char *got, const char *want, size_t n)
{
    for (size_t b = 0; b < n * s->extent; b++) {
        if (s->k == K_DINT) {
            const size_t in = (b % s->extent) % sizeof(dint_t);
            if (in >= offsetof(dint_t, i) + sizeof(int))
                continue;
        }
        if (got[b] != want[b])
            return (long)b;
    }
    return -1;
}

/* One call of Reduce_scatter (@p counts) or, with @p counts NULL,
 * Reduce_scatter_block of @p block elements. */
static void run_case(MPI_Comm comm, const int *wr, const spec_t *s, const int *counts, int block,
                     int in_place, uint32_t salt)
{
    int p, me;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    size_t total = 0, e0 = 0;
    for (int i = 0; i < p; i++) {
        const size_t c = (size_t)(counts ? counts[i] : block);
        if (i == me)
            e0 = total;
        total += c;
    }
    const size_t mine = (size_t)(counts ? counts[me] : block);
    char *send = malloc(total * s->extent + 1);
    char *recv = malloc((in_place ? total : mine) * s->extent + 1);
    char *want = malloc(mine * s->extent + 1);
    char *orig = malloc(total * s->extent + 1);
    if (!send || !recv || !want || !orig) {
        tt_fail("out of memory");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    fill(s, send, total, wr[me], 0, salt);
    memcpy(orig, send, total * s->extent);
    if (in_place)
        memcpy(recv, send, total * s->extent);
    else
        fill(s, recv, mine, -1, 0, salt);
    expect(s, want, mine, e0, p, wr, salt);
    const void *sb = in_place ? MPI_IN_PLACE : send;
    const int rc = counts ? TC_Reduce_scatter(sb, recv, counts, s->dt, s->op, comm)
                          : TC_Reduce_scatter_block(sb, recv, block, s->dt, s->op, comm);
    char cname[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Comm_get_name(comm, cname, &len);
#define CASE_FMT "%s %s on %s (np %d, rank %d) %s %zu elements in all%s: "
#define CASE_ARGS                                                                                  \
    counts ? "TC_Reduce_scatter" : "TC_Reduce_scatter_block", s->name, cname, p, me,               \
        counts ? "counts" : "block", total, in_place ? ", in place" : ""
    CHECK(rc == MPI_SUCCESS, CASE_FMT "returned %d", CASE_ARGS, rc);
    const long bad = compare(s, recv, want, mine);
    CHECK(bad < 0, CASE_FMT "wrong result at byte %ld of %zu (element %ld)", CASE_ARGS, bad,
          mine * s->extent, bad / (long)s->extent);
    if (!in_place)
        CHECK(memcmp(send, orig, total * s->extent) == 0, CASE_FMT "sendbuf was modified",
              CASE_ARGS);
    tt_case_done();
    free(send);
    free(recv);
    free(want);
    free(orig);
}

/* Random counts summing to about @p target elements (same on every process:
 * seeded by @p salt), about a third of them 0. */
static void random_counts(int *counts, int p, size_t target, uint32_t salt)
{
    for (int i = 0; i < p; i++) {
        const uint32_t h = mix((uint32_t)i, salt, 77);
        counts[i] = h % 3 == 0 ? 0 : (int)(h % (2 * target / (size_t)p + 2));
    }
}

/* Both variants, in place and not, on one spec and one per-process size. */
static void run_all(MPI_Comm comm, const int *wr, const spec_t *s, size_t block, uint32_t salt)
{
    int p;
    MPI_Comm_size(comm, &p);
    int *counts = malloc(sizeof(int) * (size_t)p);
    for (int in_place = 0; in_place < 2; in_place++) {
        run_case(comm, wr, s, NULL, (int)block, in_place, salt + (uint32_t)in_place);
        random_counts(counts, p, block * (size_t)p, salt);
        run_case(comm, wr, s, counts, 0, in_place, salt + 2 + (uint32_t)in_place);
    }
    /* Everything to one process, nothing to the others. */
    for (int i = 0; i < p; i++)
        counts[i] = i == p - 1 ? (int)block : 0;
    run_case(comm, wr, s, counts, 0, 0, salt + 5);
    free(counts);
}

static int world_ranks[1024];

static void part_types(MPI_Comm comm)
{
    static const size_t sizes[] = {0, 1, 3, 100, 2500};
    for (int i = 0; i < nspecs; i++)
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
            run_all(comm, world_ranks, &specs[i], sizes[z], 1000u * (uint32_t)i + (uint32_t)z);
}

static void part_sizes(MPI_Comm comm)
{
    static const char *const names[] = {"int sum", "matmul (user, non-commutative)",
                                        "vector(int) sum", "float sum"};
    int p;
    MPI_Comm_size(comm, &p);
    for (size_t n = 0; n < sizeof names / sizeof names[0]; n++) {
        const spec_t *s = spec_find(names[n]);
        if (quick && n >= 3)
            break;
        const size_t eb = kind_size(s->k) * (size_t)s->nprim; /* packed bytes per element */
        const size_t slot = slot_bytes / eb;
        /* Whole-message bytes around the inline line (56 on 64-byte lines)
         * and the slot; per-block sizes up to several fragments. */
        const size_t blocks[] = {0,
                                 1,
                                 56 / eb / (size_t)p,
                                 56 / eb / (size_t)p + 1,
                                 slot / (size_t)p - 1,
                                 slot / (size_t)p,
                                 slot / (size_t)p + 1,
                                 slot - 1,
                                 slot,
                                 slot + 1,
                                 5 * slot + 3};
        for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++) {
            if (quick && b >= 7 && b != 10)
                continue;
            run_all(comm, world_ranks, s, blocks[b], 50000u + 100u * (uint32_t)n + (uint32_t)b);
        }
    }
}

/* A communicator and the world ranks of its ranks. */
static void comm_ranks(MPI_Comm c, int *wr)
{
    int me, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(c, &p);
    MPI_Allgather(&me, 1, MPI_INT, wr, 1, MPI_INT, c);
}

static void part_comms(void)
{
    int me, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm c[3];
    MPI_Comm_dup(MPI_COMM_WORLD, &c[0]);
    MPI_Comm_set_name(c[0], "dup(world)");
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &c[1]);
    MPI_Comm_set_name(c[1], "split(odd/even)");
    MPI_Comm_split(MPI_COMM_WORLD, 0, p - me, &c[2]);
    MPI_Comm_set_name(c[2], "reversed(world)");
    const char *const names[] = {"int sum", "matmul (user, non-commutative)", "vector(int) sum"};
    for (int k = 0; k < 3; k++) {
        int wr[1024];
        comm_ranks(c[k], wr);
        for (size_t n = 0; n < sizeof names / sizeof names[0]; n++) {
            const spec_t *s = spec_find(names[n]);
            const size_t eb = kind_size(s->k) * (size_t)s->nprim;
            const size_t blocks[] = {1, 7, slot_bytes / eb + 5};
            for (size_t b = 0; b < 3; b++)
                run_all(c[k], wr, s, blocks[b],
                        90000u + 1000u * (uint32_t)k + 10u * (uint32_t)n + (uint32_t)b);
        }
        MPI_Comm_free(&c[k]);
    }
}

/* ---- errors ------------------------------------------------------------------- */

static int handler_calls, handler_class;

static void record_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    handler_calls++;
    MPI_Error_class(*code, &handler_class);
}

/* A bad call: error class @p want through the handler, buffers untouched. */
static void expect_error(const char *what, int rc, int want, const int *send, const int *recv,
                         int n)
{
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    CHECK(cls == want, "errors: %s: got class %d, want %d", what, cls, want);
    CHECK(handler_calls == 1 && handler_class == want,
          "errors: %s: the handler ran %d times (class %d)", what, handler_calls, handler_class);
    handler_calls = 0;
    handler_class = -1;
    for (int i = 0; i < n; i++)
        if (send[i] != 1000 + i || recv[i] != -7) {
            CHECK(0, "errors: %s: a buffer changed (element %d: send %d recv %d)", what, i, send[i],
                  recv[i]);
            break;
        }
    tt_case_done();
}

static void part_errors(void)
{
    enum { N = 64 };
    int send[N], recv[N], p;
    MPI_Errhandler eh;
    MPI_Comm c;
    for (int i = 0; i < N; i++)
        send[i] = 1000 + i, recv[i] = -7;
    MPI_Comm_create_errhandler(record_handler, &eh);
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh); /* MPI_COMM_NULL's errors go there */
    MPI_Comm_size(c, &p);
    int *counts = malloc(sizeof(int) * (size_t)p);
    for (int i = 0; i < p; i++)
        counts[i] = 1;

    /* The first TC_ call on a communicator may be a bad one (no context yet). */
    expect_error("first call, block recvcount -1",
                 TC_Reduce_scatter_block(send, recv, -1, MPI_INT, MPI_SUM, c), MPI_ERR_COUNT, send,
                 recv, N);
    expect_error("block MPI_DATATYPE_NULL",
                 TC_Reduce_scatter_block(send, recv, 1, MPI_DATATYPE_NULL, MPI_SUM, c),
                 MPI_ERR_TYPE, send, recv, N);
    expect_error("block MPI_OP_NULL",
                 TC_Reduce_scatter_block(send, recv, 1, MPI_INT, MPI_OP_NULL, c), MPI_ERR_OP, send,
                 recv, N);
    expect_error("block MPI_COMM_NULL",
                 TC_Reduce_scatter_block(send, recv, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL),
                 MPI_ERR_COMM, send, recv, N);
    expect_error("block sendbuf == recvbuf",
                 TC_Reduce_scatter_block(recv, recv, 1, MPI_INT, MPI_SUM, c), MPI_ERR_BUFFER, send,
                 recv, N);
    expect_error("v NULL recvcounts", TC_Reduce_scatter(send, recv, NULL, MPI_INT, MPI_SUM, c),
                 MPI_ERR_ARG, send, recv, N);
    counts[p - 1] = -1;
    expect_error("v negative count", TC_Reduce_scatter(send, recv, counts, MPI_INT, MPI_SUM, c),
                 MPI_ERR_COUNT, send, recv, N);
    counts[p - 1] = 1;
    expect_error("v MPI_DATATYPE_NULL",
                 TC_Reduce_scatter(send, recv, counts, MPI_DATATYPE_NULL, MPI_SUM, c), MPI_ERR_TYPE,
                 send, recv, N);
    expect_error("v MPI_OP_NULL", TC_Reduce_scatter(send, recv, counts, MPI_INT, MPI_OP_NULL, c),
                 MPI_ERR_OP, send, recv, N);
    expect_error("v MPI_COMM_NULL",
                 TC_Reduce_scatter(send, recv, counts, MPI_INT, MPI_SUM, MPI_COMM_NULL),
                 MPI_ERR_COMM, send, recv, N);
    expect_error("v sendbuf == recvbuf", TC_Reduce_scatter(recv, recv, counts, MPI_INT, MPI_SUM, c),
                 MPI_ERR_BUFFER, send, recv, N);
    /* Still works afterwards. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    int wr[1024];
    comm_ranks(c, wr);
    run_all(c, wr, spec_find("int sum"), 5, 777);
    run_all(c, wr, spec_find("int sum"), slot_bytes / 4 + 1, 778);
    CHECK(handler_calls == 0, "errors: the handler ran on good calls");
    free(counts);
    MPI_Comm_free(&c);
    MPI_Errhandler_free(&eh);
}

static int in_list(const char *list, const char *word)
{
    const size_t n = strlen(word);
    for (const char *p = list; (p = strstr(p, word)) != NULL; p += n)
        if ((p == list || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    const char *parts = "types,sizes,comms";
    MPI_Init(&argc, &argv);
    tt_check_np(prog);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--parts") == 0 && i + 1 < argc)
            parts = argv[++i];
    }
    const char *sb = getenv("TC_SHM_REDUCE_SLOT_BYTES");
    if (sb && atol(sb) > 0)
        slot_bytes = (size_t)atol(sb);
    if (tt_size > 1024) {
        fprintf(stderr, "%s: at most 1024 processes\n", prog);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int i = 0; i < tt_size; i++)
        world_ranks[i] = i;
    MPI_Comm_set_name(MPI_COMM_WORLD, "world");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    specs_create();
    if (in_list(parts, "types"))
        part_types(MPI_COMM_WORLD);
    if (in_list(parts, "sizes"))
        part_sizes(MPI_COMM_WORLD);
    if (in_list(parts, "comms"))
        part_comms();
    if (in_list(parts, "errors"))
        part_errors();
    specs_free();
    return tt_finish();
}
