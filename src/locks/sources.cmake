# Sources of src/locks (included by src/CMakeLists.txt). It uses only src/base's
# wait helper: the lock benchmark compiles this list and base/wait.c (no MPI) on
# its own.
set(TOPOCOLL_LOCKS_SOURCES
    locks/rwlock.c
    locks/posix_rwlock.c
    locks/mutex.c
    locks/mutex_signal.c
    locks/nmcs.c)
list(APPEND TOPOCOLL_SOURCES ${TOPOCOLL_LOCKS_SOURCES})
# The module's tunable (TC_LOCK_SCHEME), for the library only: it needs the
# configuration engine (src/base), which the benchmark does not compile.
list(APPEND TOPOCOLL_SOURCES locks/settings.c)
