/* TC_Comm_predict: finite positive predictions for every operation and size
 * where the library runs its own algorithms, 0 where the call has nothing to
 * do (0 bytes, one process), the exact LogGP value where the environment
 * fixes the algorithm and the parameters (--expect, worked out by hand in
 * tests/core/CMakeLists.txt), the same value on every rank where every rank is
 * in the same single group (--same), and MPI error classes for bad
 * arguments. Public header + MPI only.
 *
 *   test_predict [--same] [--pose-nodes] [--expect op:bytes:usec ...]
 *     --pose-nodes  TC_LOCALITY_FILE posing every rank as its own node (written
 *                   by rank 0 before the first TC_ call), so one top group of
 *                   all ranks runs the message-based algorithm
 *     --no-model    the environment sends every call to the MPI's own (TC_SHM=0
 *                   on one node): Bcast/Reduce/Allreduce must predict -1
 *     --expect      op bcast|reduce|allreduce|barrier|alltoall|alltoallv|..., root 0,
 *                   on MPI_COMM_WORLD
 */
#define _DEFAULT_SOURCE /* setenv */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "topocoll.h"

#include "tc_test_common.h"

static int tp_rank, tp_size;
static int tp_no_model; /* --no-model: the path is the MPI's own (TC_SHM=0): -1 expected */
static const char *const tp_names[] = {"",         "bcast",          "reduce",   "allreduce",
                                       "barrier",  "allgather",      "gather",   "scatter",
                                       "alltoall", "reduce_scatter", "alltoallv"};

static int tp_op_parse(const char *s)
{
    for (int op = TC_COLL_BCAST; op <= TC_COLL_ALLTOALLV; op++)
        if (strcmp(s, tp_names[op]) == 0)
            return op;
    return -1;
}

static int tp_class(int rc)
{
    int c = rc;
    MPI_Error_class(rc, &c);
    return c;
}

/* Every op and size on @p comm (p processes): the rules of the header. */
static void tp_values(MPI_Comm comm, const char *what, int same)
{
    static const size_t sizes[] = {1, 8, 100, 1024, 65536, 1u << 20, 3u << 20};
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    int p;
    MPI_Comm_size(comm, &p);
    for (int op = TC_COLL_BCAST; op <= TC_COLL_ALLREDUCE; op++) {
        double prev = 0.0, v = -2.0;
        int rc = TC_Comm_predict(comm, op, 0, 0, &v);
        CHECK(rc == MPI_SUCCESS && v == 0.0, "%s %s 0 bytes: rc %d, %g (want 0)", what,
              tp_names[op], rc, v);
        for (int i = 0; i < nsizes; i++) {
            for (int root = 0; root<p; root += p> 2 ? p - 1 : 1) {
                v = -2.0;
                rc = TC_Comm_predict(comm, op, sizes[i], root, &v);
                CHECK(rc == MPI_SUCCESS, "%s %s %zu B root %d: rc %d", what, tp_names[op], sizes[i],
                      root, rc);
                if (p == 1) {
                    CHECK(v == 0.0, "%s %s %zu B on one process: %g (want 0)", what, tp_names[op],
                          sizes[i], v);
                    continue;
                }
                if (tp_no_model) {
                    CHECK(v == -1.0, "%s %s %zu B root %d: %g (want -1: no model)", what,
                          tp_names[op], sizes[i], root, v);
                    continue;
                }
                CHECK(isfinite(v) && v > 0.0, "%s %s %zu B root %d: %g (want finite > 0)", what,
                      tp_names[op], sizes[i], root, v);
                /* Every formula grows with the message: more bytes never
                 * cost less (the choice is the cheapest at each size). */
                if (root == 0)
                    CHECK(v >= prev * (1.0 - 1e-9), "%s %s: %zu B predicted %g < %g for %zu B",
                          what, tp_names[op], sizes[i], v, prev, sizes[i - (i > 0)]);
                if (root == 0)
                    prev = v;
                if (same) {
                    double lo, hi;
                    MPI_Allreduce(&v, &lo, 1, MPI_DOUBLE, MPI_MIN, comm);
                    MPI_Allreduce(&v, &hi, 1, MPI_DOUBLE, MPI_MAX, comm);
                    CHECK(lo == hi, "%s %s %zu B: ranks disagree (%g .. %g)", what, tp_names[op],
                          sizes[i], lo, hi);
                }
            }
        }
    }
    /* Alltoall(v): 0 on one process, else finite and positive or -1 (the
     * MPI's own at that size: across nodes, larger blocks, or no
     * aggregation), the same on every rank (every rank takes the largest
     * node's critical path). */
    for (int op = TC_COLL_ALLTOALL; op <= TC_COLL_ALLTOALLV;
         op += TC_COLL_ALLTOALLV - TC_COLL_ALLTOALL) {
        for (int i = 0; i < nsizes; i++) {
            double v = -2.0;
            int rc = TC_Comm_predict(comm, op, sizes[i], 0, &v);
            CHECK(rc == MPI_SUCCESS && (p == 1 ? v == 0.0 : (isfinite(v) && v > 0.0) || v == -1.0),
                  "%s %s %zu B: rc %d, %g", what, tp_names[op], sizes[i], rc, v);
            if (tp_no_model)
                CHECK(v == -1.0 || p == 1, "%s %s %zu B: %g (want -1: no model)", what,
                      tp_names[op], sizes[i], v);
            if (same && p > 1) {
                double lo, hi;
                MPI_Allreduce(&v, &lo, 1, MPI_DOUBLE, MPI_MIN, comm);
                MPI_Allreduce(&v, &hi, 1, MPI_DOUBLE, MPI_MAX, comm);
                CHECK(lo == hi, "%s %s %zu B: ranks disagree (%g .. %g)", what, tp_names[op],
                      sizes[i], lo, hi);
            }
        }
    }
    double b = -2.0;
    int rc = TC_Comm_predict(comm, TC_COLL_BARRIER, 12345, -7, &b);
    /* Without a segment the barrier may still run the hierarchy's plan. */
    CHECK(rc == MPI_SUCCESS &&
              (p == 1 ? b == 0.0 : (isfinite(b) && b > 0.0) || (tp_no_model && b == -1.0)),
          "%s barrier: rc %d, %g", what, rc, b);
}

static void tp_errors(void)
{
    double v = 0.0;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(tp_class(TC_Comm_predict(MPI_COMM_NULL, TC_COLL_BCAST, 8, 0, &v)) == MPI_ERR_COMM,
          "MPI_COMM_NULL: want MPI_ERR_COMM");
    CHECK(tp_class(TC_Comm_predict(MPI_COMM_WORLD, 0, 8, 0, &v)) == MPI_ERR_ARG,
          "op 0: want MPI_ERR_ARG");
    CHECK(tp_class(TC_Comm_predict(MPI_COMM_WORLD, TC_COLL_ALLTOALLV + 1, 8, 0, &v)) == MPI_ERR_ARG,
          "op past the last: want MPI_ERR_ARG");
    CHECK(tp_class(TC_Comm_predict(MPI_COMM_WORLD, TC_COLL_REDUCE, 8, 0, NULL)) == MPI_ERR_ARG,
          "usec NULL: want MPI_ERR_ARG");
    CHECK(tp_class(TC_Comm_predict(MPI_COMM_WORLD, TC_COLL_BCAST, 8, -1, &v)) == MPI_ERR_ROOT,
          "bcast root -1: want MPI_ERR_ROOT");
    CHECK(tp_class(TC_Comm_predict(MPI_COMM_WORLD, TC_COLL_REDUCE, 8, tp_size, &v)) == MPI_ERR_ROOT,
          "reduce root = size: want MPI_ERR_ROOT");
    /* Allreduce and the barrier have no root: any value is ignored. */
    CHECK(TC_Comm_predict(MPI_COMM_WORLD, TC_COLL_ALLREDUCE, 8, -1, &v) == MPI_SUCCESS,
          "allreduce ignores the root");
    if (tp_size >= 2) {
        MPI_Comm half, inter;
        MPI_Comm_split(MPI_COMM_WORLD, tp_rank % 2, tp_rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, tp_rank % 2 ? 0 : 1, 77, &inter);
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
        CHECK(tp_class(TC_Comm_predict(inter, TC_COLL_BCAST, 8, 0, &v)) == MPI_ERR_COMM,
              "intercommunicator: want MPI_ERR_COMM");
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &tp_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &tp_size);
    tt_check_np("test_predict");
    int same = 0, pose = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--same") == 0) {
            same = 1;
        } else if (strcmp(argv[i], "--no-model") == 0) {
            tp_no_model = 1;
        } else if (strcmp(argv[i], "--pose-nodes") == 0) {
            pose = 1;
        } else if (strcmp(argv[i], "--expect") == 0 && i + 1 < argc) {
            i++;
            continue; /* after the context exists, below */
        } else {
            if (tp_rank == 0)
                fprintf(stderr, "test_predict: unknown argument '%s'\n", argv[i]);
            MPI_Finalize();
            return 2;
        }
    }

    char loc[64] = "";
    if (pose) {
        /* The library reads TC_LOCALITY_FILE at its first context creation,
         * which comes after this. */
        if (tp_rank == 0) {
            snprintf(loc, sizeof loc, "/tmp/tc-predict-%ld.loc", (long)getpid());
            FILE *f = fopen(loc, "w");
            if (!f || fprintf(f, "shape node=%d\n", tp_size) < 0 || fclose(f) != 0) {
                fprintf(stderr, "test_predict: cannot write %s\n", loc);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
        MPI_Bcast(loc, sizeof loc, MPI_CHAR, 0, MPI_COMM_WORLD);
        setenv("TC_LOCALITY_FILE", loc, 1);
    }

    /* A communicator without a context: the first call creates it
     * (collectively, as TC_Bcast would). */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    tp_values(dup, "fresh dup", same);
    MPI_Comm_free(&dup);
    tp_values(MPI_COMM_WORLD, "world", same);
    MPI_Comm self;
    MPI_Comm_dup(MPI_COMM_SELF, &self);
    tp_values(self, "self", 0);
    MPI_Comm_free(&self);

    for (int i = 1; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--expect") != 0)
            continue;
        char opname[16];
        size_t bytes;
        double want, v = -2.0;
        int op;
        if (sscanf(argv[++i], "%15[a-z]:%zu:%lf", opname, &bytes, &want) != 3 ||
            (op = tp_op_parse(opname)) < 0) {
            CHECK(0, "--expect '%s': want op:bytes:usec", argv[i]);
            continue;
        }
        int rc = TC_Comm_predict(MPI_COMM_WORLD, op, bytes, 0, &v);
        CHECK(rc == MPI_SUCCESS && fabs(v - want) <= 1e-9 * fmax(1.0, want),
              "--expect %s %zu B: rc %d, %.12g (want %.12g)", opname, bytes, rc, v, want);
    }
    tp_errors();
    MPI_Barrier(MPI_COMM_WORLD);
    if (pose && tp_rank == 0)
        unlink(loc);

    long fails = tt_failures_all(), mine = tt_checks(), checks = 0;
    MPI_Allreduce(&mine, &checks, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (tp_rank == 0)
        printf("test_predict np=%d: %ld checks, %ld failures\n", tp_size, checks, fails);
    MPI_Finalize();
    return fails != 0;
}
