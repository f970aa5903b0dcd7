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
 * Blocks up to TC_SHM_INLINE_MAX bytes ride in the ready line itself, next
 * to the sequence number (as the Bcast's inline messages): one line per
 * block moves.
 *
 * Blocks larger than a bank take several bank uses (a chunk of up to one
 * bank per use); all processes make the same number of uses, the largest
 * block's.
 */
#include "allgather.h"

#include <string.h>

#include "params.h"

/* WS: every process has finished bank use u - q, so nobody still reads the
 * buffers or ready lines of bank u % q that we are about to write. */
static void tc_shm_ag_wait_bank_free(tc_shm_comm_t *s, uint64_t u)
{
    const int q = s->layout.q;
    if (u < (uint64_t)q)
        return;
    const uint64_t need = u - (uint64_t)q + 1;
    for (int i = 0; i < s->p; i++) {
        if (i == s->rank || s->seen_done[i] >= need)
            continue;
        /* acquire: pairs with the publication of done (A) in
         * tc_shm_allgather() or tc_shm_bcast_pipelined() of process i. */
        s->seen_done[i] = tc_shm_wait_ge(s, tc_shm_done(s, i), i, need,
                                         "shm allgather: wait for a bank to be released", i);
    }
}

static inline size_t tc_shm_ag_bytes(const size_t *bytes, size_t uniform, int j)
{
    return bytes ? bytes[j] : uniform;
}

/* A: this process is done with bank use u. */
static inline void tc_shm_ag_done(tc_shm_comm_t *s, uint64_t u)
{
    s->uses = u + 1;
    /* release (seq_cst): pairs with the acquire in the bank waits (WS) of
     * every later writer of this bank; our reads of it are over. */
    tc_shm_publish(s, tc_shm_done(s, s->rank), s->rank, u + 1);
}

/* Every block fits in a ready line. */
static void tc_shm_ag_inline(tc_shm_comm_t *s, const size_t *bytes, size_t uniform,
                             const tc_shm_ag_io_t *io)
{
    const uint64_t u = s->uses;
    const int bank = (int)(u % (uint64_t)s->layout.q);
    const uint64_t seq = s->bank_frags[bank] + 1;
    const int p = s->p, me = s->rank;
    tc_shm_ag_wait_bank_free(s, u);
    const size_t mine = tc_shm_ag_bytes(bytes, uniform, me);
    if (mine > 0) {
        tc_atomic_u64_t *line = tc_shm_ready(s, me, bank);
        io->put(io->state, 0, (char *)(line + 1), mine);
        /* release (seq_cst): pairs with the acquire below in the other
         * processes; publishes the payload written just above. */
        tc_shm_publish(s, line, me, seq);
    }
    for (int d = 1; d < p; d++) {
        const int j = (me + d) % p;
        const size_t n = tc_shm_ag_bytes(bytes, uniform, j);
        if (n == 0)
            continue;
        tc_atomic_u64_t *line = tc_shm_ready(s, j, bank);
        /* acquire: pairs with the publication above in process j. */
        tc_shm_wait_ge(s, line, j, seq, "shm allgather: wait for a block", j);
        io->get(io->state, j, 0, (const char *)(line + 1), n);
    }
    s->bank_frags[bank] = seq;
    tc_shm_ag_done(s, u);
}

void tc_shm_allgather(tc_shm_comm_t *s, const size_t *bytes, size_t uniform,
                      const tc_shm_ag_io_t *io)
{
    const int p = s->p, me = s->rank;
    size_t mmax = uniform;
    if (bytes) {
        mmax = 0;
        for (int j = 0; j < p; j++)
            if (bytes[j] > mmax)
                mmax = bytes[j];
    }
    if (mmax == 0)
        return; /* the same on every process: nothing moves, no bank use */
    if (mmax <= TC_SHM_INLINE_MAX) {
        tc_shm_ag_inline(s, bytes, uniform, io);
        return;
    }
    /* Fragments as the Bcast cuts a message of the largest block's size
     * (paper 000, section 5: f grows as sqrt(m t_w / t)), so a reader starts
     * on a block before its writer has copied all of it in. */
    const int q = s->layout.q;
    const size_t bank_span = (size_t)(s->layout.S / q) * s->layout.f;
    size_t f = tc_shm_params_fragment_for(mmax, s->tw_over_t, s->layout.f);
    if (f > bank_span)
        f = bank_span;
    const uint64_t per_bank = (uint64_t)(bank_span / f);
    const size_t chunk = (size_t)per_bank * f; /* bytes of a block per bank use */
    const size_t mine = tc_shm_ag_bytes(bytes, uniform, me);

    for (size_t done = 0; done < mmax; done += chunk) {
        const uint64_t u = s->uses;
        const int bank = (int)(u % (uint64_t)q);
        const uint64_t base = s->bank_frags[bank];
        tc_shm_ag_wait_bank_free(s, u);

        /* N: our chunk of this use into our bank, announced per fragment. */
        if (mine > done) {
            char *slots = tc_shm_queue(s, me) + (size_t)bank * bank_span;
            const size_t len = mine - done < chunk ? mine - done : chunk;
            tc_atomic_u64_t *ready = tc_shm_ready(s, me, bank);
            uint64_t k = 0;
            for (size_t off = 0; off < len; off += f, k++) {
                const size_t n = len - off < f ? len - off : f;
                io->put(io->state, done + off, slots + off, n);
                /* release (seq_cst): pairs with the acquire in W of every
                 * other process; publishes the fragment copied above. */
                tc_shm_publish(s, ready, me, base + k + 1);
            }
        }
        /* W: the others' chunks, starting after us so that the processes
         * do not all read the same queue at once. */
        for (int d = 1; d < p; d++) {
            const int j = (me + d) % p;
            const size_t m = tc_shm_ag_bytes(bytes, uniform, j);
            if (m <= done)
                continue;
            const size_t len = m - done < chunk ? m - done : chunk;
            const uint64_t nfrag = (uint64_t)((len + f - 1) / f);
            const char *slots = tc_shm_queue(s, j) + (size_t)bank * bank_span;
            tc_atomic_u64_t *ready = tc_shm_ready(s, j, bank);
            uint64_t k = 0;
            while (k < nfrag) {
                /* acquire: pairs with the publication in N of process j. */
                uint64_t avail = tc_shm_wait_ge(s, ready, j, base + k + 1,
                                                "shm allgather: wait for a fragment", j) -
                                 base;
                if (avail > nfrag)
                    avail = nfrag; /* cannot happen: j's next use of the bank waits for us */
                const size_t off = (size_t)k * f;
                const size_t end = (size_t)avail * f < len ? (size_t)avail * f : len;
                io->get(io->state, j, done + off, slots + off, end - off);
                k = avail;
            }
        }
        s->bank_frags[bank] =
            base + (uint64_t)(((mmax - done < chunk ? mmax - done : chunk) + f - 1) / f);
        tc_shm_ag_done(s, u);
    }
}
