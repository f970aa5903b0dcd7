! What the Fortran drop-in tests share: the start and the end of a test
! program, built into each program with the program's MPI interface
! (tc_pmpi_f.inc). Its MPI names stay private: the program declares its own.
module tc_pmpi_f
#include "tc_pmpi_f.inc"
    private
    public :: tc_pmpi_f_init, tc_pmpi_f_finish
contains

    ! MPI_Init, this process's rank and the size of MPI_COMM_WORLD, which
    ! must be TC_TEST_NP (a launcher of the other MPI would start NP
    ! singletons): else "prog: MPI_COMM_WORLD has N processes but TC_TEST_NP
    ! is X" and MPI_Abort.
    subroutine tc_pmpi_f_init(prog, rank, nprocs)
        character(len=*), intent(in) :: prog
        integer, intent(out) :: rank, nprocs
        character(len=32) :: np_env
        integer :: ierr, st, expected_np
        call MPI_Init(ierr)
        call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
        call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
        np_env = ''
        call get_environment_variable('TC_TEST_NP', np_env, status=st)
        expected_np = -1
        if (st == 0) read (np_env, *, iostat=st) expected_np
        if (expected_np /= nprocs) then
            write (0, '(a,a,i0,a,a)') prog, ': MPI_COMM_WORLD has ', nprocs, &
                ' processes but TC_TEST_NP is ', trim(np_env)
            call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
        end if
    end subroutine tc_pmpi_f_init

    ! After the program's "tc-pmpi-test rank=..." line: the failures of every
    ! process (one MPI_Allreduce, which the program counts), MPI_Finalize,
    ! and exit status 1 if any process failed.
    subroutine tc_pmpi_f_finish(errors)
        integer, intent(in) :: errors
        integer :: all_errors, ierr
        flush (6)
        call MPI_Allreduce(errors, all_errors, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
        call MPI_Finalize(ierr)
        if (all_errors /= 0) stop 1
    end subroutine tc_pmpi_f_finish
end module tc_pmpi_f
