/* The shared-memory Reduce/Allreduce engine (src/shm/reduce.c) on a segment
 * made directly over MPI_COMM_WORLD (one node), independent of the context:
 * every root, Allreduce, MPI_IN_PLACE, inline / multi-fragment / ring-wrapping
 * sizes (and sizes of slots - 1 .. 2 slots + 1 fragments, around the ring's
 * boundaries), direct, slice and tree combining, interleaved operations (so ring
 * slots and inline lines pass from one scheme to another).
 *
 * Oracles, computed locally from the known inputs f(rank, i):
 *  - MPI_INT sum, MPI_INT max, MPI_DOUBLE sum of small integers: exact;
 *  - a non-commutative op (2x2 matrix product mod 2^32) in rank order;
 *  - MPI_FLOAT sum: the engine's documented evaluation order recomputed
 *    here, compared bit for bit: direct and slice, the right fold acc =
 *    d[p-2] + d[p-1], then acc = d[i] + acc; tree, the fold of each
 *    contiguous rank range [i, i + n) over its own value and its children's
 *    ranges (tree_partial(), written recursively from the documented shape,
 *    not from the engine's iterative descent). Which scheme a message takes
 *    follows the engine's documented rule (uses_tree()). Plus every rank's
 *    Allreduce result gathered and compared with rank 0's (bitwise identity).
 *  - the non-commutative matrix product checks that the tree keeps rank
 *    order (a subtree out of order or a swapped operand changes the result).
 *  - the packed ring (run_packed()): inputs that change with the call, the
 *    sums and the rank-order composition of affine maps computed here.
 * PMPI_Reduce on the same inputs is a second opinion for the integer cases.
 *
 * Options: --slots N --slot-bytes B --slice-min B --tree-max B --tree-arity K
 * --copy memcpy|stream|auto (publication copy of large messages), --quick --max-n N (sizes above N
 * elements skipped: MPICH oversubscribed on tiny slots). tree-max defaults to 0: direct/slice only.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/redop.h"
#include "shm/params.h"
#include "shm/segment.h"

#include "tc_test_common.h"

static int me, np;

enum { K_INT_SUM, K_INT_MAX, K_DBL_SUM, K_MAT, K_FLT_SUM, K_LAST };
static const char *const kind_names[K_LAST] = {"int-sum", "int-max", "double-sum", "matrix",
                                               "float-sum"};

static size_t tree_max, slice_min, slot_bytes;
static int tree_arity = 2;
static double tw_over_t;

static MPI_Op mat_op;
static MPI_Datatype mat_type;

/* inout = in x inout for 2x2 matrices of uint32 (row-major), mod 2^32. */
static void mat_mul(const uint32_t *a, uint32_t *b)
{
    uint32_t r[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                     a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
    memcpy(b, r, sizeof r);
}

static void mat_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        mat_mul((const uint32_t *)in + 4 * i, (uint32_t *)inout + 4 * i);
}

static size_t elem_size(int kind)
{
    switch (kind) {
    case K_INT_SUM:
    case K_INT_MAX:
        return sizeof(int32_t);
    case K_DBL_SUM:
        return sizeof(double);
    case K_MAT:
        return 4 * sizeof(uint32_t);
    default:
        return sizeof(float);
    }
}

/* Input element i of rank r. */
static void input(int kind, int r, size_t i, void *out)
{
    switch (kind) {
    case K_INT_SUM: {
        int32_t v = (int32_t)((i * 2654435761u + (size_t)r * 40503u) % 200001u) - 100000;
        memcpy(out, &v, sizeof v);
        break;
    }
    case K_INT_MAX: {
        int32_t v = (int32_t)((i * 7919u + (size_t)r * 104729u) % 1000003u) - 500000;
        memcpy(out, &v, sizeof v);
        break;
    }
    case K_DBL_SUM: {
        double v = (double)((int)((i * 31u + (size_t)r * 17u) % 2001u) - 1000);
        memcpy(out, &v, sizeof v);
        break;
    }
    case K_MAT: {
        uint32_t m[4] = {(uint32_t)(i + (size_t)r + 1), (uint32_t)(r * 3 + 1), (uint32_t)(i % 7),
                         (uint32_t)(r + 2)};
        memcpy(out, m, sizeof m);
        break;
    }
    default: {
        /* Non-trivial mantissas so the evaluation order matters. */
        float v = (float)(((i * 2654435761u) ^ ((size_t)r * 97u)) % 100000u) / 7.0f - 5000.0f;
        memcpy(out, &v, sizeof v);
        break;
    }
    }
}

/* Whether a message of @p nbytes (elements of @p e bytes) goes up the tree,
 * by the rule reduce.c documents: inline messages when they fit under
 * tree_max; data messages when slicing does not take them and their
 * fragment (the per-message size rule, at most a slot) fits. */
static int uses_tree(size_t nbytes, size_t e)
{
    if (np <= 2 || tree_max == 0 || nbytes == 0)
        return 0;
    if (nbytes <= TC_SHM_INLINE_MAX)
        return nbytes <= tree_max;
    size_t f = tc_shm_params_fragment_for(nbytes, tw_over_t, slot_bytes) / e * e;
    if (f == 0)
        f = e;
    if (f >= slice_min)
        return 0;
    return (f < nbytes ? f : nbytes) <= tree_max;
}

/* Float sum of element i over ranks [lo, lo + n) as the tree computes it:
 * x[0] = rank lo's value, x[1..c] = the partials of the c = min(arity, n - 1)
 * contiguous chunks of the remaining ranks (chunk t starts at lo + 1 +
 * (n - 1) t / c), folded right to left. */
static float tree_partial(int lo, int n, size_t i)
{
    float x[65];
    int cnt = 0;
    input(K_FLT_SUM, lo, i, &x[cnt++]);
    const int m = n - 1, c = m < tree_arity ? m : tree_arity;
    for (int t = 0; t < c; t++) {
        const int a = lo + 1 + m * t / c, b = lo + 1 + m * (t + 1) / c;
        x[cnt++] = tree_partial(a, b - a, i);
    }
    float acc = x[cnt - 1];
    for (int j = cnt - 2; j >= 0; j--)
        acc = x[j] + acc;
    return acc;
}

/* The expected element i of the result, in the engine's order (@p tree:
 * the message goes up the tree; only the float sum depends on it, the other
 * kinds are exact in any grouping that keeps rank order). */
static void expected(int kind, size_t i, int tree, void *out)
{
    switch (kind) {
    case K_INT_SUM: {
        uint32_t acc = 0;
        for (int r = 0; r < np; r++) {
            int32_t v;
            input(kind, r, i, &v);
            acc += (uint32_t)v;
        }
        int32_t v = (int32_t)acc;
        memcpy(out, &v, sizeof v);
        break;
    }
    case K_INT_MAX: {
        int32_t best = INT32_MIN;
        for (int r = 0; r < np; r++) {
            int32_t v;
            input(kind, r, i, &v);
            if (v > best)
                best = v;
        }
        memcpy(out, &best, sizeof best);
        break;
    }
    case K_DBL_SUM: {
        double acc = 0;
        for (int r = 0; r < np; r++) {
            double v;
            input(kind, r, i, &v);
            acc += v;
        }
        memcpy(out, &acc, sizeof acc);
        break;
    }
    case K_MAT: {
        uint32_t acc[4], m[4];
        input(kind, np - 1, i, acc);
        for (int r = np - 2; r >= 0; r--) {
            input(kind, r, i, m);
            mat_mul(m, acc);
        }
        memcpy(out, acc, sizeof acc);
        break;
    }
    default: {
        float acc, v;
        if (tree) {
            acc = tree_partial(0, np, i);
            memcpy(out, &acc, sizeof acc);
            break;
        }
        input(kind, np - 1, i, &acc);
        for (int r = np - 2; r >= 0; r--) {
            input(kind, r, i, &v);
            acc = v + acc;
        }
        memcpy(out, &acc, sizeof acc);
        break;
    }
    }
}

/* Fragments of a message of @p n elements of @p e bytes, by reduce.c's rule
 * (the size rule in whole elements, at most a slot). */
static size_t frags_of(size_t n, size_t e)
{
    size_t f = tc_shm_params_fragment_for(n * e, tw_over_t, slot_bytes) / e * e;
    if (f == 0)
        f = e;
    return (n * e + f - 1) / f;
}

/* The fewest elements a message needs to be cut into @p target fragments or
 * more (binary search: the count grows with the size). */
static size_t ring_size(size_t target, size_t e)
{
    size_t lo = 1, hi = (size_t)1 << 26;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (frags_of(mid, e) >= target)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static void setup_op(int kind, size_t n, tc_redop_t *op)
{
    MPI_Datatype dt = MPI_INT;
    MPI_Op o = MPI_SUM;
    switch (kind) {
    case K_INT_MAX:
        o = MPI_MAX;
        break;
    case K_DBL_SUM:
        dt = MPI_DOUBLE;
        break;
    case K_MAT:
        dt = mat_type;
        o = mat_op;
        break;
    case K_FLT_SUM:
        dt = MPI_FLOAT;
        break;
    default:
        break;
    }
    if (tc_redop_init(op, (int)n, dt, o) != 0) {
        tt_fail("tc_redop_init refused %s", kind_names[kind]);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void run_case(tc_shm_comm_t *s, int kind, size_t n, int root, int in_place)
{
    const size_t e = elem_size(kind);
    tc_redop_t op;
    setup_op(kind, n, &op);
    const int receives = root < 0 || me == root;
    char *send = malloc(n * e + 1), *recv = malloc(n * e + 64), *want = malloc(n * e + 1);
    const int tree = uses_tree(n * e, e);
    for (size_t i = 0; i < n; i++) {
        input(kind, me, i, send + i * e);
        expected(kind, i, tree, want + i * e);
    }
    memset(recv, 0x5a, n * e + 64);
    const void *sb = send;
    if (in_place && receives) {
        memcpy(recv, send, n * e);
        sb = NULL;
    }
    if (tc_shm_reduce(s, sb, recv, n, &op, root) != 0) {
        tt_fail("tc_shm_reduce refused %s n=%zu", kind_names[kind], n);
    } else if (receives) {
        if (n && memcmp(recv, want, n * e) != 0) {
            size_t i = 0;
            while (memcmp(recv + i * e, want + i * e, e) == 0)
                i++;
            tt_fail("%s n=%zu root=%d in_place=%d tree=%d: element %zu differs", kind_names[kind],
                    n, root, in_place, tree, i);
        }
        for (size_t b = n * e; b < n * e + 64; b++)
            if ((unsigned char)recv[b] != 0x5a) {
                tt_fail("%s n=%zu root=%d: wrote past the end", kind_names[kind], n, root);
                break;
            }
    }
    if (root < 0 && n > 0) {
        /* Every rank's bits against rank 0's. */
        char *all = me == 0 ? malloc(n * e * (size_t)np) : NULL;
        MPI_Gather(recv, (int)(n * e), MPI_BYTE, all, (int)(n * e), MPI_BYTE, 0, MPI_COMM_WORLD);
        if (me == 0) {
            for (int r = 1; r < np; r++)
                if (memcmp(all, all + (size_t)r * n * e, n * e) != 0)
                    tt_fail("%s n=%zu: rank %d's Allreduce bits differ from rank 0's",
                            kind_names[kind], n, r);
            free(all);
        }
    }
    tc_redop_free(&op);
    free(send);
    free(recv);
    free(want);
}

/* The packed ring (reduce.c: a Reduce to a root of at most
 * TC_SHM_PACKED_MAX bytes): three rings and then some of consecutive calls,
 * roots rotating, some in place, every seventh followed by an inline
 * Allreduce and every eleventh by a multi-fragment Reduce (the sequences
 * interleave), on int sums (4 and 8 bytes), a double sum and a
 * non-commutative 8-byte op (affine maps x -> a x + b mod 2^32 composed in
 * rank order). The inputs change with the call, so an entry left from a ring
 * ago would show. Returns the calls made. */
static MPI_Op aff_op;
static MPI_Datatype aff_type;

/* inout = in o inout: (a1, b1) o (a2, b2) = (a1 a2, a1 b2 + b1). */
static void aff_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const uint32_t *x = in;
    uint32_t *y = inout;
    for (int i = 0; i < *len; i++) {
        const uint32_t a = x[2 * i] * y[2 * i], b = x[2 * i] * y[2 * i + 1] + x[2 * i + 1];
        y[2 * i] = a;
        y[2 * i + 1] = b;
    }
}

static int32_t packed_int(int r, uint64_t c, size_t i)
{
    return (int32_t)((c * 131u + (uint64_t)r * 17u + i * 5u) % 20001u) - 10000;
}

static int run_packed(tc_shm_comm_t *s, int *cases)
{
    const uint64_t calls = 3 * (uint64_t)TC_SHM_PACKED_RING + 5;
    int made = 0;
    for (uint64_t c = 0; c < calls; c++) {
        const int root = (int)(c % (uint64_t)np), form = (int)(c % 4);
        const int in_place = c % 5 == 0;
        size_t n = 1;
        tc_redop_t op;
        int rc = 0;
        unsigned char send[8], recv[8 + 16], want[8];
        if (form == 0 || form == 1) {
            /* int sum of one (4 B) or two (8 B) elements */
            n = (size_t)form + 1;
            rc = tc_redop_init(&op, (int)n, MPI_INT, MPI_SUM);
            for (size_t i = 0; i < n; i++) {
                int32_t v = packed_int(me, c, i), w = 0;
                for (int r = 0; r < np; r++)
                    w += packed_int(r, c, i);
                memcpy(send + 4 * i, &v, 4);
                memcpy(want + 4 * i, &w, 4);
            }
        } else if (form == 2) {
            rc = tc_redop_init(&op, 1, MPI_DOUBLE, MPI_SUM);
            double v = (double)packed_int(me, c, 0), w = 0;
            for (int r = 0; r < np; r++)
                w += (double)packed_int(r, c, 0); /* small integers: exact in any order */
            memcpy(send, &v, 8);
            memcpy(want, &w, 8);
        } else {
            rc = tc_redop_init(&op, 1, aff_type, aff_op);
            uint32_t v[2], w[2] = {1, 0};
            for (int r = np - 1; r >= 0; r--) {
                const uint32_t a = 2u * (uint32_t)(c + (uint64_t)r) + 1u,
                               b = (uint32_t)(c * 7u) + (uint32_t)r * 3u + 1u;
                if (r == me) {
                    v[0] = a;
                    v[1] = b;
                }
                /* w = (a, b) o w, the lower rank on the left */
                const uint32_t na = a * w[0], nb = a * w[1] + b;
                w[0] = na;
                w[1] = nb;
            }
            memcpy(send, v, 8);
            memcpy(want, w, 8);
        }
        const size_t nbytes = form == 0 ? 4 : 8;
        if (rc != 0) {
            tt_fail("packed ring: tc_redop_init refused form %d", form);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        memset(recv, 0x5a, sizeof recv);
        const void *sb = send;
        if (in_place && me == root) {
            memcpy(recv, send, nbytes);
            sb = NULL;
        }
        if (tc_shm_reduce(s, sb, recv, n, &op, root) != 0)
            tt_fail("packed ring call %llu: tc_shm_reduce refused", (unsigned long long)c);
        else if (me == root && memcmp(recv, want, nbytes) != 0)
            tt_fail("packed ring call %llu form %d root %d in_place %d: wrong result",
                    (unsigned long long)c, form, root, in_place);
        else if (me == root)
            for (size_t b = nbytes; b < sizeof recv; b++)
                if (recv[b] != 0x5a) {
                    tt_fail("packed ring call %llu: wrote past the end", (unsigned long long)c);
                    break;
                }
        tc_redop_free(&op);
        made++;
        if (c % 7 == 6) {
            run_case(s, K_INT_SUM, 1, -1, 0); /* inline lines */
            (*cases)++;
        }
        if (c % 11 == 10) {
            run_case(s, K_INT_SUM, 5000, root, 0); /* data fragments */
            (*cases)++;
        }
    }
    return made;
}

/* One message of @p n elements of @p kind at every root (--quick: 0 and the
 * last) and as an Allreduce (root -1), in place and not; counts the cases and
 * those that go up the tree. */
static void run_roots(tc_shm_comm_t *s, int kind, size_t n, int quick, int *cases, int *tree_cases)
{
    for (int root = -1; root < np; root++) {
        if (quick && root > 0 && root != np - 1)
            continue;
        for (int in_place = 0; in_place < 2; in_place++) {
            run_case(s, kind, n, root, in_place);
            (*cases)++;
            *tree_cases += uses_tree(n * elem_size(kind), elem_size(kind));
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    tt_check_np("test_shm_reduce");
    tc_shm_params_t params = {.S = 16,
                              .q = 4,
                              .f = 4096,
                              .tree = TC_TREE_KARY,
                              .arity = 2,
                              .tw_over_t = 1000,
                              .stream_bytes = 0,
                              .reduce_slots = 8,
                              .reduce_slot_bytes = 32768,
                              .reduce_slice_min = 16384,
                              .reduce_tree_max = 0,
                              .reduce_tree_arity = 2};
    int quick = 0;
    size_t max_n = (size_t)-1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--slots") && i + 1 < argc)
            params.reduce_slots = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--slot-bytes") && i + 1 < argc)
            params.reduce_slot_bytes = (size_t)atol(argv[++i]);
        else if (!strcmp(argv[i], "--slice-min") && i + 1 < argc)
            params.reduce_slice_min = (size_t)atol(argv[++i]);
        else if (!strcmp(argv[i], "--tree-max") && i + 1 < argc)
            params.reduce_tree_max = (size_t)atol(argv[++i]);
        else if (!strcmp(argv[i], "--tree-arity") && i + 1 < argc)
            params.reduce_tree_arity = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--max-n") && i + 1 < argc)
            max_n = (size_t)atol(argv[++i]);
        else if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--copy") && i + 1 < argc) {
            /* The publication copy of messages >= 256 KiB (reduce.c). */
            const char *c = argv[++i];
            params.reduce_copy = !strcmp(c, "memcpy")   ? TC_SHM_COPY_MEMCPY
                                 : !strcmp(c, "stream") ? TC_SHM_COPY_STREAM
                                                        : TC_SHM_COPY_AUTO;
        }
    }
    MPI_Type_contiguous(4, MPI_UINT32_T, &mat_type);
    MPI_Type_commit(&mat_type);
    MPI_Op_create(mat_fn, 0, &mat_op);
    MPI_Type_contiguous(2, MPI_UINT32_T, &aff_type);
    MPI_Type_commit(&aff_type);
    MPI_Op_create(aff_fn, 0, &aff_op);

    tc_shm_policy_t policy = {.placement = TC_PLACEMENT_TOUCH,
                              .max_segment = (size_t)1 << 34,
                              .max_total = (size_t)1 << 36,
                              .max_node = (size_t)1 << 38,
                              .fail = 0};
    tc_wait_info_t wait = {.comm_name = "test", .timeout_s = 120, .spin_polls = 100};
    tc_shm_comm_t *s = NULL;
    if (tc_shm_comm_create(&s, MPI_COMM_WORLD, &params, &policy, &wait) != MPI_SUCCESS || !s) {
        fprintf(stderr, "rank %d: segment creation failed\n", me);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    tree_max = params.reduce_tree_max;
    tree_arity = params.reduce_tree_arity;
    slice_min = params.reduce_slice_min;
    slot_bytes = s->layout.rslot_bytes;
    tw_over_t = s->tw_over_t;
    if (tree_arity < 2 || tree_arity > 64) {
        if (me == 0)
            fprintf(stderr, "--tree-arity must be 2..64\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    static const size_t sizes_full[] = {0,   1,    2,    3,    13,    14,     15,
                                        100, 1000, 4095, 8192, 10001, 100000, 300001};
    static const size_t sizes_quick[] = {0, 1, 14, 15, 1000, 10001, 100000};
    const size_t *sizes = quick ? sizes_quick : sizes_full;
    const size_t nsizes = quick ? sizeof sizes_quick / sizeof sizes_quick[0]
                                : sizeof sizes_full / sizeof sizes_full[0];
    int cases = 0, tree_cases = 0;
    /* Around the ring's boundaries: messages of slots - 1, slots, slots + 1
     * and 2 slots + 1 fragments, each with a last fragment of one element
     * and one element less (all fragments full), in floats (a run-ahead
     * publisher fills the whole ring, a slice receiver's copy-out lags up to
     * half of it: reduce.c), non-commutative matrices and integers. */
    const size_t slots = (size_t)s->layout.rslots;
    const size_t targets[] = {slots - 1, slots, slots + 1, 2 * slots + 1};
    static const int ring_kinds[] = {K_FLT_SUM, K_MAT, K_INT_SUM};
    for (size_t ti = 0; ti < sizeof targets / sizeof targets[0]; ti++) {
        for (size_t ki = 0; ki < sizeof ring_kinds / sizeof ring_kinds[0]; ki++) {
            const int kind = ring_kinds[ki];
            const size_t n1 = ring_size(targets[ti], elem_size(kind));
            for (size_t n = n1 - 1; n <= n1; n++) {
                if (n <= 1 || n > max_n)
                    continue;
                run_roots(s, kind, n, quick, &cases, &tree_cases);
            }
        }
    }
    for (int kind = 0; kind < K_LAST; kind++) {
        for (size_t si = 0; si < nsizes; si++) {
            size_t n = sizes[si];
            if (kind == K_MAT && n > 20000)
                n /= 4; /* 16-byte elements */
            if (n > max_n)
                continue;
            run_roots(s, kind, n, quick, &cases, &tree_cases);
        }
    }
    const int packed_calls = run_packed(s, &cases);
    /* A second opinion for the integer sum at one size. */
    {
        const size_t n = 5000;
        int32_t *a = malloc(n * 4), *b = malloc(n * 4), *c = malloc(n * 4);
        for (size_t i = 0; i < n; i++)
            input(K_INT_SUM, me, i, &a[i]);
        tc_redop_t op;
        setup_op(K_INT_SUM, n, &op);
        tc_shm_reduce(s, a, b, n, &op, -1);
        MPI_Allreduce(a, c, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (memcmp(b, c, n * 4) != 0)
            tt_fail("int sum differs from PMPI's Allreduce");
        tc_redop_free(&op);
        free(a);
        free(b);
        free(c);
    }
    /* Asked for the tree on more than two processes: some cases must take it. */
    if (tree_max > 0 && np > 2 && tree_cases == 0)
        tt_fail("--tree-max %zu: no case went up the tree", tree_max);
    tc_shm_comm_destroy(s);
    long total = tt_failures_all();
    if (me == 0)
        printf("shm reduce np=%d slots=%d slot=%zu slice_min=%zu tree_max=%zu arity=%d: %d cases "
               "(%d on the tree), %d small rooted calls in a row, %ld failures\n",
               np, params.reduce_slots, params.reduce_slot_bytes, params.reduce_slice_min,
               params.reduce_tree_max, params.reduce_tree_arity, cases, tree_cases, packed_calls,
               total);
    MPI_Op_free(&aff_op);
    MPI_Type_free(&aff_type);
    MPI_Op_free(&mat_op);
    MPI_Type_free(&mat_type);
    MPI_Finalize();
    return total ? 1 : 0;
}
