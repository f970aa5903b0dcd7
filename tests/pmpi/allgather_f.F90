! An unmodified Fortran MPI program calling MPI_Allgather, MPI_Allgatherv,
! MPI_Gather, MPI_Gatherv, MPI_Scatter and MPI_Scatterv,
! built with include 'mpif.h' (default), `use mpi` (-DTC_USE_MPI) and
! `use mpi_f08` (-DTC_USE_MPI_F08). run_with_stats.sh runs it with
! LD_PRELOAD=libtopocoll_pmpi.so and checks from TC_STATS=1 output that each
! call went through the library's shared-memory path.
!
! Block j holds value_of(j, i, iter), computed by every rank on its own, into
! a poisoned buffer: INTEGER blocks of 1 to 70001 elements, MPI_IN_PLACE
! (Fortran's MPI_IN_PLACE is a common block the shim must recognise), and
! Allgatherv with reversed displacements and a gap after every block; the
! rooted ones at every root, in place at the root (a Scatter's MPI_IN_PLACE
! is its receive buffer).
program allgather_f
    use tc_pmpi_f
#include "tc_pmpi_f.inc"
    TC_HANDLE(MPI_Comm) :: comm
    integer, parameter :: nsizes = 3
    integer, parameter :: sizes(nsizes) = [1, 1000, 70001]
    integer, allocatable :: sbuf(:), rbuf(:), counts(:), displs(:)
    integer :: rank, nprocs, ierr, iter, s, n, j, i, errors, at
    integer :: allgathers, allgathervs, gathers, gathervs, scatters, scattervs, root

    errors = 0
    allgathers = 0
    allgathervs = 0
    gathers = 0
    gathervs = 0
    scatters = 0
    scattervs = 0
    call tc_pmpi_f_init('allgather_f', rank, nprocs)

    allocate (sbuf(sizes(nsizes)), rbuf((sizes(nsizes) + 1) * nprocs), counts(nprocs), displs(nprocs))
    call MPI_Comm_dup(MPI_COMM_WORLD, comm, ierr)
    do iter = 0, 1
        do s = 1, nsizes
            n = sizes(s)
            do i = 1, n
                sbuf(i) = value_of(rank, i, iter)
            end do
            ! Allgather: block j at j * n.
            rbuf = -1
            allgathers = allgathers + 1
            if (iter == 0) then
                call MPI_Allgather(sbuf, n, MPI_INTEGER, rbuf, n, MPI_INTEGER, MPI_COMM_WORLD, ierr)
            else
#if defined(TC_USE_MPI_F08)
                call MPI_Allgather(sbuf, n, MPI_INTEGER, rbuf, n, MPI_INTEGER, comm)
#else
                call MPI_Allgather(sbuf, n, MPI_INTEGER, rbuf, n, MPI_INTEGER, comm, ierr)
#endif
            end if
            do j = 0, nprocs - 1
                counts(j + 1) = n
                displs(j + 1) = j * n
            end do
            call check('MPI_Allgather', n)
            ! In place.
            rbuf = -1
            do i = 1, n
                rbuf(rank * n + i) = value_of(rank, i, iter)
            end do
            allgathers = allgathers + 1
            call MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, n, MPI_INTEGER, comm, ierr)
            call check('MPI_Allgather in place', n)
            ! Allgatherv: reversed blocks, a gap of one after each.
            at = 0
            do j = nprocs - 1, 0, -1
                displs(j + 1) = at
                at = at + n + 1
            end do
            rbuf = -1
            allgathervs = allgathervs + 1
            call MPI_Allgatherv(sbuf, n, MPI_INTEGER, rbuf, counts, displs, MPI_INTEGER, comm, ierr)
            call check('MPI_Allgatherv', n)
            do root = 0, nprocs - 1
                call rooted(n)
            end do
        end do
    end do
    call MPI_Comm_free(comm, ierr)

    write (*, '(a,i0,a,i0,a,i0,a,i0,a,i0,a,i0,a,i0,a,i0)') 'tc-pmpi-test rank=', rank, &
        ' allgathers=', allgathers, ' allgathervs=', allgathervs, ' gathers=', gathers, &
        ' gathervs=', gathervs, ' scatters=', scatters, ' scattervs=', scattervs, &
        ' allreduces=1 errors=', errors
    call tc_pmpi_f_finish(errors)

contains

    integer function value_of(r, i, it)
        integer, intent(in) :: r, i, it
        value_of = int(modulo(int(r, 8) * 2654435761_8 + int(i, 8) * 40503_8 + int(it, 8) * 16777259_8, &
                              2147483647_8))
    end function value_of

    ! Every block at its displacement; everything else still -1.
    subroutine check(what, nn)
        character(len=*), intent(in) :: what
        integer, intent(in) :: nn
        integer :: jj, ii, k, covered
        if (ierr /= MPI_SUCCESS) call fail(what, nn, -1)
        covered = 0
        do jj = 0, nprocs - 1
            do ii = 1, nn
                if (rbuf(displs(jj + 1) + ii) /= value_of(jj, ii, iter)) then
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

    ! Gather (in place at the root), Gatherv (reversed, gaps), Scatter (in
    ! place at the root), Scatterv, at root `root`.
    subroutine rooted(nn)
        integer, intent(in) :: nn
        integer :: jj, ii, at2
        do jj = 0, nprocs - 1
            counts(jj + 1) = nn
            displs(jj + 1) = jj * nn
        end do
        rbuf = -1
        if (rank == root) then
            do ii = 1, nn
                rbuf(rank * nn + ii) = value_of(rank, ii, iter)
            end do
            gathers = gathers + 1
            call MPI_Gather(MPI_IN_PLACE, nn, MPI_INTEGER, rbuf, nn, MPI_INTEGER, root, comm, ierr)
            call check('MPI_Gather in place', nn)
        else
            gathers = gathers + 1
            call MPI_Gather(sbuf, nn, MPI_INTEGER, rbuf, nn, MPI_INTEGER, root, comm, ierr)
            if (ierr /= MPI_SUCCESS) call fail('MPI_Gather', nn, -1)
        end if
        at2 = 0
        do jj = nprocs - 1, 0, -1
            displs(jj + 1) = at2
            at2 = at2 + nn + 1
        end do
        rbuf = -1
        gathervs = gathervs + 1
        call MPI_Gatherv(sbuf, nn, MPI_INTEGER, rbuf, counts, displs, MPI_INTEGER, root, comm, ierr)
        if (rank == root) call check('MPI_Gatherv', nn)
        ! Scatter: the root's rbuf holds every block (as after a gather).
        if (rank == root) then
            do jj = 0, nprocs - 1
                do ii = 1, nn
                    rbuf(displs(jj + 1) + ii) = value_of(jj, ii, iter)
                end do
            end do
        end if
        sbuf(1:nn) = -1
        scattervs = scattervs + 1
        call MPI_Scatterv(rbuf, counts, displs, MPI_INTEGER, sbuf, nn, MPI_INTEGER, root, comm, ierr)
        call check_own('MPI_Scatterv', nn)
        do jj = 0, nprocs - 1
            displs(jj + 1) = jj * nn
            do ii = 1, nn
                rbuf(jj * nn + ii) = value_of(jj, ii, iter)
            end do
        end do
        sbuf(1:nn) = -1
        scatters = scatters + 1
        if (rank == root) then
            call MPI_Scatter(rbuf, nn, MPI_INTEGER, MPI_IN_PLACE, nn, MPI_INTEGER, root, comm, ierr)
            if (ierr /= MPI_SUCCESS) call fail('MPI_Scatter in place', nn, -1)
            do ii = 1, nn
                sbuf(ii) = value_of(rank, ii, iter)
            end do
        else
            call MPI_Scatter(rbuf, nn, MPI_INTEGER, sbuf, nn, MPI_INTEGER, root, comm, ierr)
        end if
        call check_own('MPI_Scatter', nn)
        ! The next cases expect sbuf to hold our own block.
        do ii = 1, nn
            sbuf(ii) = value_of(rank, ii, iter)
        end do
    end subroutine rooted

    subroutine check_own(what, nn)
        character(len=*), intent(in) :: what
        integer, intent(in) :: nn
        integer :: ii
        if (ierr /= MPI_SUCCESS) call fail(what, nn, -1)
        do ii = 1, nn
            if (sbuf(ii) /= value_of(rank, ii, iter)) then
                call fail(what, nn, ii)
                return
            end if
        end do
    end subroutine check_own

    subroutine fail(what, nn, where)
        character(len=*), intent(in) :: what
        integer, intent(in) :: nn, where
        errors = errors + 1
        if (errors <= 10) write (0, '(a,i0,a,a,a,i0,a,i0,a,i0)') 'allgather_f: rank ', rank, ': ', &
            what, ' n=', nn, ' iter=', iter, ': wrong at ', where
    end subroutine fail
end program allgather_f
