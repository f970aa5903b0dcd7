! An unmodified Fortran program (`use mpi_f08`) calling the collectives with
! INTEGER(KIND=MPI_COUNT_KIND) counts, which MPI 4's mpi_f08 resolves to the
! large-count wrappers (MPICH 4.0.2: mpi_bcast_f08ts_large_, ...) that call
! the C MPI_*_c, i.e. the drop-in's definitions. Built only where the MPI has
! the _c calls (TOPOCOLL_HAVE_MPI_COUNT_C). run_with_stats.sh checks from
! TC_STATS=1 output that every MPI_Bcast went through the library's
! shared-memory path, that the reductions reached the library, and that none
! went to the MPI as a large count. Values: value_of(rank, index), computed
! by every rank itself.
program large_count_f08
    use tc_pmpi_f
    use mpi_f08
    implicit none
    integer, parameter :: n = 30000
    integer(kind=MPI_COUNT_KIND) :: cnt
    integer(kind=MPI_COUNT_KIND), allocatable :: counts(:)
    integer, allocatable :: buf(:), out(:), send(:)
    integer :: rank, nprocs, root, i, r, errors
    integer :: bcasts, reduces, allreduces, rss, scans

    errors = 0
    bcasts = 0
    reduces = 0
    allreduces = 0
    rss = 0
    scans = 0
    call tc_pmpi_f_init('large_count_f08', rank, nprocs)
    allocate (buf(n), out(n), send(n * nprocs), counts(nprocs))
    cnt = int(n, MPI_COUNT_KIND)

    do root = 0, nprocs - 1
        do i = 1, n
            buf(i) = merge(value_of(root, i), -3, rank == root)
        end do
        call MPI_Bcast(buf, cnt, MPI_INTEGER, root, MPI_COMM_WORLD)
        bcasts = bcasts + 1
        do i = 1, n
            if (buf(i) /= value_of(root, i)) then
                errors = errors + 1
                exit
            end if
        end do
        buf = [(value_of(rank, i), i = 1, n)]
        out = -3
        call MPI_Reduce(buf, out, cnt, MPI_INTEGER, MPI_SUM, root, MPI_COMM_WORLD)
        reduces = reduces + 1
        if (rank == root) call check_sum(out, nprocs, 0)
    end do
    buf = [(value_of(rank, i), i = 1, n)]
    call MPI_Allreduce(buf, out, cnt, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    allreduces = allreduces + 1
    call check_sum(out, nprocs, 0)
    call MPI_Scan(buf, out, cnt, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    scans = scans + 1
    call check_sum(out, rank + 1, 0)
    ! Reduce_scatter with an INTEGER(MPI_COUNT_KIND) recvcounts array: n each
    send = [(value_of(rank, i), i = 1, n * nprocs)]
    counts = cnt
    out = -3
    call MPI_Reduce_scatter(send, out, counts, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    rss = rss + 1
    call check_sum(out, nprocs, rank * n)

    write (*, '(a,i0,a,i0,a,i0,a,i0,a,i0,a,i0,a,i0)') 'tc-pmpi-test rank=', rank, &
        ' bcasts=', bcasts, ' reduces=', reduces, ' allreduces=', allreduces, &
        ' reduce_scatters=', rss, ' scans=', scans, ' large_counts=0 errors=', errors
    call tc_pmpi_f_finish(errors)

contains

    integer function value_of(r, i)
        integer, intent(in) :: r, i
        value_of = mod(r * 7919 + i * 37, 2001) - 1000
    end function value_of

    ! out(i) must be the sum over ranks 0 .. upto-1 of value_of(rank, off + i).
    subroutine check_sum(o, upto, off)
        integer, intent(in) :: o(:), upto, off
        integer :: j, k, want
        do j = 1, n
            want = 0
            do k = 0, upto - 1
                want = want + value_of(k, off + j)
            end do
            if (o(j) /= want) then
                write (0, '(a,i0,a,i0)') 'large_count_f08: wrong element ', j, ' rank ', rank
                errors = errors + 1
                return
            end if
        end do
    end subroutine check_sum

end program large_count_f08
