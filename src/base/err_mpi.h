/* The API boundary of the error convention (err.h): a tc_err_t becomes the
 * MPI error class or code a TC_ function returns. Used where TC_ functions
 * are implemented (src/core, and src/rma for TC_Rma_*); err.h itself stays
 * free of MPI for src/locks and src/model. */
#ifndef TC_BASE_ERR_MPI_H
#define TC_BASE_ERR_MPI_H

#include <mpi.h>
#include <stddef.h>

#include "err.h"

/* The MPI error class for @p e (the code itself for TC_ERR_MPI): one table,
 * the only place a kind meets an MPI class. */
int tc_err_to_mpi(tc_err_t e);

/* tc_err_string, with the MPI's own text for an MPI code. */
char *tc_err_describe(tc_err_t e, char *buf, size_t len);

#endif /* TC_BASE_ERR_MPI_H */
