/* The estimate kept by the library's self-timing choices (shm/copy.c: which
 * copy; core/race.c: the library's path or the MPI's own): the median of the
 * last three samples of a ring, so one call slowed by a page fault or a
 * preemption does not decide, while a lasting change shows within two. */
#ifndef TC_CORE_MEDIAN3_H
#define TC_CORE_MEDIAN3_H

/* Samples a ring holds. */
#define TC_MEDIAN3_WINDOW 3

/* Median of ring @p v after @p n samples (n counts all ever added): of the
 * one or two there are at first, their value or mean; -1 before the first. */
static inline double tc_median3(const double v[TC_MEDIAN3_WINDOW], unsigned n)
{
    if (n == 0)
        return -1.0;
    if (n < TC_MEDIAN3_WINDOW)
        return n == 1 ? v[0] : 0.5 * (v[0] + v[1]);
    const double lo = v[0] < v[1] ? v[0] : v[1], hi = v[0] < v[1] ? v[1] : v[0];
    return v[2] < lo ? lo : v[2] > hi ? hi : v[2];
}

#endif /* TC_CORE_MEDIAN3_H */
