/* Reduction test cases shared by test_reduce_scatter.c and test_scan.c
 * (redspec.h). */
#include "redspec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_test_common.h"

/* ---- element kinds and their reference operations ------------------------ */

size_t rt_kind_size(kind_t k)
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

uint32_t rt_mix(uint32_t a, uint32_t b, uint32_t c)
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
    const uint32_t h = rt_mix((uint32_t)rank + 1, (uint32_t)g, salt);
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
        *(unsigned *)out = o == O_BAND ? h | rt_mix(h, 1, 2) | rt_mix(h, 3, 4) : h;
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

static MPI_Op op_matmul;
rt_spec_t rt_specs[32];
int rt_nspecs;

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
    rt_spec_t *s = &rt_specs[rt_nspecs++];
    s->name = name;
    s->k = k;
    s->o = o;
    s->derived = derived;
    s->op = mpi_op(o);
    const MPI_Datatype b = basic_type(k);
    const size_t sz = rt_kind_size(k);
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

void rt_specs_create(int quick)
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
    t_mat_vector = rt_specs[rt_nspecs - 1].dt;
}

void rt_specs_free(void)
{
    for (int i = 0; i < rt_nspecs; i++)
        if (rt_specs[i].derived)
            MPI_Type_free(&rt_specs[i].dt);
    MPI_Type_free(&t_mat);
    MPI_Op_free(&op_matmul);
}

const rt_spec_t *rt_spec_find(const char *name)
{
    for (int i = 0; i < rt_nspecs; i++)
        if (strcmp(rt_specs[i].name, name) == 0)
            return &rt_specs[i];
    return NULL;
}

/* Byte offset of primitive j (0 .. nprim-1) of element e of @p s. */
size_t rt_prim_off(const rt_spec_t *s, size_t e, int j)
{
    return e * s->extent + (size_t)j * 2 * rt_kind_size(s->k);
}

/* A buffer of @p n elements of @p s: sentinel, then primitive q = e * nprim
 * + j = gen(rank, q0 + q). @p rank < 0: sentinel only. */
void rt_fill(const rt_spec_t *s, char *buf, size_t n, int rank, size_t q0, uint32_t salt)
{
    memset(buf, TT_SENTINEL, n * s->extent);
    if (rank < 0)
        return;
    for (size_t e = 0; e < n; e++)
        for (int j = 0; j < s->nprim; j++)
            gen(s->k, s->o, rank, q0 + e * (size_t)s->nprim + (size_t)j, salt,
                buf + rt_prim_off(s, e, j));
}

/* The expected result image: @p n elements starting at element @p e0 of the
 * message, each primitive the rank-ordered fold over @p p processes (of
 * communicator ranks; @p wr maps them to the ranks the data depends on). */
void rt_expect(const rt_spec_t *s, char *buf, size_t n, size_t e0, int p, const int *wr,
               uint32_t salt)
{
    const size_t sz = rt_kind_size(s->k);
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
                char *dst = buf + rt_prim_off(s, e, j);
                memcpy(dst + offsetof(dint_t, v), &d.v, sizeof d.v);
                memcpy(dst + offsetof(dint_t, i), &d.i, sizeof d.i);
            } else {
                memcpy(buf + rt_prim_off(s, e, j), acc, sz);
            }
        }
}

/* Compare the data bytes (and holes) of n elements; MPI_DOUBLE_INT's
 * padding is not data (the MPI may write it). Returns the first wrong byte
 * offset, or -1. */
long rt_compare(const rt_spec_t *s, const char *got, const char *want, size_t n)
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

/* A communicator and the world ranks of its ranks. */
void rt_comm_ranks(MPI_Comm c, int *wr)
{
    int me, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(c, &p);
    MPI_Allgather(&me, 1, MPI_INT, wr, 1, MPI_INT, c);
}

/* ---- errors ------------------------------------------------------------------- */

int rt_handler_calls, rt_handler_class;

void rt_record_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    rt_handler_calls++;
    MPI_Error_class(*code, &rt_handler_class);
}

/* A bad call: error class @p want through the handler, buffers untouched. */
void rt_expect_error(const char *what, int rc, int want, const int *send, const int *recv, int n)
{
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    CHECK(cls == want, "errors: %s: got class %d, want %d", what, cls, want);
    CHECK(rt_handler_calls == 1 && rt_handler_class == want,
          "errors: %s: the handler ran %d times (class %d)", what, rt_handler_calls,
          rt_handler_class);
    rt_handler_calls = 0;
    rt_handler_class = -1;
    for (int i = 0; i < n; i++)
        if (send[i] != 1000 + i || recv[i] != -7) {
            CHECK(0, "errors: %s: a buffer changed (element %d: send %d recv %d)", what, i, send[i],
                  recv[i]);
            break;
        }
    tt_case_done();
}

int rt_in_list(const char *list, const char *word)
{
    const size_t n = strlen(word);
    for (const char *p = list; (p = strstr(p, word)) != NULL; p += n)
        if ((p == list || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
            return 1;
    return 0;
}
