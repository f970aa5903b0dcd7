# Sources of src/rma (included by src/CMakeLists.txt).
list(APPEND TOPOCOLL_SOURCES rma/tree.c rma/runtime.c rma/bcast.c rma/settings.c)
