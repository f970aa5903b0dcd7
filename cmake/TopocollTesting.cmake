# Helpers for the test suite.
#
# tc_add_unit_test(NAME SOURCES...)            plain C test, no MPI launcher
#                                              (CHECK from tests/harness/tc_unit.h)
# tc_add_mpi_test(NAME EXE NP [TIMEOUT s] [ENV k=v ...] [ARGS ...])
#   Runs EXE under the launcher of the MPI we built against. The expected
#   communicator size is passed as TC_TEST_NP so a mismatched launcher (N
#   one-process jobs) fails instead of passing. Open MPI's oversubscribe and
#   run-as-root settings go through the environment: MPICH's launcher rejects
#   those flags and ignores the variables. TC_PMPI_RACE_MIN=0: the tests
#   check the library's own algorithms, which the race against the MPI's own
#   would otherwise replace on some large calls; the race has its own tests
#   (race_*), which set it after this list (the later value wins).

set(TC_TEST_COMMON_ENV
    OMPI_ALLOW_RUN_AS_ROOT=1
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    OMPI_MCA_rmaps_base_oversubscribe=1
    OMPI_MCA_btl_vader_single_copy_mechanism=none
    OMPI_MCA_osc=^ucx,pt2pt
    OMPI_MCA_pml=ob1
    OMPI_MCA_btl=self,vader
    HYDRA_LAUNCHER=fork
    TC_WAIT_TIMEOUT=120
    TC_PMPI_RACE_MIN=0)

# tc_test_properties_apply(): the suite-wide properties by name of
# tests/ctest_properties.cmake on this directory's tests. Deferred to the end
# of each directory that adds tests through the functions below (CMake >=
# 3.19; set_tests_properties only reaches the current directory's tests).
function(tc_test_properties_apply)
  include(${PROJECT_SOURCE_DIR}/tests/ctest_properties.cmake)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(t IN LISTS tests)
    if(t MATCHES "${TC_TESTS_RUN_SERIAL}")
      set_tests_properties(${t} PROPERTIES RUN_SERIAL TRUE)
    endif()
    if(t MATCHES "${TC_TESTS_SHM_NAMED}")
      set_property(TEST ${t} APPEND PROPERTY RESOURCE_LOCK tc_shm_named)
    endif()
    if(t MATCHES "${TC_TESTS_WAITING}")
      set_tests_properties(${t} PROPERTIES PROCESSORS 1)
    endif()
    set(cost_list ${TC_TESTS_COST})
    while(cost_list)
      list(POP_FRONT cost_list re cost)
      if(t MATCHES "${re}")
        set_tests_properties(${t} PROPERTIES COST ${cost})
        get_test_property(${t} FIXTURES_REQUIRED fixtures)
        if(NOT "tc_mpi_shm" IN_LIST fixtures)
          set_property(TEST ${t} APPEND PROPERTY FIXTURES_REQUIRED tc_mpi_shm)
        endif()
        break()
      endif()
    endwhile()
    get_test_property(${t} LABELS labels)
    get_test_property(${t} TIMEOUT timeout)
    if("mpi" IN_LIST labels AND timeout AND timeout LESS TC_TESTS_MPI_TIMEOUT_MIN)
      set_tests_properties(${t} PROPERTIES TIMEOUT ${TC_TESTS_MPI_TIMEOUT_MIN})
    endif()
  endforeach()
endfunction()
macro(tc_test_properties_defer)
  get_property(_tc_deferred DIRECTORY PROPERTY TC_TEST_PROPERTIES_DEFERRED)
  if(NOT _tc_deferred AND NOT CMAKE_VERSION VERSION_LESS 3.19)
    set_property(DIRECTORY PROPERTY TC_TEST_PROPERTIES_DEFERRED TRUE)
    cmake_language(DEFER CALL tc_test_properties_apply)
  endif()
endmacro()

function(tc_add_unit_test name)
  tc_test_properties_defer()
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE topocoll_internal)
  # tc_unit.h: the unit tests' CHECK (tests/harness).
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests/harness)
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77 LABELS unit)
endfunction()

function(tc_add_mpi_test name exe np)
  tc_test_properties_defer()
  cmake_parse_arguments(T "" "TIMEOUT" "ENV;ARGS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  if(TARGET ${exe})
    set(exe_path $<TARGET_FILE:${exe}>)
  else()
    set(exe_path ${exe})
  endif()
  add_test(NAME ${name}
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${exe_path} ${T_ARGS})
  # ctest's share of the -j budget (tests/run.sh: 4 or 6 on 2 cores): 3 for
  # 5 or more processes, so no more than two such jobs share the cores.
  set(procs 2)
  if(np GREATER 4)
    set(procs 3)
  endif()
  set_tests_properties(${name} PROPERTIES
    TIMEOUT ${T_TIMEOUT}
    SKIP_RETURN_CODE 77
    LABELS mpi
    PROCESSORS ${procs}
    ENVIRONMENT "${TC_TEST_COMMON_ENV};TC_TEST_NP=${np};${T_ENV}")
endfunction()
