/* f and S selection (src/shm/params.c): the paper-000 model, by hand; a
 * segment's parameters from the settings (tc_shm_params_local, _settle). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "shm/params.h"
#include "shm/segment.h"

static int failures, checks;

static void check(const char *what, double got, double want)
{
    checks++;
    if (fabs(got - want) > 1e-9 * (fabs(want) + 1)) {
        fprintf(stderr, "FAIL %s: got %.17g, expected %.17g\n", what, got, want);
        failures++;
    }
}

/* @p x rounded up to a cache line (TC_CACHELINE: 64 unless the build says otherwise). */
static double up_to_line(double x)
{
    return ceil(x / TC_CACHELINE) * TC_CACHELINE;
}

/* A segment's parameters as the context proposes them, from the environment. */
static void test_local(void)
{
    const double page = (double)sysconf(_SC_PAGESIZE);
    tc_shm_params_t p;
    tc_shm_policy_t pol;

    for (int id = 0; id < tc_shm_config.count; id++)
        unsetenv(tc_shm_config.table[id].name);
    unsetenv("TC_LOCK_SCHEME");
    /* Defaults: f for TC_SHM_DESIGN_SIZE = 100K and TC_SHM_TW_RATIO = 10000
     * (sqrt(1024000000) = 32000 -> 32 KiB with 4 KiB pages), S from
     * TC_SHM_QUEUE_BYTES = 1M with 16 banks. */
    tc_config_reset();
    tc_shm_params_local(&p, 0, 2);
    const double f = ceil(sqrt(102400.0 * 10000) / page) * page;
    check("local f", (double)p.f, f);
    if (page == 4096)
        check("local f 32K", (double)p.f, 32768);
    check("local S", p.S, tc_shm_params_queue_length(1 << 20, (size_t)f, 16));
    check("local q", p.q, 16);
    check("local tree", p.tree, TC_TREE_KARY);
    check("local tw", p.tw_over_t, 10000);
    check("local slot bytes", (double)p.reduce_slot_bytes, 32768);
    /* auto slots: 1 MiB of 32 KiB slots per process up to 16 processes on the
     * node, 16 MiB per node beyond, never fewer than 8. */
    check("local slots np 2", p.reduce_slots, 32);
    tc_shm_params_local(&p, 0, 16);
    check("local slots np 16", p.reduce_slots, 32);
    tc_shm_params_local(&p, 0, 32);
    check("local slots np 32", p.reduce_slots, 16);
    tc_shm_params_local(&p, 0, 48);
    check("local slots np 48", p.reduce_slots, 10);
    tc_shm_params_local(&p, 0, 256);
    check("local slots np 256", p.reduce_slots, 8);
    check("local tree max", (double)p.reduce_tree_max, 16384);
    check("local lock", p.lock_scheme, TC_LOCK_SCHEME_N_MCS);
    check("enabled", tc_shm_params_enabled(), 1);
    check("local contended slots", p.reduce_slots_contended, 8); /* = slots: off */
    check("local wide off", (double)p.reduce_wide_bytes, 0);
    check("local slots' size", (double)tc_shm_params_rslot_bytes(&p), 32768);
    tc_shm_params_local(&p, 1, 2); /* oversubscribed: no reduction tree unless set */
    check("local tree max oversubscribed", (double)p.reduce_tree_max, 0);
    /* Oversubscribed: wide fragments, so slots of 128 KiB; 1 MiB of them
     * per process, and 4 MiB contended within 16 MiB per node. */
    check("wide auto oversubscribed", (double)p.reduce_wide_bytes, 128 * 1024);
    check("wide min", (double)p.reduce_wide_min, 1024 * 1024);
    check("wide slots' size", (double)tc_shm_params_rslot_bytes(&p), 128 * 1024);
    check("default fragments stay", (double)p.reduce_slot_bytes, 32768);
    check("wide slots np 2", p.reduce_slots, 8);
    check("contended slots np 2", p.reduce_slots_contended, 32);
    tc_shm_params_local(&p, 1, 8);
    check("contended slots np 8", p.reduce_slots_contended, 16);
    tc_shm_params_local(&p, 1, 64);
    check("contended slots np 64 (at least slots)", p.reduce_slots_contended, p.reduce_slots);
    tc_shm_params_local(&p, 0, 8);
    check("not oversubscribed", p.reduce_slots_contended, p.reduce_slots);
    /* Wide fragments off (no race): the slots are the default fragments'. */
    setenv("TC_SHM_REDUCE_WIDE_MIN", "0", 1);
    tc_config_reset();
    tc_shm_params_local(&p, 1, 2);
    check("wide min 0: slots' size", (double)tc_shm_params_rslot_bytes(&p), 32768);
    check("wide min 0: contended slots np 2", p.reduce_slots_contended, 128);
    unsetenv("TC_SHM_REDUCE_WIDE_MIN");
    /* Wide no larger than the default fragments: off. */
    setenv("TC_SHM_REDUCE_WIDE_BYTES", "32K", 1);
    tc_config_reset();
    tc_shm_params_local(&p, 1, 2);
    check("wide = slot: off", (double)p.reduce_wide_bytes, 0);
    setenv("TC_SHM_REDUCE_WIDE_BYTES", "256K", 1);
    tc_config_reset();
    tc_shm_params_local(&p, 0, 2);
    check("wide set, not oversubscribed", (double)p.reduce_wide_bytes, 256 * 1024);
    check("wide set: slots' size", (double)tc_shm_params_rslot_bytes(&p), 256 * 1024);
    check("wide set: 1 MiB of slots", p.reduce_slots, 8);
    unsetenv("TC_SHM_REDUCE_WIDE_BYTES");
    tc_config_reset();
    tc_shm_params_policy(&pol);
    check("policy placement", pol.placement, TC_PLACEMENT_TOUCH);
    check("policy max segment", (double)pol.max_segment, 256.0 * 1024 * 1024);

    /* Explicit values: f rounded up to a page, slots down to a cache line, the
     * tree kept when set even oversubscribed. */
    setenv("TC_SHM_FRAGMENT_SIZE", "5000", 1);
    setenv("TC_SHM_QUEUE_LENGTH", "7", 1);
    setenv("TC_SHM_BANKS", "3", 1);
    setenv("TC_SHM_REDUCE_SLOT_BYTES", "1100", 1);
    setenv("TC_SHM_REDUCE_TREE_MAX", "8K", 1);
    setenv("TC_SHM", "0", 1);
    setenv("TC_SHM_MECHANISM", "named", 1);
    setenv("TC_SHM_REDUCE_SLOTS", "5", 1);
    setenv("TC_SHM_REDUCE_WIDE_MIN", "0", 1); /* the slots are the small ones */
    tc_config_reset();
    tc_shm_params_local(&p, 1, 2);
    check("set slots", p.reduce_slots, 5);
    check("contended auto, small slots: at most 1024", p.reduce_slots_contended, 1024);
    setenv("TC_SHM_REDUCE_SLOTS_CONTENDED", "40", 1);
    tc_config_reset();
    tc_shm_params_local(&p, 0, 2);
    check("set contended, not oversubscribed", p.reduce_slots_contended, 40);
    setenv("TC_SHM_REDUCE_SLOTS_CONTENDED", "3", 1);
    tc_config_reset();
    tc_shm_params_local(&p, 1, 2);
    check("set contended below slots", p.reduce_slots_contended, 5);
    unsetenv("TC_SHM_REDUCE_SLOTS_CONTENDED");
    tc_config_reset();
    tc_shm_params_local(&p, 1, 2);
    check("set f", (double)p.f, ceil(5000 / page) * page);
    check("set S", p.S, 7);
    check("set q", p.q, 3);
    check("set slot bytes", (double)p.reduce_slot_bytes,
          floor(1100.0 / TC_CACHELINE) * TC_CACHELINE);
    check("set tree max oversubscribed", (double)p.reduce_tree_max, 8192);
    check("disabled", tc_shm_params_enabled(), 0);
    tc_shm_params_policy(&pol);
    check("policy mechanism", pol.mechanism, TC_SHM_MECHANISM_NAMED);
    /* After agreement: S a multiple of q, q <= S. */
    tc_shm_params_settle(&p);
    check("settle S", p.S, 6);
    check("settle q", p.q, 3);
    p.S = 2;
    p.q = 5;
    tc_shm_params_settle(&p);
    check("settle small S", p.S, 2);
    check("settle small q", p.q, 2);
    unsetenv("TC_SHM_FRAGMENT_SIZE");
    unsetenv("TC_SHM_QUEUE_LENGTH");
    unsetenv("TC_SHM_BANKS");
    unsetenv("TC_SHM_REDUCE_SLOT_BYTES");
    unsetenv("TC_SHM_REDUCE_WIDE_MIN");
    unsetenv("TC_SHM_REDUCE_TREE_MAX");
    unsetenv("TC_SHM");
    unsetenv("TC_SHM_MECHANISM");
    tc_config_reset();
}

int main(void)
{
    /* f* = sqrt(m t_w / t): m = 1 MiB, t_w = 50 t -> sqrt(52428800) = 7240.77 -> 2 pages. */
    check("f(1MiB)", (double)tc_shm_params_fragment(1 << 20, 50.0, 4096), 8192);
    /* m = 16 MiB (the paper's figures): sqrt(838860800) = 28963.1 -> 8 pages = 32 KiB. */
    check("f(16MiB)", (double)tc_shm_params_fragment(16 << 20, 50.0, 4096), 32768);
    /* m = 64 B: sqrt(3200) = 56.6 -> one page (never below a page). */
    check("f(64)", (double)tc_shm_params_fragment(64, 50.0, 4096), 4096);
    /* m = 1 B, t_w = 0: 0 -> one page. */
    check("f(0)", (double)tc_shm_params_fragment(1, 0.0, 4096), 4096);
    /* exact multiple stays: m * t_w = 8192^2 -> 8192. */
    check("f(exact)", (double)tc_shm_params_fragment(8192 * 8192 / 64, 64.0, 4096), 8192);

    /* S = floor(budget / f), multiple of q, >= q. */
    check("S(1MiB, 8K, 2)", tc_shm_params_queue_length(1 << 20, 8192, 2), 128);
    check("S(100K, 8K, 2)", tc_shm_params_queue_length(100 * 1024, 8192, 2), 12);
    check("S(100K, 8K, 5)", tc_shm_params_queue_length(100 * 1024, 8192, 5), 10);
    check("S(4K, 8K, 2)", tc_shm_params_queue_length(4096, 8192, 2), 2);
    check("S(40K, 8K, 1)", tc_shm_params_queue_length(40960, 8192, 1), 5);

    /* Per-message fragment: sqrt(m t_w / t) rounded up to a cache line, in
     * [1024, slot]: 2862.2 -> 2880 with 64 B lines, 8095.4 -> 8128. */
    check("fm(8K,1000)", (double)tc_shm_params_fragment_for(8192, 1000, 36864), up_to_line(2862.2));
    check("fm(64K,1000)", (double)tc_shm_params_fragment_for(65536, 1000, 36864),
          up_to_line(8095.4));
    check("fm(100,1000)", (double)tc_shm_params_fragment_for(100, 1000, 36864), 1024);
    check("fm(16M,1000)", (double)tc_shm_params_fragment_for(16 << 20, 1000, 36864), 36864);
    /* The segment before TC_SHM_TW_RATIO 10000: m = 1 MiB, t_w/t = 1000:
     * sqrt(1048576000) = 32381.6 -> 8 pages; the default now, m = 100 KiB and
     * 10000: sqrt(1024000000) = 32000 -> the same 8 pages. */
    check("f(1MiB,1000)", (double)tc_shm_params_fragment(1 << 20, 1000.0, 4096), 32768);
    check("f(100KiB,10000)", (double)tc_shm_params_fragment(100 << 10, 10000.0, 4096), 32768);
    /* Per message at the default ratio: 8 KiB whole (9051.0 -> 9088 > m: one
     * fragment), 64 KiB in 25600-byte fragments (sqrt is exactly 25600), 1 MiB
     * at the buffer. */
    check("fm(8K,10000)", (double)tc_shm_params_fragment_for(8192, 10000, 32768),
          up_to_line(9050.97));
    check("fm(64K,10000)", (double)tc_shm_params_fragment_for(65536, 10000, 32768),
          up_to_line(25600.0));
    check("fm(1M,10000)", (double)tc_shm_params_fragment_for(1 << 20, 10000, 32768), 32768);

    /* Geometry: a 16 MiB message in a 1 MiB queue (q = 2, 32 KiB buffers) with a
     * 128 KiB stream window: banks of 64 KiB, fragments of 16 KiB (a quarter). */
    size_t bank = 512 * 1024, frag = 0;
    tc_shm_params_geometry(16 << 20, 1000, 32768, 1 << 20, 2, 128 * 1024, &bank, &frag);
    check("geom(16M) bank", (double)bank, 65536);
    check("geom(16M) frag", (double)frag, 16384);
    /* A 512 KiB message fits the 1 MiB queue: whole banks, f* = sqrt(524288000) =
     * 22897.1 -> 22912 (a multiple of 64 and 128 B lines). */
    bank = 512 * 1024;
    tc_shm_params_geometry(512 * 1024, 1000, 32768, 1 << 20, 2, 128 * 1024, &bank, &frag);
    check("geom(512K) bank", (double)bank, 512 * 1024);
    check("geom(512K) frag", (double)frag, up_to_line(22897.1));
    /* 1 MiB = the whole queue still fits: whole banks, f* = 32381.6 -> 32384. */
    bank = 512 * 1024;
    tc_shm_params_geometry(1 << 20, 1000, 32768, 1 << 20, 2, 128 * 1024, &bank, &frag);
    check("geom(1M) bank", (double)bank, 512 * 1024);
    check("geom(1M) frag", (double)frag, up_to_line(32381.6));
    /* One byte more than the queue: streamed (64 KiB banks, 16 KiB fragments). */
    bank = 512 * 1024;
    tc_shm_params_geometry((1 << 20) + 1, 1000, 32768, 1 << 20, 2, 128 * 1024, &bank, &frag);
    check("geom(1M+1) bank", (double)bank, 65536);
    check("geom(1M+1) frag", (double)frag, 16384);
    /* Window off (0): whole banks even for huge messages. */
    bank = 512 * 1024;
    tc_shm_params_geometry(16 << 20, 1000, 32768, 1 << 20, 2, 0, &bank, &frag);
    check("geom(16M, off) bank", (double)bank, 512 * 1024);
    check("geom(16M, off) frag", (double)frag, 32768);
    /* A tiny window is raised to one minimum fragment per bank. */
    bank = 512 * 1024;
    tc_shm_params_geometry(16 << 20, 1000, 32768, 1 << 20, 2, 1024, &bank, &frag);
    check("geom(16M, tiny) bank", (double)bank, 1024);
    check("geom(16M, tiny) frag", (double)frag, 1024);
    /* 16 banks share the 128 KiB window: 8 KiB banks, one 8 KiB fragment each. */
    bank = 65536;
    tc_shm_params_geometry(16 << 20, 1000, 32768, 1 << 20, 16, 128 * 1024, &bank, &frag);
    check("geom(16M, q16) bank", (double)bank, 8192);
    check("geom(16M, q16) frag", (double)frag, 8192);

    /* Model time: m = 64 KiB, f = 8 KiB, S = 4, t_w = 50, t_ws = 100:
     * fill 16384 + rest 57344 + 8 waits * 50 + 2 syncs * 100 = 74328. */
    check("t(64K,8K,4)", tc_shm_params_model_time(65536, 8192, 4, 50, 100), 74328);
    /* m < f: fill 2 m, one wait, one sync: 2000 + 50 + 100. */
    check("t(1000,8K,4)", tc_shm_params_model_time(1000, 8192, 4, 50, 100), 2150);
    check("t(0)", tc_shm_params_model_time(0, 8192, 4, 50, 100), 0);

    /* f* minimises the model (with a queue large enough that syncs do not
     * matter, t_ws = 0): no page multiple of f does better than the rounded f*
     * by more than the rounding can explain (one page either side). */
    size_t m = 16u << 20, fstar = tc_shm_params_fragment(m, 50.0, 4096);
    double best = INFINITY;
    size_t best_f = 0;
    for (size_t f = 4096; f <= (1u << 20); f += 4096) {
        double t = tc_shm_params_model_time(m, f, 1 << 20, 50.0, 0.0);
        if (t < best) {
            best = t;
            best_f = f;
        }
    }
    checks++;
    if (best_f + 4096 < fstar || best_f > fstar + 4096) {
        fprintf(stderr, "FAIL: model argmin %zu far from f* %zu\n", best_f, fstar);
        failures++;
    }
    test_local();
    printf("test_params: %d checks, %d failures\n", checks, failures);
    return failures != 0;
}
