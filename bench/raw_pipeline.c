/*
 * Raw two-process shared-memory copy pipeline (see raw_pipeline.h).
 */
#include "raw_pipeline.h"

#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#define RING_LINE       TC_CACHELINE
#define RING_MAGIC      0x74637269ULL /* "tcri" */
#define RING_DATA_ALIGN 4096
/* Polls before each sched_yield(): enough to catch a peer that is running on
 * another core, few enough that an oversubscribed peer gets the CPU soon. */
#define RING_SPIN_POLLS 100

typedef struct ring_line {
    _Alignas(RING_LINE) _Atomic uint64_t v;
} ring_line_t;
_Static_assert(sizeof(ring_line_t) == RING_LINE, "one counter per cache line");

/* Layout: header line, barrier line, consumer line, one line per slot, data.
 * Every line has one writer except the barrier (only used between runs). */
typedef struct ring_hdr {
    _Alignas(RING_LINE) uint64_t magic;
    uint64_t frag;
    uint64_t slots;
    ring_line_t barrier;  /* both sides: arrivals, monotonically increasing */
    ring_line_t consumed; /* consumer: fragments copied out so far */
    ring_line_t seq[];    /* producer: slot s holds fragment seq[s] */
} ring_hdr_t;

static inline void ring_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static size_t ring_data_offset(unsigned slots)
{
    size_t ctl = sizeof(ring_hdr_t) + (size_t)slots * sizeof(ring_line_t);
    return (ctl + RING_DATA_ALIGN - 1) / RING_DATA_ALIGN * RING_DATA_ALIGN;
}

static inline ring_hdr_t *ring_hdr(const tc_bench_ring_end_t *end)
{
    return (ring_hdr_t *)end->mem;
}

static inline char *ring_slot(const tc_bench_ring_end_t *end, uint64_t k)
{
    return (char *)end->mem + ring_data_offset(end->slots) + ((k - 1) % end->slots) * end->frag;
}

/* Spin-then-yield until *p >= want; returns the value seen. Acquire: pairs with
 * the release store that published the value we wait for. */
static uint64_t ring_wait_geq_acquire(_Atomic uint64_t *p, uint64_t want)
{
    unsigned polls = 0;
    uint64_t v;
    while ((v = atomic_load_explicit(p, memory_order_acquire)) < want) {
        if (++polls < RING_SPIN_POLLS) {
            ring_cpu_relax();
        } else {
            polls = 0;
            sched_yield();
        }
    }
    return v;
}

size_t tc_bench_ring_bytes(size_t frag, unsigned slots)
{
    return ring_data_offset(slots) + frag * slots;
}

void *tc_bench_ring_align(void *p)
{
    uintptr_t u = (uintptr_t)p;
    return (void *)((u + RING_LINE - 1) / RING_LINE * RING_LINE);
}

void tc_bench_ring_init(void *mem, size_t frag, unsigned slots)
{
    ring_hdr_t *h = mem;
    h->magic = RING_MAGIC;
    h->frag = frag;
    h->slots = slots;
    atomic_init(&h->barrier.v, 0);
    atomic_init(&h->consumed.v, 0);
    for (unsigned s = 0; s < slots; s++)
        atomic_init(&h->seq[s].v, 0);
}

void tc_bench_ring_end_attach(tc_bench_ring_end_t *end, void *mem)
{
    ring_hdr_t *h = mem;
    end->mem = mem;
    end->frag = (size_t)h->frag;
    end->slots = (unsigned)h->slots;
    end->next = 1;
    end->seen_free = 0;
}

void tc_bench_ring_send(tc_bench_ring_end_t *end, const void *buf, size_t n)
{
    ring_hdr_t *h = ring_hdr(end);
    const char *src = buf;
    for (size_t off = 0; off < n; off += end->frag) {
        uint64_t k = end->next++;
        size_t len = n - off < end->frag ? n - off : end->frag;
        /* Slot of fragment k last held k - slots: wait until it was copied out. */
        if (k > end->slots && end->seen_free < k - end->slots)
            end->seen_free = ring_wait_geq_acquire(&h->consumed.v, k - end->slots);
        memcpy(ring_slot(end, k), src + off, len);
        /* release: pairs with the acquire in tc_bench_ring_recv() */
        atomic_store_explicit(&h->seq[(k - 1) % end->slots].v, k, memory_order_release);
    }
}

void tc_bench_ring_recv(tc_bench_ring_end_t *end, void *buf, size_t n)
{
    ring_hdr_t *h = ring_hdr(end);
    char *dst = buf;
    for (size_t off = 0; off < n; off += end->frag) {
        uint64_t k = end->next++;
        size_t len = n - off < end->frag ? n - off : end->frag;
        ring_wait_geq_acquire(&h->seq[(k - 1) % end->slots].v, k);
        memcpy(dst + off, ring_slot(end, k), len);
        /* release: our reads of the slot happen before the producer's acquire in
         * tc_bench_ring_send() lets it overwrite the slot */
        atomic_store_explicit(&h->consumed.v, k, memory_order_release);
    }
}

void tc_bench_ring_barrier(tc_bench_ring_end_t *end, uint64_t *round)
{
    ring_hdr_t *h = ring_hdr(end);
    *round += 1;
    /* acq_rel: our earlier writes are visible to the peer once it sees both
     * arrivals, and theirs to us (pairs with the peer's fetch_add) */
    atomic_fetch_add_explicit(&h->barrier.v, 1, memory_order_acq_rel);
    ring_wait_geq_acquire(&h->barrier.v, 2 * *round);
}
