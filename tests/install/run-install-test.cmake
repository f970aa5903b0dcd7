# Install test driver: cmake [-D...] -P run-install-test.cmake
#
# Installs the (already built) top-level build tree into a scratch prefix, then
# builds a small consumer against that prefix twice -- through the CMake
# package (find_package(topocoll)) and through pkg-config with the MPI's
# compiler wrapper -- and runs the binaries under the MPI launcher. Nothing may
# come from the build tree: LD_LIBRARY_PATH/LD_PRELOAD entries pointing into it
# are dropped, and each binary must resolve libtopocoll from the prefix.
#
# Required -D variables (tests/install/CMakeLists.txt passes them all):
#   TOP_BINARY_DIR TOP_SOURCE_DIR CONSUMER_SOURCE_DIR PREFIX WORK_DIR LIBDIR
#   INCLUDEDIR EXPECT_VERSION MPI_C_COMPILER MPIEXEC_EXECUTABLE NP
#   PKG_CONFIG_EXECUTABLE GENERATOR
# Optional: CONFIG, C_COMPILER, MAKE_PROGRAM, MPIEXEC_NUMPROC_FLAG (-n),
#   SANITIZE (TOPOCOLL_SANITIZE of the main build), RUN_TIMEOUT (s, 180)
#
# Every failure is fatal and names its step.

cmake_minimum_required(VERSION 3.18)

set(tc_step "checking arguments")

# One quoted argument, so semicolons in tool output survive.
function(tc_fail msg)
  message(FATAL_ERROR "\ninstall test FAILED at step '${tc_step}':\n${msg}\n")
endfunction()

# tc_run(<OUT var> COMMAND ... [TIMEOUT s]): runs a command; fails the step on a
# non-zero exit, printing the command and everything it printed.
function(tc_run out_var)
  cmake_parse_arguments(R "" "TIMEOUT;WORKING_DIRECTORY" "COMMAND" ${ARGN})
  if(NOT R_TIMEOUT)
    set(R_TIMEOUT 600)
  endif()
  if(NOT R_WORKING_DIRECTORY)
    set(R_WORKING_DIRECTORY "${WORK_DIR}")
  endif()
  list(JOIN R_COMMAND " " cmd_text)
  message(STATUS "[${tc_step}] ${cmd_text}")
  execute_process(COMMAND ${R_COMMAND}
                  WORKING_DIRECTORY "${R_WORKING_DIRECTORY}"
                  TIMEOUT ${R_TIMEOUT}
                  RESULT_VARIABLE rc
                  OUTPUT_VARIABLE output
                  ERROR_VARIABLE output)
  if(NOT rc STREQUAL "0")
    tc_fail("command: ${cmd_text}\nexit status: ${rc}\noutput:\n${output}")
  endif()
  set(${out_var} "${output}" PARENT_SCOPE)
endfunction()

foreach(v TOP_BINARY_DIR TOP_SOURCE_DIR CONSUMER_SOURCE_DIR PREFIX WORK_DIR LIBDIR INCLUDEDIR
          EXPECT_VERSION MPI_C_COMPILER MPIEXEC_EXECUTABLE NP PKG_CONFIG_EXECUTABLE GENERATOR)
  if("${${v}}" STREQUAL "")
    tc_fail("-D${v}=... is required")
  endif()
endforeach()
if(NOT MPIEXEC_NUMPROC_FLAG)
  set(MPIEXEC_NUMPROC_FLAG -n)
endif()
if(NOT RUN_TIMEOUT)
  set(RUN_TIMEOUT 180)
endif()
if(IS_ABSOLUTE "${LIBDIR}" OR IS_ABSOLUTE "${INCLUDEDIR}")
  tc_fail("CMAKE_INSTALL_LIBDIR/INCLUDEDIR are absolute (${LIBDIR}, ${INCLUDEDIR}): \
the package could not be relocated with --prefix")
endif()
get_filename_component(TOP_BINARY_DIR "${TOP_BINARY_DIR}" REALPATH)
get_filename_component(TOP_SOURCE_DIR "${TOP_SOURCE_DIR}" REALPATH)
# Both scratch directories are wiped below, so they must live in the build tree.
foreach(d PREFIX WORK_DIR)
  get_filename_component(${d} "${${d}}" ABSOLUTE)
  string(FIND "${${d}}/" "${TOP_BINARY_DIR}/" pos)
  if(NOT pos EQUAL 0 OR "${${d}}" STREQUAL "${TOP_BINARY_DIR}")
    tc_fail("${d}=${${d}} must be a subdirectory of the build tree ${TOP_BINARY_DIR}")
  endif()
endforeach()
set(libdir "${PREFIX}/${LIBDIR}")

find_program(mpicc_path NAMES "${MPI_C_COMPILER}" NO_CACHE)
if(NOT mpicc_path)
  tc_fail("MPI compiler wrapper '${MPI_C_COMPILER}' not found")
endif()

# ---------------------------------------------------------------------------
set(tc_step "environment")
# The binaries must find the *installed* library. Drop anything that points
# into the build or source tree (a developer shell, or a test harness, may have
# set it); the checks below then show where libtopocoll really comes from.
foreach(var LD_LIBRARY_PATH LD_PRELOAD)
  if(DEFINED ENV{${var}})
    string(REPLACE ":" ";" entries "$ENV{${var}}")
    set(kept "")
    foreach(e IN LISTS entries)
      get_filename_component(real "${e}" REALPATH)
      string(FIND "${real}/" "${TOP_BINARY_DIR}/" in_build)
      string(FIND "${real}/" "${TOP_SOURCE_DIR}/" in_source)
      if(in_build EQUAL 0 OR in_source EQUAL 0 OR e MATCHES "topocoll")
        message(STATUS "[${tc_step}] dropping ${var} entry ${e}")
      elseif(NOT e STREQUAL "")
        list(APPEND kept "${e}")
      endif()
    endforeach()
    string(REPLACE ";" ":" kept "${kept}")
    set(ENV{${var}} "${kept}")
  endif()
endforeach()
# Standalone runs (outside ctest) still need the Open MPI root/oversubscribe
# settings; ctest passes the full TC_TEST_COMMON_ENV list. Environment only:
# MPICH's launcher rejects Open MPI's flags.
foreach(kv OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
           OMPI_MCA_rmaps_base_oversubscribe=1 HYDRA_LAUNCHER=fork)
  string(REPLACE "=" ";" kv "${kv}")
  list(GET kv 0 k)
  list(GET kv 1 val)
  if(NOT DEFINED ENV{${k}})
    set(ENV{${k}} "${val}")
  endif()
endforeach()
set(ENV{TC_TEST_NP} "${NP}")
# A user's pkg-config/CMake search must not pick up another topocoll.
unset(ENV{CMAKE_PREFIX_PATH})
unset(ENV{topocoll_DIR})

file(REMOVE_RECURSE "${PREFIX}" "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# ---------------------------------------------------------------------------
set(tc_step "1: cmake --install")
set(config_args "")
if(CONFIG)
  set(config_args --config "${CONFIG}")
endif()
tc_run(out COMMAND "${CMAKE_COMMAND}" --install "${TOP_BINARY_DIR}" --prefix "${PREFIX}"
       ${config_args})

# ---------------------------------------------------------------------------
set(tc_step "2: installed tree layout")
set(missing "")
foreach(f "${INCLUDEDIR}/topocoll.h"
          "${LIBDIR}/libtopocoll.so"
          "${LIBDIR}/libtopocoll.a"
          "${LIBDIR}/libtopocoll_pmpi.so"
          "${LIBDIR}/pkgconfig/topocoll.pc"
          "${LIBDIR}/cmake/topocoll/topocollConfig.cmake"
          "${LIBDIR}/cmake/topocoll/topocollConfigVersion.cmake"
          "${LIBDIR}/cmake/topocoll/topocollTargets.cmake"
          share/man/man1/topocoll-info.1
          share/man/man1/topocoll-bench.1
          share/man/man1/topocoll-logp.1
          share/man/man1/topocoll-lockbench.1
          share/man/man1/topocoll-tunables.1)
  if(NOT EXISTS "${PREFIX}/${f}")
    list(APPEND missing "${f}")
  endif()
endforeach()
# The versioned names behind the development symlinks.
string(REGEX MATCH "^[0-9]+" expect_soversion "${EXPECT_VERSION}")
foreach(lib libtopocoll libtopocoll_pmpi)
  foreach(suffix "${expect_soversion}" "${EXPECT_VERSION}")
    if(NOT EXISTS "${libdir}/${lib}.so.${suffix}")
      list(APPEND missing "${LIBDIR}/${lib}.so.${suffix}")
    endif()
  endforeach()
endforeach()
if(missing)
  file(GLOB_RECURSE present RELATIVE "${PREFIX}" "${PREFIX}/*")
  list(JOIN missing "\n  " missing)
  list(JOIN present "\n  " present)
  tc_fail("missing from ${PREFIX}:\n  ${missing}\ninstalled:\n  ${present}")
endif()

# Installed text files must not mention the build or source tree, and installed
# shared objects must not carry an RPATH/RUNPATH into it.
file(GLOB_RECURSE text_files "${libdir}/cmake/topocoll/*.cmake" "${libdir}/pkgconfig/*.pc"
     "${PREFIX}/${INCLUDEDIR}/*.h")
foreach(f IN LISTS text_files)
  file(READ "${f}" content)
  foreach(tree "${TOP_BINARY_DIR}" "${TOP_SOURCE_DIR}")
    string(FIND "${content}" "${tree}" pos)
    if(NOT pos EQUAL -1)
      tc_fail("${f} refers to ${tree}:\n${content}")
    endif()
  endforeach()
endforeach()
find_program(readelf_path readelf NO_CACHE)
if(readelf_path)
  file(GLOB elf_files "${libdir}/libtopocoll*.so.${EXPECT_VERSION}")
  foreach(f IN LISTS elf_files)
    execute_process(COMMAND "${readelf_path}" -d "${f}" OUTPUT_VARIABLE dyn RESULT_VARIABLE rc)
    string(FIND "${dyn}" "${TOP_BINARY_DIR}" pos)
    if(NOT rc EQUAL 0 OR NOT pos EQUAL -1)
      tc_fail("${f}: readelf failed or RPATH/RUNPATH points into the build tree:\n${dyn}")
    endif()
  endforeach()
endif()

# tc_check_resolves(<binary>): `ldd` must resolve libtopocoll*.so from the
# installed libdir only (and must resolve every library at all).
function(tc_check_resolves bin expect_libs)
  execute_process(COMMAND ldd "${bin}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0 OR out MATCHES "not found")
    tc_fail("ldd ${bin} (LD_LIBRARY_PATH='$ENV{LD_LIBRARY_PATH}'):\n${out}")
  endif()
  get_filename_component(real_libdir "${libdir}" REALPATH)
  foreach(lib IN LISTS expect_libs)
    string(REGEX MATCH "${lib}\\.so[^ \t]* => ([^ \t\n]+)" m "${out}")
    if(NOT m)
      tc_fail("${bin} does not link ${lib}.so:\n${out}")
    endif()
    get_filename_component(dir "${CMAKE_MATCH_1}" DIRECTORY)
    get_filename_component(dir "${dir}" REALPATH)
    if(NOT dir STREQUAL real_libdir)
      tc_fail("${bin} loads ${CMAKE_MATCH_1}, not the one in ${libdir}:\n${out}")
    endif()
  endforeach()
endfunction()

# The PMPI shim is used as LD_PRELOAD=<libdir>/libtopocoll_pmpi.so: it must
# find the installed libtopocoll.so on its own (RUNPATH $ORIGIN).
set(tc_step "2: installed libtopocoll_pmpi.so finds libtopocoll.so")
tc_check_resolves("${libdir}/libtopocoll_pmpi.so" libtopocoll)

# `man topocoll-bench` finds the installed page through the prefix's share/man.
set(tc_step "2: man topocoll-bench with MANPATH=<prefix>/share/man")
find_program(tc_man man)
if(tc_man)
  set(ENV{MANPATH} "${PREFIX}/share/man")
  execute_process(COMMAND ${tc_man} -w topocoll-bench OUTPUT_VARIABLE out ERROR_VARIABLE err
                  RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0 OR NOT out STREQUAL "${PREFIX}/share/man/man1/topocoll-bench.1")
    tc_fail("man -w topocoll-bench: '${out}' (${rc}) ${err}")
  endif()
  unset(ENV{MANPATH})
endif()

# Installed programs (tools, benchmarks) must start from the prefix as they are.
set(tc_step "2: installed programs find their libraries")
file(GLOB installed_programs "${PREFIX}/bin/*")
foreach(prog IN LISTS installed_programs)
  file(READ "${prog}" magic LIMIT 4 HEX)
  if(magic STREQUAL "7f454c46") # ELF
    execute_process(COMMAND ldd "${prog}" OUTPUT_VARIABLE out ERROR_VARIABLE out)
    if(out MATCHES "not found")
      tc_fail("${prog} (LD_LIBRARY_PATH='$ENV{LD_LIBRARY_PATH}'):\n${out}")
    endif()
    if(out MATCHES "libtopocoll")
      tc_check_resolves("${prog}" libtopocoll)
    endif()
  endif()
endforeach()

# ---------------------------------------------------------------------------
set(tc_step "3: configure consumer (CMake package)")
set(cm_build "${WORK_DIR}/cmake-build")
set(cm_args
    -G "${GENERATOR}"
    "-DCMAKE_PREFIX_PATH=${PREFIX}"
    "-DMPI_C_COMPILER=${MPI_C_COMPILER}"
    "-DTC_EXPECT_VERSION=${EXPECT_VERSION}"
    # Only the prefix we pass may satisfy find_package.
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
    -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF)
if(MAKE_PROGRAM)
  list(APPEND cm_args "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
if(C_COMPILER)
  list(APPEND cm_args "-DCMAKE_C_COMPILER=${C_COMPILER}")
endif()
if(CONFIG)
  list(APPEND cm_args "-DCMAKE_BUILD_TYPE=${CONFIG}")
endif()
# A sanitized libtopocoll needs the sanitizer runtime first in the consumer too.
set(san_flags "")
if(SANITIZE)
  set(san_flags "-fsanitize=${SANITIZE}")
  list(APPEND cm_args "-DCMAKE_C_FLAGS=${san_flags}" "-DCMAKE_EXE_LINKER_FLAGS=${san_flags}")
endif()
tc_run(out COMMAND "${CMAKE_COMMAND}" -S "${CONSUMER_SOURCE_DIR}" -B "${cm_build}" ${cm_args})
# find_package must have used the installed package, nothing else.
file(STRINGS "${cm_build}/CMakeCache.txt" found_dir REGEX "^topocoll_DIR:")
string(REGEX REPLACE "^topocoll_DIR:[A-Z]*=" "" found_dir "${found_dir}")
get_filename_component(found_dir "${found_dir}" REALPATH)
get_filename_component(want_dir "${libdir}/cmake/topocoll" REALPATH)
if(NOT found_dir STREQUAL want_dir)
  tc_fail("find_package(topocoll) used ${found_dir}, expected ${want_dir}\n${out}")
endif()

set(tc_step "3: build consumer (CMake package)")
tc_run(out COMMAND "${CMAKE_COMMAND}" --build "${cm_build}" ${config_args})
set(cm_app "${cm_build}/app")
set(cm_app_static "${cm_build}/app_static")
if(CONFIG AND NOT EXISTS "${cm_app}")
  set(cm_app "${cm_build}/${CONFIG}/app")
  set(cm_app_static "${cm_build}/${CONFIG}/app_static")
endif()

# ---------------------------------------------------------------------------
set(tc_step "4: pkg-config topocoll")
set(ENV{PKG_CONFIG_PATH} "${libdir}/pkgconfig")
tc_run(pc_version COMMAND "${PKG_CONFIG_EXECUTABLE}" --modversion topocoll)
string(STRIP "${pc_version}" pc_version)
if(NOT pc_version STREQUAL EXPECT_VERSION)
  tc_fail("pkg-config --modversion topocoll gives '${pc_version}', expected ${EXPECT_VERSION}")
endif()
tc_run(pc_flags COMMAND "${PKG_CONFIG_EXECUTABLE}" --cflags --libs topocoll)
string(STRIP "${pc_flags}" pc_flags)
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
# The -I/-L it hands out must be the prefix's (a .pc configured with the
# configure-time prefix would point at e.g. /usr/local instead).
set(seen_inc FALSE)
set(seen_lib FALSE)
get_filename_component(want_inc "${PREFIX}/${INCLUDEDIR}" REALPATH)
get_filename_component(want_lib "${libdir}" REALPATH)
foreach(flag IN LISTS pc_flags)
  if(flag MATCHES "^-I(.+)$")
    get_filename_component(d "${CMAKE_MATCH_1}" REALPATH)
    if(d STREQUAL want_inc)
      set(seen_inc TRUE)
    endif()
  elseif(flag MATCHES "^-L(.+)$")
    get_filename_component(d "${CMAKE_MATCH_1}" REALPATH)
    if(d STREQUAL want_lib)
      set(seen_lib TRUE)
    endif()
  endif()
endforeach()
if(NOT seen_inc OR NOT seen_lib)
  file(READ "${libdir}/pkgconfig/topocoll.pc" pc_text)
  list(JOIN pc_flags " " pc_flags)
  tc_fail("pkg-config --cflags --libs topocoll gives '${pc_flags}': expected \
-I${want_inc} and -L${want_lib}\n${libdir}/pkgconfig/topocoll.pc:\n${pc_text}")
endif()

set(tc_step "4: compile consumer with ${MPI_C_COMPILER} + pkg-config")
string(REPLACE "." ";" ver "${EXPECT_VERSION}")
list(GET ver 0 vmaj)
list(GET ver 1 vmin)
list(GET ver 2 vpat)
set(pc_app "${WORK_DIR}/app_pkgconfig")
set(san_args "")
if(san_flags)
  set(san_args "${san_flags}")
endif()
tc_run(out COMMAND "${mpicc_path}" -std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes
       -Wmissing-prototypes -Wpointer-arith -Wcast-align -Werror ${san_args}
       -DTC_EXPECT_MAJOR=${vmaj} -DTC_EXPECT_MINOR=${vmin} -DTC_EXPECT_PATCH=${vpat}
       "${CONSUMER_SOURCE_DIR}/consumer.c" -o "${pc_app}" ${pc_flags}
       # Where a user would put it: the binary finds the installed library itself.
       "-Wl,-rpath,${libdir}")

# ---------------------------------------------------------------------------
set(tc_step "5: installed binaries resolve the installed libtopocoll")
tc_check_resolves("${cm_app}" libtopocoll)
tc_check_resolves("${pc_app}" libtopocoll)
execute_process(COMMAND ldd "${cm_app_static}" OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(out MATCHES "libtopocoll")
  tc_fail("${cm_app_static} links topocoll::topocoll_static but loads a shared libtopocoll:\n${out}")
endif()

foreach(bin "${cm_app}" "${cm_app_static}" "${pc_app}")
  get_filename_component(name "${bin}" NAME)
  set(tc_step "5: run ${name} under ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${NP}")
  tc_run(out COMMAND "${MPIEXEC_EXECUTABLE}" ${MPIEXEC_NUMPROC_FLAG} ${NP} "${bin}"
         TIMEOUT ${RUN_TIMEOUT})
  # Rank 0 prints the verdict after an allreduce of every rank's errors.
  if(NOT out MATCHES "consumer: PASS \\(np=${NP},")
    tc_fail("exit status 0 but no 'consumer: PASS (np=${NP}, ...' line:\n${out}")
  endif()
  message(STATUS "[${tc_step}] ${out}")
endforeach()

message(STATUS "install test passed: ${PREFIX}")
