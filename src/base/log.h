/* Logging: one line per message on stderr, prefixed with the library name and
 * the world rank. Level 0 = errors only (always printed), 1 = fallbacks and
 * disagreements (once each), 2 = context life cycle, 3 = per-call tracing. */
#ifndef TC_CORE_LOG_H
#define TC_CORE_LOG_H

#include <stdbool.h>

enum { TC_LOG_ERROR = 0, TC_LOG_INFO = 1, TC_LOG_DEBUG = 2, TC_LOG_TRACE = 3 };

/* Current verbosity (TC_VERBOSE); set by the config loader. */
extern int tc_log_level;
/* This process's rank in MPI_COMM_WORLD (-1 until known); set by the context code. */
extern int tc_log_rank;

void tc_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Log at most once per process for a given @p once flag (a static bool at the
 * call site). Thread-safe enough: a duplicate line under a race is harmless. */
#define tc_log_once(flag, level, ...)                                                              \
    do {                                                                                           \
        if (tc_log_level >= (level) && !(flag)) {                                                  \
            (flag) = true;                                                                         \
            tc_log((level), __VA_ARGS__);                                                          \
        }                                                                                          \
    } while (0)

#endif /* TC_CORE_LOG_H */
