/* TC_Reduce_scatter_block and TC_Reduce_scatter against results every
 * process computes itself (no MPI collective gives the expected values).
 *
 *   --parts LIST  comma-separated, default "types,sizes,small,comms":
 *     types   every (type, op) pair below, a few sizes, both variants,
 *             in place and not
 *     sizes   MPI_INT sum, float sum and the non-commutative 2x2 matrix
 *             product at 0, 1, inline-line, slot-1, slot, slot+1 bytes and
 *             several fragments per block; Reduce_scatter with random
 *             counts (zeros included)
 *     small   the small-message path: every (type, op) pair at 1, 2 and 16
 *             elements per block, both variants, in place and not, and
 *             Reduce_scatter with fixed unequal counts (zeros, ones,
 *             twos; the first process or the last receiving nothing)
 *     comms   dup'd, split (odd/even) and reversed communicators
 *     errors  bad arguments -> the right error class through the
 *             communicator's handler, buffers untouched
 *     hier    the cases of the hierarchical path (run under a posed or
 *             emulated hierarchy): int, double, contiguous(3 int); SUM, MAX,
 *             a user-defined commutative op; the non-commutative matrix
 *             product (the MPI's own there); world and reversed(world)
 *     noncomm only hier's non-commutative cases (a test asserts from
 *             TC_STATS that none took the hierarchical path)
 *   --quick       fewer (type, op) pairs and sizes (MPICH at np > 3)
 *   --verbose     rank 0 prints each case before its call
 *
 * Data, (type, op) specs and expected values: redspec.h. Send buffers must
 * come back unchanged.
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

#include "redspec.h"
#include "tc_test_common.h"

static const char *prog = "test_reduce_scatter";
static int quick, verbose;
static size_t slot_bytes = 32768;

/* One call of Reduce_scatter (@p counts) or, with @p counts NULL,
 * Reduce_scatter_block of @p block elements. */
static void run_case(MPI_Comm comm, const int *wr, const rt_spec_t *s, const int *counts, int block,
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
    rt_fill(s, send, total, wr[me], 0, salt);
    memcpy(orig, send, total * s->extent);
    if (in_place)
        memcpy(recv, send, total * s->extent);
    else
        rt_fill(s, recv, mine, -1, 0, salt);
    rt_expect(s, want, mine, e0, p, wr, salt);
    const void *sb = in_place ? MPI_IN_PLACE : send;
    if (verbose && me == 0) {
        printf("%s %s np %d %zu elements in all%s\n", counts ? "v" : "block", s->name, p, total,
               in_place ? " in place" : "");
        fflush(stdout);
    }
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
    const long bad = rt_compare(s, recv, want, mine);
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
        const uint32_t h = rt_mix((uint32_t)i, salt, 77);
        counts[i] = h % 3 == 0 ? 0 : (int)(h % (2 * target / (size_t)p + 2));
    }
}

/* Both variants, in place and not, on one spec and one per-process size. */
static void run_all(MPI_Comm comm, const int *wr, const rt_spec_t *s, size_t block, uint32_t salt)
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
    for (int i = 0; i < rt_nspecs; i++)
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
            run_all(comm, world_ranks, &rt_specs[i], sizes[z], 1000u * (uint32_t)i + (uint32_t)z);
}

static void part_sizes(MPI_Comm comm)
{
    static const char *const names[] = {"int sum", "matmul (user, non-commutative)",
                                        "vector(int) sum", "float sum"};
    int p;
    MPI_Comm_size(comm, &p);
    for (size_t n = 0; n < sizeof names / sizeof names[0]; n++) {
        const rt_spec_t *s = rt_spec_find(names[n]);
        if (quick && n >= 3)
            break;
        const size_t eb = rt_kind_size(s->k) * (size_t)s->nprim; /* packed bytes per element */
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

/* Messages of a few elements (most in one inline line): every spec at 1, 2
 * and 16 elements per block, then unequal counts of 0-2 elements per
 * process, in place and not. */
static void part_small(MPI_Comm comm)
{
    static const size_t blocks[] = {1, 2, 16};
    int p;
    MPI_Comm_size(comm, &p);
    int *counts = malloc(sizeof(int) * (size_t)p);
    for (int i = 0; i < rt_nspecs; i++) {
        const rt_spec_t *s = &rt_specs[i];
        const uint32_t salt = 120000u + 100u * (uint32_t)i;
        for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++)
            run_all(comm, world_ranks, s, blocks[b], salt + 10u * (uint32_t)b);
        /* 0, 1, 2, 0, 1, ... and 2, 1, 0, 2, ...: zeros among unequal
         * counts, the first process or the last with none. */
        for (int pat = 0; pat < 2; pat++) {
            for (int j = 0; j < p; j++)
                counts[j] = pat == 0 ? j % 3 : 2 - j % 3;
            for (int in_place = 0; in_place < 2; in_place++)
                run_case(comm, world_ranks, s, counts, 0, in_place,
                         salt + 50u + 2u * (uint32_t)pat + (uint32_t)in_place);
        }
    }
    free(counts);
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
        rt_comm_ranks(c[k], wr);
        for (size_t n = 0; n < sizeof names / sizeof names[0]; n++) {
            const rt_spec_t *s = rt_spec_find(names[n]);
            const size_t eb = rt_kind_size(s->k) * (size_t)s->nprim;
            const size_t blocks[] = {1, 7, slot_bytes / eb + 5};
            for (size_t b = 0; b < 3; b++)
                run_all(c[k], wr, s, blocks[b],
                        90000u + 1000u * (uint32_t)k + 10u * (uint32_t)n + (uint32_t)b);
        }
        MPI_Comm_free(&c[k]);
    }
}

static void part_errors(void)
{
    enum { N = 64 };
    int send[N], recv[N], p;
    MPI_Errhandler eh;
    MPI_Comm c;
    for (int i = 0; i < N; i++)
        send[i] = 1000 + i, recv[i] = -7;
    MPI_Comm_create_errhandler(rt_record_handler, &eh);
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh); /* MPI_COMM_NULL's errors go there */
    MPI_Comm_size(c, &p);
    int *counts = malloc(sizeof(int) * (size_t)p);
    for (int i = 0; i < p; i++)
        counts[i] = 1;

    /* The first TC_ call on a communicator may be a bad one (no context yet). */
    rt_expect_error("first call, block recvcount -1",
                    TC_Reduce_scatter_block(send, recv, -1, MPI_INT, MPI_SUM, c), MPI_ERR_COUNT,
                    send, recv, N);
    rt_expect_error("block MPI_DATATYPE_NULL",
                    TC_Reduce_scatter_block(send, recv, 1, MPI_DATATYPE_NULL, MPI_SUM, c),
                    MPI_ERR_TYPE, send, recv, N);
    rt_expect_error("block MPI_OP_NULL",
                    TC_Reduce_scatter_block(send, recv, 1, MPI_INT, MPI_OP_NULL, c), MPI_ERR_OP,
                    send, recv, N);
    rt_expect_error("block MPI_COMM_NULL",
                    TC_Reduce_scatter_block(send, recv, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL),
                    MPI_ERR_COMM, send, recv, N);
    rt_expect_error("block sendbuf == recvbuf",
                    TC_Reduce_scatter_block(recv, recv, 1, MPI_INT, MPI_SUM, c), MPI_ERR_BUFFER,
                    send, recv, N);
    rt_expect_error("v NULL recvcounts", TC_Reduce_scatter(send, recv, NULL, MPI_INT, MPI_SUM, c),
                    MPI_ERR_ARG, send, recv, N);
    counts[p - 1] = -1;
    rt_expect_error("v negative count", TC_Reduce_scatter(send, recv, counts, MPI_INT, MPI_SUM, c),
                    MPI_ERR_COUNT, send, recv, N);
    counts[p - 1] = 1;
    rt_expect_error("v MPI_DATATYPE_NULL",
                    TC_Reduce_scatter(send, recv, counts, MPI_DATATYPE_NULL, MPI_SUM, c),
                    MPI_ERR_TYPE, send, recv, N);
    rt_expect_error("v MPI_OP_NULL", TC_Reduce_scatter(send, recv, counts, MPI_INT, MPI_OP_NULL, c),
                    MPI_ERR_OP, send, recv, N);
    rt_expect_error("v MPI_COMM_NULL",
                    TC_Reduce_scatter(send, recv, counts, MPI_INT, MPI_SUM, MPI_COMM_NULL),
                    MPI_ERR_COMM, send, recv, N);
    rt_expect_error("v sendbuf == recvbuf",
                    TC_Reduce_scatter(recv, recv, counts, MPI_INT, MPI_SUM, c), MPI_ERR_BUFFER,
                    send, recv, N);
    /* Still works afterwards. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    int wr[1024];
    rt_comm_ranks(c, wr);
    run_all(c, wr, rt_spec_find("int sum"), 5, 777);
    run_all(c, wr, rt_spec_find("int sum"), slot_bytes / 4 + 1, 778);
    CHECK(rt_handler_calls == 0, "errors: the handler ran on good calls");
    free(counts);
    MPI_Comm_free(&c);
    MPI_Errhandler_free(&eh);
}

/* --- part hier: the cases of the hierarchical path (issue 19) -----------
 * int, double and a contiguous derived type (3 ints); MPI_SUM, MPI_MAX and
 * a user-defined commutative op; block and random counts (zeros), one
 * process receiving everything, in place and not; world and the reversed
 * world (its groups interleave differently). Values are small integers, so
 * every sum is exact in any order; the expected values are folded here. */
typedef enum { HS_SUM, HS_MAX, HS_ABSMAX } hs_op_t;

typedef struct {
    const char *name;
    MPI_Datatype dt;
    int dbl;   /* primitives are doubles (else ints) */
    int nprim; /* primitives per element of dt */
    hs_op_t o;
    MPI_Op op;
} hs_spec_t;

static MPI_Datatype hs_int3;
static MPI_Op hs_absmax_op;

/* The larger magnitude, the larger value on a tie: commutative and
 * associative, and a missing or misplaced operand shows. */
static int hs_absmax(int a, int b)
{
    const int aa = a < 0 ? -a : a, ab = b < 0 ? -b : b;
    if (aa != ab)
        return aa > ab ? a : b;
    return a > b ? a : b;
}

static void hs_absmax_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int sz;
    MPI_Type_size(*dt, &sz);
    const long n = (long)*len * (sz / (int)sizeof(int));
    const int *a = in;
    int *b = inout;
    for (long i = 0; i < n; i++)
        b[i] = hs_absmax(a[i], b[i]);
}

static int hs_value(int rank, size_t q, uint32_t salt)
{
    return (int)(rt_mix((uint32_t)rank, (uint32_t)q, salt) % 17u) - 8;
}

static double hs_fold(const hs_spec_t *s, int p, const int *wr, size_t q, uint32_t salt)
{
    int acc = hs_value(wr[0], q, salt);
    for (int r = 1; r < p; r++) {
        const int v = hs_value(wr[r], q, salt);
        acc = s->o == HS_SUM ? acc + v : s->o == HS_MAX ? (v > acc ? v : acc) : hs_absmax(acc, v);
    }
    return acc;
}

static void hs_put(const hs_spec_t *s, void *buf, size_t i, double v)
{
    if (s->dbl)
        ((double *)buf)[i] = v;
    else
        ((int *)buf)[i] = (int)v;
}

static double hs_get(const hs_spec_t *s, const void *buf, size_t i)
{
    return s->dbl ? ((const double *)buf)[i] : ((const int *)buf)[i];
}

/* One call; @p counts NULL: the block variant with @p block elements. */
static void hs_case(MPI_Comm comm, const int *wr, const hs_spec_t *s, const int *counts, int block,
                    int in_place, uint32_t salt)
{
    int p, me;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    const size_t ps = s->dbl ? sizeof(double) : sizeof(int);
    size_t total = 0, q0 = 0;
    for (int i = 0; i < p; i++) {
        if (i == me)
            q0 = total;
        total += (size_t)(counts ? counts[i] : block);
    }
    const size_t mine = (size_t)(counts ? counts[me] : block), np_ = (size_t)s->nprim;
    char *send = malloc(total * np_ * ps + 1), *orig = malloc(total * np_ * ps + 1);
    char *recv = malloc((in_place ? total : mine) * np_ * ps + 1);
    if (!send || !orig || !recv) {
        tt_fail("out of memory");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (size_t q = 0; q < total * np_; q++)
        hs_put(s, send, q, hs_value(wr[me], q, salt));
    memcpy(orig, send, total * np_ * ps);
    if (in_place)
        memcpy(recv, send, total * np_ * ps);
    else
        for (size_t q = 0; q < mine * np_; q++)
            hs_put(s, recv, q, -1000);
    const void *sb = in_place ? MPI_IN_PLACE : send;
    const int rc = counts ? TC_Reduce_scatter(sb, recv, counts, s->dt, s->op, comm)
                          : TC_Reduce_scatter_block(sb, recv, block, s->dt, s->op, comm);
    char cname[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Comm_get_name(comm, cname, &len);
#define HS_FMT "%s %s on %s (np %d, rank %d) %zu elements in all%s: "
#define HS_ARGS                                                                                    \
    counts ? "TC_Reduce_scatter" : "TC_Reduce_scatter_block", s->name, cname, p, me, total,        \
        in_place ? ", in place" : ""
    CHECK(rc == MPI_SUCCESS, HS_FMT "returned %d", HS_ARGS, rc);
    for (size_t q = 0; q < mine * np_; q++) {
        const double want = hs_fold(s, p, wr, q0 * np_ + q, salt), got = hs_get(s, recv, q);
        if (got != want) {
            CHECK(got == want, HS_FMT "primitive %zu of %zu: got %g, want %g", HS_ARGS, q,
                  mine * np_, got, want);
            break;
        }
    }
    if (!in_place)
        CHECK(memcmp(send, orig, total * np_ * ps) == 0, HS_FMT "sendbuf was modified", HS_ARGS);
#undef HS_FMT
#undef HS_ARGS
    tt_case_done();
    free(send);
    free(orig);
    free(recv);
}

static void hs_all(MPI_Comm comm, const int *wr, const hs_spec_t *s, size_t block, uint32_t salt)
{
    int p;
    MPI_Comm_size(comm, &p);
    int *counts = malloc(sizeof(int) * (size_t)p);
    for (int in_place = 0; in_place < 2; in_place++) {
        hs_case(comm, wr, s, NULL, (int)block, in_place, salt + (uint32_t)in_place);
        random_counts(counts, p, block * (size_t)p, salt);
        hs_case(comm, wr, s, counts, 0, in_place, salt + 2 + (uint32_t)in_place);
    }
    /* Everything to one process (the first, then the last), nothing to the others. */
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < p; i++)
            counts[i] = i == (k ? p - 1 : 0) ? (int)block : 0;
        hs_case(comm, wr, s, counts, 0, k, salt + 5 + (uint32_t)k);
    }
    free(counts);
}

static void part_hier(int noncomm_only)
{
    int me, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Type_contiguous(3, MPI_INT, &hs_int3);
    MPI_Type_commit(&hs_int3);
    MPI_Op_create(hs_absmax_fn, 1, &hs_absmax_op);
    const hs_spec_t specs[] = {
        {"int sum", MPI_INT, 0, 1, HS_SUM, MPI_SUM},
        {"double sum", MPI_DOUBLE, 1, 1, HS_SUM, MPI_SUM},
        {"double max", MPI_DOUBLE, 1, 1, HS_MAX, MPI_MAX},
        {"contiguous(3 int) sum", hs_int3, 0, 3, HS_SUM, MPI_SUM},
        {"int absmax (user, commutative)", MPI_INT, 0, 1, HS_ABSMAX, hs_absmax_op},
        {"contiguous(3 int) absmax (user)", hs_int3, 0, 3, HS_ABSMAX, hs_absmax_op},
    };
    MPI_Comm c[2];
    MPI_Comm_dup(MPI_COMM_WORLD, &c[0]);
    MPI_Comm_set_name(c[0], "dup(world)");
    MPI_Comm_split(MPI_COMM_WORLD, 0, p - me, &c[1]);
    MPI_Comm_set_name(c[1], "reversed(world)");
    const rt_spec_t *mat = rt_spec_find("matmul (user, non-commutative)");
    for (int k = 0; k < 2; k++) {
        int wr[1024];
        rt_comm_ranks(c[k], wr);
        /* The non-commutative op: the MPI's own across levels, still right. */
        static const size_t msizes[] = {1, 9, 3000};
        for (size_t b = 0; b < sizeof msizes / sizeof msizes[0]; b++)
            run_all(c[k], wr, mat, msizes[b], 70000u + 100u * (uint32_t)k + (uint32_t)b);
        if (noncomm_only)
            continue;
        static const size_t sizes[] = {0, 1, 7, 1000, 12000};
        for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
            for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
                if (quick && (i % 2 == 1) && z >= 3)
                    continue;
                hs_all(c[k], wr, &specs[i], sizes[z],
                       80000u + 1000u * (uint32_t)k + 10u * (uint32_t)i + (uint32_t)z);
            }
    }
    MPI_Comm_free(&c[0]);
    MPI_Comm_free(&c[1]);
    MPI_Op_free(&hs_absmax_op);
    MPI_Type_free(&hs_int3);
}

int main(int argc, char **argv)
{
    const char *parts = "types,sizes,small,comms";
    MPI_Init(&argc, &argv);
    tt_check_np(prog);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--verbose") == 0)
            verbose = 1;
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
    rt_specs_create(quick);
    if (rt_in_list(parts, "types"))
        part_types(MPI_COMM_WORLD);
    if (rt_in_list(parts, "sizes"))
        part_sizes(MPI_COMM_WORLD);
    if (rt_in_list(parts, "small"))
        part_small(MPI_COMM_WORLD);
    if (rt_in_list(parts, "comms"))
        part_comms();
    if (rt_in_list(parts, "errors"))
        part_errors();
    if (rt_in_list(parts, "hier"))
        part_hier(0);
    if (rt_in_list(parts, "noncomm"))
        part_hier(1);
    rt_specs_free();
    return tt_finish();
}
