# Configure and build the project (no tests) at TOPOCOLL_CACHELINE=LINE with -Werror
# in WORK_DIR; fail on the first error (the compiler's messages are printed).
# Driven by tests/build/CMakeLists.txt.
foreach(v SOURCE_DIR WORK_DIR LINE GENERATOR)
  if(NOT DEFINED ${v} OR "${${v}}" STREQUAL "")
    message(FATAL_ERROR "cacheline.cmake: -D${v}= is required")
  endif()
endforeach()

set(args -S ${SOURCE_DIR} -B ${WORK_DIR} -G ${GENERATOR}
  -DTOPOCOLL_CACHELINE=${LINE} -DTOPOCOLL_WERROR=ON
  -DTOPOCOLL_BUILD_TESTS=OFF -DTOPOCOLL_FORTRAN=OFF)
if(MAKE_PROGRAM)
  list(APPEND args -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM})
endif()
if(C_COMPILER)
  list(APPEND args -DCMAKE_C_COMPILER=${C_COMPILER})
endif()
if(BUILD_TYPE)
  list(APPEND args -DCMAKE_BUILD_TYPE=${BUILD_TYPE})
endif()
if(MPI)
  list(APPEND args -DTOPOCOLL_MPI=${MPI})
elseif(MPI_C_COMPILER)
  list(APPEND args -DMPI_C_COMPILER=${MPI_C_COMPILER})
endif()

execute_process(COMMAND ${CMAKE_COMMAND} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out
  ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configure at TOPOCOLL_CACHELINE=${LINE} failed:\n${out}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR} -j2 RESULT_VARIABLE rc
  OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "build at TOPOCOLL_CACHELINE=${LINE} failed:\n${out}")
endif()
message(STATUS "library, shim, tools and benchmarks build at TOPOCOLL_CACHELINE=${LINE}")
