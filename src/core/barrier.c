/* TC_Barrier: the plan chosen when the context was made (select.h).
 *
 * One shared-memory group (a single node): the segment's barrier.
 * The hierarchy (several nodes, or posed levels): bottom-up arrival, one
 * message-based barrier among the top group's members, top-down release:
 *   shared-memory level   tc_shm_barrier_arrive: the segment's leader returns
 *                         once every process of the segment has arrived;
 *   other levels below    members send a zero-byte arrival to the group's
 *   the top               leader, which waits for all of them;
 *   top group             tc_msg_barrier with the chosen algorithm;
 *   then back down        each leader releases its groups (zero-byte
 *                         messages; tc_shm_barrier_release in the segment).
 * A process leaves only after its leader at every level above has seen
 * every process below it arrive, and the top barrier has seen all leaders:
 * so after every process of the communicator has arrived.
 * Anything else (no segment, TC_SHM=0, several nodes with TC_HIER=0,
 * intercommunicators): PMPI_Barrier.
 */
#include <stdbool.h>
#include <stdlib.h>

#include "barrier/msg_barrier.h"
#include "barrier/shm_barrier.h"
#include "base/log.h"
#include "base/tags.h"
#include "ctx.h"
#include "topocoll.h"

/* Zero-byte messages still get a real address (some MPIs look at it). */
static char tc_barrier_dummy;

/* Leader of a message level: wait for every member's arrival. */
static int tc_barrier_gather(MPI_Comm priv, const tc_hier_level_t *l, const tc_wait_info_t *wait)
{
    int rc = MPI_SUCCESS;
    for (int m = 1; m < l->size && rc == MPI_SUCCESS; m++)
        rc = tc_wait_mpi_recv(&tc_barrier_dummy, 0, l->members[m], TC_TAG_BARRIER_ARRIVE, priv,
                              wait, "barrier: a member's arrival");
    return rc;
}

static int tc_barrier_release_members(MPI_Comm priv, const tc_hier_level_t *l,
                                      const tc_wait_info_t *wait)
{
    int rc = MPI_SUCCESS;
    for (int m = 1; m < l->size && rc == MPI_SUCCESS; m++)
        rc = tc_wait_mpi_send(&tc_barrier_dummy, 0, l->members[m], TC_TAG_BARRIER_RELEASE, priv,
                              wait, "barrier: release a member");
    return rc;
}

static int tc_barrier_hier(tc_ctx_t *ctx)
{
    const tc_hier_t *h = ctx->hier;
    const int top = tc_hier_top_level(h);
    const tc_barrier_plan_t *plan = &ctx->barrier;
    int rc = MPI_SUCCESS, i;
    /* Up: i ends at the level where this process waits for its release
     * (it is not that group's leader), or past the last level. */
    for (i = 0; i < h->nlevels; i++) {
        const tc_hier_level_t *l = &h->level[i];
        if ((int)l->level == top && !l->shm) {
            rc = tc_msg_barrier(plan->msg_alg, ctx->priv, l->members, l->size, l->my_index,
                                plan->msg_arity, TC_TAG_BARRIER_TOP, &ctx->msg_wait_info);
            break; /* everyone has arrived: release from here */
        }
        if (l->shm) {
            tc_shm_barrier_arrive(ctx->shm, plan->shm_alg, plan->shm_arity);
        } else if (l->my_index == 0) {
            rc = tc_barrier_gather(ctx->priv, l, &ctx->msg_wait_info);
        } else {
            rc = tc_wait_mpi_send(&tc_barrier_dummy, 0, l->members[0], TC_TAG_BARRIER_ARRIVE,
                                  ctx->priv, &ctx->msg_wait_info, "barrier: arrive at the leader");
        }
        if (rc != MPI_SUCCESS || l->my_index != 0)
            break;
    }
    if (i == h->nlevels)
        i--; /* leader of every group it is in: the last one has seen everyone */
    /* Down: wait for the release where this process is a member, then
     * release the groups it leads. */
    for (; i >= 0; i--) {
        const tc_hier_level_t *l = &h->level[i];
        if ((int)l->level == top && !l->shm)
            continue; /* the barrier itself released its members */
        if (l->shm) {
            tc_shm_barrier_release(ctx->shm, plan->shm_alg, plan->shm_arity);
        } else if (l->my_index != 0) {
            int r2 = tc_wait_mpi_recv(&tc_barrier_dummy, 0, l->members[0], TC_TAG_BARRIER_RELEASE,
                                      ctx->priv, &ctx->msg_wait_info,
                                      "barrier: wait for the leader's release");
            rc = rc == MPI_SUCCESS ? r2 : rc;
        } else {
            int r2 = tc_barrier_release_members(ctx->priv, l, &ctx->msg_wait_info);
            rc = rc == MPI_SUCCESS ? r2 : rc;
        }
    }
    return rc;
}

int TC_Barrier(MPI_Comm comm)
{
    int rc, inter = 0;
    if (comm == MPI_COMM_NULL)
        return tc_ctx_error(MPI_COMM_WORLD, tc_err(TC_ERR_COMM), "TC_Barrier: MPI_COMM_NULL");
    tc_ctx_t *ctx = tc_ctx_lookup(comm);
    if (!ctx)
        ctx = tc_ctx_peek(comm);
    if (ctx)
        inter = ctx->is_inter;
    else if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
        return tc_ctx_error(MPI_COMM_WORLD, tc_err(TC_ERR_COMM),
                            "TC_Barrier: invalid communicator");
    if (inter) {
        tc_stats_count(TC_OP_BARRIER, TC_PATH_PMPI_INTERCOMM);
        return PMPI_Barrier(comm);
    }
    if (!ctx && (rc = tc_ctx_get(comm, &ctx)) != MPI_SUCCESS)
        return tc_ctx_error(comm, rc, "TC_Barrier: could not create the context");
    if (tc_log_level >= TC_LOG_TRACE)
        tc_log(TC_LOG_TRACE, "TC_Barrier on %s", ctx->comm_name);
    switch (ctx->bcast_path) {
    case TC_PATH_TRIVIAL:
        rc = MPI_SUCCESS;
        break;
    case TC_PATH_SHM:
        tc_shm_barrier(ctx->shm, ctx->barrier.shm_alg, ctx->barrier.shm_arity);
        rc = MPI_SUCCESS;
        break;
    default:
        rc = PMPI_Barrier(ctx->comm);
        break;
    case TC_PATH_HIER:
        rc = tc_barrier_hier(ctx);
        break;
    }
    tc_stats_count(TC_OP_BARRIER, ctx->bcast_path);
    return rc == MPI_SUCCESS ? rc : tc_ctx_error(comm, rc, "TC_Barrier failed");
}
