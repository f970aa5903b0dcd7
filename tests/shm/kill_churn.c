/* Communicator churn for tests/shm/kill_churn.sh: create a communicator
 * (alternately a duplicate and a split of MPI_COMM_WORLD), broadcast and
 * allreduce on it through the library, check the results, free it; again,
 * for @p seconds (argv[1], default 3). Each rank first writes its pid to
 * $TC_KILL_PIDDIR/<rank>.pid so the script can SIGKILL one at a random instant.
 * Exit 0 when every result was right (a run that is not killed).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "topocoll.h"

#include "tc_test_common.h"

#define N 1000

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int size = tt_check_np("kill_churn"), rank = tt_rank;
    double seconds = argc > 1 ? atof(argv[1]) : 3.0;
    const char *dir = getenv("TC_KILL_PIDDIR");
    if (dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%d.pid", dir, rank);
        FILE *f = fopen(path, "w");
        if (!f || fprintf(f, "%ld\n", (long)getpid()) < 0 || fclose(f) != 0) {
            fprintf(stderr, "kill_churn: cannot write %s\n", path);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double end = MPI_Wtime() + seconds;
    int it = 0, go = 1;
    while (go) {
        MPI_Comm c;
        if (it % 2 == 0)
            MPI_Comm_dup(MPI_COMM_WORLD, &c);
        else
            MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : 1, size - rank, &c);
        int r, p;
        MPI_Comm_rank(c, &r);
        MPI_Comm_size(c, &p);
        int root = it % p, buf[N];
        tt_ints_fill(buf, N, it, r == root);
        TC_Bcast(buf, N, MPI_INT, root, c);
        char what[48];
        snprintf(what, sizeof what, "iteration %d: bcast", it);
        tt_ints_check(buf, N, it, what);
        long in[2] = {r, 1}, out[2] = {0, 0};
        TC_Allreduce(in, out, 2, MPI_LONG, MPI_SUM, c);
        CHECK(out[0] == tt_sum_ranks(p) && out[1] == p,
              "iteration %d: allreduce gave {%ld, %ld}, expected {%ld, %d}", it, out[0], out[1],
              tt_sum_ranks(p), p);
        MPI_Comm_free(&c);
        it++;
        /* Everyone stops after the same iteration (rank 0's clock decides). */
        go = MPI_Wtime() < end;
        MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    long allbad = tt_failures_all();
    if (rank == 0)
        printf("kill_churn: %d communicators created, used and freed; %ld wrong results\n", it,
               allbad);
    MPI_Finalize();
    return allbad ? 1 : 0;
}
