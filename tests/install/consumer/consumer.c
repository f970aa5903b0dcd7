/*
 * A user program built against an *installed* libtopocoll (CMake package or
 * pkg-config). It only uses the public header, so it also proves that the
 * header compiles on its own under strict warnings.
 *
 * The expected version comes from the build system (TC_EXPECT_MAJOR/MINOR/PATCH,
 * the top-level project() version), not from the header, so a stale header or
 * library in the prefix is caught. Broadcast data is a formula of (index, root,
 * round) that every rank evaluates itself.
 */
#include <topocoll.h>

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !defined(TC_EXPECT_MAJOR) || !defined(TC_EXPECT_MINOR) || !defined(TC_EXPECT_PATCH)
#error "build with -DTC_EXPECT_MAJOR=.. -DTC_EXPECT_MINOR=.. -DTC_EXPECT_PATCH=.."
#endif

static unsigned char byte_at(size_t i, int root, int round)
{
    return (unsigned char)((i * 131u + (size_t)root * 17u + (size_t)round * 7u + 1u) & 0xffu);
}

static int int_at(size_t i, int root, int round)
{
    return (int)(i * 3u) + root * 1000003 + round * 7919 - 12345;
}

/* One TC_Bcast of `count` bytes from `root`; returns the number of wrong bytes. */
static long check_bytes(size_t count, int root, int round, int rank)
{
    /* +1 guard byte past the end: the broadcast must not write beyond count. */
    unsigned char *buf = malloc(count + 1);
    long bad = 0;
    if (buf == NULL) {
        fprintf(stderr, "rank %d: malloc(%zu) failed\n", rank, count + 1);
        return 1;
    }
    for (size_t i = 0; i < count; i++)
        buf[i] = rank == root ? byte_at(i, root, round) : (unsigned char)0xa5;
    buf[count] = 0x5a;

    int rc = TC_Bcast(buf, (int)count, MPI_BYTE, root, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "rank %d: TC_Bcast(%zu bytes, root %d) returned %d\n", rank, count, root,
                rc);
        bad++;
    }
    for (size_t i = 0; i < count; i++) {
        if (buf[i] != byte_at(i, root, round)) {
            if (bad < 5)
                fprintf(stderr, "rank %d: %zu bytes root %d: byte %zu is %u, expected %u\n", rank,
                        count, root, i, buf[i], byte_at(i, root, round));
            bad++;
        }
    }
    if (buf[count] != 0x5a) {
        fprintf(stderr, "rank %d: %zu bytes root %d: wrote past the end\n", rank, count, root);
        bad++;
    }
    free(buf);
    return bad;
}

static long check_ints(int count, int root, int round, int rank)
{
    int *buf = malloc(((size_t)count + 1) * sizeof *buf);
    long bad = 0;
    if (buf == NULL)
        return 1;
    for (int i = 0; i < count; i++)
        buf[i] = rank == root ? int_at((size_t)i, root, round) : -1;
    buf[count] = 424242;

    int rc = TC_Bcast(buf, count, MPI_INT, root, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "rank %d: TC_Bcast(%d ints, root %d) returned %d\n", rank, count, root, rc);
        bad++;
    }
    for (int i = 0; i < count; i++) {
        if (buf[i] != int_at((size_t)i, root, round)) {
            if (bad < 5)
                fprintf(stderr, "rank %d: %d ints root %d: [%d] is %d, expected %d\n", rank, count,
                        root, i, buf[i], int_at((size_t)i, root, round));
            bad++;
        }
    }
    if (buf[count] != 424242) {
        fprintf(stderr, "rank %d: %d ints root %d: wrote past the end\n", rank, count, root);
        bad++;
    }
    free(buf);
    return bad;
}

int main(int argc, char **argv)
{
    int rank, size, major = -1, minor = -1, patch = -1;
    long bad = 0, total_bad = 0;

    /* Documented as callable before MPI_Init, with any argument NULL. */
    if (TC_Get_version(&major, &minor, &patch) != MPI_SUCCESS ||
        TC_Get_version(NULL, NULL, NULL) != MPI_SUCCESS) {
        fprintf(stderr, "TC_Get_version did not return MPI_SUCCESS\n");
        return 1;
    }

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* A mismatched launcher runs N one-process jobs, each of which would pass. */
    const char *np_env = getenv("TC_TEST_NP");
    if (np_env == NULL || atoi(np_env) != size) {
        fprintf(stderr, "rank %d: MPI_COMM_WORLD has %d processes, TC_TEST_NP=%s\n", rank, size,
                np_env ? np_env : "(unset)");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    if (major != TC_EXPECT_MAJOR || minor != TC_EXPECT_MINOR || patch != TC_EXPECT_PATCH) {
        fprintf(stderr, "rank %d: TC_Get_version gives %d.%d.%d, expected %d.%d.%d\n", rank, major,
                minor, patch, TC_EXPECT_MAJOR, TC_EXPECT_MINOR, TC_EXPECT_PATCH);
        bad++;
    }
    if (TC_VERSION_MAJOR != TC_EXPECT_MAJOR || TC_VERSION_MINOR != TC_EXPECT_MINOR ||
        TC_VERSION_PATCH != TC_EXPECT_PATCH) {
        fprintf(stderr, "rank %d: installed header says %d.%d.%d, expected %d.%d.%d\n", rank,
                TC_VERSION_MAJOR, TC_VERSION_MINOR, TC_VERSION_PATCH, TC_EXPECT_MAJOR,
                TC_EXPECT_MINOR, TC_EXPECT_PATCH);
        bad++;
    }

    /* Empty, tiny, odd, and larger than any plausible fragment queue. */
    static const size_t byte_counts[] = {0, 1, 7, 4099, ((size_t)1 << 20) + 3};
    static const int int_counts[] = {1, 1000};
    int round = 0;
    for (int root = 0; root < size; root++) {
        for (size_t k = 0; k < sizeof byte_counts / sizeof byte_counts[0]; k++)
            bad += check_bytes(byte_counts[k], root, round++, rank);
        for (size_t k = 0; k < sizeof int_counts / sizeof int_counts[0]; k++)
            bad += check_ints(int_counts[k], root, round++, rank);
    }

    MPI_Allreduce(&bad, &total_bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (total_bad == 0)
            printf("consumer: PASS (np=%d, libtopocoll %d.%d.%d, %d broadcasts per rank)\n", size,
                   major, minor, patch, round);
        else
            printf("consumer: FAIL (%ld errors over all ranks)\n", total_bad);
    }
    MPI_Finalize();
    return total_bad == 0 ? 0 : 1;
}
