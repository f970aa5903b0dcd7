/* How a process copies a large message into its shared slots (the root of
 * a Bcast, a publisher of a Reduce/Allreduce): a plain memcpy, which leaves
 * the lines dirty in its cache so each reader pulls them cache to cache, or
 * non-temporal stores, which send them to memory for the readers to fetch
 * from there. The readers see the same bytes either way; only the time
 * differs, and which is faster depends on where the cores and the pages
 * are, not on anything inside the guest that can be read in advance. On
 * the 2-vCPU KVM machine of issue 3, for a Bcast at np = 2: memcpy 34-56 us
 * at 1 MiB against 59-68 us streaming, but 490-670 us against 350-420 at
 * 4 MiB; and in about one run in three the machine is in a state where
 * memcpy pipelines run 5-10x slower (1 MiB Bcast ~500 us) while streaming
 * stays near its usual time.
 *
 * So with the setting "auto" each process times its own calls with both
 * copies, per use (Bcast, reduction) and size class (power of two): three
 * calls each, alternating, then the one with the lower median of its last
 * three, the other timed again every TC_SHM_COPY_PROBE calls of that class.
 * The choice is local: it changes no protocol, so processes may differ. */
#ifndef TC_SHM_COPY_H
#define TC_SHM_COPY_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* The first and the last @p k bytes of @p n (k <= n <= 2k, k <= 32), every
 * byte loaded before any is stored (so dst and src may overlap); @p k is a
 * constant where this is inlined, so the moves are fixed-size, no call. */
static inline __attribute__((always_inline)) void tc_shm_copy_ends(char *dst, const char *src,
                                                                   size_t n, size_t k)
{
    char first[32], last[32];
    memcpy(first, src, k);
    memcpy(last, src + n - k, k);
    memcpy(dst, first, k);
    memcpy(dst + n - k, last, k);
}

/* @p n bytes from @p src to @p dst. Up to 64 bytes (small blocks, inline
 * lines, one-line fragments) two overlapping fixed-size moves instead of a
 * call to memcpy through the PLT (issue 19: at np 2 the three copies of a
 * 64-byte Alltoall through memcpy cost about 35 of its 520 instructions;
 * twice per 4-byte Scan at process 0), every byte loaded before any is
 * stored. Longer: memmove when @p may_overlap, else memcpy. */
static inline __attribute__((always_inline)) void tc_shm_copy_small(char *dst, const char *src,
                                                                    size_t n, bool may_overlap)
{
    if (n <= 16) {
        if (n >= 8) {
            tc_shm_copy_ends(dst, src, n, 8);
        } else if (n >= 4) {
            tc_shm_copy_ends(dst, src, n, 4);
        } else if (n > 0) {
            const char a = src[0], b = src[n / 2], c = src[n - 1];
            dst[0] = a;
            dst[n / 2] = b;
            dst[n - 1] = c;
        }
    } else if (n <= 32) {
        tc_shm_copy_ends(dst, src, n, 16);
    } else if (n <= 64) {
        tc_shm_copy_ends(dst, src, n, 32);
    } else if (may_overlap) {
        memmove(dst, src, n);
    } else {
        memcpy(dst, src, n);
    }
}

/* The settings (TC_SHM_BCAST_COPY, TC_SHM_REDUCE_COPY: the values of those
 * enums, in their order). */
enum { TC_SHM_COPY_AUTO, TC_SHM_COPY_MEMCPY, TC_SHM_COPY_STREAM };

/* Who copies: separate estimates, since the protocols after the copy
 * differ. */
typedef enum {
    TC_SHM_COPY_USE_BCAST,
    TC_SHM_COPY_USE_REDUCE,
    TC_SHM_COPY_USE_LAST
} tc_shm_copy_use_t;

/* Messages of at least this many bytes choose their copy (smaller ones stay
 * in the caches anyway, and the clock reads would show). */
#define TC_SHM_COPY_CHOOSE_MIN ((size_t)256 * 1024)
/* Every this many calls of a size class the copy not in use is timed again,
 * so a change of the machine's state is seen even when the copy in use does
 * not get slower than the other's estimate. */
#define TC_SHM_COPY_PROBE 32

/* One call's choice: begin before the first copy, end after the call's
 * last wait (its time is what is compared). */
typedef struct tc_shm_copy_choice {
    bool stream;   /* copy with non-temporal stores (tc_shm_copy()) */
    bool measured; /* this call's time goes into the estimates */
    int use, cls;
    size_t nbytes;
    double t0_ns;
} tc_shm_copy_choice_t;

/* Choose the copy for a call of @p nbytes (all of it copied by this
 * process) under @p setting (TC_SHM_COPY_*). Below TC_SHM_COPY_CHOOSE_MIN,
 * or without streaming stores on this CPU, it is memcpy. */
void tc_shm_copy_begin(tc_shm_copy_choice_t *c, int setting, tc_shm_copy_use_t use, size_t nbytes);
/* Start the clock again now, counting only the @p nbytes_left bytes still
 * to copy (a Bcast root starts it once its readers have freed a bank: the
 * time before includes their late arrival, not the copies). */
void tc_shm_copy_restart(tc_shm_copy_choice_t *c, size_t nbytes_left);
/* The call is over: record its time (auto only). */
void tc_shm_copy_end(tc_shm_copy_choice_t *c);

/* @p n bytes from @p src to @p dst (the shared slot), with the chosen copy.
 * Streaming stores end with a store fence, so a release store that follows
 * orders them like plain stores. */
void tc_shm_copy(const tc_shm_copy_choice_t *c, void *dst, const void *src, size_t n);

/* Whether non-temporal stores exist here (else stream means memcpy). */
bool tc_shm_copy_have_stream(void);

/* For tests: forget this thread's estimates and read time from @p now_ns
 * (nanoseconds; NULL: CLOCK_MONOTONIC again). */
void tc_shm_copy_test_reset(double (*now_ns)(void));

#endif /* TC_SHM_COPY_H */
