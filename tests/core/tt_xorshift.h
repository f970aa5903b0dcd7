/* The random numbers of the tests' library hooks (red_depth.c, a2a_ahead.c):
 * xorshift64, one state per process, seeded by the pid so that the
 * processes of a test choose independently. */
#ifndef TT_XORSHIFT_H
#define TT_XORSHIFT_H

#include <stdint.h>
#include <unistd.h>

static inline uint64_t tt_xorshift_seed(void)
{
    const uint64_t x = 0x9e3779b97f4a7c15ull ^ ((uint64_t)getpid() << 17);
    return x ? x : 1;
}

static inline uint64_t tt_xorshift_next(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *state = x;
}

#endif /* TT_XORSHIFT_H */
