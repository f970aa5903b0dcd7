#include "datatype.h"

/* Built only from combiners that cannot reorder or overlap bytes. */
static int tc_datatype_simple(MPI_Datatype dt, int depth)
{
    int ni, na, nd, combiner;
    if (depth > 16 || PMPI_Type_get_envelope(dt, &ni, &na, &nd, &combiner) != MPI_SUCCESS)
        return 0;
    if (combiner == MPI_COMBINER_NAMED)
        return 1;
    if (combiner != MPI_COMBINER_DUP && combiner != MPI_COMBINER_CONTIGUOUS &&
        combiner != MPI_COMBINER_RESIZED)
        return 0;
    int ints[2];
    MPI_Aint addrs[2];
    MPI_Datatype types[1];
    if (ni > 2 || na > 2 || nd != 1 ||
        PMPI_Type_get_contents(dt, ni, na, nd, ints, addrs, types) != MPI_SUCCESS)
        return 0;
    int ok = tc_datatype_simple(types[0], depth + 1);
    int tni, tna, tnd, tcomb;
    PMPI_Type_get_envelope(types[0], &tni, &tna, &tnd, &tcomb);
    if (tcomb != MPI_COMBINER_NAMED)
        PMPI_Type_free(&types[0]); /* get_contents returned a new handle */
    return ok;
}

int tc_datatype_is_contiguous(MPI_Datatype dt, int count, MPI_Aint *lb)
{
    int size;
    MPI_Aint ext_lb, extent, true_lb, true_extent;
    if (PMPI_Type_size(dt, &size) != MPI_SUCCESS ||
        PMPI_Type_get_extent(dt, &ext_lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(dt, &true_lb, &true_extent) != MPI_SUCCESS)
        return 0;
    *lb = true_lb;
    if (count <= 1 || size == 0)
        return (MPI_Aint)size == true_extent && tc_datatype_simple(dt, 0);
    return (MPI_Aint)size == extent && (MPI_Aint)size == true_extent && tc_datatype_simple(dt, 0);
}
