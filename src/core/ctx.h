/* The library's context on a communicator (DESIGN.md "The context").
 *
 * Cached as an MPI attribute (keyval with MPI_COMM_NULL_COPY_FN, so a dup'd
 * communicator gets its own, and a delete callback, so MPI_Comm_free releases
 * it). Created collectively by the first TC_ call on the communicator. Every
 * choice that changes what a process does inside a collective is agreed by
 * all processes here (one small allreduce), never per rank at call time.
 */
#ifndef TC_CORE_CTX_H
#define TC_CORE_CTX_H

#include <mpi.h>

#include "../hier/hier.h"
#include "../shm/segment.h"
#include "race.h"
#include "select.h"
#include "stats.h"
#include "wait.h"

typedef struct tc_ctx {
    MPI_Comm comm; /* the user's communicator (not ours) */
    MPI_Comm priv; /* private duplicate for internal traffic; MPI_COMM_NULL for intercomms */
    MPI_Comm node; /* processes of priv on this node (MPI_COMM_TYPE_SHARED) */
    int rank, size;
    int node_rank, node_size;
    int oversubscribed; /* node_size > online CPUs: waits yield at once, and see select.h */
    int is_inter;
    int id;                     /* creation number in this process, for messages */
    tc_path_t bcast_path;       /* agreed: TC_PATH_SHM or the reason for PMPI */
    tc_hier_t *hier;            /* the hierarchy (size > 1, not an intercomm; NULL with TC_HIER=0
                                   across nodes or after a failure on some rank) */
    MPI_Comm shmcomm;           /* this rank's group at the shared-memory level (ranks in member
                                   order), or MPI_COMM_NULL; spans priv when hier->single_shm */
    tc_shm_comm_t *shm;         /* the segment over shmcomm, or NULL; serves hier's level with
                                   .shm set (all ranks when bcast_path == TC_PATH_SHM) */
    tc_shm_params_t shm_params; /* the agreed values */
    tc_logp_table_t logp;       /* rank 0's LogP/LogGP parameters (select.h) */
    tc_barrier_plan_t barrier;  /* TC_Barrier's algorithms, chosen at creation */
    tc_race_t race;             /* large messages: the library's path or the MPI's own (race.h);
                                   identical on every rank */
    char comm_name[MPI_MAX_OBJECT_NAME + 32];
    tc_wait_info_t wait_info;
    tc_wait_info_t shm_wait_info; /* the segment's: wait_info, its peers the group's members */
    struct tc_ctx *newer, *older; /* list of live contexts (for finalize) */
} tc_ctx_t;

/* The context of @p comm, created collectively if needed. Returns MPI_SUCCESS
 * or an MPI error class (nothing cached then). */
int tc_ctx_get(MPI_Comm comm, tc_ctx_t **out);

/* The context of @p comm if it exists already (no MPI call but the
 * attribute lookup, nothing created), else NULL. For argument checks on the
 * call path; @p comm must not be MPI_COMM_NULL. */
tc_ctx_t *tc_ctx_peek(MPI_Comm comm);

/* Release @p comm's context now (TC_Comm_detach). */
int tc_ctx_release(MPI_Comm comm);

/* Call the error handler of @p comm with @p errclass after logging @p what at
 * verbosity >= 1; returns errclass (as MPI functions do when the handler
 * returns). */
int tc_ctx_error(MPI_Comm comm, int errclass, const char *what);

#endif /* TC_CORE_CTX_H */
