/* Shared-memory barriers (paper 003) on the barrier lines of the segment's
 * control blocks (shm/layout.h says who writes each line).
 *
 * Epochs instead of sense reversal (STYLE.md: sequence numbers, no resets):
 * barrier number e = bar_epoch + 1 is the same on every process (barriers of
 * a segment are called in the same order everywhere), every flag is set to
 * e, and every wait is "flag >= e". Nothing is ever reset, so a fast process
 * that signals barrier e + 1 before a slow one has read its flag of barrier e
 * does no harm (the slow one sees e + 1 >= e), and no parity/sense copy of
 * each flag is needed. The central counter is the epoch form too: the
 * counter only grows (p arrivals per central barrier, so central barrier c is
 * complete when it reaches p * c) and the release flag holds the epoch.
 * Compared with the sense-reversing counter this drops the last arriver's
 * reset of the hot counter (a second write to the most contended line, and
 * the classic race if the reset is not ordered before the release) and the
 * per-process local sense.
 *
 * Memory ordering: every signal is a seq_cst store (or, for the counter, a
 * seq_cst fetch_add) through tc_shm_publish(), which is a release and wakes
 * sleepers (base/wait.h), and every wait an acquire load, so whatever a process
 * wrote before the barrier happens-before whatever any process does after
 * it: the arrival chain carries the writes up to the process that sees the
 * last arrival, the release chain carries them down to everyone.
 *
 * Every line has a single writer whatever the algorithm (the central
 * counter and its release flag excepted, see layout.h), so consecutive
 * barriers may use different algorithms (and tree arities) on one segment.
 */
#include "shm_barrier.h"

/* Wait until *flag (a line of region @p i) >= e. acquire: pairs with the
 * publication (tc_shm_publish / tc_shm_fetch_add_publish, both seq_cst) that
 * each caller names. */
static void tc_shm_barrier_wait(const tc_shm_comm_t *s, tc_atomic_u64_t *flag, int i, uint64_t e,
                                const char *stage, int peer)
{
    tc_shm_wait_ge(s, flag, i, e, stage, peer);
}

/* ---- Central counter ------------------------------------------------------
 * Every process increments the counter in process 0's block: p writers on one
 * line, which is what the algorithm costs (P - 2 serialised f_r in the
 * model). Returns the count this process produced and sets *target. */
static uint64_t tc_shm_barrier_central_count(tc_shm_comm_t *s, uint64_t *target)
{
    s->bar_central++;
    *target = (uint64_t)s->p * s->bar_central;
    /* seq_cst (so acq_rel): the release half publishes our pre-barrier writes to whoever
     * reads a later value of the counter (every later fetch_add continues our
     * release sequence); the acquire half lets the last arriver see every
     * earlier arriver's writes before it releases. */
    return tc_shm_fetch_add_publish(s, tc_shm_bar_line(s, 0, TC_SHM_BLINE_COUNTER), 0, 1) + 1;
}

static void tc_shm_barrier_central(tc_shm_comm_t *s, uint64_t e)
{
    uint64_t target;
    tc_atomic_u64_t *rel = tc_shm_bar_line(s, 0, TC_SHM_BLINE_CRELEASE);
    if (tc_shm_barrier_central_count(s, &target) == target)
        /* release: pairs with the acquire of the waiters just below; the last
         * arriver of this barrier is the only writer until every process has
         * left it (the next writer read this value first). */
        tc_shm_publish(s, rel, 0, e);
    else
        tc_shm_barrier_wait(s, rel, 0, e, "barrier: central release", 0);
}

static void tc_shm_barrier_central_arrive(tc_shm_comm_t *s, uint64_t e)
{
    uint64_t target;
    (void)e;
    tc_shm_barrier_central_count(s, &target);
    /* acquire (in the wait): reads the final value of the counter's release
     * sequence, so it pairs with every process's fetch_add above. */
    if (s->rank == 0)
        tc_shm_barrier_wait(s, tc_shm_bar_line(s, 0, TC_SHM_BLINE_COUNTER), 0, target,
                            "barrier: central arrivals", 0);
}

static void tc_shm_barrier_central_release(tc_shm_comm_t *s, uint64_t e)
{
    tc_atomic_u64_t *rel = tc_shm_bar_line(s, 0, TC_SHM_BLINE_CRELEASE);
    if (s->rank == 0)
        tc_shm_publish(s, rel, 0, e); /* release: pairs with the waiters' acquire below */
    else
        tc_shm_barrier_wait(s, rel, 0, e, "barrier: central release", 0);
}

/* ---- Combining tree of arity n ---------------------------------------------
 * Heap numbering: the children of i are n*i + 1 .. n*i + n, its parent is
 * (i - 1) / n. Each process announces its whole subtree's arrival on its own
 * arrive line (one writer, one reader: the parent) instead of the paper's
 * per-node counter that n children increment; the release goes down the same
 * tree on each parent's own release line (read by its n children). */
static void tc_shm_barrier_tree_arrive(tc_shm_comm_t *s, int n, uint64_t e)
{
    const long long first = (long long)n * s->rank + 1;
    for (long long c = first; c < first + n && c < s->p; c++)
        /* acquire: pairs with child c's release store of its arrive line below */
        tc_shm_barrier_wait(s, tc_shm_bar_line(s, (int)c, TC_SHM_BLINE_ARRIVE), (int)c, e,
                            "barrier: tree arrive", (int)c);
    if (s->rank != 0)
        /* release: pairs with the parent's acquire above; it carries the
         * subtree's writes, acquired from the children */
        tc_shm_publish(s, tc_shm_bar_line(s, s->rank, TC_SHM_BLINE_ARRIVE), s->rank, e);
}

static void tc_shm_barrier_tree_release(tc_shm_comm_t *s, int n, uint64_t e)
{
    if (s->rank != 0) {
        const int parent = (s->rank - 1) / n;
        /* acquire: pairs with the parent's release store just below */
        tc_shm_barrier_wait(s, tc_shm_bar_line(s, parent, TC_SHM_BLINE_RELEASE), parent, e,
                            "barrier: tree release", parent);
    }
    if ((long long)n * s->rank + 1 < s->p)
        /* release: pairs with the children's acquire above */
        tc_shm_publish(s, tc_shm_bar_line(s, s->rank, TC_SHM_BLINE_RELEASE), s->rank, e);
}

/* ---- Tournament ------------------------------------------------------------
 * Round r pairs i (winner, i % 2^(r+1) == 0) with i + 2^r (loser); a winner
 * without an opponent (i + 2^r >= p) has a bye. The loser signals on the
 * winner's tround[r] line and drops out; the champion is 0. Wake-ups go down
 * the same pairs: each process that beat someone sets its own release line
 * once woken, and every loser it beat (i + 1, i + 2, i + 4, ...) waits on it. */
static void tc_shm_barrier_tournament_arrive(tc_shm_comm_t *s, uint64_t e)
{
    const int i = s->rank;
    for (int r = 0; r < s->layout.brounds; r++) {
        const int bit = 1 << r;
        if (i & bit) {
            /* release: pairs with the winner's acquire below; carries what we
             * gathered in the rounds we won */
            tc_shm_publish(s, tc_shm_bar_tround(s, i - bit, r), i - bit, e);
            return;
        }
        if (i + bit < s->p)
            /* acquire: pairs with the loser's release store above */
            tc_shm_barrier_wait(s, tc_shm_bar_tround(s, i, r), i, e, "barrier: tournament round",
                                i + bit);
    }
}

static void tc_shm_barrier_tournament_release(tc_shm_comm_t *s, uint64_t e)
{
    const int i = s->rank;
    if (i != 0) {
        const int winner = i - (i & -i); /* who beat us: clear our lowest set bit */
        /* acquire: pairs with the winner's release store just below */
        tc_shm_barrier_wait(s, tc_shm_bar_line(s, winner, TC_SHM_BLINE_RELEASE), winner, e,
                            "barrier: tournament wake-up", winner);
    }
    /* An even process with a successor won round 0 at least, so it has losers
     * waiting; an odd one lost round 0 and beat nobody. */
    if (i % 2 == 0 && i + 1 < s->p)
        /* release: pairs with the losers' acquire above */
        tc_shm_publish(s, tc_shm_bar_line(s, i, TC_SHM_BLINE_RELEASE), i, e);
}

/* ---- Dissemination (also serves pairwise) ----------------------------------
 * Round r: signal (i + 2^r) mod p on its round[r] line, wait for our own
 * round[r] line, set by (i - 2^r) mod p. After ceil(log2 p) rounds every
 * process has heard, transitively, from all: a symmetric barrier with no
 * release phase. */
static void tc_shm_barrier_dissemination(tc_shm_comm_t *s, uint64_t e)
{
    const int i = s->rank, p = s->p;
    for (int r = 0; r < s->layout.brounds; r++) {
        const int d = 1 << r; /* < p, since r < ceil(log2 p) */
        /* release: pairs with the acquire of process i + d below; carries
         * every arrival we learned of in rounds < r */
        tc_shm_publish(s, tc_shm_bar_round(s, (i + d) % p, r), (i + d) % p, e);
        /* acquire: pairs with the release store of process i - d above */
        tc_shm_barrier_wait(s, tc_shm_bar_round(s, i, r), i, e, "barrier: dissemination round",
                            (i - d + p) % p);
    }
}

/* Split form of the symmetric algorithms: the leader's own release line. */
static void tc_shm_barrier_leader_release(tc_shm_comm_t *s, uint64_t e)
{
    tc_atomic_u64_t *rel = tc_shm_bar_line(s, 0, TC_SHM_BLINE_RELEASE);
    if (s->rank == 0)
        tc_shm_publish(s, rel, 0, e); /* release: pairs with the waiters' acquire below */
    else
        tc_shm_barrier_wait(s, rel, 0, e, "barrier: leader release", 0);
}

/* The header promises arity >= 2; every process passes the same value, so a
 * clamp stays agreed. */
static int tc_shm_barrier_arity(int arity)
{
    return arity < 2 ? 2 : arity;
}

void tc_shm_barrier(tc_shm_comm_t *s, tc_barrier_alg_t alg, int arity)
{
    const uint64_t e = s->bar_epoch + 1;
    if (s->p > 1) {
        switch (alg) {
        case TC_BARRIER_CENTRAL:
            tc_shm_barrier_central(s, e);
            break;
        case TC_BARRIER_TREE:
            tc_shm_barrier_tree_arrive(s, tc_shm_barrier_arity(arity), e);
            tc_shm_barrier_tree_release(s, tc_shm_barrier_arity(arity), e);
            break;
        case TC_BARRIER_TOURNAMENT:
            tc_shm_barrier_tournament_arrive(s, e);
            tc_shm_barrier_tournament_release(s, e);
            break;
        default: /* dissemination, pairwise */
            tc_shm_barrier_dissemination(s, e);
            break;
        }
    }
    s->bar_epoch = e;
}

void tc_shm_barrier_arrive(tc_shm_comm_t *s, tc_barrier_alg_t alg, int arity)
{
    const uint64_t e = s->bar_epoch + 1;
    if (s->p == 1)
        return;
    switch (alg) {
    case TC_BARRIER_CENTRAL:
        tc_shm_barrier_central_arrive(s, e);
        break;
    case TC_BARRIER_TREE:
        tc_shm_barrier_tree_arrive(s, tc_shm_barrier_arity(arity), e);
        break;
    case TC_BARRIER_TOURNAMENT:
        tc_shm_barrier_tournament_arrive(s, e);
        break;
    default: /* the whole dissemination: the leader too has heard from all */
        tc_shm_barrier_dissemination(s, e);
        break;
    }
}

void tc_shm_barrier_release(tc_shm_comm_t *s, tc_barrier_alg_t alg, int arity)
{
    const uint64_t e = s->bar_epoch + 1;
    if (s->p > 1) {
        switch (alg) {
        case TC_BARRIER_CENTRAL:
            tc_shm_barrier_central_release(s, e);
            break;
        case TC_BARRIER_TREE:
            tc_shm_barrier_tree_release(s, tc_shm_barrier_arity(arity), e);
            break;
        case TC_BARRIER_TOURNAMENT:
            tc_shm_barrier_tournament_release(s, e);
            break;
        default:
            tc_shm_barrier_leader_release(s, e);
            break;
        }
    }
    s->bar_epoch = e;
}
