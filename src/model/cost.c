/* LogP / LogGP cost formulas (papers 000, 002, 003); derivations in
 * docs/model.md. Pure arithmetic: libc + libm only. */
#include "cost.h"

#include <math.h>

static double tc_model_dmax(double a, double b)
{
    return a > b ? a : b;
}

/* ceil(log_n P) by integer arithmetic: log(8)/log(2) is 2.9999... in
 * floating point, and a partial round costs a whole round. */
static int tc_model_ceil_log(int n, int P)
{
    int r = 0;
    for (long long span = 1; span < P; span *= n)
        r++;
    return r;
}

/* floor(log2 P) (P >= 1). */
static int tc_model_floor_log2(int P)
{
    int r = 0;
    while ((1LL << (r + 1)) <= P)
        r++;
    return r;
}

/* ---- Barriers (paper 003) ---------------------------------------------- */

static double tc_model_barrier_central(int P, const tc_logp_t *p, double f_r, double f_s)
{
    /* Paper 003: P-1 arrivals at the root (first o_s + L + o_r, then one
     * f_r each), P-1 releases (first o_s + L + o_r, then one f_s each). */
    return 2.0 * (p->o_s + p->L + p->o_r) + (P - 2) * f_r + (P - 2) * f_s;
}

static double tc_model_barrier_tree(int P, int n, const tc_logp_t *p, double f_r, double t_s)
{
    /* Paper 003: ceil(log_n P) arrival levels, each a message plus n-2
     * further receives at the parent; then a binomial release of
     * ceil(log2 P) rounds: o_s + (ceil(log2 P) - 1) t_s + L + o_r. */
    return (p->o_s + p->L + f_r * (n - 2) + p->o_r) * tc_model_ceil_log(n, P) + p->o_s +
           (tc_model_ceil_log(2, P) - 1) * t_s + p->L + p->o_r;
}

static double tc_model_barrier_dissemination(int P, double t_s)
{
    /* Paper 003: ceil(log2 P) rounds of one send and one receive;
     * max(t_r, t_s) = t_s since t_r = t_s. */
    return t_s * tc_model_ceil_log(2, P);
}

static double tc_model_barrier_tournament(int P, double t_s)
{
    /* Derived (docs/model.md): R = ceil(log2 P) rounds in which the loser
     * signals the winner (the champion receives one signal per round, each
     * after the chain below it: t_r per round), then the wake-ups go back
     * down the same pairs as a binomial release; the path through h woken
     * winners costs h (o_s+L+o_r) + (R-h) f_s <= R max(o_s+L+o_r, g) =
     * R t_s. Exact for P a power of two when o_s+L+o_r >= g; otherwise an
     * upper bound, in the same spirit as the paper's dissemination term. */
    int R = tc_model_ceil_log(2, P);
    double t_r = t_s;
    return R * t_r + R * t_s;
}

static double tc_model_barrier_pairwise(int P, const tc_logp_t *p, double t_s)
{
    /* Derived (docs/model.md), Brooks' butterfly: P2 = 2^floor(log2 P)
     * processes exchange with partner i ^ 2^r for log2 P2 rounds (send and
     * receive per round, as dissemination: t_s). For P != P2 the P - P2
     * extra processes first signal a partner among the P2 (step in, one
     * message) and are released by it at the end (step out, one message). */
    int P2 = 1 << tc_model_floor_log2(P);
    double extra = P == P2 ? 0.0 : 2.0 * (p->o_s + p->L + p->o_r);
    return t_s * tc_model_floor_log2(P) + extra;
}

double tc_model_barrier_cost(tc_model_barrier_t alg, int P, int arity, const tc_logp_t *p)
{
    if (P <= 1 || p == NULL)
        return 0.0;
    int n = arity < 2 ? 2 : arity;
    /* Paper 003's notation. */
    double f_r = tc_model_dmax(p->o_r, p->g);
    double f_s = tc_model_dmax(p->o_s, p->g);
    double t_s = tc_model_dmax(p->g, p->o_s + p->L + p->o_r);
    switch (alg) {
    case TC_MODEL_BARRIER_CENTRAL:
        return tc_model_barrier_central(P, p, f_r, f_s);
    case TC_MODEL_BARRIER_TREE:
        return tc_model_barrier_tree(P, n, p, f_r, t_s);
    case TC_MODEL_BARRIER_DISSEMINATION:
        return tc_model_barrier_dissemination(P, t_s);
    case TC_MODEL_BARRIER_TOURNAMENT:
        return tc_model_barrier_tournament(P, t_s);
    case TC_MODEL_BARRIER_PAIRWISE:
        return tc_model_barrier_pairwise(P, p, t_s);
    default:
        return HUGE_VAL;
    }
}

/* The cheapest allowed algorithm under @p cost (ties keep the lower enum
 * value); shared by the message and the shared-memory barrier argmins. */
static tc_model_barrier_t
tc_model_barrier_argmin_of(double (*cost)(tc_model_barrier_t, int, int, const tc_logp_t *),
                           unsigned allowed, int P, int arity, const tc_logp_t *p,
                           double costs[TC_MODEL_BARRIER_LAST])
{
    const unsigned all = (1u << TC_MODEL_BARRIER_LAST) - 1;
    if ((allowed & all) == 0)
        allowed = all;
    tc_model_barrier_t best = TC_MODEL_BARRIER_LAST;
    double best_cost = HUGE_VAL;
    for (int a = 0; a < TC_MODEL_BARRIER_LAST; a++) {
        double c = cost((tc_model_barrier_t)a, P, arity, p);
        if (costs != NULL)
            costs[a] = c;
        /* Strictly less: a tie keeps the lower enum value. */
        if ((allowed & (1u << a)) && (best == TC_MODEL_BARRIER_LAST || c < best_cost)) {
            best = (tc_model_barrier_t)a;
            best_cost = c;
        }
    }
    return best;
}

tc_model_barrier_t tc_model_barrier_argmin(unsigned allowed, int P, int arity, const tc_logp_t *p,
                                           double costs[TC_MODEL_BARRIER_LAST])
{
    return tc_model_barrier_argmin_of(tc_model_barrier_cost, allowed, P, arity, p, costs);
}

/* ---- Shared-memory barriers (flags in the segment) ---------------------- */

/* Depth of the heap tree of arity n over P nodes (children of i: n i + 1 ..
 * n i + n): the smallest d with 1 + n + ... + n^d >= P. */
static int tc_model_heap_depth(int n, int P)
{
    int d = 0;
    long long nodes = 1, width = 1;
    while (nodes < P) {
        width *= n;
        nodes += width;
        d++;
    }
    return d;
}

double tc_model_shm_barrier_cost(tc_model_barrier_t alg, int P, int arity, const tc_logp_t *shm)
{
    if (P <= 1 || shm == NULL)
        return 0.0;
    int n = arity < 2 ? 2 : arity;
    /* One hop: a flag stored by one process and seen by another's poll (L
     * includes the store). o_s (the library's per-call path) is paid once
     * per barrier: between two barriers of a loop
     * the process released last returns, calls again and only then signals,
     * while every other hop of the critical path is a bare store inside the
     * barrier. */
    double hop = shm->L + shm->o_r;
    /* A further line that is already set, read after the first: the paper's
     * f_r. g holds the fetch-add on a line another process wrote last (one
     * central-counter arrival), so this is also the counter's gap. */
    double f_r = tc_model_dmax(shm->o_r, shm->g);
    int R = tc_model_ceil_log(2, P);
    switch (alg) {
    case TC_MODEL_BARRIER_CENTRAL:
        /* Paper 003: 2 M + (P-2) f_r + (P-2) f_s. In shared memory the P
         * arrivals are fetch-adds on one line: the last arriver of the
         * previous barrier still holds it, each other arrival waits for it
         * (f_r apiece); the release is one flag that every waiter reads at
         * once (one hop, no f_s per waiter). */
        return shm->o_s + hop + (P - 1) * f_r;
    case TC_MODEL_BARRIER_TREE: {
        /* Each of the d levels of the heap tree (processes are inner nodes
         * too, so d, not the paper's ceil(log_n P) combining levels): the
         * parent sees its first child's arrive line (a hop), reads the k-1
         * others, already set (f_r each), and later one release line takes
         * a hop down to all its children at once. */
        int k = n < P - 1 ? n : P - 1;
        return shm->o_s + tc_model_heap_depth(n, P) * (2.0 * hop + (k - 1) * f_r);
    }
    case TC_MODEL_BARRIER_TOURNAMENT:
        /* R rounds up (the champion's round-r signal comes from a loser that
         * finished its own r-1 rounds when the champion did: one hop per
         * round), then the wake-ups retrace the pairs: process P-1 of a
         * power of two is woken through R winners, one release flag each. */
        return shm->o_s + 2.0 * R * hop;
    case TC_MODEL_BARRIER_DISSEMINATION:
    case TC_MODEL_BARRIER_PAIRWISE:
        /* R rounds in which every process stores to its partner's line and
         * waits on its own, all at once: one hop, plus f_r because each
         * process now takes two lines in the same round (the partner's for
         * its store, its own for the poll), which a ping-pong spreads over
         * two processes (measured at P = 2: o_s + h alone is ~30% low). */
        return shm->o_s + R * (hop + f_r);
    default:
        return HUGE_VAL;
    }
}

tc_model_barrier_t tc_model_shm_barrier_argmin(unsigned allowed, int P, int arity,
                                               const tc_logp_t *shm,
                                               double costs[TC_MODEL_BARRIER_LAST])
{
    return tc_model_barrier_argmin_of(tc_model_shm_barrier_cost, allowed, P, arity, shm, costs);
}

/* ---- LogGP costs of the per-level algorithms ----------------------------- */

double tc_model_loggp_msg(double m, const tc_logp_t *p)
{
    if (m <= 0.0)
        return 0.0;
    /* Above the eager limit the data moves only after a handshake (and,
     * within a node, a single-copy setup): LogGP has no term for it. */
    const double rdv = p->E > 0.0 && m > p->E ? p->rdv : 0.0;
    return p->o_s + (m - 1.0) * p->G + p->L + p->o_r + rdv;
}

/* Interval between the starts of consecutive m-byte sends of one process
 * (LogGP: the next send waits for the gap and for the previous injection). */
static double tc_model_send_gap(double m, const tc_logp_t *p)
{
    return tc_model_dmax(p->g, p->o_s + tc_model_dmax(m - 1.0, 0.0) * p->G);
}

/* The same at a receiver taking consecutive m-byte messages. */
static double tc_model_recv_gap(double m, const tc_logp_t *p)
{
    return tc_model_dmax(p->g, p->o_r + tc_model_dmax(m - 1.0, 0.0) * p->G);
}

double tc_model_loggp_exchange(double m, const tc_logp_t *p)
{
    if (m <= 0.0)
        return 0.0;
    /* Both directions' bytes: X = 1 when they overlap (a NIC moves both by
     * DMA), 2 when the same CPUs copy both (shared memory, TCP): each
     * process then copies its outgoing and its incoming bytes. The fixed
     * terms and the rendezvous overlap either way. */
    const double rdv = p->E > 0.0 && m > p->E ? p->rdv : 0.0;
    const double x = p->o_s + tc_logp_duplex(p) * (m - 1.0) * p->G + p->L + p->o_r + rdv;
    return tc_model_dmax(p->g, x);
}

double tc_model_bcast_flat_cost(size_t m, int P, const tc_logp_t *p)
{
    if (m == 0 || P <= 1)
        return 0.0;
    /* P-1 Isends from the root: the last starts (P-2) gaps after the first. */
    return tc_model_loggp_msg((double)m, p) + (P - 2) * tc_model_send_gap((double)m, p);
}

double tc_model_bcast_knomial_cost(size_t m, int P, int k, const tc_logp_t *p)
{
    if (m == 0 || P <= 1)
        return 0.0;
    if (k < 2)
        k = 2;
    /* Each of ceil(log_k P) rounds: a parent starts up to k-1 sends (no more
     * than P-1 in all), largest subtree first; the deepest path takes the
     * first send of every round, but a round ends when its last child has
     * the data: one message plus (children - 1) send gaps. */
    int children = (k < P ? k : P) - 1;
    return tc_model_ceil_log(k, P) *
           (tc_model_loggp_msg((double)m, p) + (children - 1) * tc_model_send_gap((double)m, p));
}

double tc_model_bcast_scatter_allgather_cost(size_t m, int P, int k, const tc_logp_t *p)
{
    if (m == 0 || P <= 1)
        return 0.0;
    if (m < (size_t)P)
        return tc_model_bcast_knomial_cost(m, P, k, p);
    /* Binomial scatter: along the critical path the j-th message carries
     * m / 2^j bytes, j = 1..ceil(log2 P) (exact for powers of two). */
    double scatter = 0.0;
    int R = tc_model_ceil_log(2, P);
    for (int j = 1; j <= R; j++)
        scatter += tc_model_loggp_msg((double)m / (double)(1LL << j), p);
    /* Ring allgather: P-1 steps, each sends and receives one m/P chunk. */
    double allgather = (P - 1) * tc_model_loggp_exchange((double)m / P, p);
    return scatter + allgather;
}

double tc_model_reduce_flat_cost(size_t m, int P, double gamma, const tc_logp_t *p)
{
    if (m == 0 || P <= 1)
        return 0.0;
    /* All members send at once; the root receives and combines them one by
     * one (blocking receive, then combine): paper 003's "receive N" term
     * o_s + L + o_r + (N-1) f_r with f_r -> max(g, o_r + (m-1)G), plus one
     * combination of m bytes per vector. */
    double comb = (double)m * gamma;
    return tc_model_loggp_msg((double)m, p) + comb +
           (P - 2) * (tc_model_recv_gap((double)m, p) + comb);
}

double tc_model_reduce_binomial_cost(size_t m, int P, double gamma, const tc_logp_t *p)
{
    if (m == 0 || P <= 1)
        return 0.0;
    /* ceil(log2 P) rounds; the root receives one full vector per round and
     * combines it before the next. */
    return tc_model_ceil_log(2, P) * (tc_model_loggp_msg((double)m, p) + (double)m * gamma);
}

double tc_model_reduce_rsg_cost(size_t m, int P, double gamma, const tc_logp_t *p)
{
    if (m == 0 || P <= 1)
        return 0.0;
    int R = tc_model_floor_log2(P), P2 = 1 << R;
    /* Fold: with P != P2 an extra member hands its whole vector over first. */
    double fold = P == P2 ? 0.0 : tc_model_loggp_msg((double)m, p) + (double)m * gamma;
    /* Recursive halving: round j exchanges and combines m / 2^j bytes. */
    double rs = 0.0;
    for (int j = 1; j <= R; j++) {
        double mj = (double)m / (double)(1LL << j);
        rs += tc_model_loggp_exchange(mj, p) + mj * gamma;
    }
    /* Binomial gather to the root: messages of m/P2, 2m/P2, ..., m/2. */
    double gather = 0.0;
    for (int j = 1; j <= R; j++)
        gather += tc_model_loggp_msg((double)m / (double)(1LL << j), p);
    return fold + rs + gather;
}

double tc_model_allreduce_recdbl_cost(size_t m, int P, double gamma, const tc_logp_t *p)
{
    if (m == 0 || P <= 1)
        return 0.0;
    int R = tc_model_floor_log2(P), P2 = 1 << R;
    /* Non-power-of-two fix-up: the extra members fold their vector into a
     * partner (message + combine) and get the result back (message). */
    double fix = P == P2 ? 0.0 : 2.0 * tc_model_loggp_msg((double)m, p) + (double)m * gamma;
    /* log2 P2 rounds of a full-vector exchange and a combination. */
    return fix + R * (tc_model_loggp_exchange((double)m, p) + (double)m * gamma);
}

double tc_model_allreduce_ring_cost(size_t m, int P, double gamma, const tc_logp_t *p)
{
    if (m == 0 || P <= 1)
        return 0.0;
    double b = (double)m / P;
    /* P-1 reduce-scatter steps (exchange a block, combine it), then P-1
     * allgather steps (exchange a block). */
    return (P - 1) * (tc_model_loggp_exchange(b, p) + b * gamma) +
           (P - 1) * tc_model_loggp_exchange(b, p);
}

/* ---- Shared-memory pipelined Bcast (paper 000, section 5) ----------------- */

double tc_model_shm_bcast_cost(size_t m, size_t f, int S, int depth, const tc_model_shm_t *sp)
{
    if (m == 0 || f == 0 || S < 1 || sp == NULL)
        return 0.0;
    if (depth < 1)
        depth = 1;
    double dm = (double)m, df = (double)f;
    double nfrag = ceil(dm / df);
    if (S == 1) {
        /* No pipelining: every fragment waits for the release of the only
         * buffer, its notification down the whole tree and the readers'
         * decrement; root copy-in and reader copy-out are serial. */
        return nfrag * (sp->t_ws + depth * sp->t_w + sp->t_a) + 2.0 * dm * sp->t;
    }
    /* The root copies fragment k while readers copy k-1 out: the per-byte
     * work is the first copy-in and last copy-out (2 min(f, m)) plus one
     * copy of everything else. The notification of the first fragment
     * crosses depth hops; later ones are pipelined (one wait each). The
     * queue is refilled ceil(m/(S f)) times, each a bank wait and the
     * readers' decrement. */
    double fill = 2.0 * (df < dm ? df : dm);
    double rest = dm > df ? dm - df : 0.0;
    double nsync = ceil(dm / (df * S));
    return sp->t * (fill + rest) + (depth - 1) * sp->t_w + nfrag * sp->t_w +
           nsync * (sp->t_ws + sp->t_a);
}

/* ---- One-sided (RMA) broadcast, paper 002 ----------------------------------- */

/* Latest step at which the subtree of relative rank s has its data, when s
 * has it at step t and serves its children smallest first (the paper's
 * PutLoop): children s + 2^k for every 2^k below s's lowest set bit (all
 * 2^k < P for s = 0), the i-th (from 1) at step t + i. */
static int tc_model_rma_up_finish(int s, int P, int t)
{
    long low = s == 0 ? 2L * P : (long)(s & -s);
    int end = t, i = 0;
    for (long bit = 1; bit < low && s + bit < P; bit <<= 1) {
        int f = tc_model_rma_up_finish((int)(s + bit), P, t + ++i);
        if (f > end)
            end = f;
    }
    return end;
}

int tc_model_rma_binomial_rounds(int P, tc_model_rma_order_t order)
{
    if (P <= 1)
        return 0;
    /* Largest subtree first: the child that starts at step i has a subtree
     * of half the size of the previous one, so every path takes ceil(log2 P). */
    if (order != TC_MODEL_RMA_ORDER_UP)
        return tc_model_ceil_log(2, P);
    return tc_model_rma_up_finish(0, P, 0);
}

double tc_model_rma_bcast_binomial_cost(size_t m, int P, tc_model_rma_order_t order, double o_poll,
                                        const tc_logp_t *p)
{
    if (P <= 1 || p == NULL)
        return 0.0;
    double q = tc_model_dmax(p->o_s, p->g);
    double mb = m > 0 ? (double)m : 1.0;
    double step = p->o_s + (mb - 1.0) * p->G + 2.0 * q + p->L + o_poll;
    return step * tc_model_rma_binomial_rounds(P, order) + p->o_s + p->L;
}

double tc_model_rma_bcast_linear_cost(size_t m, int P, const tc_logp_t *p)
{
    if (P <= 1 || p == NULL)
        return 0.0;
    double mb = m > 0 ? (double)m : 1.0;
    double inject = p->o_s + (mb - 1.0) * p->G;
    return inject + (P - 2) * tc_model_dmax(p->g, inject) + 2.0 * p->L;
}
