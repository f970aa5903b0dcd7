/* Reduction test cases shared by the MPI tests of the reduce-scatter and
 * scan family (test_reduce_scatter.c, test_scan.c): element kinds, their
 * operands and reference operations, the (datatype, op) specs the tests run,
 * buffer images and the expected results folded locally in rank order, and
 * the error-handler bookkeeping of the argument-error parts.
 *
 * Data: small integers (|v| <= 8, products of +-1 and 2), so sums and
 * products are exact in float and double in any order; bitwise ops get full
 * 32-bit words; a user-defined, non-commutative 2x2 matrix product on
 * unsigned entries (wrapping arithmetic is associative, so the rank-ordered
 * product is one value whatever the grouping, and any operand swap changes
 * it). Every primitive depends on (rank, position, case), so a block taken
 * from the wrong place or a missing operand shows. Holes of derived types
 * hold TT_SENTINEL, which must survive. */
#ifndef TC_TEST_REDSPEC_H
#define TC_TEST_REDSPEC_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

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

typedef struct {
    const char *name;
    kind_t k;
    opk_t o;
    int derived; /* 0: the basic type; 1: vector(2 blocks of 1, stride 2) resized to 3 prims */
    MPI_Datatype dt;
    MPI_Op op;
    size_t extent; /* bytes per element of dt */
    int nprim;     /* packed primitives per element of dt */
} rt_spec_t;

extern rt_spec_t rt_specs[32];
extern int rt_nspecs;

/* Bytes of one primitive of kind @p k. */
size_t rt_kind_size(kind_t k);
/* A hash of three words (seeds the random counts of the tests). */
uint32_t rt_mix(uint32_t a, uint32_t b, uint32_t c);
/* The specs (fewer with @p quick), their datatypes and the user op. */
void rt_specs_create(int quick);
void rt_specs_free(void);
/* The spec of that name, or NULL. */
const rt_spec_t *rt_spec_find(const char *name);
/* Byte offset of primitive j (0 .. nprim-1) of element e of @p s. */
size_t rt_prim_off(const rt_spec_t *s, size_t e, int j);
/* A buffer of @p n elements of @p s: sentinel, then primitive q = e * nprim
 * + j = the operand of process @p rank at q0 + q. @p rank < 0: sentinel
 * only. */
void rt_fill(const rt_spec_t *s, char *buf, size_t n, int rank, size_t q0, uint32_t salt);
/* The expected image of @p n elements from element @p e0 of the message:
 * each primitive the fold, in that order (the first the leftmost operand),
 * of the operands of processes wr[0], ..., wr[p-1]. */
void rt_expect(const rt_spec_t *s, char *buf, size_t n, size_t e0, int p, const int *wr,
               uint32_t salt);
/* The first wrong byte of @p got against @p want (n elements; holes
 * included, MPI_DOUBLE_INT's padding excluded), or -1. */
long rt_compare(const rt_spec_t *s, const char *got, const char *want, size_t n);
/* The world ranks of @p c's ranks (collective over @p c). */
void rt_comm_ranks(MPI_Comm c, int *wr);
/* Is @p word an item of the comma-separated @p list? */
int rt_in_list(const char *list, const char *word);

/* An error handler that counts its calls and keeps the last error class;
 * rt_expect_error checks a bad call: class @p want returned and seen once by
 * the handler, send[i] == 1000 + i and recv[i] == -7 untouched. */
extern int rt_handler_calls, rt_handler_class;
void rt_record_handler(MPI_Comm *comm, int *code, ...);
void rt_expect_error(const char *what, int rc, int want, const int *send, const int *recv, int n);

#endif /* TC_TEST_REDSPEC_H */
