/* LogP / LogGP parameters per hierarchy level (papers 002, 003), and where
 * they come from: TC_LOGP_FILE, TC_LOGP, or documented defaults.
 *
 * Pure arithmetic and parsing: this module includes only base/err.h of ours
 * (DESIGN.md), so it names levels itself, with the same short names and the
 * same order as hier/locality.h's tc_level_t ("core", "l2", "l3", "numa",
 * "package", "node", "switch1".."switch4"). The parameters of level X are
 * those of two processes whose closest common unit is an X: "numa" = same
 * NUMA node, "package" = same socket but another NUMA node, "node" = same
 * node, another socket, "switch1" = other nodes under one leaf switch...
 *
 * Units: microseconds (L, o_s, o_r, g) and microseconds per byte (G).
 *
 * File format (TC_LOGP_FILE; written by tools/topocoll-logp):
 *     # comment lines and blank lines are ignored
 *     # level    L        o_s      o_r      g        G
 *     numa       0.210    0.050    0.060    0.040    0.000080
 *     node       0.350    0.070    0.080    0.060    0.000110
 *     shm        0.050    0.004    0.010    0.060    0.000100
 * One line per level, five numbers (non-negative, finite), any order of
 * lines; a level not listed keeps its default. Three optional numbers may
 * follow G: E (eager limit, bytes), rdv (us) and w (us), in that order; a
 * line without them keeps the row's values (default or set by an earlier
 * line), so files written before these columns existed still get the
 * default eager limit. E = 0 means no rendezvous term, w = 0 no scheduler
 * term. Anything after a '#' is a comment (topocoll-logp writes the spread
 * there). A ninth number, X (the duplex factor, below), may follow w; a
 * line without it keeps the row's X. (Libraries before the E, rdv, w
 * columns read five numbers and skip the rest; those with them but before
 * X refuse a line of nine numbers: give them a file without the X column.)
 *     node       0.350    0.070    0.080    0.060    0.000110  4096  2.6  4.3  2
 *
 * E, rdv (rendezvous): a message of more than E bytes is not sent eagerly:
 * the sender announces it and the data moves once the receiver has
 * answered (Open MPI's shared-memory BTL above 4 KiB, MPICH's above 8 KiB
 * on this machine). rdv is what that adds to one message: the step of the
 * ping-pong time at E above the LogGP line (measured 2.5-3 us with Open MPI
 * and 3-7 us with MPICH on the CI machine: the handshake plus the
 * single-copy setup, far more than one small-message round trip). The cost
 * formulas add rdv to every message larger than E (tc_model_loggp_msg).
 * w (scheduler round): used only on an oversubscribed node (the context
 * knows), added to L of every message: a receiver that blocks gives up its
 * CPU and the sender may not be running. topocoll-logp measures it when
 * run with more processes than CPUs (time per hop of a token passed around
 * a ring of all ranks, less o_s + L + o_r of the base table, TC_LOGP_FILE);
 * 0 by default (it did not improve the picks on balance: docs/model.md).
 * X (duplex factor, 1 to 2): what one byte costs, in units of G, in a round
 * where a process sends m bytes and receives m bytes at once (Sendrecv:
 * recursive halving and doubling, rings). 1 = the two directions overlap
 * fully (a NIC that moves both by DMA), 2 = they serialise (the CPU copies
 * both: shared memory within a node, TCP). The cost formulas price such a
 * round o_s + X (m-1) G + L + o_r (tc_model_loggp_exchange). Defaults: 2
 * for the levels within a node, 1 for the network levels (docs/model.md,
 * "Duplex"); topocoll-logp measures it (exchange against ping-pong, the
 * ratio of their slopes). Outside [1, 2] the file and TC_LOGP are refused;
 * a value below 1 in a struct (one built without it: 0) counts as 1
 * (tc_logp_duplex).
 *
 * The "shm" row is not a hierarchy level: it is the cost of one flag moving
 * between two processes of a node through shared memory, used by the
 * shared-memory barriers (barrier/shm_barrier.c) instead of the MPI
 * parameters of the segment's level. Its fields:
 *   L    from the writer's store until the reader's poll sees it (the
 *        line transfer), less o_r (one-way flag ping-pong - o_r);
 *   o_s  what the process released last spends before its next flag: the
 *        library's own path of one barrier call (TC_Barrier on a
 *        one-process communicator); paid once per barrier;
 *   o_r  the reader's wait that finds its flag already set (the library's
 *        acquire-load poll, line held by the writer);
 *   g    the gap of the row: the larger of the interval between one
 *        process's consecutive flag writes to different lines (burst) and
 *        the latency of a fetch-add on a line another process modified last
 *        (one central-counter arrival: they serialise on that line);
 *   G    per byte of a copy-in by the writer plus a copy-out by the reader.
 * E, rdv, w are 0 and X is 1 there (not used). Files without a shm row load
 * as before (the row keeps its default).
 *
 * TC_LOGP (string): "L=1.2,o_s=0.3,o_r=0.3,g=0.2,G=0.0001,E=4096,rdv=2.6,w=0,X=2" sets those
 * fields for every level; "node:L=0.3,o_s=0.1;switch1:L=1.5" sets them per
 * level (entries separated by ';'). Fields not named keep their value.
 * "shm:L=0.05" sets the shm row; a string without a level sets the
 * hierarchy levels only (the shm row's values are of another kind).
 * Applied after the file.
 *
 * Bad input (unreadable file, unknown level, malformed or negative number,
 * X outside [1, 2], unknown field) -> a message naming the file and line (or the variable and
 * the offending text) through the caller's error buffer; the caller logs it
 * and keeps the defaults for what was bad.
 */
#ifndef TC_MODEL_LOGP_H
#define TC_MODEL_LOGP_H

#include <stddef.h>

#include "base/err.h"

typedef enum {
    TC_MODEL_LEVEL_CORE,
    TC_MODEL_LEVEL_L2,
    TC_MODEL_LEVEL_L3,
    TC_MODEL_LEVEL_NUMA,
    TC_MODEL_LEVEL_PACKAGE,
    TC_MODEL_LEVEL_NODE,
    TC_MODEL_LEVEL_SWITCH1,
    TC_MODEL_LEVEL_SWITCH2,
    TC_MODEL_LEVEL_SWITCH3,
    TC_MODEL_LEVEL_SWITCH4,
    TC_MODEL_LEVEL_LAST
} tc_model_level_t;

typedef struct tc_logp {
    double L;   /* latency: wire / coherence time of one small message */
    double o_s; /* send overhead (CPU busy in the send call) */
    double o_r; /* receive overhead */
    double g;   /* gap between consecutive small messages (1 / message rate) */
    double G;   /* gap per byte (LogGP): 1 / bandwidth */
    double E;   /* eager limit, bytes: a larger message first needs a rendezvous
                   handshake; 0 = none */
    double rdv; /* what the rendezvous adds to a message above E, us */
    double w;   /* scheduler round per blocking wait, added to L where the node
                   is oversubscribed (more processes than CPUs); 0 = none */
    double X;   /* duplex factor, 1..2: a byte of a simultaneous send + receive
                   costs X G (1 = full duplex); below 1 counts as 1 */
} tc_logp_t;

typedef enum {
    TC_LOGP_SOURCE_DEFAULT, /* built-in default for the level */
    TC_LOGP_SOURCE_FILE,    /* TC_LOGP_FILE */
    TC_LOGP_SOURCE_ENV      /* TC_LOGP */
} tc_logp_source_t;

typedef struct tc_logp_table {
    tc_logp_t level[TC_MODEL_LEVEL_LAST];
    tc_logp_source_t source[TC_MODEL_LEVEL_LAST]; /* where the last value set came from */
    tc_logp_t shm;                                /* flags in shared memory (see above) */
    tc_logp_source_t shm_source;
} tc_logp_table_t;

/* Name of the shm row in files, TC_LOGP and printouts. */
#define TC_LOGP_SHM_NAME "shm"

/* "core" .. "switch4"; NULL for an invalid level. */
const char *tc_model_level_name(tc_model_level_t level);
/* Parse a level name ("socket" is accepted for "package"); -1 if unknown. */
int tc_model_level_parse(const char *name);

/* The documented built-in defaults for every level and the shm row. */
void tc_logp_table_defaults(tc_logp_table_t *t);

/* Read @p path into @p t (levels and shm row it lists only). Returns TC_OK, or
 * TC_ERR_PARSE (TC_ERR_SYS with the errno when it cannot be read) with a
 * message "<path>:<line>: ..." in @p err (levels parsed before the bad line
 * are kept; nothing after it is applied). */
tc_err_t tc_logp_table_load_file(tc_logp_table_t *t, const char *path, char *err, size_t errlen);
/* Parse the same format from a string (for tests and the fuzzer); @p name
 * appears in messages in place of the path. */
tc_err_t tc_logp_table_load_text(tc_logp_table_t *t, const char *text, const char *name, char *err,
                                 size_t errlen);
/* Apply a TC_LOGP string. Returns TC_OK, or TC_ERR_PARSE with a message in @p err and @p t
 * unchanged. */
tc_err_t tc_logp_table_apply_env(tc_logp_table_t *t, const char *spec, char *err, size_t errlen);

/* The duplex factor of @p p as the cost formulas use it: X within [1, 2]
 * (a value below 1, e.g. 0 in a struct built without it, is 1). */
double tc_logp_duplex(const tc_logp_t *p);

/* Write @p t in the file format (with a header comment naming @p origin,
 * e.g. "topocoll-logp, np=2, Open MPI"). Returns TC_OK, or TC_ERR_SYS with the
 * errno as cause (errno also set). */
tc_err_t tc_logp_table_write(const tc_logp_table_t *t, const char *path, const char *origin);

/* The eager-limit step in a ping-pong series (topocoll-logp): one-way times
 * @p t[0..n-1] at increasing sizes @p sz. The step from k to k + 1 is the
 * time above the LogGP line, d = t[k+1] - t[k] - G (sz[k+1] - sz[k]). It
 * counts if d >= @p min_us and d >= @p min_rel * t[k]; of those, the one
 * with the largest d / t[k] is the switch to rendezvous (it multiplies a
 * small message's time, while a G fitted over larger sizes leaves absolute
 * excesses of several us between the largest sizes). Returns k, or -1. */
int tc_logp_eager_step(const double *sz, const double *t, int n, double G, double min_us,
                       double min_rel);

/* Robust summary of @p n repeated measurements of one quantity (topocoll-logp:
 * one value per repetition). A repetition during which a process of the pair
 * was descheduled (other jobs on the machine) measures the scheduler, not the
 * transport, and comes out far from the others. */
typedef struct tc_logp_robust {
    double med, q1, q3, min, max; /* of the kept values */
    int kept, dropped;            /* kept + dropped = n */
    int wide;                     /* the spread is large: the median is doubtful */
} tc_logp_robust_t;

/* Sorts @p v[0..n-1] (n >= 1; on return the kept values are v[0..kept-1],
 * sorted). A value is an outlier when it lies more than
 * TC_LOGP_OUTLIER_MADS scaled median absolute deviations (1.4826 MAD, the
 * standard deviation of a normal sample) from the median of all n; the
 * scale is at least 5% of |median| and @p floor (e.g. the clock's
 * resolution), so a tight sample drops nothing. The result is the median,
 * quartiles and range of the values kept. @p wide is set when more than a
 * quarter of the values were dropped or the kept interquartile range
 * exceeds half the median plus @p floor. Returns the number dropped. */
#define TC_LOGP_OUTLIER_MADS 5.0
int tc_logp_robust(double *v, int n, double floor, tc_logp_robust_t *out);

#endif /* TC_MODEL_LOGP_H */
