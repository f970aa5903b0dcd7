/* An idle helper thread costs at most 5% of a core. The threads that
 * TC_Rma_win_register starts (tids absent before it: the helper) are
 * measured from /proc/self/task/<tid>/stat (utime + stime) over N seconds
 * (argv[1], default 10) in which no broadcast happens and the main thread
 * sleeps. The helper also reports its own getrusage(RUSAGE_THREAD) at exit
 * with TC_VERBOSE >= 2. Then one broadcast checks the helper still answers. */
#include <dirent.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <topocoll.h>
#include <unistd.h>

#include "tc_test_common.h"

#define MAXT 256

static int list_tids(int *tids)
{
    int n = 0;
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL && n < MAXT)
        if (e->d_name[0] != '.')
            tids[n++] = atoi(e->d_name);
    if (d)
        closedir(d);
    return n;
}

/* utime + stime of a thread, in clock ticks. */
static long long thread_ticks(int tid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); /* the name may contain spaces */
    long long ut = 0, st = 0;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lld %lld", &ut, &st) != 2)
        return -1;
    return ut + st;
}

int main(int argc, char **argv)
{
    int provided, rank, np, failures = 0;
    double seconds = argc > 1 ? atof(argv[1]) : 10.0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    tt_check_np("test_rma_idle");
    if (provided != MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "test_rma_idle: thread level %d, not MPI_THREAD_MULTIPLE\n", provided);
        MPI_Finalize();
        return 1;
    }
    int before[MAXT], after[MAXT], fresh[MAXT], nb = list_tids(before), nf = 0;
    MPI_Win win;
    char *mem;
    int wid;
    MPI_Win_allocate(4096, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    memset(mem, 0, 4096);
    TC_Rma_win_register(win, &wid);
    int na = list_tids(after);
    for (int i = 0; i < na; i++) {
        int old = 0;
        for (int j = 0; j < nb; j++)
            old |= after[i] == before[j];
        if (!old)
            fresh[nf++] = after[i];
    }
    if (nf == 0) {
        fprintf(stderr, "test_rma_idle: rank %d: no new thread after registration\n", rank);
        failures++;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    long long t0 = 0, t1 = 0;
    for (int i = 0; i < nf; i++)
        t0 += thread_ticks(fresh[i]);
    double w0 = MPI_Wtime();
    usleep((useconds_t)(seconds * 1e6)); /* idle: no MPI call, no broadcast */
    double w1 = MPI_Wtime();
    for (int i = 0; i < nf; i++)
        t1 += thread_ticks(fresh[i]);
    double cpu = (double)(t1 - t0) / (double)sysconf(_SC_CLK_TCK);
    double share = cpu / (w1 - w0);
    printf(
        "test_rma_idle: rank %d: %d new thread(s), %.3f s CPU in %.2f s idle = %.2f%% of a core\n",
        rank, nf, cpu, w1 - w0, 100.0 * share);
    fflush(stdout);
    if (share > 0.05) {
        fprintf(stderr, "test_rma_idle: rank %d: idle helper uses %.2f%% of a core (> 5%%)\n", rank,
                100.0 * share);
        failures++;
    }
    /* The helper still forwards after the idle period. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        char v[64];
        for (int i = 0; i < 64; i++)
            v[i] = (char)(i * 7 + 1);
        TC_Rma_bcast(v, 64, MPI_CHAR, 128, wid, TC_RMA_BCAST_BINOMIAL);
        TC_Rma_bcast_flush(wid);
    } else {
        TC_Rma_bcast_recv_wait(wid, 0);
        for (int i = 0; i < 64; i++)
            if (mem[128 + i] != (char)(i * 7 + 1)) {
                failures++;
                fprintf(stderr, "test_rma_idle: rank %d: byte %d wrong after idle\n", rank, i);
                break;
            }
    }
    TC_Rma_win_unregister(wid);
    MPI_Win_free(&win);
    int total;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return total != 0;
}
