! An unmodified Fortran MPI program calling MPI_Alltoall and MPI_Alltoallv,
! built with include 'mpif.h' (default), `use mpi` (-DTC_USE_MPI) and
! `use mpi_f08` (-DTC_USE_MPI_F08). run_with_stats.sh runs it with
! LD_PRELOAD=libtopocoll_pmpi.so and checks from TC_STATS=1 output that each
! call went through the library's shared-memory path.
!
! The block from rank r to rank j holds value_of(r, j, i, iter), computed by
! every rank on its own, into a poisoned buffer: INTEGER blocks of 1 to 40001
! elements, MPI_IN_PLACE (Fortran's MPI_IN_PLACE is a common block the shim
! must recognise), and Alltoallv with reversed receive displacements and a
! gap after every block.
program alltoall_f
    use tc_pmpi_f
#include "tc_pmpi_f.inc"
    TC_HANDLE(MPI_Comm) :: comm
    integer, parameter :: nsizes = 3
    integer, parameter :: sizes(nsizes) = [1, 1000, 40001]
    integer, allocatable :: sbuf(:), rbuf(:), scounts(:), sdispls(:), counts(:), displs(:)
    integer :: rank, nprocs, ierr, iter, s, n, j, i, errors, at
    integer :: alltoalls, alltoallvs

    errors = 0
    alltoalls = 0
    alltoallvs = 0
    call tc_pmpi_f_init('alltoall_f', rank, nprocs)

    allocate (sbuf((sizes(nsizes) + 1) * nprocs), rbuf((sizes(nsizes) + 1) * nprocs))
    allocate (scounts(nprocs), sdispls(nprocs), counts(nprocs), displs(nprocs))
    call MPI_Comm_dup(MPI_COMM_WORLD, comm, ierr)
    do iter = 0, 1
        do s = 1, nsizes
            n = sizes(s)
            do j = 0, nprocs - 1
                do i = 1, n
                    sbuf(j * n + i) = value_of(rank, j, i, iter)
                end do
                counts(j + 1) = n
                displs(j + 1) = j * n
            end do
            ! Alltoall: block j at j * n.
            rbuf = -1
            alltoalls = alltoalls + 1
            if (iter == 0) then
                call MPI_Alltoall(sbuf, n, MPI_INTEGER, rbuf, n, MPI_INTEGER, MPI_COMM_WORLD, ierr)
            else
                call MPI_Alltoall(sbuf, n, MPI_INTEGER, rbuf, n, MPI_INTEGER, comm, ierr)
            end if
            call check('MPI_Alltoall', n)
            ! In place: the outgoing blocks in rbuf.
            rbuf = -1
            do j = 0, nprocs - 1
                do i = 1, n
                    rbuf(j * n + i) = value_of(rank, j, i, iter)
                end do
            end do
            alltoalls = alltoalls + 1
            call MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, n, MPI_INTEGER, comm, ierr)
            call check('MPI_Alltoall in place', n)
            ! Alltoallv: send blocks in order, received reversed with a gap.
            at = 0
            do j = nprocs - 1, 0, -1
                displs(j + 1) = at
                at = at + n + 1
            end do
            do j = 0, nprocs - 1
                scounts(j + 1) = n
                sdispls(j + 1) = j * n
            end do
            rbuf = -1
            alltoallvs = alltoallvs + 1
            call MPI_Alltoallv(sbuf, scounts, sdispls, MPI_INTEGER, rbuf, counts, displs, &
                               MPI_INTEGER, comm, ierr)
            call check('MPI_Alltoallv', n)
            ! Alltoallv in place (the send arrays are not significant).
            rbuf = -1
            do j = 0, nprocs - 1
                do i = 1, n
                    rbuf(displs(j + 1) + i) = value_of(rank, j, i, iter)
                end do
            end do
            alltoallvs = alltoallvs + 1
            call MPI_Alltoallv(MPI_IN_PLACE, scounts, sdispls, MPI_DATATYPE_NULL, rbuf, counts, &
                               displs, MPI_INTEGER, comm, ierr)
            call check('MPI_Alltoallv in place', n)
        end do
    end do
    call MPI_Comm_free(comm, ierr)

    write (*, '(a,i0,a,i0,a,i0,a,i0)') 'tc-pmpi-test rank=', rank, ' alltoalls=', alltoalls, &
        ' alltoallvs=', alltoallvs, ' allreduces=1 errors=', errors
    call tc_pmpi_f_finish(errors)

contains

    integer function value_of(r, dest, i, it)
        integer, intent(in) :: r, dest, i, it
        value_of = int(modulo(int(r, 8) * 2654435761_8 + int(dest, 8) * 1299709_8 + &
                              int(i, 8) * 40503_8 + int(it, 8) * 16777259_8, 2147483647_8))
    end function value_of

    ! The block from every rank jj at its displacement; everything else -1.
    subroutine check(what, nn)
        character(len=*), intent(in) :: what
        integer, intent(in) :: nn
        integer :: jj, ii, k, covered
        if (ierr /= MPI_SUCCESS) call fail(what, nn, -1)
        covered = 0
        do jj = 0, nprocs - 1
            do ii = 1, nn
                if (rbuf(displs(jj + 1) + ii) /= value_of(jj, rank, ii, iter)) then
                    call fail(what, nn, displs(jj + 1) + ii)
                    return
                end if
            end do
            covered = covered + nn
        end do
        k = 0
        do ii = 1, size(rbuf)
            if (rbuf(ii) /= -1) k = k + 1
        end do
        if (k /= covered) call fail(what // ' (gaps written)', nn, k)
    end subroutine check

    subroutine fail(what, nn, where)
        character(len=*), intent(in) :: what
        integer, intent(in) :: nn, where
        errors = errors + 1
        if (errors <= 10) write (0, '(a,i0,a,a,a,i0,a,i0,a,i0)') 'alltoall_f: rank ', rank, ': ', &
            what, ' n=', nn, ' iter=', iter, ': wrong at ', where
    end subroutine fail
end program alltoall_f
