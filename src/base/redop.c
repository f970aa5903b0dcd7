/* Reduction operands (see redop.h).
 *
 * Classification walks the datatype's constructors down to its named leaves:
 * a predefined op needs exactly one basic leaf type (or one pair type for
 * MINLOC/MAXLOC), and that type is the element, so the element stream depends
 * on the type signature only. The op/type rules are MPI-3.1 section 5.9.2;
 * anything outside them is refused (-1) so PMPI_* reports the error.
 *
 * Combining: hand-written loops for the predefined ops on the common C types
 * (and for MINLOC/MAXLOC on packed pairs, which no MPI function accepts);
 * PMPI_Reduce_local for everything else.
 */
#include "redop.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum {
    TC_REDOP_PACK_COPY, /* the stream is the bytes at buf + lb */
    TC_REDOP_PACK_MAP,  /* flattened type map, cursor */
    TC_REDOP_PACK_PAIR, /* named pair type with padding: per element */
    TC_REDOP_PACK_MPI   /* PMPI_Pack / PMPI_Unpack on MPI_COMM_SELF */
};

/* ---- op and type tables --------------------------------------------------- */

enum {
    TC_OP_MAX,
    TC_OP_MIN,
    TC_OP_SUM,
    TC_OP_PROD,
    TC_OP_LAND,
    TC_OP_BAND,
    TC_OP_LOR,
    TC_OP_BOR,
    TC_OP_LXOR,
    TC_OP_BXOR,
    TC_OP_MINLOC,
    TC_OP_MAXLOC,
    TC_OP_LAST
};

/* Type groups of MPI-3.1 section 5.9.2. */
enum {
    TC_CAT_CINT = 1,  /* C integer */
    TC_CAT_MLANG = 2, /* multi-language types: MPI_AINT, MPI_OFFSET, MPI_COUNT */
    TC_CAT_FINT = 4,  /* Fortran integer */
    TC_CAT_FLOAT = 8, /* floating point */
    TC_CAT_LOGICAL = 16,
    TC_CAT_COMPLEX = 32,
    TC_CAT_BYTE = 64
};

#define TC_CATS_MINMAX  (TC_CAT_CINT | TC_CAT_MLANG | TC_CAT_FINT | TC_CAT_FLOAT)
#define TC_CATS_ARITH   (TC_CATS_MINMAX | TC_CAT_COMPLEX)
#define TC_CATS_LOGICAL (TC_CAT_CINT | TC_CAT_LOGICAL)
#define TC_CATS_BITWISE (TC_CAT_CINT | TC_CAT_MLANG | TC_CAT_FINT | TC_CAT_BYTE)

static const struct {
    MPI_Op op;
    int cats; /* type groups the op is defined on */
} tc_redop_ops[TC_OP_LAST] = {
    [TC_OP_MAX] = {MPI_MAX, TC_CATS_MINMAX},    [TC_OP_MIN] = {MPI_MIN, TC_CATS_MINMAX},
    [TC_OP_SUM] = {MPI_SUM, TC_CATS_ARITH},     [TC_OP_PROD] = {MPI_PROD, TC_CATS_ARITH},
    [TC_OP_LAND] = {MPI_LAND, TC_CATS_LOGICAL}, [TC_OP_BAND] = {MPI_BAND, TC_CATS_BITWISE},
    [TC_OP_LOR] = {MPI_LOR, TC_CATS_LOGICAL},   [TC_OP_BOR] = {MPI_BOR, TC_CATS_BITWISE},
    [TC_OP_LXOR] = {MPI_LXOR, TC_CATS_LOGICAL}, [TC_OP_BXOR] = {MPI_BXOR, TC_CATS_BITWISE},
    [TC_OP_MINLOC] = {MPI_MINLOC, 0},           [TC_OP_MAXLOC] = {MPI_MAXLOC, 0},
};

/* Loop kinds: the semantics of an integer op depend only on width and
 * signedness, so MPI_LONG, MPI_INT64_T and MPI_AINT share loops. Unsigned =
 * signed + 1. */
enum {
    TC_K_none,
    TC_K_i8,
    TC_K_u8,
    TC_K_i16,
    TC_K_u16,
    TC_K_i32,
    TC_K_u32,
    TC_K_i64,
    TC_K_u64,
    TC_K_f32,
    TC_K_f64,
    TC_K_LAST
};

/* Bytes of one element of each kind: a loop is used only when the MPI's type
 * size agrees. */
static const size_t tc_redop_kind_size[TC_K_LAST] = {0, 1, 1, 2, 2, 4, 4, 8, 8, 4, 8};

#define TC_IKIND(sz, uns)                                                                          \
    ((sz) == 1   ? TC_K_i8 + (uns)                                                                 \
     : (sz) == 2 ? TC_K_i16 + (uns)                                                                \
     : (sz) == 4 ? TC_K_i32 + (uns)                                                                \
     : (sz) == 8 ? TC_K_i64 + (uns)                                                                \
                 : TC_K_none)
#define TC_SIGNED(T)   TC_IKIND(sizeof(T), 0)
#define TC_UNSIGNED(T) TC_IKIND(sizeof(T), 1)

typedef struct tc_redop_basic {
    MPI_Datatype type;
    int cat;
    int kind; /* TC_K_none: PMPI_Reduce_local */
} tc_redop_basic_t;

/* The predefined types a predefined op may be applied to. Types not listed
 * (MPI_CHAR, MPI_WCHAR, optional Fortran sizes such as MPI_INTEGER4, C++
 * types) are refused rather than guessed at. */
static const tc_redop_basic_t tc_redop_basics[] = {
    {MPI_SIGNED_CHAR, TC_CAT_CINT, TC_SIGNED(signed char)},
    {MPI_UNSIGNED_CHAR, TC_CAT_CINT, TC_UNSIGNED(unsigned char)},
    {MPI_SHORT, TC_CAT_CINT, TC_SIGNED(short)},
    {MPI_UNSIGNED_SHORT, TC_CAT_CINT, TC_UNSIGNED(unsigned short)},
    {MPI_INT, TC_CAT_CINT, TC_SIGNED(int)},
    {MPI_UNSIGNED, TC_CAT_CINT, TC_UNSIGNED(unsigned)},
    {MPI_LONG, TC_CAT_CINT, TC_SIGNED(long)},
    {MPI_UNSIGNED_LONG, TC_CAT_CINT, TC_UNSIGNED(unsigned long)},
    {MPI_LONG_LONG_INT, TC_CAT_CINT, TC_SIGNED(long long)},
    {MPI_LONG_LONG, TC_CAT_CINT, TC_SIGNED(long long)},
    {MPI_UNSIGNED_LONG_LONG, TC_CAT_CINT, TC_UNSIGNED(unsigned long long)},
    {MPI_INT8_T, TC_CAT_CINT, TC_K_i8},
    {MPI_UINT8_T, TC_CAT_CINT, TC_K_u8},
    {MPI_INT16_T, TC_CAT_CINT, TC_K_i16},
    {MPI_UINT16_T, TC_CAT_CINT, TC_K_u16},
    {MPI_INT32_T, TC_CAT_CINT, TC_K_i32},
    {MPI_UINT32_T, TC_CAT_CINT, TC_K_u32},
    {MPI_INT64_T, TC_CAT_CINT, TC_K_i64},
    {MPI_UINT64_T, TC_CAT_CINT, TC_K_u64},
    {MPI_AINT, TC_CAT_MLANG, TC_SIGNED(MPI_Aint)},
    {MPI_OFFSET, TC_CAT_MLANG, TC_SIGNED(MPI_Offset)},
    {MPI_COUNT, TC_CAT_MLANG, TC_SIGNED(MPI_Count)},
    {MPI_INTEGER, TC_CAT_FINT, TC_K_none},
    {MPI_FLOAT, TC_CAT_FLOAT, sizeof(float) == 4 ? TC_K_f32 : TC_K_none},
    {MPI_DOUBLE, TC_CAT_FLOAT, sizeof(double) == 8 ? TC_K_f64 : TC_K_none},
    {MPI_LONG_DOUBLE, TC_CAT_FLOAT, TC_K_none},
    {MPI_REAL, TC_CAT_FLOAT, TC_K_none},
    {MPI_DOUBLE_PRECISION, TC_CAT_FLOAT, TC_K_none},
    /* Logical ops store 0/1 (MPI's result for C_BOOL too): the u8 loops. */
    {MPI_C_BOOL, TC_CAT_LOGICAL, sizeof(_Bool) == 1 ? TC_K_u8 : TC_K_none},
    {MPI_LOGICAL, TC_CAT_LOGICAL, TC_K_none},
    {MPI_C_COMPLEX, TC_CAT_COMPLEX, TC_K_none},
    {MPI_C_FLOAT_COMPLEX, TC_CAT_COMPLEX, TC_K_none},
    {MPI_C_DOUBLE_COMPLEX, TC_CAT_COMPLEX, TC_K_none},
    {MPI_C_LONG_DOUBLE_COMPLEX, TC_CAT_COMPLEX, TC_K_none},
    {MPI_COMPLEX, TC_CAT_COMPLEX, TC_K_none},
    {MPI_DOUBLE_COMPLEX, TC_CAT_COMPLEX, TC_K_none},
    {MPI_BYTE, TC_CAT_BYTE, TC_K_u8},
};

/* ---- fast loops ------------------------------------------------------------ */

/* The build is -O2, where gcc 12 vectorizes only loops whose trip count is a
 * known multiple of the vector length ("very cheap" cost model): none of
 * these. Ask for the cheap model on these loops only. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("tree-vectorize", "vect-cost-model=cheap")
#endif

/* x = left (in), y = right (inout). T the element type, UT its unsigned
 * type, WT the type the arithmetic is done in: signed overflow is undefined
 * (and UBSan reports it) while MPI wants the two's-complement wrap, so sums
 * and products run unsigned, at least as wide as unsigned int (uint16_t
 * would promote to int, whose product can overflow), and convert back. For
 * floats all three are the float type. */
#define TC_REDOP_MAX(T, UT, WT, x, y)  ((x) > (y) ? (x) : (y))
#define TC_REDOP_MIN(T, UT, WT, x, y)  ((x) < (y) ? (x) : (y))
#define TC_REDOP_SUM(T, UT, WT, x, y)  ((T)(UT)((WT)(UT)(x) + (WT)(UT)(y)))
#define TC_REDOP_PROD(T, UT, WT, x, y) ((T)(UT)((WT)(UT)(x) * (WT)(UT)(y)))
#define TC_REDOP_LAND(T, UT, WT, x, y) ((T)((x) != 0 && (y) != 0))
#define TC_REDOP_LOR(T, UT, WT, x, y)  ((T)((x) != 0 || (y) != 0))
#define TC_REDOP_LXOR(T, UT, WT, x, y) ((T)(((x) != 0) != ((y) != 0)))
#define TC_REDOP_BAND(T, UT, WT, x, y) ((T)((x) & (y)))
#define TC_REDOP_BOR(T, UT, WT, x, y)  ((T)((x) | (y)))
#define TC_REDOP_BXOR(T, UT, WT, x, y) ((T)((x) ^ (y)))

/* One (type, op): the 2- and 3-operand loops. Elements are loaded and
 * stored with memcpy, so packed buffers need no alignment (gcc turns these
 * into plain, vectorizable loads). gcc honours restrict on parameters, not
 * on locals: hence the inner functions. */
#define TC_REDOP_DEFINE(K, T, UT, WT, OP)                                                          \
    static void tc_redop_##K##_##OP##_2(const unsigned char *restrict a,                           \
                                        unsigned char *restrict b, size_t n)                       \
    {                                                                                              \
        for (size_t i = 0; i < n; i++) {                                                           \
            T x, y, z;                                                                             \
            memcpy(&x, a + i * sizeof(T), sizeof(T));                                              \
            memcpy(&y, b + i * sizeof(T), sizeof(T));                                              \
            z = TC_REDOP_##OP(T, UT, WT, x, y);                                                    \
            memcpy(b + i * sizeof(T), &z, sizeof(T));                                              \
        }                                                                                          \
    }                                                                                              \
    static void tc_redop_##K##_##OP##_3(const unsigned char *restrict a,                           \
                                        const unsigned char *restrict b,                           \
                                        unsigned char *restrict o, size_t n)                       \
    {                                                                                              \
        for (size_t i = 0; i < n; i++) {                                                           \
            T x, y, z;                                                                             \
            memcpy(&x, a + i * sizeof(T), sizeof(T));                                              \
            memcpy(&y, b + i * sizeof(T), sizeof(T));                                              \
            z = TC_REDOP_##OP(T, UT, WT, x, y);                                                    \
            memcpy(o + i * sizeof(T), &z, sizeof(T));                                              \
        }                                                                                          \
    }                                                                                              \
    static void tc_redop_##K##_##OP(const void *in, void *inout, size_t n)                         \
    {                                                                                              \
        tc_redop_##K##_##OP##_2(in, inout, n);                                                     \
    }                                                                                              \
    static void tc_redop_##K##_##OP##_fn3(const void *l, const void *r, void *o, size_t n)         \
    {                                                                                              \
        tc_redop_##K##_##OP##_3(l, r, o, n);                                                       \
    }

#define TC_REDOP_INT_OPS(X, K, T, UT, WT)                                                          \
    X(K, T, UT, WT, MAX)                                                                           \
    X(K, T, UT, WT, MIN)                                                                           \
    X(K, T, UT, WT, SUM)                                                                           \
    X(K, T, UT, WT, PROD)                                                                          \
    X(K, T, UT, WT, LAND)                                                                          \
    X(K, T, UT, WT, BAND)                                                                          \
    X(K, T, UT, WT, LOR)                                                                           \
    X(K, T, UT, WT, BOR)                                                                           \
    X(K, T, UT, WT, LXOR)                                                                          \
    X(K, T, UT, WT, BXOR)
#define TC_REDOP_FLOAT_OPS(X, K, T)                                                                \
    X(K, T, T, T, MAX)                                                                             \
    X(K, T, T, T, MIN)                                                                             \
    X(K, T, T, T, SUM)                                                                             \
    X(K, T, T, T, PROD)

/* Every (loop kind, op) with a fast loop; X(kind, T, UT, WT, OP) adds one. */
#define TC_REDOP_FAST_LIST(X)                                                                      \
    TC_REDOP_INT_OPS(X, i8, int8_t, uint8_t, unsigned)                                             \
    TC_REDOP_INT_OPS(X, u8, uint8_t, uint8_t, unsigned)                                            \
    TC_REDOP_INT_OPS(X, i16, int16_t, uint16_t, unsigned)                                          \
    TC_REDOP_INT_OPS(X, u16, uint16_t, uint16_t, unsigned)                                         \
    TC_REDOP_INT_OPS(X, i32, int32_t, uint32_t, uint32_t)                                          \
    TC_REDOP_INT_OPS(X, u32, uint32_t, uint32_t, uint32_t)                                         \
    TC_REDOP_INT_OPS(X, i64, int64_t, uint64_t, uint64_t)                                          \
    TC_REDOP_INT_OPS(X, u64, uint64_t, uint64_t, uint64_t)                                         \
    TC_REDOP_FLOAT_OPS(X, f32, float)                                                              \
    TC_REDOP_FLOAT_OPS(X, f64, double)

_Static_assert(sizeof(unsigned) >= 4, "the 8/16-bit loops compute in unsigned int");

TC_REDOP_FAST_LIST(TC_REDOP_DEFINE)

#define TC_REDOP_ENTRY(K, T, UT, WT, OP)                                                           \
    [TC_K_##K][TC_OP_##OP] = {tc_redop_##K##_##OP, tc_redop_##K##_##OP##_fn3},

static const struct {
    tc_redop_fn_t f2;
    tc_redop_fn3_t f3;
} tc_redop_fast_tab[TC_K_LAST][TC_OP_MINLOC] = {TC_REDOP_FAST_LIST(TC_REDOP_ENTRY)};

/* ---- MINLOC / MAXLOC on packed pairs -------------------------------------- */

/* MPI-3.1 section 5.9.4: the larger (smaller) value wins; on equal values
 * the smaller index. A packed element is the value's bytes then the int,
 * unaligned. o may be r (each element is loaded before it is stored). */
#define TC_REDOP_PAIR_DEFINE(NAME, T)                                                              \
    static void tc_redop_loc_##NAME(const unsigned char *l, const unsigned char *r,                \
                                    unsigned char *o, size_t n, int max)                           \
    {                                                                                              \
        const size_t es = sizeof(T) + sizeof(int);                                                 \
        for (size_t k = 0; k < n; k++, l += es, r += es, o += es) {                                \
            T u, v;                                                                                \
            int i, j;                                                                              \
            memcpy(&u, l, sizeof u);                                                               \
            memcpy(&i, l + sizeof u, sizeof i);                                                    \
            memcpy(&v, r, sizeof v);                                                               \
            memcpy(&j, r + sizeof v, sizeof j);                                                    \
            if (u == v) {                                                                          \
                j = i < j ? i : j;                                                                 \
            } else if (max ? u > v : u < v) {                                                      \
                v = u;                                                                             \
                j = i;                                                                             \
            }                                                                                      \
            memcpy(o, &v, sizeof v);                                                               \
            memcpy(o + sizeof v, &j, sizeof j);                                                    \
        }                                                                                          \
    }                                                                                              \
    static void tc_redop_minloc_##NAME(const void *in, void *inout, size_t n)                      \
    {                                                                                              \
        tc_redop_loc_##NAME(in, inout, inout, n, 0);                                               \
    }                                                                                              \
    static void tc_redop_maxloc_##NAME(const void *in, void *inout, size_t n)                      \
    {                                                                                              \
        tc_redop_loc_##NAME(in, inout, inout, n, 1);                                               \
    }                                                                                              \
    static void tc_redop_minloc3_##NAME(const void *l, const void *r, void *o, size_t n)           \
    {                                                                                              \
        tc_redop_loc_##NAME(l, r, o, n, 0);                                                        \
    }                                                                                              \
    static void tc_redop_maxloc3_##NAME(const void *l, const void *r, void *o, size_t n)           \
    {                                                                                              \
        tc_redop_loc_##NAME(l, r, o, n, 1);                                                        \
    }

TC_REDOP_PAIR_DEFINE(float, float)
TC_REDOP_PAIR_DEFINE(double, double)
TC_REDOP_PAIR_DEFINE(long, long)
TC_REDOP_PAIR_DEFINE(int, int)
TC_REDOP_PAIR_DEFINE(short, short)
TC_REDOP_PAIR_DEFINE(ldouble, long double)

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

/* The native layout is that of struct { T v; int i; } (MPI-3.1 5.9.4). */
#define TC_REDOP_PAIR_ENTRY(MPIT, NAME, T)                                                         \
    {                                                                                              \
        MPIT, sizeof(T),                                                                           \
            offsetof(                                                                              \
                struct {                                                                           \
                    T v;                                                                           \
                    int i;                                                                         \
                },                                                                                 \
                i),                                                                                \
            sizeof(struct {                                                                        \
                T v;                                                                               \
                int i;                                                                             \
            }),                                                                                    \
            {tc_redop_minloc_##NAME, tc_redop_maxloc_##NAME},                                      \
        {                                                                                          \
            tc_redop_minloc3_##NAME, tc_redop_maxloc3_##NAME                                       \
        }                                                                                          \
    }

static const struct {
    MPI_Datatype type;
    size_t vsize, ioff, extent;
    tc_redop_fn_t f2[2]; /* [0] MINLOC, [1] MAXLOC */
    tc_redop_fn3_t f3[2];
} tc_redop_pairs[] = {
    TC_REDOP_PAIR_ENTRY(MPI_FLOAT_INT, float, float),
    TC_REDOP_PAIR_ENTRY(MPI_DOUBLE_INT, double, double),
    TC_REDOP_PAIR_ENTRY(MPI_LONG_INT, long, long),
    TC_REDOP_PAIR_ENTRY(MPI_2INT, int, int),
    TC_REDOP_PAIR_ENTRY(MPI_SHORT_INT, short, short),
    TC_REDOP_PAIR_ENTRY(MPI_LONG_DOUBLE_INT, ldouble, long double),
};

#define TC_NELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* ---- classification ----------------------------------------------------- */

/* TC_REDOP_ORDER_* of predefined op @p opi on basic type @p b (an index of
 * tc_redop_basics). Integer arithmetic wraps (two's complement: exact, and
 * associative); IEEE addition and multiplication are commutative but not
 * associative; MIN/MAX of floats return one operand or the other when they
 * compare equal (+0 and -0) or unordered (NaN), so which one depends on the
 * order. long double and its complex type are left out: their padding
 * bytes are whatever each algorithm leaves there. */
static int tc_redop_order_basic(int opi, size_t b)
{
    const int cat = tc_redop_basics[b].cat;
    const MPI_Datatype t = tc_redop_basics[b].type;
    if (!(cat & (TC_CAT_FLOAT | TC_CAT_COMPLEX)))
        return TC_REDOP_ORDER_FREE;
    if (t == MPI_LONG_DOUBLE || t == MPI_C_LONG_DOUBLE_COMPLEX)
        return TC_REDOP_ORDER_FIXED;
    if (opi == TC_OP_SUM || (opi == TC_OP_PROD && cat == TC_CAT_FLOAT))
        return TC_REDOP_ORDER_SWAP2;
    return TC_REDOP_ORDER_FIXED; /* MIN/MAX of floats; complex products */
}

static int tc_redop_is_named(MPI_Datatype dt)
{
    int ni, na, nd, comb;
    return PMPI_Type_get_envelope(dt, &ni, &na, &nd, &comb) == MPI_SUCCESS &&
           comb == MPI_COMBINER_NAMED;
}

/* Find the one named type all leaves of @p dt are (*leaf, MPI_DATATYPE_NULL
 * while none is found). Leaves that add nothing to the signature (size 0:
 * MPI_LB/MPI_UB markers, zero-length blocks) are skipped. Returns -1 when
 * two leaves differ or a constructor is not understood. */
static int tc_redop_leaf(MPI_Datatype dt, MPI_Datatype *leaf, int depth)
{
    int ni, na, nd, comb, rc = -1, got = 0;
    if (depth > 32 || PMPI_Type_get_envelope(dt, &ni, &na, &nd, &comb) != MPI_SUCCESS)
        return -1;
    if (comb == MPI_COMBINER_NAMED) {
        int size;
        if (PMPI_Type_size(dt, &size) != MPI_SUCCESS)
            return -1;
        if (size == 0)
            return 0;
        if (*leaf == MPI_DATATYPE_NULL)
            *leaf = dt;
        return *leaf == dt ? 0 : -1;
    }
    if (nd < 1)
        return -1; /* Fortran parameterised types (F90_REAL ...) */
    int *ints = malloc(((size_t)ni + 1) * sizeof *ints);
    MPI_Aint *addrs = malloc(((size_t)na + 1) * sizeof *addrs);
    MPI_Datatype *types = malloc(((size_t)nd + 1) * sizeof *types);
    if (!ints || !addrs || !types ||
        PMPI_Type_get_contents(dt, ni, na, nd, ints, addrs, types) != MPI_SUCCESS)
        goto fn_exit;
    got = 1;
    rc = 0;
    for (int i = 0; i < nd && rc == 0; i++) {
        int size;
        if (comb == MPI_COMBINER_STRUCT && ints[1 + i] == 0)
            continue;
        if (PMPI_Type_size(types[i], &size) != MPI_SUCCESS) {
            rc = -1;
            break;
        }
        if (size != 0)
            rc = tc_redop_leaf(types[i], leaf, depth + 1);
    }
fn_exit:
    if (got)
        for (int i = 0; i < nd; i++)
            if (!tc_redop_is_named(types[i]))
                PMPI_Type_free(&types[i]); /* get_contents made a new handle */
    free(ints);
    free(addrs);
    free(types);
    return rc;
}

/* Does PMPI_Pack write pair type @p p as value bytes then int, no padding?
 * (What the stream of a derived type of pairs relies on when it goes through
 * PMPI_Pack.) Depends on the MPI only, so every rank gets the same answer. */
static int tc_redop_pair_pack_ok(size_t p)
{
    const size_t ext = tc_redop_pairs[p].extent, vs = tc_redop_pairs[p].vsize;
    const size_t io = tc_redop_pairs[p].ioff, es = vs + sizeof(int);
    unsigned char in[2 * 64], out[2 * 64], want[2 * 64];
    int pos = 0;
    if (ext > 64)
        return 0;
    for (size_t i = 0; i < sizeof in; i++)
        in[i] = (unsigned char)(i * 37 + 11);
    for (size_t k = 0; k < 2; k++) {
        memcpy(want + k * es, in + k * ext, vs);
        memcpy(want + k * es + vs, in + k * ext + io, sizeof(int));
    }
    if (PMPI_Pack(in, 2, tc_redop_pairs[p].type, out, (int)sizeof out, &pos, MPI_COMM_SELF) !=
        MPI_SUCCESS)
        return 0;
    return (size_t)pos == 2 * es && memcmp(out, want, 2 * es) == 0;
}

/* Set up PMPI_Pack for the stream: at most INT_MAX bytes per call, and a
 * displaced copy of dt for MPI_BOTTOM (MPICH's MPI_Pack rejects a NULL
 * buffer; we pass &anchor with a type displaced by -&anchor instead, as in
 * tc_bcast_packed). */
static char tc_redop_anchor;

static tc_err_t tc_redop_mpi_setup(tc_redop_t *r, MPI_Count dtsize)
{
    MPI_Aint a, lb, ext;
    MPI_Datatype st;
    int one = 1;
    if (dtsize > INT_MAX)
        return tc_err(TC_ERR_NOTSUP);
    r->pack_chunk = dtsize > 0 ? (int)(INT_MAX / dtsize) : INT_MAX;
    PMPI_Get_address(&tc_redop_anchor, &a);
    MPI_Aint disp = -a;
    if (PMPI_Type_get_extent(r->dt, &lb, &ext) != MPI_SUCCESS ||
        PMPI_Type_create_struct(1, &one, &disp, &r->dt, &st) != MPI_SUCCESS)
        return tc_err(TC_ERR_NOTSUP);
    /* Resized: a struct's extent may be padded for alignment, and chunks of
     * the rebased type must step by dt's extent. */
    int rc = PMPI_Type_create_resized(st, lb + disp, ext, &r->rebased);
    PMPI_Type_free(&st);
    if (rc != MPI_SUCCESS)
        return tc_err(TC_ERR_NOTSUP);
    if (PMPI_Type_commit(&r->rebased) != MPI_SUCCESS) {
        PMPI_Type_free(&r->rebased);
        return tc_err(TC_ERR_NOTSUP);
    }
    r->has_rebased = 1;
    return TC_OK;
}

/* The common case classified without an MPI call or a search (a call costs
 * tens of ns, and a 4-byte Allreduce at np=1 only a few): the predefined ops
 * and the named basic types whose fast loop's C size matches the MPI's size,
 * each in an open-addressed table keyed by the handle's value, filled once
 * per process and read-only afterwards (predefined handles never change
 * meaning). */
#define TC_REDOP_OPTAB_BITS 5
#define TC_REDOP_DTTAB_BITS 7

typedef struct tc_redop_slot {
    uintptr_t key;
    int idx; /* index into tc_redop_ops / tc_redop_basics; -1: empty */
} tc_redop_slot_t;

static tc_redop_slot_t tc_redop_optab[1 << TC_REDOP_OPTAB_BITS];
static tc_redop_slot_t tc_redop_dttab[1 << TC_REDOP_DTTAB_BITS];
static atomic_int tc_redop_tabs_ready;
static pthread_once_t tc_redop_tabs_once = PTHREAD_ONCE_INIT;
_Static_assert(TC_OP_LAST < (1 << TC_REDOP_OPTAB_BITS) / 2 &&
                   TC_NELEMS(tc_redop_basics) < (1 << TC_REDOP_DTTAB_BITS) / 2,
               "the tables stay at most half full");

static inline unsigned tc_redop_hash(uintptr_t key, unsigned bits)
{
    return (unsigned)(((uint64_t)key * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - bits));
}

static void tc_redop_tab_add(tc_redop_slot_t *t, unsigned bits, uintptr_t key, int idx)
{
    unsigned i = tc_redop_hash(key, bits);
    while (t[i].idx >= 0) {
        if (t[i].key == key)
            return; /* an alias (MPI_LONG_LONG_INT, MPI_LONG_LONG): the first entry */
        i = (i + 1) & ((1u << bits) - 1);
    }
    t[i] = (tc_redop_slot_t){key, idx};
}

static inline int tc_redop_tab_find(const tc_redop_slot_t *t, unsigned bits, uintptr_t key)
{
    for (unsigned i = tc_redop_hash(key, bits);; i = (i + 1) & ((1u << bits) - 1)) {
        if (t[i].idx < 0 || t[i].key == key)
            return t[i].idx;
    }
}

static void tc_redop_tabs_fill(void)
{
    for (size_t i = 0; i < TC_NELEMS(tc_redop_optab); i++)
        tc_redop_optab[i].idx = -1;
    for (size_t i = 0; i < TC_NELEMS(tc_redop_dttab); i++)
        tc_redop_dttab[i].idx = -1;
    for (int opi = 0; opi < TC_OP_MINLOC; opi++)
        tc_redop_tab_add(tc_redop_optab, TC_REDOP_OPTAB_BITS, (uintptr_t)tc_redop_ops[opi].op, opi);
    for (size_t b = 0; b < TC_NELEMS(tc_redop_basics); b++) {
        int size = 0;
        int k = tc_redop_basics[b].kind;
        if (k != TC_K_none && tc_redop_basics[b].type != MPI_DATATYPE_NULL &&
            PMPI_Type_size(tc_redop_basics[b].type, &size) == MPI_SUCCESS &&
            (size_t)size == tc_redop_kind_size[k])
            tc_redop_tab_add(tc_redop_dttab, TC_REDOP_DTTAB_BITS,
                             (uintptr_t)tc_redop_basics[b].type, (int)b);
    }
    /* release: pairs with the acquire in tc_redop_init_basic() */
    atomic_store_explicit(&tc_redop_tabs_ready, 1, memory_order_release);
}

/* The index in tc_redop_basics of @p dt when @p op applies to it (a
 * predefined op, not MINLOC/MAXLOC, on a named basic type), with @p op's index
 * in *@p opi_out; else -1. */
static int tc_redop_basic_find(MPI_Datatype dt, MPI_Op op, int *opi_out)
{
    /* acquire: pairs with the release in tc_redop_tabs_fill() */
    if (!atomic_load_explicit(&tc_redop_tabs_ready, memory_order_acquire))
        pthread_once(&tc_redop_tabs_once, tc_redop_tabs_fill);
    const int opi = tc_redop_tab_find(tc_redop_optab, TC_REDOP_OPTAB_BITS, (uintptr_t)op);
    if (opi < 0)
        return -1;
    const int b = tc_redop_tab_find(tc_redop_dttab, TC_REDOP_DTTAB_BITS, (uintptr_t)dt);
    if (b < 0 || !(tc_redop_basics[b].cat & tc_redop_ops[opi].cats))
        return -1;
    *opi_out = opi;
    return b;
}

int tc_redop_basic_elem(MPI_Datatype dt, MPI_Op op)
{
    int opi;
    const int b = tc_redop_basic_find(dt, op, &opi);
    return b < 0 ? -1 : (int)tc_redop_kind_size[tc_redop_basics[b].kind];
}

int tc_redop_basic_loops(MPI_Datatype dt, MPI_Op op, tc_redop_loops_t *l)
{
    int opi;
    const int b = tc_redop_basic_find(dt, op, &opi);
    if (b < 0)
        return -1;
    const int k = tc_redop_basics[b].kind;
    l->f2 = tc_redop_fast_tab[k][opi].f2;
    l->f3 = tc_redop_fast_tab[k][opi].f3;
    l->elem = tc_redop_kind_size[k];
    return 0;
}

/* A predefined op (not MINLOC/MAXLOC) on a named basic type with a loop.
 * Fills every field of @p r (no memset first); returns 0, or -1 for the
 * general path. */
static tc_err_t tc_redop_init_basic(tc_redop_t *r, int count, MPI_Datatype dt, MPI_Op op)
{
    int opi;
    const int b = tc_redop_basic_find(dt, op, &opi);
    if (b < 0)
        return tc_err(TC_ERR_NOTSUP);
    const int k = tc_redop_basics[b].kind;
    const size_t elem = tc_redop_kind_size[k];
    *r = (tc_redop_t){
        .op = op,
        .elem_type = dt,
        .elem = elem,
        .nelem = (size_t)count,
        .nbytes = (size_t)count * elem,
        .commutative = 1, /* every predefined operation is */
        .predefined = 1,
        .order = tc_redop_order_basic(opi, (size_t)b),
        .contiguous = 1,
        .lb = 0,
        .dt = dt,
        .count = count,
        .fast = tc_redop_fast_tab[k][opi].f2,
        .fast3 = tc_redop_fast_tab[k][opi].f3,
        .pack_kind = TC_REDOP_PACK_COPY,
        .dt_extent = (MPI_Aint)elem,
        .rebased = MPI_DATATYPE_NULL,
    };
    return TC_OK;
}

tc_err_t tc_redop_init(tc_redop_t *r, int count, MPI_Datatype dt, MPI_Op op)
{
    MPI_Count dtsize = 0, leafsize;
    MPI_Aint lb, extent;
    MPI_Datatype leaf = MPI_DATATYPE_NULL;
    int opi, lsize;
    if (count >= 0 && tc_redop_init_basic(r, count, dt, op) == 0)
        return TC_OK;
    memset(r, 0, sizeof *r);
    r->op = op;
    r->dt = dt;
    r->count = count;
    r->elem_type = MPI_DATATYPE_NULL;
    r->rebased = MPI_DATATYPE_NULL;
    if (op == MPI_OP_NULL || dt == MPI_DATATYPE_NULL || count < 0)
        return tc_err(TC_ERR_NOTSUP);
    if (op == MPI_REPLACE || op == MPI_NO_OP)
        return tc_err(TC_ERR_NOTSUP); /* only meaningful in RMA */
    if (PMPI_Type_size_x(dt, &dtsize) != MPI_SUCCESS || dtsize < 0 || dtsize == MPI_UNDEFINED ||
        PMPI_Type_get_extent(dt, &lb, &extent) != MPI_SUCCESS)
        return tc_err(TC_ERR_NOTSUP);
    if (PMPI_Op_commutative(op, &r->commutative) != MPI_SUCCESS)
        return tc_err(TC_ERR_NOTSUP);
    r->dt_extent = extent;
    for (opi = 0; opi < TC_OP_LAST; opi++)
        if (op == tc_redop_ops[opi].op)
            break;
    r->predefined = opi < TC_OP_LAST;

    if (!r->predefined) {
        /* User op: its function gets whole elements of dt, so the packed
         * stream must be dt's own bytes, element after element. */
        if (dtsize == 0 || !tc_datatype_is_contiguous(dt, 1, &lb) || (MPI_Count)extent != dtsize)
            return tc_err(TC_ERR_NOTSUP);
        r->contiguous = 1;
        r->pack_kind = TC_REDOP_PACK_COPY;
        r->lb = lb;
        r->elem = (size_t)dtsize;
        r->elem_type = dt;
        r->nelem = (size_t)count;
        r->nbytes = r->nelem * r->elem;
        return TC_OK;
    }

    if (tc_redop_leaf(dt, &leaf, 0) != 0 || leaf == MPI_DATATYPE_NULL ||
        PMPI_Type_size(leaf, &lsize) != MPI_SUCCESS || lsize <= 0)
        return tc_err(TC_ERR_NOTSUP);
    leafsize = lsize;
    if (dtsize % leafsize != 0)
        return tc_err(TC_ERR_NOTSUP);
    size_t pidx = TC_NELEMS(tc_redop_pairs);
    if (opi == TC_OP_MINLOC || opi == TC_OP_MAXLOC) {
        for (pidx = 0; pidx < TC_NELEMS(tc_redop_pairs); pidx++)
            if (leaf == tc_redop_pairs[pidx].type)
                break;
        if (pidx == TC_NELEMS(tc_redop_pairs))
            return tc_err(TC_ERR_NOTSUP);
        /* The MPI must agree with the C layout we pack from. */
        if ((size_t)leafsize != tc_redop_pairs[pidx].vsize + sizeof(int))
            return tc_err(TC_ERR_NOTSUP);
        int mx = opi == TC_OP_MAXLOC;
        r->pair = (int)pidx + 1;
        /* Integer values compare exactly (ties go to the lower index either
         * way); float values have signed zeros and NaNs. */
        const MPI_Datatype pt = tc_redop_pairs[pidx].type;
        r->order = pt == MPI_LONG_INT || pt == MPI_2INT || pt == MPI_SHORT_INT
                       ? TC_REDOP_ORDER_FREE
                       : TC_REDOP_ORDER_FIXED;
        r->pair_vsize = tc_redop_pairs[pidx].vsize;
        r->pair_ioff = tc_redop_pairs[pidx].ioff;
        r->fast = tc_redop_pairs[pidx].f2[mx];
        r->fast3 = tc_redop_pairs[pidx].f3[mx];
    } else {
        size_t b;
        for (b = 0; b < TC_NELEMS(tc_redop_basics); b++)
            if (leaf == tc_redop_basics[b].type)
                break;
        if (b == TC_NELEMS(tc_redop_basics) || !(tc_redop_basics[b].cat & tc_redop_ops[opi].cats))
            return tc_err(TC_ERR_NOTSUP);
        int k = tc_redop_basics[b].kind;
        r->order = tc_redop_order_basic(opi, b);
        if (k != TC_K_none && (size_t)leafsize == tc_redop_kind_size[k]) {
            r->fast = tc_redop_fast_tab[k][opi].f2;
            r->fast3 = tc_redop_fast_tab[k][opi].f3;
        }
    }
    r->elem_type = leaf;
    r->elem = (size_t)leafsize;
    r->nelem = (size_t)count * (size_t)(dtsize / leafsize);
    r->nbytes = r->nelem * r->elem;

    if (tc_datatype_is_contiguous(dt, count, &lb)) {
        r->contiguous = 1;
        r->lb = lb;
        r->pack_kind = TC_REDOP_PACK_COPY;
        return TC_OK;
    }
    if (r->pair && dt == leaf) {
        r->pack_kind = TC_REDOP_PACK_PAIR;
        return TC_OK;
    }
    if (tc_datatype_flatten(dt, &r->map) == 0) {
        r->pack_kind = TC_REDOP_PACK_MAP;
        return TC_OK;
    }
    if ((r->pair && !tc_redop_pair_pack_ok(pidx)) || tc_redop_mpi_setup(r, dtsize) != 0) {
        tc_redop_free(r);
        return tc_err(TC_ERR_NOTSUP);
    }
    r->pack_kind = TC_REDOP_PACK_MPI;
    return TC_OK;
}

void tc_redop_free(tc_redop_t *r)
{
    if (!r)
        return;
    if (r->map.segs)
        tc_datatype_map_free(&r->map);
    if (r->has_rebased) {
        PMPI_Type_free(&r->rebased);
        r->has_rebased = 0;
    }
}

/* ---- combining ------------------------------------------------------------ */

void tc_redop_apply(const tc_redop_t *r, const void *in, void *inout, size_t n)
{
    if (r->fast) {
        r->fast(in, inout, n);
        return;
    }
    /* A user op's datatype may have a true lower bound != 0: Reduce_local
     * reads element k at buf + lb + k * extent, and the packed element k is
     * at stream + k * elem. (Basic types: lb is 0.) */
    uintptr_t shift = r->predefined ? 0 : (uintptr_t)r->lb;
    while (n > 0) {
        int chunk = n > INT_MAX ? INT_MAX : (int)n;
        PMPI_Reduce_local((const void *)((uintptr_t)in - shift), (void *)((uintptr_t)inout - shift),
                          chunk, r->elem_type, r->op);
        in = (const char *)in + (size_t)chunk * r->elem;
        inout = (char *)inout + (size_t)chunk * r->elem;
        n -= (size_t)chunk;
    }
}

void tc_redop_apply3(const tc_redop_t *r, const void *left, const void *right, void *out, size_t n)
{
    if (out == right) {
        tc_redop_apply(r, left, out, n);
        return;
    }
    if (r->fast3) {
        r->fast3(left, right, out, n);
        return;
    }
    memcpy(out, right, n * r->elem);
    tc_redop_apply(r, left, out, n);
}

/* ---- packing -------------------------------------------------------------- */

/* PMPI_Pack (unpack = 0) or PMPI_Unpack of the whole message, in chunks of
 * whole dt elements that fit int positions. */
static void tc_redop_mpi_move(const tc_redop_t *r, void *buf, void *packed, int unpack)
{
    MPI_Datatype t = r->dt;
    uintptr_t base = (uintptr_t)buf;
    if (buf == MPI_BOTTOM && r->has_rebased) {
        t = r->rebased;
        base = (uintptr_t)&tc_redop_anchor;
    }
    const size_t per = r->nbytes / (size_t)r->count; /* bytes of one dt element */
    char *p = packed;
    for (int done = 0; done < r->count;) {
        int c = r->count - done < r->pack_chunk ? r->count - done : r->pack_chunk;
        int pos = 0;
        void *at = (void *)(base + (uintptr_t)((MPI_Aint)done * r->dt_extent));
        if (unpack)
            PMPI_Unpack(p, (int)((size_t)c * per), &pos, at, c, t, MPI_COMM_SELF);
        else
            PMPI_Pack(at, c, t, p, (int)((size_t)c * per), &pos, MPI_COMM_SELF);
        p += (size_t)c * per;
        done += c;
    }
}

void tc_redop_pack(const tc_redop_t *r, const void *buf, void *packed)
{
    if (r->nbytes == 0)
        return;
    switch (r->pack_kind) {
    case TC_REDOP_PACK_COPY:
        memcpy(packed, tc_redop_stream(r, buf), r->nbytes);
        break;
    case TC_REDOP_PACK_MAP: {
        tc_dt_cursor_t c;
        tc_dt_cursor_init(&c, &r->map, (void *)buf);
        tc_dt_cursor_gather(&c, packed, r->nbytes);
        break;
    }
    case TC_REDOP_PACK_PAIR: {
        const char *s = buf;
        char *d = packed;
        for (size_t k = 0; k < r->nelem; k++, s += r->dt_extent, d += r->elem) {
            memcpy(d, s, r->pair_vsize);
            memcpy(d + r->pair_vsize, s + r->pair_ioff, sizeof(int));
        }
        break;
    }
    default:
        tc_redop_mpi_move(r, (void *)buf, packed, 0);
    }
}

void tc_redop_unpack(const tc_redop_t *r, const void *packed, void *buf)
{
    if (r->nbytes == 0)
        return;
    switch (r->pack_kind) {
    case TC_REDOP_PACK_COPY:
        memcpy(tc_redop_stream(r, buf), packed, r->nbytes);
        break;
    case TC_REDOP_PACK_MAP: {
        tc_dt_cursor_t c;
        tc_dt_cursor_init(&c, &r->map, buf);
        tc_dt_cursor_scatter(&c, packed, r->nbytes);
        break;
    }
    case TC_REDOP_PACK_PAIR: {
        const char *s = packed;
        char *d = buf;
        for (size_t k = 0; k < r->nelem; k++, d += r->dt_extent, s += r->elem) {
            memcpy(d, s, r->pair_vsize);
            memcpy(d + r->pair_ioff, s + r->pair_vsize, sizeof(int));
        }
        break;
    }
    default:
        tc_redop_mpi_move(r, buf, (void *)packed, 1);
    }
}
