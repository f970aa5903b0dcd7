/* Linked into test_alltoall: with TT_A2A_AHEAD=random in the environment,
 * every Alltoall(v) call of several bank uses, on every process, publishes
 * a random number of uses ahead of the one it reads (shm/alltoall.c's
 * run-ahead: 0, the whole queue's q - 1, or in between) instead of
 * following the contention signal, which no test can set on purpose. So the
 * tests' results also hold while the peers run ahead by different amounts
 * that change from call to call. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shm/alltoall.h"
#include "tt_xorshift.h"

static uint64_t tt_ahead_state;

static uint64_t tt_ahead_random(const tc_shm_comm_t *s)
{
    const uint64_t x = tt_xorshift_next(&tt_ahead_state);
    const uint64_t most = (uint64_t)s->layout.q - 1;
    switch (x % 4) {
    case 0:
        return 0;
    case 1:
        return most;
    default:
        return (x >> 8) % (most + 1);
    }
}

__attribute__((constructor)) static void tt_ahead_install(void)
{
    const char *v = getenv("TT_A2A_AHEAD");
    if (!v || strcmp(v, "random") != 0)
        return;
    tt_ahead_state = tt_xorshift_seed();
    tc_shm_a2a_test_ahead = tt_ahead_random;
}
