/* Racing the library's own path against the MPI's own collective on large
 * messages (issue 3: "the hierarchical path is never slower than PMPI_* on
 * the same communicator at any size").
 *
 * Why: above a few hundred KiB both are bound by the same memory bandwidth,
 * and which one wins depends on the machine's state, not on anything that
 * can be read in advance. On the 2-vCPU KVM guest of issue 3 (np = 2,
 * medians of 5 whole runs), a 1 MiB Allreduce took 138-172 us in TC against
 * 138-159 in Open MPI's default, 1.0-1.1x depending on the run; a
 * single-copy path through process_vm_readv was tried and was no faster
 * (157-218 us). So the library times both on the caller's own calls and
 * keeps the faster, per operation (Bcast, Reduce, Allreduce) and size
 * class (powers of two from TC_PMPI_RACE_MIN up).
 *
 * Per class: one untimed warm-up call of each (first touches of buffers and
 * of the MPI's internal ones), then the two alternate until each has
 * TC_RACE_EXPLORE timed calls; from then on the one with the lower median of
 * its last TC_RACE_WINDOW times runs, every TC_RACE_MEASURE-th call is timed
 * (so a slowdown of the one in use is seen), and every TC_RACE_PROBE-th call
 * runs the other one, timed (TC_RACE_PROBE_FAR when the other was at least
 * TC_RACE_FAR_RATIO times slower: a probe then costs more than it can win;
 * longer still when it was much slower, tc_race_far_interval()).
 *
 * Every process must run the same implementation in the same call, so the
 * times are agreed, not local: a timed call's time is the mean over all
 * processes of their entry-to-exit times, and every process updates the same
 * estimates with the same numbers at the same point of its sequence of raced
 * calls: the state is replicated, and the choices follow from it
 * identically everywhere.
 *
 * The mean, not the longest: where calls follow one another, every process
 * spends the loop inside them, so the mean over processes, summed over the
 * calls, is the loop's time, whichever call a process's wait falls in. The
 * longest per call exceeds it by how much the processes' times vary from
 * call to call, which differs between implementations: Open MPI's 16 MiB
 * Scatter at np 4 on 2 CPUs beside two busy processes took 16-38 ms a call
 * by its longest process and 10-29 by the mean, the library's 29-41 and
 * 24-31; with the longest, the race kept the library's path in 2 of 10 runs,
 * 1.38 and 1.57x the MPI's own, with the mean in none (issue 13).
 *
 * Where one segment spans the communicator the agreement costs no
 * synchronization (issue 13: under CPU contention a collective agreement
 * every 8th call waited a time slice whenever the peer was descheduled, on
 * operations that otherwise let a process run ahead, and made a raced 1 MiB
 * Reduce 10-26x slower than the MPI's): every process writes its time of
 * timed call j into its own lines of the segment (a ring of
 * TC_SHM_RACE_RING slots and a count, shm/layout.h), and the time of a call
 * made as raced call k enters the estimates at the start of raced call
 * k + TC_RACE_LAG, on every process. A process that gets there before some
 * peer has published waits for it (the wait helper, base/wait.h); a writer
 * whose ring slot still holds a time some peer has not taken in waits for
 * that peer's `consumed` count. Neither wait can deadlock, for any raced
 * operation (Bcast, Reduce, Allreduce, Allgather, Gather, Scatter,
 * Reduce_scatter_block, Reduce_scatter, Scan, Exscan, Alltoall; not Gatherv,
 * Scatterv and Alltoallv, whose sizes not every process knows): a process waiting at the start
 * of raced call m for the time of call k <= m - TC_RACE_LAG has finished its
 * own part of every call before m; the peer it waits for publishes that time
 * at the end of its call k, and its calls up to k need nothing from the
 * waiting process beyond that process's parts of calls <= k (every raced
 * collective, the library's and the MPI's, completes once every process has
 * made its own part of it and of the calls before) nor any time of a call
 * after k - TC_RACE_LAG (already published, by induction). A writer at the
 * end of timed call j (made as raced call k_j) waits for peers to take in
 * time j - RING, which they do at the start of raced call
 * k_{j-RING} + TC_RACE_LAG <= k_j (RING >= TC_RACE_LAG and timed calls are
 * distinct calls): the peers must only reach the start of a call no later
 * than k_j, which needs nothing of the writer's after its part of call k_j.
 * On the hierarchy (no such segment) the time is agreed at the next raced
 * call in one 8-byte PMPI_Allreduce over the private communicator.
 *
 * Only calls whose result cannot depend on the algorithm are raced: every
 * Bcast; Reduce and Allreduce when the operation's result is the same bits
 * however the operands are grouped (tc_redop_t.order: integer and logical
 * operations), or, on two processes, whichever operand is left (sums and
 * products of real floating-point numbers: IEEE addition and
 * multiplication are commutative). A floating-point sum over more processes
 * always takes the library's own path, so its result does not change from
 * run to run with the timing.
 */
#ifndef TC_CORE_RACE_H
#define TC_CORE_RACE_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/stats.h"

struct tc_shm_comm;

/* Size classes: floor(log2(nbytes)) from 2^TC_RACE_CLASS_LOG0 up; all sizes
 * from 2^(TC_RACE_CLASS_LOG0 + TC_RACE_CLASSES - 1) share the last. */
#define TC_RACE_CLASS_LOG0 12
#define TC_RACE_CLASSES    20
/* Timed calls kept per implementation: their median is its estimate. */
#define TC_RACE_WINDOW 3 /* == TC_MEDIAN3_WINDOW (race.c) */
/* Timed calls of each before the first decision. More than the window: the
 * library's path makes choices of its own on its first calls of a size (the
 * copy of large messages, shm/copy.h: a warm-up and three calls of each copy,
 * and the slower copy can cost 5-10x on the machine of issue 3), so the
 * window must hold only calls made after those. Seen before this was added:
 * at 4 MiB the race kept the MPI's Allreduce (2340 us) over the library's
 * (850 us once its copy was settled), having timed it mostly with the wrong
 * copy. */
#define TC_RACE_EXPLORE 6
/* Once decided, every this-many-th call of a class is timed. */
#define TC_RACE_MEASURE 8
/* ... and every this-many-th runs the other implementation (a multiple of
 * TC_RACE_MEASURE, so a probe is always timed). */
#define TC_RACE_PROBE     32
#define TC_RACE_PROBE_FAR 256
#define TC_RACE_FAR_RATIO 1.5
/* ... and the far interval doubles, up to TC_RACE_PROBE_MAX, until the
 * probes cost at most 1/TC_RACE_PROBE_SHARE of the time of the calls
 * between them: (other / mine) / interval <= 1 / TC_RACE_PROBE_SHARE. A
 * probe of an MPI's own 200x slower (MPICH's Allgatherv at np 4 on 2 CPUs
 * beside busy processes: 1.6 s against the library's 7.6 ms) every 256th
 * call would add 78% to the library's time; every 8192nd, 2.4%. */
#define TC_RACE_PROBE_SHARE 32
#define TC_RACE_PROBE_MAX   65536
/* ... the far interval only once the decision and this many probes in a row
 * after it found the other that much slower (one probe taken while the
 * machine was busy must not hold a choice for 256 calls). */
#define TC_RACE_FAR_CONFIRM 3
/* The other is probed at the next timed call when the estimate of the one in
 * use has grown this many times over what it was when chosen (or last
 * probed against). */
#define TC_RACE_GROW_RATIO 2.0
/* Raced calls between a timed call and the call whose choice first uses its
 * time (segment mode, see above); no more than TC_SHM_RACE_RING. */
#define TC_RACE_LAG 16
/* ... for a call of at least twice the segment's largest ring (its queue or
 * its reduction slots): a process seldom gets through such a call before
 * every peer has started it, i.e. finished the one before (most of it cannot
 * sit in the rings without the peers' part; a Scatter root's blocks to many
 * readers can), so the time of the call two back is there without a wait in
 * the common case, and the first decision comes 14 calls earlier: at 16 MiB
 * the exploration's times took 16 calls of the library's path to arrive, a
 * loss wherever the MPI's own is the faster (np 4 on 2 CPUs, Alltoall 16 MiB
 * 1.57x the MPI's own in a run of 20 timed calls). Where the time is not
 * there yet, the wait is for a peer two calls behind; any lag >= 1 keeps the
 * argument above (no deadlock). */
#define TC_RACE_LAG_LARGE 2

typedef enum { TC_RACE_TC, TC_RACE_PMPI, TC_RACE_IMPL_LAST } tc_race_impl_t;
/* In the fragment race (below) the alternative to the library's default
 * fragments is its wide fragments, in the place of the MPI's own. */
#define TC_RACE_WIDE TC_RACE_PMPI

/* What a raced call's two implementations are: the library's path against
 * the MPI's own, or the library's reduction with its default fragments
 * against the same with the segment's wide ones (TC_SHM_REDUCE_WIDE_BYTES).
 * The second races only where the first does not (a floating-point sum
 * over more than two processes, or the first switched off) and only where
 * the fragment size cannot change the result's bits: the direct and slice
 * folds combine every element in rank order whatever the fragment
 * (shm/reduce_proto.h tc_red_fold), and a call whose default fragments would
 * go up the reduction tree does not race (tc_shm_reduce_wide_same(), checked
 * by the caller). Beside CPU-bound processes wide fragments took 0.65-0.92x
 * the time of every reduction at 1-16 MiB (np 4 on 2 CPUs); alone some
 * took up to 1.66x (docs/measurements/lanes-np4-2026-11-28.md): the machine's
 * state decides, as for the MPI's own (raced: wide-fragments-2026-11-28.md).
 * Each kind has its own estimates; both share the sequence of raced calls
 * and the segment's ring of times. */
typedef enum { TC_RACE_KIND_PMPI, TC_RACE_KIND_WIDE, TC_RACE_KINDS } tc_race_kind_t;

typedef struct tc_race_est {
    double ns_per_byte[TC_RACE_WINDOW]; /* the last timed calls, a ring */
    unsigned n;                         /* timed calls so far */
} tc_race_est_t;

typedef struct tc_race_class {
    tc_race_est_t est[TC_RACE_IMPL_LAST];
    unsigned issued[TC_RACE_IMPL_LAST]; /* timed calls of each made (times may be in flight) */
    unsigned calls;                     /* raced calls of this class so far */
    int last_best; /* the implementation in use after the last decision (-1: none) */
    unsigned far;  /* decision and probes in a row that found the other far slower */
    double ref;    /* estimate of last_best when chosen or last probed against */
    bool reprobe;  /* probe the other at the next timed call */
} tc_race_class_t;

/* A timed call whose agreed time is not in the estimates yet (segment mode). */
typedef struct tc_race_inflight {
    tc_race_kind_t kind;
    tc_op_t op;
    int cls;
    tc_race_impl_t impl;
    size_t nbytes;
    unsigned long long seq; /* its number among the raced calls */
    unsigned lag;           /* TC_RACE_LAG or TC_RACE_LAG_LARGE (tc_race_lag()) */
} tc_race_inflight_t;

/* One communicator's race: identical on every process of it. */
typedef struct tc_race {
    size_t min; /* agreed TC_PMPI_RACE_MIN: messages of at least this many bytes race; 0: off */
    /* agreed TC_SHM_REDUCE_WIDE_MIN where the segment has wide fragments:
     * reductions of at least this many bytes race the fragment size; 0: off */
    size_t wide_min;
    tc_race_class_t cls[TC_RACE_KINDS][TC_OP_LAST][TC_RACE_CLASSES];
    /* Segment mode: raced calls, timed calls (numbers of the times in the
     * segment's rings), timed calls taken into the estimates; the timed
     * calls in flight, at their number % TC_RACE_LAG. */
    unsigned long long seq, timed, applied;
    tc_race_inflight_t inflight[TC_RACE_LAG];
    /* Hierarchy: the last timed call, whose time is agreed at the next raced
     * call. */
    bool pending;
    tc_race_kind_t pending_kind;
    tc_op_t pending_op;
    int pending_cls;
    tc_race_impl_t pending_impl;
    size_t pending_bytes;
    double pending_ns; /* this process's own time */
} tc_race_t;

/* One call. */
typedef struct tc_race_call {
    bool raced;    /* large enough: tc_race_end() must be called */
    bool measured; /* this call's time goes into the estimates */
    tc_race_kind_t kind;
    tc_op_t op;
    int cls;
    tc_race_impl_t impl;
    size_t nbytes;
    double t0_ns;
    struct tc_shm_comm *board; /* segment mode: where its time goes (else NULL) */
    unsigned long long timed;  /* segment mode: its number among the timed calls */
} tc_race_call_t;

/* Test hook (NULL in production): when set, the time a process keeps for a
 * timed call is what it returns for @p call and the measured @p ns. */
extern double (*tc_race_test_time)(const tc_race_call_t *call, double ns);
/* Test hook: when set, called with every raced call's choice. */
extern void (*tc_race_test_chosen)(const tc_race_call_t *call);

/* A fresh race with threshold @p min (0: off); the fragment race off. */
void tc_race_init(tc_race_t *r, size_t min);

/* Pure decision (no communication, no clock): the implementation for a call
 * of @p op moving @p nbytes bytes; @p order_free false (a result that
 * depends on the algorithm) always gives TC_RACE_TC, and the call is not
 * counted. Fills @p call (not timed: the caller sets t0_ns). */
tc_race_impl_t tc_race_choose(tc_race_t *r, tc_op_t op, size_t nbytes, bool order_free,
                              tc_race_call_t *call);
/* The same for the fragment race: @p eligible says whether the fragment
 * size may race for this call (agreed values only); TC_RACE_WIDE: wide
 * fragments. */
tc_race_impl_t tc_race_choose_wide(tc_race_t *r, tc_op_t op, size_t nbytes, bool eligible,
                                   tc_race_call_t *call);
/* Pure: the agreed time @p ns of a timed call into the estimates. */
void tc_race_record(tc_race_t *r, tc_op_t op, int cls, tc_race_impl_t impl, size_t nbytes,
                    double ns);
void tc_race_record_kind(tc_race_t *r, tc_race_kind_t kind, tc_op_t op, int cls,
                         tc_race_impl_t impl, size_t nbytes, double ns);
/* The current estimate (median of the last times, ns per byte) of @p impl
 * for (op, class), or a negative value before its first time. For tests and
 * logs. */
double tc_race_estimate(const tc_race_t *r, tc_op_t op, int cls, tc_race_impl_t impl);
double tc_race_estimate_kind(const tc_race_t *r, tc_race_kind_t kind, tc_op_t op, int cls,
                             tc_race_impl_t impl);
/* The class of a message of @p nbytes bytes. */
int tc_race_class(size_t nbytes);

/* Before a call of @p nbytes on the library's path (every process of the
 * communicator calls it with the same arguments, in the same order): @p shm,
 * when not NULL, is the segment spanning the whole communicator, through
 * which the times travel (it may wait for a peer's time, never collective);
 * otherwise a timed call's time is agreed over @p priv at the next raced call
 * (collective). A communicator always passes a segment or always none. Sets
 * *impl; returns MPI_SUCCESS or the error of the agreement. */
int tc_race_begin_raced(tc_race_t *r, struct tc_shm_comm *shm, MPI_Comm priv, tc_op_t op,
                        size_t nbytes, bool order_free, tc_race_call_t *call, tc_race_impl_t *impl);
static inline int tc_race_begin(tc_race_t *r, struct tc_shm_comm *shm, MPI_Comm priv, tc_op_t op,
                                size_t nbytes, bool order_free, tc_race_call_t *call,
                                tc_race_impl_t *impl)
{
    /* A call that does not race (agreed values only: the threshold, the
     * size, the operation) takes the library's path and is not counted,
     * timed or agreed (tc_race_choose): decided here, inline, so small
     * calls pay a compare (issue 18: ~75 instructions out of line). */
    if (r->min == 0 || nbytes < r->min || !order_free) {
        *call = (tc_race_call_t){.op = op, .impl = TC_RACE_TC, .nbytes = nbytes};
        *impl = TC_RACE_TC;
        return MPI_SUCCESS;
    }
    return tc_race_begin_raced(r, shm, priv, op, nbytes, order_free, call, impl);
}
/* The fragment race's tc_race_begin_raced(), segment mode only (@p shm
 * spans the communicator): sets *wide when this call is to use the
 * segment's wide fragments. @p eligible as for tc_race_choose_wide(). A
 * call that races must end with tc_race_end() or tc_race_skip(). */
void tc_race_begin_wide(tc_race_t *r, struct tc_shm_comm *shm, tc_op_t op, size_t nbytes,
                        bool eligible, tc_race_call_t *call, bool *wide);
/* Whether a call of @p nbytes is large enough for the fragment race: inline,
 * so that a reduction below the threshold pays a compare, not the
 * eligibility test and a call out of line. */
static inline bool tc_race_wide_due(const tc_race_t *r, size_t nbytes)
{
    return r->wide_min != 0 && nbytes >= r->wide_min;
}

/* After the call: a timed call's time is kept for the agreement (local), or
 * written into the segment (may wait for a peer to have read an older time,
 * see above). */
void tc_race_end_measured(tc_race_t *r, const tc_race_call_t *call);
static inline void tc_race_end(tc_race_t *r, const tc_race_call_t *call)
{
    if (call->measured)
        tc_race_end_measured(r, call);
}

/* Instead of tc_race_end() when the library's path refused before anything
 * moved (every process alike): no time for this call. */
void tc_race_skip(tc_race_t *r, const tc_race_call_t *call);

#endif /* TC_CORE_RACE_H */
