/* Datatype helpers: is (count, datatype) one contiguous run of bytes? */
#ifndef TC_CORE_DATATYPE_H
#define TC_CORE_DATATYPE_H

#include <mpi.h>
#include <stddef.h>

/* Non-zero when @p count elements of @p dt occupy exactly their type size in
 * one contiguous run starting at buf + *lb (no holes, no overlaps, no
 * reordering), so bytes can be copied directly. Conservative: a type built
 * with a combiner other than NAMED, DUP, CONTIGUOUS or RESIZED is reported
 * non-contiguous (it is then packed). */
int tc_datatype_is_contiguous(MPI_Datatype dt, int count, MPI_Aint *lb);

#endif /* TC_CORE_DATATYPE_H */
