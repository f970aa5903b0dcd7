/*
 * Small helpers shared by the benchmark programs: size arguments with K/M/G
 * suffixes, size ranges, a monotonic clock and order statistics.
 */
#ifndef TC_BENCH_UTIL_H
#define TC_BENCH_UTIL_H

#include <stddef.h>

/* Parse "N", "NK", "NM", "NG" (binary multiples, case-insensitive) into *out.
 * Returns 0 on success, -1 on anything else (trailing junk, overflow). */
int tc_bench_size_parse(const char *s, size_t *out);

/* Parse "MIN:MAX" (or a single size N meaning N:N). Returns 0 or -1. */
int tc_bench_range_parse(const char *s, size_t *min, size_t *max);

/* Message sizes for [min, max]: the powers of two in the range, preceded by 0
 * when min is 0. Returns the count written to sizes (at most cap). */
int tc_bench_range_sizes(size_t min, size_t max, size_t *sizes, int cap);

/* Seconds from a monotonic clock. */
double tc_bench_now(void);

/* Median of v[0..n-1] (sorts v in place); mean of the two middle values when n
 * is even; 0 when n is 0. */
double tc_bench_median(double *v, int n);

/* Smallest of v[0..n-1]; 0 when n is 0. */
double tc_bench_min(const double *v, int n);

#endif /* TC_BENCH_UTIL_H */
