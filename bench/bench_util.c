/*
 * Helpers shared by the benchmark programs (see bench_util.h).
 */
#include "bench_util.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int tc_bench_size_parse(const char *s, size_t *out)
{
    char *end;
    unsigned long long v, mult = 1;

    if (s == NULL || !isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno != 0)
        return -1;
    switch (tolower((unsigned char)*end)) {
    case 'k':
        mult = 1ULL << 10;
        end++;
        break;
    case 'm':
        mult = 1ULL << 20;
        end++;
        break;
    case 'g':
        mult = 1ULL << 30;
        end++;
        break;
    default:
        break;
    }
    /* accept "4KiB" / "4KB" as well as "4K" */
    if (mult > 1 && (*end == 'i' || *end == 'I'))
        end++;
    if (mult > 1 && (*end == 'b' || *end == 'B'))
        end++;
    if (*end != '\0' || v > SIZE_MAX / mult)
        return -1;
    *out = (size_t)(v * mult);
    return 0;
}

int tc_bench_range_parse(const char *s, size_t *min, size_t *max)
{
    const char *colon = strchr(s, ':');
    char lo[64];

    if (colon == NULL) {
        if (tc_bench_size_parse(s, min) != 0)
            return -1;
        *max = *min;
        return 0;
    }
    if ((size_t)(colon - s) >= sizeof(lo))
        return -1;
    memcpy(lo, s, (size_t)(colon - s));
    lo[colon - s] = '\0';
    if (tc_bench_size_parse(lo, min) != 0 || tc_bench_size_parse(colon + 1, max) != 0)
        return -1;
    return *min <= *max ? 0 : -1;
}

int tc_bench_range_sizes(size_t min, size_t max, size_t *sizes, int cap)
{
    int n = 0;
    size_t p = 1;

    if (min == 0 && n < cap)
        sizes[n++] = 0;
    while (p < min && p <= SIZE_MAX / 2)
        p *= 2;
    while (p >= min && p <= max && n < cap) {
        sizes[n++] = p;
        if (p > SIZE_MAX / 2)
            break;
        p *= 2;
    }
    return n;
}

double tc_bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double tc_bench_median(double *v, int n)
{
    if (n <= 0)
        return 0.0;
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double tc_bench_min(const double *v, int n)
{
    double m = n > 0 ? v[0] : 0.0;
    for (int i = 1; i < n; i++)
        if (v[i] < m)
            m = v[i];
    return m;
}
