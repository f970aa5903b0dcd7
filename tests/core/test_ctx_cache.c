/* The communicator cache of the call path (src/core/ctx.h, issue 16).
 *
 * A call must never reach the context of another communicator: not of one
 * freed before (the MPI reuses handle values), not of one that shares the
 * cache slot, not of one detached with TC_Comm_detach. Each case calls
 * TC_Allreduce, TC_Bcast, TC_Reduce and TC_Barrier on communicators of
 * different sizes and checks what depends on the size: the sum of ones is
 * the size, a broadcast from the last rank brings its value, and a root
 * equal to the size is refused with MPI_ERR_ROOT (a stale context of a larger
 * communicator would accept it).
 *
 *   churn    60 rounds: create (dup of the world, its halves, a dup of
 *            MPI_COMM_SELF: sizes n, about n/2, 1), use, free; counts how
 *            often a new communicator got the handle value of a freed one
 *   many     70 communicators alive at once (more than the cache's slots),
 *            used round-robin, so slots are evicted and refilled
 *   detach   TC_Comm_detach between calls
 *   threads  with MPI_THREAD_MULTIPLE: 4 threads, each with 17
 *            communicators of its own, calling round-robin (cache misses and
 *            refills from several threads at once); skipped (and said so)
 *            when the MPI does not provide it
 *
 * Expected values come from the sizes the test computes itself, never from
 * the library. Run with TC_TEST_NP set to the launch size.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <topocoll.h>

#include "tc_test_common.h"

#define CHURN_ROUNDS  60
#define MANY_COMMS    70
#define THREADS       4
#define THREAD_COMMS  17
#define THREAD_ROUNDS 10

static int world_rank, world_size;
static const char *prog = "test_ctx_cache";

/* A call that failed: the collectives after it could hang, so stop the job
 * (after the harness counted and printed the failure). */
static void fatal(const char *what)
{
    tt_fail("%s", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Kind k of communicator: 0 dup of the world, 1 this rank's half of the
 * world (ranks split by rank < n/2; both halves non-empty for n >= 2), 2 a
 * dup of MPI_COMM_SELF. Its size as computed here, not asked of the MPI. */
static int expected_size(int kind)
{
    const int lower = world_size / 2;
    switch (kind) {
    case 0:
        return world_size;
    case 1:
        if (world_size == 1)
            return 1;
        return world_rank < lower ? lower : world_size - lower;
    default:
        return 1;
    }
}

static MPI_Comm make_comm(int kind)
{
    MPI_Comm c;
    if (kind == 0)
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
    else if (kind == 1)
        MPI_Comm_split(MPI_COMM_WORLD, world_size > 1 && world_rank >= world_size / 2, world_rank,
                       &c);
    else
        MPI_Comm_dup(MPI_COMM_SELF, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    return c;
}

/* The checks of the header on communicator @p c of @p size processes;
 * @p salt varies the values from call to call. */
static void use_comm(MPI_Comm c, int size, int salt)
{
    int rank, one = 1, sum = -1, val, err, cls;
    MPI_Comm_rank(c, &rank);
    if (TC_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c) != MPI_SUCCESS)
        fatal("TC_Allreduce failed");
    CHECK(sum == size, "TC_Allreduce sum of ones: got %d, want %d", sum, size);
    val = rank == size - 1 ? salt : -1;
    if (TC_Bcast(&val, 1, MPI_INT, size - 1, c) != MPI_SUCCESS)
        fatal("TC_Bcast failed");
    CHECK(val == salt, "TC_Bcast from the last rank: got %d, want %d", val, salt);
    sum = -1;
    if (TC_Reduce(&one, &sum, 1, MPI_INT, MPI_SUM, size - 1, c) != MPI_SUCCESS)
        fatal("TC_Reduce failed");
    CHECK(rank != size - 1 || sum == size,
          "TC_Reduce sum of ones at the last rank: got %d, want %d", sum, size);
    /* Root out of range: every rank detects it locally, before any data. */
    err = TC_Reduce(&one, &sum, 1, MPI_INT, MPI_SUM, size, c);
    MPI_Error_class(err, &cls);
    CHECK(cls == MPI_ERR_ROOT, "TC_Reduce with root == size: error class %d, want %d", cls,
          MPI_ERR_ROOT);
    err = TC_Bcast(&val, 1, MPI_INT, size, c);
    MPI_Error_class(err, &cls);
    CHECK(cls == MPI_ERR_ROOT, "TC_Bcast with root == size: error class %d, want %d", cls,
          MPI_ERR_ROOT);
    if (TC_Barrier(c) != MPI_SUCCESS)
        fatal("TC_Barrier failed");
}

/* Handle values as integers (pointers in Open MPI, ints in MPICH). */
static uintptr_t handle_value(MPI_Comm c)
{
    return (uintptr_t)c;
}

static void test_churn(void)
{
    uintptr_t freed[CHURN_ROUNDS];
    int nfreed = 0, reused = 0;
    for (int i = 0; i < CHURN_ROUNDS; i++) {
        const int kind = i % 3;
        MPI_Comm c = make_comm(kind);
        for (int j = 0; j < nfreed; j++)
            if (freed[j] == handle_value(c)) {
                reused++;
                break;
            }
        use_comm(c, expected_size(kind), i);
        use_comm(c, expected_size(kind), i + 1000); /* now from the cache */
        freed[nfreed++] = handle_value(c);
        MPI_Comm_free(&c);
    }
    if (world_rank == 0)
        printf("%s: churn: %d of %d communicators got the handle value of a freed one\n", prog,
               reused, CHURN_ROUNDS);
}

static void test_many(void)
{
    MPI_Comm c[MANY_COMMS];
    for (int i = 0; i < MANY_COMMS; i++)
        c[i] = make_comm(i % 3);
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < MANY_COMMS; i++)
            use_comm(c[i], expected_size(i % 3), round * MANY_COMMS + i);
    /* Free every other one, make new ones (handle values reused), use all. */
    for (int i = 0; i < MANY_COMMS; i += 2)
        MPI_Comm_free(&c[i]);
    for (int i = 0; i < MANY_COMMS; i += 2)
        c[i] = make_comm((i + 1) % 3);
    for (int i = 0; i < MANY_COMMS; i++)
        use_comm(c[i], expected_size(i % 2 == 0 ? (i + 1) % 3 : i % 3), i);
    for (int i = 0; i < MANY_COMMS; i++)
        MPI_Comm_free(&c[i]);
}

static void test_detach(void)
{
    MPI_Comm c = make_comm(1);
    for (int i = 0; i < 5; i++) {
        use_comm(c, expected_size(1), i);
        CHECK(TC_Comm_detach(c) == MPI_SUCCESS, "TC_Comm_detach failed");
    }
    MPI_Comm_free(&c);
}

typedef struct thread_arg {
    MPI_Comm comm[THREAD_COMMS];
    int kind[THREAD_COMMS];
    int id;
} thread_arg_t;

static void *thread_main(void *p)
{
    thread_arg_t *a = p;
    for (int round = 0; round < THREAD_ROUNDS; round++)
        for (int i = 0; i < THREAD_COMMS; i++)
            use_comm(a->comm[i], expected_size(a->kind[i]), a->id * 100000 + round * 100 + i);
    return NULL;
}

static void test_threads(int provided)
{
    if (provided != MPI_THREAD_MULTIPLE) {
        if (world_rank == 0)
            printf("%s: threads: skipped (MPI_THREAD_MULTIPLE not provided)\n", prog);
        return;
    }
    static thread_arg_t args[THREADS];
    pthread_t tid[THREADS];
    /* Communicators and contexts are made here, in the same order on every
     * rank (collective); the threads then only call on their own. */
    for (int t = 0; t < THREADS; t++) {
        args[t].id = t;
        for (int i = 0; i < THREAD_COMMS; i++) {
            args[t].kind[i] = (t + i) % 3;
            args[t].comm[i] = make_comm(args[t].kind[i]);
            if (TC_Comm_attach(args[t].comm[i]) != MPI_SUCCESS)
                fatal("TC_Comm_attach failed");
        }
    }
    for (int t = 0; t < THREADS; t++)
        if (pthread_create(&tid[t], NULL, thread_main, &args[t]) != 0)
            fatal("pthread_create failed");
    for (int t = 0; t < THREADS; t++)
        pthread_join(tid[t], NULL);
    for (int t = 0; t < THREADS; t++)
        for (int i = 0; i < THREAD_COMMS; i++)
            MPI_Comm_free(&args[t].comm[i]);
    if (world_rank == 0)
        printf("%s: threads: %d threads x %d communicators x %d rounds\n", prog, THREADS,
               THREAD_COMMS, THREAD_ROUNDS);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    world_size = tt_check_np(prog);
    world_rank = tt_rank;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    test_churn();
    test_many();
    test_detach();
    test_threads(provided);
    /* The world communicator itself, after all that. */
    use_comm(MPI_COMM_WORLD, world_size, 7);
    long failures = tt_failures_all();
    if (world_rank == 0)
        printf("%s: %s (%ld checks on rank 0, %ld failures)\n", prog, failures ? "FAIL" : "ok",
               tt_checks(), failures);
    MPI_Finalize();
    return failures ? 1 : 0;
}
