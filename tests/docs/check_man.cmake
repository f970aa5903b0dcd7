# A man page renders with man -l, and every option the program's --help prints
# appears in it.
#   cmake -DPAGE=<page.1> -DEXE=<program> [-DMPIEXEC=<launcher> -DNPFLAG=-n] -P check_man.cmake
# Options are taken from --help's usage line ("[--root R]") and from the lines that
# start with an option ("  --check FILE   ..."). Without man: "SKIP: ..." and exit 1.
get_filename_component(prog "${EXE}" NAME)
find_program(TC_MAN man)
if(NOT TC_MAN)
  # The test's SKIP_REGULAR_EXPRESSION turns this into a skip.
  message(FATAL_ERROR "SKIP: man not found: install man-db (and groff-base)")
endif()

set(ENV{LC_ALL} C)
set(ENV{MANWIDTH} 400)
execute_process(COMMAND ${TC_MAN} -l -P cat "${PAGE}"
  OUTPUT_VARIABLE page ERROR_VARIABLE page_err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR page STREQUAL "")
  message(FATAL_ERROR "man -l ${PAGE} failed (${rc}): ${page_err}")
endif()
if(page_err MATCHES "warning|error")
  message(FATAL_ERROR "man -l ${PAGE}: ${page_err}")
endif()
# Undo overstriking (bold: c BS c, underline: _ BS c).
string(ASCII 8 bs)
string(REGEX REPLACE ".${bs}" "" page "${page}")

if(MPIEXEC)
  set(cmd ${MPIEXEC} ${NPFLAG} 1 ${EXE} --help)
else()
  set(cmd ${EXE} --help)
endif()
execute_process(COMMAND ${cmd} OUTPUT_VARIABLE help ERROR_VARIABLE help_err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR help STREQUAL "")
  message(FATAL_ERROR "${prog} --help failed (${rc}): ${help}${help_err}")
endif()

# Square brackets and ';' would confuse CMake's lists.
string(REPLACE ";" "," help "${help}")
string(REPLACE "[" "<" help "${help}")
string(REPLACE "]" ">" help "${help}")
string(REPLACE "\n" ";" lines "${help}")
set(opts "")
foreach(line IN LISTS lines)
  set(found "")
  if(line MATCHES "^usage:")
    string(REGEX MATCHALL "[< |]--?[A-Za-z][A-Za-z0-9-]*" found "${line}")
  elseif(line MATCHES "^[ \t]+-")
    # Only the option column: up to two spaces in a row.
    string(REGEX REPLACE "^[ \t]+" "" col "${line}")
    string(REGEX REPLACE "  .*$" "" col "${col}")
    string(REGEX MATCHALL "(^|[ ,|])--?[A-Za-z][A-Za-z0-9-]*" found "${col}")
  endif()
  foreach(f IN LISTS found)
    string(REGEX REPLACE "^[< ,|]" "" f "${f}")
    list(APPEND opts "${f}")
  endforeach()
endforeach()
list(REMOVE_DUPLICATES opts)
list(LENGTH opts n)
if(n EQUAL 0)
  message(FATAL_ERROR "${prog} --help lists no options: ${help}")
endif()

set(missing "")
foreach(opt IN LISTS opts)
  if(NOT page MATCHES "(^|[^A-Za-z0-9-])${opt}([^A-Za-z0-9_-]|$)")
    list(APPEND missing "${opt}")
    message("${prog}: option ${opt} (printed by --help) is missing from ${PAGE}")
  endif()
endforeach()
if(missing)
  message(FATAL_ERROR "${prog}: add the option(s) ${missing} to ${PAGE}")
endif()
message("${prog}: man page renders; all ${n} options of --help are in it: ${opts}")
