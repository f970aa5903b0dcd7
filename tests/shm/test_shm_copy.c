/* src/shm/copy.c: the streaming copy gives memcpy's bytes for every
 * alignment and length, and the auto choice follows the times it is shown
 * (a fake clock: each call "takes" what the test says), per use and size
 * class, with warm-up, alternation, probes and the median of three. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shm/copy.h"

static int failures, checks;

static void check(int cond, const char *what)
{
    checks++;
    if (!cond) {
        failures++;
        fprintf(stderr, "FAIL %s\n", what);
    }
}

static void test_bytes(void)
{
    enum { MAX = 3 * 4096 + 77 };
    unsigned char *src = malloc(MAX + 64), *dst = malloc(MAX + 64), *ref = malloc(MAX + 64);
    if (!src || !dst || !ref) {
        perror("malloc");
        exit(1);
    }
    for (size_t i = 0; i < MAX + 64; i++)
        src[i] = (unsigned char)(i * 131u + 7u);
    const tc_shm_copy_choice_t stream = {.stream = true};
    const size_t lens[] = {0, 1, 15, 16, 63, 64, 65, 127, 128, 200, 4096, 4097, MAX};
    int bad = 0;
    for (size_t a = 0; a < 17; a++)    /* destination misalignment */
        for (size_t b = 0; b < 3; b++) /* source misalignment */
            for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++) {
                const size_t n = lens[l];
                memset(dst, 0xAA, MAX + 64);
                memset(ref, 0xAA, MAX + 64);
                memcpy(ref + a, src + b, n);
                tc_shm_copy(&stream, dst + a, src + b, n);
                bad += memcmp(dst, ref, MAX + 64) != 0;
            }
    check(bad == 0, "the streaming copy gives the bytes of memcpy, nothing outside");
    free(src);
    free(dst);
    free(ref);
}

/* The fake clock: each call's duration is set by the test before its end. */
static double fake_now, fake_next;
static double fake_clock(void)
{
    fake_now += fake_next;
    fake_next = 0;
    return fake_now;
}

/* One call of @p n bytes: begin (clock read), then end after @p us_memcpy or
 * @p us_stream microseconds, whichever copy was chosen. Returns whether it
 * streamed. */
static bool call(int setting, tc_shm_copy_use_t use, size_t n, double us_memcpy, double us_stream)
{
    tc_shm_copy_choice_t c;
    fake_next = 0;
    tc_shm_copy_begin(&c, setting, use, n);
    fake_next = 1000.0 * (c.stream ? us_stream : us_memcpy);
    tc_shm_copy_end(&c);
    return c.stream;
}

static void test_choice(void)
{
    const size_t M = (size_t)1 << 20;
    if (!tc_shm_copy_have_stream()) {
        printf("no streaming stores here: the choice is always memcpy\n");
        tc_shm_copy_test_reset(fake_clock);
        check(!call(TC_SHM_COPY_STREAM, TC_SHM_COPY_USE_BCAST, M, 1, 1), "no stream: memcpy");
        return;
    }
    tc_shm_copy_test_reset(fake_clock);

    /* Fixed settings and small messages never time anything. */
    check(!call(TC_SHM_COPY_MEMCPY, TC_SHM_COPY_USE_BCAST, M, 1, 1), "memcpy fixed");
    check(call(TC_SHM_COPY_STREAM, TC_SHM_COPY_USE_BCAST, M, 1, 1), "stream fixed");
    check(!call(TC_SHM_COPY_STREAM, TC_SHM_COPY_USE_BCAST, TC_SHM_COPY_CHOOSE_MIN - 1, 1, 1),
          "below the threshold: memcpy even when stream is set");
    check(!call(TC_SHM_COPY_AUTO, TC_SHM_COPY_USE_BCAST, 4096, 1, 1), "small auto: memcpy");

    /* Auto, 1 MiB Bcast: warm-up memcpy, then memcpy and stream alternate
     * until each has 3 samples (calls 1..6), then the cheaper (stream at
     * 50 us against memcpy's 100) up to a probe of memcpy at the 32nd call
     * of the class. */
    check(!call(TC_SHM_COPY_AUTO, TC_SHM_COPY_USE_BCAST, M, 100, 50), "call 0: warm-up memcpy");
    int alternated = 0;
    for (int n = 1; n <= 6; n++)
        alternated += call(TC_SHM_COPY_AUTO, TC_SHM_COPY_USE_BCAST, M, 100, 50) == (n % 2 == 0);
    check(alternated == 6, "calls 1..6: memcpy, stream, memcpy, ...");
    int streamed = 0;
    for (int n = 7; n < TC_SHM_COPY_PROBE; n++)
        streamed += call(TC_SHM_COPY_AUTO, TC_SHM_COPY_USE_BCAST, M, 100, 50);
    check(streamed == TC_SHM_COPY_PROBE - 7, "calls 7..31: the cheaper, stream");
    check(!call(TC_SHM_COPY_AUTO, TC_SHM_COPY_USE_BCAST, M, 100, 50), "call 32: probe memcpy");
    check(call(TC_SHM_COPY_AUTO, TC_SHM_COPY_USE_BCAST, M, 100, 50), "call 33: stream again");

    /* One slow sample among three does not decide: memcpy's first timed
     * call takes 1000 us (a cold start), its next two 40 us against
     * stream's 50: memcpy wins on the median. */
    check(!call(TC_SHM_COPY_AUTO, TC_SHM_COPY_USE_BCAST, 4 * M, 0, 0), "4 MiB: warm-up");
    check(!call(TC_SHM_COPY_AUTO, TC_SHM_COPY_USE_BCAST, 4 * M, 1000, 50), "4 MiB: cold memcpy");
    for (int n = 2; n <= 6; n++)
        call(TC_SHM_COPY_AUTO, TC_SHM_COPY_USE_BCAST, 4 * M, 40, 50);
    check(!call(TC_SHM_COPY_AUTO, TC_SHM_COPY_USE_BCAST, 4 * M, 40, 50),
          "4 MiB: memcpy by the median despite one cold sample");

    /* Other classes and uses have estimates of their own. */
    check(call(TC_SHM_COPY_AUTO, TC_SHM_COPY_USE_BCAST, M + 5, 100, 50),
          "1 MiB + 5 is the 1 MiB class: still stream");
    check(!call(TC_SHM_COPY_AUTO, TC_SHM_COPY_USE_REDUCE, M, 100, 50), "reduce: its own warm-up");

    /* The state changes (stream slows to 300 us while in use): after two
     * such calls the median passes memcpy's 100 us and the choice flips
     * without waiting for a probe. */
    int flipped_after = -1;
    for (int i = 0; i < 5 && flipped_after < 0; i++)
        if (!call(TC_SHM_COPY_AUTO, TC_SHM_COPY_USE_BCAST, M, 100, 300))
            flipped_after = i;
    check(flipped_after == 2, "a slower stream loses after two slow calls");

    tc_shm_copy_test_reset(NULL);
}

int main(void)
{
    test_bytes();
    test_choice();
    printf("%d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
