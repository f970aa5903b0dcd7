! An unmodified Fortran MPI program calling MPI_Reduce and MPI_Allreduce,
! built three times: with include 'mpif.h' (default), with `use mpi`
! (-DTC_USE_MPI) and with `use mpi_f08` (-DTC_USE_MPI_F08). run_with_stats.sh
! runs it with LD_PRELOAD=libtopocoll_pmpi.so and checks from TC_STATS=1
! output that its calls went through the library; the program prints how many
! of each it made for that check.
!
! Every rank's contribution is value_of(rank, index, iteration), so every rank
! computes the expected result on its own: INTEGER with MPI_SUM, DOUBLE
! PRECISION with MPI_MAX, REAL with MPI_SUM (small integers: exact in any
! order), and a user op made by MPI_Op_create from a Fortran subroutine
! (x op y = x + y + 1, so its result differs from MPI_SUM's), registered once
! as commutative and once as not. Reduce runs at every root with and without
! MPI_IN_PLACE (Fortran's MPI_IN_PLACE is a common block, which the shim must
! recognise), Allreduce with and without MPI_IN_PLACE, from 1 element to more
! than 0.5 MiB.

module tc_reduce_f_ops
#if defined(TC_USE_MPI_F08)
    use mpi_f08
#endif
    implicit none
contains
#if defined(TC_USE_MPI_F08)
    subroutine plus_one(invec, inoutvec, len, datatype)
        use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
        type(c_ptr), value :: invec, inoutvec
        integer :: len
        type(MPI_Datatype) :: datatype
        integer, pointer :: a(:), b(:)
        call c_f_pointer(invec, a, [len])
        call c_f_pointer(inoutvec, b, [len])
        b = a + b + 1
    end subroutine plus_one
#else
    subroutine plus_one(invec, inoutvec, len, datatype)
        integer :: len, datatype
        integer :: invec(len), inoutvec(len)
        inoutvec = invec + inoutvec + 1
    end subroutine plus_one
#endif
end module tc_reduce_f_ops

program reduce_f
    use tc_reduce_f_ops
    use tc_pmpi_f
#include "tc_pmpi_f.inc"
    TC_HANDLE(MPI_Comm) :: comm
    TC_HANDLE(MPI_Op) :: op_plus1, op_plus1_nc
    integer, parameter :: nsizes = 3
    integer, parameter :: sizes(nsizes) = [1, 1000, 140001]
    integer, allocatable :: isend(:), irecv(:)
    double precision, allocatable :: dsend(:), drecv(:)
    real, allocatable :: rsend(:), rrecv(:)
    integer :: rank, nprocs, ierr, iter, s, errors
    integer :: reduces, allreduces

    errors = 0
    reduces = 0
    allreduces = 0
    call tc_pmpi_f_init('reduce_f', rank, nprocs)

    allocate (isend(sizes(nsizes)), irecv(sizes(nsizes)), dsend(sizes(nsizes)), &
              drecv(sizes(nsizes)), rsend(sizes(nsizes)), rrecv(sizes(nsizes)))
    call MPI_Op_create(plus_one, .true., op_plus1, ierr)
    call MPI_Op_create(plus_one, .false., op_plus1_nc, ierr)
    call MPI_Comm_dup(MPI_COMM_WORLD, comm, ierr)
    do iter = 0, 1
        do s = 1, nsizes
            call check_int_sum(sizes(s))
            call check_double_max(sizes(s))
            call check_real_sum(sizes(s))
            call check_user(sizes(s), op_plus1, 'user op')
            call check_user(sizes(s), op_plus1_nc, 'non-commutative user op')
        end do
    end do
    call MPI_Comm_free(comm, ierr)
    call MPI_Op_free(op_plus1, ierr)
    call MPI_Op_free(op_plus1_nc, ierr)

    ! The tally goes through the shim too, so it is counted.
    allreduces = allreduces + 1
    write (*, '(a,i0,a,i0,a,i0,a,i0)') 'tc-pmpi-test rank=', rank, ' reduces=', reduces, &
        ' allreduces=', allreduces, ' errors=', errors
    call tc_pmpi_f_finish(errors)

contains

    ! In [-1000, 1000]: sums over a few ranks stay exact in REAL.
    integer function value_of(r, i, it)
        integer, intent(in) :: r, i, it
        value_of = int(modulo(int(r, 8) * 2654435761_8 + int(i, 8) * 40503_8 + int(it, 8) * 16777259_8, &
                              2001_8)) - 1000
    end function value_of

    integer function int_sum(i)
        integer, intent(in) :: i
        integer :: r
        int_sum = 0
        do r = 0, nprocs - 1
            int_sum = int_sum + value_of(r, i, iter)
        end do
    end function int_sum

    subroutine fail(what, root, n, at)
        character(len=*), intent(in) :: what
        integer, intent(in) :: root, n, at
        errors = errors + 1
        if (errors <= 10) write (0, '(a,i0,a,a,a,i0,a,i0,a,i0,a,i0)') 'reduce_f: rank ', rank, ': ', &
            what, ' root=', root, ' n=', n, ' iter=', iter, ': wrong at ', at
    end subroutine fail

    ! Reduce at every root (plain, then MPI_IN_PLACE at the root), then
    ! Allreduce plain and in place; iteration 1 uses the duplicate and omits
    ! the f08 OPTIONAL ierror.
    subroutine check_int_sum(n)
        integer, intent(in) :: n
        integer :: i, root, in_place, rc
        do in_place = 0, 1
            do root = 0, nprocs - 1
                do i = 1, n
                    isend(i) = value_of(rank, i, iter)
                    irecv(i) = -huge(0)
                end do
                reduces = reduces + 1
                rc = MPI_SUCCESS
                if (in_place == 1 .and. rank == root) then
                    irecv(1:n) = isend(1:n)
                    if (iter == 0) then
                        call MPI_Reduce(MPI_IN_PLACE, irecv, n, MPI_INTEGER, MPI_SUM, root, MPI_COMM_WORLD, rc)
                    else
                        call MPI_Reduce(MPI_IN_PLACE, irecv, n, MPI_INTEGER, MPI_SUM, root, comm, rc)
                    end if
                else if (iter == 0) then
                    call MPI_Reduce(isend, irecv, n, MPI_INTEGER, MPI_SUM, root, MPI_COMM_WORLD, rc)
                else
#if defined(TC_USE_MPI_F08)
                    call MPI_Reduce(isend, irecv, n, MPI_INTEGER, MPI_SUM, root, comm)
#else
                    call MPI_Reduce(isend, irecv, n, MPI_INTEGER, MPI_SUM, root, comm, rc)
#endif
                end if
                if (rc /= MPI_SUCCESS) call fail('MPI_Reduce ierr', root, n, -1)
                if (rank == root) then
                    do i = 1, n
                        if (irecv(i) /= int_sum(i)) then
                            if (in_place == 1) then
                                call fail('MPI_Reduce in place MPI_INTEGER/MPI_SUM', root, n, i)
                            else
                                call fail('MPI_Reduce MPI_INTEGER/MPI_SUM', root, n, i)
                            end if
                            exit
                        end if
                    end do
                end if
            end do

            do i = 1, n
                isend(i) = value_of(rank, i, iter)
                irecv(i) = -huge(0)
            end do
            allreduces = allreduces + 1
            if (in_place == 1) then
                irecv(1:n) = isend(1:n)
                call MPI_Allreduce(MPI_IN_PLACE, irecv, n, MPI_INTEGER, MPI_SUM, comm, ierr)
            else
                call MPI_Allreduce(isend, irecv, n, MPI_INTEGER, MPI_SUM, comm, ierr)
            end if
            do i = 1, n
                if (irecv(i) /= int_sum(i)) then
                    call fail('MPI_Allreduce MPI_INTEGER/MPI_SUM', in_place, n, i)
                    exit
                end if
            end do
        end do
    end subroutine check_int_sum

    subroutine check_double_max(n)
        integer, intent(in) :: n
        integer :: i, r, root
        double precision :: want
        root = modulo(iter + 1, nprocs)
        do i = 1, n
            dsend(i) = dble(value_of(rank, i, iter)) / 8.0d0
            drecv(i) = -1.0d300
        end do
        reduces = reduces + 1
        if (rank == root) then
            drecv(1:n) = dsend(1:n)
            call MPI_Reduce(MPI_IN_PLACE, drecv, n, MPI_DOUBLE_PRECISION, MPI_MAX, root, comm, ierr)
        else
            call MPI_Reduce(dsend, drecv, n, MPI_DOUBLE_PRECISION, MPI_MAX, root, comm, ierr)
        end if
        allreduces = allreduces + 1
        ! count 0: must touch neither buffer (the result checked below included)
        call MPI_Allreduce(dsend, drecv, 0, MPI_DOUBLE_PRECISION, MPI_MAX, comm, ierr)
        do i = 1, n
            want = -1.0d300
            do r = 0, nprocs - 1
                want = max(want, dble(value_of(r, i, iter)) / 8.0d0)
            end do
            if (rank == root .and. drecv(i) /= want) then
                call fail('MPI_Reduce in place MPI_DOUBLE_PRECISION/MPI_MAX', root, n, i)
                exit
            end if
        end do
        do i = 1, n
            if (dsend(i) /= dble(value_of(rank, i, iter)) / 8.0d0) then
                call fail('count 0 MPI_Allreduce touched the buffer', -1, n, i)
                exit
            end if
        end do
    end subroutine check_double_max

    subroutine check_real_sum(n)
        integer, intent(in) :: n
        integer :: i
        do i = 1, n
            rsend(i) = real(value_of(rank, i, iter))
            rrecv(i) = -1.0e30
        end do
        allreduces = allreduces + 1
        call MPI_Allreduce(rsend, rrecv, n, MPI_REAL, MPI_SUM, comm, ierr)
        do i = 1, n
            if (rrecv(i) /= real(int_sum(i))) then
                call fail('MPI_Allreduce MPI_REAL/MPI_SUM', -1, n, i)
                exit
            end if
        end do
    end subroutine check_real_sum

    subroutine check_user(n, op, what)
        integer, intent(in) :: n
#if defined(TC_USE_MPI_F08)
        type(MPI_Op), intent(in) :: op
#else
        integer, intent(in) :: op
#endif
        character(len=*), intent(in) :: what
        integer :: i, root
        ! x op y = x + y + 1 over nprocs operands: the sum plus nprocs - 1
        root = modulo(iter, nprocs)
        do i = 1, n
            isend(i) = value_of(rank, i, iter)
            irecv(i) = -huge(0)
        end do
        reduces = reduces + 1
        call MPI_Reduce(isend, irecv, n, MPI_INTEGER, op, root, comm, ierr)
        if (rank == root) then
            do i = 1, n
                if (irecv(i) /= int_sum(i) + nprocs - 1) then
                    call fail('MPI_Reduce ' // what, root, n, i)
                    exit
                end if
            end do
        end if
        irecv(1:n) = isend(1:n)
        allreduces = allreduces + 1
        call MPI_Allreduce(MPI_IN_PLACE, irecv, n, MPI_INTEGER, op, comm, ierr)
        do i = 1, n
            if (irecv(i) /= int_sum(i) + nprocs - 1) then
                call fail('MPI_Allreduce in place ' // what, -1, n, i)
                exit
            end if
        end do
    end subroutine check_user

end program reduce_f
