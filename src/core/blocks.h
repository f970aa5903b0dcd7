/* Blocks of a user buffer as byte streams, for the entry points of the
 * gathering collectives (allgather.c, gather.c, scatter.c).
 *
 * A block set is n blocks of one datatype in one buffer: block j is
 * counts[j] (or count) elements at buf + displs[j] (or j * count) times the
 * type's extent, and is handled as the byte stream of its type signature:
 * contiguous bytes copied directly, a flattened type map walked with one
 * cursor per block, or (types the flattener does not know: subarray, darray,
 * very long maps) a staged copy made with MPI_Pack / read back with
 * MPI_Unpack. The choice is local, so processes may use different datatypes
 * of one signature.
 */
#ifndef TC_CORE_BLOCKS_H
#define TC_CORE_BLOCKS_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/datatype.h"
#include "base/err.h"

typedef enum { TC_BLOCKS_CONTIG, TC_BLOCKS_MAPPED, TC_BLOCKS_STAGED } tc_blocks_mode_t;

enum {
    TC_BLOCKS_READ = 1,  /* the blocks are read: a staged copy is packed at init */
    TC_BLOCKS_STAGE = 2, /* stage every non-contiguous type (not only the unknown ones), so
                            each block's bytes are in one piece (for the MPI's own) */
};

typedef struct tc_blocks {
    tc_blocks_mode_t mode;
    const char *buf;
    MPI_Datatype type;
    int n, count;
    const int *counts, *displs; /* NULL: every block count elements, at j * count */
    size_t tsize;               /* the type's size */
    MPI_Aint extent, lb;        /* lb: where a contiguous type's bytes start */
    tc_dt_map_t map;            /* MAPPED */
    tc_dt_cursor_t *cursors;    /* MAPPED: one per block (n > 1), else &one */
    tc_dt_cursor_t one;
    char *staged;   /* STAGED: the blocks' streams back to back */
    size_t *prefix; /* STAGED: where block j starts in staged (n + 1 entries) */
    size_t prefix_one[2];
} tc_blocks_t;

/* An empty set (nothing to free): for a side a process does not have. */
static inline void tc_blocks_none(tc_blocks_t *b)
{
    b->mode = TC_BLOCKS_CONTIG;
    b->cursors = &b->one;
    b->staged = NULL;
    b->prefix = NULL;
}

/* Describe the blocks (see above) with @p flags (TC_BLOCKS_*). Returns
 * TC_OK, TC_ERR_NOMEM, TC_ERR_COUNT (a block over MPI_Pack's int sizes), or
 * the MPI's code of a failed pack (base/err.h); the set must be freed with
 * tc_blocks_free() either way. */
tc_err_t tc_blocks_init(tc_blocks_t *b, const void *buf, int n, int count, const int *counts,
                        const int *displs, MPI_Datatype type, int flags, MPI_Comm comm);
void tc_blocks_free(tc_blocks_t *b);

/* A CONTIG set whose blocks lie too far apart for the MPI's int displacements:
 * stage it like an unknown type (blocks back to back in b->staged, at
 * b->prefix[j]; copied in when @p read), so it can be handed to the MPI as one
 * run of bytes and unpacked by tc_blocks_finish. The caller has checked that the
 * blocks' total fits. Returns TC_OK or TC_ERR_NOMEM (the set stays CONTIG). */
tc_err_t tc_blocks_stage_contig(tc_blocks_t *b, bool read);

static inline int tc_blocks_count(const tc_blocks_t *b, int j)
{
    return b->counts ? b->counts[j] : b->count;
}
static inline size_t tc_blocks_bytes(const tc_blocks_t *b, int j)
{
    return (size_t)tc_blocks_count(b, j) * b->tsize;
}
/* Where block j of a buffer starts: @p buf plus displs[j] (NULL: j * count)
 * times @p extent bytes; also the direct paths' address of a block of a
 * contiguous predefined type (allgather.c, alltoall.c, rooted.c). Integer
 * arithmetic: with MPI_BOTTOM the displacement is an absolute address. */
static inline char *tc_blocks_at(const void *buf, const int *displs, MPI_Aint count, int j,
                                 MPI_Aint extent)
{
    const MPI_Aint d = displs ? (MPI_Aint)displs[j] : (MPI_Aint)j * count;
    return (char *)((uintptr_t)buf + (uintptr_t)(d * extent));
}
/* The direct paths' blocks (contiguous predefined types: allgather.c,
 * rooted.c): this process's one block @p one and the blocks of @p all, block
 * j at tc_blocks_at(all, displs, count, j, esize). The callbacks below have
 * the segment's io signature (shm/allgather.h): the one block is the only
 * one a process reads or writes on its side (j ignored); the others are
 * the blocks of all. */
typedef struct tc_blocks_direct {
    const char *one;
    const void *all;
    const int *displs; /* NULL: block j at j * count elements */
    MPI_Aint count, esize;
} tc_blocks_direct_t;

static inline char *tc_blocks_direct_at(const tc_blocks_direct_t *d, int j)
{
    return tc_blocks_at(d->all, d->displs, d->count, j, d->esize);
}
void tc_blocks_direct_read_one(void *state, int j, size_t off, char *dst, size_t n);
void tc_blocks_direct_write_one(void *state, int j, size_t off, const char *src, size_t n);
void tc_blocks_direct_read_all(void *state, int j, size_t off, char *dst, size_t n);
void tc_blocks_direct_write_all(void *state, int j, size_t off, const char *src, size_t n);

/* Where block j of a block set starts (its first element's origin). */
static inline char *tc_blocks_origin(const tc_blocks_t *b, int j)
{
    return tc_blocks_at(b->buf, b->displs, b->count, j, b->extent);
}
/* CONTIG or STAGED: block j's bytes in one piece. */
static inline const char *tc_blocks_data(const tc_blocks_t *b, int j)
{
    return b->mode == TC_BLOCKS_STAGED ? b->staged + b->prefix[j] : tc_blocks_origin(b, j) + b->lb;
}

/* Bytes [off, off + len) of block j's stream -> dst / src -> them. Within one
 * block the calls come with increasing off, a call with off 0 starting over. */
void tc_blocks_read(tc_blocks_t *b, int j, size_t off, char *dst, size_t len);
void tc_blocks_write(tc_blocks_t *b, int j, size_t off, const char *src, size_t len);
/* STAGED: unpack every written block but @p skip (-1: none) into the buffer. */
tc_err_t tc_blocks_finish(tc_blocks_t *b, int skip, MPI_Comm comm);

/* Block @p sj of @p src into block @p dj of @p dst (a process's own block:
 * the same signature's bytes on both sides). */
void tc_blocks_copy(tc_blocks_t *dst, int dj, tc_blocks_t *src, int sj, size_t nbytes);

/* The first byte of @p count elements of @p type at @p buf, when they span
 * at least @p need bytes of the user's memory, else NULL. A process that
 * could not prepare its blocks for the MPI's own (a failed allocation) still
 * enters the collective with @p need bytes from there (the others are in it
 * or will be), so nobody waits for it; its data are then wrong and it
 * reports the failure. A receive type's elements never overlap, so they
 * always span their size; a send type's may (then NULL). */
char *tc_blocks_span(const void *buf, size_t count, MPI_Datatype type, size_t need);

#endif /* TC_CORE_BLOCKS_H */
