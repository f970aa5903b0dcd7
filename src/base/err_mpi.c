#include "err_mpi.h"

#include <stdio.h>

int tc_err_to_mpi(tc_err_t e)
{
    /* Indexed by tc_err_kind_t. */
    static const int classes[TC_ERR_LAST] = {
        [TC_ERR_NONE] = MPI_SUCCESS,
        [TC_ERR_MPI] = MPI_ERR_OTHER, /* not used: the code itself is returned */
        [TC_ERR_ARG] = MPI_ERR_ARG,
        [TC_ERR_COUNT] = MPI_ERR_COUNT,
        [TC_ERR_TYPE] = MPI_ERR_TYPE,
        [TC_ERR_OP] = MPI_ERR_OP,
        [TC_ERR_ROOT] = MPI_ERR_ROOT,
        [TC_ERR_BUFFER] = MPI_ERR_BUFFER,
        [TC_ERR_COMM] = MPI_ERR_COMM,
        [TC_ERR_WIN] = MPI_ERR_WIN,
        [TC_ERR_DISP] = MPI_ERR_DISP,
        [TC_ERR_NOMEM] = MPI_ERR_NO_MEM,
        [TC_ERR_SYS] = MPI_ERR_OTHER,
        [TC_ERR_LIMIT] = MPI_ERR_NO_MEM,
        /* Reaching the API, a path that could not take the call is a bug of
         * the dispatcher, which should have fallen back. */
        [TC_ERR_NOTSUP] = MPI_ERR_INTERN,
        [TC_ERR_PEER] = MPI_ERR_OTHER,
        [TC_ERR_NOTFOUND] = MPI_ERR_OTHER,
        [TC_ERR_PARSE] = MPI_ERR_ARG,
        [TC_ERR_BUSY] = MPI_ERR_OTHER,
        [TC_ERR_TIMEOUT] = MPI_ERR_OTHER,
        [TC_ERR_OWNERDEAD] = MPI_ERR_OTHER,
        [TC_ERR_NOTRECOVERABLE] = MPI_ERR_OTHER,
        [TC_ERR_INTERN] = MPI_ERR_INTERN,
    };
    if (e > 0)
        return e;
    tc_err_kind_t kind = tc_err_kind(e);
    return (unsigned)kind < TC_ERR_LAST ? classes[kind] : MPI_ERR_INTERN;
}

char *tc_err_describe(tc_err_t e, char *buf, size_t len)
{
    char text[MPI_MAX_ERROR_STRING] = "";
    int n = 0;
    if (e <= 0 || PMPI_Error_string(e, text, &n) != MPI_SUCCESS || n <= 0)
        return tc_err_string(e, buf, len);
    if (buf && len)
        snprintf(buf, len, "MPI call failed: %s", text);
    return buf;
}
