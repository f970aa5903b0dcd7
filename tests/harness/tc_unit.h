/* The unit tests' CHECK (plain C, no MPI, header only): the counterpart of
 * tc_test_common.h's for the tests that run without a launcher.
 *
 * CHECK(cond) or CHECK(cond, fmt, ...): count the check (tu_checks) and, when
 * @p cond is false, count a failure (tu_failures) and print
 * "FAIL file:line: cond[: message]" on stderr. The test goes on; it ends with
 * its summary line and `return tu_failures != 0`. The message arguments are
 * evaluated only when the check fails. The counters are atomic: CHECK may run
 * on several threads (test_wait, the lock tests); a forked child counts its
 * own. */
#ifndef TC_UNIT_H
#define TC_UNIT_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

static atomic_int tu_checks, tu_failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        tu_checks++;                                                                               \
        if (!(cond))                                                                               \
            tu_check_fail(__FILE__, __LINE__, #cond, ": " __VA_ARGS__);                            \
    } while (0)

/* @p fmt starts with ": " (CHECK adds it); ": " alone adds nothing. */
static inline void tu_check_fail(const char *file, int line, const char *cond, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static inline void tu_check_fail(const char *file, int line, const char *cond, const char *fmt, ...)
{
    char msg[768];
    va_list ap;

    tu_failures++;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    /* One write per line: threads and processes do not interleave. */
    fprintf(stderr, "FAIL %s:%d: %s%s\n", file, line, cond, strcmp(msg, ": ") == 0 ? "" : msg);
}

#endif /* TC_UNIT_H */
