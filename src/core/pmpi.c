/*
 * PMPI drop-in: `LD_PRELOAD=libtopocoll_pmpi.so mpiexec ... ./app` makes an
 * unmodified application's MPI_Bcast run TC_Bcast.
 *
 * How it binds. This library defines MPI_Bcast (and, for Open MPI, the Fortran
 * entry points below) with default visibility. The dynamic linker searches the
 * preloaded objects before the application's libmpi, so the application and
 * every library that calls MPI_Bcast through the PLT bind to this definition.
 * libtopocoll itself calls PMPI_* only, so nothing recurses.
 *
 * C: MPI_Bcast. The MPI-4 large-count MPI_Bcast_c and the nonblocking and
 * persistent variants (MPI_Ibcast, MPI_Bcast_init) are NOT intercepted.
 *
 * Fortran, Open MPI (checked with nm -D on 4.1.4). libmpi_mpifh.so's
 * mpi_bcast_ and friends call PMPI_Bcast in C, bypassing a C-only shim, so
 * every Fortran name it exports for Bcast is defined here too:
 *   mpif.h and `use mpi`       mpi_bcast_ (gfortran), mpi_bcast, mpi_bcast__,
 *                              MPI_BCAST (other compilers' manglings)
 *   `use mpi_f08`              mpi_bcast_f08_ (libmpi_usempif08.so, the wrapper
 *                              gfortran calls); MPI_Bcast_f08 and MPI_Bcast_f
 *                              (aliases in libmpi_mpifh.so that an f08 module
 *                              built without wrappers binds to directly)
 * All of these are, in Open MPI <= 4, one function with one ABI (ompi_bcast_f):
 *   (void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *root,
 *    MPI_Fint *comm, MPI_Fint *ierr)
 * where for mpi_f08 TYPE(MPI_Datatype)/TYPE(MPI_Comm) are BIND(C) structs
 * holding one INTEGER, so the pointer to the struct is a pointer to the
 * handle, and the OPTIONAL ierror arrives as NULL when absent. The buffer is a
 * plain address: Open MPI 4's f08 wrappers declare it assumed-size ("mpi_f08
 * subarrays: no" in ompi_info), so a non-contiguous section arrives as
 * gfortran's contiguous temporary. Open MPI 5 passes f08 buffers as
 * descriptors under other names; the f08 names are therefore defined for
 * Open MPI <= 4 only (later versions: mpi_f08 not intercepted).
 * The PMPI_/pmpi_ Fortran names are of course left alone.
 *
 * MPI_BOTTOM from Fortran is not a null pointer but the address of a common
 * block: Open MPI compares the buffer with &mpi_fortran_bottom_ (the name
 * follows the compiler's mangling; libmpi.so exports the one it was built
 * with), so all four manglings are referenced weakly and a match is turned
 * into MPI_BOTTOM exactly as ompi_bcast_f does, then goes through the same
 * path as a C caller's MPI_Bcast(MPI_BOTTOM, ...). MPI_IN_PLACE is not valid
 * for Bcast.
 *
 * Fortran, MPICH (checked on 4.0.2): libmpichfort.so's mpi_bcast_ (all
 * manglings, including pmpi_bcast_) and the mpi_f08 entry mpi_bcast_f08ts_
 * call the C MPI_Bcast, not PMPI_Bcast, after MPICH has converted the handles,
 * its own MPI_BOTTOM and (f08) descriptors. The C symbol is therefore enough
 * and no Fortran symbol is defined for MPICH or other MPIs: a second
 * conversion here could only get MPI_BOTTOM wrong. Not intercepted on MPICH:
 * mpi_bcast_f08ts_large_ (INTEGER(MPI_COUNT_KIND) counts), which calls
 * MPI_Bcast_c.
 */
#include <mpi.h>

#include "topocoll.h"

#define TC_PMPI_EXPORT __attribute__((visibility("default")))

TC_PMPI_EXPORT int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root,
                             MPI_Comm comm);

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    return TC_Bcast(buffer, count, datatype, root, comm);
}

#if defined(OPEN_MPI) && OPEN_MPI

/* Weak: only the mangling Open MPI was built with exists; the others are NULL. */
extern char mpi_fortran_bottom __attribute__((weak));
extern char mpi_fortran_bottom_ __attribute__((weak));
extern char mpi_fortran_bottom__ __attribute__((weak));
extern char MPI_FORTRAN_BOTTOM __attribute__((weak));

static int tc_pmpi_is_fortran_bottom(const void *buffer)
{
    const void *const bottoms[] = {&mpi_fortran_bottom, &mpi_fortran_bottom_, &mpi_fortran_bottom__,
                                   &MPI_FORTRAN_BOTTOM};
    for (size_t i = 0; i < sizeof bottoms / sizeof bottoms[0]; i++)
        if (bottoms[i] != NULL && buffer == bottoms[i])
            return 1;
    return 0;
}

/* The one Fortran ABI of every name below (see the top of the file). */
static void tc_pmpi_bcast_f(void *buffer, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *root,
                            MPI_Fint *comm, MPI_Fint *ierr)
{
    if (tc_pmpi_is_fortran_bottom(buffer))
        buffer = MPI_BOTTOM;
    int rc =
        TC_Bcast(buffer, (int)*count, PMPI_Type_f2c(*datatype), (int)*root, PMPI_Comm_f2c(*comm));
    if (ierr != NULL)
        *ierr = (MPI_Fint)rc;
}

#define TC_PMPI_FORTRAN_ALIAS(name)                                                                \
    TC_PMPI_EXPORT void name(void *buffer, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *root,    \
                             MPI_Fint *comm, MPI_Fint *ierr)                                       \
        __attribute__((alias("tc_pmpi_bcast_f")))

TC_PMPI_FORTRAN_ALIAS(mpi_bcast);
TC_PMPI_FORTRAN_ALIAS(mpi_bcast_);
TC_PMPI_FORTRAN_ALIAS(mpi_bcast__);
TC_PMPI_FORTRAN_ALIAS(MPI_BCAST);

#if OMPI_MAJOR_VERSION <= 4
TC_PMPI_FORTRAN_ALIAS(mpi_bcast_f08_);
TC_PMPI_FORTRAN_ALIAS(MPI_Bcast_f08);
TC_PMPI_FORTRAN_ALIAS(MPI_Bcast_f);
#endif

#endif /* OPEN_MPI */
