/* The rooted gathering collectives' call, shared by gather.c and scatter.c:
 * every process's one block against the root's blocks (docs/allgather.md).
 *
 * A Gather(v) and a Scatter(v) are the same call in opposite directions:
 * each process has one block ("one": a Gather's send side, a Scatter's
 * receive side, MPI_IN_PLACE at the root), the root has every process's
 * block ("all": a Gather's receive side, a Scatter's send side, with a
 * count, or with counts and displacements for the v-variants; significant
 * at the root only). This file holds what does not depend on the direction:
 * the argument checks and the dispatch to a path (tc_rooted_run), the blocks
 * of both sides as byte streams and the io of the segment's and the
 * hierarchy's algorithms over them, and the MPI's own path's handling of a
 * process's own block. The entry files keep each operation's own logic:
 * its algorithms' calls, where its own block goes, its byte form for the
 * MPI's own (tc_rooted_ops_t).
 */
#ifndef TC_CORE_ROOTED_H
#define TC_CORE_ROOTED_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/stats.h"
#include "blocks.h"
#include "ctx.h"
#include "hier/level_gather.h"
#include "shm/allgather.h"

typedef struct tc_rooted {
    const char *fn;
    tc_op_t op;
    bool v;        /* Gatherv, Scatterv: all has counts and displacements */
    bool to_root;  /* Gather(v): the blocks travel to the root (else from it) */
    bool in_place; /* at the root: one.buf is MPI_IN_PLACE */
    struct {       /* this process's block: a Gather's send side, a Scatter's receive side */
        const void *buf;
        int count;
        MPI_Datatype type;
    } one;
    struct { /* the root's blocks (significant at the root only): a Gather's receive
                side, a Scatter's send side */
        const void *buf;
        int count;                  /* Gather, Scatter */
        const int *counts, *displs; /* Gatherv, Scatterv */
        MPI_Datatype type;
    } all;
    int root, rank, size;
    bool direct;      /* this process's sides are contiguous predefined types (or in place, or
                         not significant): the segment's path needs no block sets
                         (tc_rooted_shm_direct) */
    size_t all_esize; /* with direct, at the root: all.type's size */
    size_t mine;      /* this process's block */
    size_t *bytes;    /* v, at the root: every block */
    size_t total;     /* at the root (and without v everywhere) */
} tc_rooted_t;

/* The operation's own parts (the entry file's), called by tc_rooted_run. */
typedef struct tc_rooted_ops {
    /* Through the segment (ctx->bcast_path TC_PATH_SHM), the hierarchy's
     * groups (ctx->hier), the MPI's own as bytes (with its own fallbacks). */
    int (*shm)(tc_ctx_t *ctx, const tc_rooted_t *c);
    int (*hier)(tc_ctx_t *ctx, const tc_rooted_t *c);
    int (*pmpi)(const tc_rooted_t *c, MPI_Comm comm);
    /* An intercommunicator: the user's call, unchanged, to the MPI's own. */
    int (*as_is)(const tc_rooted_t *c, MPI_Comm comm);
} tc_rooted_ops_t;

/* A TC_ entry point's call @p c (fn, op, v, to_root, one, all, root filled
 * in): the checks (docs/allgather.md: as for Allgather(v), plus the root
 * (tc_err(TC_ERR_ROOT)), MPI_IN_PLACE only at the root
 * (tc_err(TC_ERR_BUFFER)), the root's side checked at the root only),
 * then the path agreed when the context was made: one process or empty
 * blocks (the own block locally), the segment (a Gather's or Scatter's
 * total known everywhere races the MPI's own, race.h; the v-variants' do
 * not), the hierarchy, else the MPI's own. Returns an MPI error class,
 * through the communicator's error handler on failure. */
int tc_rooted_run(tc_rooted_t *c, MPI_Comm comm, const tc_rooted_ops_t *ops);

/* ---- the blocks of both sides ------------------------------------------------------ */

typedef struct tc_rooted_io {
    tc_blocks_t all; /* the root: every block */
    tc_blocks_t one; /* our block (not in place) */
    bool root;       /* the hierarchy's io: the blocks are all's (else our one block) */
} tc_rooted_io_t;

/* The inline functions below are on every call's path (as in the entry
 * files before they shared them). */

/* Describe this process's sides (the sent side read, TC_BLOCKS_READ, with
 * @p flags besides); returns the sent side's failure, else the received
 * side's. Free with tc_rooted_io_free either way. */
static inline tc_err_t tc_rooted_io_init(tc_rooted_io_t *st, const tc_rooted_t *c, int flags,
                                         MPI_Comm comm)
{
    tc_blocks_none(&st->all);
    tc_blocks_none(&st->one);
    tc_err_t rc_one = MPI_SUCCESS, rc_all = MPI_SUCCESS;
    if (!c->in_place)
        rc_one = tc_blocks_init(&st->one, c->one.buf, 1, c->one.count, NULL, NULL, c->one.type,
                                (c->to_root ? TC_BLOCKS_READ : 0) | flags, comm);
    if (c->rank == c->root)
        rc_all = tc_blocks_init(&st->all, c->all.buf, c->size, c->all.count, c->all.counts,
                                c->all.displs, c->all.type,
                                (c->to_root ? 0 : TC_BLOCKS_READ) | flags, comm);
    if (c->to_root)
        return rc_one != MPI_SUCCESS ? rc_one : rc_all;
    return rc_all != MPI_SUCCESS ? rc_all : rc_one;
}

static inline void tc_rooted_io_free(tc_rooted_io_t *st)
{
    tc_blocks_free(&st->all);
    tc_blocks_free(&st->one);
}

/* The root, not in place: its own block from one side to the other (a
 * Gather's send block into its place, a Scatter's out of the send buffer).
 * The received side still has to be finished (tc_blocks_finish). */
static inline void tc_rooted_own(tc_rooted_io_t *st, const tc_rooted_t *c)
{
    if (c->rank != c->root || c->in_place || c->mine == 0)
        return;
    if (c->to_root)
        tc_blocks_copy(&st->all, c->rank, &st->one, 0, c->mine);
    else
        tc_blocks_copy(&st->one, 0, &st->all, c->rank, c->mine);
}

/* The algorithms' io over a tc_rooted_io_t (the state): the sent side read,
 * the received side written; block y in one piece, or NULL. */
void tc_rooted_read_one(void *state, int j, size_t off, char *dst, size_t n);
void tc_rooted_read_all(void *state, int j, size_t off, char *dst, size_t n);
void tc_rooted_write_one(void *state, int j, size_t off, const char *src, size_t n);
void tc_rooted_write_all(void *state, int j, size_t off, const char *src, size_t n);
char *tc_rooted_addr(void *state, int y);

/* The io of tc_shm_allgather / tc_shm_scatter and tc_hier_gather /
 * tc_hier_scatter over @p st; a process whose blocks could not be described
 * (@p rc not TC_OK) takes part all the same (the others are in the
 * collective already), with zeros out and nothing in. */
static inline tc_shm_ag_io_t tc_rooted_shm_io(tc_rooted_io_t *st, const tc_rooted_t *c, tc_err_t rc)
{
    if (rc != MPI_SUCCESS)
        return (tc_shm_ag_io_t){tc_shm_ag_put_zeros, tc_shm_ag_get_nothing, NULL};
    if (c->to_root)
        return (tc_shm_ag_io_t){tc_rooted_read_one, tc_rooted_write_all, st};
    return (tc_shm_ag_io_t){tc_rooted_read_all, tc_rooted_write_one, st};
}
static inline tc_hier_ga_io_t tc_rooted_hier_io(tc_rooted_io_t *st, const tc_rooted_t *c,
                                                tc_err_t rc)
{
    st->root = c->rank == c->root;
    if (rc != MPI_SUCCESS)
        return (tc_hier_ga_io_t){tc_hier_ga_read_zeros, tc_hier_ga_write_nothing,
                                 tc_hier_ga_addr_none, NULL};
    if (c->to_root)
        return (tc_hier_ga_io_t){tc_rooted_read_one, tc_rooted_write_all, tc_rooted_addr, st};
    return (tc_hier_ga_io_t){tc_rooted_read_all, tc_rooted_write_one, tc_rooted_addr, st};
}

/* Through the segment with c->direct set (the common case: contiguous
 * predefined types, as core/alltoall.c's direct path): the blocks straight
 * from and into the user's buffers, the root's own block moved with one
 * memmove, without block sets. A Gather (to_root) or a Scatter; the same
 * protocol and bank uses as the entry files' path through block sets. */
int tc_rooted_shm_direct(tc_ctx_t *ctx, const tc_rooted_t *c);

/* A v-variant's largest block, which only the root knows: it tells every
 * process (a broadcast of 8 bytes through the segment). */
uint64_t tc_rooted_largest(tc_ctx_t *ctx, const tc_rooted_t *c);

/* The segment's sizes: a v-variant's largest block first, since every
 * process must make the same number of bank uses. */
static inline tc_shm_ag_sizes_t tc_rooted_shm_sizes(tc_ctx_t *ctx, const tc_rooted_t *c)
{
    tc_shm_ag_sizes_t sz = {NULL, c->mine, c->mine};
    if (c->v) {
        sz.max = (size_t)tc_rooted_largest(ctx, c);
        if (c->rank == c->root)
            sz.bytes = c->bytes;
    }
    return sz;
}
/* The hierarchy's sizes (the v-variants' carried with the blocks). */
static inline tc_hier_ga_sizes_t tc_rooted_hier_sizes(const tc_rooted_t *c)
{
    return (tc_hier_ga_sizes_t){c->v && c->rank == c->root ? c->bytes : NULL, c->mine, c->v};
}

/* ---- the MPI's own, as bytes --------------------------------------------------------- */

/* The lowest and highest start of the root's non-empty blocks in @p b
 * (*lo UINTPTR_MAX, *hi 0 when every block is empty). */
void tc_rooted_spread(const tc_blocks_t *b, const tc_rooted_t *c, uintptr_t *lo, uintptr_t *hi);

/* This process's block as bytes for the MPI's own, once the root's side is
 * prepared (@p rc_root: how that went, at the root): *one the block's bytes
 * (MPI_IN_PLACE in place; a staged copy, TC_BLOCKS_STAGE, unless its type is
 * contiguous), and at a root that could not prepare its side (a Gather's or
 * Scatter's; a v-variant's root took the user's form then) *all_base the
 * user's buffer as bytes. A side that could not be prepared still takes part
 * straight from (into) the user's buffer (tc_blocks_span), its failure in
 * *rc_one (ours) or @p rc_root kept for afterwards: nobody is left waiting
 * for it. Returns TC_OK, or the failure when not even that is possible (a
 * send type whose elements overlap): then the call is not made. */
tc_err_t tc_rooted_bytes(tc_rooted_io_t *st, const tc_rooted_t *c, tc_err_t rc_root, void **one,
                         const char **all_base, tc_err_t *rc_one, MPI_Comm comm);

#endif /* TC_CORE_ROOTED_H */
