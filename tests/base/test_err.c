/* The error convention (src/base/err.h) and its one conversion to MPI
 * (src/base/err_mpi.c): every kind has a name, a text and an MPI class; a cause
 * survives into the string; an MPI code passes through unchanged. No MPI
 * call is made (the classes are compile-time constants). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/err.h"
#include "base/err_mpi.h"
#include "tc_unit.h"

int main(void)
{
    char buf[256];

    /* Encoding: kind and cause come back out; success is 0. */
    CHECK(tc_err_kind(TC_OK) == TC_ERR_NONE);
    CHECK(tc_err_cause(TC_OK) == 0);
    for (int k = TC_ERR_ARG; k < TC_ERR_LAST; k++) {
        tc_err_t e = tc_err((tc_err_kind_t)k);
        CHECK(e < 0);
        CHECK(tc_err_kind(e) == (tc_err_kind_t)k);
        CHECK(tc_err_cause(e) == 0);
        e = tc_err_errno((tc_err_kind_t)k, EPIPE);
        CHECK(e < 0);
        CHECK(tc_err_kind(e) == (tc_err_kind_t)k);
        CHECK(tc_err_cause(e) == EPIPE);
    }
    CHECK(tc_err_kind(tc_err_sys(ENOMEM)) == TC_ERR_NOMEM);
    CHECK(tc_err_kind(tc_err_sys(ENOSPC)) == TC_ERR_SYS);
    CHECK(tc_err_cause(tc_err_sys(ENOSPC)) == ENOSPC);

    /* Every kind has a distinct name and a text. */
    for (int k = 0; k < TC_ERR_LAST; k++) {
        const char *name = tc_err_kind_name((tc_err_kind_t)k);
        CHECK(name != NULL && strncmp(name, "TC_", 3) == 0);
        for (int j = 0; j < k; j++)
            CHECK(!name || strcmp(name, tc_err_kind_name((tc_err_kind_t)j)) != 0);
        if (k != TC_ERR_MPI) {
            tc_err_string(k == 0 ? TC_OK : tc_err((tc_err_kind_t)k), buf, sizeof buf);
            CHECK(buf[0] != '\0' && strcmp(buf, "unknown error") != 0);
        }
    }
    CHECK(tc_err_kind_name(TC_ERR_LAST) == NULL);

    /* The cause survives into the text: a full /dev/shm is not "internal error". */
    tc_err_string(tc_err_sys(ENOSPC), buf, sizeof buf);
    CHECK(strstr(buf, strerror(ENOSPC)) != NULL);
    CHECK(strstr(buf, "internal") == NULL);
    tc_err_string(tc_err(TC_ERR_INTERN), buf, sizeof buf);
    CHECK(strstr(buf, "internal") != NULL);
    tc_err_string(42, buf, sizeof buf);
    CHECK(strstr(buf, "42") != NULL);
    tc_err_string(tc_err_sys(ENOSPC), buf, 4); /* truncates, stays terminated */
    CHECK(strlen(buf) == 3);

    /* The one conversion at the API boundary. */
    static const struct {
        tc_err_kind_t kind;
        int mpi;
    } table[] = {
        {TC_ERR_NONE, MPI_SUCCESS},
        {TC_ERR_ARG, MPI_ERR_ARG},
        {TC_ERR_COUNT, MPI_ERR_COUNT},
        {TC_ERR_TYPE, MPI_ERR_TYPE},
        {TC_ERR_OP, MPI_ERR_OP},
        {TC_ERR_ROOT, MPI_ERR_ROOT},
        {TC_ERR_BUFFER, MPI_ERR_BUFFER},
        {TC_ERR_COMM, MPI_ERR_COMM},
        {TC_ERR_WIN, MPI_ERR_WIN},
        {TC_ERR_DISP, MPI_ERR_DISP},
        {TC_ERR_NOMEM, MPI_ERR_NO_MEM},
        {TC_ERR_SYS, MPI_ERR_OTHER},
        {TC_ERR_LIMIT, MPI_ERR_NO_MEM},
        {TC_ERR_NOTSUP, MPI_ERR_INTERN},
        {TC_ERR_PEER, MPI_ERR_OTHER},
        {TC_ERR_NOTFOUND, MPI_ERR_OTHER},
        {TC_ERR_PARSE, MPI_ERR_ARG},
        {TC_ERR_BUSY, MPI_ERR_OTHER},
        {TC_ERR_TIMEOUT, MPI_ERR_OTHER},
        {TC_ERR_OWNERDEAD, MPI_ERR_OTHER},
        {TC_ERR_NOTRECOVERABLE, MPI_ERR_OTHER},
        {TC_ERR_INTERN, MPI_ERR_INTERN},
    };
    CHECK(sizeof table / sizeof table[0] == TC_ERR_LAST - 1); /* all but TC_ERR_MPI */
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        tc_err_t e = table[i].kind == TC_ERR_NONE ? TC_OK : tc_err(table[i].kind);
        CHECK(tc_err_to_mpi(e) == table[i].mpi, "%s -> %d, expected %d",
              tc_err_kind_name(table[i].kind), tc_err_to_mpi(e), table[i].mpi);
        /* The cause does not change the class. */
        if (e != TC_OK)
            CHECK(tc_err_to_mpi(tc_err_errno(table[i].kind, EIO)) == table[i].mpi);
    }
    /* An MPI code is returned as it is (MPICH's codes carry more than the class). */
    CHECK(tc_err_to_mpi(MPI_ERR_TRUNCATE) == MPI_ERR_TRUNCATE);
    CHECK(tc_err_to_mpi(0x7fff1234) == 0x7fff1234);
    CHECK(tc_err_kind(MPI_ERR_TRUNCATE) == TC_ERR_MPI);
    CHECK(tc_err_cause(MPI_ERR_TRUNCATE) == MPI_ERR_TRUNCATE);
    CHECK(tc_err_to_mpi(-(int)TC_ERR_LAST) == MPI_ERR_INTERN);

    printf("test_err: %d checks, %d failed\n", (int)tu_checks, (int)tu_failures);
    return tu_failures != 0;
}
