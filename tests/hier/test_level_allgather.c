/* MPI test of the group Allgatherv of the hierarchical Allgather
 * (src/hier/level_allgather.c): for groups of MPI_COMM_WORLD's ranks (all,
 * the even ranks, all but rank 0) and every algorithm (recursive doubling,
 * ring, Bruck), pieces of random lengths with zeros among them, every member
 * checks the whole buffer against a pattern it computes itself; the byte
 * after the buffer must stay untouched, and non-members take no part.
 */
#include "hier/level_allgather.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_test_common.h"

/* Odd cases wait through base/wait_mpi.h's polling waits (yield after a
 * short spin, as on an oversubscribed node), even ones through the MPI's
 * blocking calls (NULL). */
static const tc_wait_info_t poll_wait = {
    .comm_name = "test", .timeout_s = 120.0, .spin_polls = 50, .policy = TC_WAIT_YIELD};

#define MAX_GROUP 64
#define GUARD     0x3C

static unsigned char pattern(int k, size_t i, int cid)
{
    return (unsigned char)((k * 131 + (int)i * 7 + cid * 17) % 251);
}

static uint32_t rnd(uint32_t a, uint32_t b)
{
    uint64_t x = (uint64_t)a * 0x9E3779B97F4A7C15ull ^ (uint64_t)(b + 1) * 0xC2B2AE3D27D4EB4Full;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    return (uint32_t)(x >> 29);
}

static void run_group(const char *gname, const int *members, int n)
{
    int me = -1;
    for (int k = 0; k < n; k++)
        me = members[k] == tt_rank ? k : me;
    if (me < 0)
        return;
    size_t off[MAX_GROUP], len[MAX_GROUP];
    static const int maxes[] = {0, 1, 9, 300, 70000};
    int cid = 0;
    for (int alg = 0; alg < TC_HIER_ALLGATHER_LAST; alg++)
        for (size_t si = 0; si < sizeof maxes / sizeof maxes[0]; si++)
            for (int rep = 0; rep < 3; rep++, cid++) {
                size_t total = 0;
                for (int k = 0; k < n; k++) {
                    uint32_t r = rnd((uint32_t)cid, (uint32_t)k);
                    len[k] = maxes[si] == 0 || r % 4 == 0 ? 0
                             : rep == 0                   ? (size_t)maxes[si]
                                                          : r % (uint32_t)(maxes[si] + 1);
                    off[k] = total;
                    total += len[k];
                }
                unsigned char *buf = malloc(total + 1), *tmp = malloc(total + 1);
                memset(buf, 0xA5, total + 1);
                buf[total] = GUARD;
                for (size_t i = 0; i < len[me]; i++)
                    buf[off[me] + i] = pattern(me, i, cid);
                int rc = tc_hier_allgatherv_group(
                    (char *)buf, off, len, members, n, me, (tc_hier_allgather_alg_t)alg,
                    (char *)tmp, MPI_COMM_WORLD, 77, (cid & 1) ? &poll_wait : NULL);
                size_t bad = 0;
                for (int k = 0; k < n; k++)
                    for (size_t i = 0; i < len[k]; i++)
                        bad += buf[off[k] + i] != pattern(k, i, cid);
                CHECK(rc == MPI_SUCCESS && bad == 0 && buf[total] == GUARD,
                      "%s (%d members), %s, pieces up to %d (case %d): rc %d, %zu bytes wrong%s",
                      gname, n, tc_hier_allgather_alg_name((tc_hier_allgather_alg_t)alg), maxes[si],
                      cid, rc, bad, buf[total] == GUARD ? "" : ", guard overwritten");
                tt_case_done();
                free(buf);
                free(tmp);
            }
}

int main(int argc, char **argv)
{
    size_t f, s;
    tt_init(&argc, &argv, "test_level_allgather", 4096, 64, &f, &s);
    int members[MAX_GROUP], n = 0;
    for (int r = 0; r < tt_size && n < MAX_GROUP; r++)
        members[n++] = r;
    run_group("world", members, n);
    n = 0;
    for (int r = 0; r < tt_size && n < MAX_GROUP; r += 2)
        members[n++] = r;
    run_group("even ranks", members, n);
    n = 0;
    for (int r = 1; r < tt_size && n < MAX_GROUP; r++)
        members[n++] = r;
    run_group("all but rank 0", members, n);
    MPI_Barrier(MPI_COMM_WORLD);
    return tt_finish();
}
