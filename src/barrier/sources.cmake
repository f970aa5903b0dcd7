# Sources of src/barrier (included by src/CMakeLists.txt).
list(APPEND TOPOCOLL_SOURCES barrier/msg_barrier.c barrier/shm_barrier.c barrier/settings.c)
