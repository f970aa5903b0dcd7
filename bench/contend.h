/* CPU contention for the benchmarks (topocoll-bench --contend N, hybrid-bench):
 * N CPU-bound helper processes per node, each a busy loop, forked by the
 * lowest rank of each node and pinned beside the ranks: helper j runs on the
 * j-th CPU (cyclically) of the union of the node's ranks' affinity masks, so
 * with one rank per core and N = ranks per node every rank shares its core
 * with one helper.
 *
 * The helpers never outlive the benchmark: they are killed (SIGKILL) and
 * reaped by bench_contend_stop() and, on any other exit of the forking rank
 * (return from main, exit(), MPI_Abort, a fatal signal, a crash), by the
 * kernel: each helper asks for SIGKILL when its parent dies
 * (PR_SET_PDEATHSIG) and exits if the parent is already gone.
 */
#ifndef TC_BENCH_CONTEND_H
#define TC_BENCH_CONTEND_H

#include <mpi.h>
#include <stddef.h>

/* Collective over @p comm. @p n helpers per node (0: nothing). Returns 0, or
 * -1 on every process if some node could not start its helpers (then none
 * run). With @p describe non-NULL and @p describe_len > 0, the lowest rank
 * of each node writes which CPUs its helpers run on there. */
int bench_contend_start(MPI_Comm comm, int n, char *describe, size_t describe_len);
/* Collective over the same @p comm: kill and reap the helpers. Safe when
 * none were started. */
void bench_contend_stop(MPI_Comm comm);

#endif /* TC_BENCH_CONTEND_H */
