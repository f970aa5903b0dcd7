/* The library's one return convention: every internal function that can fail
 * returns a tc_err_t.
 *
 *   TC_OK (0)      success.
 *   > 0            an MPI call failed, and this is the code it returned, kept
 *                  as it is so the MPI's own text for it reaches the user
 *                  (kind TC_ERR_MPI). A module may return a PMPI_* result
 *                  unchanged.
 *   < 0            one of ours: -(kind | cause << 8), built by tc_err() or
 *                  tc_err_errno(); the cause is the errno of the system call
 *                  that failed (0: none).
 *
 * The API functions convert at the boundary (tc_err_to_mpi, err_mpi.h): one
 * table from kind to MPI error class. A missing capability is not an
 * error: a path that cannot take a call returns TC_ERR_NOTSUP and the caller
 * falls back.
 *
 * Base layer: includes nothing of ours and not <mpi.h> (src/locks and
 * src/model use it). Header-only but for tc_err_string (err.c).
 */
#ifndef TC_BASE_ERR_H
#define TC_BASE_ERR_H

#include <errno.h>
#include <stddef.h>

typedef int tc_err_t;

#define TC_OK 0

typedef enum {
    TC_ERR_NONE = 0, /* success */
    TC_ERR_MPI,      /* an MPI call failed: the value is its (positive) code */
    /* Bad arguments, one kind per MPI class the API reports for them. */
    TC_ERR_ARG,
    TC_ERR_COUNT,
    TC_ERR_TYPE,
    TC_ERR_OP,
    TC_ERR_ROOT,
    TC_ERR_BUFFER,
    TC_ERR_COMM,
    TC_ERR_WIN,
    TC_ERR_DISP,
    TC_ERR_NOMEM,          /* an allocation failed (cause ENOMEM when a system call said so) */
    TC_ERR_SYS,            /* a system call failed; the cause is its errno */
    TC_ERR_LIMIT,          /* a configured cap (TC_SHM_MAX_*) refuses the resource */
    TC_ERR_NOTSUP,         /* this path cannot take the call: the caller falls back */
    TC_ERR_PEER,           /* another process failed (its own message says why) */
    TC_ERR_NOTFOUND,       /* no such key or entry */
    TC_ERR_PARSE,          /* bad text in a file or variable (the message says where) */
    TC_ERR_BUSY,           /* a try-lock found the lock taken */
    TC_ERR_TIMEOUT,        /* a bounded wait expired */
    TC_ERR_OWNERDEAD,      /* the lock's holder died: the caller holds it, state to check */
    TC_ERR_NOTRECOVERABLE, /* the lock's holder died and the state was not recovered */
    TC_ERR_INTERN,         /* a broken invariant: a bug */
    TC_ERR_LAST
} tc_err_kind_t;

/* An error of @p kind with no cause. */
static inline tc_err_t tc_err(tc_err_kind_t kind)
{
    return -(int)kind;
}

/* An error of @p kind caused by the system error @p errnum. */
static inline tc_err_t tc_err_errno(tc_err_kind_t kind, int errnum)
{
    return -(int)((unsigned)kind | (unsigned)errnum << 8);
}

/* A failed system call's errno: TC_ERR_NOMEM for ENOMEM, TC_ERR_SYS otherwise. */
static inline tc_err_t tc_err_sys(int errnum)
{
    return tc_err_errno(errnum == ENOMEM ? TC_ERR_NOMEM : TC_ERR_SYS, errnum);
}

/* A pthread-style result (0 or an errno value) as a tc_err_t, the errno kept
 * as the cause: the one place errno values meet kinds. */
static inline tc_err_t tc_err_from_errno(int errnum)
{
    switch (errnum) {
    case 0:
        return TC_OK;
    case EINVAL:
        return tc_err_errno(TC_ERR_ARG, errnum);
    case EBUSY:
    case EAGAIN:
        return tc_err_errno(TC_ERR_BUSY, errnum);
    case ETIMEDOUT:
        return tc_err_errno(TC_ERR_TIMEOUT, errnum);
    case EOWNERDEAD:
        return tc_err_errno(TC_ERR_OWNERDEAD, errnum);
    case ENOTRECOVERABLE:
        return tc_err_errno(TC_ERR_NOTRECOVERABLE, errnum);
    default:
        return tc_err_sys(errnum);
    }
}

static inline tc_err_kind_t tc_err_kind(tc_err_t e)
{
    if (e == TC_OK)
        return TC_ERR_NONE;
    if (e > 0)
        return TC_ERR_MPI;
    return (tc_err_kind_t)((unsigned)-e & 0xffu);
}

/* The errno behind @p e, or the MPI code for TC_ERR_MPI; 0 when none. */
static inline int tc_err_cause(tc_err_t e)
{
    return e > 0 ? e : e < 0 ? (int)((unsigned)-e >> 8) : 0;
}

/* The kind's name, "TC_ERR_SYS"; NULL when out of range. */
const char *tc_err_kind_name(tc_err_kind_t kind);

/* What went wrong, in words, with the cause: "system call failed: No space
 * left on device". An MPI code is printed as a number (err_mpi.h has the
 * MPI's text). Writes at most @p len bytes into @p buf and returns @p buf. */
char *tc_err_string(tc_err_t e, char *buf, size_t len);

/* A parser's message for its caller: printf @p fmt into @p buf (at most @p len
 * bytes); nothing when @p buf is NULL or @p len is 0 (the caller wants no text). */
void tc_err_message(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif /* TC_BASE_ERR_H */
