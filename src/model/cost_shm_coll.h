/* Costs of the shared-memory Reduce/Allreduce (shm/reduce.c) in paper 000's
 * notation, and the conversion of one level's LogP parameters into that
 * notation, so a prediction can add shared-memory and message-based levels.
 * Pure arithmetic: includes nothing of ours but the model's own headers.
 *
 * Symbols (tc_model_shm_t, model/cost.h): t = one byte copied (read from one
 * place, written to another), t_w = one notification (a flag's cache line
 * moving to its reader), t_ws = the root waiting for a bank to be released,
 * t_a = one atomic store that releases a bank; gamma = combining one byte
 * (the reduction operator on data already in cache). m bytes, p processes,
 * fragments of f bytes: x = min(f, m), nfrag = ceil(m / f). Derivations:
 * docs/model.md, "Prediction of a whole collective". Every function returns
 * 0 for m == 0 or p <= 1.
 *
 * The critical path of a Reduce and of an Allreduce is the same here: in an
 * Allreduce every receiver does what the root of a Reduce does, at the same
 * time on other processes (the formulas assume a core per process).
 */
#ifndef TC_MODEL_COST_SHM_COLL_H
#define TC_MODEL_COST_SHM_COLL_H

#include <stddef.h>

#include "cost.h"
#include "logp.h"

/* How shm/reduce.c combines one message (its rules: slice when p > 2 and
 * f >= slice_min; else tree when p > 2, tree_max > 0 and min(f, m) <=
 * tree_max; else direct; messages of at most inline_max bytes ride in the
 * flag's line, on the tree under the same tree rule, else direct). */
typedef enum {
    TC_MODEL_SHM_RED_INLINE,      /* <= inline_max bytes, direct */
    TC_MODEL_SHM_RED_INLINE_TREE, /* <= inline_max bytes, tree of partials */
    TC_MODEL_SHM_RED_DIRECT,      /* receivers fold all p contributions */
    TC_MODEL_SHM_RED_SLICE,       /* process i folds slice i, receivers gather the slices */
    TC_MODEL_SHM_RED_TREE,        /* partials up a k-ary range tree, receivers copy rank 0's */
    TC_MODEL_SHM_RED_LAST
} tc_model_shm_red_t;

/* The agreed settings of the segment's reduction (shm/segment.h). */
typedef struct tc_model_shm_red_cfg {
    size_t inline_max; /* TC_SHM_INLINE_MAX: payload bytes of one flag line */
    size_t slice_min;  /* TC_SHM_REDUCE_SLICE_MIN */
    size_t tree_max;   /* TC_SHM_REDUCE_TREE_MAX (0: never a tree) */
    int tree_arity;    /* TC_SHM_REDUCE_TREE_ARITY (clamped to 2..64 as reduce.c does) */
} tc_model_shm_red_cfg_t;

/* Paper 000's symbols from the LogP table's shm row (logp.h: one flag through shared
 * memory; G = copy-in plus copy-out per byte): t = G / 2, t_w = t_ws =
 * L + o_r (one flag hop), t_a = g (a fetch-add on a line another process
 * wrote last). What TC_Comm_predict uses for segments. */
void tc_model_shm_from_shm_row(const tc_logp_t *shm, tc_model_shm_t *out);

/* The scheme shm/reduce.c runs for @p m bytes in fragments of @p f among
 * @p p processes (TC_MODEL_SHM_RED_LAST when there is nothing to do). */
tc_model_shm_red_t tc_model_shm_reduce_scheme(size_t m, size_t f, int p,
                                              const tc_model_shm_red_cfg_t *cfg);

/* Direct (and inline direct): the receiver waits for each peer's first
 * fragment in turn, then folds p - 1 peer operands over the whole message:
 *   inline:  m t + (p-1) t_w + (p-1) m gamma + m t
 *   direct:  x t + (p-1) t_w + (nfrag-1) t_w + (p-1) m (t + gamma)
 * (first publication, the p-1 first flags, one flag per later fragment,
 * reading and folding the peers' bytes; the inline result is copied out of a
 * local accumulator, the direct fold writes the receive buffer directly). */
double tc_model_shm_reduce_direct_cost(size_t m, size_t f, int p, double gamma, int inline_msg,
                                       const tc_model_shm_t *sp);

/* Slice: per fragment every process publishes (x t), folds its slice
 * (x/p bytes of p-1 peers: (p-1)(x/p)(t + gamma)), writes its slice result
 * ((x/p) t), and a receiver copies the p slices out (x t); two waits per
 * fragment (contributions, slices), p-1 each for the first:
 *   3 m t + ((p-1)/p) m gamma + 2 (p-1) t_w + 2 (nfrag-1) t_w. */
double tc_model_shm_reduce_slice_cost(size_t m, size_t f, int p, double gamma,
                                      const tc_model_shm_t *sp);

/* Critical path of one fragment of @p x bytes up the range tree of reduce.c
 * (process i heads [i, i+n); the other n-1 ranks are cut into min(k, n-1)
 * contiguous chunks, each headed by its first rank):
 *   U(leaf) = x t;  U(node with c children) = max_j U(child_j) + c (t_w + x (t + gamma)). */
double tc_model_shm_tree_up_cost(size_t x, int p, int arity, double gamma,
                                 const tc_model_shm_t *sp);

/* Tree (and inline tree: f >= m): the first fragment's up-sweep, the
 * receivers' copy of rank 0's result (t_w + x t); later fragments are
 * pipelined (reduce.c's lag) behind the busiest process, rank 0 with
 * c0 = min(k, p-1) children, each fragment one flag and c0 folds:
 *   U(x) + t_w + x t + (nfrag-1) t_w + c0 (m - x) (t + gamma). */
double tc_model_shm_reduce_tree_cost(size_t m, size_t f, int p, int arity, double gamma,
                                     const tc_model_shm_t *sp);

/* The scheme's cost (tc_model_shm_reduce_scheme()) for @p m bytes. */
double tc_model_shm_reduce_cost(size_t m, size_t f, int p, double gamma,
                                const tc_model_shm_red_cfg_t *cfg, const tc_model_shm_t *sp);

/* ---- Scan and Exscan (shm/scan.c) -------------------------------------- */

/* Chain (rank order, fragment by fragment): the first fragment crosses
 * p - 1 hops (a flag, then the fold of x bytes into the next slot); the
 * later ones follow one hop time apart; process 0's copy-in and the last
 * process's fold into its buffer add one copy each:
 *   x t + (p - 2 + nfrag) (t_w + x (t + gamma)) + x t
 * (inline: x = m, nfrag = 1). */
double tc_model_shm_scan_chain_cost(size_t m, size_t f, int p, double gamma,
                                    const tc_model_shm_t *sp);

/* Rounds (recursive doubling, one fragment of m bytes): the copy-in, then
 * ceil(log2 p) rounds of a flag, a fold and the copy of the partial into
 * the next round's slot:
 *   m t + ceil(log2 p) (t_w + m (2 t + gamma)). */
double tc_model_shm_scan_rounds_cost(size_t m, int p, double gamma, const tc_model_shm_t *sp);

/* The leaders' exclusive scan across nodes (hier/level_scan.h): ceil(log2
 * n) rounds of one exchange of m bytes (sent and received at once: X the
 * duplex factor, tc_logp_duplex) and one fold, with LogGP parameters @p lp
 * (the rendezvous added above the eager limit):
 *   ceil(log2 n) (L + o_s + o_r + X m G + m gamma [+ rdv]). */
double tc_model_exscan_recdbl_cost(size_t m, int n, double gamma, const tc_logp_t *lp);

#endif /* TC_MODEL_COST_SHM_COLL_H */
