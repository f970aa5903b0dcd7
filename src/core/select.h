/* Choosing algorithms (DESIGN.md "Data flow": explicit override > tuning file
 * > LogP model argmin), once per communicator when its context is created,
 * never per call: the barrier plan, and the hierarchy's decision tables (per
 * level and message-size class: Bcast, Reduce, the top group's Allreduce),
 * which the collectives read with one lookup (hier/hier.h).
 *
 * The LogP/LogGP parameters (model/logp.h) are loaded once per process
 * (defaults, then TC_LOGP_FILE, then TC_LOGP; a bad file or string is
 * reported once and its bad part ignored) and, per context, rank 0's table is
 * broadcast so every rank evaluates the same costs and makes the same
 * choices even if the environments differ.
 */
#ifndef TC_CORE_SELECT_H
#define TC_CORE_SELECT_H

#include <mpi.h>

#include "barrier/barrier.h"
#include "barrier/settings.h"
#include "model/logp.h"
#include "model/tuning.h"

struct tc_hier;
struct tc_shm_comm;

/* Why an algorithm was chosen (printed by topocoll-info). */
typedef enum {
    TC_CHOICE_NONE,     /* nothing to choose (no such group) */
    TC_CHOICE_OVERRIDE, /* TC_BARRIER / TC_SHM_BARRIER */
    TC_CHOICE_MODEL,    /* argmin of the LogP costs */
    TC_CHOICE_FILE,     /* a barrier entry of TC_TUNING_FILE */
    TC_CHOICE_OVERSUB   /* oversubscribed node: fewest sequential waits */
} tc_choice_why_t;

/* What the choices depend on besides the LogP table and the hierarchy:
 * rank 0's values are used by every rank (tc_select_inputs_agree). Fixed
 * size, no pointers, no padding. */
typedef struct tc_select_inputs {
    tc_tuning_t tuning; /* TC_TUNING_FILE as read by rank 0 (empty without one) */
    double gamma;       /* TC_MODEL_GAMMA, us per byte */
    int32_t model;      /* TC_HIER_MODEL: 1 = the model fills the auto entries, 0 = the
                           TC_HIER_LARGE rule (the tuning file applies either way) */
    int32_t pad;
} tc_select_inputs_t;

/* The barrier of one communicator: the shared-memory algorithm of this
 * rank's segment (if any) and the message-based one of the top group (or the
 * whole communicator when no level is shared-memory). */
typedef struct tc_barrier_plan {
    tc_barrier_alg_t shm_alg;
    int shm_arity;
    int shm_P; /* processes in this rank's segment (0: none) */
    tc_model_level_t shm_level;
    tc_choice_why_t shm_why;
    double shm_cost[TC_BARRIER_ALG_LAST]; /* predicted, microseconds */
    tc_barrier_alg_t msg_alg;
    int msg_arity;
    int msg_P; /* members of the top group (0: none) */
    tc_model_level_t msg_level;
    tc_choice_why_t msg_why;
    double msg_cost[TC_BARRIER_ALG_LAST];
} tc_barrier_plan_t;

/* The process's table (loaded on first use; thread-safe). */
const tc_logp_table_t *tc_select_logp_table(void);

/* Collective over @p priv: rank 0's table into @p out. Where @p shm is a
 * segment (over @p shmcomm), its leader loads the table and shares it through
 * the node store, so TC_LOGP_FILE is read once per node; the others load it
 * themselves only if the store is unusable. */
int tc_select_logp_agree(MPI_Comm priv, struct tc_shm_comm *shm, MPI_Comm shmcomm,
                         tc_logp_table_t *out);

/* This process's inputs: TC_TUNING_FILE read once per process (bad lines
 * reported once), TC_MODEL_GAMMA, TC_HIER_MODEL. Thread-safe. */
const tc_select_inputs_t *tc_select_inputs_local(void);

/* Collective over @p priv: rank 0's inputs into @p out (only rank 0 reads
 * the tuning file). */
int tc_select_inputs_agree(MPI_Comm priv, tc_select_inputs_t *out);

/* Where a context's plans apply: facts of the context, each agreed or the
 * same on every process that uses it. */
typedef struct tc_select_scope {
    int shm_P;          /* size of this rank's segment, or 0 */
    int singlenode;     /* the communicator lies within one node */
    int oversubscribed; /* more processes on this node than CPUs (the same on every process of a
                           segment) */
} tc_select_scope_t;

/* The plan, from agreed inputs only (@p bs: the agreed barrier settings,
 * overrides 0 = auto, else alg + 1; @p in: agreed inputs, NULL = no tuning
 * file; @p h may be NULL). Precedence: override > the file's "barrier
 * shm|top" entry (its "tree:n" also sets the arity) > model; @p in NULL: no
 * file. @p scope->oversubscribed: where the model chose the segment's
 * algorithm, the central counter instead. The LogP model knows no scheduler:
 * oversubscribed, every sequential wait costs a scheduler round, and the
 * central counter has the fewest (arrive, release). Measured on 2 cores
 * (spin 0): np=4 central 3.0 us, pairwise 4.0, dissemination 5.0,
 * MPI_Barrier 5.6; np=8 9.0, 16.8, 17.6, 22.2. */
void tc_select_barrier_plan(tc_barrier_plan_t *plan, const tc_logp_table_t *t,
                            const tc_select_inputs_t *in, const struct tc_hier *h,
                            const tc_select_scope_t *scope, const tc_barrier_settings_t *bs);

/* Fill the decision tables of @p h (may be NULL) from agreed inputs only:
 * per level and size class, the explicit setting (TC_HIER_BCAST,
 * TC_HIER_REDUCE, TC_HIER_ALLREDUCE_TOP) > the tuning file > the model's
 * argmin (or, with in->model == 0, the TC_HIER_LARGE rule). The model uses
 * the LogGP parameters of the group's level (the top group: see
 * tc_select_top_level), in->gamma, and the group's size; every rank of a
 * group computes the same table. @p oversubscribed (agreed: some node of
 * the communicator has more processes than CPUs): the parameters get the
 * scheduler term (tc_select_level_params) and the model's argmin leaves out
 * the algorithms that need every member running at every step
 * (tc_select_allmember); an override or a tuning-file entry stands. Pure
 * (no MPI). */
void tc_select_hier_tables(struct tc_hier *h, const tc_logp_table_t *t,
                           const tc_select_inputs_t *in, int singlenode, int oversubscribed);

/* Everything at context creation after the hierarchy and the segment exist:
 * rank 0's inputs (collective over @p priv), the decision tables of @p h and
 * the barrier plan @p plan (arguments as tc_select_barrier_plan()). */
int tc_select_ctx_plans(MPI_Comm priv, struct tc_hier *h, const tc_logp_table_t *t,
                        const tc_select_scope_t *scope, const tc_barrier_settings_t *bs,
                        tc_barrier_plan_t *plan);

/* ---- candidates and their costs (the tables and topocoll-info) ---------- */

typedef enum {
    TC_SELECT_BCAST,     /* tc_hier_bcast_alg_t with a radix */
    TC_SELECT_REDUCE,    /* tc_hier_reduce_alg_t, commutative op */
    TC_SELECT_REDUCE_NC, /* non-commutative op: FLAT, BINOMIAL */
    TC_SELECT_ALLREDUCE, /* tc_hier_allreduce_alg_t (top group) */
    TC_SELECT_ALLGATHER, /* tc_hier_allgather_alg_t (top group); m: the whole result */
    TC_SELECT_OP_LAST
} tc_select_op_t;

#define TC_SELECT_MAX_CAND 6

typedef struct tc_select_cand {
    int alg; /* the op's algorithm enum */
    int k;   /* radix (bcast), else 0 */
} tc_select_cand_t;

/* The candidates of @p op in tie-break order (an exact tie goes to the
 * earlier one): bcast knomial:2, :3, :4, :8, flat, scatter_allgather;
 * reduce binomial, flat, rsg; allreduce recdbl, ring; allgather recdbl,
 * ring, bruck. Returns how many. */
int tc_select_candidates(tc_select_op_t op, tc_select_cand_t c[TC_SELECT_MAX_CAND]);

/* Predicted time (us) of candidate @p c for @p m bytes among @p P members
 * (model/cost.h). */
double tc_select_cost(tc_select_op_t op, tc_select_cand_t c, size_t m, int P, double gamma,
                      const tc_logp_t *p);

/* 1 if candidate @p c needs every member of the group running at every
 * step while a rooted alternative exists: scatter_allgather (its ring
 * allgather) and rsg (recursive halving). On an oversubscribed node such a
 * step waits for a member that is not running, once per step: measured
 * 1.3-3.4x slower than the best k-nomial / binomial at 16 KiB-1 MiB with 4
 * and 8 processes on 2 cores, where LogGP predicts them up to 2x faster
 * (docs/model.md). The allreduce ring is not one: its only alternative,
 * recursive doubling, needs every member in every round as well. */
int tc_select_allmember(tc_select_op_t op, tc_select_cand_t c);

/* The parameters the model uses for a level: @p p, and where the
 * communicator is @p oversubscribed, L + w (one scheduler round per
 * message on the critical path: its receiver blocked and gave up its CPU). */
void tc_select_level_params(const tc_logp_t *p, int oversubscribed, tc_logp_t *out);

/* Index (in tc_select_candidates order) of the cheapest candidate; @p cost
 * (may be NULL) receives every candidate's time. A candidate must be cheaper
 * by a relative 1e-9 to beat an earlier one (rounding noise is no win).
 * @p oversubscribed: candidates with tc_select_allmember() are left out of
 * the choice (their costs are still filled in). */
int tc_select_argmin(tc_select_op_t op, size_t m, int P, double gamma, const tc_logp_t *p,
                     int oversubscribed, double cost[TC_SELECT_MAX_CAND]);

/* The model level of the top group (TC_HIER_LEVEL_TOP): the level above the
 * highest active one (node leaders meet at the leaf switch), capped at node
 * when the communicator lies within one node. */
tc_model_level_t tc_select_top_level(const struct tc_hier *h, int singlenode);

/* The smallest message of size class @p c (hier/hier.h): 0, then 2^(c-1). */
size_t tc_select_class_bytes(int c);

/* "override", "model", "file", "-". */
const char *tc_select_why_name(tc_choice_why_t why);

#endif /* TC_CORE_SELECT_H */
