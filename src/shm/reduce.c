/* Shared-memory Reduce and Allreduce inside a node (issue 3; the queues of
 * paper 000 used the other way round, as paper 001 asks for the intra-node
 * reduction).
 *
 * Every process places its contribution, fragment by fragment, in its own
 * contribution slots (a ring of reduce_slots slots in its own region, so the
 * pages are on its NUMA node); the combining processes read the peers' slots
 * directly. Fragments are numbered globally over all reductions on the
 * segment (K = 0, 1, ...; slot K % reduce_slots), identically on every
 * process, since all see every reduction with the same byte count.
 *
 *   publish K:   wait until rdone[i] >= K - slots + 1 for every i       (WF)
 *                copy the fragment into contrib[K % slots]; rseq = K + 1  (P)
 *   combine K:   wait rseq[i] >= K + 1 (W), read contrib[i][K % slots]
 *   finish K:    rdone = K + 1                                           (D)
 *
 * Three ways to combine a fragment, chosen per message (same on every
 * process, from p, the message's fragment size f and the agreed settings):
 *  - slice (p > 2 and f >= TC_SHM_REDUCE_SLICE_MIN): process i folds slice i
 *    of the fragment from all p slots into its own result slot and announces
 *    it (rres = K + 1); receivers then copy the p slices out. The reduction
 *    work is spread over all processes.
 *  - tree (p > 2, otherwise, and min(f, m) <= TC_SHM_REDUCE_TREE_MAX > 0):
 *    partial results go up a tree rooted at rank 0 (below); receivers copy
 *    rank 0's final partial. O(p) lines move instead of O(p) per receiver,
 *    and the folds of different subtrees run at the same time.
 *  - direct (otherwise): the receiving processes (the root of a Reduce;
 *    everyone in an Allreduce) fold all p contributions themselves. Least
 *    latency on few processes, and the only choice on two (a fold of two
 *    operands is one pass).
 * Direct and slice fold in rank order, right to left: acc = d[p-2] op
 * d[p-1], then acc = d[i] op acc for i = p-3 .. 0 (MPI_Reduce_local order:
 * the lower rank is the left operand). So non-commutative ops give the
 * rank-ordered result, and every receiver of an Allreduce evaluates the same
 * expression on the same bits: results are bitwise identical everywhere.
 *
 * The tree (TC_SHM_REDUCE_TREE_ARITY = k): process i heads a contiguous
 * range of ranks [i, i + n) (rank 0: [0, p)); the other n - 1 ranks are cut
 * into min(k, n - 1) contiguous chunks of near-equal size (chunk t starts at
 * i + 1 + (n - 1) t / c), and the first rank of each chunk is a child heading
 * that chunk. Depth about log_k p, at most k children each. A node's partial
 * is the right fold, in rank order, of its own operand and its children's
 * partials: x[0] = d[i], x[1..c] = the children's partials (lowest rank
 * first), acc = x[c-1] op x[c], then acc = x[j] op acc down to j = 0. Each
 * subtree covers a contiguous range and lower ranks stay left operands, so
 * non-commutative ops give the rank-ordered result; the expression is fixed
 * by (p, k), and every receiver copies the same bits from rank 0.
 * Protocol per fragment K, the same sequence numbers as above:
 *   leaf:        publishes its own data (P, with lookahead like any publisher)
 *   inner node:  W on each child's rseq; WF; folds its own data and the
 *                children's partials into its own contrib[K % slots]; rseq =
 *                K + 1 (the slot now holds the subtree's partial, not i's data)
 *   rank 0:      the same; it skips the publication when the result is its
 *                alone (Reduce to rank 0: it folds straight into the receive
 *                buffer, unless MPI_IN_PLACE, when that is its own operand)
 *   receivers:   W on rseq[0] and copy contrib[0][K % slots]; D as above.
 *                A receiver copies K out only after its up-sweep of K + lag
 *                (lag <= TC_RED_TREE_LAG): an inner node that waited for the
 *                result before folding the next fragment would stall the
 *                pipeline for a whole round trip of the tree per fragment.
 * So each contrib slot still has one writer, and the readers of slot K (the
 * parent; for rank 0 the receivers) all finish K before the slot's WF for
 * K + slots lets it be rewritten. Deadlock freedom is the argument of the
 * lookahead bound below: publishing fragment K waits for fragments <= K - 1
 * only, and an inner node's fragment K needs only its children's fragment K.
 *
 * Messages of at most TC_SHM_INLINE_MAX bytes travel inside a cache line next
 * to their sequence number (a ring of TC_SHM_REDUCE_INLINE_SLOTS lines per
 * process, recycled under rdone_inline like the slots under rdone, which a
 * Reduce to a root publishes only at every eighth inline fragment: see
 * tc_red_finish_inline()): a receiver moves one line per peer (direct), or,
 * on the tree, each process moves one line per child and receivers one line
 * from rank 0. A Reduce to a root of at most TC_SHM_PACKED_MAX bytes on the
 * direct scheme (one int, float, double) uses the packed ring instead
 * (layout.h): four calls' entries share a 64-byte line, so a root
 * whose peers ran ahead moves one line per peer every four calls, not every
 * call (a point-to-point fast box packs two such messages to a line).
 *
 * What the root of a Reduce does not need, it skips: it never publishes its
 * own contribution in the direct scheme (it reads its send buffer), except
 * to stage it when MPI_IN_PLACE lets the fold overwrite it.
 *
 * How a publisher copies a large message into its slots is its own choice
 * (the readers see the same bytes either way), made per process and per
 * thread from what the previous calls cost (copy.h): a plain
 * memcpy leaves the fragment dirty in the publisher's cache, so the reader
 * pulls it cache to cache; non-temporal stores send it to memory and the
 * reader gets it from there. Which is faster depends on where the two cores
 * are: on the 2-vCPU KVM guest of issue 3 a whole run is either "fast"
 * (cache to cache: the raw two-process copy pipeline moves 1 MiB in ~70 us;
 * 1 MiB Allreduce: memcpy 105 us, streaming 185 us) or "slow" (the same
 * pipeline ~260 us, as the host placed the vCPUs; Allreduce memcpy 350 us,
 * streaming 180 us), and nothing inside the guest tells which in advance.
 */
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "copy.h"
#include "params.h"
#include "reduce_proto.h"
#include "segment.h"

/* Fragments a receiver on the tree folds ahead of the one it copies out, so
 * the up-sweep of the next fragments overlaps the wait for the result (at
 * most slots - 1 - lookahead; see tc_shm_reduce()). */
#define TC_RED_TREE_LAG 4

/* The arity is 2..64 (config); anything else is clamped so the child
 * array below cannot overflow. */
#define TC_RED_TREE_MAX_ARITY 64

/* Process me's place in the reduction tree (header comment). */
typedef struct tc_red_tree {
    int nchild;
    int child[TC_RED_TREE_MAX_ARITY]; /* ascending: their ranges follow each other */
} tc_red_tree_t;

/* Chunk t of c of the m ranks after lo starts here. */
static inline int tc_red_tree_chunk(int lo, int m, int c, int t)
{
    return lo + 1 + (int)((long long)m * t / c);
}

/* Descends from [0, p) to the range me heads: O(depth * arity), a few dozen
 * integer operations, cheaper than keeping per-arity tables. */
static void tc_red_tree_node(int p, int arity, int me, tc_red_tree_t *t)
{
    const int k = arity < 2 ? 2 : arity > TC_RED_TREE_MAX_ARITY ? TC_RED_TREE_MAX_ARITY : arity;
    int lo = 0, n = p;
    while (lo != me) {
        const int m = n - 1, c = m < k ? m : k;
        int j = c - 1;
        while (tc_red_tree_chunk(lo, m, c, j) > me)
            j--;
        const int next = j + 1 < c ? tc_red_tree_chunk(lo, m, c, j + 1) : lo + n;
        lo = tc_red_tree_chunk(lo, m, c, j);
        n = next - lo;
    }
    const int m = n - 1, c = m < k ? m : k;
    t->nchild = c;
    for (int j = 0; j < c; j++)
        t->child[j] = tc_red_tree_chunk(lo, m, c, j);
}

/* Child i's partial of fragment k: in its contribution slot (@p which ==
 * TC_SHM_RLINE_SEQ) or in its inline line @p which. */
static const char *tc_red_tree_partial(const tc_shm_comm_t *s, int i, uint64_t k, int which)
{
    tc_atomic_u64_t *line = tc_red_line(s, i, which);
    /* acquire (in tc_red_wait): pairs with i's release of rseq in
     * tc_red_publish() / tc_red_tree_up(), or of its inline line in
     * tc_red_inline_tree(): the partial written before it is visible. */
    tc_red_wait(s, line, i, k + 1, "shm reduce tree: wait for a child's partial", i);
    return which == TC_SHM_RLINE_SEQ ? tc_red_contrib(s, i, k) : (const char *)(line + 1);
}

/* acc = own op P(c_1) op ... op P(c_m), folded right to left (lower ranks
 * left); the children's partials are waited for from the right, in the
 * order they are consumed. @p acc overlaps neither @p own nor a partial. */
static void tc_red_tree_fold(const tc_shm_comm_t *s, const tc_red_tree_t *t, uint64_t k, int which,
                             const char *own, char *acc, size_t n, const tc_redop_t *op)
{
    const int m = t->nchild;
    const char *right = tc_red_tree_partial(s, t->child[m - 1], k, which);
    const char *left = m >= 2 ? tc_red_tree_partial(s, t->child[m - 2], k, which) : own;
    tc_redop_apply3(op, left, right, acc, n);
    if (m < 2)
        return;
    for (int j = m - 3; j >= 0; j--)
        tc_redop_apply(op, tc_red_tree_partial(s, t->child[j], k, which), acc, n);
    tc_redop_apply(op, own, acc, n);
}

/* Messages of at most one line's payload, up the tree: each process writes
 * its subtree's partial into its inline line (one writer, as in the direct
 * scheme), so a process moves one line per child. */
static void tc_red_inline_tree(tc_shm_comm_t *s, const char *mine, char *recvbuf, size_t nelem,
                               const tc_redop_t *op, int root)
{
    const int p = s->p, me = s->rank;
    const size_t nbytes = nelem * op->elem;
    const uint64_t k = s->red_inline;
    const int which = TC_SHM_RLINE_INLINE0 + (int)(k % TC_SHM_REDUCE_INLINE_SLOTS);
    tc_red_tree_t t;
    tc_red_tree_node(p, s->reduce_tree_arity, me, &t);

    alignas(16) char acc[TC_SHM_INLINE_MAX];
    const char *part = mine;
    if (t.nchild > 0) {
        tc_red_tree_fold(s, &t, k, which, mine, acc, nelem, op);
        part = acc;
    }
    /* Rank 0's partial is the result: published unless it is its own. */
    if (me != 0 || root != 0) {
        tc_red_wait_free(s, k, TC_SHM_REDUCE_INLINE_SLOTS, TC_SHM_RLINE_DONE_INLINE,
                         s->seen_rdone + p);
        tc_atomic_u64_t *line = tc_red_line(s, me, which);
        memcpy(line + 1, part, nbytes);
        /* release: pairs with the acquire in the parent's
         * tc_red_tree_partial(), or (rank 0) in the receivers' wait below. */
        tc_shm_publish(s, line, me, k + 1);
    }
    if (root < 0 || me == root) {
        if (me == 0) {
            memcpy(recvbuf, part, nbytes);
        } else {
            tc_atomic_u64_t *line = tc_red_line(s, 0, which);
            /* acquire (in tc_red_wait): pairs with rank 0's release above. */
            tc_red_wait(s, line, 0, k + 1, "shm reduce tree: wait for the result", 0);
            memcpy(recvbuf, line + 1, nbytes);
        }
    }
    s->red_inline = k + 1;
    tc_red_finish_inline(s, k, root >= 0);
}

/* Up-sweep of fragment k (@p n elements) on the tree, after a leaf's own
 * data went out through tc_red_publish(): an inner node folds @p own and its
 * children's partials into its slot and publishes it, or, with @p direct_out
 * (rank 0 of a Reduce to itself, not in place: nobody else needs the
 * result), straight into the receive buffer, publishing nothing. */
static void tc_red_tree_up(tc_shm_comm_t *s, const tc_red_tree_t *t, uint64_t k, const char *own,
                           char *direct_out, size_t n, const tc_redop_t *op)
{
    if (t->nchild == 0)
        return;
    if (direct_out) {
        tc_red_tree_fold(s, t, k, TC_SHM_RLINE_SEQ, own, direct_out, n, op);
        return;
    }
    tc_red_tree_fold(s, t, k, TC_SHM_RLINE_SEQ, own, tc_red_claim(s, k), n, op);
    /* release: pairs with the acquire in the parent's tc_red_tree_partial(),
     * or (rank 0) in the receivers' wait in tc_red_tree_down(). */
    tc_shm_publish(s, tc_red_line(s, s->rank, TC_SHM_RLINE_SEQ), s->rank, k + 1);
}

/* A receiver's copy of fragment k's result (@p len bytes) from rank 0's
 * slot, then D: this is the last read of fragment k. */
static void tc_red_tree_down(tc_shm_comm_t *s, uint64_t k, char *out, size_t len)
{
    if (s->rank != 0)
        /* acquire (in tc_red_wait): pairs with rank 0's release of rseq in
         * tc_red_tree_up(): its slot holds the fragment's result. */
        tc_red_wait(s, tc_red_line(s, 0, TC_SHM_RLINE_SEQ), 0, k + 1,
                    "shm reduce tree: wait for the result", 0);
    memcpy(out, tc_red_contrib(s, 0, k), len);
    tc_red_finish(s, TC_SHM_RLINE_DONE, k);
}

/* Peeks (relaxed loads; the blocking waits that follow acquire as before)
 * that let a process do work it has instead of waiting: has every peer
 * published fragment k (@p which TC_SHM_RLINE_SEQ) or its slice of it
 * (TC_SHM_RLINE_RES)? */
static bool tc_red_peers_reached(const tc_shm_comm_t *s, int which, uint64_t k)
{
    for (int i = 0; i < s->p; i++)
        if (i != s->rank && tc_load_relaxed_u64(tc_red_line(s, i, which)) < k + 1)
            return false;
    return true;
}

/* WF for fragment k without waiting: true when every peer has finished
 * fragment k - depth (then tc_red_publish() will not wait). */
static bool tc_red_free_now(tc_shm_comm_t *s, uint64_t k)
{
    const uint64_t n = s->rdepth_call;
    if (k < n)
        return true;
    const uint64_t need = k - n + 1;
    for (int i = 0; i < s->p; i++) {
        if (i == s->rank || s->seen_rdone[i] >= need)
            continue;
        /* acquire: pairs with the release of rdone in tc_red_finish(), as
         * the wait in tc_red_wait_free() does. */
        uint64_t v = tc_load_acquire_u64(tc_red_line(s, i, TC_SHM_RLINE_DONE));
        if (v < need)
            return false;
        s->seen_rdone[i] = v;
    }
    return true;
}

/* A slice receiver's copy-out of fragment k (@p n elements of @p e bytes
 * at @p out): every process's slice from its result slot, then D. */
static void tc_red_slices_out(tc_shm_comm_t *s, uint64_t k, char *out, size_t n, size_t e)
{
    const int p = s->p, me = s->rank;
    for (int i = 0; i < p; i++) {
        const size_t ilo = n * (size_t)i / (size_t)p;
        const size_t ihi = n * (size_t)(i + 1) / (size_t)p;
        if (ihi == ilo)
            continue;
        if (i != me)
            /* acquire (in tc_red_wait): pairs with i's release of rres in
             * tc_shm_reduce(): its slice is complete. */
            tc_red_wait(s, tc_red_line(s, i, TC_SHM_RLINE_RES), i, k + 1,
                        "shm reduce: wait for a peer's slice", i);
        memcpy(out + ilo * e, tc_red_result(s, i, k) + ilo * e, (ihi - ilo) * e);
    }
    tc_red_finish(s, TC_SHM_RLINE_DONE, k);
}

/* Where process i's operand of small call k lies: after the sequence
 * number of its inline line (ring of TC_SHM_REDUCE_INLINE_SLOTS lines) or of
 * its packed entry. */
static tc_atomic_u64_t *tc_red_small_at(const tc_shm_comm_t *s, int i, uint64_t k, bool packed)
{
    return packed ? tc_red_pentry(s, i, k)
                  : tc_red_line(s, i, TC_SHM_RLINE_INLINE0 + (int)(k % TC_SHM_REDUCE_INLINE_SLOTS));
}

/* Messages of at most one line's payload, direct: every process but a
 * Reduce's root publishes its operand, the receivers fold them in rank
 * order. @p packed (a Reduce to a root of at most TC_SHM_PACKED_MAX bytes):
 * in the packed ring, its own sequence of calls, instead of the inline
 * lines. */
static void tc_red_inline(tc_shm_comm_t *s, const char *mine, char *recvbuf, size_t nelem,
                          const tc_redop_t *op, int root, bool packed)
{
    const int p = s->p, me = s->rank;
    const size_t nbytes = nelem * op->elem;
    const uint64_t k = packed ? s->red_packed : s->red_inline;
    const bool receives = root < 0 || me == root;

    if (!(root >= 0 && me == root)) {
        if (packed)
            tc_red_wait_free_at(s, k, TC_SHM_PACKED_RING, s->layout.pring_off,
                                s->seen_rdone + 2 * p);
        else
            tc_red_wait_free(s, k, TC_SHM_REDUCE_INLINE_SLOTS, TC_SHM_RLINE_DONE_INLINE,
                             s->seen_rdone + p);
        tc_atomic_u64_t *line = tc_red_small_at(s, me, k, packed);
        memcpy(line + 1, mine, nbytes);
        /* release: pairs with the acquire in the receivers' wait below;
         * publishes the payload written just above. */
        tc_shm_publish(s, line, me, k + 1);
    }
    if (receives) {
        alignas(16) char acc[TC_SHM_INLINE_MAX];
        const char *d[2];
        for (int j = 0; j < 2; j++) {
            int i = p - 2 + j;
            if (i == me) {
                d[j] = mine;
            } else {
                tc_atomic_u64_t *line = tc_red_small_at(s, i, k, packed);
                /* acquire (in tc_red_wait): pairs with i's release above. */
                tc_red_wait(s, line, i, k + 1, "shm reduce: wait for a peer's contribution", i);
                d[j] = (const char *)(line + 1);
            }
        }
        tc_redop_apply3(op, d[0], d[1], acc, nelem);
        for (int i = p - 3; i >= 0; i--) {
            const char *src = mine;
            if (i != me) {
                tc_atomic_u64_t *line = tc_red_small_at(s, i, k, packed);
                tc_red_wait(s, line, i, k + 1, "shm reduce: wait for a peer's contribution", i);
                src = (const char *)(line + 1);
            }
            tc_redop_apply(op, src, acc, nelem);
        }
        memcpy(recvbuf, acc, nbytes);
    }
    if (packed) {
        s->red_packed = k + 1;
        tc_red_finish_packed(s, k);
    } else {
        s->red_inline = k + 1;
        tc_red_finish_inline(s, k, root >= 0);
    }
}

bool tc_shm_reduce_wide_same(const tc_shm_comm_t *s, size_t nbytes, size_t elem)
{
    if (s->p <= 2 || s->reduce_tree_max == 0 || elem == 0 || nbytes <= TC_SHM_INLINE_MAX)
        return true; /* no tree, or the inline paths: no fragments */
    size_t f = tc_shm_params_fragment_for(nbytes, s->tw_over_t, s->rfrag_default) / elem * elem;
    if (f == 0)
        f = elem;
    /* tc_shm_reduce()'s choice of the tree for its default fragments. */
    return f >= s->reduce_slice_min || tc_red_min(f, nbytes) > s->reduce_tree_max;
}

tc_err_t tc_shm_reduce(tc_shm_comm_t *s, const void *sendbuf, void *recvbuf, size_t nelem,
                       const tc_redop_t *op, int root)
{
    const size_t e = op->elem, nbytes = nelem * e;
    const int p = s->p, me = s->rank;
    const bool receives = root < 0 || me == root;
    if (s->layout.rslots == 0 || e == 0 || e > s->rfrag_default)
        return tc_err(TC_ERR_NOTSUP);
    if (nelem == 0)
        return TC_OK;
    const char *mine = sendbuf ? sendbuf : recvbuf;
    if (p == 1) {
        if (sendbuf && receives)
            memcpy(recvbuf, sendbuf, nbytes);
        return TC_OK;
    }
    const bool tree_ok = p > 2 && s->reduce_tree_max > 0;
    if (nbytes <= TC_SHM_INLINE_MAX) {
        if (tree_ok && nbytes <= s->reduce_tree_max)
            tc_red_inline_tree(s, mine, recvbuf, nelem, op, root);
        else
            tc_red_inline(s, mine, recvbuf, nelem, op, root,
                          root >= 0 && nbytes <= TC_SHM_PACKED_MAX);
        return TC_OK;
    }

    /* Paper 000's fragment rule, per message: sqrt(m t_w / t), in whole
     * elements, at most a slot. With writer-chosen slots (reduce_slots.c)
     * the run-ahead bounds below are those of the ring's rdepth slots where
     * they block, of this call's depth where they do not and for a
     * non-receiver, and the slices take this call's depth throughout (see
     * there). On the fixed ring all three are the ring. */
    tc_red_call_begin(s, true);
    const uint64_t slots = (uint64_t)s->layout.rdepth, depth = s->rdepth_call;
    size_t f = tc_shm_params_fragment_for(nbytes, s->tw_over_t, s->rfrag_call) / e * e;
    if (f == 0)
        f = e;
    const uint64_t nfrag = (nbytes + f - 1) / f;
    const bool slice = p > 2 && f >= s->reduce_slice_min;
    const bool tree = !slice && tree_ok && tc_red_min(f, nbytes) <= s->reduce_tree_max;
    tc_red_tree_t t;
    t.nchild = 0;
    if (tree)
        tc_red_tree_node(p, s->reduce_tree_arity, me, &t);
    /* The root of a direct Reduce reads its own send buffer, unless
     * MPI_IN_PLACE: then the fold would overwrite it, so it stages it. On the
     * tree only leaves publish their data ahead; inner nodes publish partials
     * as they fold them, reading their own operand where it is (the fold
     * writes to their slot, or, for rank 0 of a Reduce to itself without
     * MPI_IN_PLACE, straight to the receive buffer: own_result). */
    const bool publishes = tree ? t.nchild == 0 : !(root == me && !slice && sendbuf);
    const bool stage_own = !tree && publishes && !sendbuf;
    const bool own_result = tree && me == 0 && root == 0 && sendbuf;
    /* Publishing fragment j + ahead waits for everyone to finish fragment
     * j + ahead - slots; ahead <= slots - 1 keeps that at or below j - 1,
     * which never waits on us (deadlock-free). On the tree, an inner node's
     * fragment j (its WF included) needs only fragments <= j - 1 finished
     * and its children's fragment j, which by induction up from the leaves
     * they publish once everyone has finished j - 1. */
    uint64_t ahead = receives || slice ? TC_RED_LOOKAHEAD : depth - 1;
    if ((receives || slice) && ahead > slots - 1)
        ahead = slots - 1;
    /* A tree receiver copies fragment j - lag out after its up-sweep of
     * fragment j, and finishes j - lag only then (it read its children's
     * slots up to j: reading past one's rdone is safe, writers wait for it).
     * Finishing K then waits for up-sweeps of fragments <= K + lag, whose WF
     * need fragments <= K + lag - slots finished, and a leaf's publications
     * up to K + lag + ahead, which need fragments <= K + lag + ahead - slots:
     * lag + ahead <= slots - 1 keeps all of them at or below K - 1. */
    const bool tree_copies = tree && receives && !own_result;
    uint64_t lag = 0;
    if (tree_copies) {
        lag = slots - 1 - ahead;
        if (lag > TC_RED_TREE_LAG)
            lag = TC_RED_TREE_LAG;
    }
    /* Run-ahead (issue 13): a process whose next fold would wait for a peer
     * publishes more of its own fragments first, up to ahead_max, and a
     * slice receiver copies a fragment out as soon as every slice of it is
     * there, at the latest out_lag fragments after folding its own slice.
     * Only the blocking waits matter for deadlock freedom, and they are
     * those of the fixed bounds ahead and out_lag (the argument of the tree's
     * lag above, with ahead <= ahead_max and ahead_max + out_lag <= slots -
     * 1); the extra publications and copies wait for nothing. Beside CPU-bound
     * processes, a peer off its core then stalls the others after they ran
     * ahead through their part of the ring instead of after two fragments
     * (every stall a hand-over, often a scheduler time slice); uncontended,
     * the peers' fragments are there in time and nothing changes. The order
     * of the folds, so the result's bits, is the same either way. */
    uint64_t ahead_max = ahead, out_lag = 0;
    if (!tree && publishes && (receives || slice) && ahead < slots - 1) {
        if (slice && receives)
            out_lag = (slots - 1 - ahead) / 2;
        ahead_max = depth - 1 - out_lag;
    }
    /* The slices: every process publishes every fragment and folds its
     * slice of each, so none runs ahead of the others by more than its
     * ahead_max, whatever its WF. There every WF waits for the whole ring
     * (fragment k - rslots), so the argument above holds for a blocking
     * copy-out lag as deep as each process's own depth for this call,
     * whatever the others' depths: beside busy processes a receiver then
     * waits for a descheduled peer's slice only after its share of the whole
     * ring, not of rdepth slots. */
    if (slice) {
        s->rwf_call = (uint64_t)s->layout.rslots; /* whatever this process's depth */
        if (receives)
            out_lag = (depth - 1 - ahead) / 2;
        ahead_max = depth - 1 - out_lag;
    }
    const uint64_t base = s->red_frags;
    uint64_t published = 0, copied = 0;
    /* Only a publisher's copy is chosen, so only publishers measure (and
     * only when the choice is theirs: TC_SHM_REDUCE_COPY=auto). */
    tc_shm_copy_choice_t copy;
    tc_shm_copy_begin(&copy, publishes ? s->reduce_copy : TC_SHM_COPY_MEMCPY,
                      TC_SHM_COPY_USE_REDUCE, nbytes);

    for (uint64_t j = 0; j < nfrag; j++) {
        const uint64_t k = base + j;
        const size_t off = (size_t)j * f, len = tc_red_min(f, nbytes - off), n = len / e;
        while (publishes && published < nfrag && published <= j + ahead) {
            size_t poff = (size_t)published * f;
            tc_red_publish(s, base + published, mine + poff, tc_red_min(f, nbytes - poff), &copy);
            published++;
        }
        while (publishes && published < nfrag && published <= j + ahead_max &&
               !tc_red_peers_reached(s, TC_SHM_RLINE_SEQ, k) &&
               tc_red_free_now(s, base + published)) {
            size_t poff = (size_t)published * f;
            tc_red_publish(s, base + published, mine + poff, tc_red_min(f, nbytes - poff), &copy);
            published++;
        }
        /* Our own operand: the send buffer, or the staged copy. */
        const char *own = stage_own ? tc_red_contrib(s, me, k) : mine + off;
        char *out = receives ? (char *)recvbuf + off : NULL;
        if (tree) {
            tc_red_tree_up(s, &t, k, own, own_result ? out : NULL, n, op);
            if (tree_copies) {
                if (j >= lag) {
                    const size_t doff = (size_t)(j - lag) * f;
                    tc_red_tree_down(s, k - lag, (char *)recvbuf + doff,
                                     tc_red_min(f, nbytes - doff));
                }
                continue; /* D is in tc_red_tree_down() */
            }
        } else if (!slice) {
            if (receives)
                tc_red_fold(s, k, own, 0, out, n, op);
        } else {
            const size_t lo = n * (size_t)me / (size_t)p, hi = n * (size_t)(me + 1) / (size_t)p;
            char *res = tc_red_result(s, me, k);
            if (hi > lo)
                tc_red_fold(s, k, own, lo * e, res + lo * e, hi - lo, op);
            /* release: pairs with the acquire of the receivers below. */
            tc_shm_publish(s, tc_red_line(s, me, TC_SHM_RLINE_RES), me, k + 1);
            if (receives) {
                /* Fragments up to j - out_lag now; later ones whose slices
                 * are all there already. */
                while (copied <= j && (copied + out_lag <= j ||
                                       tc_red_peers_reached(s, TC_SHM_RLINE_RES, base + copied))) {
                    const size_t doff = (size_t)copied * f, dlen = tc_red_min(f, nbytes - doff);
                    tc_red_slices_out(s, base + copied, (char *)recvbuf + doff, dlen / e, e);
                    copied++;
                }
                continue; /* D is in tc_red_slices_out() */
            }
        }
        tc_red_finish(s, TC_SHM_RLINE_DONE, k);
    }
    for (; slice && receives && copied < nfrag; copied++) {
        const size_t doff = (size_t)copied * f;
        tc_red_slices_out(s, base + copied, (char *)recvbuf + doff,
                          tc_red_min(f, nbytes - doff) / e, e);
    }
    for (uint64_t j = nfrag - (lag < nfrag ? lag : nfrag); tree_copies && j < nfrag; j++) {
        const size_t doff = (size_t)j * f;
        tc_red_tree_down(s, base + j, (char *)recvbuf + doff, tc_red_min(f, nbytes - doff));
    }
    s->red_frags = base + nfrag;
    tc_shm_copy_end(&copy);
    return TC_OK;
}
