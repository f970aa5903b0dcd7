! An unmodified Fortran MPI program calling MPI_Reduce_scatter_block,
! MPI_Reduce_scatter, MPI_Scan and MPI_Exscan, built three times: with include 'mpif.h' (default),
! with `use mpi` (-DTC_USE_MPI) and with `use mpi_f08` (-DTC_USE_MPI_F08).
! run_with_stats.sh runs it with LD_PRELOAD=libtopocoll_pmpi.so and checks
! from TC_STATS=1 output that its calls went through the library (and, from
! two processes on, its shared-memory path); the program prints how many of
! each it made.
!
! INTEGER with MPI_SUM and DOUBLE PRECISION with MPI_MAX, every rank's
! contribution value_of(rank, index, iteration), so every rank computes its
! block itself; with and without MPI_IN_PLACE (Fortran's MPI_IN_PLACE is a
! common block the shim must recognise), the v-variant with zero counts,
! from one element per process to ~0.25 MiB in all; MPI_Scan and MPI_Exscan
! of INTEGER with MPI_SUM on the same sizes, with and without MPI_IN_PLACE.

program reduce_scatter_f
    use tc_pmpi_f
#include "tc_pmpi_f.inc"
    TC_HANDLE(MPI_Comm) :: comm
    integer :: ierr, rank, np, it, i, r, b, inplace, total, first, mine
    integer :: errors, nblock, nv, nscan, nexscan, j, q, want
    integer, parameter :: nsizes = 4
    integer :: sizes(nsizes) = (/ 1, 7, 1000, 20000 /)
    integer, allocatable :: counts(:), isend(:), irecv(:)
    double precision, allocatable :: dsend(:), drecv(:)
    integer :: iwant
    double precision :: dwant

    call tc_pmpi_f_init('reduce_scatter_f', rank, np)
    comm = MPI_COMM_WORLD
    errors = 0
    nblock = 0
    nv = 0
    allocate (counts(np))
    it = 0
    do b = 1, nsizes
        do inplace = 0, 1
            it = it + 1
            ! Block variant: sizes(b) elements each.
            total = sizes(b) * np
            first = rank * sizes(b)
            mine = sizes(b)
            allocate (isend(total), irecv(total), dsend(total), drecv(total))
            do i = 1, total
                isend(i) = value_of(rank, i, it)
                dsend(i) = dble(value_of(rank, i, it + 100))
            end do
            if (inplace == 1) then
                irecv = isend
                drecv = dsend
                call MPI_Reduce_scatter_block(MPI_IN_PLACE, irecv, mine, MPI_INTEGER, MPI_SUM, &
                                              comm, ierr)
                call MPI_Reduce_scatter_block(MPI_IN_PLACE, drecv, mine, &
                                              MPI_DOUBLE_PRECISION, MPI_MAX, comm, ierr)
            else
                call MPI_Reduce_scatter_block(isend, irecv, mine, MPI_INTEGER, MPI_SUM, comm, ierr)
                call MPI_Reduce_scatter_block(dsend, drecv, mine, MPI_DOUBLE_PRECISION, MPI_MAX, &
                                              comm, ierr)
            end if
            nblock = nblock + 2
            call check(mine)
            deallocate (isend, irecv, dsend, drecv)

            ! v-variant: every third process gets nothing.
            it = it + 1
            total = 0
            first = 0
            do r = 0, np - 1
                counts(r + 1) = sizes(b) + r
                if (mod(r + b, 3) == 1) counts(r + 1) = 0
                if (r < rank) first = first + counts(r + 1)
                total = total + counts(r + 1)
            end do
            mine = counts(rank + 1)
            allocate (isend(max(total, 1)), irecv(max(total, 1)), dsend(max(total, 1)), &
                      drecv(max(total, 1)))
            do i = 1, total
                isend(i) = value_of(rank, i, it)
                dsend(i) = dble(value_of(rank, i, it + 100))
            end do
            if (inplace == 1) then
                irecv = isend
                drecv = dsend
                call MPI_Reduce_scatter(MPI_IN_PLACE, irecv, counts, MPI_INTEGER, MPI_SUM, comm, &
                                        ierr)
                call MPI_Reduce_scatter(MPI_IN_PLACE, drecv, counts, MPI_DOUBLE_PRECISION, &
                                        MPI_MAX, comm, ierr)
            else
                call MPI_Reduce_scatter(isend, irecv, counts, MPI_INTEGER, MPI_SUM, comm, ierr)
                call MPI_Reduce_scatter(dsend, drecv, counts, MPI_DOUBLE_PRECISION, MPI_MAX, &
                                        comm, ierr)
            end if
            nv = nv + 2
            call check(mine)
            deallocate (isend, irecv, dsend, drecv)
        end do
    end do

    ! Scan and Exscan: this rank's prefix of value_of(q, j, it) over q.
    nscan = 0
    nexscan = 0
    do b = 1, nsizes
        do inplace = 0, 1
            it = it + 1
            allocate (isend(sizes(b)), irecv(sizes(b)))
            do j = 1, sizes(b)
                isend(j) = value_of(rank, j, it)
            end do
            do i = 0, 1 ! 0: MPI_Scan, 1: MPI_Exscan
                irecv = isend
                if (inplace == 1) then
                    if (i == 0) call MPI_Scan(MPI_IN_PLACE, irecv, sizes(b), MPI_INTEGER, &
                                              MPI_SUM, comm, ierr)
                    if (i == 1) call MPI_Exscan(MPI_IN_PLACE, irecv, sizes(b), MPI_INTEGER, &
                                                MPI_SUM, comm, ierr)
                else
                    if (i == 0) call MPI_Scan(isend, irecv, sizes(b), MPI_INTEGER, MPI_SUM, &
                                              comm, ierr)
                    if (i == 1) call MPI_Exscan(isend, irecv, sizes(b), MPI_INTEGER, MPI_SUM, &
                                                comm, ierr)
                end if
                if (i == 0) nscan = nscan + 1
                if (i == 1) nexscan = nexscan + 1
                if (i == 1 .and. rank == 0) cycle
                do j = 1, sizes(b)
                    want = 0
                    do q = 0, rank - i
                        want = want + value_of(q, j, it)
                    end do
                    if (irecv(j) /= want) then
                        errors = errors + 1
                        print '(a,i0,a,i0,a,i0)', 'FAIL reduce_scatter_f rank ', rank, &
                            ': scan/exscan ', i, ' element ', j
                        exit
                    end if
                end do
            end do
            deallocate (isend, irecv)
        end do
    end do

    print '(a,i0,a,i0,a,i0,a,i0,a,i0,a,i0)', 'tc-pmpi-test rank=', rank, &
        ' reduce_scatter_blocks=', nblock, ' reduce_scatters=', nv, ' scans=', nscan, &
        ' exscans=', nexscan, ' errors=', errors
    call tc_pmpi_f_finish(errors)

contains

    integer function value_of(r, i, it)
        integer, intent(in) :: r, i, it
        value_of = mod(r * 7919 + i * 104729 + it * 31, 2001) - 1000
    end function value_of

    ! This rank's block of both results against the rank-ordered fold.
    subroutine check(n)
        integer, intent(in) :: n
        integer :: j, q
        do j = 1, n
            iwant = 0
            dwant = -huge(dwant)
            do q = 0, np - 1
                iwant = iwant + value_of(q, first + j, it)
                dwant = max(dwant, dble(value_of(q, first + j, it + 100)))
            end do
            if (irecv(j) /= iwant .or. drecv(j) /= dwant) then
                errors = errors + 1
                print '(a,i0,a,i0,a,i0,a,i0)', 'FAIL reduce_scatter_f rank ', rank, ': iteration ', &
                    it, ' element ', j, ' of ', n
                exit
            end if
        end do
    end subroutine check

end program reduce_scatter_f
