#include "log.h"

#include <stdarg.h>
#include <stdio.h>

int tc_log_level = 0;
int tc_log_rank = -1;

void tc_log(int level, const char *fmt, ...)
{
    if (level > tc_log_level)
        return;
    /* One buffered line per message so lines of different ranks do not interleave. */
    char line[1024];
    int n = snprintf(line, sizeof line, "topocoll[%d]: ", tc_log_rank);
    if (n < 0 || (size_t)n >= sizeof line)
        n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s\n", line);
}
