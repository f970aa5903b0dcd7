/* Linked into the reduction tests (test_reduce, test_reduce_scatter,
 * test_scan): with TT_RED_DEPTH=random in the environment, every reduction
 * call of every process chooses its own depth of the writer-chosen slots
 * (shm/reduce_slots.c) at random, the ring's rdepth and its full rslots
 * often among them, instead of the contention signal, which no test can
 * set on purpose. So the tests' results also hold while the peers' depths
 * differ and change from call to call (slots released from a deep call
 * reused by a shallow one, and the other way round). The test's
 * TC_SHM_REDUCE_SLOTS_CONTENDED must be above TC_SHM_REDUCE_SLOTS for the
 * slots to be the writers' choice at all. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shm/reduce_proto.h"
#include "tt_xorshift.h"

static uint64_t tt_depth_state;

static uint64_t tt_depth_random(const tc_shm_comm_t *s)
{
    const uint64_t x = tt_xorshift_next(&tt_depth_state);
    const uint64_t lo = (uint64_t)s->layout.rdepth, hi = (uint64_t)s->layout.rslots;
    switch (x % 4) {
    case 0:
        return lo;
    case 1:
        return hi;
    default:
        return lo + (x >> 8) % (hi - lo + 1);
    }
}

__attribute__((constructor)) static void tt_depth_install(void)
{
    const char *v = getenv("TT_RED_DEPTH");
    if (!v || strcmp(v, "random") != 0)
        return;
    tt_depth_state = tt_xorshift_seed();
    tc_red_test_depth = tt_depth_random;
}
