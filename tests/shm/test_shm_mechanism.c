/* How a segment is shared (TC_SHM_MECHANISM): a memfd by default, a named
 * /dev/shm file when forced (on every rank, or on one rank only: then all
 * fall back together), and nothing of this job's in /dev/shm during or after.
 *
 *   test_shm_mechanism --expect memfd|named [--named-rank R] [--stale]
 *
 * --named-rank R: only world rank R sets TC_SHM_MECHANISM=named (before the
 * library reads its environment); the others agree to a named segment.
 * --stale: rank 0 first plants /dev/shm/topocoll-<pid>-<hex> with a pid that
 * no process has (above /proc/sys/kernel/pid_max), as a killed creator would
 * leave it; the next named creation must remove it.
 *
 * Checked on every rank: the path is shm and the segment has the expected
 * mechanism; /proc/self/maps shows it ("/memfd:topocoll" or the unlinked
 * "/dev/shm/topocoll-<creator pid>-... (deleted)"); TC_SHM_MAX_NODE's count
 * sees it; broadcast and allreduce results are right; no
 * /dev/shm/topocoll-<pid>-* of any of this job's pids exists while the
 * communicators live, after they are freed, and after MPI_Finalize; no
 * mapping of a segment is left once all are freed.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/ctx.h"
#include "topocoll.h"

#include "tc_test_common.h"

static void use(MPI_Comm c, int it)
{
    int r, p, buf[4096];
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &p);
    int root = it % p;
    tt_ints_fill(buf, 4096, it, r == root);
    TC_Bcast(buf, 4096, MPI_INT, root, c);
    tt_ints_check(buf, 4096, it, "bcast");
    long in = r + 1, out = 0;
    TC_Allreduce(&in, &out, 1, MPI_LONG, MPI_SUM, c);
    CHECK(out == tt_sum_ranks(p) + p, "allreduce gave %ld, expected %ld", out, tt_sum_ranks(p) + p);
}

int main(int argc, char **argv)
{
    int expect_memfd = -1, named_rank = -1, stale = 0;
    MPI_Init(&argc, &argv);
    const int size = tt_check_np("test_shm_mechanism"), rank = tt_rank;
    if (size < 2) {
        fprintf(stderr, "test_shm_mechanism: %d process, needs >= 2\n", size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--expect") == 0 && i + 1 < argc) {
            i++;
            expect_memfd = strcmp(argv[i], "memfd") == 0   ? 1
                           : strcmp(argv[i], "named") == 0 ? 0
                                                           : -1;
        } else if (strcmp(argv[i], "--named-rank") == 0 && i + 1 < argc) {
            named_rank = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--stale") == 0) {
            stale = 1;
        } else {
            expect_memfd = -1;
            break;
        }
    }
    if (expect_memfd < 0) {
        if (rank == 0)
            fprintf(stderr, "usage: test_shm_mechanism --expect memfd|named [--named-rank R] "
                            "[--stale]\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank == named_rank)
        setenv("TC_SHM_MECHANISM", "named", 1);

    long me = (long)getpid(), *pids = malloc((size_t)size * sizeof *pids);
    MPI_Allgather(&me, 1, MPI_LONG, pids, 1, MPI_LONG, MPI_COMM_WORLD);

    char stale_path[256] = "";
    if (stale && rank == 0) {
        long pid_max = 4194304;
        FILE *f = fopen("/proc/sys/kernel/pid_max", "r");
        if (f) {
            if (fscanf(f, "%ld", &pid_max) != 1)
                pid_max = 4194304;
            fclose(f);
        }
        snprintf(stale_path, sizeof stale_path, "/dev/shm/topocoll-%ld-%08lx%08lx", pid_max + 1,
                 (unsigned long)me, (unsigned long)MPI_Wtime());
        int fd = open(stale_path, O_CREAT | O_EXCL | O_RDWR, 0600);
        CHECK(fd >= 0 && ftruncate(fd, 8192) == 0, "cannot plant %s", stale_path);
        if (fd >= 0)
            close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Comm c[3];
    for (int k = 0; k < 3; k++) {
        tc_ctx_t *ctx;
        MPI_Comm_dup(MPI_COMM_WORLD, &c[k]);
        if (tc_ctx_get(c[k], &ctx) != MPI_SUCCESS) {
            fprintf(stderr, "test_shm_mechanism: context creation failed\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        CHECK(ctx->bcast_path == TC_PATH_SHM && ctx->shm, "communicator %d: path %d, expected shm",
              k, (int)ctx->bcast_path);
        if (!ctx->shm)
            continue;
        CHECK(ctx->shm->memfd == expect_memfd, "communicator %d: a %s segment (%s), expected %s", k,
              ctx->shm->memfd ? "memfd" : "named", ctx->shm->mechanism,
              expect_memfd ? "memfd" : "named");
        char needle[64];
        if (expect_memfd)
            snprintf(needle, sizeof needle, "/memfd:topocoll ");
        else
            snprintf(needle, sizeof needle, "/dev/shm/topocoll-%ld-", pids[0]);
        CHECK(tt_maps_count(needle) >= k + 1, "%ld mappings with \"%s\" after %d communicators",
              tt_maps_count(needle), needle, k + 1);
        CHECK(tc_shm_node_usage() >= (size_t)(k + 1) * ctx->shm->layout.total,
              "node usage %zu counts fewer than our %d segments of %zu bytes", tc_shm_node_usage(),
              k + 1, ctx->shm->layout.total);
        use(c[k], k);
        CHECK(tt_dev_shm_count(pids, size) <= 0, "files in /dev/shm while communicator %d lives",
              k);
    }
    if (stale && rank == 0) {
        struct stat st;
        CHECK(stat(stale_path, &st) != 0, "%s (creator gone) was not removed", stale_path);
        unlink(stale_path);
    }
    for (int k = 0; k < 3; k++)
        MPI_Comm_free(&c[k]);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(tt_maps_count("/memfd:topocoll ") == 0 && tt_maps_count("/dev/shm/topocoll-") == 0,
          "segment mappings left after freeing every communicator");
    CHECK(tt_dev_shm_count(pids, size) <= 0, "files in /dev/shm after freeing the communicators");
    long all = tt_failures_all();
    MPI_Finalize();
    CHECK(tt_dev_shm_count(pids, size) <= 0, "files in /dev/shm after MPI_Finalize");
    if (rank == 0 && all == 0 && tt_failures() == 0)
        printf("test_shm_mechanism: ok (%s%s%s)\n", expect_memfd ? "memfd" : "named",
               named_rank >= 0 ? ", forced on one rank" : "", stale ? ", stale file removed" : "");
    free(pids);
    return all || tt_failures() ? 1 : 0;
}
