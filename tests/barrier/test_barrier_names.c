/* Unit test (no MPI traffic) of the message-barrier entry points that need
 * no communication: the algorithm names, and the argument checks of
 * tc_msg_barrier, which must reject bad input before any message moves (so
 * MPI need not even be initialised here), and return at once for n = 1. */
#include "barrier/msg_barrier.h"

#include <stdio.h>
#include <string.h>

static int failures;

static void expect_str(const char *what, const char *got, const char *want)
{
    if (!got || strcmp(got, want) != 0) {
        fprintf(stderr, "FAIL %s: got \"%s\", expected \"%s\"\n", what, got ? got : "(null)", want);
        failures++;
    }
}

static void expect_rc(const char *what, int got, int want)
{
    if (got != want) {
        fprintf(stderr, "FAIL %s: returned %d, expected %d\n", what, got, want);
        failures++;
    }
}

int main(void)
{
    /* The names are what TC_BARRIER_ALG and the tests accept: fixed strings. */
    static const char *const want[TC_BARRIER_ALG_LAST] = {"central", "tree", "dissemination",
                                                          "tournament", "pairwise"};
    for (int a = 0; a < TC_BARRIER_ALG_LAST; a++)
        expect_str("tc_barrier_alg_name", tc_barrier_alg_name((tc_barrier_alg_t)a), want[a]);
    expect_str("tc_barrier_alg_name(LAST)", tc_barrier_alg_name(TC_BARRIER_ALG_LAST), "unknown");
    expect_str("tc_barrier_alg_name(-1)", tc_barrier_alg_name((tc_barrier_alg_t)-1), "unknown");

    expect_rc("n = 0", tc_msg_barrier(TC_BARRIER_CENTRAL, MPI_COMM_NULL, NULL, 0, 0, 2, 1, NULL),
              tc_err(TC_ERR_ARG));
    expect_rc("me = n", tc_msg_barrier(TC_BARRIER_CENTRAL, MPI_COMM_NULL, NULL, 3, 3, 2, 1, NULL),
              tc_err(TC_ERR_ARG));
    expect_rc("me < 0", tc_msg_barrier(TC_BARRIER_PAIRWISE, MPI_COMM_NULL, NULL, 3, -1, 2, 1, NULL),
              tc_err(TC_ERR_ARG));
    expect_rc("tree arity 1",
              tc_msg_barrier(TC_BARRIER_TREE, MPI_COMM_NULL, NULL, 3, 0, 1, 1, NULL),
              tc_err(TC_ERR_ARG));
    expect_rc("unknown alg",
              tc_msg_barrier(TC_BARRIER_ALG_LAST, MPI_COMM_NULL, NULL, 3, 0, 2, 1, NULL),
              tc_err(TC_ERR_ARG));
    /* A single member has nobody to wait for: no MPI call at all. */
    for (int a = 0; a < TC_BARRIER_ALG_LAST; a++)
        expect_rc("n = 1",
                  tc_msg_barrier((tc_barrier_alg_t)a, MPI_COMM_NULL, NULL, 1, 0, 2, 1, NULL),
                  TC_OK);

    printf("%s msg_barrier_names: %d failures\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
