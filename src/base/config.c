/* Tunables: the one table of TC_* environment variables, their parser and the
 * per-process loaded values.
 *
 * "auto" fields. config.h's descriptor has no field for "0 means automatic, and
 * explicit values start at 4096", so the rule is carried by the default text: an
 * INT or SIZE entry whose default is the word "auto" accepts "auto" and "0" (both
 * give 0, meaning "derive it") in addition to the explicit range [min, max]. min is
 * therefore the smallest explicit value (4096 for the fragment size, a page), not
 * 0, and every consumer of the table (docs/tunables.md, topocoll-info) sees the real range
 * and "auto" as the default without a private side table.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "atomics.h"
#include "log.h"

#define MiB (1024.0 * 1024.0)
#define GiB (1024.0 * 1024.0 * 1024.0)

static const tc_cfg_desc_t tc_cfg_table[] = {
    [TC_CFG_VERBOSE] = {"TC_VERBOSE", TC_CFG_TYPE_INT, "0", NULL, 0, 3,
                        "Messages on stderr: 0 errors only, 1 adds fallbacks and disagreements "
                        "(each once), 2 adds context creation and release, 3 adds a line per "
                        "call."},
    [TC_CFG_STATS] = {"TC_STATS", TC_CFG_TYPE_BOOL, "0", NULL, 0, 1,
                      "At MPI_Finalize, print how many calls of each operation took each path "
                      "(shared memory, fallback to the MPI's own collective, ...)."},
    [TC_CFG_WAIT_TIMEOUT] = {"TC_WAIT_TIMEOUT", TC_CFG_TYPE_DOUBLE, "600", NULL, 0, 1e6,
                             "Seconds a process may wait inside a collective before the job is "
                             "aborted with a message naming the communicator, the stage and the "
                             "peer waited for; 0 waits forever."},
    [TC_CFG_SPIN_COUNT] = {"TC_SPIN_COUNT", TC_CFG_TYPE_INT, "200", NULL, 0, 10000000,
                           "Polls a waiting process makes before it gives the CPU to other "
                           "processes (sleeps or yields, see TC_WAIT); when a communicator has "
                           "more processes on a node than the node has CPUs the default becomes "
                           "0 (at once)."},
    [TC_CFG_WAIT] = {"TC_WAIT", TC_CFG_TYPE_ENUM, "auto", "auto,spin,yield,futex", 0, 0,
                     "How a process waits for a peer inside a collective: auto spins "
                     "TC_SPIN_COUNT polls (counted again whenever the peer makes progress), "
                     "then sleeps on a futex the peer wakes (yields when polling RMA); spin "
                     "never gives the CPU away; yield spins then calls sched_yield() (the "
                     "former behaviour); futex sleeps after TC_SPIN_COUNT polls."},
    [TC_CFG_SHM] = {"TC_SHM", TC_CFG_TYPE_BOOL, "1", NULL, 0, 1,
                    "Use the shared-memory path inside a node; 0 turns it off (e.g. to "
                    "compare with the MPI's own collectives)."},
    [TC_CFG_SHM_FRAGMENT_SIZE] = {"TC_SHM_FRAGMENT_SIZE", TC_CFG_TYPE_SIZE, "auto", NULL, 4096,
                                  16 * MiB,
                                  "Bytes per pipelined fragment of a shared-memory broadcast; "
                                  "auto derives it from the cost model (sqrt(m t_w / t) for "
                                  "TC_SHM_DESIGN_SIZE m, rounded up to whole pages)."},
    [TC_CFG_SHM_QUEUE_LENGTH] = {"TC_SHM_QUEUE_LENGTH", TC_CFG_TYPE_INT, "auto", NULL, 1, 65536,
                                 "Fragment buffers in each process's shared-memory queue; auto "
                                 "uses TC_SHM_QUEUE_BYTES divided by the fragment size, rounded "
                                 "to a multiple of TC_SHM_BANKS."},
    [TC_CFG_SHM_BANKS] = {"TC_SHM_BANKS", TC_CFG_TYPE_INT, "16", NULL, 1, 63,
                          "Banks each queue is split into, so the root can fill one bank while "
                          "readers are still copying out of another; more banks let the root run "
                          "further ahead of slow readers (oversubscribed nodes)."},
    [TC_CFG_SHM_QUEUE_BYTES] = {"TC_SHM_QUEUE_BYTES", TC_CFG_TYPE_SIZE, "1M", NULL, 4096, GiB,
                                "Shared-memory budget of each process's queue, used when "
                                "TC_SHM_QUEUE_LENGTH is auto."},
    [TC_CFG_SHM_DESIGN_SIZE] = {"TC_SHM_DESIGN_SIZE", TC_CFG_TYPE_SIZE, "1M", NULL, 1, GiB,
                                "Message size in bytes that the automatic fragment size is "
                                "tuned for."},
    [TC_CFG_SHM_TREE] = {"TC_SHM_TREE", TC_CFG_TYPE_ENUM, "kary", "flat,chain,kary,knomial", 0, 0,
                         "Shape of the tree that passes fragment notifications between the "
                         "processes of a node."},
    [TC_CFG_SHM_TREE_ARITY] = {"TC_SHM_TREE_ARITY", TC_CFG_TYPE_INT, "2", NULL, 2, 64,
                               "Children per process in the kary and knomial notification "
                               "trees."},
    [TC_CFG_SHM_MAX_SEGMENT] = {"TC_SHM_MAX_SEGMENT", TC_CFG_TYPE_SIZE, "256M", NULL, 4096,
                                64 * GiB,
                                "Largest shared-memory segment one communicator may create on "
                                "a node; a communicator that needs more uses the MPI's own "
                                "collectives."},
    [TC_CFG_SHM_MAX_TOTAL] = {"TC_SHM_MAX_TOTAL", TC_CFG_TYPE_SIZE, "1G", NULL, 4096, 1024 * GiB,
                              "Largest total of shared-memory segments one process may map "
                              "across all its communicators; beyond it new communicators use "
                              "the MPI's own collectives."},
    [TC_CFG_SHM_MAX_NODE] = {"TC_SHM_MAX_NODE", TC_CFG_TYPE_SIZE, "4G", NULL, 4096, 1024 * GiB,
                             "Largest total of the library's shared-memory segments on one node "
                             "(all processes of this user, counted from /proc at segment "
                             "creation); a communicator that would exceed it uses the MPI's own "
                             "collectives."},
    [TC_CFG_SHM_PLACEMENT] = {"TC_SHM_PLACEMENT", TC_CFG_TYPE_ENUM, "touch", "touch,mbind,none", 0,
                              0,
                              "Where each process's queue lives: touch = the process allocates it "
                              "itself (first-touch, its own NUMA node), mbind = bound to its node "
                              "with libnuma first, none = the creator allocates the whole segment "
                              "(NUMA-unaware baseline)."},
    [TC_CFG_SHM_MECHANISM] = {"TC_SHM_MECHANISM", TC_CFG_TYPE_ENUM, "auto", "auto,memfd,named", 0,
                              0,
                              "How a node's processes share a segment: memfd = an anonymous "
                              "memfd opened through /proc/<pid>/fd or pidfd_getfd (nothing "
                              "named, freed by the kernel when the last process exits), named "
                              "= a /dev/shm/topocoll-<pid>-<random> file unlinked once every "
                              "process has opened it, auto = memfd where every process of the "
                              "node can open it, else named (said once at TC_VERBOSE=1)."},
    [TC_CFG_SHM_TW_RATIO] = {"TC_SHM_TW_RATIO", TC_CFG_TYPE_INT, "1000", NULL, 1, 1000000,
                             "The model's t_w / t: a fragment notification's wait in units of "
                             "one byte's copy time; fragments are sqrt(m t_w / t) bytes (the "
                             "paper used 50; 1000-4000 measured on a 2-core KVM guest)."},
    [TC_CFG_SHM_STREAM_BYTES] = {"TC_SHM_STREAM_BYTES", TC_CFG_TYPE_SIZE, "128K", NULL, 0, GiB,
                                 "A message larger than the whole queue streams through only "
                                 "this many bytes of it (all banks), in fragments of a quarter "
                                 "bank, so the ring stays in the L2 cache; 0 uses the whole "
                                 "queue."},
    [TC_CFG_SHM_REDUCE_SLOTS] = {"TC_SHM_REDUCE_SLOTS", TC_CFG_TYPE_INT, "8", NULL, 2, 1024,
                                 "Fragment slots in each process's shared-memory area for "
                                 "Reduce and Allreduce, so a process can put the next fragments "
                                 "in place while its peers still combine earlier ones."},
    [TC_CFG_SHM_REDUCE_SLOT_BYTES] = {"TC_SHM_REDUCE_SLOT_BYTES", TC_CFG_TYPE_SIZE, "32K", NULL,
                                      1024, 16 * MiB,
                                      "Bytes per Reduce/Allreduce fragment slot (rounded down to a "
                                      "multiple of 64, a cache line)."},
    [TC_CFG_SHM_REDUCE_SLICE_MIN] =
        {"TC_SHM_REDUCE_SLICE_MIN", TC_CFG_TYPE_SIZE, "16K", NULL, 0, 16 * MiB,
         "On more than two processes, a Reduce/Allreduce fragment of "
         "at least this many bytes is combined slice by slice, every "
         "process reducing its own slice; smaller ones are folded by the "
         "receivers, or up a tree (TC_SHM_REDUCE_TREE_MAX)."},
    [TC_CFG_SHM_REDUCE_TREE_MAX] = {"TC_SHM_REDUCE_TREE_MAX", TC_CFG_TYPE_SIZE, "16K", NULL, 0,
                                    16 * MiB,
                                    "On more than two processes, a Reduce/Allreduce fragment of "
                                    "at most this many bytes is combined up a tree of partial "
                                    "results (rank order kept); 0 folds every contribution at "
                                    "the receivers. Unless set, 0 on a node with more processes "
                                    "than CPUs (each tree level then costs a scheduler round)."},
    [TC_CFG_SHM_REDUCE_TREE_ARITY] = {"TC_SHM_REDUCE_TREE_ARITY", TC_CFG_TYPE_INT, "2", NULL, 2, 64,
                                      "Children per process in the shared-memory reduction "
                                      "tree."},
    [TC_CFG_SHM_REDUCE_COPY] = {"TC_SHM_REDUCE_COPY", TC_CFG_TYPE_ENUM, "auto",
                                "auto,memcpy,stream", 0, 0,
                                "How a process copies its part of a Reduce/Allreduce of at least "
                                "256 KiB into its shared slots: memcpy (stays in its cache; the "
                                "reader pulls it cache to cache), stream (non-temporal stores "
                                "through memory), or auto (each process times both on its own "
                                "calls and keeps the cheaper, re-timing the other every 32 "
                                "calls of each size class). Local: processes may differ; results "
                                "do not."},
    [TC_CFG_SHM_BCAST_COPY] = {"TC_SHM_BCAST_COPY", TC_CFG_TYPE_ENUM, "auto", "auto,memcpy,stream",
                               0, 0,
                               "How the root of a shared-memory Bcast of at least 256 KiB (a "
                               "contiguous buffer) copies it into its queue: memcpy, stream "
                               "(non-temporal stores), or auto: messages larger than the queue "
                               "(which stream through TC_SHM_STREAM_BYTES) are timed per size "
                               "class as for TC_SHM_REDUCE_COPY, from the moment the readers "
                               "free the first bank; smaller ones use memcpy. Local: processes "
                               "may differ."},
    [TC_CFG_PMPI_RACE_MIN] =
        {"TC_PMPI_RACE_MIN", TC_CFG_TYPE_SIZE, "64K", NULL, 0, 1 * GiB,
         "TC_Bcast, TC_Reduce and TC_Allreduce of at least this many bytes time the "
         "library's path and the MPI's own on the caller's calls, per size class (powers "
         "of two), and use the faster: both alternate for the first calls of a class, "
         "then the faster runs, the other again every 32nd call (every 256th when it was "
         "1.5x slower or more). Times are agreed over the processes, so all run the same "
         "one. Reductions race only when every algorithm gives the same bits: integer and "
         "logical operations, and on two processes sums and products of floats and "
         "doubles; other floating-point reductions always take the library's path. 0: "
         "never race."},
    [TC_CFG_HIER] = {"TC_HIER", TC_CFG_TYPE_BOOL, "1", NULL, 0, 1,
                     "Use the hierarchical algorithms on communicators that span several nodes or "
                     "whose levels TC_LOCALITY_FILE poses; 0 ignores TC_LOCALITY_FILE and leaves "
                     "communicators spanning several nodes to the MPI's own collectives."},
    [TC_CFG_HIER_LEVELS] =
        {"TC_HIER_LEVELS", TC_CFG_TYPE_STRING, "numa,package,node,switch1,switch2,switch3,switch4",
         NULL, 0, 0,
         "Hierarchy levels to group processes by, bottom-up, separated by ',' "
         "or '-' (core, l2, l3, numa, package or socket, node, switch1..switch4, "
         "all, none, or paper 001's codes such as NM-SK-ND-SW); a level the "
         "machine does not show is skipped."},
    [TC_CFG_NETWORK_TOPOLOGY_FILE] = {"TC_NETWORK_TOPOLOGY_FILE", TC_CFG_TYPE_STRING, "", NULL, 0,
                                      0,
                                      "File naming each compute node's switches, one line "
                                      "'<node> <leaf-switch> [<next-switch> ...]' per node, from "
                                      "which the switch levels come; empty: no switch levels."},
    [TC_CFG_LOCALITY_FILE] = {"TC_LOCALITY_FILE", TC_CFG_TYPE_STRING, "", NULL, 0, 0,
                              "File giving every MPI_COMM_WORLD rank's whole locality vector "
                              "(node, package, NUMA node, caches, core, switches) instead of hwloc "
                              "and the network file, to pose a machine for tests; empty: none."},
    [TC_CFG_HIER_SHM_LEVEL] = {"TC_HIER_SHM_LEVEL", TC_CFG_TYPE_ENUM, "auto",
                               "auto,none,l2,l3,numa,package,node", 0, 0,
                               "Level whose groups share a memory segment (the levels below it "
                               "are not used); auto takes the highest enabled level up to node "
                               "whose units each lie within one real node, none uses none."},
    [TC_CFG_HIER_BCAST] = {"TC_HIER_BCAST", TC_CFG_TYPE_STRING, "auto", NULL, 0, 0,
                           "Broadcast algorithm per level as 'level:alg[:k],...' with alg flat, "
                           "knomial[:k], scatter_allgather or auto (a bare alg sets every level; "
                           "levels not named use auto: TC_TUNING_FILE, then the LogGP model "
                           "(TC_HIER_MODEL))."},
    [TC_CFG_HIER_REDUCE] = {"TC_HIER_REDUCE", TC_CFG_TYPE_STRING, "auto", NULL, 0, 0,
                            "Reduce algorithm per level as 'level:alg,...' with alg flat, "
                            "binomial, rsg (reduce-scatter then gather) or auto (a bare alg sets "
                            "every level; levels not named use auto: TC_TUNING_FILE, then the "
                            "LogGP model (TC_HIER_MODEL))."},
    [TC_CFG_HIER_ALLREDUCE] = {"TC_HIER_ALLREDUCE", TC_CFG_TYPE_ENUM, "rab", "rab,rb", 0, 0,
                               "How Allreduce combines the levels: rab reduces up to the top "
                               "group, allreduces among its members and broadcasts down; rb "
                               "reduces to rank 0 and broadcasts from it."},
    [TC_CFG_HIER_ALLREDUCE_TOP] = {"TC_HIER_ALLREDUCE_TOP", TC_CFG_TYPE_ENUM, "auto",
                                   "auto,recdbl,ring", 0, 0,
                                   "Allreduce among the top group's members: recursive doubling, "
                                   "ring, or auto (the tuning file, then the model)."},
    [TC_CFG_HIER_LARGE] = {"TC_HIER_LARGE", TC_CFG_TYPE_SIZE, "64K", NULL, 0, 64 * GiB,
                           "With TC_HIER_MODEL=0: message size (rounded up to a power of two) "
                           "from which auto takes scatter_allgather, rsg (groups of more than "
                           "two) and ring; ignored by the model."},
    [TC_CFG_HIER_SEGMENT] = {"TC_HIER_SEGMENT", TC_CFG_TYPE_SIZE, "1M", NULL, 4096, GiB,
                             "Large messages cross the hierarchy's levels in pieces of this many "
                             "bytes, so the levels work on different pieces at the same time."},
    [TC_CFG_BARRIER] = {"TC_BARRIER", TC_CFG_TYPE_ENUM, "auto",
                        "auto,central,tree,dissemination,tournament,pairwise", 0, 0,
                        "Message-based barrier algorithm between nodes (or groups without "
                        "shared memory); auto takes the cheapest by the LogP model."},
    [TC_CFG_BARRIER_ARITY] = {"TC_BARRIER_ARITY", TC_CFG_TYPE_INT, "4", NULL, 2, 64,
                              "Children per process in the message-based combining-tree "
                              "barrier."},
    [TC_CFG_SHM_BARRIER] = {"TC_SHM_BARRIER", TC_CFG_TYPE_ENUM, "auto",
                            "auto,central,tree,dissemination,tournament", 0, 0,
                            "Shared-memory barrier algorithm inside a node; auto takes the "
                            "cheapest by the LogP model."},
    [TC_CFG_SHM_BARRIER_ARITY] = {"TC_SHM_BARRIER_ARITY", TC_CFG_TYPE_INT, "4", NULL, 2, 64,
                                  "Children per process in the shared-memory combining-tree "
                                  "barrier."},
    [TC_CFG_LOGP_FILE] = {"TC_LOGP_FILE", TC_CFG_TYPE_STRING, "", NULL, 0, 0,
                          "LogP/LogGP parameters per level, as written by topocoll-logp; "
                          "empty: the built-in defaults."},
    [TC_CFG_LOGP] = {"TC_LOGP", TC_CFG_TYPE_STRING, "", NULL, 0, 0,
                     "LogP/LogGP parameters in microseconds, 'L=..,o_s=..,o_r=..,g=..,G=..' for "
                     "every level or 'level:L=..,...;level:...'; applied after TC_LOGP_FILE."},
    [TC_CFG_TUNING_FILE] =
        {"TC_TUNING_FILE", TC_CFG_TYPE_STRING, "", NULL, 0, 0,
         "File of fixed algorithm choices, lines '<op> <level> <min-bytes> "
         "<alg>[:k]' (docs/model.md), applied after explicit TC_HIER_*/TC_BARRIER "
         "settings and before the LogP model; empty: none."},
    [TC_CFG_MODEL_GAMMA] = {"TC_MODEL_GAMMA", TC_CFG_TYPE_DOUBLE, "6.6667e-05", NULL, 0, 1,
                            "Reduction cost per byte (us) the model uses to choose "
                            "Reduce/Allreduce algorithms; default ~15 GB/s, the library's "
                            "MPI_SUM loop over doubles (core/redop.c), ~15 GB/s on 1 MiB "
                            "vectors in cache on the CI machine."},
    [TC_CFG_HIER_MODEL] = {"TC_HIER_MODEL", TC_CFG_TYPE_BOOL, "1", NULL, 0, 1,
                           "Levels left on auto get the LogGP model's cheapest algorithm per "
                           "message size; 0 uses the TC_HIER_LARGE threshold rule instead (the "
                           "tuning file applies either way)."},
    [TC_CFG_LOCK_SCHEME] = {"TC_LOCK_SCHEME", TC_CFG_TYPE_ENUM, "n-mcs",
                            "rwlock,1n-mutex,2n-mutex,n-mutex-signal,n-mcs", 0, 0,
                            "Reader-writer lock of the node store (values the node's leader "
                            "shares with its processes, e.g. the LogP table); n-mcs had the "
                            "highest read throughput in the lock benchmark."},
    [TC_CFG_RMA_BCAST] = {"TC_RMA_BCAST", TC_CFG_TYPE_ENUM, "auto", "auto,linear,binomial", 0, 0,
                          "One-sided broadcast algorithm of TC_Rma_bcast calls that ask for the "
                          "default: linear puts from the root, the binomial tree forwarded by "
                          "helper threads, or auto (binomial from TC_RMA_BCAST_SWITCH bytes)."},
    [TC_CFG_RMA_BCAST_SWITCH] = {"TC_RMA_BCAST_SWITCH", TC_CFG_TYPE_SIZE, "16M", NULL, 0,
                                 1024 * GiB,
                                 "Message size from which TC_RMA_BCAST=auto uses the binomial "
                                 "tree (measured crossover at np=8 on one 2-core node)."},
    [TC_CFG_RMA_PUTLOOP] = {"TC_RMA_PUTLOOP", TC_CFG_TYPE_ENUM, "down", "down,up", 0, 0,
                            "Order of the binomial tree's forwarding: down = largest subtree "
                            "first (log2 P steps), up = paper 002's upward bit scan."},
    [TC_CFG_RMA_POLL_SPIN] = {"TC_RMA_POLL_SPIN", TC_CFG_TYPE_INT, "0", NULL, 0, 1000000,
                              "Polls the RMA helper thread makes (yielding) before it starts "
                              "sleeping; 0 because polling helpers starved MPICH's main "
                              "thread."},
    [TC_CFG_RMA_POLL_MIN_US] = {"TC_RMA_POLL_MIN_US", TC_CFG_TYPE_INT, "16", NULL, 1, 1000000,
                                "The RMA helper's first sleep when idle, microseconds (doubled "
                                "up to TC_RMA_POLL_MAX_US)."},
    [TC_CFG_RMA_POLL_MAX_US] = {"TC_RMA_POLL_MAX_US", TC_CFG_TYPE_INT, "1000", NULL, 1, 1000000,
                                "The RMA helper's longest idle sleep, microseconds (paper: 1 "
                                "ms); an idle helper then costs 2.5-4% of a core."},
};
_Static_assert(sizeof tc_cfg_table / sizeof tc_cfg_table[0] == TC_CFG_LAST,
               "one tunables table entry per tc_cfg_id_t");

/* Word lists of the ENUM entries, in the order of their C enums (config.h);
 * test_config checks that they spell the entries' accepted lists. */
static const char *const tc_cfg_tree_words[] = {"flat", "chain", "kary", "knomial"};
_Static_assert(sizeof tc_cfg_tree_words / sizeof tc_cfg_tree_words[0] == TC_TREE_LAST,
               "one word per tc_tree_kind_t");
static const char *const tc_cfg_lock_words[] = {"rwlock", "1n-mutex", "2n-mutex", "n-mutex-signal",
                                                "n-mcs"};
_Static_assert(sizeof tc_cfg_lock_words / sizeof tc_cfg_lock_words[0] == TC_LOCK_SCHEME_CFG_LAST,
               "one word per tc_lock_scheme_cfg_t");
static const char *const tc_cfg_placement_words[] = {"touch", "mbind", "none"};
_Static_assert(sizeof tc_cfg_placement_words / sizeof tc_cfg_placement_words[0] ==
                   TC_PLACEMENT_LAST,
               "one word per tc_placement_t");
static const char *const tc_cfg_mechanism_words[] = {"auto", "memfd", "named"};
_Static_assert(sizeof tc_cfg_mechanism_words / sizeof tc_cfg_mechanism_words[0] ==
                   TC_SHM_MECHANISM_LAST,
               "one word per tc_shm_mechanism_t");
static const char *const tc_cfg_shm_level_words[] = {"auto", "none",    "l2",  "l3",
                                                     "numa", "package", "node"};
_Static_assert(sizeof tc_cfg_shm_level_words / sizeof tc_cfg_shm_level_words[0] ==
                   TC_HIER_SHM_LEVEL_LAST,
               "one word per tc_hier_shm_level_cfg_t");
static const char *const tc_cfg_scheme_words[] = {"rab", "rb"};
_Static_assert(sizeof tc_cfg_scheme_words / sizeof tc_cfg_scheme_words[0] == TC_HIER_SCHEME_LAST,
               "one word per tc_hier_scheme_cfg_t");
static const char *const tc_cfg_top_words[] = {"auto", "recdbl", "ring"};
_Static_assert(sizeof tc_cfg_top_words / sizeof tc_cfg_top_words[0] == TC_HIER_TOP_LAST,
               "one word per tc_hier_top_cfg_t");

/* ------------------------------------------------------------------------ */
/* Parsing (pure) */

/* Longest value quoted in a message; longer ones are cut with "...". */
#define TC_CFG_QUOTE_MAX 64

const tc_cfg_desc_t *tc_config_desc(tc_cfg_id_t id)
{
    if ((int)id < 0 || id >= TC_CFG_LAST)
        return NULL;
    return &tc_cfg_table[id];
}

static bool tc_config_is_auto(const tc_cfg_desc_t *desc)
{
    return (desc->type == TC_CFG_TYPE_INT || desc->type == TC_CFG_TYPE_SIZE) && desc->def &&
           strcmp(desc->def, "auto") == 0;
}

void tc_config_size_format(double v, char *buf, size_t len)
{
    /* Integer arithmetic: the bounds are exact. */
    const uint64_t mib = 1024 * 1024, gib = mib * 1024;
    uint64_t x = (uint64_t)v;
    if (x >= gib && x % gib == 0)
        snprintf(buf, len, "%lluG", (unsigned long long)(x / gib));
    else if (x >= mib && x % mib == 0)
        snprintf(buf, len, "%lluM", (unsigned long long)(x / mib));
    else
        snprintf(buf, len, "%llu", (unsigned long long)x);
}

/* Copy @p text for quoting into @p buf (TC_CFG_QUOTE_MAX + 4 bytes): control
 * characters become '?', long values are cut and end in "...". */
static void tc_config_quote(const char *text, char *buf)
{
    size_t n = 0;
    for (; text[n] && n < TC_CFG_QUOTE_MAX; n++)
        buf[n] = iscntrl((unsigned char)text[n]) ? '?' : text[n];
    strcpy(buf + n, text[n] ? "..." : "");
}

static void tc_config_error(const tc_cfg_desc_t *desc, const char *text, char *err, size_t errlen)
{
    char quoted[TC_CFG_QUOTE_MAX + 4];
    char lo[32], hi[32];
    const char *autotext = tc_config_is_auto(desc) ? "auto (or 0) or " : "";

    if (!err || errlen == 0)
        return;
    tc_config_quote(text, quoted);
    switch (desc->type) {
    case TC_CFG_TYPE_BOOL:
        snprintf(err, errlen, "%s=\"%s\": expected one of 0, 1, yes, no, on, off, true, false",
                 desc->name, quoted);
        break;
    case TC_CFG_TYPE_INT:
        snprintf(err, errlen, "%s=\"%s\": expected %san integer in %.0f..%.0f", desc->name, quoted,
                 autotext, desc->min, desc->max);
        break;
    case TC_CFG_TYPE_SIZE:
        tc_config_size_format(desc->min, lo, sizeof lo);
        tc_config_size_format(desc->max, hi, sizeof hi);
        snprintf(err, errlen,
                 "%s=\"%s\": expected %sa size in bytes in %s..%s (optional suffix K, M or G, "
                 "binary)",
                 desc->name, quoted, autotext, lo, hi);
        break;
    case TC_CFG_TYPE_DOUBLE:
        snprintf(err, errlen, "%s=\"%s\": expected a number in %.15g..%.15g", desc->name, quoted,
                 desc->min, desc->max);
        break;
    case TC_CFG_TYPE_ENUM:
        snprintf(err, errlen, "%s=\"%s\": expected one of %s", desc->name, quoted,
                 desc->accepted ? desc->accepted : "(none)");
        break;
    case TC_CFG_TYPE_STRING:
        snprintf(err, errlen, "%s=\"%s\": expected at most %d bytes of text", desc->name, quoted,
                 TC_CFG_STRING_MAX);
        break;
    default:
        snprintf(err, errlen, "%s=\"%s\": unknown variable type", desc->name, quoted);
        break;
    }
}

/* Strip leading and trailing white space into @p buf; false if it does not fit. */
static bool tc_config_trim(const char *text, char *buf, size_t len)
{
    const char *end;
    size_t n;

    while (isspace((unsigned char)*text))
        text++;
    end = text + strlen(text);
    while (end > text && isspace((unsigned char)end[-1]))
        end--;
    n = (size_t)(end - text);
    if (n + 1 > len)
        return false;
    memcpy(buf, text, n);
    buf[n] = '\0';
    return true;
}

/* Length of @p text without leading and trailing white space. */
static size_t tc_config_trimmed_len(const char *text)
{
    const char *end;

    while (isspace((unsigned char)*text))
        text++;
    end = text + strlen(text);
    while (end > text && isspace((unsigned char)end[-1]))
        end--;
    return (size_t)(end - text);
}

static tc_err_t tc_config_parse_bool(const char *s, int64_t *v)
{
    static const char *const yes[] = {"1", "yes", "on", "true"};
    static const char *const no[] = {"0", "no", "off", "false"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *v = 1;
            return TC_OK;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *v = 0;
            return TC_OK;
        }
    }
    return tc_err(TC_ERR_PARSE);
}

static tc_err_t tc_config_parse_int(const char *s, int64_t *v)
{
    char *end;
    long long x;

    /* strtoll alone would accept inner white space and an empty digit string. */
    if (!(isdigit((unsigned char)s[0]) ||
          ((s[0] == '-' || s[0] == '+') && isdigit((unsigned char)s[1]))))
        return tc_err(TC_ERR_PARSE);
    errno = 0;
    x = strtoll(s, &end, 10);
    if (errno == ERANGE || *end != '\0')
        return tc_err(TC_ERR_PARSE);
    *v = (int64_t)x;
    return TC_OK;
}

/* Digits with an optional binary suffix; no sign, no fraction. */
static tc_err_t tc_config_parse_size(const char *s, int64_t *v)
{
    static const struct {
        const char *word;
        unsigned shift;
    } suffixes[] = {{"", 0},     {"k", 10}, {"kib", 10}, {"m", 20},
                    {"mib", 20}, {"g", 30}, {"gib", 30}};
    uint64_t x = 0;
    const char *p = s;

    if (!isdigit((unsigned char)*p))
        return tc_err(TC_ERR_PARSE);
    for (; isdigit((unsigned char)*p); p++) {
        uint64_t d = (uint64_t)(*p - '0');
        if (x > (UINT64_MAX - d) / 10)
            return tc_err(TC_ERR_PARSE);
        x = x * 10 + d;
    }
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        if (strcasecmp(p, suffixes[i].word) != 0)
            continue;
        /* Keep the result representable as int64_t (and exactly as a double
         * for every value within the table's bounds). */
        if (x > ((uint64_t)INT64_MAX >> suffixes[i].shift))
            return tc_err(TC_ERR_PARSE);
        *v = (int64_t)(x << suffixes[i].shift);
        return TC_OK;
    }
    return tc_err(TC_ERR_PARSE);
}

static tc_err_t tc_config_parse_double(const char *s, double *v)
{
    char *end;
    double x;

    if (*s == '\0')
        return tc_err(TC_ERR_PARSE);
    errno = 0;
    x = strtod(s, &end);
    if (*end != '\0' || !isfinite(x))
        return tc_err(TC_ERR_PARSE);
    *v = x;
    return TC_OK;
}

/* Index of @p s in the comma-separated @p list (case-insensitive), or -1. */
static int64_t tc_config_parse_enum(const char *list, const char *s)
{
    size_t n = strlen(s);
    int64_t index = 0;

    if (!list || n == 0)
        return -1;
    for (const char *w = list;; index++) {
        const char *comma = strchr(w, ',');
        size_t wl = comma ? (size_t)(comma - w) : strlen(w);
        if (wl == n && strncasecmp(w, s, n) == 0)
            return index;
        if (!comma)
            return -1;
        w = comma + 1;
    }
}

tc_err_t tc_config_parse(const tc_cfg_desc_t *desc, const char *text, tc_cfg_value_t *out,
                         char *err, size_t errlen)
{
    /* Longer than any valid value by far; a value that does not fit is invalid. */
    char s[128];
    int64_t i = 0;
    double d = 0;
    tc_err_t rc = tc_err(TC_ERR_PARSE);

    if (err && errlen)
        err[0] = '\0';
    if (!desc || !out)
        return tc_err(TC_ERR_ARG);
    if (!text)
        text = "";
    if (desc->type == TC_CFG_TYPE_STRING) {
        /* Free text: only its length is checked here; tc_config_string()
         * keeps the trimmed copy. */
        size_t n = tc_config_trimmed_len(text);
        if (n > TC_CFG_STRING_MAX)
            goto fn_fail;
        out->i = (int64_t)n;
        out->d = (double)n;
        return 0;
    }
    if (!tc_config_trim(text, s, sizeof s))
        goto fn_fail;

    if (tc_config_is_auto(desc) && strcasecmp(s, "auto") == 0) {
        out->i = 0;
        out->d = 0;
        return 0;
    }

    switch (desc->type) {
    case TC_CFG_TYPE_BOOL:
        rc = tc_config_parse_bool(s, &i);
        d = (double)i;
        break;
    case TC_CFG_TYPE_INT:
    case TC_CFG_TYPE_SIZE:
        rc = desc->type == TC_CFG_TYPE_INT ? tc_config_parse_int(s, &i)
                                           : tc_config_parse_size(s, &i);
        d = (double)i;
        /* An auto field takes 0 (however spelt) besides its explicit range. */
        if (rc == TC_OK && !(i == 0 && tc_config_is_auto(desc)) && (d < desc->min || d > desc->max))
            rc = tc_err(TC_ERR_PARSE);
        break;
    case TC_CFG_TYPE_DOUBLE:
        rc = tc_config_parse_double(s, &d);
        if (rc == TC_OK && (d < desc->min || d > desc->max))
            rc = tc_err(TC_ERR_PARSE);
        if (rc == TC_OK && d > -9e18 && d < 9e18) /* keep the conversion defined */
            i = (int64_t)d;
        break;
    case TC_CFG_TYPE_ENUM:
        i = tc_config_parse_enum(desc->accepted, s);
        rc = i < 0 ? tc_err(TC_ERR_PARSE) : TC_OK;
        d = (double)i;
        break;
    default:
        break;
    }
    if (rc != 0)
        goto fn_fail;
    out->i = i;
    out->d = d;
    return TC_OK;

fn_fail:
    tc_config_error(desc, text, err, errlen);
    return tc_err(TC_ERR_PARSE);
}

/* ------------------------------------------------------------------------ */
/* Loaded values */

static tc_cfg_value_t tc_cfg_values[TC_CFG_LAST];
static tc_cfg_source_t tc_cfg_sources[TC_CFG_LAST];
static char *tc_cfg_raw[TC_CFG_LAST];
static char *tc_cfg_str[TC_CFG_LAST]; /* STRING values from the environment, trimmed */

/* Double-checked loading instead of pthread_once, because tc_config_reset must
 * be able to re-arm it (a pthread_once_t cannot portably be reset). */
static pthread_mutex_t tc_cfg_lock = PTHREAD_MUTEX_INITIALIZER;
static tc_atomic_u64_t tc_cfg_loaded;

static void tc_config_read_env(void)
{
    char err[256];

    for (int id = 0; id < TC_CFG_LAST; id++) {
        const tc_cfg_desc_t *desc = &tc_cfg_table[id];
        const char *env = getenv(desc->name);

        tc_cfg_values[id] = (tc_cfg_value_t){0, 0};
        tc_cfg_sources[id] = TC_CFG_SRC_DEFAULT;
        free(tc_cfg_raw[id]);
        tc_cfg_raw[id] = NULL;
        free(tc_cfg_str[id]);
        tc_cfg_str[id] = NULL;
        if (env) {
            tc_cfg_raw[id] = strdup(env);
            if (tc_config_parse(desc, env, &tc_cfg_values[id], err, sizeof err) == 0) {
                if (desc->type == TC_CFG_TYPE_STRING) {
                    size_t n = (size_t)tc_cfg_values[id].i;
                    char *copy = malloc(n + 1);
                    if (!copy) {
                        fprintf(stderr, "topocoll: %s: out of memory; using the default \"%s\"\n",
                                desc->name, desc->def);
                        tc_cfg_sources[id] = TC_CFG_SRC_INVALID;
                        (void)tc_config_parse(desc, desc->def, &tc_cfg_values[id], NULL, 0);
                        continue;
                    }
                    (void)tc_config_trim(env, copy, n + 1);
                    tc_cfg_str[id] = copy;
                }
                tc_cfg_sources[id] = TC_CFG_SRC_ENV;
                continue;
            }
            tc_cfg_sources[id] = TC_CFG_SRC_INVALID;
            /* Always printed: the user asked for something and does not get it. */
            fprintf(stderr, "topocoll: %s; using the default %s\n", err,
                    desc->def[0] ? desc->def : "(empty)");
        }
        /* Defaults are checked by test_config, so this cannot fail. */
        (void)tc_config_parse(desc, desc->def, &tc_cfg_values[id], NULL, 0);
    }
    tc_log_level = (int)tc_cfg_values[TC_CFG_VERBOSE].i;
}

void tc_config_load(void)
{
    /* acquire: pairs with the release below, so the values are visible. */
    if (tc_load_acquire_u64(&tc_cfg_loaded))
        return;
    pthread_mutex_lock(&tc_cfg_lock);
    if (!tc_load_relaxed_u64(&tc_cfg_loaded)) {
        tc_config_read_env();
        /* release: pairs with the acquire above. */
        tc_store_release_u64(&tc_cfg_loaded, 1);
    }
    pthread_mutex_unlock(&tc_cfg_lock);
}

/* Not thread-safe: no other thread may be loading or reading the values. */
void tc_config_reset(void)
{
    pthread_mutex_lock(&tc_cfg_lock);
    tc_store_relaxed_u64(&tc_cfg_loaded, 0);
    pthread_mutex_unlock(&tc_cfg_lock);
}

int64_t tc_config_int(tc_cfg_id_t id)
{
    tc_config_load();
    return (int)id >= 0 && id < TC_CFG_LAST ? tc_cfg_values[id].i : 0;
}

double tc_config_double(tc_cfg_id_t id)
{
    tc_config_load();
    return (int)id >= 0 && id < TC_CFG_LAST ? tc_cfg_values[id].d : 0;
}

tc_cfg_source_t tc_config_source(tc_cfg_id_t id)
{
    tc_config_load();
    return (int)id >= 0 && id < TC_CFG_LAST ? tc_cfg_sources[id] : TC_CFG_SRC_DEFAULT;
}

const char *tc_config_raw(tc_cfg_id_t id)
{
    tc_config_load();
    return (int)id >= 0 && id < TC_CFG_LAST ? tc_cfg_raw[id] : NULL;
}

const char *tc_config_string(tc_cfg_id_t id)
{
    tc_config_load();
    if ((int)id < 0 || id >= TC_CFG_LAST || tc_cfg_table[id].type != TC_CFG_TYPE_STRING)
        return "";
    return tc_cfg_str[id] ? tc_cfg_str[id] : tc_cfg_table[id].def;
}

/* Every ENUM entry's words, cut once from its accepted list: the words are
 * the values' names in index order, so no entry needs a word array of its own. */
#define TC_CFG_ENUM_TEXT_MAX  256
#define TC_CFG_ENUM_WORDS_MAX 16
static char tc_cfg_enum_text[TC_CFG_LAST][TC_CFG_ENUM_TEXT_MAX];
static const char *tc_cfg_enum_words[TC_CFG_LAST][TC_CFG_ENUM_WORDS_MAX];
static int tc_cfg_enum_count[TC_CFG_LAST];
static pthread_once_t tc_cfg_enum_once = PTHREAD_ONCE_INIT;

static void tc_config_enum_split(void)
{
    for (int id = 0; id < TC_CFG_LAST; id++) {
        const tc_cfg_desc_t *desc = &tc_cfg_table[id];
        char *w = tc_cfg_enum_text[id];

        if (desc->type != TC_CFG_TYPE_ENUM || !desc->accepted ||
            strlen(desc->accepted) >= TC_CFG_ENUM_TEXT_MAX)
            continue; /* test_config checks that every list fits */
        strcpy(w, desc->accepted);
        while (w && tc_cfg_enum_count[id] < TC_CFG_ENUM_WORDS_MAX) {
            char *comma = strchr(w, ',');
            tc_cfg_enum_words[id][tc_cfg_enum_count[id]++] = w;
            if (comma)
                *comma++ = '\0';
            w = comma;
        }
    }
}

const char *tc_config_enum_word(tc_cfg_id_t id, int64_t index)
{
    if ((int)id < 0 || id >= TC_CFG_LAST)
        return "?";
    pthread_once(&tc_cfg_enum_once, tc_config_enum_split);
    return index >= 0 && index < tc_cfg_enum_count[id] ? tc_cfg_enum_words[id][index] : "?";
}

const char *tc_config_enum_name(tc_cfg_id_t id, int64_t index)
{
    const char *const *words = NULL;
    int64_t n = 0;

    switch (id) {
    case TC_CFG_SHM_TREE:
        words = tc_cfg_tree_words;
        n = TC_TREE_LAST;
        break;
    case TC_CFG_SHM_PLACEMENT:
        words = tc_cfg_placement_words;
        n = TC_PLACEMENT_LAST;
        break;
    case TC_CFG_SHM_MECHANISM:
        words = tc_cfg_mechanism_words;
        n = TC_SHM_MECHANISM_LAST;
        break;
    case TC_CFG_LOCK_SCHEME:
        words = tc_cfg_lock_words;
        n = TC_LOCK_SCHEME_CFG_LAST;
        break;
    case TC_CFG_HIER_SHM_LEVEL:
        words = tc_cfg_shm_level_words;
        n = TC_HIER_SHM_LEVEL_LAST;
        break;
    case TC_CFG_HIER_ALLREDUCE:
        words = tc_cfg_scheme_words;
        n = TC_HIER_SCHEME_LAST;
        break;
    case TC_CFG_HIER_ALLREDUCE_TOP:
        words = tc_cfg_top_words;
        n = TC_HIER_TOP_LAST;
        break;
    default:
        break;
    }
    if (words)
        return index >= 0 && index < n ? words[index] : "?";
    return tc_config_enum_word(id, index);
}

static void tc_config_size_text(int64_t v, char *buf, size_t len)
{
    /* As a user would write it: the largest binary suffix that divides it. */
    const int64_t kib = 1024;
    if (v >= kib && v % kib == 0 && (v % (kib * kib) != 0 || v < kib * kib))
        snprintf(buf, len, "%lldK", (long long)(v / kib));
    else
        tc_config_size_format((double)v, buf, len);
}

void tc_config_value_text(tc_cfg_id_t id, char *buf, size_t len)
{
    const tc_cfg_desc_t *desc = tc_config_desc(id);
    int64_t i;

    if (!buf || len == 0)
        return;
    if (!desc) {
        snprintf(buf, len, "?");
        return;
    }
    i = tc_config_int(id);
    switch (desc->type) {
    case TC_CFG_TYPE_BOOL:
        snprintf(buf, len, "%d", i ? 1 : 0);
        break;
    case TC_CFG_TYPE_INT:
        if (i == 0 && tc_config_is_auto(desc))
            snprintf(buf, len, "auto");
        else
            snprintf(buf, len, "%lld", (long long)i);
        break;
    case TC_CFG_TYPE_SIZE:
        if (i == 0 && tc_config_is_auto(desc))
            snprintf(buf, len, "auto");
        else
            tc_config_size_text(i, buf, len);
        break;
    case TC_CFG_TYPE_DOUBLE:
        snprintf(buf, len, "%.15g", tc_config_double(id));
        break;
    case TC_CFG_TYPE_ENUM:
        snprintf(buf, len, "%s", tc_config_enum_name(id, i));
        break;
    case TC_CFG_TYPE_STRING: {
        const char *s = tc_config_string(id);
        snprintf(buf, len, "%s", s[0] ? s : "(unset)");
        break;
    }
    default:
        snprintf(buf, len, "?");
        break;
    }
}
