/* Per-process call counts by path (TC_STATS=1 prints them at MPI_Finalize).
 * Counters are relaxed atomics: they only need to be exact after the calls
 * are over. */
#ifndef TC_CORE_STATS_H
#define TC_CORE_STATS_H

#include <stdatomic.h>

typedef enum {
    TC_OP_BCAST,
    TC_OP_REDUCE,
    TC_OP_ALLREDUCE,
    TC_OP_BARRIER,
    TC_OP_REDUCE_SCATTER_BLOCK,
    TC_OP_REDUCE_SCATTER,
    TC_OP_SCAN,
    TC_OP_EXSCAN,
    TC_OP_ALLGATHER,
    TC_OP_ALLGATHERV,
    TC_OP_GATHER,
    TC_OP_GATHERV,
    TC_OP_SCATTER,
    TC_OP_SCATTERV,
    TC_OP_ALLTOALL,
    TC_OP_ALLTOALLV,
    TC_OP_LAST
} tc_op_t;

typedef enum {
    TC_PATH_SHM,             /* shared-memory algorithm */
    TC_PATH_HIER,            /* hierarchical algorithm (several levels) */
    TC_PATH_TRIVIAL,         /* nothing to move: count 0 or one process */
    TC_PATH_PMPI_MULTINODE,  /* communicator spans nodes: PMPI until the hierarchy lands */
    TC_PATH_PMPI_SHM_OFF,    /* TC_SHM=0 on some rank */
    TC_PATH_PMPI_NO_SEGMENT, /* segment could not be created or was over the cap */
    TC_PATH_PMPI_INTERCOMM,  /* intercommunicator */
    TC_PATH_PMPI_OP,         /* (datatype, op) the library does not reduce itself, or a
                                non-commutative op across several levels */
    TC_PATH_PMPI_RACE,       /* the MPI's own, measured faster for this size (core/race.h) */
    /* an MPI-4 _c call with a count beyond INT_MAX: PMPI_*_c (core/large_count.c) */
    TC_PATH_PMPI_LARGE_COUNT,
    TC_PATH_LAST
} tc_path_t;

extern _Atomic unsigned long long tc_stats_counts[TC_OP_LAST][TC_PATH_LAST];
/* TC_STATS: 1 on, 0 off, -1 until the configuration has been read. */
extern atomic_int tc_stats_enabled;

/* Read TC_STATS into tc_stats_enabled (idempotent); returns it. */
int tc_stats_init(void);

/* One call of @p op on @p path. Off (the default): one load and a branch
 * that is always predicted; on: one relaxed increment. */
static inline void tc_stats_count(tc_op_t op, tc_path_t path)
{
    const int on = atomic_load_explicit(&tc_stats_enabled, memory_order_relaxed);
    if (__builtin_expect(on != 0, 0) && (on > 0 || tc_stats_init()))
        atomic_fetch_add_explicit(&tc_stats_counts[op][path], 1, memory_order_relaxed);
}
/* The key used for @p path in the stats line, e.g. "shm", "pmpi_multinode". */
const char *tc_stats_path_name(tc_path_t path);
/* The key used for @p op, e.g. "allreduce". */
const char *tc_stats_op_name(tc_op_t op);
/* Print one line per operation used (if TC_STATS is set); called at finalize. */
void tc_stats_print(void);

#endif /* TC_CORE_STATS_H */
