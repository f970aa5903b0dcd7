/* Choice of the fragment size f and queue length S (paper 000, section 5).
 *
 * The pipeline's time is A*f + B/f: filling the pipeline grows with f, the
 * sum of the m/f notification waits falls with f, so the optimum is
 * f* = sqrt(m * t_w / t) (t = time per byte, t_w = wait for a notification),
 * rounded UP to a whole number of pages. m is not known when the segment is
 * created, so f is tuned for a design message size (TC_SHM_DESIGN_SIZE) and
 * S comes from a per-process queue budget (TC_SHM_QUEUE_BYTES): S = budget / f
 * rounded down to a multiple of the banks q (at least q). The paper's model
 * parameters were t = 1 ns/byte, t_w = 50 t; on a 2-core KVM guest a
 * notification (a cache-line handoff, 0.1-0.45 µs, about 0.3 µs per extra
 * fragment measured) costs about 10000 in-cache byte copies, hence the
 * default TC_SHM_TW_RATIO = 10000 (1000 until 2026-11-27), with the design
 * size 100 KiB so that the buffers stay 32 KiB (docs/shm.md). The same
 * formula cuts each message: sqrt(m t_w / t) for its own m, at most the
 * buffer size.
 */
#ifndef TC_SHM_PARAMS_H
#define TC_SHM_PARAMS_H

#include <stddef.h>

/* f* = sqrt(m t_w / t) rounded up to a multiple of @p page; at least one page. */
size_t tc_shm_params_fragment(size_t design_bytes, double tw_over_t, size_t page);

/* Fragment size for one message of @p m bytes: f* = sqrt(m t_w / t) rounded
 * up to a cache line, at least TC_SHM_MIN_FRAGMENT, at most @p slot. */
#define TC_SHM_MIN_FRAGMENT 1024
/* TC_SHM_REDUCE_WIDE_BYTES=auto where the node is oversubscribed: beside
 * busy processes 128 KiB slots took 0.65-0.92x the time of 32 KiB ones at
 * 1-16 MiB, 64 KiB ones less (docs/measurements/lanes-np4-2026-11-28.md). */
#define TC_SHM_REDUCE_WIDE_AUTO    ((size_t)128 << 10)
#define TC_SHM_STREAM_MIN_FRAGMENT 8192
size_t tc_shm_params_fragment_for(size_t m, double tw_over_t, size_t slot);

/* The geometry of one message of @p m bytes in a queue of @p queue_bytes
 * (q banks; fragment buffers of @p slot bytes): *bank_bytes (in: the whole
 * bank) and the fragment size *frag. A message larger than the whole queue
 * (the paper's third regime, m > S f: buffers are reused) streams through a
 * window of
 * @p stream_bytes in all (0 = off) so that the ring stays in the L2 cache
 * while the user buffers stream through memory; its fragments are then at
 * most a quarter of a bank (four in flight per bank) but at least
 * TC_SHM_STREAM_MIN_FRAGMENT, or the whole bank if that is smaller. */
void tc_shm_params_geometry(size_t m, double tw_over_t, size_t slot, size_t queue_bytes, int q,
                            size_t stream_bytes, size_t *bank_bytes, size_t *frag);

/* S = floor(budget / f) rounded down to a multiple of q, at least q. */
int tc_shm_params_queue_length(size_t budget_bytes, size_t f, int q);

/* Model time (in units of t) of one broadcast of m bytes with fragment f,
 * queue S, banks q (paper 000, section 5, S > 1 regime):
 * fill 2 f (root copy of the first fragment plus the last copy-out),
 * (m - f) per-byte copies overlapped, ceil(m/f) notification waits t_w and
 * ceil(m / (S f)) bank synchronisations t_ws each. Used to explain the choice
 * in topocoll-info and in the unit test that checks f* is the argmin. */
double tc_shm_params_model_time(size_t m, size_t f, int S, double tw_over_t, double tws_over_t);

/* ---- a segment's parameters, from this process's settings ------------- */

struct tc_shm_params;
struct tc_shm_policy;

/* This process's proposal for a segment's parameters (segment.h), from its
 * own settings (settings.h and TC_LOCK_SCHEME): f = TC_SHM_FRAGMENT_SIZE, or
 * when auto tc_shm_params_fragment() of TC_SHM_DESIGN_SIZE, rounded up to
 * whole pages; S = TC_SHM_QUEUE_LENGTH, or when auto
 * tc_shm_params_queue_length() of TC_SHM_QUEUE_BYTES; reduction slots rounded
 * down to cache lines; TC_SHM_REDUCE_TREE_MAX 0 when @p oversubscribed (more
 * processes on the node than CPUs) unless set. The processes then agree on
 * each field (the context takes the minimum) except the copy choices, which
 * stay local. */
/* @p node_procs: the communicator's processes on this node (TC_SHM_REDUCE_SLOTS=auto). */
void tc_shm_params_local(struct tc_shm_params *p, int oversubscribed, int node_procs);

/* The reduction slots' size: TC_SHM_REDUCE_WIDE_BYTES where wide fragments
 * are on (larger than TC_SHM_REDUCE_SLOT_BYTES, TC_SHM_REDUCE_WIDE_MIN not
 * 0), else TC_SHM_REDUCE_SLOT_BYTES. */
size_t tc_shm_params_rslot_bytes(const struct tc_shm_params *p);

/* After agreement: q <= S and S a multiple of q. */
void tc_shm_params_settle(struct tc_shm_params *p);

/* TC_SHM: this process would use shared memory (1) or not (0). */
int tc_shm_params_enabled(void);

/* This process's segment policy (TC_SHM_PLACEMENT, TC_SHM_MAX_*,
 * TC_SHM_MECHANISM), not agreed; fail = 0. */
void tc_shm_params_policy(struct tc_shm_policy *policy);

#endif /* TC_SHM_PARAMS_H */
