/* Reduction operands: (count, datatype, op) of an MPI reduction turned into a
 * stream of packed elements that the library's algorithms cut into fragments,
 * move around, and combine.
 *
 * The packed stream of a message is its type signature's bytes (as MPI_Pack's
 * "native" representation), cut into elements of tc_redop_t.elem bytes:
 *  - predefined op on a predefined type, or on a derived type built from one
 *    predefined type: the element is that basic type (so ranks may pass
 *    different (count, datatype) layouts of the same signature: every rank
 *    sees the same elements);
 *  - MPI_MINLOC / MPI_MAXLOC on a pair type (MPI_DOUBLE_INT, ...): the element
 *    is the packed pair (value then int, no padding);
 *  - user-defined op: the element is the user's datatype itself, which must
 *    be contiguous (size == extent, no holes); its function is called on
 *    whole elements with that datatype. Every rank must then pass the same
 *    datatype size (as the function expects one element type).
 * Anything else (a user op on a non-contiguous type, a predefined op on a type
 * mixing basic types or on a type MPI does not define it for, MPI_REPLACE/
 * MPI_NO_OP) is not supported: the caller hands the operation to PMPI_*.
 *
 * elem and nelem depend on the type signature only, but whether a call is
 * supported can depend on the local layout (a user op on a contiguous type on
 * one rank and the same signature with holes on another; a datatype element
 * over INT_MAX bytes that only PMPI_Pack could move): callers must agree on
 * the outcome across ranks before taking the library's path.
 *
 * Combining follows MPI_Reduce_local: inout = in op inout, `in` being the
 * LEFT operand (the lower rank's partial result). Algorithms that always pass
 * the lower-ranked partial as `in` compute a rank-ordered result (required for
 * non-commutative ops) and, evaluating the same expression everywhere,
 * bitwise-identical results on every rank.
 */
#ifndef TC_CORE_REDOP_H
#define TC_CORE_REDOP_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "datatype.h"
#include "err.h"

/* How much the bits of a result depend on the order the operands are
 * combined in (tc_redop_t.order): the race against the MPI's own (race.h)
 * may only hand over calls whose result it cannot change. */
enum {
    TC_REDOP_ORDER_FIXED, /* grouping and operand order matter (floating-point sums over
                             three or more processes, MIN/MAX of floats: signed zeros and
                             NaNs, user operations) */
    TC_REDOP_ORDER_SWAP2, /* a op b == b op a bit for bit, grouping matters: so two
                             processes give the same bits in any algorithm (sums and
                             products of float and double, sums of their complex types) */
    TC_REDOP_ORDER_FREE   /* neither matters (integer, logical and bitwise operations,
                             MINLOC/MAXLOC on pairs with an integer value) */
};

/* inout[i] = in[i] op inout[i] */
typedef void (*tc_redop_fn_t)(const void *in, void *inout, size_t n);
/* out[i] = left[i] op right[i]; out does not overlap left or right */
typedef void (*tc_redop_fn3_t)(const void *left, const void *right, void *out, size_t n);

typedef struct tc_redop {
    MPI_Op op;
    /* What PMPI_Reduce_local gets for one element: the basic type, the
     * user's datatype for a user op, the named pair type for MINLOC/MAXLOC
     * (whose packed elements have no padding, so they are combined by
     * tc_redop_apply only, never by PMPI_Reduce_local). */
    MPI_Datatype elem_type;
    size_t elem;     /* bytes of one packed element (> 0) */
    size_t nelem;    /* packed elements in the message */
    size_t nbytes;   /* elem * nelem */
    int commutative; /* from MPI_Op_commutative */
    int predefined;  /* a predefined op (MPI_SUM, ...) */
    int order;       /* TC_REDOP_ORDER_* */
    /* The user's buffers: contiguous means the packed stream is the bytes at
     * buf + lb; otherwise tc_redop_pack / _unpack move it. */
    int contiguous;
    MPI_Aint lb;
    MPI_Datatype dt; /* the user's datatype and count, for pack/unpack */
    int count;
    tc_dt_map_t map; /* flattened type map, when the stream is packed through it */
    /* A loop for (predefined op, common C type) or for MINLOC/MAXLOC on
     * packed pairs; NULL: PMPI_Reduce_local on elem_type. Use
     * tc_redop_apply rather than calling it. */
    tc_redop_fn_t fast;
    int pair; /* non-zero: MINLOC/MAXLOC on packed pairs (internal) */
    /* Private to redop.c. */
    tc_redop_fn3_t fast3; /* 3-operand loop of `fast` (NULL when fast is) */
    int pack_kind;        /* how tc_redop_pack moves the stream (redop.c) */
    size_t pair_vsize;    /* pair types: value bytes, */
    size_t pair_ioff;     /* offset of the int in the native struct, */
    MPI_Aint dt_extent;   /* extent of dt (pair, PMPI_Pack strides) */
    int pack_chunk;       /* PMPI_Pack: elements of dt per call (int positions) */
    int has_rebased;      /* PMPI_Pack of MPI_BOTTOM: dt displaced by -&anchor */
    MPI_Datatype rebased;
} tc_redop_t;

/**
 * Classify a reduction.
 *
 * @param r      filled on success; release with tc_redop_free()
 * @param count  elements of @p dt (>= 0)
 * @param dt     the caller's datatype (committed)
 * @param op     the operation
 * @return TC_OK when the library can reduce this itself; TC_ERR_NOTSUP when
 *         it cannot (the caller uses PMPI_*; @p r is then empty but safe to
 *         free).
 * Local, no communication. Thread-safe.
 */
tc_err_t tc_redop_init(tc_redop_t *r, int count, MPI_Datatype dt, MPI_Op op);
void tc_redop_free(tc_redop_t *r);

/** The element size when tc_redop_init() would take its common case (a
 * predefined op other than MINLOC/MAXLOC on a named basic type with a
 * loop: the stream is then the count * size bytes at buf), else -1. No MPI
 * call after the first; thread-safe. For calls that only copy (one process,
 * count 0). */
int tc_redop_basic_elem(MPI_Datatype dt, MPI_Op op);

/* The loops of tc_redop_init()'s common case, for callers that combine
 * contiguous buffers of a named basic type without building a tc_redop_t
 * (core/scan.c's direct path). */
typedef struct tc_redop_loops {
    tc_redop_fn_t f2;  /* inout = in op inout (tc_redop_t.fast) */
    tc_redop_fn3_t f3; /* out = left op right, out overlapping neither */
    size_t elem;       /* bytes of one element: the type's size */
} tc_redop_loops_t;

/** The common case's loops (those tc_redop_init() would put in fast and
 * fast3) in @p l: returns 0, or -1 (not the common case: use
 * tc_redop_init()). No MPI call after the first; thread-safe. */
int tc_redop_basic_loops(MPI_Datatype dt, MPI_Op op, tc_redop_loops_t *l);

/* A one-pair memory of tc_redop_basic_loops() for a caller that repeats its
 * pair (a context's Scans): it keeps only pairs that function took,
 * whose handles are predefined and so never change meaning (a freed user
 * datatype's handle value may come back as another type: never kept).
 * Zero-initialised: empty. Not shared between threads. */
typedef struct tc_redop_last {
    MPI_Datatype dt;
    MPI_Op op;
    tc_redop_loops_t loops; /* loops.f2 NULL: empty */
} tc_redop_last_t;

/** tc_redop_basic_loops() through @p c: the loops, or NULL (not the common
 * case). */
static inline const tc_redop_loops_t *tc_redop_basic_loops_last(tc_redop_last_t *c, MPI_Datatype dt,
                                                                MPI_Op op)
{
    if (c->dt == dt && c->op == op && c->loops.f2)
        return &c->loops;
    tc_redop_loops_t l;
    if (tc_redop_basic_loops(dt, op, &l) != 0)
        return NULL;
    c->dt = dt;
    c->op = op;
    c->loops = l;
    return &c->loops;
}

/** inout[i] = in[i] op inout[i] for @p n packed elements. in and inout must
 * not overlap. */
void tc_redop_apply(const tc_redop_t *r, const void *in, void *inout, size_t n);

/** out[i] = left[i] op right[i] for @p n packed elements, in one pass where
 * possible. @p out may be @p right; otherwise it must not overlap either
 * input. */
void tc_redop_apply3(const tc_redop_t *r, const void *left, const void *right, void *out, size_t n);

/** The packed stream of the message at @p buf (count elements of the
 * caller's datatype) into @p packed (r->nbytes bytes). */
void tc_redop_pack(const tc_redop_t *r, const void *buf, void *packed);
/** @p packed (r->nbytes bytes) into the message at @p buf; bytes of @p buf
 * outside the type map are not touched. */
void tc_redop_unpack(const tc_redop_t *r, const void *packed, void *buf);

/** The packed stream of @p buf when it can be used in place (contiguous), or
 * NULL. */
static inline void *tc_redop_stream(const tc_redop_t *r, const void *buf)
{
    /* Integer arithmetic: with MPI_BOTTOM, lb is an absolute address. */
    return r->contiguous ? (void *)((uintptr_t)buf + (uintptr_t)r->lb) : NULL;
}

#endif /* TC_CORE_REDOP_H */
