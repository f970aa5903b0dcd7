/* The collectives' point-to-point waits: the hierarchy's message levels and
 * the message barriers send, receive and wait through these instead of the
 * MPI's blocking calls, so that a message wait, like a shared-memory one,
 * follows the wait policy and ends after TC_WAIT_TIMEOUT with a message
 * naming the communicator, the stage and the peer (wait.h).
 *
 * Each call starts the transfer nonblocking and polls PMPI_Test: TC_SPIN_COUNT
 * polls, then as the info's policy says: TC_WAIT_SPIN keeps polling (what the
 * MPI's own blocking calls do), anything else polls with a sched_yield()
 * between polls (there is no word to sleep on). The context gives its message
 * levels a policy of their own (core/ctx.c): with more of its processes than
 * cores on the node, auto yields, so that the peer a process waits for can
 * run; otherwise it spins, as a blocking MPI call would, and does not hand
 * its core to an unrelated CPU-bound process.
 *
 * @p info NULL: the MPI's blocking call, unchanged (unit tests that drive a
 * level alone). All buffers are MPI_BYTE; counts are ints (the callers cut
 * their transfers into pieces). Returns an MPI error code.
 */
#ifndef TC_BASE_WAIT_MPI_H
#define TC_BASE_WAIT_MPI_H

#include <mpi.h>

#include "wait.h"

/* @p status: MPI_STATUS_IGNORE, or where the request's status goes. */
int tc_wait_mpi_request(MPI_Request *req, MPI_Status *status, const tc_wait_info_t *info,
                        const char *stage, int peer);
/* Complete every request of @p reqs (those already MPI_REQUEST_NULL too), in
 * turn; the first error is returned after all are complete. */
int tc_wait_mpi_all(int n, MPI_Request *reqs, const tc_wait_info_t *info, const char *stage,
                    int peer);
int tc_wait_mpi_send(const void *buf, int n, int dest, int tag, MPI_Comm comm,
                     const tc_wait_info_t *info, const char *stage);
int tc_wait_mpi_recv(void *buf, int n, int src, int tag, MPI_Comm comm, const tc_wait_info_t *info,
                     const char *stage);
/* Send @p ns bytes to @p dest while receiving @p nr bytes from @p src (both
 * with @p tag, or @p stag and @p rtag in the _tags form, whose @p status, if
 * not MPI_STATUS_IGNORE, gets the receive's); the peer named in a timeout is
 * @p src. */
int tc_wait_mpi_sendrecv(const void *sbuf, int ns, int dest, void *rbuf, int nr, int src, int tag,
                         MPI_Comm comm, const tc_wait_info_t *info, const char *stage);
int tc_wait_mpi_sendrecv_tags(const void *sbuf, int ns, int dest, int stag, void *rbuf, int nr,
                              int src, int rtag, MPI_Comm comm, MPI_Status *status,
                              const tc_wait_info_t *info, const char *stage);

#endif
