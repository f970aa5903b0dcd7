/* The node store (issue 6, paper 004's use case): a small key-value area in the
 * header pages of each segment, written by the segment's leader (rank 0) and read
 * by every process of the segment, guarded by a reader-writer lock from
 * src/locks (one reader index per segment rank, the scheme agreed in
 * tc_shm_params_t.lock_scheme).
 *
 * Area (layout.h: store_off, TC_SHM_STORE_BYTES): a control line, then records
 * packed one after another, each a header line (TC_CACHELINE bytes: key, version, length,
 * capacity, checksum) followed by its value padded to whole lines: a record of
 * n bytes takes TC_SHM_STORE_RECORD_BYTES(n). A put of an existing key with a
 * value that fits its capacity rewrites it in place (keeping the capacity); a
 * larger value moves the record to the end with the new value's size (the
 * records after it slide down, so no space is lost).
 *
 * Consistency: everything is read and written under the lock. Besides, the
 * leader makes the control line's sequence number odd while it changes the
 * area and even afterwards, and every record carries a checksum of its value,
 * so a writer that died half-way (a robust-mutex lock then returns
 * TC_ERR_OWNERDEAD) is detected and never yields a torn value.
 *
 * Robustness (rwlock.h): a lock call that returns TC_ERR_OWNERDEAD with a
 * consistent area is logged and carries on (robust-mutex schemes: a dead reader
 * does not wedge the leader). Any other lock failure (TC_ERR_TIMEOUT after the
 * context's wait timeout, N-MCS's broken lock, a half-written area: odd
 * sequence or checksum mismatch, cause EIO) is logged once and marks the store
 * unusable in shared memory: every later call in every process returns
 * TC_ERR_NOTRECOVERABLE, and callers compute the value locally.
 *
 * Return values (tc_err_t, base/err.h; the cause in parentheses): TC_OK;
 * TC_ERR_NOTFOUND no such key; TC_ERR_BUFFER (ENOBUFS) buffer too small (*len
 * says how much is needed); TC_ERR_LIMIT (ENOSPC) the area is full (nothing
 * changed); TC_ERR_ARG bad key (empty or longer than TC_SHM_STORE_KEY_MAX) or
 * argument, or (EPERM) a put by a process other than the leader;
 * TC_ERR_NOTRECOVERABLE the store is unusable (or absent), with the cause of
 * the failure that made it so when this call found it.
 *
 * Thread-safety: one thread per process at a time per segment (the reader
 * index is the process's segment rank).
 */
#ifndef TC_SHM_STORE_H
#define TC_SHM_STORE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "locks/rwlock.h"

struct tc_shm_comm;

/* Size of the area: topology summary, LogP table (~1 KiB), decision tables. */
#define TC_SHM_STORE_BYTES ((size_t)16384)
/* Longest key (the record holds it NUL-terminated in 32 bytes). */
#define TC_SHM_STORE_KEY_MAX 31
/* Area bytes a record with an @p n-byte value takes. */
#define TC_SHM_STORE_RECORD_BYTES(n)                                                               \
    ((size_t)TC_CACHELINE + ((size_t)(n) + TC_CACHELINE - 1) / TC_CACHELINE * TC_CACHELINE)
/* Bytes available for records (the area minus its control line). */
#define TC_SHM_STORE_CAPACITY (TC_SHM_STORE_BYTES - (size_t)TC_CACHELINE)

/* Lock memory to reserve for @p p readers: the largest of all schemes, so the
 * segment's layout does not depend on the scheme. */
size_t tc_shm_store_lock_bytes(int p);

/* Segment set-up (segment.c). The creator calls tc_shm_store_create() after
 * mapping and before the barrier that precedes every other process's
 * tc_shm_store_attach(); a failure only leaves the store unusable (the segment
 * itself works). tc_shm_store_detach() is local and safe to call twice. */
void tc_shm_store_create(struct tc_shm_comm *s, tc_lock_scheme_t scheme);
void tc_shm_store_attach(struct tc_shm_comm *s);
void tc_shm_store_detach(struct tc_shm_comm *s);

/* Non-zero if this process can use the store (attached, not marked broken). */
int tc_shm_store_usable(const struct tc_shm_comm *s);

/* Leader only: set @p key to the @p len bytes at @p val (len may be 0). Takes
 * the writer lock over all readers. Returns TC_OK, TC_ERR_ARG (bad key; cause
 * EPERM: not the leader), TC_ERR_LIMIT (no room, cause ENOSPC) or
 * TC_ERR_NOTRECOVERABLE (the store is broken). */
tc_err_t tc_shm_store_put(struct tc_shm_comm *s, const char *key, const void *val, size_t len);

/* Any process: copy @p key's value into @p buf (@p cap bytes): TC_OK,
 * TC_ERR_NOTFOUND, TC_ERR_BUFFER (too small), or as put. *len (may be NULL)
 * receives the value's length (also on TC_ERR_BUFFER), *version (may be NULL) the number of puts of
 * that key so far (1 for the first). Takes the reader lock of this process's segment rank. */
tc_err_t tc_shm_store_get(struct tc_shm_comm *s, const char *key, void *buf, size_t cap,
                          size_t *len, uint64_t *version);

/* Fills @p buf (@p len bytes) with the value; returns TC_OK or an error. */
typedef tc_err_t (*tc_shm_store_compute_fn)(void *buf, size_t len, void *arg);

/* Collective over @p node_comm (the communicator the segment was created on):
 * the leader computes the value into @p buf and puts it; the others copy it from
 * the store instead of computing it. Whoever cannot get a value of exactly
 * @p len bytes from the store (store unusable, leader's compute or put failed)
 * computes it locally, so on success every process has a value. @p from_store
 * (may be NULL) is set to 1 where the value came from the store. Returns TC_OK,
 * the error of a local @p compute, or the MPI code of the one small broadcast. */
tc_err_t tc_shm_store_get_or_put(struct tc_shm_comm *s, MPI_Comm node_comm, const char *key,
                                 void *buf, size_t len, tc_shm_store_compute_fn compute, void *arg,
                                 int *from_store);

#endif /* TC_SHM_STORE_H */
