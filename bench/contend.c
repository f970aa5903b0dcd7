#include "contend.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define CONTEND_MAX 1024

static pid_t contend_pids[CONTEND_MAX];
static int contend_n;

static void contend_kill_all(void)
{
    for (int i = 0; i < contend_n; i++)
        if (contend_pids[i] > 0)
            kill(contend_pids[i], SIGKILL);
    for (int i = 0; i < contend_n; i++)
        if (contend_pids[i] > 0)
            while (waitpid(contend_pids[i], NULL, 0) < 0 && errno == EINTR)
                ;
    contend_n = 0;
}

/* The helper: pinned, then a busy loop until killed. */
static void contend_child(int cpu, pid_t parent)
{
    /* Die with the parent, whatever way it ends; it may already be gone. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(0);
    if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        sched_setaffinity(0, sizeof set, &set);
    }
    volatile unsigned long x = 0; /* the loop must not be optimised away */
    for (;;)
        x++;
}

int bench_contend_start(MPI_Comm comm, int n, char *describe, size_t describe_len)
{
    MPI_Comm node;
    int nrank, nsize, ok = 1, all_ok = 0;
    if (describe && describe_len)
        describe[0] = '\0';
    if (n <= 0)
        return 0;
    if (n > CONTEND_MAX)
        n = CONTEND_MAX;
    PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    PMPI_Comm_rank(node, &nrank);
    PMPI_Comm_size(node, &nsize);
    /* The CPUs the node's ranks may run on: the union of their masks. */
    cpu_set_t mine, all;
    CPU_ZERO(&mine);
    if (sched_getaffinity(0, sizeof mine, &mine) != 0)
        CPU_ZERO(&mine);
    unsigned char bits[CPU_SETSIZE], ubits[CPU_SETSIZE];
    for (int c = 0; c < CPU_SETSIZE; c++)
        bits[c] = CPU_ISSET(c, &mine) ? 1 : 0;
    PMPI_Allreduce(bits, ubits, CPU_SETSIZE, MPI_UNSIGNED_CHAR, MPI_MAX, node);
    CPU_ZERO(&all);
    int cpus[CPU_SETSIZE], ncpu = 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (ubits[c]) {
            CPU_SET(c, &all);
            cpus[ncpu++] = c;
        }
    if (nrank == 0) {
        pid_t self = getpid();
        size_t used = 0;
        fflush(NULL); /* no buffered output duplicated into the helpers */
        for (int j = 0; j < n; j++) {
            int cpu = ncpu > 0 ? cpus[j % ncpu] : -1;
            pid_t pid = fork();
            if (pid == 0)
                contend_child(cpu, self);
            if (pid < 0) {
                ok = 0;
                break;
            }
            contend_pids[contend_n++] = pid;
            if (describe && used + 16 < describe_len)
                used += (size_t)snprintf(describe + used, describe_len - used, "%s%d", j ? "," : "",
                                         cpu);
        }
    }
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    if (!all_ok)
        contend_kill_all();
    PMPI_Comm_free(&node);
    return all_ok ? 0 : -1;
}

void bench_contend_stop(MPI_Comm comm)
{
    /* Everyone has finished measuring before the load goes away. */
    PMPI_Barrier(comm);
    contend_kill_all();
}
