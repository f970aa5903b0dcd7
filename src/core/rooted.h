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
    size_t mine;   /* this process's block */
    size_t *bytes; /* v, at the root: every block */
    size_t total;  /* at the root (and without v everywhere) */
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

/* Describe this process's sides (the sent side read, TC_BLOCKS_READ, with
 * @p flags besides); returns the sent side's failure, else the received
 * side's. Free with tc_rooted_io_free either way. */
tc_err_t tc_rooted_io_init(tc_rooted_io_t *st, const tc_rooted_t *c, int flags, MPI_Comm comm);
void tc_rooted_io_free(tc_rooted_io_t *st);

/* The root, not in place: its own block from one side to the other (a
 * Gather's send block into its place, a Scatter's out of the send buffer).
 * The received side still has to be finished (tc_blocks_finish). */
void tc_rooted_own(tc_rooted_io_t *st, const tc_rooted_t *c);

/* The io of tc_shm_allgather / tc_shm_scatter and tc_hier_gather /
 * tc_hier_scatter over @p st; a process whose blocks could not be described
 * (@p rc not TC_OK) takes part all the same (the others are in the
 * collective already), with zeros out and nothing in. */
tc_shm_ag_io_t tc_rooted_shm_io(tc_rooted_io_t *st, const tc_rooted_t *c, tc_err_t rc);
tc_hier_ga_io_t tc_rooted_hier_io(tc_rooted_io_t *st, const tc_rooted_t *c, tc_err_t rc);

/* The segment's sizes: a v-variant's root tells every process the largest
 * block first (a broadcast of 8 bytes through the segment): every process
 * must make the same number of bank uses. */
tc_shm_ag_sizes_t tc_rooted_shm_sizes(tc_ctx_t *ctx, const tc_rooted_t *c);
/* The hierarchy's sizes (the v-variants' carried with the blocks). */
tc_hier_ga_sizes_t tc_rooted_hier_sizes(const tc_rooted_t *c);

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
