/* Datatype kinds of the gathering collectives' tests (test_allgather.c,
 * test_alltoall.c; part of tc_test_harness, plain MPI): datatypes grouped by
 * signature family, so that processes may send and receive one block with
 * different types of one signature, and the images of blocks in them.
 *
 * Kinds, by signature family:
 *   bytes:  MPI_BYTE
 *   ints:   MPI_INT; int resized to 8 bytes (a strided receiver of a
 *           contiguous sender); vector(2 x 1 int, stride 3); contiguous(2
 *           ints); subarray (2 of 4 ints: the library's flattener does not
 *           know it, so it is staged through MPI_Pack)
 *   pairs:  struct {int; double} with padding (extent 16); the same packed
 *           (offsets 0 and 4, extent 12)
 * A test counts its blocks in units: 1 byte, 2 ints, or 1 (int, double)
 * pair (tt_family_unit_bytes), i.e. per_unit elements of any kind of the
 * family. Where each primitive lies in an element (off, ext) is written
 * here from the type constructors' definitions, not asked of MPI.
 *
 * Block images: primitive k of block b of case cid holds a pure function of
 * (cid, b, k) (tt_kind_prim_write), no byte of an int or a byte primitive
 * equal to TT_SENTINEL, so a test computes every expected buffer itself:
 * sentinels everywhere, tt_kind_block_write at each block's place.
 */
#ifndef TC_TEST_KINDS_H
#define TC_TEST_KINDS_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

enum { TT_FAM_BYTES, TT_FAM_INTS, TT_FAM_PAIRS, TT_FAM_LAST };
enum {
    TT_KIND_BYTE,
    TT_KIND_INT,
    TT_KIND_STRIDED,
    TT_KIND_VEC,
    TT_KIND_PAIR,
    TT_KIND_SUB,
    TT_KIND_SID,
    TT_KIND_SIDP,
    TT_KIND_LAST
};

typedef struct tt_kind {
    const char *name;
    int family;
    int per_unit; /* elements per unit */
    int nprim;    /* primitives per element */
    int off[2];   /* their byte offsets in the element */
    MPI_Aint ext; /* extent */
    MPI_Datatype type;
} tt_kind_t;

/* The kinds (type: MPI_DATATYPE_NULL until tt_kinds_create). */
extern tt_kind_t tt_kinds[TT_KIND_LAST];
/* The kinds of each family (tt_family_nkinds[f] of them, then -1). */
extern const int tt_family_kinds[TT_FAM_LAST][5];
extern const int tt_family_nkinds[TT_FAM_LAST];
/* Bytes of one unit of each family's signature: 1, 8 (2 ints), 12 (int, double). */
extern const int tt_family_unit_bytes[TT_FAM_LAST];

/* Create and commit / free the derived types of tt_kinds (no communication). */
void tt_kinds_create(void);
void tt_kinds_free(void);

/* A well-mixed 32-bit function of three numbers. */
uint32_t tt_kind_mix(uint64_t a, uint64_t b, uint64_t c);

/* Primitive @p k of block @p b of case @p cid written at @p p, of the
 * family's kind: a byte, an int, or int and double alternating. */
void tt_kind_prim_write(int family, uint64_t cid, uint64_t b, size_t k, char *p);

/* The image of @p count elements of kind @p kd of block @p b at @p base
 * (the block's primitives numbered from 0); holes are not written. */
void tt_kind_block_write(const tt_kind_t *kd, uint64_t cid, uint64_t b, int count, char *base);

/* Bytes spanned by @p count elements of @p kd (0 for none). */
size_t tt_kind_span(const tt_kind_t *kd, int count);

#endif /* TC_TEST_KINDS_H */
