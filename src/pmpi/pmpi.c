/*
 * PMPI drop-in: `LD_PRELOAD=libtopocoll_pmpi.so mpiexec ... ./app` makes an
 * unmodified application's MPI_Bcast, MPI_Reduce, MPI_Allreduce, ... (the
 * list below) run TC_Bcast, TC_Reduce, TC_Allreduce, ...
 *
 * How it binds. This library defines MPI_Bcast, MPI_Reduce, MPI_Allreduce
 * and the others below (and, for Open MPI, the Fortran entry points below)
 * with default visibility. The dynamic linker searches the preloaded objects
 * before the application's libmpi, so the application and every library that
 * calls them through the PLT bind to these definitions. libtopocoll itself
 * calls PMPI_* only, so nothing recurses.
 *
 * C: MPI_Bcast, MPI_Reduce, MPI_Allreduce, MPI_Barrier, MPI_Allgather,
 * MPI_Allgatherv, MPI_Gather, MPI_Gatherv, MPI_Scatter, MPI_Scatterv,
 * MPI_Reduce_scatter_block, MPI_Reduce_scatter, MPI_Scan, MPI_Exscan,
 * MPI_Alltoall, MPI_Alltoallv (Fortran: the same names, as below). NOT
 * intercepted (the MPI's own runs them): MPI_Alltoallw, MPI_Reduce_local, the
 * nonblocking and persistent collectives (MPI_Ibcast, MPI_Reduce_init, ...)
 * and the neighbourhood ones.
 * Also the MPI-4 large-count variants (MPI_Bcast_c, ...) of the operations listed
 * at the end of the file, where the MPI declares them.
 *
 * Fortran, Open MPI (checked with nm -D and objdump on 4.1.4).
 * libmpi_mpifh.so's mpi_bcast_ and friends call PMPI_Bcast in C, bypassing a
 * C-only shim, so every Fortran name it exports is defined here too (shown
 * for bcast; reduce and allreduce have the same set):
 *   mpif.h and `use mpi`       mpi_bcast_ (gfortran), mpi_bcast, mpi_bcast__,
 *                              MPI_BCAST (other compilers' manglings)
 *   `use mpi_f08`              mpi_bcast_f08_ (libmpi_usempif08.so, the wrapper
 *                              gfortran calls); MPI_Bcast_f08 and MPI_Bcast_f
 *                              (aliases in libmpi_mpifh.so that an f08 module
 *                              built without wrappers binds to directly)
 * All names of one operation are, in Open MPI <= 4, one function with one ABI
 * (ompi_bcast_f, ompi_reduce_f, ompi_allreduce_f):
 *   bcast      (void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *root,
 *               MPI_Fint *comm, MPI_Fint *ierr)
 *   reduce     (void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *type,
 *               MPI_Fint *op, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr)
 *   allreduce  as reduce without root
 * where for mpi_f08 TYPE(MPI_Datatype)/TYPE(MPI_Op)/TYPE(MPI_Comm) are
 * BIND(C) structs holding one INTEGER, so the pointer to the struct is a
 * pointer to the handle, and the OPTIONAL ierror arrives as NULL when absent.
 * Buffers are plain addresses: Open MPI 4's f08 wrappers declare them
 * assumed-size ("mpi_f08 subarrays: no" in ompi_info), so a non-contiguous
 * section arrives as gfortran's contiguous temporary. Open MPI 5 passes f08
 * buffers as descriptors under other names; the f08 names are therefore
 * defined for Open MPI <= 4 only (later versions: mpi_f08 not intercepted).
 * The PMPI_/pmpi_ Fortran names are of course left alone.
 *
 * Fortran sentinels, Open MPI. MPI_BOTTOM and MPI_IN_PLACE from Fortran are
 * not the C constants but the addresses of common blocks,
 * mpi_fortran_bottom_ and mpi_fortran_in_place_ (the name follows the
 * compiler's mangling; libmpi.so exports the one it was built with, and mpif.h,
 * `use mpi` and `use mpi_f08` all name the same block). ompi_reduce_f
 * compares sendbuf with &mpi_fortran_in_place_ and then with
 * &mpi_fortran_bottom_, and recvbuf with &mpi_fortran_bottom_ (read off its
 * GLOB_DAT relocations), and so does this file: all four manglings are
 * referenced weakly, and a match becomes MPI_IN_PLACE or MPI_BOTTOM exactly as
 * a C caller would have passed it. The addresses compared are those the
 * dynamic linker bound, i.e. the same block the application and libmpi_mpifh
 * use. MPI_IN_PLACE is not valid for Bcast.
 *
 * Fortran handles become C handles with PMPI_Comm_f2c, PMPI_Type_f2c and
 * PMPI_Op_f2c, as ompi_reduce_f does. An op made by MPI_Op_create in Fortran
 * keeps its Fortran calling convention inside the MPI: TC_Reduce applies such
 * ops only through PMPI_Reduce_local or PMPI_Reduce, which call it correctly.
 *
 * Fortran, MPICH (checked on 4.0.2): libmpichfort.so's mpi_bcast_,
 * mpi_reduce_, mpi_allreduce_ (all manglings, including pmpi_*_) and the
 * mpi_f08 entries mpi_*_f08ts_ call the C MPI_Bcast / MPI_Reduce /
 * MPI_Allreduce through the PLT, not PMPI_*, after MPICH has converted the
 * handles, its own sentinels (MPIR_F_MPI_IN_PLACE and MPIR_F_MPI_BOTTOM from
 * the mpifcmb/mpipriv common blocks; MPIR_F08_MPI_IN_PLACE and
 * MPIR_F08_MPI_BOTTOM for mpi_f08) and (f08) descriptors. The C symbols are
 * therefore enough and no Fortran symbol is defined for MPICH or other MPIs: a
 * second conversion here could only get a sentinel wrong. Likewise MPICH's
 * mpi_*_f08ts_large_ (INTEGER(MPI_COUNT_KIND) counts) call the C MPI_*_c
 * large-count functions (defined at the end of the file, where the MPI has
 * them). The exception is MPI_Barrier from mpi_f08:
 * mpi_barrier_f08_ (no buffer, so not a "ts" wrapper) calls PMPI_Barrier
 * directly, so that one Fortran name is defined for MPICH too (its argument
 * is the handle's integer, as in Open MPI's f08 ABI).
 */
#include <mpi.h>
#include <stddef.h>
#include <stdlib.h>

#include "topocoll.h"

#define TC_PMPI_EXPORT __attribute__((visibility("default")))

TC_PMPI_EXPORT int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root,
                             MPI_Comm comm);

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    return TC_Bcast(buffer, count, datatype, root, comm);
}

TC_PMPI_EXPORT int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                              MPI_Op op, int root, MPI_Comm comm);

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm)
{
    return TC_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
}

TC_PMPI_EXPORT int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count,
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm)
{
    return TC_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

TC_PMPI_EXPORT int MPI_Barrier(MPI_Comm comm);
int MPI_Barrier(MPI_Comm comm)
{
    return TC_Barrier(comm);
}

TC_PMPI_EXPORT int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                 MPI_Comm comm);
int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return TC_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

TC_PMPI_EXPORT int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, const int recvcounts[], const int displs[],
                                  MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return TC_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
}

TC_PMPI_EXPORT int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return TC_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

TC_PMPI_EXPORT int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                 MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                 const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm)
{
    return TC_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                        recvtype, comm);
}

TC_PMPI_EXPORT int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                              MPI_Comm comm);
int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return TC_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

TC_PMPI_EXPORT int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, const int recvcounts[], const int displs[],
                               MPI_Datatype recvtype, int root, MPI_Comm comm);
int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm)
{
    return TC_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                      comm);
}

TC_PMPI_EXPORT int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                               MPI_Comm comm);
int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return TC_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

TC_PMPI_EXPORT int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                                MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                MPI_Datatype recvtype, int root, MPI_Comm comm);
int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm)
{
    return TC_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                       comm);
}

/* Fortran MPI_Barrier (both ABIs: the communicator handle as an integer). */
static void tc_pmpi_barrier_f(MPI_Fint *comm, MPI_Fint *ierr)
{
    int rc = TC_Barrier(PMPI_Comm_f2c(*comm));
    if (ierr != NULL)
        *ierr = (MPI_Fint)rc;
}

#define TC_PMPI_BARRIER_ALIAS(name)                                                                \
    TC_PMPI_EXPORT void name(MPI_Fint *comm, MPI_Fint *ierr)                                       \
        __attribute__((alias("tc_pmpi_barrier_f")))
#if defined(OPEN_MPI) && OPEN_MPI

/* Weak: only the mangling Open MPI was built with exists; the others are NULL. */
extern char mpi_fortran_bottom __attribute__((weak));
extern char mpi_fortran_bottom_ __attribute__((weak));
extern char mpi_fortran_bottom__ __attribute__((weak));
extern char MPI_FORTRAN_BOTTOM __attribute__((weak));
extern char mpi_fortran_in_place __attribute__((weak));
extern char mpi_fortran_in_place_ __attribute__((weak));
extern char mpi_fortran_in_place__ __attribute__((weak));
extern char MPI_FORTRAN_IN_PLACE __attribute__((weak));

static int tc_pmpi_is_fortran_bottom(const void *buffer)
{
    const void *const bottoms[] = {&mpi_fortran_bottom, &mpi_fortran_bottom_, &mpi_fortran_bottom__,
                                   &MPI_FORTRAN_BOTTOM};
    for (size_t i = 0; i < sizeof bottoms / sizeof bottoms[0]; i++)
        if (bottoms[i] != NULL && buffer == bottoms[i])
            return 1;
    return 0;
}

static int tc_pmpi_is_fortran_in_place(const void *buffer)
{
    const void *const in_places[] = {&mpi_fortran_in_place, &mpi_fortran_in_place_,
                                     &mpi_fortran_in_place__, &MPI_FORTRAN_IN_PLACE};
    for (size_t i = 0; i < sizeof in_places / sizeof in_places[0]; i++)
        if (in_places[i] != NULL && buffer == in_places[i])
            return 1;
    return 0;
}

/* A Fortran send buffer as C sees it: MPI_IN_PLACE checked first, as
 * ompi_reduce_f does. */
static const void *tc_pmpi_fortran_sendbuf(const void *buffer)
{
    if (tc_pmpi_is_fortran_in_place(buffer))
        return MPI_IN_PLACE;
    if (tc_pmpi_is_fortran_bottom(buffer))
        return MPI_BOTTOM;
    return buffer;
}

static void *tc_pmpi_fortran_recvbuf(void *buffer)
{
    return tc_pmpi_is_fortran_bottom(buffer) ? MPI_BOTTOM : buffer;
}

/* The Fortran ABIs of the names below (see the top of the file). */
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

static void tc_pmpi_reduce_f(void *sendbuf, void *recvbuf, MPI_Fint *count, MPI_Fint *datatype,
                             MPI_Fint *op, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr)
{
    int rc =
        TC_Reduce(tc_pmpi_fortran_sendbuf(sendbuf), tc_pmpi_fortran_recvbuf(recvbuf), (int)*count,
                  PMPI_Type_f2c(*datatype), PMPI_Op_f2c(*op), (int)*root, PMPI_Comm_f2c(*comm));
    if (ierr != NULL)
        *ierr = (MPI_Fint)rc;
}

static void tc_pmpi_allreduce_f(void *sendbuf, void *recvbuf, MPI_Fint *count, MPI_Fint *datatype,
                                MPI_Fint *op, MPI_Fint *comm, MPI_Fint *ierr)
{
    int rc =
        TC_Allreduce(tc_pmpi_fortran_sendbuf(sendbuf), tc_pmpi_fortran_recvbuf(recvbuf),
                     (int)*count, PMPI_Type_f2c(*datatype), PMPI_Op_f2c(*op), PMPI_Comm_f2c(*comm));
    if (ierr != NULL)
        *ierr = (MPI_Fint)rc;
}

/* Allgather: (sbuf, scount, stype, rbuf, rcount, rtype, comm, ierr);
 * Allgatherv: rcount becomes (recvcounts[], displs[]), INTEGER arrays: as C
 * int arrays when MPI_Fint is an int (as ompi_allgatherv_f assumes too),
 * else converted. Sentinels as for Reduce. */
static void tc_pmpi_allgather_f(void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype,
                                void *recvbuf, MPI_Fint *recvcount, MPI_Fint *recvtype,
                                MPI_Fint *comm, MPI_Fint *ierr)
{
    int rc = TC_Allgather(tc_pmpi_fortran_sendbuf(sendbuf), (int)*sendcount,
                          PMPI_Type_f2c(*sendtype), tc_pmpi_fortran_recvbuf(recvbuf),
                          (int)*recvcount, PMPI_Type_f2c(*recvtype), PMPI_Comm_f2c(*comm));
    if (ierr != NULL)
        *ierr = (MPI_Fint)rc;
}

static void tc_pmpi_allgatherv_f(void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype,
                                 void *recvbuf, MPI_Fint *recvcounts, MPI_Fint *displs,
                                 MPI_Fint *recvtype, MPI_Fint *comm, MPI_Fint *ierr)
{
    MPI_Comm c = PMPI_Comm_f2c(*comm);
    const int *counts = (const int *)recvcounts, *disps = (const int *)displs;
    int *tmp = NULL, rc, size = 0;
    if (sizeof(MPI_Fint) != sizeof(int)) {
        PMPI_Comm_size(c, &size);
        if (!(tmp = malloc(2 * (size_t)size * sizeof *tmp))) {
            if (ierr != NULL)
                *ierr = (MPI_Fint)MPI_ERR_NO_MEM;
            return;
        }
        for (int i = 0; i < size; i++) {
            tmp[i] = (int)recvcounts[i];
            tmp[size + i] = (int)displs[i];
        }
        counts = tmp;
        disps = tmp + size;
    }
    rc =
        TC_Allgatherv(tc_pmpi_fortran_sendbuf(sendbuf), (int)*sendcount, PMPI_Type_f2c(*sendtype),
                      tc_pmpi_fortran_recvbuf(recvbuf), counts, disps, PMPI_Type_f2c(*recvtype), c);
    free(tmp);
    if (ierr != NULL)
        *ierr = (MPI_Fint)rc;
}

/* Gather / Scatter: (sbuf, scount, stype, rbuf, rcount, rtype, root, comm,
 * ierr); Gatherv: rcount becomes (recvcounts[], displs[]), Scatterv: scount
 * becomes (sendcounts[], displs[]); arrays as for Allgatherv (significant at
 * the root only, so only there converted). ompi_gather_f and ompi_scatter_f
 * convert MPI_IN_PLACE in sendbuf (gather) or recvbuf (scatter) and
 * MPI_BOTTOM in both. */
static const int *tc_pmpi_fint_array(const MPI_Fint *a, int n, int **tmp)
{
    *tmp = NULL;
    if (sizeof(MPI_Fint) == sizeof(int) || a == NULL)
        return (const int *)a;
    if (!(*tmp = malloc((size_t)(n > 0 ? n : 1) * sizeof **tmp)))
        return NULL;
    for (int i = 0; i < n; i++)
        (*tmp)[i] = (int)a[i];
    return *tmp;
}

static void tc_pmpi_gather_f(void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, void *recvbuf,
                             MPI_Fint *recvcount, MPI_Fint *recvtype, MPI_Fint *root,
                             MPI_Fint *comm, MPI_Fint *ierr)
{
    int rc = TC_Gather(tc_pmpi_fortran_sendbuf(sendbuf), (int)*sendcount, PMPI_Type_f2c(*sendtype),
                       tc_pmpi_fortran_recvbuf(recvbuf), (int)*recvcount, PMPI_Type_f2c(*recvtype),
                       (int)*root, PMPI_Comm_f2c(*comm));
    if (ierr != NULL)
        *ierr = (MPI_Fint)rc;
}

static void tc_pmpi_gatherv_f(void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, void *recvbuf,
                              MPI_Fint *recvcounts, MPI_Fint *displs, MPI_Fint *recvtype,
                              MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr)
{
    MPI_Comm c = PMPI_Comm_f2c(*comm);
    int size = 0, *t1 = NULL, *t2 = NULL;
    if (sizeof(MPI_Fint) != sizeof(int))
        PMPI_Comm_size(c, &size);
    const int *counts = tc_pmpi_fint_array(recvcounts, size, &t1);
    const int *disps = tc_pmpi_fint_array(displs, size, &t2);
    int rc = TC_Gatherv(tc_pmpi_fortran_sendbuf(sendbuf), (int)*sendcount, PMPI_Type_f2c(*sendtype),
                        tc_pmpi_fortran_recvbuf(recvbuf), counts, disps, PMPI_Type_f2c(*recvtype),
                        (int)*root, c);
    free(t1);
    free(t2);
    if (ierr != NULL)
        *ierr = (MPI_Fint)rc;
}

/* A Fortran receive buffer of a Scatter: MPI_IN_PLACE first, as ompi_scatter_f. */
static void *tc_pmpi_fortran_scatter_recvbuf(void *buffer)
{
    if (tc_pmpi_is_fortran_in_place(buffer))
        return MPI_IN_PLACE;
    return tc_pmpi_fortran_recvbuf(buffer);
}

static void tc_pmpi_scatter_f(void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, void *recvbuf,
                              MPI_Fint *recvcount, MPI_Fint *recvtype, MPI_Fint *root,
                              MPI_Fint *comm, MPI_Fint *ierr)
{
    int rc = TC_Scatter(tc_pmpi_fortran_recvbuf(sendbuf), (int)*sendcount, PMPI_Type_f2c(*sendtype),
                        tc_pmpi_fortran_scatter_recvbuf(recvbuf), (int)*recvcount,
                        PMPI_Type_f2c(*recvtype), (int)*root, PMPI_Comm_f2c(*comm));
    if (ierr != NULL)
        *ierr = (MPI_Fint)rc;
}

static void tc_pmpi_scatterv_f(void *sendbuf, MPI_Fint *sendcounts, MPI_Fint *displs,
                               MPI_Fint *sendtype, void *recvbuf, MPI_Fint *recvcount,
                               MPI_Fint *recvtype, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr)
{
    MPI_Comm c = PMPI_Comm_f2c(*comm);
    int size = 0, *t1 = NULL, *t2 = NULL;
    if (sizeof(MPI_Fint) != sizeof(int))
        PMPI_Comm_size(c, &size);
    const int *counts = tc_pmpi_fint_array(sendcounts, size, &t1);
    const int *disps = tc_pmpi_fint_array(displs, size, &t2);
    int rc = TC_Scatterv(tc_pmpi_fortran_recvbuf(sendbuf), counts, disps, PMPI_Type_f2c(*sendtype),
                         tc_pmpi_fortran_scatter_recvbuf(recvbuf), (int)*recvcount,
                         PMPI_Type_f2c(*recvtype), (int)*root, c);
    free(t1);
    free(t2);
    if (ierr != NULL)
        *ierr = (MPI_Fint)rc;
}

#define TC_PMPI_ROOTED_ALIAS(name, fn)                                                             \
    TC_PMPI_EXPORT void name(void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype,               \
                             void *recvbuf, MPI_Fint *recvcount, MPI_Fint *recvtype,               \
                             MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr)                       \
        __attribute__((alias(fn)))
#define TC_PMPI_GATHERV_ALIAS(name)                                                                \
    TC_PMPI_EXPORT void name(void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype,               \
                             void *recvbuf, MPI_Fint *recvcounts, MPI_Fint *displs,                \
                             MPI_Fint *recvtype, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr)   \
        __attribute__((alias("tc_pmpi_gatherv_f")))
#define TC_PMPI_SCATTERV_ALIAS(name)                                                               \
    TC_PMPI_EXPORT void name(void *sendbuf, MPI_Fint *sendcounts, MPI_Fint *displs,                \
                             MPI_Fint *sendtype, void *recvbuf, MPI_Fint *recvcount,               \
                             MPI_Fint *recvtype, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr)   \
        __attribute__((alias("tc_pmpi_scatterv_f")))
TC_PMPI_ROOTED_ALIAS(mpi_gather, "tc_pmpi_gather_f");
TC_PMPI_ROOTED_ALIAS(mpi_gather_, "tc_pmpi_gather_f");
TC_PMPI_ROOTED_ALIAS(mpi_gather__, "tc_pmpi_gather_f");
TC_PMPI_ROOTED_ALIAS(MPI_GATHER, "tc_pmpi_gather_f");
TC_PMPI_GATHERV_ALIAS(mpi_gatherv);
TC_PMPI_GATHERV_ALIAS(mpi_gatherv_);
TC_PMPI_GATHERV_ALIAS(mpi_gatherv__);
TC_PMPI_GATHERV_ALIAS(MPI_GATHERV);
TC_PMPI_ROOTED_ALIAS(mpi_scatter, "tc_pmpi_scatter_f");
TC_PMPI_ROOTED_ALIAS(mpi_scatter_, "tc_pmpi_scatter_f");
TC_PMPI_ROOTED_ALIAS(mpi_scatter__, "tc_pmpi_scatter_f");
TC_PMPI_ROOTED_ALIAS(MPI_SCATTER, "tc_pmpi_scatter_f");
TC_PMPI_SCATTERV_ALIAS(mpi_scatterv);
TC_PMPI_SCATTERV_ALIAS(mpi_scatterv_);
TC_PMPI_SCATTERV_ALIAS(mpi_scatterv__);
TC_PMPI_SCATTERV_ALIAS(MPI_SCATTERV);
#if OMPI_MAJOR_VERSION <= 4
TC_PMPI_ROOTED_ALIAS(mpi_gather_f08_, "tc_pmpi_gather_f");
TC_PMPI_ROOTED_ALIAS(MPI_Gather_f08, "tc_pmpi_gather_f");
TC_PMPI_ROOTED_ALIAS(MPI_Gather_f, "tc_pmpi_gather_f");
TC_PMPI_GATHERV_ALIAS(mpi_gatherv_f08_);
TC_PMPI_GATHERV_ALIAS(MPI_Gatherv_f08);
TC_PMPI_GATHERV_ALIAS(MPI_Gatherv_f);
TC_PMPI_ROOTED_ALIAS(mpi_scatter_f08_, "tc_pmpi_scatter_f");
TC_PMPI_ROOTED_ALIAS(MPI_Scatter_f08, "tc_pmpi_scatter_f");
TC_PMPI_ROOTED_ALIAS(MPI_Scatter_f, "tc_pmpi_scatter_f");
TC_PMPI_SCATTERV_ALIAS(mpi_scatterv_f08_);
TC_PMPI_SCATTERV_ALIAS(MPI_Scatterv_f08);
TC_PMPI_SCATTERV_ALIAS(MPI_Scatterv_f);
#endif

#define TC_PMPI_ALLGATHER_ALIAS(name)                                                              \
    TC_PMPI_EXPORT void name(void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype,               \
                             void *recvbuf, MPI_Fint *recvcount, MPI_Fint *recvtype,               \
                             MPI_Fint *comm, MPI_Fint *ierr)                                       \
        __attribute__((alias("tc_pmpi_allgather_f")))
#define TC_PMPI_ALLGATHERV_ALIAS(name)                                                             \
    TC_PMPI_EXPORT void name(void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype,               \
                             void *recvbuf, MPI_Fint *recvcounts, MPI_Fint *displs,                \
                             MPI_Fint *recvtype, MPI_Fint *comm, MPI_Fint *ierr)                   \
        __attribute__((alias("tc_pmpi_allgatherv_f")))
TC_PMPI_ALLGATHER_ALIAS(mpi_allgather);
TC_PMPI_ALLGATHER_ALIAS(mpi_allgather_);
TC_PMPI_ALLGATHER_ALIAS(mpi_allgather__);
TC_PMPI_ALLGATHER_ALIAS(MPI_ALLGATHER);
TC_PMPI_ALLGATHERV_ALIAS(mpi_allgatherv);
TC_PMPI_ALLGATHERV_ALIAS(mpi_allgatherv_);
TC_PMPI_ALLGATHERV_ALIAS(mpi_allgatherv__);
TC_PMPI_ALLGATHERV_ALIAS(MPI_ALLGATHERV);
#if OMPI_MAJOR_VERSION <= 4
TC_PMPI_ALLGATHER_ALIAS(mpi_allgather_f08_);
TC_PMPI_ALLGATHER_ALIAS(MPI_Allgather_f08);
TC_PMPI_ALLGATHER_ALIAS(MPI_Allgather_f);
TC_PMPI_ALLGATHERV_ALIAS(mpi_allgatherv_f08_);
TC_PMPI_ALLGATHERV_ALIAS(MPI_Allgatherv_f08);
TC_PMPI_ALLGATHERV_ALIAS(MPI_Allgatherv_f);
#endif

/* Alltoall: the Allgather's ABI (sbuf, scount, stype, rbuf, rcount, rtype,
 * comm, ierr); Alltoallv: (sbuf, scounts[], sdispls[], stype, rbuf,
 * rcounts[], rdispls[], rtype, comm, ierr), arrays as for Allgatherv (the
 * send arrays are not read with MPI_IN_PLACE). Sentinels as for Reduce. */
static void tc_pmpi_alltoall_f(void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype,
                               void *recvbuf, MPI_Fint *recvcount, MPI_Fint *recvtype,
                               MPI_Fint *comm, MPI_Fint *ierr)
{
    int rc = TC_Alltoall(tc_pmpi_fortran_sendbuf(sendbuf), (int)*sendcount,
                         PMPI_Type_f2c(*sendtype), tc_pmpi_fortran_recvbuf(recvbuf),
                         (int)*recvcount, PMPI_Type_f2c(*recvtype), PMPI_Comm_f2c(*comm));
    if (ierr != NULL)
        *ierr = (MPI_Fint)rc;
}

static void tc_pmpi_alltoallv_f(void *sendbuf, MPI_Fint *sendcounts, MPI_Fint *sdispls,
                                MPI_Fint *sendtype, void *recvbuf, MPI_Fint *recvcounts,
                                MPI_Fint *rdispls, MPI_Fint *recvtype, MPI_Fint *comm,
                                MPI_Fint *ierr)
{
    MPI_Comm c = PMPI_Comm_f2c(*comm);
    int size = 0, *t[4] = {NULL, NULL, NULL, NULL};
    const void *send = tc_pmpi_fortran_sendbuf(sendbuf);
    if (sizeof(MPI_Fint) != sizeof(int))
        PMPI_Comm_size(c, &size);
    const int *sc = send == MPI_IN_PLACE ? NULL : tc_pmpi_fint_array(sendcounts, size, &t[0]);
    const int *sd = send == MPI_IN_PLACE ? NULL : tc_pmpi_fint_array(sdispls, size, &t[1]);
    const int *rcn = tc_pmpi_fint_array(recvcounts, size, &t[2]);
    const int *rd = tc_pmpi_fint_array(rdispls, size, &t[3]);
    int rc = TC_Alltoallv(send, sc, sd, PMPI_Type_f2c(*sendtype), tc_pmpi_fortran_recvbuf(recvbuf),
                          rcn, rd, PMPI_Type_f2c(*recvtype), c);
    for (int i = 0; i < 4; i++)
        free(t[i]);
    if (ierr != NULL)
        *ierr = (MPI_Fint)rc;
}

#define TC_PMPI_ALLTOALL_ALIAS(name)                                                               \
    TC_PMPI_EXPORT void name(void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype,               \
                             void *recvbuf, MPI_Fint *recvcount, MPI_Fint *recvtype,               \
                             MPI_Fint *comm, MPI_Fint *ierr)                                       \
        __attribute__((alias("tc_pmpi_alltoall_f")))
#define TC_PMPI_ALLTOALLV_ALIAS(name)                                                              \
    TC_PMPI_EXPORT void name(void *sendbuf, MPI_Fint *sendcounts, MPI_Fint *sdispls,               \
                             MPI_Fint *sendtype, void *recvbuf, MPI_Fint *recvcounts,              \
                             MPI_Fint *rdispls, MPI_Fint *recvtype, MPI_Fint *comm,                \
                             MPI_Fint *ierr) __attribute__((alias("tc_pmpi_alltoallv_f")))
TC_PMPI_ALLTOALL_ALIAS(mpi_alltoall);
TC_PMPI_ALLTOALL_ALIAS(mpi_alltoall_);
TC_PMPI_ALLTOALL_ALIAS(mpi_alltoall__);
TC_PMPI_ALLTOALL_ALIAS(MPI_ALLTOALL);
TC_PMPI_ALLTOALLV_ALIAS(mpi_alltoallv);
TC_PMPI_ALLTOALLV_ALIAS(mpi_alltoallv_);
TC_PMPI_ALLTOALLV_ALIAS(mpi_alltoallv__);
TC_PMPI_ALLTOALLV_ALIAS(MPI_ALLTOALLV);
#if OMPI_MAJOR_VERSION <= 4
TC_PMPI_ALLTOALL_ALIAS(mpi_alltoall_f08_);
TC_PMPI_ALLTOALL_ALIAS(MPI_Alltoall_f08);
TC_PMPI_ALLTOALL_ALIAS(MPI_Alltoall_f);
TC_PMPI_ALLTOALLV_ALIAS(mpi_alltoallv_f08_);
TC_PMPI_ALLTOALLV_ALIAS(MPI_Alltoallv_f08);
TC_PMPI_ALLTOALLV_ALIAS(MPI_Alltoallv_f);
#endif

#define TC_PMPI_BCAST_ALIAS(name)                                                                  \
    TC_PMPI_EXPORT void name(void *buffer, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *root,    \
                             MPI_Fint *comm, MPI_Fint *ierr)                                       \
        __attribute__((alias("tc_pmpi_bcast_f")))
#define TC_PMPI_REDUCE_ALIAS(name)                                                                 \
    TC_PMPI_EXPORT void name(void *sendbuf, void *recvbuf, MPI_Fint *count, MPI_Fint *datatype,    \
                             MPI_Fint *op, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr)         \
        __attribute__((alias("tc_pmpi_reduce_f")))
#define TC_PMPI_ALLREDUCE_ALIAS(name)                                                              \
    TC_PMPI_EXPORT void name(void *sendbuf, void *recvbuf, MPI_Fint *count, MPI_Fint *datatype,    \
                             MPI_Fint *op, MPI_Fint *comm, MPI_Fint *ierr)                         \
        __attribute__((alias("tc_pmpi_allreduce_f")))

TC_PMPI_BCAST_ALIAS(mpi_bcast);
TC_PMPI_BCAST_ALIAS(mpi_bcast_);
TC_PMPI_BCAST_ALIAS(mpi_bcast__);
TC_PMPI_BCAST_ALIAS(MPI_BCAST);
TC_PMPI_REDUCE_ALIAS(mpi_reduce);
TC_PMPI_REDUCE_ALIAS(mpi_reduce_);
TC_PMPI_REDUCE_ALIAS(mpi_reduce__);
TC_PMPI_REDUCE_ALIAS(MPI_REDUCE);
TC_PMPI_ALLREDUCE_ALIAS(mpi_allreduce);
TC_PMPI_ALLREDUCE_ALIAS(mpi_allreduce_);
TC_PMPI_ALLREDUCE_ALIAS(mpi_allreduce__);
TC_PMPI_ALLREDUCE_ALIAS(MPI_ALLREDUCE);
TC_PMPI_BARRIER_ALIAS(mpi_barrier);
TC_PMPI_BARRIER_ALIAS(mpi_barrier_);
TC_PMPI_BARRIER_ALIAS(mpi_barrier__);
TC_PMPI_BARRIER_ALIAS(MPI_BARRIER);

#if OMPI_MAJOR_VERSION <= 4
TC_PMPI_BCAST_ALIAS(mpi_bcast_f08_);
TC_PMPI_BCAST_ALIAS(MPI_Bcast_f08);
TC_PMPI_BCAST_ALIAS(MPI_Bcast_f);
TC_PMPI_REDUCE_ALIAS(mpi_reduce_f08_);
TC_PMPI_REDUCE_ALIAS(MPI_Reduce_f08);
TC_PMPI_REDUCE_ALIAS(MPI_Reduce_f);
TC_PMPI_ALLREDUCE_ALIAS(mpi_allreduce_f08_);
TC_PMPI_ALLREDUCE_ALIAS(MPI_Allreduce_f08);
TC_PMPI_ALLREDUCE_ALIAS(MPI_Allreduce_f);
TC_PMPI_BARRIER_ALIAS(mpi_barrier_f08_);
TC_PMPI_BARRIER_ALIAS(MPI_Barrier_f08);
TC_PMPI_BARRIER_ALIAS(MPI_Barrier_f);
#endif

#endif /* OPEN_MPI */

#if defined(MPICH)
TC_PMPI_BARRIER_ALIAS(mpi_barrier_f08_);
#endif

/* ---- MPI_Reduce_scatter_block, MPI_Reduce_scatter (issue 19) ----------------
 * The same binding as the operations above: the C symbols everywhere (MPICH's
 * Fortran wrappers call them through the PLT, checked with objdump -R on
 * libmpichfort.so 4.0.2), and Open MPI's Fortran names (nm -D on 4.1.4:
 * mpi_reduce_scatter{,_block}{,_,__}, MPI_REDUCE_SCATTER{,_BLOCK},
 * mpi_reduce_scatter{,_block}_f08_ in libmpi_usempif08.so,
 * MPI_Reduce_scatter{,_block}_f{,08}), with ompi_reduce_scatter_f's ABI:
 *   reduce_scatter        (void *sbuf, void *rbuf, MPI_Fint *recvcounts,
 *                          MPI_Fint *type, MPI_Fint *op, MPI_Fint *comm,
 *                          MPI_Fint *ierr)
 *   reduce_scatter_block  as above with MPI_Fint *recvcount. */
TC_PMPI_EXPORT int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return TC_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
}

TC_PMPI_EXPORT int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return TC_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm);
}

#if defined(OPEN_MPI) && OPEN_MPI
_Static_assert(sizeof(MPI_Fint) == sizeof(int),
               "Fortran recvcounts are passed on as C int arrays (Open MPI's "
               "OMPI_ARRAY_FINT_2_INT is a cast when the sizes match)");

static void tc_pmpi_reduce_scatter_block_f(void *sendbuf, void *recvbuf, MPI_Fint *recvcount,
                                           MPI_Fint *datatype, MPI_Fint *op, MPI_Fint *comm,
                                           MPI_Fint *ierr)
{
    int rc = TC_Reduce_scatter_block(
        tc_pmpi_fortran_sendbuf(sendbuf), tc_pmpi_fortran_recvbuf(recvbuf), (int)*recvcount,
        PMPI_Type_f2c(*datatype), PMPI_Op_f2c(*op), PMPI_Comm_f2c(*comm));
    if (ierr != NULL)
        *ierr = (MPI_Fint)rc;
}

static void tc_pmpi_reduce_scatter_f(void *sendbuf, void *recvbuf, MPI_Fint *recvcounts,
                                     MPI_Fint *datatype, MPI_Fint *op, MPI_Fint *comm,
                                     MPI_Fint *ierr)
{
    int rc = TC_Reduce_scatter(tc_pmpi_fortran_sendbuf(sendbuf), tc_pmpi_fortran_recvbuf(recvbuf),
                               (const int *)recvcounts, PMPI_Type_f2c(*datatype), PMPI_Op_f2c(*op),
                               PMPI_Comm_f2c(*comm));
    if (ierr != NULL)
        *ierr = (MPI_Fint)rc;
}

#define TC_PMPI_REDUCE_SCATTER_BLOCK_ALIAS(name)                                                   \
    TC_PMPI_EXPORT void name(void *sendbuf, void *recvbuf, MPI_Fint *recvcount,                    \
                             MPI_Fint *datatype, MPI_Fint *op, MPI_Fint *comm, MPI_Fint *ierr)     \
        __attribute__((alias("tc_pmpi_reduce_scatter_block_f")))
#define TC_PMPI_REDUCE_SCATTER_ALIAS(name)                                                         \
    TC_PMPI_EXPORT void name(void *sendbuf, void *recvbuf, MPI_Fint *recvcounts,                   \
                             MPI_Fint *datatype, MPI_Fint *op, MPI_Fint *comm, MPI_Fint *ierr)     \
        __attribute__((alias("tc_pmpi_reduce_scatter_f")))

TC_PMPI_REDUCE_SCATTER_BLOCK_ALIAS(mpi_reduce_scatter_block);
TC_PMPI_REDUCE_SCATTER_BLOCK_ALIAS(mpi_reduce_scatter_block_);
TC_PMPI_REDUCE_SCATTER_BLOCK_ALIAS(mpi_reduce_scatter_block__);
TC_PMPI_REDUCE_SCATTER_BLOCK_ALIAS(MPI_REDUCE_SCATTER_BLOCK);
TC_PMPI_REDUCE_SCATTER_ALIAS(mpi_reduce_scatter);
TC_PMPI_REDUCE_SCATTER_ALIAS(mpi_reduce_scatter_);
TC_PMPI_REDUCE_SCATTER_ALIAS(mpi_reduce_scatter__);
TC_PMPI_REDUCE_SCATTER_ALIAS(MPI_REDUCE_SCATTER);
#if OMPI_MAJOR_VERSION <= 4
TC_PMPI_REDUCE_SCATTER_BLOCK_ALIAS(mpi_reduce_scatter_block_f08_);
TC_PMPI_REDUCE_SCATTER_BLOCK_ALIAS(MPI_Reduce_scatter_block_f08);
TC_PMPI_REDUCE_SCATTER_BLOCK_ALIAS(MPI_Reduce_scatter_block_f);
TC_PMPI_REDUCE_SCATTER_ALIAS(mpi_reduce_scatter_f08_);
TC_PMPI_REDUCE_SCATTER_ALIAS(MPI_Reduce_scatter_f08);
TC_PMPI_REDUCE_SCATTER_ALIAS(MPI_Reduce_scatter_f);
#endif
#endif /* OPEN_MPI */

/* ---- MPI_Scan, MPI_Exscan (issue 19) -----------------------------------------
 * As above: the C symbols everywhere (libmpichfort.so 4.0.2 calls MPI_Scan
 * and MPI_Exscan through the PLT), and Open MPI's Fortran names (nm -D on
 * 4.1.4: mpi_{scan,exscan}{,_,__}, MPI_{SCAN,EXSCAN},
 * mpi_{scan,exscan}_f08_, MPI_{Scan,Exscan}_f{,08}), whose ABI is
 * ompi_allreduce_f's. */
TC_PMPI_EXPORT int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                            MPI_Op op, MPI_Comm comm);
int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm)
{
    return TC_Scan(sendbuf, recvbuf, count, datatype, op, comm);
}

TC_PMPI_EXPORT int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                              MPI_Op op, MPI_Comm comm);
int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm)
{
    return TC_Exscan(sendbuf, recvbuf, count, datatype, op, comm);
}

#if defined(OPEN_MPI) && OPEN_MPI
static void tc_pmpi_scan_f(void *sendbuf, void *recvbuf, MPI_Fint *count, MPI_Fint *datatype,
                           MPI_Fint *op, MPI_Fint *comm, MPI_Fint *ierr)
{
    int rc = TC_Scan(tc_pmpi_fortran_sendbuf(sendbuf), tc_pmpi_fortran_recvbuf(recvbuf),
                     (int)*count, PMPI_Type_f2c(*datatype), PMPI_Op_f2c(*op), PMPI_Comm_f2c(*comm));
    if (ierr != NULL)
        *ierr = (MPI_Fint)rc;
}

static void tc_pmpi_exscan_f(void *sendbuf, void *recvbuf, MPI_Fint *count, MPI_Fint *datatype,
                             MPI_Fint *op, MPI_Fint *comm, MPI_Fint *ierr)
{
    int rc =
        TC_Exscan(tc_pmpi_fortran_sendbuf(sendbuf), tc_pmpi_fortran_recvbuf(recvbuf), (int)*count,
                  PMPI_Type_f2c(*datatype), PMPI_Op_f2c(*op), PMPI_Comm_f2c(*comm));
    if (ierr != NULL)
        *ierr = (MPI_Fint)rc;
}

#define TC_PMPI_SCAN_ALIAS(name, fn)                                                               \
    TC_PMPI_EXPORT void name(void *sendbuf, void *recvbuf, MPI_Fint *count, MPI_Fint *datatype,    \
                             MPI_Fint *op, MPI_Fint *comm, MPI_Fint *ierr)                         \
        __attribute__((alias(fn)))

TC_PMPI_SCAN_ALIAS(mpi_scan, "tc_pmpi_scan_f");
TC_PMPI_SCAN_ALIAS(mpi_scan_, "tc_pmpi_scan_f");
TC_PMPI_SCAN_ALIAS(mpi_scan__, "tc_pmpi_scan_f");
TC_PMPI_SCAN_ALIAS(MPI_SCAN, "tc_pmpi_scan_f");
TC_PMPI_SCAN_ALIAS(mpi_exscan, "tc_pmpi_exscan_f");
TC_PMPI_SCAN_ALIAS(mpi_exscan_, "tc_pmpi_exscan_f");
TC_PMPI_SCAN_ALIAS(mpi_exscan__, "tc_pmpi_exscan_f");
TC_PMPI_SCAN_ALIAS(MPI_EXSCAN, "tc_pmpi_exscan_f");
#if OMPI_MAJOR_VERSION <= 4
TC_PMPI_SCAN_ALIAS(mpi_scan_f08_, "tc_pmpi_scan_f");
TC_PMPI_SCAN_ALIAS(MPI_Scan_f08, "tc_pmpi_scan_f");
TC_PMPI_SCAN_ALIAS(MPI_Scan_f, "tc_pmpi_scan_f");
TC_PMPI_SCAN_ALIAS(mpi_exscan_f08_, "tc_pmpi_exscan_f");
TC_PMPI_SCAN_ALIAS(MPI_Exscan_f08, "tc_pmpi_exscan_f");
TC_PMPI_SCAN_ALIAS(MPI_Exscan_f, "tc_pmpi_exscan_f");
#endif
#endif /* OPEN_MPI */

/* ---- MPI-4 large counts: MPI_Bcast_c, ... (issue 19) ---------------------------
 * Defined where the MPI declares them (TOPOCOLL_HAVE_MPI_COUNT_C, a CMake
 * check: MPICH 4 yes, Open MPI 4.1 no, so nothing here for Open MPI). Each
 * calls TC_*_c (src/core/large_count.c): the library's path when every count
 * fits an int, the MPI's own PMPI_*_c otherwise (TC_STATS: pmpi_large_count).
 * Fortran: no symbol of ours. MPICH's large-count Fortran wrappers
 * (mpi_*_f08ts_large_, INTEGER(MPI_COUNT_KIND) counts) call the C MPI_*_c
 * through the PLT (objdump -R on libmpichfort.so 4.0.2), so they reach these
 * definitions. */
#ifdef TOPOCOLL_HAVE_MPI_COUNT_C
TC_PMPI_EXPORT int MPI_Bcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root,
                               MPI_Comm comm);
int MPI_Bcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    return TC_Bcast_c(buffer, count, datatype, root, comm);
}

TC_PMPI_EXPORT int MPI_Reduce_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                                MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm);
int MPI_Reduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                 MPI_Op op, int root, MPI_Comm comm)
{
    return TC_Reduce_c(sendbuf, recvbuf, count, datatype, op, root, comm);
}

TC_PMPI_EXPORT int MPI_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int MPI_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                    MPI_Op op, MPI_Comm comm)
{
    return TC_Allreduce_c(sendbuf, recvbuf, count, datatype, op, comm);
}

TC_PMPI_EXPORT int MPI_Reduce_scatter_block_c(const void *sendbuf, void *recvbuf,
                                              MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op,
                                              MPI_Comm comm);
int MPI_Reduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return TC_Reduce_scatter_block_c(sendbuf, recvbuf, recvcount, datatype, op, comm);
}

TC_PMPI_EXPORT int MPI_Reduce_scatter_c(const void *sendbuf, void *recvbuf,
                                        const MPI_Count recvcounts[], MPI_Datatype datatype,
                                        MPI_Op op, MPI_Comm comm);
int MPI_Reduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return TC_Reduce_scatter_c(sendbuf, recvbuf, recvcounts, datatype, op, comm);
}

TC_PMPI_EXPORT int MPI_Scan_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int MPI_Scan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
               MPI_Op op, MPI_Comm comm)
{
    return TC_Scan_c(sendbuf, recvbuf, count, datatype, op, comm);
}

TC_PMPI_EXPORT int MPI_Exscan_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int MPI_Exscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                 MPI_Op op, MPI_Comm comm)
{
    return TC_Exscan_c(sendbuf, recvbuf, count, datatype, op, comm);
}

/* Allgather(v), Gather, Scatter. MPI_Gatherv_c and MPI_Scatterv_c are not
 * defined (the MPI's own runs them): see src/core/large_count.c. */
TC_PMPI_EXPORT int MPI_Allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                   void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                   MPI_Comm comm);
int MPI_Allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                    MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return TC_Allgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

TC_PMPI_EXPORT int MPI_Allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                    void *recvbuf, const MPI_Count recvcounts[],
                                    const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                     MPI_Comm comm)
{
    return TC_Allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                           comm);
}

TC_PMPI_EXPORT int MPI_Gather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                                MPI_Comm comm);
int MPI_Gather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                 MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return TC_Gather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

TC_PMPI_EXPORT int MPI_Scatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                 int root, MPI_Comm comm);
int MPI_Scatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return TC_Scatter_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

/* MPI_Alltoall_c; MPI_Alltoallv_c is not defined (see large_count.c). */
TC_PMPI_EXPORT int MPI_Alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                  MPI_Comm comm);
int MPI_Alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return TC_Alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
#endif /* TOPOCOLL_HAVE_MPI_COUNT_C */
