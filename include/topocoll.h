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
 * a private duplicate communicator for its own traffic, and for processes that
 * share a node a shared-memory segment. The context is created collectively by
 * the first TC_ call on a communicator (or TC_Comm_attach) and released by
 * MPI_Comm_free, TC_Comm_detach or MPI_Finalize.
 *
 * Thread safety: as MPI's. Under MPI_THREAD_MULTIPLE different threads may call
 * TC_ functions concurrently on *distinct* communicators; concurrent calls on
 * the same communicator are erroneous, exactly as for MPI collectives. Under
 * MPI_THREAD_SERIALIZED the caller serialises. The library starts no threads
 * for the functions in this header.
 *
 * Environment: every tunable is a TC_* variable, read once per process at the
 * first context creation (README "Tunables", or run topocoll-info). The values
 * that change what a process does inside a collective are agreed by all
 * processes of the communicator when its context is created, so different
 * values on different ranks never deadlock: the most conservative one wins and
 * the disagreement is logged at TC_VERBOSE >= 1.
 */
#ifndef TOPOCOLL_H
#define TOPOCOLL_H

#include <mpi.h>

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
 * notification tree TC_SHM_TREE). Processes may pass different (count,
 * datatype) pairs with the same type signature. Communicators that span
 * several nodes, intercommunicators, and communicators whose segment could
 * not be created use PMPI_Bcast (logged once at TC_VERBOSE >= 1).
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
 * (each process places fragments in its own queue; the combining processes
 * read peers' fragments directly, pipelined by fragments); across nodes (or
 * the levels set by TC_HIER_LEVELS / TC_LOCALITY_FILE) partial results go up
 * the hierarchy of groups, one per level, with the per-level algorithm of
 * TC_HIER_REDUCE. Contributions are combined in rank order inside a node, so
 * non-commutative operations (MPI_Op_create(..., commute = 0, ...)) give the
 * same result as PMPI_Reduce on one node; across several levels they use
 * PMPI_Reduce. MPI_IN_PLACE is accepted as @p sendbuf at the root.
 * Datatypes: predefined types and derived types built from one predefined
 * type with predefined operations, MPI_MINLOC/MPI_MAXLOC pair types, and
 * contiguous types with user-defined operations; others use PMPI_Reduce.
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

#ifdef __cplusplus
}
#endif

#endif /* TOPOCOLL_H */
