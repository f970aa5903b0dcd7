! An unmodified Fortran MPI program calling MPI_Bcast, built three times:
! with include 'mpif.h' (default), with `use mpi` (-DTC_USE_MPI) and with
! `use mpi_f08` (-DTC_USE_MPI_F08). run_with_stats.sh runs it with
! LD_PRELOAD=libtopocoll_pmpi.so and checks from TC_STATS=1 output that each
! of its MPI_Bcast calls went through the library; the program prints how many
! it made for that check (and its one MPI_Allreduce, the error tally, and one
! MPI_Barrier per root: the barrier's own correctness is checked in C).
!
! Each broadcast carries value_of(root, index, iteration), which every rank
! computes on its own, into a buffer the receivers poison first: INTEGER and
! DOUBLE PRECISION arrays of 1 element to more than 1 MiB, every rank as root,
! and MPI_BOTTOM with an absolute-address type (Fortran's MPI_BOTTOM is a
! common block, which the shim must recognise).
program bcast_f
    use tc_pmpi_f
#include "tc_pmpi_f.inc"
    TC_HANDLE(MPI_Comm) :: comm
    integer, parameter :: nsizes = 4
    integer, parameter :: sizes(nsizes) = [1, 5, 1000, 300007]
    integer, allocatable :: ibuf(:)
    double precision, allocatable :: dbuf(:)
    integer :: rank, nprocs, ierr, iter, s, root, errors
    integer :: bcasts, barriers

    errors = 0
    bcasts = 0
    barriers = 0
    call tc_pmpi_f_init('bcast_f', rank, nprocs)

    allocate (ibuf(sizes(nsizes)), dbuf(140000))
    call MPI_Comm_dup(MPI_COMM_WORLD, comm, ierr)
    do iter = 0, 1
        do root = 0, nprocs - 1
            do s = 1, nsizes
                call check_int(sizes(s))
            end do
            call check_double(140000)
            call check_double(3)
            call check_bottom(77)
            call MPI_Barrier(comm, ierr)
            if (ierr /= MPI_SUCCESS) call fail('MPI_Barrier', 0, 0)
            barriers = barriers + 1
        end do
    end do
    call MPI_Comm_free(comm, ierr)

    write (*, '(a,i0,a,i0,a,i0,a,i0)') 'tc-pmpi-test rank=', rank, ' bcasts=', bcasts, &
        ' barriers=', barriers, ' allreduces=1 errors=', errors
    call tc_pmpi_f_finish(errors)

contains

    ! Differs for every (root, i, iter) in range; never negative, so never a poison.
    integer function value_of(r, i, it)
        integer, intent(in) :: r, i, it
        value_of = int(modulo(int(r, 8) * 2654435761_8 + int(i, 8) * 40503_8 + int(it, 8) * 16777259_8, &
                              2147483647_8))
    end function value_of

    subroutine fail(what, n, at)
        character(len=*), intent(in) :: what
        integer, intent(in) :: n, at
        errors = errors + 1
        if (errors <= 10) write (0, '(a,i0,a,a,a,i0,a,i0,a,i0,a,i0)') 'bcast_f: rank ', rank, ': ', &
            what, ' root=', root, ' n=', n, ' iter=', iter, ': wrong at ', at
    end subroutine fail

    subroutine check_int(n)
        integer, intent(in) :: n
        integer :: i, rc
        do i = 1, n
            if (rank == root) then
                ibuf(i) = value_of(root, i, iter)
            else
                ibuf(i) = -1
            end if
        end do
        ! Alternate communicators; an f08 call without ierror exercises the
        ! shim's handling of an absent OPTIONAL argument.
        bcasts = bcasts + 1
        rc = MPI_SUCCESS
        if (iter == 0) then
            call MPI_Bcast(ibuf, n, MPI_INTEGER, root, MPI_COMM_WORLD, rc)
        else
#if defined(TC_USE_MPI_F08)
            call MPI_Bcast(ibuf, n, MPI_INTEGER, root, comm)
#else
            call MPI_Bcast(ibuf, n, MPI_INTEGER, root, comm, rc)
#endif
        end if
        if (rc /= MPI_SUCCESS) call fail('ierr', n, -1)
        do i = 1, n
            if (ibuf(i) /= value_of(root, i, iter)) then
                call fail('MPI_INTEGER', n, i)
                exit
            end if
        end do
    end subroutine check_int

    subroutine check_double(n)
        integer, intent(in) :: n
        integer :: i
        do i = 1, n
            if (rank == root) then
                dbuf(i) = dble(value_of(root, i, iter)) + 0.25d0
            else
                dbuf(i) = -1.0d0
            end if
        end do
        bcasts = bcasts + 1
        call MPI_Bcast(dbuf, n, MPI_DOUBLE_PRECISION, root, comm, ierr)
        do i = 1, n
            if (dbuf(i) /= dble(value_of(root, i, iter)) + 0.25d0) then
                call fail('MPI_DOUBLE_PRECISION', n, i)
                exit
            end if
        end do
    end subroutine check_double

    subroutine check_bottom(n)
        integer, intent(in) :: n
        ! VOLATILE: the array is only reachable through the datatype's address,
        ! so the compiler must not assume the call left it unchanged.
        integer, volatile, allocatable :: a(:)
        integer(kind=MPI_ADDRESS_KIND) :: addr(1)
        integer :: i, blen(1)
#if defined(TC_USE_MPI_F08)
        type(MPI_Datatype) :: abs_type
#else
        integer :: abs_type
#endif
        allocate (a(n))
        do i = 1, n
            if (rank == root) then
                a(i) = value_of(root, i, iter)
            else
                a(i) = -3
            end if
        end do
        blen(1) = n
        call MPI_Get_address(a, addr(1), ierr)
        call MPI_Type_create_hindexed(1, blen, addr, MPI_INTEGER, abs_type, ierr)
        call MPI_Type_commit(abs_type, ierr)
        bcasts = bcasts + 1
        call MPI_Bcast(MPI_BOTTOM, 1, abs_type, root, comm, ierr)
        call MPI_Type_free(abs_type, ierr)
        do i = 1, n
            if (a(i) /= value_of(root, i, iter)) then
                call fail('MPI_BOTTOM', n, i)
                exit
            end if
        end do
    end subroutine check_bottom

end program bcast_f
