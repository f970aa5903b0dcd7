/*
 * An unmodified MPI program broadcasting more than 2^31 elements of MPI_BYTE
 * with MPI_Bcast_c (default 2^31 + 4099 bytes; --bytes 3G for issue 19's
 * 3 GiB target). Run with LD_PRELOAD=libtopocoll_pmpi.so by
 * run_with_stats.sh, which checks from TC_STATS=1 output that the call went
 * to the MPI's own as a large count (pmpi_large_count=1: the library's
 * int-based paths never see it, nothing is truncated). Every received byte
 * is compared with a pattern computed from its index; the receive buffer is
 * first filled with the pattern's complement-like variant so a byte the
 * broadcast did not write cannot pass.
 *
 * Needs the message once per process (~2.1 GiB each): skipped (77) when
 * MemAvailable is below (np + 1) messages (~6 GiB at np=2), and where mpi.h
 * has no _c calls (Open MPI 4.1).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_test_common.h"

#ifdef TOPOCOLL_HAVE_MPI_COUNT_C

static unsigned char pattern(size_t i)
{
    return (unsigned char)(((uint32_t)i * 2654435761u) >> 24 ^ (uint32_t)(i >> 32) * 131u);
}

/* MemAvailable of /proc/meminfo in bytes (0 if unknown). */
static long long mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return 0;
    char line[256];
    long long kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1)
            break;
    fclose(f);
    return kb * 1024;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tt_check_np("bcast_c_large");
    const long long bytes = tt_parse_size(tt_arg(argc, argv, "--bytes", "2147487747"));
    if (bytes <= 0) {
        fprintf(stderr, "bcast_c_large: bad --bytes\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* One decision for all: every process on this node (the launcher's np)
     * will hold the message, plus one more for slack (~6 GiB at np=2). */
    const long long need = (long long)(tt_size + 1) * bytes;
    int ok = mem_available() >= need, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
        if (tt_rank == 0)
            printf("bcast_c_large: MemAvailable below %.1f GiB: skipped\n",
                   (double)need / (1 << 30));
        MPI_Finalize();
        return 77;
    }
    unsigned char *buf = malloc((size_t)bytes);
    int have = buf != NULL, all_have = 0;
    MPI_Allreduce(&have, &all_have, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_have) {
        if (tt_rank == 0)
            printf("bcast_c_large: malloc of %lld bytes failed: skipped\n", bytes);
        free(buf);
        MPI_Finalize();
        return 77;
    }
    const int root = 0;
    for (size_t i = 0; i < (size_t)bytes; i++)
        buf[i] = tt_rank == root ? pattern(i) : (unsigned char)~pattern(i);
    const double t0 = MPI_Wtime();
    const int rc = MPI_Bcast_c(buf, (MPI_Count)bytes, MPI_BYTE, root, MPI_COMM_WORLD);
    const double t = MPI_Wtime() - t0;
    CHECK(rc == MPI_SUCCESS, "MPI_Bcast_c of %lld bytes returned %d", bytes, rc);
    size_t bad = 0, first_bad = 0;
    for (size_t i = 0; i < (size_t)bytes; i++)
        if (buf[i] != pattern(i) && bad++ == 0)
            first_bad = i;
    CHECK(bad == 0, "rank %d: %zu of %lld bytes wrong, the first at %zu", tt_rank, bad, bytes,
          first_bad);
    free(buf);
    if (tt_rank == 0)
        printf("bcast_c_large: %lld bytes in %.1f s\n", bytes, t);
    const long all_errors = tt_failures_all();
    printf("tc-pmpi-test rank=%d large_counts=1 errors=%ld\n", tt_rank, tt_failures());
    fflush(stdout);
    MPI_Finalize();
    return all_errors == 0 ? 0 : 1;
}

#else /* no MPI_*_c in this MPI */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tt_check_np("bcast_c_large");
    if (tt_rank == 0)
        printf("bcast_c_large: this MPI declares no MPI_*_c calls: skipped\n");
    MPI_Finalize();
    return 77;
}

#endif
