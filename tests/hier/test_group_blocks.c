/* Unit test of src/hier/group_blocks.c: the members' streams of a group
 * (which ranks each member carries, in what order, where in a rank-ordered
 * buffer R) for contiguous, round-robin and partial units, and the copy of a
 * stream's bytes [off, off + len) across block boundaries in both
 * directions, against a byte-by-byte reference built here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hier/group_blocks.h"

static int failures, checks;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        checks++;                                                                                  \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
        }                                                                                          \
    } while (0)

#define P 9

/* Reference stream of member k: blocks of ranks x with owner[x] == k,
 * ascending x. Returns its length. */
static size_t ref_stream(const int *owner, const size_t *bytes, const size_t *prefix, const char *r,
                         int k, char *out)
{
    size_t n = 0;
    for (int x = 0; x < P; x++)
        if (owner[x] == k) {
            memcpy(out + n, r + prefix[x], bytes[x]);
            n += bytes[x];
        }
    return n;
}

static void run(const char *what, const int *owner, int nmem, const size_t *bytes, int want_order)
{
    size_t prefix[P + 1] = {0};
    for (int x = 0; x < P; x++)
        prefix[x + 1] = prefix[x] + bytes[x];
    const size_t total = prefix[P];
    char *r = malloc(total + 1), *r2 = malloc(total + 1), *ref = malloc(total + 1),
         *got = malloc(total + 1);
    for (size_t i = 0; i < total; i++)
        r[i] = (char)(i * 7 + 3);
    tc_hier_gblocks_t g;
    CHECK(tc_hier_gblocks_init(&g, owner, P, nmem, bytes) == TC_OK, "%s: init", what);
    CHECK(g.rank_order == (want_order != 0), "%s: rank_order %d", what, (int)g.rank_order);
    size_t off = 0;
    for (int k = 0; k < nmem; k++) {
        const size_t len = ref_stream(owner, bytes, prefix, r, k, ref);
        CHECK(g.len[k] == len, "%s: member %d: len %zu, want %zu", what, k, g.len[k], len);
        CHECK(g.off[k] == off, "%s: member %d: off %zu, want %zu", what, k, g.off[k], off);
        off += len;
        int first = -1, last = -1, count = 0;
        for (int x = 0; x < P; x++)
            if (owner[x] == k) {
                first = first < 0 ? x : first;
                last = x;
                count++;
            }
        CHECK(g.contig[k] == (last - first + 1 == count), "%s: member %d: contig", what, k);
        if (g.contig[k] && len > 0)
            CHECK(memcmp(r + tc_hier_gblocks_at(&g, k, prefix), ref, len) == 0,
                  "%s: member %d: one run at the wrong place", what, k);
        /* Every (off, len) window out of R, and back into a copy of R
         * cleared where the stream lies. */
        for (size_t a = 0; a <= len; a++)
            for (size_t b = a; b <= len; b++) {
                memset(got, 0x55, len + 1);
                tc_hier_gblocks_copy(&g, k, r, prefix, bytes, a, got, b - a, false);
                CHECK(memcmp(got, ref + a, b - a) == 0 && got[b - a] == 0x55,
                      "%s: member %d: out [%zu, %zu)", what, k, a, b);
            }
        memcpy(r2, r, total);
        for (int x = 0; x < P; x++)
            if (owner[x] == k)
                memset(r2 + prefix[x], 0, bytes[x]);
        for (size_t a = 0; a < len; a += 3)
            tc_hier_gblocks_copy(&g, k, r2, prefix, bytes, a, ref + a, len - a < 3 ? len - a : 3,
                                 true);
        CHECK(memcmp(r2, r, total) == 0, "%s: member %d: into R", what, k);
    }
    tc_hier_gblocks_free(&g);
    free(r);
    free(r2);
    free(ref);
    free(got);
}

int main(void)
{
    const size_t uneven[P] = {3, 0, 5, 1, 4, 0, 2, 6, 1};
    const size_t same[P] = {4, 4, 4, 4, 4, 4, 4, 4, 4};
    /* Contiguous placement: 3 members of 3 ranks each, in order. */
    const int contig[P] = {0, 0, 0, 1, 1, 1, 2, 2, 2};
    run("contiguous", contig, 3, same, 1);
    run("contiguous, uneven sizes", contig, 3, uneven, 1);
    /* Round robin: rank x on member x % 3. */
    const int rr[P] = {0, 1, 2, 0, 1, 2, 0, 1, 2};
    run("round robin", rr, 3, uneven, 0);
    /* A unit that is part of the ranks (a node group: the others -1), its
     * members' ranks consecutive: one run of R from its first rank. */
    const int part[P] = {-1, -1, 0, 0, 1, -1, -1, -1, -1};
    run("partial unit", part, 2, uneven, 1);
    /* Members whose ranks interleave (a split communicator). */
    const int mixed[P] = {0, 1, 1, 0, 2, 2, 3, 0, 3};
    run("interleaved", mixed, 4, uneven, 0);
    printf("test_group_blocks: %d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
