/* Segment layout arithmetic (src/shm/layout.c) against sizes computed by hand. */
#include <stdio.h>

#include "shm/layout.h"

static int failures;

#define CHECK_EQ(what, got, want)                                                                  \
    do {                                                                                           \
        unsigned long long g_ = (unsigned long long)(got), w_ = (unsigned long long)(want);        \
        if (g_ != w_) {                                                                            \
            fprintf(stderr, "FAIL %s:%d: %s = %llu, expected %llu\n", __FILE__, __LINE__, what,    \
                    g_, w_);                                                                       \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

int main(void)
{
    tc_shm_layout_t l;
    int checks = 0;

    /* p = 4, S = 8, q = 2, f = 8 KiB, 4 KiB pages, 64 B lines:
     * header: line 0, numa_node[4] at 64 (16 B), leaders[4] at 128 (16 B) -> one page;
     * control block: 3 lines -> one page; region = 4096 + 8 * 8192 = 69632;
     * total = 4096 + 4 * 69632 = 282624. */
    CHECK_EQ("rc", tc_shm_layout_compute(&l, 4, 8, 2, 8192, 4096, 64), 0);
    CHECK_EQ("numa_off", l.numa_off, 64);
    CHECK_EQ("leaders_off", l.leaders_off, 128);
    CHECK_EQ("header_size", l.header_size, 4096);
    CHECK_EQ("ctrl_size", l.ctrl_size, 4096);
    CHECK_EQ("region_size", l.region_size, 69632);
    CHECK_EQ("total", l.total, 282624);
    CHECK_EQ("done(2)", tc_shm_layout_done(&l, 2), 4096 + 2 * 69632);
    CHECK_EQ("ready(2,1)", tc_shm_layout_ready(&l, 2, 1), 4096 + 2 * 69632 + 2 * 64);
    CHECK_EQ("queue(3)", tc_shm_layout_queue(&l, 3), 4096 + 3 * 69632 + 4096);
    checks += 10;

    /* p = 1000: numa_node[] takes 4000 B from 64, leaders[] from 4096 (4064 rounded up
     * to a line) to 8096 -> two header pages. */
    CHECK_EQ("rc", tc_shm_layout_compute(&l, 1000, 2, 1, 4096, 4096, 64), 0);
    CHECK_EQ("leaders_off", l.leaders_off, 4096);
    CHECK_EQ("header_size", l.header_size, 8192);
    CHECK_EQ("total", l.total, 8192 + 1000ull * (4096 + 2 * 4096));
    checks += 4;

    /* Every block page aligned, regions disjoint, lines distinct, for many shapes. */
    for (int p = 1; p <= 64; p++)
        for (int q = 1; q <= 4; q++)
            for (int S = q; S <= 16; S += q) {
                if (tc_shm_layout_compute(&l, p, S, q, 4096 * (size_t)(1 + S % 3), 4096, 64)) {
                    fprintf(stderr, "FAIL: valid shape p=%d S=%d q=%d rejected\n", p, S, q);
                    failures++;
                    continue;
                }
                checks++;
                for (int i = 0; i < p; i++) {
                    if (tc_shm_layout_region(&l, i) % 4096 || tc_shm_layout_queue(&l, i) % 4096 ||
                        tc_shm_layout_ready(&l, i, q - 1) + 64 > tc_shm_layout_queue(&l, i) ||
                        tc_shm_layout_queue(&l, i) + (size_t)S * l.f !=
                            (i + 1 < p ? tc_shm_layout_region(&l, i + 1) : l.total)) {
                        fprintf(stderr, "FAIL: overlap or misalignment p=%d S=%d q=%d i=%d\n", p, S,
                                q, i);
                        failures++;
                    }
                }
            }

    /* Invalid shapes. */
    struct {
        int p, S, q;
        size_t f, page, line;
    } bad[] = {{0, 1, 1, 4096, 4096, 64},      {1, 0, 1, 4096, 4096, 64},
               {1, 3, 2, 4096, 4096, 64},      {1, 2, 0, 4096, 4096, 64},
               {1, 2, 1, 100, 4096, 64},       {1, 2, 1, 0, 4096, 64},
               {1, 2, 1, 4096, 4000, 64},      {1, 2, 1, 4096, 4096, 48},
               {1, 64, 64, 4096, 4096, 64}, /* 65 control lines do not fit a page */
               {1 << 21, 1, 1, 4096, 4096, 64}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        checks++;
        if (tc_shm_layout_compute(&l, bad[i].p, bad[i].S, bad[i].q, bad[i].f, bad[i].page,
                                  bad[i].line) != -1) {
            fprintf(stderr, "FAIL: invalid shape #%zu accepted\n", i);
            failures++;
        }
    }
    printf("test_layout: %d checks, %d failures\n", checks, failures);
    return failures != 0;
}
