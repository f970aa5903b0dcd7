/* Allgather(v) through the segment, with the Bcast's queues and sequence
 * numbers (bcast_pipelined.c; one writer per cache line, see layout.h).
 *
 * Every process is a "root" of its own block at once: in bank use u (bank
 * b = u % q) process j copies the next chunk of its block into bank b of
 * its own queue, fragment by fragment, and announces each fragment in its
 * own ready[j][b] line; every other process waits on that line and copies
 * the fragments out. So p blocks cost one copy-in each and p - 1 copy-outs
 * per process, and a block of one fragment costs one notification, read by
 * all p - 1 others (one writer, many readers, no shared counter).
 *
 *   all, bank use u:  wait until done[i] >= u - q + 1 for every i     (WS)
 *                     copy own chunk in, fragment k:
 *                         ready[me][b] = base + k + 1                   (N)
 *                     for each other j with a chunk in this use:
 *                         wait ready[j][b] >= base + k + 1, copy out    (W)
 *                     done[me] = u + 1                                  (A)
 *
 * base = bank_frags[b] before the use; afterwards bank_frags[b] grows by the
 * largest chunk's fragment count (identical everywhere: all block sizes are
 * known to all), so every ready line of bank b stays <= bank_frags[b] and
 * the next writer of any of them (a Bcast's parent, or the owner in a later
 * Allgather) announces larger values: the lines only grow. The writers of
 * ready[j][b] are ordered as in the Bcast: a write in use u + q (whoever
 * makes it) happens after its writer saw done[i] >= u + 1 for every i (WS),
 * i.e. after every reader of the line in use u (here: all processes; in a
 * Bcast: j) was done with it. The bank's buffers likewise.
 *
 * Blocks up to TC_SHM_BCAST_INLINE_MAX bytes (all of them: the largest
 * decides, alike everywhere) ride in their writer's inline lines, the ready
 * line and up to two more, each next to its own copy of the sequence number
 * (inline_lines.h, as the Bcast's small messages): a reader polls a block's
 * lines together, about one line's transfer per block, instead of the ready
 * line and then, dependent on it, the slot's.
 *
 * Blocks larger than a bank take several bank uses (a chunk of up to one
 * bank per use); all processes make the same number of uses, the largest
 * block's.
 *
 * Gather: the same, except that the root writes nothing and only the root
 * reads. Scatter: the root writes block j's chunk into bank b of j's queue
 * and announces it in j's ready[j][b] (as a Bcast's parent does), j waits on
 * its own line and copies out; blocks of at most TC_SHM_BCAST_INLINE_MAX
 * bytes ride in j's inline lines, those of at most one line's payload in
 * j's line of the run-ahead ring instead (ring_lines.h, shared with the
 * Bcast's small messages: no bank use). In both, every write into bank b of
 * any queue or any ready line of bank b happens after its writer's bank wait
 * (WS).
 */
#include "allgather.h"

#include <stdbool.h>
#include <string.h>

#include "inline_lines.h"
#include "params.h"
#include "ring_lines.h"

static inline size_t tc_shm_ag_bytes(const tc_shm_ag_sizes_t *sz, int j)
{
    return sz->bytes ? sz->bytes[j] : sz->uniform;
}

static inline size_t tc_shm_ag_min(size_t a, size_t b)
{
    return a < b ? a : b;
}

void tc_shm_ag_put_zeros(void *state, int j, size_t off, char *dst, size_t n)
{
    (void)state;
    (void)j;
    (void)off;
    memset(dst, 0, n);
}

void tc_shm_ag_get_nothing(void *state, int j, size_t off, const char *src, size_t n)
{
    (void)state;
    (void)j;
    (void)off;
    (void)src;
    (void)n;
}

/* Bytes [at, at + n) of process @p i's inline lines in bank @p bank, line by
 * line (w bytes of payload each), out of block @p blk (io->put) or, with
 * @p into_block, into it (io->get). */
static void tc_shm_ag_lines_move(const tc_shm_comm_t *s, const tc_shm_ag_io_t *io, int blk, int i,
                                 int bank, size_t at, size_t n, bool into_block)
{
    const size_t w = TC_SHM_INLINE_MAX;
    for (size_t off = 0; off < n;) {
        const size_t pos = at + off, k = tc_shm_ag_min(w - pos % w, n - off);
        char *line = tc_shm_inline_payload(s, i, bank, (int)(pos / w)) + pos % w;
        if (into_block)
            io->get(io->state, blk, off, line, k);
        else
            io->put(io->state, blk, off, line, k);
        off += k;
    }
}

void tc_shm_ag_lines_put(const tc_shm_comm_t *s, const tc_shm_ag_io_t *io, int blk, int i, int bank,
                         size_t at, size_t n)
{
    if (at + n <= TC_SHM_INLINE_MAX) /* the ready line only: one call */
        io->put(io->state, blk, 0, tc_shm_inline_payload(s, i, bank, 0) + at, n);
    else
        tc_shm_ag_lines_move(s, io, blk, i, bank, at, n, false);
}

void tc_shm_ag_lines_get(const tc_shm_comm_t *s, const tc_shm_ag_io_t *io, int blk, int i, int bank,
                         size_t at, size_t n)
{
    if (at + n <= TC_SHM_INLINE_MAX) /* the ready line only: one call */
        io->get(io->state, blk, 0, tc_shm_inline_payload(s, i, bank, 0) + at, n);
    else
        tc_shm_ag_lines_move(s, io, blk, i, bank, at, n, true);
}

/* Every block fits in the inline lines: the Allgather / Gather. Process j's
 * block rides in j's own lines of the bank. */
static void tc_shm_ag_inline(tc_shm_comm_t *s, const tc_shm_ag_sizes_t *sz, int root,
                             const tc_shm_ag_io_t *io)
{
    const uint64_t u = s->uses;
    const int bank = (int)(u % (uint64_t)s->layout.q);
    const uint64_t seq = s->bank_frags[bank] + 1;
    const int p = s->p, me = s->rank;
    const size_t mine = tc_shm_ag_bytes(sz, me);
    if (me != root && mine > 0) {
        tc_shm_bank_wait_free(s, u, "shm allgather: wait for a bank to be released");
        tc_shm_ag_lines_put(s, io, me, me, bank, 0, mine);
        /* release (line 0 seq_cst): pairs with the acquires in
         * tc_shm_inline_wait() below in the readers; publishes the payload
         * written just above. */
        tc_shm_inline_publish(s, me, bank, tc_shm_inline_nlines(mine), seq);
    }
    for (int d = 1; d < p && (root < 0 || me == root); d++) {
        const int j = (me + d) % p;
        const size_t n = tc_shm_ag_bytes(sz, j);
        if (n == 0)
            continue;
        /* acquire: pairs with the publication above in process j. */
        tc_shm_inline_wait(s, j, bank, seq, tc_shm_inline_nlines(n),
                           "shm allgather: wait for a block", j);
        tc_shm_ag_lines_get(s, io, j, j, bank, 0, n);
    }
    s->bank_frags[bank] = seq;
    tc_shm_bank_done(s, u);
}

/* The fragment size and chunk (bytes of a block per bank use) of a call,
 * the same on every process: the Bcast's fragments for a message of the
 * largest block's size (paper 000, section 5: f grows as sqrt(m t_w / t)),
 * so a reader starts on a block before its writer has copied all of it. */
static void tc_shm_ag_geometry(const tc_shm_comm_t *s, size_t max, size_t *bank_span, size_t *f,
                               size_t *chunk)
{
    *bank_span = (size_t)(s->layout.S / s->layout.q) * s->layout.f;
    *f = tc_shm_params_fragment_for(max, s->tw_over_t, s->layout.f);
    if (*f > *bank_span)
        *f = *bank_span;
    *chunk = *bank_span / *f * *f;
}

size_t tc_shm_ag_chunk(const tc_shm_comm_t *s, size_t max)
{
    size_t bank_span, f, chunk;
    tc_shm_ag_geometry(s, max, &bank_span, &f, &chunk);
    return chunk;
}

/* W: fragments [0, ceil(len / f)) of a chunk of @p len bytes at @p slots,
 * announced in @p ready from @p base on by process @p writer, out into
 * bytes [done, done + len) of block j. */
static void tc_shm_ag_copy_out(tc_shm_comm_t *s, const tc_shm_ag_io_t *io, int j, int writer,
                               tc_atomic_u64_t *ready, int line_owner, uint64_t base,
                               const char *slots, size_t done, size_t len, size_t f)
{
    const uint64_t nfrag = (uint64_t)((len + f - 1) / f);
    uint64_t k = 0;
    while (k < nfrag) {
        /* acquire: pairs with the publication of the fragment by its writer
         * (N in tc_shm_ag_queues()). */
        uint64_t avail = tc_shm_wait_ge(s, ready, line_owner, base + k + 1,
                                        "shm allgather: wait for a fragment", writer) -
                         base;
        if (avail > nfrag)
            avail = nfrag; /* cannot happen: the next use of the bank waits for us */
        const size_t off = (size_t)k * f;
        const size_t end = tc_shm_ag_min((size_t)avail * f, len);
        io->get(io->state, j, done + off, slots + off, end - off);
        k = avail;
    }
}

/* N: bytes [done, done + len) of block j into @p slots, each fragment
 * announced in @p ready (a line of region @p line_owner) from @p base on. */
static void tc_shm_ag_copy_in(tc_shm_comm_t *s, const tc_shm_ag_io_t *io, int j,
                              tc_atomic_u64_t *ready, int line_owner, uint64_t base, char *slots,
                              size_t done, size_t len, size_t f)
{
    uint64_t k = 0;
    for (size_t off = 0; off < len; off += f, k++) {
        io->put(io->state, j, done + off, slots + off, tc_shm_ag_min(len - off, f));
        /* release (seq_cst): pairs with the acquire in tc_shm_ag_copy_out()
         * of the readers; publishes the fragment copied above. */
        tc_shm_publish(s, ready, line_owner, base + k + 1);
    }
}

/* The blocks a process moves in one direction in a call: those of the
 * processes me + d (mod p) for d in [d0, d1): none ([0, 0)), its own
 * ([0, 1)) or every other process's ([1, p): from the next rank on, so that
 * the processes do not all read the same queue at once). Block j always
 * travels in process j's queue, whoever writes it. */
typedef struct tc_shm_ag_set {
    int d0, d1;
} tc_shm_ag_set_t;

/* Blocks larger than the inline lines, in bank uses of up to a chunk of
 * every block: this process copies the blocks of @p out into their queues
 * (after its bank wait, WS: a Scatter's root in every use, another process
 * when its own block has bytes left) and those of @p in out of them (their
 * writer: the block's owner, or @p root for a Scatter's own block). */
static void tc_shm_ag_queues(tc_shm_comm_t *s, const tc_shm_ag_sizes_t *sz, int root,
                             const tc_shm_ag_io_t *io, tc_shm_ag_set_t out, tc_shm_ag_set_t in)
{
    const int p = s->p, me = s->rank, q = s->layout.q;
    size_t bank_span, f, chunk;
    tc_shm_ag_geometry(s, sz->max, &bank_span, &f, &chunk);
    for (size_t done = 0; done < sz->max; done += chunk) {
        const uint64_t u = s->uses;
        const int bank = (int)(u % (uint64_t)q);
        const uint64_t base = s->bank_frags[bank];
        if (out.d0 == 1 || (out.d1 == 1 && tc_shm_ag_bytes(sz, me) > done)) {
            tc_shm_bank_wait_free(s, u, "shm allgather: wait for a bank to be released");
            for (int d = out.d0; d < out.d1; d++) {
                const int j = (me + d) % p;
                const size_t m = tc_shm_ag_bytes(sz, j);
                if (m > done)
                    tc_shm_ag_copy_in(s, io, j, tc_shm_ready(s, j, bank), j, base,
                                      tc_shm_queue(s, j) + (size_t)bank * bank_span, done,
                                      tc_shm_ag_min(m - done, chunk), f);
            }
        }
        /* W: the chunks this process reads. */
        for (int d = in.d0; d < in.d1; d++) {
            const int j = (me + d) % p;
            const size_t m = tc_shm_ag_bytes(sz, j);
            if (m > done)
                tc_shm_ag_copy_out(s, io, j, in.d0 == 1 ? j : root, tc_shm_ready(s, j, bank), j,
                                   base, tc_shm_queue(s, j) + (size_t)bank * bank_span, done,
                                   tc_shm_ag_min(m - done, chunk), f);
        }
        s->bank_frags[bank] = base + (uint64_t)((tc_shm_ag_min(sz->max - done, chunk) + f - 1) / f);
        tc_shm_bank_done(s, u);
    }
}

void tc_shm_allgather(tc_shm_comm_t *s, const tc_shm_ag_sizes_t *sz, int root,
                      const tc_shm_ag_io_t *io)
{
    const int p = s->p, me = s->rank;
    if (sz->max == 0)
        return; /* the same on every process: nothing moves, no bank use */
    if (sz->max <= TC_SHM_BCAST_INLINE_MAX) {
        tc_shm_ag_inline(s, sz, root, io);
        return;
    }
    /* Every process but the root writes its own block; every process (a
     * Gather's root only) reads the others'. */
    const tc_shm_ag_set_t none = {0, 0}, own = {0, 1}, others = {1, p};
    tc_shm_ag_queues(s, sz, root, io, me == root ? none : own,
                     root < 0 || me == root ? others : none);
}

void tc_shm_scatter(tc_shm_comm_t *s, const tc_shm_ag_sizes_t *sz, int root,
                    const tc_shm_ag_io_t *io)
{
    const int p = s->p, me = s->rank;
    if (sz->max == 0)
        return;
    const int q = s->layout.q;
    if (sz->max <= TC_SHM_INLINE_MAX) {
        /* Block j in j's line of the run-ahead ring (ring_lines.h): the
         * root runs up to TC_SHM_BCAST_RING calls ahead of a slow reader. */
        const uint64_t r = s->ring_uses;
        const size_t mine = tc_shm_ag_bytes(sz, me);
        if (me == root) {
            for (int d = 1; d < p; d++) {
                const int j = (me + d) % p;
                const size_t n = tc_shm_ag_bytes(sz, j);
                if (n == 0)
                    continue;
                /* acquire (WR): pairs with tc_shm_ring_finish() of j. */
                tc_shm_ring_wait_free(s, j, r, "shm scatter: wait for a ring line to be released");
                io->put(io->state, j, 0, (char *)(tc_shm_ring_line(s, j, r) + 1), n);
                /* release (N): pairs with the acquire (W) below in j. */
                tc_shm_ring_publish(s, j, r);
            }
        } else if (mine > 0) {
            /* acquire (W): pairs with tc_shm_ring_publish() above in the root. */
            io->get(io->state, me, 0, tc_shm_ring_wait(s, r, "shm scatter: wait for a block", root),
                    mine);
        }
        /* release (A): pairs with WR of the root of ring call r + R. */
        tc_shm_ring_finish(s);
        return;
    }
    if (sz->max <= TC_SHM_BCAST_INLINE_MAX) {
        /* Block j in j's inline lines. */
        const uint64_t u = s->uses;
        const int bank = (int)(u % (uint64_t)q);
        const uint64_t seq = s->bank_frags[bank] + 1;
        const size_t mine = tc_shm_ag_bytes(sz, me);
        if (me == root) {
            tc_shm_bank_wait_free(s, u, "shm allgather: wait for a bank to be released");
            for (int d = 1; d < p; d++) {
                const int j = (me + d) % p;
                const size_t n = tc_shm_ag_bytes(sz, j);
                if (n == 0)
                    continue;
                tc_shm_ag_lines_put(s, io, j, j, bank, 0, n);
                /* release (line 0 seq_cst): pairs with the acquires in
                 * tc_shm_inline_wait() below in j; publishes the payload
                 * written just above. */
                tc_shm_inline_publish(s, j, bank, tc_shm_inline_nlines(n), seq);
            }
        } else if (mine > 0) {
            /* acquire: pairs with the publication above in the root. */
            tc_shm_inline_wait(s, me, bank, seq, tc_shm_inline_nlines(mine),
                               "shm scatter: wait for a block", root);
            tc_shm_ag_lines_get(s, io, me, me, bank, 0, mine);
        }
        s->bank_frags[bank] = seq;
        tc_shm_bank_done(s, u);
        return;
    }
    /* The root writes every other process's block, every other process reads
     * its own. */
    const tc_shm_ag_set_t none = {0, 0}, own = {0, 1}, others = {1, p};
    tc_shm_ag_queues(s, sz, root, io, me == root ? others : none, me == root ? none : own);
}
