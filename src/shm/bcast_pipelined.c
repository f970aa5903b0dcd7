/* Pipelined copy-in/copy-out broadcast (paper 000, stage 2, Fig. 2), with
 * sequence numbers and one writer per cache line (see layout.h).
 *
 * A broadcast of m bytes is cut into fragments of f bytes. Fragments go
 * through the root's queue of S buffers, split into q banks of S/q buffers; a
 * "bank use" is one pass of the root over one bank (up to S/q fragments).
 * Bank uses are numbered globally over all broadcasts on the segment
 * (u = 0, 1, 2, ...; bank u % q), and every process counts them identically
 * because every process sees every broadcast, in the same order, with the
 * same byte count.
 *
 *   root, bank use u:  wait until done[i] >= u - q + 1 for every i   (WS)
 *                      for each fragment k: copy in (C_k),
 *                          ready[child][b] = seq(k)                  (N)
 *   others:            for each fragment k: wait ready[me][b] >= seq(k)  (W)
 *                          forward seq to children, then copy out
 *   everyone:          done[me] = u + 1                              (A)
 *
 * seq(k) = bank_frags[b] + k + 1, where bank_frags[b] counts all fragments
 * announced in bank b before this use, so ready[i][b] only grows. Its
 * successive writers (the parents of i in the trees of successive uses of
 * bank b) are ordered: a write for use u + q happens after the root of
 * u + q saw done[i] >= u + 1, i.e. after i consumed every write for use u.
 *
 * The paper's nreaders counter (decremented by all p-1 readers) becomes the
 * per-process done line; the per-buffer control blocks (set by the parent,
 * zeroed by the reader) become one monotonic ready line per bank; the
 * announcement shm_op is implied by the first fragment's sequence number.
 *
 * Messages of at most TC_SHM_BCAST_INLINE_MAX bytes skip the queue: up to one
 * line's payload they go through the run-ahead ring (ring_lines.h), so a
 * root can run further ahead than q bank uses (tc_shm_bcast_ring()); larger ones
 * ride in the reader's ready line and its extra inline lines
 * (tc_shm_bcast_inline_lines(), inline_lines.h).
 */
#include <string.h>

#include "inline_lines.h"
#include "params.h"
#include "ring_lines.h"
#include "segment.h"

static inline size_t tc_min_size(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* Root side: bytes [off, off + n) of the message into dst (a contiguous
 * message with the copy @p how chose, copy.h). */
static inline void tc_shm_copy_in(const tc_shm_copier_t *c, const tc_shm_copy_choice_t *how,
                                  const char *data, size_t off, char *dst, size_t n)
{
    if (c)
        c->gather(c->state, dst, n);
    else
        tc_shm_copy(how, dst, data + off, n);
}

/* Reader side: src into bytes [off, off + n) of the message. */
static inline void tc_shm_copy_out(const tc_shm_copier_t *c, char *data, size_t off,
                                   const char *src, size_t n)
{
    if (c)
        c->scatter(c->state, src, n);
    else
        memcpy(data + off, src, n);
}

static inline void tc_shm_bcast_notify(tc_shm_comm_t *s, const int *children, int nchildren,
                                       int bank, uint64_t seq)
{
    for (int c = 0; c < nchildren; c++)
        /* release (seq_cst, and a wake if the child sleeps): pairs with the
         * acquire in tc_shm_bcast_wait_ready() of the child; publishes the
         * fragment copy (root) or, transitively, the root's copy that we
         * acquired (inner node). */
        tc_shm_publish(s, tc_shm_ready(s, children[c], bank), children[c], seq);
}

/* W: wait until at least @p want fragments' sequence has been announced;
 * returns the announced value (possibly more fragments than asked for). */
static inline uint64_t tc_shm_bcast_wait_ready(tc_shm_comm_t *s, int bank, uint64_t want,
                                               int parent)
{
    tc_atomic_u64_t *ready = tc_shm_ready(s, s->rank, bank);
    /* acquire: pairs with the publication in tc_shm_bcast_notify() of our
     * parent. */
    return tc_shm_wait_ge(s, ready, s->rank, want, "shm bcast: wait for a fragment", parent);
}

/* Small messages (at most one line's payload) go through the run-ahead
 * ring (ring_lines.h), not the banks: the parent of each process in the
 * root's tree writes its line, after that process finished the ring call
 * that used the line before. So a root is at most TC_SHM_BCAST_RING calls
 * ahead of its slowest reader, whatever the bank count. Inner nodes forward
 * before they copy out. */
static void tc_shm_bcast_ring(tc_shm_comm_t *s, char *buf, size_t nbytes, int root,
                              const tc_shm_copier_t *copier)
{
    const uint64_t r = s->ring_uses;
    const int *children = tc_shm_tree_children(&s->tree, root);
    const int nchildren = tc_shm_tree_nchildren(&s->tree, root);
    const char *src = buf;
    char staged[TC_SHM_INLINE_MAX];

    if (s->rank == root) {
        if (copier) {
            copier->gather(copier->state, staged, nbytes);
            src = staged;
        }
    } else {
        /* acquire (W): pairs with tc_shm_ring_publish() of our parent. */
        src = tc_shm_ring_wait(s, r, "shm bcast: wait for a small message",
                               tc_shm_tree_parent(&s->tree, root));
    }
    for (int c = 0; c < nchildren; c++) {
        const int i = children[c];
        /* acquire (WR): pairs with tc_shm_ring_finish() of child i. */
        tc_shm_ring_wait_free(s, i, r, "shm bcast: wait for a child to free a ring line");
        memcpy(tc_shm_ring_line(s, i, r) + 1, src, nbytes);
        /* release (N): pairs with the acquire (W) of child i. */
        tc_shm_ring_publish(s, i, r);
    }
    if (s->rank != root)
        tc_shm_copy_out(copier, buf, 0, src, nbytes);
    /* release (A): pairs with WR of our parent in ring call r + R. */
    tc_shm_ring_finish(s);
}

/* Inline messages of TC_SHM_INLINE_MAX + 1 to TC_SHM_BCAST_INLINE_MAX bytes,
 * in the reader's inline lines (inline_lines.h): line j (ready[bank] for
 * j = 0, else the extra line j of the bank, layout.h) carries bytes
 * [j w, (j + 1) w), w = TC_SHM_INLINE_MAX, next to its own copy of the
 * sequence number. Like ready[bank], they are written in bank use u + q only
 * after the root of that use saw done[i] >= u + 1 (so a line holding seq was
 * written for this use, and a payload is never overwritten while it is
 * read). Protocol state advances as for a one-fragment message. */
static void tc_shm_bcast_inline_lines(tc_shm_comm_t *s, char *buf, size_t nbytes, int root,
                                      const tc_shm_copier_t *copier)
{
    const size_t w = TC_SHM_INLINE_MAX;
    const uint64_t u = s->uses;
    const int bank = (int)(u % (uint64_t)s->layout.q);
    const uint64_t seq = s->bank_frags[bank] + 1;
    const int nlines = (int)((nbytes + w - 1) / w);
    const int *children = tc_shm_tree_children(&s->tree, root);
    const int nchildren = tc_shm_tree_nchildren(&s->tree, root);
    const char *src[TC_SHM_BCAST_INLINE_LINES];
    char staged[TC_SHM_BCAST_INLINE_MAX];

    if (s->rank == root) {
        const char *from = buf;
        tc_shm_bank_wait_free(s, u, "shm bcast: wait for a bank to be released");
        if (copier) {
            copier->gather(copier->state, staged, nbytes);
            from = staged;
        }
        for (int j = 0; j < nlines; j++)
            src[j] = from + (size_t)j * w;
    } else {
        tc_shm_inline_wait(s, s->rank, bank, seq, nlines, "shm bcast: wait for a fragment",
                           tc_shm_tree_parent(&s->tree, root));
        for (int j = 0; j < nlines; j++)
            src[j] = tc_shm_inline_payload(s, s->rank, bank, j);
    }
    for (int c = 0; c < nchildren; c++) {
        /* The extra lines first, ready[bank] last (the line the child's
         * helper waits on). */
        for (int j = nlines - 1; j >= 0; j--) {
            memcpy(tc_shm_inline_payload(s, children[c], bank, j), src[j],
                   tc_min_size(w, nbytes - (size_t)j * w));
            /* release: pairs with the acquires in tc_shm_inline_wait() of
             * the child (the poll, and for line 0 the wait helper). */
            tc_shm_inline_seal(s, children[c], bank, j, seq);
        }
    }
    if (s->rank != root)
        for (int j = 0; j < nlines; j++)
            tc_shm_copy_out(copier, buf, (size_t)j * w, src[j],
                            tc_min_size(w, nbytes - (size_t)j * w));
    s->bank_frags[bank] = seq;
    /* release (A): pairs with the bank wait (WS) of later writers. */
    tc_shm_bank_done(s, u);
}

void tc_shm_bcast_pipelined(tc_shm_comm_t *s, void *buf, size_t nbytes, int root,
                            const tc_shm_copier_t *copier)
{
    if (nbytes <= TC_SHM_INLINE_MAX) {
        tc_shm_bcast_ring(s, buf, nbytes, root, copier);
        return;
    }
    if (nbytes <= TC_SHM_BCAST_INLINE_MAX) {
        tc_shm_bcast_inline_lines(s, buf, nbytes, root, copier);
        return;
    }
    /* Paper 000, section 5: the best fragment grows as sqrt(m t_w / t), so a
     * message smaller than the slot size is cut finer (it pipelines instead
     * of being copied in and out whole); fragments are packed back to back
     * in the bank. Every process computes the same geometry from nbytes. */
    const int q = s->layout.q;
    const size_t bank_span = (size_t)(s->layout.S / q) * s->layout.f; /* bank b's bytes */
    size_t bank_bytes = bank_span, f;
    tc_shm_params_geometry(nbytes, s->tw_over_t, s->layout.f, (size_t)s->layout.S * s->layout.f, q,
                           s->stream_bytes, &bank_bytes, &f);
    const uint64_t per_bank = (uint64_t)(bank_bytes / f);
    const int *children = tc_shm_tree_children(&s->tree, root);
    const int nchildren = tc_shm_tree_nchildren(&s->tree, root);
    const int parent = tc_shm_tree_parent(&s->tree, root);
    char *queue = tc_shm_queue(s, root);
    char *data = buf;
    size_t off = 0;
    /* The root's copy of a contiguous message larger than the queue, which
     * streams through the window: memcpy or streaming stores, by its own
     * timing (copy.h). It runs at most a window ahead of the slowest reader,
     * so from the moment they free the first bank of this message (a late
     * arrival is over) its time is theirs. A message that fits in the queue
     * is copied in without waiting for its readers, so the root's time says
     * nothing about theirs: memcpy, unless streaming is forced. */
    const bool streaming = bank_bytes < bank_span;
    const uint64_t first_reuse = s->uses + (uint64_t)q;
    int setting = s->rank == root && !copier ? s->bcast_copy : TC_SHM_COPY_MEMCPY;
    if (setting == TC_SHM_COPY_AUTO && !streaming)
        setting = TC_SHM_COPY_MEMCPY;
    tc_shm_copy_choice_t how;
    tc_shm_copy_begin(&how, setting, TC_SHM_COPY_USE_BCAST, nbytes);

    while (off < nbytes) {
        const uint64_t u = s->uses;
        const int bank = (int)(u % (uint64_t)q);
        const uint64_t base = s->bank_frags[bank];
        const uint64_t left = (nbytes - off + f - 1) / f;
        const uint64_t nfrag = left < per_bank ? left : per_bank;
        char *slots = queue + (size_t)bank * bank_span;

        if (s->rank == root) {
            tc_shm_bank_wait_free(s, u, "shm bcast: wait for a bank to be released");
            if (u == first_reuse)
                tc_shm_copy_restart(&how, nbytes - off);
            for (uint64_t k = 0; k < nfrag; k++) {
                size_t len = tc_min_size(f, nbytes - off);
                tc_shm_copy_in(copier, &how, data, off, slots + k * f, len); /* C_k */
                tc_shm_bcast_notify(s, children, nchildren, bank, base + k + 1);
                off += len;
            }
        } else {
            uint64_t k = 0;
            while (k < nfrag) {
                uint64_t avail = tc_shm_bcast_wait_ready(s, bank, base + k + 1, parent) - base;
                if (avail > nfrag)
                    avail = nfrag; /* cannot happen: the next use of the bank waits for us */
                /* Forward before copying out, so the subtree starts early. */
                tc_shm_bcast_notify(s, children, nchildren, bank, base + avail);
                size_t len = tc_min_size((size_t)(avail - k) * f, nbytes - off);
                tc_shm_copy_out(copier, data, off, slots + k * f, len);
                off += len;
                k = avail;
            }
        }
        s->bank_frags[bank] = base + nfrag;
        /* release (A): pairs with the bank wait (WS) of the root of bank
         * use u + q; our reads of its buffers are done. */
        tc_shm_bank_done(s, u);
    }
    tc_shm_copy_end(&how);
}
