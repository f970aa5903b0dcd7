#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Indexed by tc_err_kind_t: the name and what it means, in words. */
static const struct {
    const char *name, *text;
} tc_err_table[TC_ERR_LAST] = {
    [TC_ERR_NONE] = {"TC_OK", "success"},
    [TC_ERR_MPI] = {"TC_ERR_MPI", "an MPI call failed"},
    [TC_ERR_ARG] = {"TC_ERR_ARG", "invalid argument"},
    [TC_ERR_COUNT] = {"TC_ERR_COUNT", "invalid count"},
    [TC_ERR_TYPE] = {"TC_ERR_TYPE", "invalid datatype"},
    [TC_ERR_OP] = {"TC_ERR_OP", "invalid or unsupported reduction operation"},
    [TC_ERR_ROOT] = {"TC_ERR_ROOT", "invalid root"},
    [TC_ERR_BUFFER] = {"TC_ERR_BUFFER", "invalid buffer"},
    [TC_ERR_COMM] = {"TC_ERR_COMM", "invalid communicator"},
    [TC_ERR_WIN] = {"TC_ERR_WIN", "invalid window"},
    [TC_ERR_DISP] = {"TC_ERR_DISP", "invalid displacement"},
    [TC_ERR_NOMEM] = {"TC_ERR_NOMEM", "out of memory"},
    [TC_ERR_SYS] = {"TC_ERR_SYS", "system call failed"},
    [TC_ERR_LIMIT] = {"TC_ERR_LIMIT", "refused by a configured limit"},
    [TC_ERR_NOTSUP] = {"TC_ERR_NOTSUP", "this path cannot take the call"},
    [TC_ERR_PEER] = {"TC_ERR_PEER", "another process failed"},
    [TC_ERR_NOTFOUND] = {"TC_ERR_NOTFOUND", "not found"},
    [TC_ERR_PARSE] = {"TC_ERR_PARSE", "bad input text"},
    [TC_ERR_BUSY] = {"TC_ERR_BUSY", "lock is taken"},
    [TC_ERR_TIMEOUT] = {"TC_ERR_TIMEOUT", "timed out"},
    [TC_ERR_OWNERDEAD] = {"TC_ERR_OWNERDEAD", "lock holder died"},
    [TC_ERR_NOTRECOVERABLE] = {"TC_ERR_NOTRECOVERABLE", "lock holder died, state not recovered"},
    [TC_ERR_INTERN] = {"TC_ERR_INTERN", "internal error"},
};

const char *tc_err_kind_name(tc_err_kind_t kind)
{
    return (unsigned)kind < TC_ERR_LAST ? tc_err_table[kind].name : NULL;
}

char *tc_err_string(tc_err_t e, char *buf, size_t len)
{
    if (!buf || len == 0)
        return buf;
    tc_err_kind_t kind = tc_err_kind(e);
    int cause = tc_err_cause(e);
    const char *text = (unsigned)kind < TC_ERR_LAST ? tc_err_table[kind].text : "unknown error";
    if (kind == TC_ERR_MPI)
        snprintf(buf, len, "%s (MPI error code %d)", text, cause);
    else if (cause != 0)
        snprintf(buf, len, "%s: %s", text, strerror(cause));
    else
        snprintf(buf, len, "%s", text);
    return buf;
}

void tc_err_message(char *buf, size_t len, const char *fmt, ...)
{
    if (buf == NULL || len == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}
