/* Segment layout (paper 000, stage 1), a pure function of (p, S, q, f).
 *
 *   [header page(s)]  magic and parameters; numa_node[p]; leaders[p];
 *                     node store (optional, see store.h): its lock, then its area
 *   [region 0] [region 1] ... [region p-1]      one per process, page aligned
 *   region i = [control block: page(s)] [queue: S buffers of f bytes]
 *
 * Control block of process i, one cache line each (one writer per line at any
 * time):
 *   line 0       done:     bank uses process i has finished (written by i only)
 *   line 1 + b   ready[b]: fragments of bank b announced to i (written by i's
 *                          parent in the current tree; successive writers are
 *                          ordered by the bank release, see bcast_pipelined.c)
 * then the Reduce/Allreduce lines, all written by i only (see reduce.c):
 *   rseq         data fragments i has published in its contribution slots
 *   rres         data fragments whose slice i has combined into its result slots
 *   rdone        data fragments i has finished with (read all it needed)
 *   rdone_inline inline fragments i has finished with (a Reduce to a root
 *                publishes it at every eighth: shm/reduce_proto.h)
 *   inline[k]    TC_SHM_REDUCE_INLINE_SLOTS lines: sequence number + payload
 * then the barrier lines (see barrier/shm_barrier.c), present in every block
 * whether or not the segment has a reduce area; values are barrier epochs
 * (monotonically increasing, never reset):
 *   arrive       i and its subtree have arrived (written by i only; combining
 *                tree)
 *   release      i has been released and releases those that wait on it
 *                (written by i only; tree, tournament, and the split forms'
 *                leader flag in process 0's block)
 *   counter      central counter: arrivals so far (used in process 0's block
 *                only; written by EVERY process with an atomic fetch_add: that
 *                contention is the central-counter algorithm)
 *   crelease     central counter's release (process 0's block only; written
 *                by the last arriver, or by process 0 in the split form;
 *                successive writers are ordered by the barrier itself)
 *   round[r]     brounds = ceil(log2 p) lines: dissemination round r, written
 *                by process (i - 2^r) mod p only
 *   tround[r]    brounds lines: tournament round r, written only by i's round-r
 *                loser i + 2^r (i wins round r when i % 2^(r+1) == 0)
 * Each line has one fixed writer whatever the algorithm (counter and crelease
 * excepted, as said), so consecutive barriers may use different algorithms.
 * then the sleepers line (base/wait.h): how many processes sleep on a futex
 *   on some line of this block, in four lanes (a line's position modulo 4);
 *   written only by sleepers (an atomic add on going to sleep, a subtract on
 *   waking), read by every writer of a line of this block right after it
 *   publishes (one load, a syscall only if the line's lane is non-zero)
 * then the race's lines (core/race.c), all written by i only:
 *   published    timed calls whose time i has written into its ring
 *   consumed     timed calls whose agreed time i has taken into its estimates
 *   ring         TC_SHM_RACE_RING doubles: i's time of timed call j at j % RING
 * then the extra inline lines, TC_SHM_BCAST_INLINE_LINES - 1 per bank (bank
 *   b's together): iline[b][j], j >= 1, holds a sequence number and the bytes
 *   [j w, (j + 1) w) of an inline message of more than one line, w = line - 8
 *   (ready[b] is line 0, with the first w bytes; inline_lines.h); written
 *   like ready[b] in a bank use by one process: i's parent in the Bcast's
 *   tree, i itself (Allgather, Gather: its own block; the Alltoall's code
 *   could, but its limit is one line) or a
 *   Scatter's root, ordered the same way (the bank wait), and by nothing
 *   else, so no payload of another protocol can look like a sequence number
 *   there
 * then the run-ahead ring (ring_lines.h: the Bcast's messages and the
 *   Scatter's blocks of at most one line's payload), whose lines only that
 *   protocol writes:
 *   bdone        ring calls i has finished (written by i only)
 *   bring[k]     TC_SHM_BCAST_RING lines: sequence number + payload of the
 *                ring call r with r % TC_SHM_BCAST_RING == k, written by
 *                i's parent in that Bcast's tree or that Scatter's root,
 *                after it saw i's bdone reach r - TC_SHM_BCAST_RING + 1 (i
 *                read the previous occupant)
 * then, with a reduce area only, the packed ring (reduce.c: a Reduce to a
 *   root of at most TC_SHM_PACKED_MAX bytes on the direct scheme), all
 *   written by i only:
 *   pdone        packed calls i has finished, published every
 *                TC_RED_PACKED_DONE_EVERY-th (reduce_proto.h)
 *   pring[c]     from the next line on, TC_SHM_PACKED_RING entries of
 *                TC_SHM_PACKED_ENTRY bytes side by side (16 lines of 64 B):
 *                a sequence number and the payload of packed call c' with
 *                c' % TC_SHM_PACKED_RING == c, written when i is not the
 *                root of c'
 * and after the broadcast queue, the reduce data of process i:
 *   contrib[k]   reduce_slots slots of reduce_slot_bytes: i's contributions
 *   result[k]    reduce_slots slots: the slices i combined
 *
 * What changed from the paper: the q pages of shared counters shm_op[k] and
 * shm_nreaders[k] (each written by all p-1 readers) and the control blocks
 * zeroed after use are replaced by monotonically increasing 64-bit sequence
 * numbers with one writer per cache line: the root waits until every
 * process's `done` has passed the previous use of the bank (instead of
 * nreaders == 0), and a reader waits until its `ready[b]` reaches the
 * fragment's sequence number (instead of control != 0 and then zeroing it).
 * The announcement shm_op is implied by the first fragment's sequence number.
 */
#ifndef TC_SHM_LAYOUT_H
#define TC_SHM_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

#define TC_SHM_MAGIC 0x746f706f636f6c6cULL /* "topocoll" */

/* Times of timed calls of the race kept per process (core/race.c). */
#define TC_SHM_RACE_RING 32
enum { TC_SHM_RACE_PUBLISHED, TC_SHM_RACE_CONSUMED, TC_SHM_RACE_RING0 };

/* Inline slots of the reduce (payload <= one line minus the sequence number). */
#define TC_SHM_REDUCE_INLINE_SLOTS 16

/* The packed ring of the small Reduce to a root: TC_SHM_PACKED_RING entries
 * of a sequence number and at most TC_SHM_PACKED_MAX payload bytes, side by
 * side (four to a 64-byte line), so a root that its peers have run ahead of
 * moves one line per line / TC_SHM_PACKED_ENTRY calls instead of one per
 * call. */
#define TC_SHM_PACKED_RING  64
#define TC_SHM_PACKED_ENTRY 16
#define TC_SHM_PACKED_MAX   (TC_SHM_PACKED_ENTRY - sizeof(uint64_t))

/* Lines an inline message may take: ready[b] and TC_SHM_BCAST_INLINE_LINES - 1
 * extra lines per bank (inline_lines.h: the Bcast, the Allgather family, the
 * Alltoall). */
#ifndef TC_SHM_BCAST_INLINE_LINES
#define TC_SHM_BCAST_INLINE_LINES 3
#endif
_Static_assert(TC_SHM_BCAST_INLINE_LINES >= 1, "ready[b] is line 0");

/* Lines of the run-ahead ring per process: how many small Bcasts and
 * Scatters (at most one line's payload) a writer may run ahead of a reader
 * (ring_lines.h). */
#ifndef TC_SHM_BCAST_RING
#define TC_SHM_BCAST_RING 128
#endif
_Static_assert(TC_SHM_BCAST_RING >= 1, "a ring of at least one line");

typedef struct tc_shm_layout {
    size_t page;           /* page size */
    size_t line;           /* cache line size */
    int p;                 /* processes */
    int S;                 /* buffers per queue */
    int q;                 /* banks (S % q == 0) */
    size_t f;              /* fragment (buffer) size, a multiple of the page size */
    size_t numa_off;       /* int numa_node[p] (in the header) */
    size_t leaders_off;    /* int leaders[p]: lowest rank on the same NUMA node */
    size_t store_lock_off; /* node store's lock (cache-line aligned; 0: no store) */
    size_t store_off;      /* node store's area: control line then records (0: no store) */
    size_t store_bytes;    /* size of that area (line multiple; 0: no store) */
    size_t header_size;    /* header pages */
    size_t ctrl_size;      /* control block of one process (page multiple) */
    int rslots;            /* reduce slots per process (0: no reduce area) */
    int rdepth;            /* of which a writer uses at most this many unless contended
                              (reduce_slots.c); rslots: the fixed ring, slot k % rslots */
    size_t rslot_bytes;    /* bytes per reduce slot (multiple of line) */
    size_t rctrl_off;    /* in a region: the rseq line (then rres, rdone, rdone_inline, inline[]) */
    size_t rdata_off;    /* in a region: contrib[0] (result[0] follows the contrib slots) */
    int brounds;         /* barrier round lines per process: ceil(log2 p) */
    size_t bctrl_off;    /* in a region: the barrier arrive line (then release, counter, ...) */
    size_t sleepers_off; /* in a region: the sleepers line (after the barrier lines) */
    size_t race_off;     /* in a region: the race's lines (after the sleepers line) */
    size_t iline_off;    /* in a region: the broadcast's extra inline lines (after the race's) */
    size_t bring_off;    /* in a region: the run-ahead ring's bdone line, then its lines */
    size_t pring_off;    /* in a region: the packed ring's pdone line, then its lines (after
                            the run-ahead ring's; 0: no reduce area) */
    size_t ridx_off;     /* in a region: uint32_t slot_of[rslots] (rdepth < rslots), else 0 */
    size_t region_size;  /* ctrl_size + S * f + 2 * rslots * rslot_bytes (+ slot_of[]) */
    size_t total;        /* whole segment */
} tc_shm_layout_t;

/* Fill @p l. Returns TC_OK, or TC_ERR_ARG if the arguments are invalid (p < 1, S < 1,
 * q < 1, S % q != 0, f not a positive multiple of the page, page or line not a
 * power of two) or the size overflows. */
tc_err_t tc_shm_layout_compute(tc_shm_layout_t *l, int p, int S, int q, size_t f, size_t page,
                               size_t line);
/* The same with a reduce area of @p rslots slots of @p rslot_bytes (a
 * positive multiple of @p line; rslots >= 2, or 0 for none). */
tc_err_t tc_shm_layout_compute_full(tc_shm_layout_t *l, int p, int S, int q, size_t f, int rslots,
                                    size_t rslot_bytes, size_t page, size_t line);

/* Let a process's writes use at most @p rdepth (2 <= rdepth <= rslots) of its
 * reduce slots unless contended, each writer choosing its slots
 * (reduce_slots.c): with rdepth < rslots each region gets slot_of[rslots]
 * after the result slots, and region_size and total grow. rdepth == rslots
 * (compute_full's choice) is the fixed ring. Returns TC_OK, or TC_ERR_ARG
 * (layout unchanged). */
tc_err_t tc_shm_layout_set_rdepth(tc_shm_layout_t *l, int rdepth);

/* Add the node store to the header of a computed layout: @p lock_bytes of
 * lock memory then @p area_bytes of store area (both rounded up to the line),
 * after leaders[]; header_size and total grow, every later offset moves
 * with header_size. Call again to resize (0, 0 removes the store). Returns
 * TC_OK, or TC_ERR_ARG (layout unchanged) if a size is over 1 GiB or @p area_bytes is
 * non-zero but below two lines (control line plus one record header). */
tc_err_t tc_shm_layout_add_store(tc_shm_layout_t *l, size_t lock_bytes, size_t area_bytes);

/* Offsets inside the segment. */
static inline size_t tc_shm_layout_region(const tc_shm_layout_t *l, int i)
{
    return l->header_size + (size_t)i * l->region_size;
}
static inline size_t tc_shm_layout_done(const tc_shm_layout_t *l, int i)
{
    return tc_shm_layout_region(l, i);
}
static inline size_t tc_shm_layout_ready(const tc_shm_layout_t *l, int i, int bank)
{
    return tc_shm_layout_region(l, i) + (size_t)(1 + bank) * l->line;
}
static inline size_t tc_shm_layout_queue(const tc_shm_layout_t *l, int i)
{
    return tc_shm_layout_region(l, i) + l->ctrl_size;
}

enum {
    TC_SHM_RLINE_SEQ,
    TC_SHM_RLINE_RES,
    TC_SHM_RLINE_DONE,
    TC_SHM_RLINE_DONE_INLINE,
    TC_SHM_RLINE_INLINE0
};
static inline size_t tc_shm_layout_rline(const tc_shm_layout_t *l, int i, int which)
{
    return tc_shm_layout_region(l, i) + l->rctrl_off + (size_t)which * l->line;
}
static inline size_t tc_shm_layout_rcontrib(const tc_shm_layout_t *l, int i, int slot)
{
    return tc_shm_layout_region(l, i) + l->rdata_off + (size_t)slot * l->rslot_bytes;
}
static inline size_t tc_shm_layout_rresult(const tc_shm_layout_t *l, int i, int slot)
{
    return tc_shm_layout_rcontrib(l, i, l->rslots + slot);
}
static inline size_t tc_shm_layout_rslot_of(const tc_shm_layout_t *l, int i)
{
    return tc_shm_layout_region(l, i) + l->ridx_off;
}

/* Barrier lines of a control block, in order; round[r] and tround[r] follow. */
enum {
    TC_SHM_BLINE_ARRIVE,
    TC_SHM_BLINE_RELEASE,
    TC_SHM_BLINE_COUNTER,
    TC_SHM_BLINE_CRELEASE,
    TC_SHM_BLINE_ROUND0
};
static inline size_t tc_shm_layout_bline(const tc_shm_layout_t *l, int i, int which)
{
    return tc_shm_layout_region(l, i) + l->bctrl_off + (size_t)which * l->line;
}
/* Dissemination round @p r (< brounds) of process @p i. */
static inline size_t tc_shm_layout_bround(const tc_shm_layout_t *l, int i, int r)
{
    return tc_shm_layout_bline(l, i, TC_SHM_BLINE_ROUND0 + r);
}
/* Tournament round @p r (< brounds) of process @p i. */
static inline size_t tc_shm_layout_btround(const tc_shm_layout_t *l, int i, int r)
{
    return tc_shm_layout_bline(l, i, TC_SHM_BLINE_ROUND0 + l->brounds + r);
}

static inline size_t tc_shm_layout_sleepers(const tc_shm_layout_t *l, int i)
{
    return tc_shm_layout_region(l, i) + l->sleepers_off;
}

/* The race's line @p which (TC_SHM_RACE_*) of process i; the ring starts at
 * TC_SHM_RACE_RING0. */
static inline size_t tc_shm_layout_race(const tc_shm_layout_t *l, int i, int which)
{
    return tc_shm_layout_region(l, i) + l->race_off + (size_t)which * l->line;
}

/* Extra inline line @p j (1 <= j < TC_SHM_BCAST_INLINE_LINES) of bank @p bank
 * of process @p i (line 0 is ready[bank]). */
static inline size_t tc_shm_layout_iline(const tc_shm_layout_t *l, int i, int bank, int j)
{
    return tc_shm_layout_region(l, i) + l->iline_off +
           ((size_t)bank * (TC_SHM_BCAST_INLINE_LINES - 1) + (size_t)(j - 1)) * l->line;
}

/* The run-ahead ring's bdone line of process @p i (ring_lines.h). */
static inline size_t tc_shm_layout_bdone(const tc_shm_layout_t *l, int i)
{
    return tc_shm_layout_region(l, i) + l->bring_off;
}
/* Line @p k (< TC_SHM_BCAST_RING) of the run-ahead ring of process @p i. */
static inline size_t tc_shm_layout_bring(const tc_shm_layout_t *l, int i, int k)
{
    return tc_shm_layout_bdone(l, i) + (size_t)(1 + k) * l->line;
}

/* The packed ring's pdone line of process @p i (a layout with a reduce area). */
static inline size_t tc_shm_layout_pdone(const tc_shm_layout_t *l, int i)
{
    return tc_shm_layout_region(l, i) + l->pring_off;
}
/* Lines the packed ring's entries take (after its pdone line). */
static inline size_t tc_shm_layout_plines(size_t line)
{
    return (TC_SHM_PACKED_RING * TC_SHM_PACKED_ENTRY + line - 1) / line;
}
/* Entry @p c (< TC_SHM_PACKED_RING) of the packed ring of process @p i:
 * consecutive calls side by side from the line after pdone. */
static inline size_t tc_shm_layout_pentry(const tc_shm_layout_t *l, int i, int c)
{
    return tc_shm_layout_pdone(l, i) + l->line + (size_t)c * TC_SHM_PACKED_ENTRY;
}

#endif /* TC_SHM_LAYOUT_H */
