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
     * control block: 18 lines (below), 2 (K - 1) extra inline lines, then the small
     * broadcast's bdone line and ring (1 + R lines): c1 bytes (three pages for K = 3,
     * R = 128); region = c1 + 8 * 8192; total = 4096 + 4 * region. */
    const size_t c1 =
        (18 + 2 * (TC_SHM_BCAST_INLINE_LINES - 1) + 1 + TC_SHM_BCAST_RING + 63) / 64 * 4096;
    const size_t rg1 = c1 + 8 * 8192;
    CHECK_EQ("rc", tc_shm_layout_compute(&l, 4, 8, 2, 8192, 4096, 64), 0);
    CHECK_EQ("numa_off", l.numa_off, 64);
    CHECK_EQ("leaders_off", l.leaders_off, 128);
    CHECK_EQ("header_size", l.header_size, 4096);
    CHECK_EQ("ctrl_size", l.ctrl_size, c1);
    CHECK_EQ("region_size", l.region_size, rg1);
    CHECK_EQ("total", l.total, 4096 + 4 * rg1);
    CHECK_EQ("done(2)", tc_shm_layout_done(&l, 2), 4096 + 2 * rg1);
    CHECK_EQ("ready(2,1)", tc_shm_layout_ready(&l, 2, 1), 4096 + 2 * rg1 + 2 * 64);
    CHECK_EQ("queue(3)", tc_shm_layout_queue(&l, 3), 4096 + 3 * rg1 + c1);
    CHECK_EQ("no packed ring", l.pring_off, 0);
    checks += 11;
    /* Barrier lines after done + 2 ready lines: arrive at line 3, then release, counter,
     * crelease, round[0..1] (ceil(log2 4) = 2), tround[0..1]: 11 lines, still one page. */
    CHECK_EQ("brounds", l.brounds, 2);
    CHECK_EQ("bctrl_off", l.bctrl_off, 3 * 64);
    CHECK_EQ("bline(2, arrive)", tc_shm_layout_bline(&l, 2, TC_SHM_BLINE_ARRIVE),
             4096 + 2 * rg1 + 3 * 64);
    CHECK_EQ("bline(0, crelease)", tc_shm_layout_bline(&l, 0, TC_SHM_BLINE_CRELEASE),
             4096 + 6 * 64);
    CHECK_EQ("bround(3, 1)", tc_shm_layout_bround(&l, 3, 1), 4096 + 3 * rg1 + 8 * 64);
    CHECK_EQ("btround(1, 1)", tc_shm_layout_btround(&l, 1, 1), 4096 + rg1 + 10 * 64);
    checks += 6;
    /* Then the sleepers line (11), the race's 6 lines (12..17), the broadcast's
     * extra inline lines from line 18, TC_SHM_BCAST_INLINE_LINES - 1 per bank, and
     * the small broadcast's bdone line and ring after them. */
    CHECK_EQ("sleepers(2)", tc_shm_layout_sleepers(&l, 2), 4096 + 2 * rg1 + 11 * 64);
    CHECK_EQ("iline(2, 1, 1)", tc_shm_layout_iline(&l, 2, 1, 1),
             4096 + 2 * rg1 + (18 + (TC_SHM_BCAST_INLINE_LINES - 1)) * 64);
    CHECK_EQ("bdone(2)", tc_shm_layout_bdone(&l, 2),
             4096 + 2 * rg1 + (18 + 2 * (TC_SHM_BCAST_INLINE_LINES - 1)) * 64);
    CHECK_EQ("bring(1, R-1)", tc_shm_layout_bring(&l, 1, TC_SHM_BCAST_RING - 1),
             4096 + rg1 + (18 + 2 * (TC_SHM_BCAST_INLINE_LINES - 1) + TC_SHM_BCAST_RING) * 64);
    checks += 4;

    /* p = 1000: numa_node[] takes 4000 B from 64, leaders[] from 4096 (4064 rounded up
     * to a line) to 8096 -> two header pages. */
    CHECK_EQ("rc", tc_shm_layout_compute(&l, 1000, 2, 1, 4096, 4096, 64), 0);
    CHECK_EQ("leaders_off", l.leaders_off, 4096);
    CHECK_EQ("header_size", l.header_size, 8192);
    /* control: done, 1 ready, 4 + 2 * 10 barrier lines, sleepers, the race's 6, K - 1
     * extra inline lines, 1 + R ring lines. */
    CHECK_EQ("ctrl_size", l.ctrl_size,
             (2 + 24 + 1 + 6 + (TC_SHM_BCAST_INLINE_LINES - 1) + 1 + TC_SHM_BCAST_RING + 63) / 64 *
                 4096);
    CHECK_EQ("total", l.total, 8192 + 1000ull * (l.ctrl_size + 2 * 4096));
    CHECK_EQ("brounds", l.brounds, 10);
    checks += 6;
    /* One process: no round lines (its barrier is a no-op). */
    CHECK_EQ("rc", tc_shm_layout_compute(&l, 1, 1, 1, 4096, 4096, 64), 0);
    CHECK_EQ("brounds", l.brounds, 0);
    checks += 2;

    /* With a reduce area: p = 2, S = 16, q = 16, f = 4 KiB, 8 slots of 32 KiB.
     * control lines: 1 + 16 + 4 + 16 inline = 37, then 4 + 2 barrier lines (43), the
     * sleepers line (44) and 16 (K - 1) extra broadcast inline lines, K =
     * TC_SHM_BCAST_INLINE_LINES, then 1 + R lines of the small broadcast's ring
     * (R = TC_SHM_BCAST_RING), then the packed ring's pdone line and its P
     * lines (P = 64 entries x 16 B / 64 B), from line pr (the race's 6 lines
     * come before the extra inline lines, from 50): c = four control pages for
     * K = 3, R = 128, P = 16; rseq at line 17; contrib[0] after the queue at
     * c + 16 * 4096; region = contrib[0] + 2 * 8 * 32768; total = 4096 + 2 * region. */
    const size_t pr = 50 + 16 * (TC_SHM_BCAST_INLINE_LINES - 1) + 1 + TC_SHM_BCAST_RING;
    const size_t c = (pr + 1 + 16 + 63) / 64 * 4096;
    const size_t rd = c + 16 * 4096, rg = rd + 2 * 8 * 32768;
    CHECK_EQ("rc", tc_shm_layout_compute_full(&l, 2, 16, 16, 4096, 8, 32768, 4096, 64), 0);
    CHECK_EQ("ctrl_size", l.ctrl_size, c);
    CHECK_EQ("rctrl_off", l.rctrl_off, 17 * 64);
    CHECK_EQ("rdata_off", l.rdata_off, rd);
    CHECK_EQ("region_size", l.region_size, rg);
    CHECK_EQ("total", l.total, 4096 + 2 * rg);
    CHECK_EQ("rline(1, done)", tc_shm_layout_rline(&l, 1, TC_SHM_RLINE_DONE), 4096 + rg + 19 * 64);
    CHECK_EQ("inline(0, 15)", tc_shm_layout_rline(&l, 0, TC_SHM_RLINE_INLINE0 + 15),
             4096 + (17 + 4 + 15) * 64);
    CHECK_EQ("pring_off", l.pring_off, pr * 64);
    CHECK_EQ("pdone(1)", tc_shm_layout_pdone(&l, 1), 4096 + rg + pr * 64);
    /* Entry c of the packed ring: 16 c bytes after the line after pdone, so
     * line 1 + c / 4 with 64 B lines; 128 B lines hold the ring in 8. */
    CHECK_EQ("packed lines", tc_shm_layout_plines(64), 16);
    CHECK_EQ("packed lines 128", tc_shm_layout_plines(128), 8);
    CHECK_EQ("pentry(0, 0)", tc_shm_layout_pentry(&l, 0, 0), 4096 + (pr + 1) * 64);
    CHECK_EQ("pentry(1, 6)", tc_shm_layout_pentry(&l, 1, 6), 4096 + rg + (pr + 2) * 64 + 2 * 16);
    CHECK_EQ("pentry(1, last)", tc_shm_layout_pentry(&l, 1, TC_SHM_PACKED_RING - 1),
             4096 + rg + (pr + 16) * 64 + 3 * 16);
    CHECK_EQ("rcontrib(1, 3)", tc_shm_layout_rcontrib(&l, 1, 3), 4096 + rg + rd + 3 * 32768);
    CHECK_EQ("rresult(0, 7)", tc_shm_layout_rresult(&l, 0, 7), 4096 + rd + 15 * 32768);
    CHECK_EQ("rdepth fixed", l.rdepth, 8);
    CHECK_EQ("ridx_off fixed", l.ridx_off, 0);
    {
        /* Writer-chosen slots: 8 slots of which 4 unless contended; slot_of[8]
         * (32 bytes) after the result slots, the region a page longer. */
        tc_shm_layout_t w = l;
        CHECK_EQ("set_rdepth", tc_shm_layout_set_rdepth(&w, 4), 0);
        CHECK_EQ("rdepth", w.rdepth, 4);
        CHECK_EQ("ridx_off", w.ridx_off, rg);
        CHECK_EQ("rslot_of(1)", tc_shm_layout_rslot_of(&w, 1), 4096 + (rg + 4096) + rg);
        CHECK_EQ("region_size claims", w.region_size, rg + 4096);
        CHECK_EQ("total claims", w.total, 4096 + 2 * (rg + 4096));
        CHECK_EQ("rcontrib unchanged", tc_shm_layout_rcontrib(&w, 0, 3), 4096 + rd + 3 * 32768);
        CHECK_EQ("set_rdepth 8", tc_shm_layout_set_rdepth(&w, 8), 0);
        CHECK_EQ("back to fixed", w.ridx_off + w.region_size, rg);
        CHECK_EQ("set_rdepth 1", tc_shm_layout_set_rdepth(&w, 1),
                 (unsigned long long)tc_err(TC_ERR_ARG));
        CHECK_EQ("set_rdepth 9", tc_shm_layout_set_rdepth(&w, 9),
                 (unsigned long long)tc_err(TC_ERR_ARG));
        checks += 11;
    }
    /* Barrier lines after the 16 inline lines: line 37; 37 + 4 + 2 = 43 lines. */
    CHECK_EQ("bctrl_off", l.bctrl_off, 37 * 64);
    CHECK_EQ("btround(1, 0)", tc_shm_layout_btround(&l, 1, 0), 4096 + rg + 42 * 64);
    /* Sleepers at line 43, the race's 6 lines (2 + a ring of 32 doubles) from 44,
     * the extra inline lines from 50, bank 15's last. */
    CHECK_EQ("iline(1, 15, 1)", tc_shm_layout_iline(&l, 1, 15, 1),
             4096 + rg + (50 + 15 * (TC_SHM_BCAST_INLINE_LINES - 1)) * 64);
    CHECK_EQ("iline(1, 15, K-1)", tc_shm_layout_iline(&l, 1, 15, TC_SHM_BCAST_INLINE_LINES - 1),
             4096 + rg + (50 + 16 * (TC_SHM_BCAST_INLINE_LINES - 1) - 1) * 64);
    /* p = 2^20, 40 banks: 61 lines + 4 + 2 * 20 round lines = 105 -> the barrier lines
     * spill into a second control page; the sleepers line, the race's 6 lines and
     * 40 (K - 1) extra inline lines and the 1 + R lines of the small broadcast's
     * ring follow. */
    CHECK_EQ("rc", tc_shm_layout_compute_full(&l, 1 << 20, 40, 40, 4096, 2, 64, 4096, 64), 0);
    CHECK_EQ("brounds", l.brounds, 20);
    CHECK_EQ("bctrl_off", l.bctrl_off, 61 * 64);
    CHECK_EQ("iline_off", l.iline_off, 112 * 64);
    CHECK_EQ("ctrl_size", l.ctrl_size,
             (112 + 40 * (TC_SHM_BCAST_INLINE_LINES - 1) + 1 + TC_SHM_BCAST_RING + 1 + 16 + 63) /
                 64 * 4096);
    /* 63 banks: 1 + 63 + 20 = 84 lines, + 4 + 4 barrier lines, sleepers, the race's
     * 6 lines, then 63 (K - 1) extra inline lines and the small broadcast's 1 + R
     * lines. */
    CHECK_EQ("rc", tc_shm_layout_compute_full(&l, 3, 63, 63, 4096, 2, 1024, 4096, 64), 0);
    CHECK_EQ("ctrl_size", l.ctrl_size,
             (99 + 63 * (TC_SHM_BCAST_INLINE_LINES - 1) + 1 + TC_SHM_BCAST_RING + 1 + 16 + 63) /
                 64 * 4096);
    CHECK_EQ("region_size", l.region_size, l.ctrl_size + 63 * 4096 + 4096);
    /* Bad reduce areas: one slot, slot not a line multiple. */
    CHECK_EQ("rc", tc_shm_layout_compute_full(&l, 2, 2, 1, 4096, 1, 1024, 4096, 64),
             (unsigned long long)tc_err(TC_ERR_ARG));
    CHECK_EQ("rc", tc_shm_layout_compute_full(&l, 2, 2, 1, 4096, 4, 1000, 4096, 64),
             (unsigned long long)tc_err(TC_ERR_ARG));
    checks += 31;

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
                    /* Barrier lines: ceil(log2 p) rounds, after the ready lines, inside the
                     * control block, in the order of the enum. */
                    if ((1 << l.brounds) < p || (l.brounds > 0 && (1 << (l.brounds - 1)) >= p) ||
                        tc_shm_layout_bline(&l, i, TC_SHM_BLINE_ARRIVE) !=
                            tc_shm_layout_ready(&l, i, q - 1) + 64 ||
                        tc_shm_layout_bround(&l, i, 0) !=
                            tc_shm_layout_bline(&l, i, TC_SHM_BLINE_CRELEASE) + 64 ||
                        tc_shm_layout_btround(&l, i, 0) !=
                            tc_shm_layout_bround(&l, i, 0) + (size_t)l.brounds * 64 ||
                        tc_shm_layout_btround(&l, i, l.brounds) > tc_shm_layout_queue(&l, i)) {
                        fprintf(stderr, "FAIL: barrier lines p=%d S=%d q=%d i=%d\n", p, S, q, i);
                        failures++;
                    }
                    /* The extra inline lines: after the sleepers line and the race's
                     * lines, inside the control block. */
                    if (TC_SHM_BCAST_INLINE_LINES > 1 &&
                        (tc_shm_layout_iline(&l, i, 0, 1) !=
                             tc_shm_layout_race(&l, i, TC_SHM_RACE_RING0) + 4 * 64 ||
                         tc_shm_layout_iline(&l, i, q - 1, TC_SHM_BCAST_INLINE_LINES - 1) + 64 >
                             tc_shm_layout_queue(&l, i))) {
                        fprintf(stderr, "FAIL: inline lines p=%d S=%d q=%d i=%d\n", p, S, q, i);
                        failures++;
                    }
                    /* The small broadcast's ring: after the extra inline lines, inside
                     * the control block. */
                    if (tc_shm_layout_bdone(&l, i) !=
                            tc_shm_layout_region(&l, i) + l.iline_off +
                                (size_t)q * (TC_SHM_BCAST_INLINE_LINES - 1) * 64 ||
                        tc_shm_layout_bring(&l, i, 0) != tc_shm_layout_bdone(&l, i) + 64 ||
                        tc_shm_layout_bring(&l, i, TC_SHM_BCAST_RING - 1) + 64 >
                            tc_shm_layout_queue(&l, i)) {
                        fprintf(stderr, "FAIL: ring lines p=%d S=%d q=%d i=%d\n", p, S, q, i);
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
                                  bad[i].line) != tc_err(TC_ERR_ARG)) {
            fprintf(stderr, "FAIL: invalid shape #%zu accepted\n", i);
            failures++;
        }
    }
    /* The node store in the header (tc_shm_layout_add_store). p = 4, S = 8, q = 2,
     * f = 8 KiB: leaders[] ends at 144 -> lock at 192, 1000 lock bytes round to
     * 1024 -> area at 1216, 16384 bytes -> ends at 17600 -> 5 header pages; every
     * region moves by 4 pages. */
    CHECK_EQ("rc", tc_shm_layout_compute(&l, 4, 8, 2, 8192, 4096, 64), 0);
    CHECK_EQ("no store", l.store_lock_off + l.store_off + l.store_bytes, 0);
    CHECK_EQ("rc", tc_shm_layout_add_store(&l, 1000, 16384), 0);
    CHECK_EQ("store_lock_off", l.store_lock_off, 192);
    CHECK_EQ("store_off", l.store_off, 1216);
    CHECK_EQ("store_bytes", l.store_bytes, 16384);
    CHECK_EQ("header_size", l.header_size, 20480);
    CHECK_EQ("total", l.total, 20480 + 4 * rg1);
    CHECK_EQ("done(2)", tc_shm_layout_done(&l, 2), 20480 + 2 * rg1);
    CHECK_EQ("queue(3)", tc_shm_layout_queue(&l, 3), 20480 + 3 * rg1 + c1);
    checks += 10;
    /* Bad sizes leave the layout as it was; (0, 0) removes the store. */
    CHECK_EQ("rc", tc_shm_layout_add_store(&l, 0, 64), (unsigned long long)tc_err(TC_ERR_ARG));
    CHECK_EQ("rc", tc_shm_layout_add_store(&l, ((size_t)1 << 30) + 1, 16384),
             (unsigned long long)tc_err(TC_ERR_ARG));
    CHECK_EQ("header_size", l.header_size, 20480);
    CHECK_EQ("rc", tc_shm_layout_add_store(&l, 0, 0), 0);
    CHECK_EQ("header_size", l.header_size, 4096);
    CHECK_EQ("total", l.total, 4096 + 4 * rg1);
    CHECK_EQ("no store", l.store_lock_off + l.store_off + l.store_bytes, 0);
    checks += 7;
    /* p = 1000: leaders[] ends at 8096 -> lock at 8128; no lock bytes and a
     * two-line area -> ends at 8256 -> three header pages. An area size that is
     * not a line multiple rounds up. */
    CHECK_EQ("rc", tc_shm_layout_compute(&l, 1000, 2, 1, 4096, 4096, 64), 0);
    CHECK_EQ("rc", tc_shm_layout_add_store(&l, 0, 128), 0);
    CHECK_EQ("store_lock_off", l.store_lock_off, 8128);
    CHECK_EQ("store_off", l.store_off, 8128);
    CHECK_EQ("header_size", l.header_size, 12288);
    CHECK_EQ("total", l.total, 12288 + 1000ull * (l.ctrl_size + 2 * 4096));
    CHECK_EQ("rc", tc_shm_layout_add_store(&l, 64, 130), 0);
    CHECK_EQ("store_bytes", l.store_bytes, 192);
    CHECK_EQ("store_off", l.store_off, 8192);
    checks += 9;
    /* Many shapes: lock and area line aligned, after leaders[], inside the header,
     * before region 0. */
    for (int p = 1; p <= 300; p += 7)
        for (size_t lb = 0; lb <= 5000; lb += 1250) {
            if (tc_shm_layout_compute(&l, p, 4, 2, 4096, 4096, 64) ||
                tc_shm_layout_add_store(&l, lb, 16384)) {
                fprintf(stderr, "FAIL: store p=%d lock %zu rejected\n", p, lb);
                failures++;
                continue;
            }
            checks++;
            if (l.store_lock_off % 64 || l.store_off % 64 ||
                l.store_lock_off < l.leaders_off + (size_t)p * sizeof(int) ||
                l.store_off < l.store_lock_off + lb ||
                l.store_off + l.store_bytes > l.header_size || l.header_size % 4096 ||
                l.header_size - (l.store_off + l.store_bytes) >= 4096 ||
                tc_shm_layout_region(&l, 0) != l.header_size ||
                l.total != l.header_size + (size_t)p * l.region_size) {
                fprintf(stderr, "FAIL: store placement p=%d lock %zu\n", p, lb);
                failures++;
            }
        }

    printf("test_layout: %d checks, %d failures\n", checks, failures);
    return failures != 0;
}
