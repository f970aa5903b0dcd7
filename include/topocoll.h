/*
 * libtopocoll — topology-aware MPI collectives.
 *
 * Copyright (c) 2026, the libtopocoll authors. BSD-3-Clause (see LICENSE).
 *
 * Every TC_ collective takes the same arguments as the MPI function it
 * replaces and has the same semantics: call it wherever you would call the MPI
 * one, on every process of the communicator, in the same order. Errors are MPI
 * error classes; on failure the communicator's error handler is invoked, as MPI
 * would (MPI_COMM_NULL: MPI_COMM_WORLD's handler).
 *
 * The library keeps a context on each communicator it sees (an MPI attribute):
 * a private duplicate communicator for its own traffic, for processes that
 * share a node a shared-memory segment, and, when the communicator spans
 * several nodes (or the levels posed by TC_LOCALITY_FILE), the hierarchy of
 * groups the collectives run through. The context is created collectively by
 * the first TC_ call on a communicator (or TC_Comm_attach) and released by
 * MPI_Comm_free, TC_Comm_detach or MPI_Finalize.
 *
 * Thread safety: as MPI's. Under MPI_THREAD_MULTIPLE different threads may call
 * TC_ functions concurrently on *distinct* communicators; concurrent calls on
 * the same communicator are erroneous, exactly as for MPI collectives. Under
 * MPI_THREAD_SERIALIZED the caller serialises. The collectives (TC_Bcast,
 * TC_Reduce, TC_Allreduce, TC_Barrier, TC_Allgather(v), TC_Gather(v),
 * TC_Scatter(v)) and the context calls start no threads.
 * The one-sided broadcast does: under MPI_THREAD_MULTIPLE, registering the
 * first window of a group (TC_Rma_win_register) starts one helper thread per
 * process, which runs until the group's last window is unregistered (or
 * MPI_Finalize); see the RMA section below.
 *
 * Environment: every tunable is a TC_* variable, read once per process at the
 * first context creation (docs/tunables.md, topocoll-tunables(1); run
 * topocoll-info to see the values in effect). The values that change what a
 * process does inside a collective are agreed by all processes of the
 * communicator when its context is created, so different values on different
 * ranks never deadlock: the smallest value wins (for the hierarchy's
 * settings, rank 0's) and the disagreement is logged at TC_VERBOSE >= 1.
 *
 * Large messages: from TC_PMPI_RACE_MIN bytes (default 64K) TC_Bcast,
 * TC_Reduce, TC_Allreduce, TC_Allgather(v), TC_Gather and TC_Scatter time the
 * library's path against the MPI's own on the application's calls and run
 * the faster one, the same choice on every process; only where the result's
 * bits cannot depend on the choice (Bcast and the gathering operations;
 * integer and logical reductions; sums and products of floats and doubles on
 * two processes). TC_PMPI_RACE_MIN=0 always takes the library's path.
 */
#ifndef TOPOCOLL_H
#define TOPOCOLL_H

#include <mpi.h>
#include <stddef.h> /* size_t (TC_Comm_predict) */

#ifdef __cplusplus
extern "C" {
#endif

#if defined(TOPOCOLL_BUILDING) && defined(__GNUC__)
#define TC_API __attribute__((visibility("default")))
#else
#define TC_API
#endif

#define TC_VERSION_MAJOR 0
#define TC_VERSION_MINOR 1
#define TC_VERSION_PATCH 0

/**
 * Version of the library actually linked (may differ from the TC_VERSION_*
 * macros of the header compiled against). Local, no MPI call; may be called
 * before MPI_Init.
 * @param major, minor, patch  out; any may be NULL
 * @return MPI_SUCCESS
 */
TC_API int TC_Get_version(int *major, int *minor, int *patch);

/**
 * Broadcast, same arguments and semantics as MPI_Bcast.
 *
 * Processes of one node exchange the data through a shared-memory segment with
 * a pipelined copy-in/copy-out algorithm (fragments of TC_SHM_FRAGMENT_SIZE
 * bytes through a queue of TC_SHM_QUEUE_LENGTH buffers, TC_SHM_BANKS banks,
 * notification tree TC_SHM_TREE). Across nodes (or the levels set by
 * TC_HIER_LEVELS / TC_LOCALITY_FILE) the data go through the hierarchy of
 * groups, one broadcast per group with the per-level algorithm of
 * TC_HIER_BCAST (the shared-memory one where a segment serves the group);
 * messages longer than TC_HIER_SEGMENT cross the levels in pieces. Processes
 * may pass different (count, datatype) pairs with the same type signature.
 * Intercommunicators, communicators that span several nodes when TC_HIER=0,
 * and single-node communicators with TC_SHM=0 on some rank or whose segment
 * could not be created use PMPI_Bcast (logged once at TC_VERBOSE >= 1).
 *
 * Collective over @p comm; the first call on a communicator creates its
 * context (collective, a few small MPI calls).
 *
 * @param buf       data at the root, receive buffer elsewhere
 * @param count     number of elements (>= 0)
 * @param datatype  committed datatype (not MPI_DATATYPE_NULL)
 * @param root      rank of the root in @p comm
 * @param comm      communicator (not MPI_COMM_NULL)
 * @return MPI_SUCCESS, or MPI_ERR_COUNT, MPI_ERR_TYPE, MPI_ERR_ROOT,
 *         MPI_ERR_COMM, MPI_ERR_BUFFER (after the error handler returned)
 */
TC_API int TC_Bcast(void *buf, int count, MPI_Datatype datatype, int root, MPI_Comm comm);

/**
 * Reduction to a root, same arguments and semantics as MPI_Reduce.
 *
 * Inside a node the processes combine their data in a shared-memory segment
 * (each process places fragments in its own slots; the combining processes
 * read peers' fragments directly, pipelined by fragments); across nodes (or
 * the levels set by TC_HIER_LEVELS / TC_LOCALITY_FILE) partial results go up
 * the hierarchy of groups, one per level, with the per-level algorithm of
 * TC_HIER_REDUCE. Contributions are combined in rank order inside a node, so
 * non-commutative operations (MPI_Op_create(..., commute = 0, ...)) give the
 * same result as PMPI_Reduce on one node; across several levels they use
 * PMPI_Reduce. MPI_IN_PLACE is accepted as @p sendbuf at the root.
 * Datatypes: predefined types and derived types built from one predefined
 * type with predefined operations, MPI_MINLOC/MPI_MAXLOC pair types, and
 * contiguous types with user-defined operations; others use PMPI_Reduce (so
 * does, across several levels, an element larger than
 * TC_SHM_REDUCE_SLOT_BYTES).
 *
 * Collective over @p comm; the first call on a communicator creates its
 * context.
 *
 * @param sendbuf   this process's contribution, or MPI_IN_PLACE at the root
 * @param recvbuf   the result at the root (significant only there)
 * @param count     number of elements (>= 0)
 * @param datatype  committed datatype (not MPI_DATATYPE_NULL)
 * @param op        operation (not MPI_OP_NULL)
 * @param root      rank of the root in @p comm
 * @param comm      communicator (not MPI_COMM_NULL)
 * @return MPI_SUCCESS, or MPI_ERR_COUNT, MPI_ERR_TYPE, MPI_ERR_OP,
 *         MPI_ERR_ROOT, MPI_ERR_COMM, MPI_ERR_BUFFER (after the error handler
 *         returned)
 */
TC_API int TC_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, int root, MPI_Comm comm);

/**
 * Reduction whose result every process receives, same arguments and
 * semantics as MPI_Allreduce. Algorithms as TC_Reduce; across levels either
 * ReduceAllreduceBcast or ReduceBcast (TC_HIER_ALLREDUCE). Every process
 * receives the same bits, floating point included. MPI_IN_PLACE is accepted
 * as @p sendbuf on every process.
 *
 * @return as TC_Reduce (no root)
 */
TC_API int TC_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm);

/**
 * Gathers every process's block into every process, same arguments and
 * semantics as MPI_Allgather: block j (process j's @p sendcount elements of
 * @p sendtype) lands at @p recvbuf + j * @p recvcount * extent(@p recvtype).
 *
 * On one node (one segment spans @p comm): every process copies its block
 * once into its own slots of the shared segment, every process copies the
 * others' blocks out (docs/allgather.md); blocks of at most 56 bytes travel
 * inside one cache line each. Large messages (TC_PMPI_RACE_MIN) race the
 * MPI's own, as TC_Bcast. Across nodes (or posed hierarchy levels), and where
 * no segment exists, the call goes to PMPI_Allgather on MPI_BYTE (TC_STATS
 * counts it as pmpi_multinode, pmpi_no_segment, ...); intercommunicators to
 * PMPI_Allgather unchanged. MPI_IN_PLACE as @p sendbuf: this process's block
 * is already at its place in @p recvbuf. Send and receive types may differ
 * (and differ between processes) as long as the type signatures match;
 * derived datatypes of any kind are accepted.
 *
 * Checked before anything moves (the error handler of @p comm is called):
 * @p sendcount, @p recvcount >= 0 (MPI_ERR_COUNT), valid datatypes
 * (MPI_ERR_TYPE), @p sendbuf != @p recvbuf unless MPI_IN_PLACE
 * (MPI_ERR_BUFFER), and that this process's send signature has the size of
 * its own receive block (MPI_ERR_TRUNCATE). Only local facts are checked:
 * when one process fails a check, the others wait in the collective until
 * TC_WAIT_TIMEOUT.
 *
 * @param sendbuf    this process's block, or MPI_IN_PLACE
 * @param sendcount  elements of @p sendtype in the block (ignored in place)
 * @param sendtype   datatype of the block (ignored in place)
 * @param recvbuf    receives all blocks
 * @param recvcount  elements of @p recvtype received from each process
 * @param recvtype   datatype of the received elements
 * @param comm       communicator (not MPI_COMM_NULL)
 * @return MPI_SUCCESS, or MPI_ERR_COUNT, MPI_ERR_TYPE, MPI_ERR_BUFFER,
 *         MPI_ERR_TRUNCATE, MPI_ERR_COMM, MPI_ERR_NO_MEM (after the error
 *         handler returned)
 */
TC_API int TC_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm);

/**
 * As TC_Allgather, with a block size per process, same arguments and
 * semantics as MPI_Allgatherv: process j's block (@p recvcounts[j] elements
 * of @p recvtype) lands at @p recvbuf + @p displs[j] * extent(@p recvtype).
 * Displacements may leave gaps (untouched) and come in any order; blocks may
 * be empty. Also checked: @p recvcounts and @p displs not NULL (MPI_ERR_ARG),
 * every @p recvcounts[j] >= 0 (MPI_ERR_COUNT).
 *
 * @return as TC_Allgather, and MPI_ERR_ARG
 */
TC_API int TC_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                         MPI_Comm comm);

/**
 * Gathers every process's block at @p root, same arguments and semantics as
 * MPI_Gather. On one node: every process but the root copies its block once
 * into its own slots of the segment, the root copies them out
 * (docs/allgather.md); large messages race the MPI's own. Other paths,
 * datatypes and checks as TC_Allgather, plus @p root in range
 * (MPI_ERR_ROOT) and MPI_IN_PLACE (as @p sendbuf) only at the root
 * (MPI_ERR_BUFFER); the receive arguments are significant, and checked, at
 * the root only.
 *
 * @param sendbuf    this process's block, or MPI_IN_PLACE at the root
 * @param sendcount  elements of @p sendtype in the block
 * @param sendtype   datatype of the block
 * @param recvbuf    the root: receives all blocks
 * @param recvcount  the root: elements of @p recvtype from each process
 * @param recvtype   the root: datatype of the received elements
 * @param root       rank of the root in @p comm
 * @param comm       communicator (not MPI_COMM_NULL)
 * @return as TC_Allgather, and MPI_ERR_ROOT
 */
TC_API int TC_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);

/**
 * As TC_Gather with a block size per process (MPI_Gatherv): process j's
 * block lands at @p recvbuf + @p displs[j] * extent(@p recvtype) at the root.
 * Through the segment the root first tells the others the largest block's
 * size (one line each), since only it knows the counts; a Gatherv does not
 * race the MPI's own for the same reason.
 *
 * @return as TC_Gather, and MPI_ERR_ARG (NULL @p recvcounts or @p displs at
 *         the root)
 */
TC_API int TC_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                      MPI_Comm comm);

/**
 * Sends block j of @p root's @p sendbuf to process j, same arguments and
 * semantics as MPI_Scatter. On one node: the root copies each block once
 * into its receiver's slots of the segment, each receiver copies its block
 * out (docs/allgather.md); large messages race the MPI's own. Other paths,
 * datatypes and checks as TC_Gather, mirrored: MPI_IN_PLACE (as @p recvbuf)
 * only at the root, the send arguments significant and checked at the root
 * only.
 *
 * @param sendbuf    the root: all blocks
 * @param sendcount  the root: elements of @p sendtype per process
 * @param sendtype   the root: datatype of the blocks
 * @param recvbuf    this process's block, or MPI_IN_PLACE at the root
 * @param recvcount  elements of @p recvtype received
 * @param recvtype   datatype of the received elements
 * @param root       rank of the root in @p comm
 * @param comm       communicator (not MPI_COMM_NULL)
 * @return as TC_Gather
 */
TC_API int TC_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);

/**
 * As TC_Scatter with a block size per process (MPI_Scatterv): block j is
 * @p sendcounts[j] elements at @p sendbuf + @p displs[j] * extent(@p
 * sendtype) at the root. Like TC_Gatherv, the root first tells the others
 * the largest block's size, and a Scatterv does not race the MPI's own.
 *
 * @return as TC_Scatter, and MPI_ERR_ARG (NULL @p sendcounts or @p displs at
 *         the root)
 */
TC_API int TC_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                       MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                       int root, MPI_Comm comm);

/**
 * Every process sends a block to every process, same arguments and
 * semantics as MPI_Alltoall: block j of @p sendbuf (@p sendcount elements of
 * @p sendtype at j * sendcount * extent) goes to process j, whose block i of
 * @p recvbuf receives it. On one node: every process copies its p - 1
 * outgoing blocks into its own slots of the segment (one notification per
 * bank use), every process copies its block out of the others' slots
 * (docs/alltoall.md); large messages race the MPI's own (TC_PMPI_RACE_MIN).
 * Several nodes or hierarchy levels, no segment: the MPI's own, as bytes.
 * Intercommunicators: the MPI's own, unchanged. MPI_Alltoallw is not
 * provided (the MPI's own runs it).
 *
 * Datatypes on either side may differ (same signature); MPI_IN_PLACE as
 * @p sendbuf: the blocks of @p recvbuf are sent and replaced. Checked
 * before anything moves, through the communicator's error handler:
 * @p sendcount, @p recvcount >= 0 (MPI_ERR_COUNT), valid datatypes
 * (MPI_ERR_TYPE), @p sendbuf != @p recvbuf unless MPI_IN_PLACE
 * (MPI_ERR_BUFFER), send and receive blocks of the same size
 * (MPI_ERR_TRUNCATE). Only local facts are checked.
 *
 * @return MPI_SUCCESS or an MPI error class (after the error handler returned)
 */
TC_API int TC_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm);

/**
 * As TC_Alltoall with a block size and displacement per process, same
 * arguments and semantics as MPI_Alltoallv: the block to process j is
 * @p sendcounts[j] elements at @p sdispls[j] * extent(@p sendtype), the block
 * from j @p recvcounts[j] elements at @p rdispls[j] * extent(@p recvtype).
 * Blocks may be empty, leave gaps (untouched) and come in any order.
 * Never races the MPI's own (each process knows only its own blocks). Also
 * checked: the arrays not NULL (MPI_ERR_ARG), every count >= 0
 * (MPI_ERR_COUNT), the block to this process the size of the block from it
 * (MPI_ERR_TRUNCATE).
 *
 * @return as TC_Alltoall, and MPI_ERR_ARG
 */
TC_API int TC_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                        MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                        const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);

/**
 * Barrier, same argument and semantics as MPI_Barrier: returns only after
 * every process of @p comm has entered it.
 *
 * On one node: a barrier on flags in the communicator's shared-memory
 * segment (TC_SHM_BARRIER: central counter, combining tree, dissemination or
 * tournament). Across nodes (or posed levels): the shared-memory barrier's
 * arrival inside each group, one message-based barrier among the group
 * leaders (TC_BARRIER: also pairwise exchange), then the release. "auto"
 * (the default) takes the algorithm the LogP model predicts fastest for the
 * group's size; the choice is made once per communicator (topocoll-info
 * shows it). Intercommunicators and the communicators whose collectives go
 * to the MPI's own (see TC_Bcast) use PMPI_Barrier.
 *
 * @param comm  communicator (not MPI_COMM_NULL)
 * @return MPI_SUCCESS, or MPI_ERR_COMM (after the error handler returned)
 */
TC_API int TC_Barrier(MPI_Comm comm);

/**
 * Create the library's context on @p comm now instead of lazily at the first
 * TC_ call (so set-up cost is not charged to the first timed collective).
 * Collective over @p comm; a no-op if the context exists.
 * @return MPI_SUCCESS or an MPI error class
 */
TC_API int TC_Comm_attach(MPI_Comm comm);

/**
 * Release the library's context on @p comm now (unmaps the segment, frees the
 * private communicator). Collective over @p comm. A later TC_ call recreates
 * it. MPI_Comm_free and MPI_Finalize release contexts automatically; this is
 * for long-lived communicators whose collectives no longer need the library.
 * @return MPI_SUCCESS or an MPI error class
 */
TC_API int TC_Comm_detach(MPI_Comm comm);

/* Operation argument of TC_Comm_predict. */
#define TC_COLL_BCAST     1
#define TC_COLL_REDUCE    2
#define TC_COLL_ALLREDUCE 3
#define TC_COLL_BARRIER   4
#define TC_COLL_ALLGATHER 5 /* also Allgatherv with equal counts; bytes: one process's block */
#define TC_COLL_GATHER    6 /* bytes: one process's block */
#define TC_COLL_SCATTER   7 /* bytes: one process's block */
#define TC_COLL_ALLTOALL  8 /* bytes: one block (to one process) */
/* Reduce_scatter_block (also Reduce_scatter with equal counts); bytes: one process's block. */
#define TC_COLL_REDUCE_SCATTER 9
#define TC_COLL_ALLTOALLV      10 /* every count equal; bytes: one block (to one process) */

/**
 * The model's predicted time of one collective on @p comm, as the library
 * would run it now: the algorithm its decision tables hold at each level for
 * that size (override > TC_TUNING_FILE > model), with the agreed LogP/LogGP
 * parameters (TC_LOGP_FILE, TC_LOGP, defaults). The levels are added in the
 * order the hierarchical collective runs them; messages of more than
 * TC_HIER_SEGMENT bytes are pipelined piece by piece (first piece through
 * every level, each later one behind the slowest level). A shared-memory
 * group costs the paper-000 pipeline (Bcast) or the segment's reduction
 * (Reduce, Allreduce), in paper 000's symbols derived from the LogP table's
 * shm row (a flag through shared memory). docs/model.md, "Prediction of a
 * whole collective", gives every formula.
 *
 * Local and collective-free once @p comm has a context; if it has none, the
 * context is created first, which is collective over @p comm (call
 * TC_Comm_attach beforehand to keep the call local). The prediction uses this
 * process's groups: rank 0 belongs to one group at every active level, so
 * its prediction covers the whole critical path; a process that stops at a
 * lower level (not a leader there) predicts its own levels only. Reductions
 * are predicted for a commutative operation. Nothing is measured.
 *
 * @param comm   intracommunicator (not MPI_COMM_NULL)
 * @param op     TC_COLL_BCAST, TC_COLL_REDUCE, TC_COLL_ALLREDUCE, TC_COLL_BARRIER,
 *               TC_COLL_ALLGATHER, TC_COLL_GATHER or TC_COLL_SCATTER (these
 *               three: one segment only, model/cost_gather.h; elsewhere -1),
 *               TC_COLL_REDUCE_SCATTER (the segment's, or the hierarchy's:
 *               model/cost_reduce_scatter.h), TC_COLL_ALLTOALL or
 *               TC_COLL_ALLTOALLV (the segment's, or across nodes the
 *               aggregation through the node leaders and Alltoallv's blocks
 *               point to point: model/cost_alltoall.h)
 * @param bytes  message size in bytes (ignored for the barrier)
 * @param root   root rank for Bcast and Reduce (0 <= root < size), else ignored
 * @param usec   out: predicted microseconds; 0 when there is nothing to do
 *               (0 bytes, one process); -1 when the library would hand the
 *               call to the MPI's own collective (TC_SHM=0, no segment, ...),
 *               for which it has no model
 * @return MPI_SUCCESS, or MPI_ERR_COMM (MPI_COMM_NULL, intercommunicator),
 *         MPI_ERR_ARG (unknown @p op, @p usec NULL), MPI_ERR_ROOT, or the
 *         error of the context's creation (after the error handler returned)
 */
TC_API int TC_Comm_predict(MPI_Comm comm, int op, size_t bytes, int root, double *usec);

/* ---- One-sided (MPI RMA) broadcast, paper 002 ---------------------------------
 *
 * The root alone calls the broadcast; the data lands at displacement `disp` of
 * a registered MPI window on every other process of the window's group.
 * Linear variant: the root puts to every process in one passive epoch.
 * Binomial variant: the root puts to its children in a binomial tree; a helper
 * thread on every process (the Broadcaster) polls for requests and forwards
 * the data to its own children, then counts itself in the root's done counter.
 * The helper needs MPI_THREAD_MULTIPLE:
 *
 *     int provided;
 *     MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
 *
 * Without it no thread is started, the linear variant still works and a
 * binomial request runs the linear one (said once at TC_VERBOSE >= 1).
 * Open MPI 4.1: allow only the osc/sm and osc/rdma components
 * (OMPI_MCA_osc=sm,rdma: sm inside a node, rdma across nodes); osc/pt2pt
 * refuses MPI_THREAD_MULTIPLE and osc/ucx hung at np=4 here. MPICH 4.0.2
 * shifts remote displacements by 8 bytes in windows whose size is 8 mod 16
 * bytes: give data windows a multiple of 16 bytes (the runtime's own windows
 * are cache-line multiples, 64 bytes or more).
 *
 * While registered, the library holds a passive-target epoch (lock_all) on
 * the data window: the application must not open other epochs on it, must
 * call TC_Rma_win_unregister before MPI_Win_free, and reads received data
 * after TC_Rma_bcast_recv_wait/test. As with any RMA, the application makes
 * sure nobody still reads a region when a new broadcast overwrites it.
 *
 * Thread safety: calls on windows of one group are serialised by the caller
 * (one thread at a time); the helper threads are internal.
 *
 * Environment: TC_RMA_BCAST (auto, linear, binomial; default auto = binomial
 * from TC_RMA_BCAST_SWITCH bytes, default 16M: the crossover measured at
 * np=8 on one 2-core node), TC_RMA_PUTLOOP (down: largest
 * subtree first, the default; up: the paper's order), TC_RMA_POLL_SPIN,
 * TC_RMA_POLL_MIN_US, TC_RMA_POLL_MAX_US (helper's idle back-off: polls
 * before sleeping, first and longest sleep), TC_WAIT_TIMEOUT (waits give up
 * and abort after this many seconds), TC_VERBOSE.
 */

/* Algorithm argument of TC_Rma_bcast. */
#define TC_RMA_BCAST_DEFAULT       0 /* TC_RMA_BCAST (and TC_RMA_PUTLOOP) decide */
#define TC_RMA_BCAST_LINEAR        1 /* root puts to every process */
#define TC_RMA_BCAST_BINOMIAL      2 /* binomial tree, PutLoop order TC_RMA_PUTLOOP */
#define TC_RMA_BCAST_BINOMIAL_DOWN 3 /* binomial, largest subtree first */
#define TC_RMA_BCAST_BINOMIAL_UP   4 /* binomial, the paper's order (smallest first) */

/**
 * Register a data window with the RMA broadcast runtime. Collective over the
 * window's group (which must be a subset of MPI_COMM_WORLD). The first window
 * of a group creates the group's runtime: three small windows (requests,
 * descriptors, done counter) and, under MPI_THREAD_MULTIPLE, a helper thread
 * per process; later windows over the same group share it. Opens a passive
 * epoch (MPI_Win_lock_all) on @p win that lasts until unregistration.
 *
 * @param win  the data window (any disp_unit; MPI_Win_create, _allocate...)
 * @param wid  out: window id, the same on every member; at most 32 windows
 *             are registered at once per process
 * @return MPI_SUCCESS, MPI_ERR_WIN, MPI_ERR_ARG, MPI_ERR_OTHER (too many
 *         windows) or the MPI's error (after the window's error handler)
 */
TC_API int TC_Rma_win_register(MPI_Win win, int *wid);

/**
 * Unregister a window: completes this process's broadcast in flight, waits
 * for every member's (barrier), closes the library's epoch on the window.
 * The last window of a group stops and joins the helper threads and frees the
 * runtime's windows. Collective over the window's group. MPI_Finalize
 * unregisters windows still registered.
 * @param wid  id from TC_Rma_win_register
 * @return MPI_SUCCESS, MPI_ERR_ARG (unknown id) or the MPI's error
 */
TC_API int TC_Rma_win_unregister(int wid);

/**
 * One-sided broadcast, called by the root alone: puts @p count elements of
 * @p datatype from @p buf to displacement @p disp (in the window's disp_unit
 * of each target) of window @p wid on every other member. A previous
 * broadcast of this process still in flight (on any window of the group) is
 * completed first, so successive broadcasts never mix. The payload travels as
 * bytes: @p datatype must be predefined or contiguous.
 *
 * Linear: returns once every receiver has the data (the puts and the
 * receivers' flags are flushed in the call, so receivers never depend on the
 * root calling flush). Binomial: returns once the root's children have the
 * data; the rest of the tree is served by the helper threads, and
 * TC_Rma_bcast_flush/test tell when it is done. Either way @p buf may be
 * reused when the call returns.
 *
 * @param buf       data (at the root)
 * @param count     number of elements (>= 0; at most INT_MAX bytes in all)
 * @param datatype  predefined or contiguous datatype
 * @param disp      target displacement (>= 0)
 * @param wid       registered window id
 * @param alg       TC_RMA_BCAST_DEFAULT, _LINEAR, _BINOMIAL, _BINOMIAL_DOWN, _BINOMIAL_UP
 * @return MPI_SUCCESS, MPI_ERR_ARG, MPI_ERR_COUNT, MPI_ERR_DISP, MPI_ERR_TYPE
 *         (non-contiguous datatype, with a message on stderr) or the MPI's error
 */
TC_API int TC_Rma_bcast(const void *buf, int count, MPI_Datatype datatype, MPI_Aint disp, int wid,
                        int alg);

/**
 * At the root: wait until every receiver has the data of this process's
 * broadcast in flight on the group of @p wid (no-op if none).
 * @return MPI_SUCCESS, MPI_ERR_ARG or the MPI's error
 */
TC_API int TC_Rma_bcast_flush(int wid);

/**
 * At the root: *flag = 1 if the broadcast in flight is complete (as after
 * TC_Rma_bcast_flush), else 0: one atomic read of the done counter (a linear
 * broadcast is complete when TC_Rma_bcast returns).
 * @return MPI_SUCCESS, MPI_ERR_ARG or the MPI's error
 */
TC_API int TC_Rma_bcast_test(int wid, int *flag);

/**
 * At a non-root: wait until the data of the next broadcast of @p root on
 * @p wid (the first one this process has not yet waited for or tested
 * successfully) is in this process's window memory and (binomial) has been
 * forwarded to this process's children; MPI_Win_sync is done, so the caller
 * may then read, and even overwrite, that region with plain loads/stores.
 * @param root  rank of the root in the window's group (not this process)
 * @return MPI_SUCCESS, MPI_ERR_ARG, MPI_ERR_ROOT or the MPI's error
 */
TC_API int TC_Rma_bcast_recv_wait(int wid, int root);

/**
 * Non-blocking TC_Rma_bcast_recv_wait: *flag = 1 (and the broadcast counts as
 * waited for) if the data has arrived, else 0.
 * @return as TC_Rma_bcast_recv_wait
 */
TC_API int TC_Rma_bcast_recv_test(int wid, int root, int *flag);

/**
 * Reduction whose result is scattered in equal blocks, same arguments and
 * semantics as MPI_Reduce_scatter_block: process i receives elements
 * [i * recvcount, (i + 1) * recvcount) of the reduction of every process's
 * size * recvcount elements.
 *
 * On one node the processes combine through the shared-memory segment, the
 * scheme of TC_Allreduce's large messages: each places its data in its own
 * slots, and each folds its own block from every process's slots straight
 * into its receive buffer. Contributions are combined in rank order, so
 * non-commutative operations give the same result as the MPI's own.
 * Communicators over several nodes (or posed levels), intercommunicators,
 * and the datatypes and operations TC_Reduce hands to the MPI use
 * PMPI_Reduce_scatter_block (TC_STATS names the reason). Large messages
 * race the MPI's own as TC_Reduce's do (TC_PMPI_RACE_MIN). MPI_IN_PLACE is
 * accepted as @p sendbuf on every process: the data is then taken from
 * @p recvbuf (size * recvcount elements), and the result replaces its first
 * recvcount.
 *
 * @param sendbuf    size * recvcount elements, or MPI_IN_PLACE
 * @param recvbuf    recvcount elements of result
 * @param recvcount  elements each process receives (>= 0)
 * @param datatype   committed datatype (not MPI_DATATYPE_NULL)
 * @param op         operation (not MPI_OP_NULL)
 * @param comm       communicator (not MPI_COMM_NULL)
 * @return MPI_SUCCESS, or MPI_ERR_COUNT, MPI_ERR_TYPE, MPI_ERR_OP,
 *         MPI_ERR_COMM, MPI_ERR_BUFFER (after the error handler returned)
 */
TC_API int TC_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);

/**
 * Reduction whose result is scattered in blocks of any size, same arguments
 * and semantics as MPI_Reduce_scatter: process i receives recvcounts[i]
 * elements of the reduction, starting after the elements of processes
 * 0 .. i-1. Algorithms, fallbacks and MPI_IN_PLACE as
 * TC_Reduce_scatter_block (in place, @p recvbuf holds the whole message).
 *
 * @param recvcounts  one count (>= 0, zeros allowed) per process of @p comm
 * @return as TC_Reduce_scatter_block, and MPI_ERR_ARG for a NULL recvcounts
 */
TC_API int TC_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);

/**
 * Inclusive prefix reduction, same arguments and semantics as MPI_Scan:
 * process i receives the reduction of the contributions of processes
 * 0 .. i, in rank order.
 *
 * On one node a chain through the shared-memory segment, pipelined by
 * fragments: each process folds the previous process's prefix with its own
 * contribution and passes its prefix on through its own slots. The lower
 * rank is always the left operand, so non-commutative operations give the
 * same result as the MPI's own. Communicators over several nodes (or posed
 * levels), intercommunicators, and the datatypes and operations TC_Reduce
 * hands to the MPI use PMPI_Scan (TC_STATS names the reason); large
 * messages race the MPI's own as TC_Reduce's do (TC_PMPI_RACE_MIN).
 * MPI_IN_PLACE is accepted as @p sendbuf on every process.
 *
 * @param sendbuf   this process's contribution, or MPI_IN_PLACE (then taken
 *                  from, and replaced in, @p recvbuf)
 * @param recvbuf   the prefix
 * @param count     number of elements (>= 0)
 * @param datatype  committed datatype (not MPI_DATATYPE_NULL)
 * @param op        operation (not MPI_OP_NULL)
 * @param comm      communicator (not MPI_COMM_NULL)
 * @return MPI_SUCCESS, or MPI_ERR_COUNT, MPI_ERR_TYPE, MPI_ERR_OP,
 *         MPI_ERR_COMM, MPI_ERR_BUFFER (after the error handler returned)
 */
TC_API int TC_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm);

/**
 * Exclusive prefix reduction, same arguments and semantics as MPI_Exscan:
 * process i > 0 receives the reduction of the contributions of processes
 * 0 .. i-1, in rank order; process 0's @p recvbuf is not touched.
 * Algorithms, fallbacks (PMPI_Exscan) and MPI_IN_PLACE as TC_Scan.
 *
 * @return as TC_Scan
 */
TC_API int TC_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm);

/* ---- MPI-4 large counts (MPI_Count), issue 19 -----------------------------------
 *
 * The _c variants of the collectives above, declared where the MPI has them
 * (an MPI-4 mpi.h: MPICH 4 yes, Open MPI 4.1 no; TC_HAVE_LARGE_COUNT is then
 * defined). Same arguments and semantics as MPI_Bcast_c, ... A call whose
 * counts all fit an int (count <= INT_MAX; for TC_Reduce_scatter_c every
 * element of recvcounts) runs the TC_* function without the _c, with the same
 * algorithms, checks, errors and fallbacks (a negative count gives
 * MPI_ERR_COUNT through the handler, never a wrapped positive int); a count
 * beyond INT_MAX goes to the MPI's own PMPI_*_c unchanged (never truncated),
 * counted in TC_STATS as pmpi_large_count. The choice is each process's on
 * the counts significant to it: for TC_Bcast_c and the gathering calls,
 * (count, datatype) pairs of one call that fall on both sides of INT_MAX on
 * different processes are not supported (use the same datatype everywhere
 * for more than INT_MAX elements).
 * Intercommunicators: TC_Reduce_scatter_c and TC_Allgatherv_c pass them to
 * the MPI's own, the others as their TC_* functions do.
 */
#if defined(TOPOCOLL_HAVE_MPI_COUNT_C) || (defined(MPI_VERSION) && MPI_VERSION >= 4)
#define TC_HAVE_LARGE_COUNT 1

/** TC_Bcast with an MPI_Count @p count (MPI_Bcast_c). */
TC_API int TC_Bcast_c(void *buf, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm);
/** TC_Reduce with an MPI_Count @p count (MPI_Reduce_c). */
TC_API int TC_Reduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                       MPI_Op op, int root, MPI_Comm comm);
/** TC_Allreduce with an MPI_Count @p count (MPI_Allreduce_c). */
TC_API int TC_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
/** TC_Reduce_scatter_block with an MPI_Count @p recvcount (MPI_Reduce_scatter_block_c). */
TC_API int TC_Reduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
/** TC_Reduce_scatter with MPI_Count @p recvcounts (MPI_Reduce_scatter_c); the
 *  array is copied to ints when every element fits. */
TC_API int TC_Reduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
/** TC_Scan with an MPI_Count @p count (MPI_Scan_c). */
TC_API int TC_Scan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm);
/** TC_Exscan with an MPI_Count @p count (MPI_Exscan_c). */
TC_API int TC_Exscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                       MPI_Op op, MPI_Comm comm);
/** TC_Allgather with MPI_Count counts (MPI_Allgather_c). */
TC_API int TC_Allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                          void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm);
/** TC_Allgatherv with MPI_Count counts and MPI_Aint displacements
 *  (MPI_Allgatherv_c). The counts alone choose the path (every count and
 *  their sum fit an int: TC_Allgatherv), never the displacements, which are
 *  each process's own; displacements beyond an int are rebased to the lowest
 *  block, or received through a contiguous temporary buffer. */
TC_API int TC_Allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                           void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                           MPI_Datatype recvtype, MPI_Comm comm);
/** TC_Gather with MPI_Count counts (MPI_Gather_c): only the counts significant
 *  on this process decide. */
TC_API int TC_Gather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                       void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                       MPI_Comm comm);
/** TC_Scatter with MPI_Count counts (MPI_Scatter_c): only the counts
 *  significant on this process decide. */
TC_API int TC_Scatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                        MPI_Comm comm);
/** TC_Alltoall with MPI_Count counts (MPI_Alltoall_c): the counts every
 *  process passes alike decide. (No TC_Alltoallv_c: each process knows only
 *  its own counts, so the processes could not agree locally; the drop-in
 *  leaves MPI_Alltoallv_c to the MPI's own.) */
TC_API int TC_Alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                         void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm);
/** TC_Gatherv with MPI_Count counts and MPI_Aint displacements
 *  (MPI_Gatherv_c). The counts are the root's alone, so the root decides and
 *  broadcasts its decision (one int more per call): TC_Gatherv when every
 *  count and displacement fits an int, else the MPI's own PMPI_Gatherv_c
 *  (TC_STATS pmpi_large_count). A non-root sendcount beyond INT_MAX while the
 *  root's counts fit (different datatypes) is MPI_ERR_COUNT. */
TC_API int TC_Gatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                        MPI_Datatype recvtype, int root, MPI_Comm comm);
/** TC_Scatterv with MPI_Count counts (MPI_Scatterv_c): decided as
 *  TC_Gatherv_c, on the root's sendcounts and displacements. */
TC_API int TC_Scatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                         MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                         MPI_Datatype recvtype, int root, MPI_Comm comm);
#endif

#ifdef __cplusplus
}
#endif

#endif /* TOPOCOLL_H */
