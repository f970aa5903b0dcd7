/* The query interface: what the library knows and chose on a communicator,
 * as functions returning plain structs, for the tools (topocoll-info,
 * topocoll-logp). No tool includes core/ctx.h or reads tc_ctx_t,
 * tc_shm_comm_t or tc_hier_t: query.c is the one file that reads them on the
 * tools' behalf, so a change inside the context, the segment or the hierarchy
 * is absorbed there (tests/layering/check-includes.py forbids the tools those
 * headers).
 *
 * Why an internal header (src/core/query.h) rather than an installed
 * include/topocoll_info.h: the tools are built in this tree and link the
 * library's static objects (topocoll_internal); what they print (plans,
 * predicted costs, decision tables, segment layout) is meant to change with
 * the library, and an installed header would make these structs an ABI
 * promise to applications. Should an application need introspection later,
 * a public header can wrap this one.
 *
 * Conventions:
 *  - every function that takes a communicator gets (and if needed creates,
 *    collectively: tc_ctx_get) the library's context on it, so the first
 *    query on a communicator is collective like the first TC_ call; the
 *    others are local;
 *  - functions return MPI_SUCCESS or an MPI error class (MPI_ERR_ARG for an
 *    index out of range); results are copied into the caller's struct,
 *    except pointers documented as borrowed, which stay valid until the
 *    communicator's context is released (MPI_Comm_free, TC_Comm_detach);
 *  - strings returned as `const char *` are static (names, descriptions);
 *  - levels are hier/locality.h's tc_level_t, plus TC_HIER_LEVEL_TOP
 *    (hier/groups.h) for the group of the top level; masks have bit
 *    (1u << level) set. Level names: tc_hier_level_name();
 *  - LogP/LogGP parameters are model/logp.h's tc_logp_t (a plain struct of
 *    the model, not of the context).
 * Thread-safety: as tc_ctx_get (any thread; creation collective).
 */
#ifndef TC_CORE_QUERY_H
#define TC_CORE_QUERY_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "base/config.h"
#include "hier/groups.h"
#include "hier/locality.h"
#include "model/logp.h"

/* ---- tunables ----------------------------------------------------------- */

/** Room for a tunable's value as text (a path may be long). */
#define TC_QUERY_VALUE_MAX 4097

/** One tunable as the user would write it. */
typedef struct tc_query_tunable {
    const char *name;               /**< "TC_SHM_TREE" */
    char value[TC_QUERY_VALUE_MAX]; /**< the value in use, as a word, size or path ("kary", "64K",
                             "(unset)") */
    const char *source;             /**< "default", "env", "INVALID in env, default used" */
    const char *raw;                /**< the environment's text, or NULL when unset */
} tc_query_tunable_t;

/** Number of tunables (the configuration table's rows). */
int tc_query_tunable_count(void);

/** Tunable @p i (0 <= i < tc_query_tunable_count()) into @p out. Loads the
 * configuration if needed. @return MPI_SUCCESS or MPI_ERR_ARG. */
int tc_query_tunable(int i, tc_query_tunable_t *out);

/** The declaration of tunable @p i (name, type, default, accepted words, bounds, doc),
 * as its module's table states it; NULL when @p i is out of range. Needs no MPI
 * (topocoll-tunables prints the table from it). */
const tc_cfg_desc_t *tc_query_tunable_desc(int i);

/* ---- the context ------------------------------------------------------- */

/** The context on a communicator and the paths it agreed on. */
typedef struct tc_query_ctx {
    char comm_name[MPI_MAX_OBJECT_NAME + 32]; /**< "MPI_COMM_WORLD (size 3)" */
    int rank, size;
    int node_size;          /**< processes of the communicator on this node */
    int oversubscribed;     /**< this node runs more processes than it has CPUs */
    int bcast_shm;          /**< 1: TC_Bcast takes the shared-memory path, one segment
                                 over the whole communicator (its tree is the broadcast's) */
    const char *bcast_path; /**< the broadcast's path, in words ("hier", "PMPI_Bcast: ...") */
} tc_query_ctx_t;

/** @p comm's context. Collective the first time (context creation).
 * @return MPI_SUCCESS or the error class of the context's creation. */
int tc_query_ctx(MPI_Comm comm, tc_query_ctx_t *out);

/* ---- the shared-memory segment (paper 000) ----------------------------- */

/** The agreed shared-memory parameters and this rank's segment, if any. */
typedef struct tc_query_shm {
    /* Agreed by every process (whether or not a segment exists). */
    size_t f;         /**< fragment size, bytes */
    int S, q;         /**< buffers per queue, banks */
    const char *tree; /**< the notification tree's kind ("kary", ...) */
    int arity;
    /* This rank's segment. */
    int present;                          /**< 0: no segment (the rest is unset) */
    size_t total, header_size, ctrl_size; /**< bytes: whole, header, one control block */
    int p;                                /**< processes in the segment */
    int seg_S, seg_q;                     /**< the layout's S and q */
    size_t seg_f;                         /**< the layout's fragment size */
    int memfd;                            /**< 1: memfd; 0: a named (unlinked) file */
    char name[48];                        /**< "memfd:topocoll (pid P, fd F)" or the name */
    char mechanism[160];                  /**< why memfd or named */
    int numa_node;                        /**< this process's NUMA node, -1: unknown */
    long pages_local, pages_checked;      /**< move_pages check of its region;
                                               pages_checked -1: not checked */
} tc_query_shm_t;

/** The shared-memory parameters and segment of @p comm's context. */
int tc_query_shm(MPI_Comm comm, tc_query_shm_t *out);

/** This rank in the segment's notification tree for @p root (a rank of the
 * segment): *parent (-1 at the root), up to @p max children into
 * @p children, their number in *nchildren (all of them, even beyond
 * @p max). @return MPI_SUCCESS, MPI_ERR_ARG (no segment, @p root out of
 * range). */
int tc_query_shm_tree(MPI_Comm comm, int root, int *parent, int *children, int max, int *nchildren);

/* ---- the model and the barrier (paper 003) ----------------------------- */

/** The LogP/LogGP parameters the context uses (rank 0's, agreed). */
typedef struct tc_query_model {
    tc_logp_t level[TC_MODEL_LEVEL_LAST];
    const char *source[TC_MODEL_LEVEL_LAST]; /**< "default", "TC_LOGP_FILE", "TC_LOGP" */
    tc_logp_t shm;                           /**< the shm row (flags in shared memory) */
    const char *shm_source;
} tc_query_model_t;

int tc_query_model(MPI_Comm comm, tc_query_model_t *out);

#define TC_QUERY_MAX_CAND 8
#define TC_QUERY_NAME_MAX 24

/** One candidate algorithm with its predicted time. */
typedef struct tc_query_cand {
    char name[TC_QUERY_NAME_MAX]; /**< "dissemination", "knomial:4" */
    double cost;                  /**< predicted, microseconds */
    int chosen;                   /**< the choice */
} tc_query_cand_t;

/** One barrier of the plan: among the processes of this rank's segment
 * (shared memory) or between the groups (messages). */
typedef struct tc_query_barrier {
    int P;              /**< processes (< 2: no such barrier on this rank) */
    const char *params; /**< row of the parameters the costs use ("shm", "node", ...) */
    int arity;          /**< tree arity */
    int ncand;
    tc_query_cand_t cand[TC_QUERY_MAX_CAND]; /**< every algorithm that can run here */
    const char *choice;                      /**< the chosen algorithm's name */
    const char *why;                         /**< "override", "model", "file", ... */
} tc_query_barrier_t;

/** TC_Barrier's plan on @p comm: @p shm the segment's barrier, @p msg the
 * barrier between groups. */
int tc_query_barrier(MPI_Comm comm, tc_query_barrier_t *shm, tc_query_barrier_t *msg);

/** Paper 002's one-sided broadcast over the whole communicator, as the model
 * predicts it for @p bytes (what TC_Rma_bcast would cost on a window over
 * it), with the parameters of the level that spans the communicator. */
typedef struct tc_query_rma {
    int P;
    const char *params; /**< the model level whose parameters are used */
    double o_poll;      /**< the helper's polling delay: half TC_RMA_POLL_MIN_US */
    double linear, binomial_down, binomial_up; /**< predicted, microseconds */
} tc_query_rma_t;

int tc_query_rma_bcast(MPI_Comm comm, size_t bytes, tc_query_rma_t *out);

/* ---- the hierarchy (paper 001) ----------------------------------------- */

/** What the hierarchy of a communicator is made of. */
typedef struct tc_query_hier {
    int present;             /**< 0: no hierarchy (one process, TC_HIER=0, or not built) */
    int ngroups;             /**< this rank's groups, bottom-up */
    unsigned enabled_mask;   /**< TC_HIER_LEVELS after agreement */
    unsigned active_mask;    /**< levels with a group somewhere (incl. TC_HIER_LEVEL_TOP) */
    unsigned unknown_mask;   /**< enabled levels skipped: some rank lacks the id */
    int shm_level;           /**< the shared-memory level, or -1 */
    int single_shm;          /**< one segment spans the communicator */
    const char *allreduce;   /**< "rab (ReduceAllreduceBcast)" or "rb (ReduceBcast)" */
    char allreduce_top[240]; /**< the top group's allreduce: "ring", "auto (...)" */
    size_t segment;          /**< TC_HIER_SEGMENT: large messages go in pieces of this */
    int model;               /**< the tables' auto entries come from the LogGP model (else
                                  the TC_HIER_LARGE rule) */
    double gamma;            /**< reduction cost the model used, us per byte */
} tc_query_hier_t;

int tc_query_hier(MPI_Comm comm, tc_query_hier_t *out);

#define TC_QUERY_DESC_MAX 480

/** One of this rank's groups. */
typedef struct tc_query_group {
    int level;          /**< TC_LEVEL_* or TC_HIER_LEVEL_TOP */
    int size;           /**< members, >= 2 */
    const int *members; /**< borrowed: ascending ranks of the communicator, members[0] leads */
    int shm;            /**< served by the segment */
    const char *params; /**< the model level whose parameters its choices use */
    char describe[TC_QUERY_DESC_MAX]; /**< its algorithms, e.g. "bcast knomial:4; reduce auto
                                           (binomial, rsg from 16K)" */
} tc_query_group_t;

/** Group @p i (0 <= i < ngroups, bottom-up) of this rank.
 * @return MPI_SUCCESS, MPI_ERR_ARG (no hierarchy, @p i out of range). */
int tc_query_hier_group(MPI_Comm comm, int i, tc_query_group_t *out);

/** Every rank's locality vector as the hierarchy saw it: @p locs gets one
 * entry per rank of @p comm; *have = 0 (and @p locs untouched) when there is
 * no hierarchy. */
int tc_query_hier_localities(MPI_Comm comm, tc_hier_loc_t *locs, int *have);

/** The hwloc levels that nest on this machine (bit per tc_level_t), and among
 * them those that are redundant (the same units as the level above).
 * @return MPI_SUCCESS, or MPI_ERR_OTHER (no topology: masks 0). */
int tc_query_topo_nesting(unsigned *nesting, unsigned *redundant);

/** The operations of the decision tables. */
typedef enum {
    TC_QUERY_BCAST,
    TC_QUERY_REDUCE,    /**< commutative op */
    TC_QUERY_ALLREDUCE, /**< the top group's */
    TC_QUERY_OP_LAST
} tc_query_op_t;

/** What a group's decision table holds for one size, against the model. */
typedef struct tc_query_choice {
    char bytes[TC_QUERY_NAME_MAX]; /**< the size as "64K" */
    int ncand;
    tc_query_cand_t cand[TC_QUERY_MAX_CAND]; /**< the model's candidates in tie-break
                                                  order, the table's choice marked */
    int outside;        /**< the choice is none of them (an explicit knomial:5) */
    double choice_cost; /**< its predicted time (meaningful when outside) */
    char choice[TC_QUERY_NAME_MAX];
    const char *why; /**< "rule", "override", "file", "model" */
} tc_query_choice_t;

/** The choice of group @p i (not a shared-memory group) for @p op on
 * @p bytes, with every candidate's predicted time under the parameters the
 * table used (L + w when the communicator is oversubscribed).
 * TC_QUERY_ALLREDUCE reads the top group's table (@p i gives P and the
 * parameters). @return MPI_SUCCESS, MPI_ERR_ARG. */
int tc_query_choice(MPI_Comm comm, int i, tc_query_op_t op, size_t bytes, tc_query_choice_t *out);

/* ---- the plans of the gathering and scanning operations (issues 18, 19) -- */

/** The operations of tc_query_plan(). */
typedef enum {
    TC_QUERY_PLAN_ALLGATHER,
    TC_QUERY_PLAN_ALLGATHERV,
    TC_QUERY_PLAN_GATHER,
    TC_QUERY_PLAN_GATHERV,
    TC_QUERY_PLAN_SCATTER,
    TC_QUERY_PLAN_SCATTERV,
    TC_QUERY_PLAN_REDUCE_SCATTER_BLOCK,
    TC_QUERY_PLAN_REDUCE_SCATTER,
    TC_QUERY_PLAN_SCAN,
    TC_QUERY_PLAN_EXSCAN,
    TC_QUERY_PLAN_ALLTOALL,
    TC_QUERY_PLAN_ALLTOALLV,
    TC_QUERY_PLAN_LAST
} tc_query_plan_op_t;

/** What the library would do for one operation on a communicator: the
 * path the context agreed on (the same for every operation of the family:
 * the segment when one spans the communicator, else the MPI's own and why),
 * the segment's protocol in a few words, which calls race the MPI's own,
 * and whether the model has a cost for it (tc_query_plan_cost). */
typedef struct tc_query_plan {
    const char *name;   /**< "Allgather" */
    int shm;            /**< 1: through the segment on this communicator */
    int hier;           /**< 1: through the hierarchy's groups (Allgather(v), Gather(v), Scatter(v),
                           Reduce_scatter(_block); Scan, Exscan on contiguous nodes) */
    const char *path;   /**< "shared memory (...)" or "the MPI's own: <why>" */
    char protocol[720]; /**< the segment's protocol (even when another path runs) */
    size_t race_min;    /**< agreed TC_PMPI_RACE_MIN, bytes; 0: the race is off */
    char race_min_text[TC_QUERY_NAME_MAX]; /**< it as a size ("64K") */
    const char *race;                      /**< which calls race, or why none does */
    int modeled;                           /**< 1: tc_query_plan_cost() gives the model's time */
    const char *bytes;                     /**< what the cost's size is ("one process's block") */
    char model_note[200]; /**< "" or a remark on the model's costs (Alltoall(v) across nodes:
                             where the aggregation stops being the cheaper path) */
} tc_query_plan_t;

/** The plan of operation @p op (a tc_query_plan_op_t) on @p comm.
 * @return MPI_SUCCESS, MPI_ERR_ARG (@p op out of range). */
int tc_query_plan(MPI_Comm comm, int op, tc_query_plan_t *out);

/** The model's predicted time of @p op on @p comm for @p bytes (what
 * tc_query_plan's `bytes` says), in microseconds (TC_Comm_predict with
 * root 0): 0 when nothing moves, -1 when the MPI's own would run (no model
 * of it). @return MPI_SUCCESS, MPI_ERR_ARG (@p op out of range or without a
 * model cost: plan.modeled 0), or TC_Comm_predict's error. */
int tc_query_plan_cost(MPI_Comm comm, int op, size_t bytes, double *usec);

#endif /* TC_CORE_QUERY_H */
