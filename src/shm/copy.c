/* Publication copies of large messages: memcpy or non-temporal stores,
 * chosen by measurement (copy.h). */
#include "copy.h"

#include "base/median3.h"

#include <stdint.h>
#include <string.h>
#include <time.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#define TC_SHM_HAVE_STREAM 1
#else
#define TC_SHM_HAVE_STREAM 0
#endif

/* Size classes: floor(log2(nbytes)) from TC_SHM_COPY_CHOOSE_MIN (2^18) up;
 * everything from 2^(18 + TC_SHM_COPY_CLASSES - 1) bytes shares the last. */
#define TC_SHM_COPY_CLASS_LOG0 18
#define TC_SHM_COPY_CLASSES    16
_Static_assert(TC_SHM_COPY_CHOOSE_MIN == (size_t)1 << TC_SHM_COPY_CLASS_LOG0,
               "the first class starts at the threshold");

enum { TC_COPY_CACHED, TC_COPY_STREAM, TC_COPY_LAST };
/* Samples kept per copy: its estimate is their median, so one call slowed
 * by a page fault or a preemption does not decide, while a lasting change
 * of the machine's state shows within two calls. */
#define TC_SHM_COPY_WINDOW TC_MEDIAN3_WINDOW

typedef struct tc_shm_copy_est {
    double ns_per_byte[TC_SHM_COPY_WINDOW]; /* the last samples, a ring */
    unsigned n;                             /* samples so far */
} tc_shm_copy_est_t;

/* Per thread (no sharing, no races): per use and size class, the samples of
 * each copy (ns per byte of a whole call) and the calls so far. */
static _Thread_local struct {
    tc_shm_copy_est_t est[TC_SHM_COPY_USE_LAST][TC_SHM_COPY_CLASSES][TC_COPY_LAST];
    unsigned calls[TC_SHM_COPY_USE_LAST][TC_SHM_COPY_CLASSES];
} tc_shm_copy_stats;

bool tc_shm_copy_have_stream(void)
{
    return TC_SHM_HAVE_STREAM;
}

static double tc_shm_copy_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static _Thread_local double (*tc_shm_copy_now_ns)(void) = tc_shm_copy_monotonic_ns;

void tc_shm_copy_test_reset(double (*now_ns)(void))
{
    memset(&tc_shm_copy_stats, 0, sizeof tc_shm_copy_stats);
    tc_shm_copy_now_ns = now_ns ? now_ns : tc_shm_copy_monotonic_ns;
}

static int tc_shm_copy_class(size_t nbytes)
{
    int cls = 0;
    while (cls + 1 < TC_SHM_COPY_CLASSES && (nbytes >> (TC_SHM_COPY_CLASS_LOG0 + cls + 1)) != 0)
        cls++;
    return cls;
}

/* After one unmeasured warm-up call (first touches of the user's buffers
 * would count against the first copy tried), the two copies alternate
 * until each has TC_SHM_COPY_WINDOW samples; then the one with the lower
 * median is used, and the other is timed again every TC_SHM_COPY_PROBE
 * calls. */
void tc_shm_copy_begin(tc_shm_copy_choice_t *c, int setting, tc_shm_copy_use_t use, size_t nbytes)
{
    *c = (tc_shm_copy_choice_t){.use = (int)use, .nbytes = nbytes};
    if (!TC_SHM_HAVE_STREAM || nbytes < TC_SHM_COPY_CHOOSE_MIN || setting == TC_SHM_COPY_MEMCPY)
        return;
    if (setting == TC_SHM_COPY_STREAM) {
        c->stream = true;
        return;
    }
    c->cls = tc_shm_copy_class(nbytes);
    const tc_shm_copy_est_t *e = tc_shm_copy_stats.est[use][c->cls];
    const unsigned n = tc_shm_copy_stats.calls[use][c->cls]++;
    if (n == 0)
        return; /* the warm-up: memcpy, not timed */
    c->measured = true;
    if (e[TC_COPY_CACHED].n < TC_SHM_COPY_WINDOW || e[TC_COPY_STREAM].n < TC_SHM_COPY_WINDOW) {
        c->stream = e[TC_COPY_STREAM].n < e[TC_COPY_CACHED].n;
    } else {
        const bool best_stream = tc_median3(e[TC_COPY_STREAM].ns_per_byte, e[TC_COPY_STREAM].n) <
                                 tc_median3(e[TC_COPY_CACHED].ns_per_byte, e[TC_COPY_CACHED].n);
        const bool probe = n % TC_SHM_COPY_PROBE == 0; /* time the copy not in use */
        c->stream = probe ? !best_stream : best_stream;
    }
    c->t0_ns = tc_shm_copy_now_ns();
}

void tc_shm_copy_restart(tc_shm_copy_choice_t *c, size_t nbytes_left)
{
    if (!c->measured || nbytes_left == 0)
        return;
    c->t0_ns = tc_shm_copy_now_ns();
    c->nbytes = nbytes_left;
}

void tc_shm_copy_end(tc_shm_copy_choice_t *c)
{
    if (!c->measured)
        return;
    tc_shm_copy_est_t *e =
        &tc_shm_copy_stats.est[c->use][c->cls][c->stream ? TC_COPY_STREAM : TC_COPY_CACHED];
    e->ns_per_byte[e->n % TC_SHM_COPY_WINDOW] =
        (tc_shm_copy_now_ns() - c->t0_ns) / (double)c->nbytes;
    e->n++;
}

/* memcpy through non-temporal stores: the lines go to memory instead of
 * staying dirty in this core's cache. */
static void tc_shm_copy_stream(char *dst, const char *src, size_t n)
{
#if TC_SHM_HAVE_STREAM
    const size_t head = (16 - ((uintptr_t)dst & 15)) & 15;
    if (n < head + 64) {
        memcpy(dst, src, n);
        return;
    }
    memcpy(dst, src, head);
    dst += head;
    src += head;
    n -= head;
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        const __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(src + i));
        const __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(src + i + 16));
        const __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(src + i + 32));
        const __m128i d = _mm_loadu_si128((const __m128i *)(const void *)(src + i + 48));
        _mm_stream_si128((__m128i *)(void *)(dst + i), a);
        _mm_stream_si128((__m128i *)(void *)(dst + i + 16), b);
        _mm_stream_si128((__m128i *)(void *)(dst + i + 32), c);
        _mm_stream_si128((__m128i *)(void *)(dst + i + 48), d);
    }
    memcpy(dst + i, src + i, n - i);
    /* Streaming stores are weakly ordered: the caller's release store that
     * publishes the slot must not become visible before them. */
    _mm_sfence();
#else
    memcpy(dst, src, n);
#endif
}

void tc_shm_copy(const tc_shm_copy_choice_t *c, void *dst, const void *src, size_t n)
{
    if (c->stream)
        tc_shm_copy_stream(dst, src, n);
    else
        memcpy(dst, src, n);
}
