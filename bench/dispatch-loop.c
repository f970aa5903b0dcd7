/*
 * dispatch-loop: N calls of one operation on 4 bytes, TC_* or the MPI's own,
 * for counting instructions per call under valgrind --tool=callgrind (issue
 * 16). The loop is its own function (run_loop), so
 *   valgrind --tool=callgrind --toggle-collect=run_loop ./dispatch-loop OP IMPL N
 * counts only the calls; Ir / N is the cost of one call (the two runs with
 * N and 2N cancel any fixed cost). PMPI_* calls per call are the calls=
 * counts of PMPI_ functions under run_loop, divided by N.
 *
 * OP: bcast | reduce | allreduce | barrier | gather | scatter | allgather | scan |
 * exscan (4 bytes per process: one MPI_INT; the last five for np >= 2, e.g.
 *   mpirun -np 2 valgrind --tool=callgrind --toggle-collect=run_loop ...
 * where the waits are tc_wait_ge_slow_u64's inclusive cost, issue 18); IMPL:
 * tc | mpi. Public header only.
 */
#include <mpi.h>
#include <topocoll.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int value_in = 1, value_out, values[64];

__attribute__((noinline)) static int run_loop(int op, int tc, long n, MPI_Comm comm)
{
    int rc = MPI_SUCCESS;
    for (long i = 0; i < n && rc == MPI_SUCCESS; i++) {
        switch (op) {
        case 0:
            rc = tc ? TC_Bcast(&value_out, 1, MPI_INT, 0, comm)
                    : PMPI_Bcast(&value_out, 1, MPI_INT, 0, comm);
            break;
        case 1:
            rc = tc ? TC_Reduce(&value_in, &value_out, 1, MPI_INT, MPI_SUM, 0, comm)
                    : PMPI_Reduce(&value_in, &value_out, 1, MPI_INT, MPI_SUM, 0, comm);
            break;
        case 2:
            rc = tc ? TC_Allreduce(&value_in, &value_out, 1, MPI_INT, MPI_SUM, comm)
                    : PMPI_Allreduce(&value_in, &value_out, 1, MPI_INT, MPI_SUM, comm);
            break;
        case 3:
            rc = tc ? TC_Barrier(comm) : PMPI_Barrier(comm);
            break;
        case 4:
            rc = tc ? TC_Gather(&value_in, 1, MPI_INT, values, 1, MPI_INT, 0, comm)
                    : PMPI_Gather(&value_in, 1, MPI_INT, values, 1, MPI_INT, 0, comm);
            break;
        case 5:
            rc = tc ? TC_Scatter(values, 1, MPI_INT, &value_out, 1, MPI_INT, 0, comm)
                    : PMPI_Scatter(values, 1, MPI_INT, &value_out, 1, MPI_INT, 0, comm);
            break;
        case 6:
            rc = tc ? TC_Allgather(&value_in, 1, MPI_INT, values, 1, MPI_INT, comm)
                    : PMPI_Allgather(&value_in, 1, MPI_INT, values, 1, MPI_INT, comm);
            break;
        case 7:
            rc = tc ? TC_Scan(&value_in, &value_out, 1, MPI_INT, MPI_SUM, comm)
                    : PMPI_Scan(&value_in, &value_out, 1, MPI_INT, MPI_SUM, comm);
            break;
        default:
            rc = tc ? TC_Exscan(&value_in, &value_out, 1, MPI_INT, MPI_SUM, comm)
                    : PMPI_Exscan(&value_in, &value_out, 1, MPI_INT, MPI_SUM, comm);
        }
    }
    return rc;
}

int main(int argc, char **argv)
{
    static const char *const ops[] = {"bcast",   "reduce",    "allreduce", "barrier", "gather",
                                      "scatter", "allgather", "scan",      "exscan"};
    int op = -1, tc;
    long n;
    if (argc != 4 || (strcmp(argv[2], "tc") != 0 && strcmp(argv[2], "mpi") != 0) ||
        (n = atol(argv[3])) <= 0) {
        fprintf(stderr,
                "usage: %s bcast|reduce|allreduce|barrier|gather|scatter|allgather|scan|exscan "
                "tc|mpi N\n",
                argv[0]);
        return 2;
    }
    for (int i = 0; i < (int)(sizeof ops / sizeof *ops); i++)
        if (strcmp(argv[1], ops[i]) == 0)
            op = i;
    if (op < 0) {
        fprintf(stderr, "%s: unknown operation %s\n", argv[0], argv[1]);
        return 2;
    }
    tc = strcmp(argv[2], "tc") == 0;
    MPI_Init(&argc, &argv);
    /* Warm-up outside the measured loop: context creation, first touches. */
    int rc = run_loop(op, tc, 10, MPI_COMM_WORLD);
    if (rc == MPI_SUCCESS)
        rc = run_loop(op, tc, n, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS)
        fprintf(stderr, "%s: %s %s failed (%d)\n", argv[0], argv[1], argv[2], rc);
    MPI_Finalize();
    return rc == MPI_SUCCESS ? 0 : 1;
}
