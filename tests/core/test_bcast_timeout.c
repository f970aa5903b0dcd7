/* A rank that never enters a broadcast must make the others abort after
 * TC_WAIT_TIMEOUT seconds with a message naming the stage and the peer, not
 * hang. Run by run_expect_abort.cmake, which expects a failed job whose
 * output contains "timed out" and "bcast".
 *
 * All ranks first run one correct TC_Bcast on MPI_COMM_WORLD (so the context,
 * whose creation is collective, exists). Then --skip-rank (1) sleeps instead
 * of calling TC_Bcast, while the others broadcast --size bytes (default
 * 10*S*f + 3: the root must wait for the skipping rank to release a bank)
 * from root 0. Ranks that return from it wait in MPI_Barrier. If nobody has
 * aborted after --grace (20) seconds, the skipping rank aborts the job itself
 * with a message that does not contain the driver's keywords, so the test
 * fails instead of hanging. With --kill 1 the skipping rank kills itself
 * (SIGKILL) instead of sleeping: a process lost mid-collective (run where the
 * MPI's launcher keeps the job alive after a process dies, e.g. the
 * emulated-cluster test in tests/cluster). --skip-rank 0 makes the root
 * skip: the others wait for its data.
 */
#define _POSIX_C_SOURCE 200809L

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <topocoll.h>
#include <unistd.h>

#include "tc_test_common.h"

int main(int argc, char **argv)
{
    size_t f, s, size;
    long skip, grace;
    tt_layout_t l;
    unsigned char *buf, *expect;
    char msg[400];
    int rc;

    tt_init(&argc, &argv, "test_bcast_timeout", 8192, 4, &f, &s);
    skip = tt_arg_long(argc, argv, "--skip-rank", 1);
    grace = tt_arg_long(argc, argv, "--grace", 20);
    size = (size_t)tt_arg_long(argc, argv, "--size", (long)(10 * s * f + 3));
    if (tt_size < 2 || skip >= tt_size || skip < 0) {
        if (tt_rank == 0)
            fprintf(stderr, "test_bcast_timeout: needs np >= 2 and 0 <= skip-rank < np\n");
        MPI_Finalize();
        return 77;
    }

    tt_layout_make(&l, TT_LAYOUT_BYTES, size);
    buf = tt_xmalloc(l.bytes);
    expect = tt_xmalloc(l.bytes);
    tt_image_build(expect, &l, 0, 1);
    if (tt_rank == 0)
        memcpy(buf, expect, l.bytes);
    else
        memset(buf, TT_SENTINEL, l.bytes);
    rc = TC_Bcast(buf, l.count, l.type, 0, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS || tt_image_compare(buf, expect, &l, msg, sizeof(msg))) {
        fprintf(stderr, "test_bcast_timeout rank %d: the first (correct) broadcast failed: %s\n",
                tt_rank, rc != MPI_SUCCESS ? "error returned" : msg);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    if (tt_rank == skip && tt_arg_long(argc, argv, "--kill", 0) != 0) {
        printf("test_bcast_timeout rank %d: killing itself instead of the broadcast\n", tt_rank);
        fflush(stdout);
        raise(SIGKILL);
    }
    if (tt_rank == skip) {
        printf("test_bcast_timeout rank %d: skipping the broadcast, sleeping up to %ld s\n",
               tt_rank, grace);
        fflush(stdout);
        sleep((unsigned)grace);
        fprintf(stderr,
                "test_bcast_timeout rank %d: FAIL: no process aborted within %ld s although "
                "rank %ld never entered the broadcast\n",
                tt_rank, grace, skip);
        MPI_Abort(MPI_COMM_WORLD, 4);
    } else {
        tt_image_build(expect, &l, 0, 2);
        if (tt_rank == 0)
            memcpy(buf, expect, l.bytes);
        rc = TC_Bcast(buf, l.count, l.type, 0, MPI_COMM_WORLD);
        printf("test_bcast_timeout rank %d: returned from the broadcast (rc %d)\n", tt_rank, rc);
        fflush(stdout);
        MPI_Barrier(MPI_COMM_WORLD); /* ends when someone aborts */
    }
    MPI_Finalize();
    return 0;
}
