/* Unit test of the race's decisions (src/core/race.h), on made-up times:
 * which implementation each call of a class runs, which calls are timed,
 * the warm-up, the alternation, the median, the probes (near and far, the
 * far interval only once confirmed and longer the slower the other, a
 * probe as soon as the one in use grew slower), a change of the machine's
 * state, classes and operations kept apart, the threshold, calls whose
 * result could depend on the algorithm, and the fragment race's own
 * threshold and estimates beside it. */
#include <stdio.h>
#include <stdlib.h>

#include "core/race.h"

static int failures;

/* Calls of a class before the first decision: two warm-ups, then
 * TC_RACE_EXPLORE timed calls of each. */
#define WARM (2 + 2 * TC_RACE_EXPLORE)

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/* One call of @p op with @p nbytes whose agreed time would be t_tc or
 * t_pmpi ns (whichever runs); returns the implementation chosen and sets
 * *measured. */
static tc_race_impl_t run(tc_race_t *r, tc_op_t op, size_t nbytes, double t_tc, double t_pmpi,
                          int *measured)
{
    tc_race_call_t c;
    tc_race_impl_t impl = tc_race_choose(r, op, nbytes, true, &c);
    EXPECT(c.impl == impl, "call->impl %d != returned %d", (int)c.impl, (int)impl);
    if (measured)
        *measured = c.measured;
    if (c.measured)
        tc_race_record(r, c.op, c.cls, c.impl, c.nbytes, impl == TC_RACE_TC ? t_tc : t_pmpi);
    return impl;
}

/* Calls WARM .. WARM + @p calls - 1 of a decided class whose times stay
 * t_tc and t_pmpi: every 8th call must be timed (counted in *@p timed), and
 * the slower one must run only as a timed probe, every TC_RACE_PROBE-th
 * call until TC_RACE_FAR_CONFIRM of them found it far slower, then every
 * @p far-th. Returns how often the slower one ran. */
static int far_probes(tc_race_t *r, tc_op_t op, size_t n, double t_tc, double t_pmpi,
                      unsigned calls, unsigned far, int *timed)
{
    const tc_race_impl_t slower = t_tc > t_pmpi ? TC_RACE_TC : TC_RACE_PMPI;
    const unsigned near_until = TC_RACE_PROBE * TC_RACE_FAR_CONFIRM;
    int runs = 0;
    for (unsigned k = WARM; k < WARM + calls; k++) {
        int m;
        if (run(r, op, n, t_tc, t_pmpi, &m) == slower) {
            runs++;
            EXPECT(k % (k < near_until ? TC_RACE_PROBE : far) == 0 && m,
                   "the slower ran at call %u (timed %d)", k, m);
        }
        *timed += m;
        EXPECT(m == (k % TC_RACE_MEASURE == 0), "call %u timed=%d", k, m);
    }
    return runs;
}

/* Warm-up, alternation, then the faster with probes of the other. */
static void test_phases(void)
{
    tc_race_t r;
    tc_race_init(&r, 64 * 1024);
    const size_t n = 1 << 20;
    int m;
    /* Warm-up: TC then PMPI, untimed. */
    EXPECT(run(&r, TC_OP_ALLREDUCE, n, 100e3, 50e3, &m) == TC_RACE_TC && !m, "warm-up 0");
    EXPECT(run(&r, TC_OP_ALLREDUCE, n, 100e3, 50e3, &m) == TC_RACE_PMPI && !m, "warm-up 1");
    /* Alternation until TC_RACE_EXPLORE times each, all timed. */
    int ntc = 0, npmpi = 0;
    for (int i = 0; i < 2 * TC_RACE_EXPLORE; i++) {
        tc_race_impl_t impl = run(&r, TC_OP_ALLREDUCE, n, 100e3, 50e3, &m);
        EXPECT(m, "alternation call %d not timed", i);
        ntc += impl == TC_RACE_TC;
        npmpi += impl == TC_RACE_PMPI;
    }
    EXPECT(ntc == TC_RACE_EXPLORE && npmpi == TC_RACE_EXPLORE, "alternation: %d TC, %d PMPI", ntc,
           npmpi);
    EXPECT(tc_race_estimate(&r, TC_OP_ALLREDUCE, tc_race_class(n), TC_RACE_TC) > 0.09 &&
               tc_race_estimate(&r, TC_OP_ALLREDUCE, tc_race_class(n), TC_RACE_PMPI) < 0.05,
           "estimates in ns per byte");
    /* Decided: PMPI is 2x faster -> "far", but TC keeps its probes every
     * TC_RACE_PROBE calls until TC_RACE_FAR_CONFIRM - 1 of them confirmed it;
     * then every TC_RACE_PROBE_FAR-th call only; every 8th call timed. */
    int timed = 0;
    const int tc_runs =
        far_probes(&r, TC_OP_ALLREDUCE, n, 100e3, 50e3, 512, TC_RACE_PROBE_FAR, &timed);
    EXPECT(tc_runs == (TC_RACE_FAR_CONFIRM - 1) + (WARM + 512) / TC_RACE_PROBE_FAR,
           "far probes: TC ran %d times in 512 calls", tc_runs);
    EXPECT(timed == 512 / TC_RACE_MEASURE, "timed %d of 512", timed);
}

/* The other 100x slower: once confirmed, the far interval grows until the
 * probes cost at most 1/TC_RACE_PROBE_SHARE of the time (100 x 32 = 3200
 * calls: every 4096th). */
static void test_far_scaled(void)
{
    tc_race_t r;
    tc_race_init(&r, 64 * 1024);
    const size_t n = 1 << 20;
    for (int i = 0; i < WARM; i++)
        run(&r, TC_OP_ALLGATHER, n, 50e3, 5000e3, NULL);
    const unsigned calls = 3 * 4096;
    int timed = 0;
    const int pmpi_runs = far_probes(&r, TC_OP_ALLGATHER, n, 50e3, 5000e3, calls, 4096, &timed);
    EXPECT(pmpi_runs == (int)((TC_RACE_FAR_CONFIRM - 1) + (WARM + calls) / 4096),
           "scaled far probes: PMPI ran %d times in %u calls", pmpi_runs, calls);
}

/* A probe that finds the other no longer far slower keeps the near
 * interval: the far one needs confirmation in a row. */
static void test_far_confirm(void)
{
    tc_race_t r;
    tc_race_init(&r, 64 * 1024);
    const size_t n = 1 << 20;
    for (int i = 0; i < WARM; i++)
        run(&r, TC_OP_REDUCE, n, 100e3, 50e3, NULL);
    int tc_runs = 0;
    for (unsigned k = WARM; k < WARM + 512; k++) {
        if (run(&r, TC_OP_REDUCE, n, 60e3, 50e3, NULL) == TC_RACE_TC) {
            tc_runs++;
            EXPECT(k % TC_RACE_PROBE == 0, "TC ran at call %u", k);
        }
    }
    EXPECT(tc_runs == (WARM + 512) / TC_RACE_PROBE, "near probes after one far: %d", tc_runs);
}

/* The one in use gets much slower while the other's estimate is old and
 * bad (its exploration ran in a busy time slice): the other is probed at
 * once, not after the far interval, and takes over. */
static void test_grow(void)
{
    tc_race_t r;
    tc_race_init(&r, 64 * 1024);
    const size_t n = 1 << 20;
    for (int i = 0; i < WARM; i++)
        run(&r, TC_OP_REDUCE, n, 100e3, 4400e3, NULL);
    /* Far, confirmed: the next probe would come only at TC_RACE_PROBE_FAR. */
    unsigned k = WARM;
    for (; k < 4 * TC_RACE_PROBE; k++)
        EXPECT(run(&r, TC_OP_REDUCE, n, 100e3, 4400e3, NULL) == TC_RACE_TC ||
                   k % TC_RACE_PROBE == 0,
               "PMPI ran at call %u", k);
    const unsigned changed = k;
    const int cls = tc_race_class(n);
    while (k < changed + TC_RACE_PROBE_FAR &&
           !(tc_race_estimate(&r, TC_OP_REDUCE, cls, TC_RACE_PMPI) <
             tc_race_estimate(&r, TC_OP_REDUCE, cls, TC_RACE_TC))) {
        run(&r, TC_OP_REDUCE, n, 1100e3, 110e3, NULL);
        k++;
    }
    /* Two timed calls to see the growth, one to probe, a near probe more. */
    EXPECT(k - changed <= 4 * TC_RACE_MEASURE + TC_RACE_PROBE, "PMPI after %u calls", k - changed);
    while (k % TC_RACE_MEASURE == 0)
        run(&r, TC_OP_REDUCE, n, 1100e3, 110e3, NULL), k++;
    EXPECT(run(&r, TC_OP_REDUCE, n, 1100e3, 110e3, NULL) == TC_RACE_PMPI, "PMPI in use");
}

/* Near times: the probe every TC_RACE_PROBE calls; a lasting change of the
 * state flips the choice within a few timed calls; one outlier does not. */
static void test_flip(void)
{
    tc_race_t r;
    tc_race_init(&r, 4096);
    const size_t n = 300000;
    for (int i = 0; i < WARM; i++)
        run(&r, TC_OP_BCAST, n, 90e3, 100e3, NULL);
    int pmpi_runs = 0;
    for (unsigned k = WARM; k < WARM + 128; k++) {
        tc_race_impl_t impl = run(&r, TC_OP_BCAST, n, 90e3, 100e3, NULL);
        if (impl == TC_RACE_PMPI) {
            pmpi_runs++;
            EXPECT(k % TC_RACE_PROBE == 0, "PMPI ran at call %u", k);
        }
    }
    EXPECT(pmpi_runs == 128 / TC_RACE_PROBE, "near probes: %d", pmpi_runs);
    /* One slow TC call among fast ones: the median ignores it. */
    tc_race_record(&r, TC_OP_BCAST, tc_race_class(n), TC_RACE_TC, n, 10e6);
    EXPECT(run(&r, TC_OP_BCAST, n, 90e3, 100e3, NULL) == TC_RACE_TC, "one outlier decided");
    /* TC becomes slower for good: once two of its last three times are
     * slow, PMPI takes over (at most 2 * TC_RACE_MEASURE more calls). */
    unsigned k = 0;
    while (k < 4 * TC_RACE_MEASURE && run(&r, TC_OP_BCAST, n, 200e3, 100e3, NULL) == TC_RACE_TC)
        k++;
    EXPECT(k <= 2 * TC_RACE_MEASURE + 1, "flip after %u calls", k);
    EXPECT(run(&r, TC_OP_BCAST, n, 200e3, 100e3, NULL) == TC_RACE_PMPI, "after the flip");
    /* And back once PMPI's state changes, seen through its own timed calls. */
    k = 0;
    while (k < 4 * TC_RACE_PROBE && run(&r, TC_OP_BCAST, n, 200e3, 400e3, NULL) == TC_RACE_PMPI)
        k++;
    EXPECT(k <= 2 * TC_RACE_MEASURE + 1, "flip back after %u calls", k);
}

/* Classes and operations have their own estimates; the threshold, "off" and
 * order-dependent results never race. */
static void test_scope(void)
{
    tc_race_t r;
    tc_race_init(&r, 64 * 1024);
    for (int i = 0; i < WARM; i++)
        run(&r, TC_OP_REDUCE, 1 << 20, 100e3, 10e3, NULL);
    EXPECT(run(&r, TC_OP_REDUCE, (1 << 20) + 5, 100e3, 10e3, NULL) == TC_RACE_PMPI,
           "same class decided");
    /* Another class, another operation: a fresh warm-up. */
    EXPECT(run(&r, TC_OP_REDUCE, 1 << 21, 1, 1, NULL) == TC_RACE_TC, "new class warm-up");
    EXPECT(run(&r, TC_OP_ALLREDUCE, 1 << 20, 1, 1, NULL) == TC_RACE_TC, "new op warm-up");
    EXPECT(tc_race_class(1 << 20) != tc_race_class(1 << 21) &&
               tc_race_class(1 << 20) == tc_race_class((1 << 21) - 1) &&
               tc_race_class((size_t)1 << 40) == TC_RACE_CLASSES - 1 && tc_race_class(1) == 0,
           "classes");
    tc_race_call_t c;
    EXPECT(tc_race_choose(&r, TC_OP_REDUCE, 1 << 20, false, &c) == TC_RACE_TC && !c.raced &&
               !c.measured,
           "order-dependent result raced");
    EXPECT(tc_race_choose(&r, TC_OP_REDUCE, 64 * 1024 - 1, true, &c) == TC_RACE_TC && !c.raced,
           "below the threshold raced");
    tc_race_init(&r, 0);
    for (int i = 0; i < 20; i++)
        EXPECT(tc_race_choose(&r, TC_OP_BCAST, 1 << 24, true, &c) == TC_RACE_TC && !c.raced,
               "race off but raced");
}

/* The fragment race (TC_RACE_KIND_WIDE): its own threshold and estimates,
 * apart from the race against the MPI's own for the same operation and
 * class; off until a threshold is set, and where not eligible. */
static void test_wide(void)
{
    tc_race_t r;
    tc_race_init(&r, 64 * 1024);
    const size_t n = 4 << 20;
    tc_race_call_t c;
    EXPECT(tc_race_choose_wide(&r, TC_OP_ALLREDUCE, n, true, &c) == TC_RACE_TC && !c.raced,
           "fragment race off (no threshold) but raced");
    r.wide_min = 1 << 20;
    EXPECT(tc_race_choose_wide(&r, TC_OP_ALLREDUCE, (1 << 20) - 1, true, &c) == TC_RACE_TC &&
               !c.raced,
           "below the fragment race's threshold raced");
    EXPECT(tc_race_choose_wide(&r, TC_OP_ALLREDUCE, n, false, &c) == TC_RACE_TC && !c.raced,
           "not eligible but raced");
    /* The race against the MPI's own decides for the MPI's own... */
    for (int i = 0; i < WARM; i++)
        run(&r, TC_OP_ALLREDUCE, n, 100e3, 10e3, NULL);
    EXPECT(run(&r, TC_OP_ALLREDUCE, n, 100e3, 10e3, NULL) == TC_RACE_PMPI, "MPI's own decided");
    /* ... while the fragment race starts afresh: warm-up of each, then wide
     * fragments measured faster are chosen. */
    int wide_calls = 0, default_calls = 0;
    for (int i = 0; i < WARM + 8; i++) {
        const tc_race_impl_t impl = tc_race_choose_wide(&r, TC_OP_ALLREDUCE, n, true, &c);
        EXPECT(c.raced && c.kind == TC_RACE_KIND_WIDE && c.impl == impl, "call %d: not raced", i);
        if (i < TC_RACE_IMPL_LAST)
            EXPECT(impl == (tc_race_impl_t)i && !c.measured, "warm-up call %d", i);
        wide_calls += impl == TC_RACE_WIDE;
        default_calls += impl == TC_RACE_TC;
        if (c.measured)
            tc_race_record_kind(&r, c.kind, c.op, c.cls, c.impl, c.nbytes,
                                impl == TC_RACE_WIDE ? 20e3 : 60e3);
    }
    EXPECT(wide_calls >= 1 + TC_RACE_EXPLORE && default_calls >= 1 + TC_RACE_EXPLORE,
           "exploration: %d wide, %d default", wide_calls, default_calls);
    EXPECT(tc_race_choose_wide(&r, TC_OP_ALLREDUCE, n, true, &c) == TC_RACE_WIDE ||
               (c.measured && c.impl == TC_RACE_TC),
           "wide fragments not chosen");
    const int cls = tc_race_class(n);
    EXPECT(tc_race_estimate_kind(&r, TC_RACE_KIND_WIDE, TC_OP_ALLREDUCE, cls, TC_RACE_TC) ==
                   60e3 / (double)n &&
               tc_race_estimate_kind(&r, TC_RACE_KIND_WIDE, TC_OP_ALLREDUCE, cls, TC_RACE_WIDE) ==
                   20e3 / (double)n &&
               tc_race_estimate(&r, TC_OP_ALLREDUCE, cls, TC_RACE_TC) == 100e3 / (double)n,
           "the kinds' estimates mixed");
    /* ... and the race against the MPI's own kept its choice. */
    EXPECT(run(&r, TC_OP_ALLREDUCE, n, 100e3, 10e3, NULL) == TC_RACE_PMPI ||
               tc_race_choose(&r, TC_OP_ALLREDUCE, n, true, &c) == TC_RACE_PMPI,
           "the fragment race changed the MPI's race");
}

/* The library's first timed calls of a size are slow (its own copy choice
 * still trying the slower copy), the later ones fast: only the later ones
 * may decide. */
static void test_settling(void)
{
    tc_race_t r;
    tc_race_init(&r, 64 * 1024);
    const size_t n = 4 << 20;
    int tc_calls = 0;
    for (int i = 0; i < WARM; i++) {
        tc_race_call_t c;
        tc_race_impl_t impl = tc_race_choose(&r, TC_OP_ALLREDUCE, n, true, &c);
        double t = 2300e3; /* the MPI's */
        if (impl == TC_RACE_TC)
            t = tc_calls++ < 4 ? 3000e3 : 850e3; /* warm-up and three calls exploring */
        if (c.measured)
            tc_race_record(&r, c.op, c.cls, c.impl, c.nbytes, t);
    }
    EXPECT(run(&r, TC_OP_ALLREDUCE, n, 850e3, 2300e3, NULL) == TC_RACE_TC,
           "kept the MPI's after the library's path settled");
}

int main(void)
{
    test_phases();
    test_settling();
    test_flip();
    test_far_confirm();
    test_far_scaled();
    test_grow();
    test_scope();
    test_wide();
    if (failures) {
        fprintf(stderr, "test_race: %d failures\n", failures);
        return 1;
    }
    printf("test_race: ok\n");
    return 0;
}
