/*
 * An unmodified MPI program calling MPI_Reduce and MPI_Allreduce. Run with
 * LD_PRELOAD=libtopocoll_pmpi.so by run_with_stats.sh, which checks from
 * TC_STATS=1 output that its calls went through the library; it prints how
 * many of each it made for that check.
 *
 * Every rank's contribution is input(case, rank, index, iteration), so every
 * rank computes the expected result on its own (in rank order, as MPI defines
 * it) and compares it with what the call returned in a poisoned buffer. Cases:
 * MPI_INT/MPI_SUM, MPI_FLOAT/MPI_SUM (small integers: exact in any order),
 * MPI_DOUBLE/MPI_MAX, MPI_LONG_LONG/MPI_MIN, MPI_UNSIGNED_CHAR/MPI_BXOR,
 * MPI_2INT/MPI_MAXLOC (with ties), a commutative user op, a non-commutative
 * user op (composition of affine maps, on a derived pair type). (Open MPI
 * rejects predefined ops on derived types, so there is no strided case.)
 * Each case runs as
 * Reduce at every root, with and without MPI_IN_PLACE at the root, and as
 * Allreduce with and without MPI_IN_PLACE, from one element to ~0.5 MiB, on
 * MPI_COMM_WORLD and on a duplicate. Send buffers must come back unchanged.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_test_common.h"

enum {
    K_INT_SUM,
    K_FLOAT_SUM,
    K_DOUBLE_MAX,
    K_LLONG_MIN,
    K_UCHAR_BXOR,
    K_2INT_MAXLOC,
    K_USER_PLUS1,  /* x op y = x + y + 1: commutative, differs from MPI_SUM */
    K_USER_AFFINE, /* compose affine maps mod 65521: not commutative */
    K_LAST
};
static const char *const kind_names[K_LAST] = {
    "int/sum",    "float/sum",   "double/max",    "long long/min",
    "uchar/bxor", "2int/maxloc", "user plus-one", "user affine (non-commutative)"};

#define AFFINE_MOD 65521

typedef struct {
    int32_t a, b;
} affine_t; /* x -> a x + b (mod AFFINE_MOD) */

static long long reduces, allreduces;
static int world_rank;
static MPI_Datatype affine_type;
static MPI_Op op_plus1, op_affine;

static void plus1_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const int32_t *a = in;
    int32_t *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = a[i] + b[i] + 1;
}

/* inout = in o inout, `in` from the lower ranks: (f o g)(x) = f(g(x)). */
static affine_t affine_compose(affine_t f, affine_t g)
{
    affine_t r;
    r.a = (int32_t)((int64_t)f.a * g.a % AFFINE_MOD);
    r.b = (int32_t)(((int64_t)f.a * g.b + f.b) % AFFINE_MOD);
    return r;
}

static void affine_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const affine_t *a = in;
    affine_t *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = affine_compose(a[i], b[i]);
}

static uint32_t mix(int kind, int rank, long i, int iter)
{
    return ((uint32_t)kind * 0x9E3779B1u) ^ ((uint32_t)rank * 2654435761u) ^
           ((uint32_t)i * 40503u) ^ ((uint32_t)iter << 20);
}

/* Element sizes in the buffers (the vector case uses 2 ints per element). */
static size_t elem_size(int kind)
{
    switch (kind) {
    case K_FLOAT_SUM:
        return sizeof(float);
    case K_DOUBLE_MAX:
        return sizeof(double);
    case K_LLONG_MIN:
        return sizeof(long long);
    case K_UCHAR_BXOR:
        return 1;
    case K_2INT_MAXLOC:
        return 2 * sizeof(int);
    case K_USER_AFFINE:
        return sizeof(affine_t);
    default:
        return sizeof(int32_t);
    }
}

/* Element i of `rank`'s contribution, written at p. */
static void input(int kind, int rank, long i, int iter, void *p)
{
    uint32_t m = mix(kind, rank, i, iter);
    switch (kind) {
    case K_INT_SUM:
    case K_USER_PLUS1:
        *(int32_t *)p = (int32_t)(m % 2001) - 1000;
        break;
    case K_FLOAT_SUM:
        *(float *)p = (float)((int)(m % 2001) - 1000);
        break;
    case K_DOUBLE_MAX:
        *(double *)p = ((double)(m % 1000003) - 500000.0) / 7.0;
        break;
    case K_LLONG_MIN:
        *(long long *)p = ((long long)(m % 1000003) - 500000) * 1000000007LL;
        break;
    case K_UCHAR_BXOR:
        *(unsigned char *)p = (unsigned char)(m >> 7);
        break;
    case K_2INT_MAXLOC: {
        int v[2] = {(int)(m % 3), rank}; /* few values: ties pick the lowest rank */
        memcpy(p, v, sizeof v);
        break;
    }
    case K_USER_AFFINE: {
        affine_t f = {(int32_t)(1 + m % (AFFINE_MOD - 1)), (int32_t)((m >> 8) % AFFINE_MOD)};
        memcpy(p, &f, sizeof f);
        break;
    }
    }
}

/* Element i of the result of ranks 0..size-1, folded in rank order. */
static void expected(int kind, int size, long i, int iter, void *p)
{
    unsigned char acc[16], x[16];
    input(kind, 0, i, iter, acc);
    for (int r = 1; r < size; r++) {
        input(kind, r, i, iter, x);
        switch (kind) {
        case K_INT_SUM:
            *(int32_t *)acc += *(int32_t *)x;
            break;
        case K_USER_PLUS1:
            *(int32_t *)acc += *(int32_t *)x + 1;
            break;
        case K_FLOAT_SUM:
            *(float *)acc += *(float *)x;
            break;
        case K_DOUBLE_MAX:
            if (*(double *)x > *(double *)acc)
                *(double *)acc = *(double *)x;
            break;
        case K_LLONG_MIN:
            if (*(long long *)x < *(long long *)acc)
                *(long long *)acc = *(long long *)x;
            break;
        case K_UCHAR_BXOR:
            acc[0] ^= x[0];
            break;
        case K_2INT_MAXLOC: {
            int a[2], b[2];
            memcpy(a, acc, sizeof a);
            memcpy(b, x, sizeof b);
            if (b[0] > a[0] || (b[0] == a[0] && b[1] < a[1]))
                memcpy(acc, b, sizeof b);
            break;
        }
        case K_USER_AFFINE: {
            affine_t f, g;
            memcpy(&f, acc, sizeof f);
            memcpy(&g, x, sizeof g);
            f = affine_compose(f, g);
            memcpy(acc, &f, sizeof f);
            break;
        }
        }
    }
    memcpy(p, acc, elem_size(kind));
}

static void fail(const char *what, int kind, int root, long n, int iter, long at)
{
    tt_fail("%s %s root=%d n=%ld iter=%d: wrong at %ld", what, kind_names[kind], root, n, iter, at);
}

/* The datatype and op of `kind`. */
static void args_of(int kind, MPI_Datatype *dt, MPI_Op *op)
{
    static const MPI_Datatype types[K_LAST] = {MPI_INT,       MPI_FLOAT,         MPI_DOUBLE,
                                               MPI_LONG_LONG, MPI_UNSIGNED_CHAR, MPI_2INT,
                                               MPI_INT,       MPI_DATATYPE_NULL};
    static const MPI_Op ops[K_LAST] = {MPI_SUM,  MPI_SUM,    MPI_MAX,     MPI_MIN,
                                       MPI_BXOR, MPI_MAXLOC, MPI_OP_NULL, MPI_OP_NULL};
    *dt = types[kind];
    *op = ops[kind];
    if (kind == K_USER_PLUS1)
        *op = op_plus1;
    if (kind == K_USER_AFFINE) {
        *dt = affine_type;
        *op = op_affine;
    }
}

static void fill(int kind, int rank, long n, int iter, unsigned char *buf)
{
    size_t es = elem_size(kind);
    for (long i = 0; i < n; i++)
        input(kind, rank, i, iter, buf + (size_t)i * es);
}

static void verify(const char *what, int kind, int root, long n, int iter, const unsigned char *buf,
                   int size)
{
    size_t es = elem_size(kind);
    unsigned char want[16];
    for (long i = 0; i < n; i++) {
        expected(kind, size, i, iter, want);
        if (memcmp(buf + (size_t)i * es, want, es) != 0) {
            fail(what, kind, root, n, iter, i);
            return;
        }
    }
}

/* The send buffer must still hold this rank's input. */
static void check_unchanged(const char *what, int kind, int rank, int root, long n, int iter,
                            const unsigned char *buf)
{
    size_t es = elem_size(kind);
    unsigned char want[16];
    for (long i = 0; i < n; i++) {
        input(kind, rank, i, iter, want);
        if (memcmp(buf + (size_t)i * es, want, es) != 0) {
            fail(what, kind, root, n, iter, i);
            return;
        }
    }
}

/* Receivers start from a pattern that is no case's result for (almost) every
 * element, so a call that writes nothing cannot pass. */
static void poison(unsigned char *buf, size_t bytes)
{
    memset(buf, 0xA5, bytes);
}

static void run_case(MPI_Comm comm, int kind, long n, int iter, unsigned char *sbuf,
                     unsigned char *rbuf)
{
    int rank, size, count = (int)n;
    MPI_Datatype dt;
    MPI_Op op;
    size_t bytes = (size_t)n * elem_size(kind);

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    args_of(kind, &dt, &op);

    for (int in_place = 0; in_place < 2; in_place++) {
        for (int root = 0; root < size; root++) {
            fill(kind, rank, n, iter, sbuf);
            const void *send = sbuf;
            if (in_place && rank == root) {
                fill(kind, rank, n, iter, rbuf);
                send = MPI_IN_PLACE;
            } else {
                poison(rbuf, bytes);
            }
            reduces++;
            if (MPI_Reduce(send, rbuf, count, dt, op, root, comm) != MPI_SUCCESS)
                fail("MPI_Reduce returned an error", kind, root, n, iter, -1);
            if (rank == root)
                verify(in_place ? "MPI_Reduce in place" : "MPI_Reduce", kind, root, n, iter, rbuf,
                       size);
            if (!(in_place && rank == root))
                check_unchanged("MPI_Reduce changed the send buffer", kind, rank, root, n, iter,
                                sbuf);
        }

        fill(kind, rank, n, iter, in_place ? rbuf : sbuf);
        if (!in_place)
            poison(rbuf, bytes);
        allreduces++;
        if (MPI_Allreduce(in_place ? MPI_IN_PLACE : sbuf, rbuf, count, dt, op, comm) != MPI_SUCCESS)
            fail("MPI_Allreduce returned an error", kind, -1, n, iter, -1);
        verify(in_place ? "MPI_Allreduce in place" : "MPI_Allreduce", kind, -1, n, iter, rbuf,
               size);
        if (!in_place)
            check_unchanged("MPI_Allreduce changed the send buffer", kind, rank, -1, n, iter, sbuf);
    }
}

int main(int argc, char **argv)
{
    /* 1 element .. 70001 elements (0.5 MiB of affine pairs); odd sizes. */
    static const long sizes[] = {1, 3, 1000, 70001};
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    int size;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tt_check_np("reduce_c");

    MPI_Type_contiguous(2, MPI_INT32_T, &affine_type);
    MPI_Type_commit(&affine_type);
    MPI_Op_create(plus1_fn, 1, &op_plus1);
    MPI_Op_create(affine_fn, 0, &op_affine);

    size_t cap = (size_t)sizes[nsizes - 1] * 16;
    unsigned char *sbuf = malloc(cap), *rbuf = malloc(cap);
    if (sbuf == NULL || rbuf == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);

    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    for (int iter = 0; iter < 2; iter++) {
        MPI_Comm comm = iter == 0 ? MPI_COMM_WORLD : dup;
        for (int kind = 0; kind < K_LAST; kind++)
            for (int s = 0; s < nsizes; s++)
                run_case(comm, kind, sizes[s], iter, sbuf, rbuf);
    }

    /* count 0 is legal and touches nothing. */
    int32_t zero_s = 11, zero_r = 22;
    reduces++;
    MPI_Reduce(&zero_s, &zero_r, 0, MPI_INT, MPI_SUM, size - 1, MPI_COMM_WORLD);
    allreduces++;
    MPI_Allreduce(&zero_s, &zero_r, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (zero_s != 11 || zero_r != 22)
        fail("count 0 touched a buffer", K_INT_SUM, size - 1, 0, 0, 0);

    MPI_Comm_free(&dup);
    MPI_Op_free(&op_plus1);
    MPI_Op_free(&op_affine);
    MPI_Type_free(&affine_type);
    free(sbuf);
    free(rbuf);

    /* The tally itself goes through the shim too, so it is counted. */
    allreduces++;
    long all_errors = tt_failures_all();
    printf("tc-pmpi-test rank=%d reduces=%lld allreduces=%lld errors=%ld\n", world_rank, reduces,
           allreduces, tt_failures());
    fflush(stdout);
    MPI_Finalize();
    return all_errors == 0 ? 0 : 1;
}
