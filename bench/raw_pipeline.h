/*
 * Raw two-process shared-memory copy pipeline: the bandwidth reference for
 * TC_Bcast ("from 1 MiB up, TC_Bcast bandwidth >= 80% of a raw two-process
 * copy pipeline measured in the same run").
 *
 * One producer, one consumer, a ring of `slots` fragments of `frag` bytes in
 * memory both processes map. The producer memcpy's fragment k into slot
 * (k-1) % slots and publishes k with a release store to that slot's sequence
 * word; the consumer acquires the word, memcpy's the fragment out and publishes
 * how many fragments it has consumed, which is what lets the producer reuse a
 * slot. Nothing else: no tree, no banks, no datatype handling. That is the
 * floor any shared-memory broadcast between two processes pays.
 *
 * Used by copy-pipeline (fork, anonymous MAP_SHARED mapping) and by
 * topocoll-bench --raw (an MPI_Win_allocate_shared window between ranks 0, 1).
 */
#ifndef TC_BENCH_RAW_PIPELINE_H
#define TC_BENCH_RAW_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

/* The cache line, as the library's (CMake option TOPOCOLL_CACHELINE). */
#ifndef TC_CACHELINE
#define TC_CACHELINE 64
#endif

#define TC_BENCH_RING_FRAG_DEFAULT  8192
#define TC_BENCH_RING_SLOTS_DEFAULT 16

/* One side's view of a ring: where it is and how far this side has got. */
typedef struct tc_bench_ring_end {
    void *mem;          /* start of the ring, TC_CACHELINE aligned, same layout on both sides */
    size_t frag;        /* fragment size in bytes */
    unsigned slots;     /* number of slots */
    uint64_t next;      /* sequence number of the next fragment this side moves (from 1) */
    uint64_t seen_free; /* producer: last observed consumer count (saves coherence misses) */
} tc_bench_ring_end_t;

/* Bytes of shared memory a ring needs (plus up to TC_CACHELINE - 1 bytes for
 * alignment). */
size_t tc_bench_ring_bytes(size_t frag, unsigned slots);

/* Initialise the ring at mem (TC_CACHELINE aligned); one side only, before the other
 * side attaches (the caller orders the two, e.g. with a barrier). */
void tc_bench_ring_init(void *mem, size_t frag, unsigned slots);

/* Attach one side to an initialised ring. */
void tc_bench_ring_end_attach(tc_bench_ring_end_t *end, void *mem);

/* Producer: send n bytes from buf. Returns when the last fragment is published
 * (the consumer may still be copying). */
void tc_bench_ring_send(tc_bench_ring_end_t *end, const void *buf, size_t n);

/* Consumer: receive n bytes into buf (n must match the producer's). */
void tc_bench_ring_recv(tc_bench_ring_end_t *end, void *buf, size_t n);

/* Two-party barrier in the ring's header (for copy-pipeline, which has no MPI).
 * `round` is this side's private counter, starting at 0. */
void tc_bench_ring_barrier(tc_bench_ring_end_t *end, uint64_t *round);

/* Round p up to a multiple of TC_CACHELINE bytes. */
void *tc_bench_ring_align(void *p);

#endif /* TC_BENCH_RAW_PIPELINE_H */
