#include "segment.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <numa.h>
#include <numaif.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/log.h"
#include "params.h"
#include "store.h"

/* Header line 0, written once by the creator before anyone else opens. */
typedef struct tc_shm_header {
    uint64_t magic;
    uint64_t total;
    uint64_t f;
    int32_t p, S, q, pad;
} tc_shm_header_t;
_Static_assert(sizeof(tc_shm_header_t) <= TC_CACHELINE, "header fits in line 0");

static _Atomic size_t tc_shm_mapped_bytes;

size_t tc_shm_mapped_total(void)
{
    return atomic_load_explicit(&tc_shm_mapped_bytes, memory_order_relaxed);
}

typedef struct tc_shm_seen {
    unsigned long dev, inode;
    size_t bytes;
} tc_shm_seen_t;

/* The distinct segments seen so far by tc_shm_node_usage. */
typedef struct tc_shm_usage {
    tc_shm_seen_t *seen;
    size_t n, cap;
} tc_shm_usage_t;

/* Calls @p visit on the maps file (/proc/<pid>/maps) of every process of this
 * user, one after the other, until a call returns non-zero. Returns that value,
 * 0 when every process was visited, -1 when /proc cannot be read. */
static int tc_shm_maps_walk(int (*visit)(FILE *maps, void *arg), void *arg)
{
    DIR *proc = opendir("/proc");
    if (!proc)
        return -1;
    int stop = 0;
    uid_t uid = getuid();
    struct dirent *e;
    while (!stop && (e = readdir(proc)) != NULL) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        char path[sizeof e->d_name + 16];
        struct stat st;
        snprintf(path, sizeof path, "/proc/%s", e->d_name);
        if (stat(path, &st) != 0 || st.st_uid != uid)
            continue;
        snprintf(path, sizeof path, "/proc/%s/maps", e->d_name);
        FILE *maps = fopen(path, "r");
        if (!maps)
            continue; /* exited meanwhile */
        stop = visit(maps, arg);
        fclose(maps);
    }
    closedir(proc);
    return stop;
}

/* A maps line of one of the library's segments: a named one (still named, or
 * unlinked: "/dev/shm/topocoll-... (deleted)") or a memfd ("/memfd:topocoll
 * (deleted)"; memfd_create's name, never in any file system). */
static int tc_shm_maps_line_ours(const char *line)
{
    return strstr(line, "/dev/shm/topocoll-") != NULL || strstr(line, "/memfd:topocoll ") != NULL;
}

/* Add the topocoll mappings of one maps file to the tc_shm_usage_t @p arg
 * (distinct segments). Always 0: every process is visited. */
static int tc_shm_usage_scan(FILE *maps, void *arg)
{
    tc_shm_usage_t *u = arg;
    tc_shm_seen_t **seen = &u->seen;
    size_t *n = &u->n, *cap = &u->cap;
    char line[512];
    while (fgets(line, sizeof line, maps)) {
        if (!tc_shm_maps_line_ours(line))
            continue;
        unsigned long start, end, off, inode;
        unsigned int major, minor;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s %lx %x:%x %lu", &start, &end, perms, &off, &major, &minor,
                   &inode) != 7)
            continue;
        unsigned long dev = ((unsigned long)major << 20) | minor;
        size_t i;
        for (i = 0; i < *n; i++)
            if ((*seen)[i].dev == dev && (*seen)[i].inode == inode)
                break;
        if (i == *n) {
            if (*n == *cap) {
                size_t c = *cap ? 2 * *cap : 16;
                tc_shm_seen_t *p = realloc(*seen, c * sizeof *p);
                if (!p)
                    return 0;
                *seen = p;
                *cap = c;
            }
            (*seen)[(*n)++] = (tc_shm_seen_t){dev, inode, 0};
        }
        if (end - start > (*seen)[i].bytes)
            (*seen)[i].bytes = end - start;
    }
    return 0;
}

/* An upper bound of the bytes the library's segments take on the node:
 * every shmem page (Shmem in /proc/meminfo: /dev/shm files, memfds and SysV
 * segments alike), or what /dev/shm holds if that is more (a file sized but
 * not yet allocated). Unknown: SIZE_MAX / 2, so the caller counts exactly. */
static size_t tc_shm_usage_bound(void)
{
    size_t bound = SIZE_MAX / 2, dev_shm = 0;
    struct statvfs vfs;
    if (statvfs("/dev/shm", &vfs) == 0)
        dev_shm = (size_t)(vfs.f_blocks - vfs.f_bfree) * (size_t)vfs.f_frsize;
    FILE *f = fopen("/proc/meminfo", "r");
    if (f) {
        char line[128];
        unsigned long long kib;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "Shmem: %llu kB", &kib) == 1) {
                bound = (size_t)kib * 1024;
                break;
            }
        fclose(f);
    }
    return bound != SIZE_MAX / 2 && dev_shm > bound ? dev_shm : bound;
}

size_t tc_shm_node_usage(void)
{
    tc_shm_usage_t u = {NULL, 0, 0};
    size_t total = 0;
    (void)tc_shm_maps_walk(tc_shm_usage_scan, &u); /* no /proc: nothing seen, 0 */
    for (size_t i = 0; i < u.n; i++)
        total += u.seen[i].bytes;
    free(u.seen);
    return total;
}

static int tc_shm_numa_node_self(void)
{
    if (numa_available() < 0)
        return -1;
    int cpu = sched_getcpu();
    return cpu < 0 ? -1 : numa_node_of_cpu(cpu);
}

/* "/topocoll-<creator pid>-" + 16 hex digits from the kernel's CSPRNG: not
 * guessable, so another user cannot pre-create or squat the name (O_EXCL
 * catches the rest); the pid lets a later creation tell that the file's
 * creator is gone (tc_shm_stale_remove). */
static tc_err_t tc_shm_name_random(char *name, size_t len)
{
    uint64_t r;
    if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
        return tc_err_sys(errno);
    snprintf(name, len, "/topocoll-%ld-%016llx", (long)getpid(), (unsigned long long)r);
    return TC_OK;
}

/* Whether one maps file has a line naming the string @p arg (1 stops the walk). */
static int tc_shm_maps_has(FILE *maps, void *arg)
{
    char line[512];
    while (fgets(line, sizeof line, maps))
        if (strstr(line, arg) != NULL)
            return 1;
    return 0;
}

/* Whether any process of this user maps the file /dev/shm/@p file. */
static int tc_shm_file_mapped(const char *file)
{
    char needle[300];
    snprintf(needle, sizeof needle, "/dev/shm/%s", file);
    int found = tc_shm_maps_walk(tc_shm_maps_has, needle);
    return found != 0; /* -1, cannot tell: keep it */
}

/* Named segments only exist between creation and the moment every process
 * has opened them; a creator killed inside that window leaves the file.
 * Remove this user's /dev/shm/topocoll-<pid>-* files whose creator is gone
 * (kill(pid, 0) fails with ESRCH) and that no process maps. A live pid (or
 * one reused since) keeps its file: never remove what may be in use. */
static void tc_shm_stale_remove(void)
{
    DIR *d = opendir("/dev/shm");
    if (!d)
        return;
    uid_t uid = getuid();
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "topocoll-", 9) != 0)
            continue;
        char *end;
        long pid = strtol(e->d_name + 9, &end, 10);
        if (end == e->d_name + 9 || *end != '-' || pid <= 0)
            continue; /* no creator pid in the name (an older version's): cannot tell */
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        char path[sizeof e->d_name + 16];
        struct stat st;
        snprintf(path, sizeof path, "/dev/shm/%s", e->d_name);
        if (stat(path, &st) != 0 || st.st_uid != uid || tc_shm_file_mapped(e->d_name))
            continue;
        snprintf(path, sizeof path, "/%s", e->d_name);
        if (shm_unlink(path) == 0)
            tc_log(TC_LOG_INFO,
                   "removed the stale segment /dev/shm/%s (%lld bytes): its creator, pid %ld, "
                   "is gone and no process maps it",
                   e->d_name, (long long)st.st_size, pid);
    }
    closedir(d);
}

/* ------------------------------------------------------------------------ */
/* memfd segments: no name in any file system; the kernel frees the memory
 * when the last process that maps it or holds its descriptor is gone. The
 * others open the creator's descriptor through /proc/<pid>/fd/<fd> (needs
 * ptrace read access: same user, dumpable) or pidfd_getfd (needs ptrace
 * attach access, which Yama's ptrace_scope=1 denies between siblings). */

typedef enum { TC_MEMFD_PROC, TC_MEMFD_PIDFD, TC_MEMFD_NONE } tc_memfd_how_t;

static pthread_once_t tc_memfd_once = PTHREAD_ONCE_INIT;
static tc_memfd_how_t tc_memfd_how = TC_MEMFD_NONE; /* written once under tc_memfd_once */
static char tc_memfd_why[160];                      /* why TC_MEMFD_NONE */
/* Set when some process of a node communicator could not open a memfd: this
 * process then creates named segments at once (auto). Relaxed: a stale read
 * only costs one more memfd attempt, which is agreed like the first. */
static atomic_int tc_memfd_peer_failed;

static int tc_shm_fd_by_proc(pid_t pid, int fd)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/fd/%d", (long)pid, fd);
    return open(path, O_RDWR | O_CLOEXEC);
}

static int tc_shm_fd_by_pidfd(pid_t pid, int fd)
{
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pidfd < 0)
        return -1;
    int got = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0); /* close-on-exec is set */
    int saved = errno;
    close(pidfd);
    errno = saved;
    return got;
#else
    (void)pid;
    (void)fd;
    errno = ENOSYS;
    return -1;
#endif
}

/* Once per process: can it make a memfd and open one by pid and fd? */
static void tc_shm_memfd_probe_once(void)
{
    int fd = memfd_create("topocoll", MFD_CLOEXEC);
    if (fd < 0) {
        snprintf(tc_memfd_why, sizeof tc_memfd_why, "memfd_create: %s", strerror(errno));
        return;
    }
    int got = tc_shm_fd_by_proc(getpid(), fd), e_proc = errno;
    if (got >= 0) {
        tc_memfd_how = TC_MEMFD_PROC;
    } else if ((got = tc_shm_fd_by_pidfd(getpid(), fd)) >= 0) {
        tc_memfd_how = TC_MEMFD_PIDFD;
    } else {
        snprintf(tc_memfd_why, sizeof tc_memfd_why, "/proc/<pid>/fd: %s, pidfd_getfd: %s",
                 strerror(e_proc), strerror(errno));
    }
    if (got >= 0)
        close(got);
    close(fd);
}

static tc_memfd_how_t tc_shm_memfd_probe(void)
{
    pthread_once(&tc_memfd_once, tc_shm_memfd_probe_once);
    return tc_memfd_how;
}

/* Open the memfd @p fd of process @p pid: the probed way first, then the other. */
static int tc_shm_memfd_open(pid_t pid, int fd, char *why, size_t len)
{
    int got = -1, e_proc = 0;
    if (tc_memfd_how == TC_MEMFD_PROC && (got = tc_shm_fd_by_proc(pid, fd)) < 0)
        e_proc = errno;
    if (got < 0 && (got = tc_shm_fd_by_pidfd(pid, fd)) < 0) {
        int e_pidfd = errno;
        if (tc_memfd_how != TC_MEMFD_PROC && (got = tc_shm_fd_by_proc(pid, fd)) < 0)
            e_proc = errno;
        if (got < 0)
            snprintf(why, len, "/proc/%ld/fd/%d: %s, pidfd_getfd: %s", (long)pid, fd,
                     strerror(e_proc), strerror(e_pidfd));
    }
    return got;
}

/* Size a fresh segment (@p name for messages) and allocate its first
 * @p header_size bytes; a full /dev/shm (or, for a memfd, the memory
 * cgroup's limit) fails here rather than as a SIGBUS later. */
static tc_err_t tc_shm_fd_size(int fd, const char *name, size_t total, size_t header_size)
{
    if (ftruncate(fd, (off_t)total) != 0) {
        int e = errno;
        tc_log(TC_LOG_INFO, "ftruncate(%s, %zu) failed: %s", name, total, strerror(e));
        return tc_err_sys(e);
    }
    int rc = posix_fallocate(fd, 0, (off_t)header_size);
    if (rc != 0) {
        tc_log(TC_LOG_INFO, "posix_fallocate(%s) failed: %s", name, strerror(rc));
        return tc_err_sys(rc);
    }
    return TC_OK;
}

static tc_err_t tc_shm_memfd_create(size_t total, size_t header_size, int *out)
{
    tc_err_t err;
    int fd = memfd_create("topocoll", MFD_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        tc_log(TC_LOG_INFO, "memfd_create failed: %s", strerror(e));
        return tc_err_sys(e);
    }
    if ((err = tc_shm_fd_size(fd, "memfd:topocoll", total, header_size)) != TC_OK) {
        close(fd);
        return err;
    }
    *out = fd;
    return TC_OK;
}

/* Creator side: open a fresh name, size it, allocate the header. */
static tc_err_t tc_shm_file_create(char *name, size_t len, size_t total, size_t header_size,
                                   int *out)
{
    tc_err_t err = TC_OK;
    int fd = -1;
    for (int attempt = 0; attempt < 8 && fd < 0; attempt++) {
        if ((err = tc_shm_name_random(name, len)) != TC_OK)
            return err;
        fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd < 0 && errno != EEXIST) {
            int e = errno;
            tc_log(TC_LOG_INFO, "shm_open(%s) failed: %s", name, strerror(e));
            return tc_err_sys(e);
        }
    }
    if (fd < 0)
        return tc_err_sys(EEXIST);
    if ((err = tc_shm_fd_size(fd, name, total, header_size)) != TC_OK) {
        close(fd);
        shm_unlink(name);
        return err;
    }
    *out = fd;
    return TC_OK;
}

/* Place and allocate this process's own region (step 3 of segment.h). */
static tc_err_t tc_shm_region_allocate(tc_shm_comm_t *s, int fd, tc_placement_t placement)
{
    size_t off = tc_shm_layout_region(&s->layout, s->rank);
    size_t len = s->layout.region_size;
    if (placement == TC_PLACEMENT_NONE)
        return TC_OK; /* the creator allocated everything */
    if (placement == TC_PLACEMENT_MBIND && s->numa_node >= 0)
        numa_tonode_memory(s->base + off, len, s->numa_node);
    int rc = posix_fallocate(fd, (off_t)off, (off_t)len);
    if (rc != 0) {
        tc_log(TC_LOG_INFO, "posix_fallocate of %zu bytes in %s failed: %s (is /dev/shm full?)",
               len, s->name, strerror(rc));
        return tc_err_sys(rc);
    }
    return TC_OK;
}

/* move_pages in query mode over our region: how many pages are on our node.
 * A page must have been touched by this process for the query to answer
 * (otherwise -ENOENT), so read each first. */
static void tc_shm_placement_check(tc_shm_comm_t *s)
{
    s->pages_checked = -1;
    s->pages_local = 0;
    if (s->numa_node < 0)
        return;
    size_t page = s->layout.page;
    size_t n = s->layout.region_size / page;
    void **pages = malloc(n * sizeof *pages);
    int *status = malloc(n * sizeof *status);
    if (!pages || !status)
        goto fn_exit;
    char *region = s->base + tc_shm_layout_region(&s->layout, s->rank);
    for (size_t i = 0; i < n; i++) {
        pages[i] = region + i * page;
        (void)*(volatile char *)pages[i]; /* fault it in for the query; not synchronisation */
    }
    if (move_pages(0, (unsigned long)n, pages, NULL, status, 0) != 0)
        goto fn_exit;
    s->pages_checked = 0;
    for (size_t i = 0; i < n; i++) {
        if (status[i] >= 0)
            s->pages_checked++;
        if (status[i] == s->numa_node)
            s->pages_local++;
    }
    if (s->pages_local != s->pages_checked)
        tc_log(TC_LOG_INFO,
               "segment %s: only %ld of %ld pages of rank %d's queue are on its "
               "NUMA node %d",
               s->name, s->pages_local, s->pages_checked, s->rank, s->numa_node);
fn_exit:
    free(pages);
    free(status);
}

/* What the creator tells the others (one PMPI_Bcast of bytes). */
enum { TC_SHM_KIND_NONE = -1, TC_SHM_KIND_MEMFD, TC_SHM_KIND_NAMED };
typedef struct tc_shm_handle {
    int32_t kind;  /* TC_SHM_KIND_*; NONE: the creator could not create */
    int32_t pid;   /* the creator */
    int32_t fd;    /* its descriptor of the segment (memfd: the others open it) */
    char name[48]; /* named: the /dev/shm name */
    char why[160]; /* why this kind, for reports */
} tc_shm_handle_t;

/* The creator's first choice (round 0 of tc_shm_comm_create). */
static int tc_shm_kind_choose(tc_shm_mechanism_t mech, char *why, size_t len, tc_err_t *err)
{
    static bool logged_unusable;
    if (mech == TC_SHM_MECHANISM_NAMED) {
        snprintf(why, len, "TC_SHM_MECHANISM=named");
        return TC_SHM_KIND_NAMED;
    }
    if (tc_shm_memfd_probe() == TC_MEMFD_NONE) {
        if (mech == TC_SHM_MECHANISM_MEMFD) {
            tc_log(TC_LOG_INFO, "TC_SHM_MECHANISM=memfd, but memfd segments are unusable here (%s)",
                   tc_memfd_why);
            *err = tc_err(TC_ERR_NOTSUP);
            return TC_SHM_KIND_MEMFD;
        }
        tc_log_once(logged_unusable, TC_LOG_INFO,
                    "memfd segments are unusable here (%s): named /dev/shm segments, unlinked once "
                    "every process has opened them",
                    tc_memfd_why);
        snprintf(why, len, "memfd unusable on the creator");
        return TC_SHM_KIND_NAMED;
    }
    if (mech == TC_SHM_MECHANISM_AUTO &&
        atomic_load_explicit(&tc_memfd_peer_failed, memory_order_relaxed)) {
        snprintf(why, len, "an earlier memfd could not be opened by some process");
        return TC_SHM_KIND_NAMED;
    }
    snprintf(why, len, "%s, opened by the others through %s",
             mech == TC_SHM_MECHANISM_MEMFD ? "TC_SHM_MECHANISM=memfd" : "default",
             tc_memfd_how == TC_MEMFD_PROC ? "/proc/<pid>/fd" : "pidfd_getfd");
    return TC_SHM_KIND_MEMFD;
}

/* A non-creator opens what @p hd describes; clears mine[0] (cannot go on:
 * *err says why) or mine[1] (cannot or will not open a memfd: all retry named). */
static void tc_shm_handle_open(const tc_shm_handle_t *hd, int mine[4], int *fd, tc_err_t *err)
{
    if (hd->kind == TC_SHM_KIND_MEMFD) {
        char why[200];
        if (!mine[3]) {
            mine[1] = 0; /* TC_SHM_MECHANISM=named here */
        } else if (tc_shm_memfd_probe() == TC_MEMFD_NONE) {
            mine[1] = 0;
            tc_log(TC_LOG_INFO, "cannot open the memfd segment of pid %d: %s", (int)hd->pid,
                   tc_memfd_why);
        } else if ((*fd = tc_shm_memfd_open(hd->pid, hd->fd, why, sizeof why)) < 0) {
            mine[1] = 0;
            tc_log(TC_LOG_INFO, "cannot open the memfd segment: %s", why);
        }
        return;
    }
    if (!mine[2]) {
        mine[0] = 0;
        *err = tc_err(TC_ERR_NOTSUP);
        tc_log(TC_LOG_INFO, "segment %s is a named one and TC_SHM_MECHANISM=memfd here", hd->name);
    } else if ((*fd = shm_open(hd->name, O_RDWR, 0600)) < 0) {
        mine[0] = 0;
        *err = tc_err_sys(errno);
        tc_log(TC_LOG_INFO, "shm_open(%s) failed: %s", hd->name, strerror(tc_err_cause(*err)));
    }
}

tc_err_t tc_shm_comm_create(tc_shm_comm_t **out, MPI_Comm node_comm, const tc_shm_params_t *params,
                            const tc_shm_policy_t *policy, const tc_wait_info_t *wait)
{
    *out = NULL;
    tc_err_t err = TC_OK; /* this process's first failure */
    int all_ok = 0, fd = -1;
    tc_shm_comm_t *s = calloc(1, sizeof *s);
    int rank, p;
    PMPI_Comm_rank(node_comm, &rank);
    PMPI_Comm_size(node_comm, &p);
    if (!s) {
        err = tc_err(TC_ERR_NOMEM);
    } else {
        s->rank = rank;
        s->p = p;
        s->wait = wait;
        s->pages_checked = -1;
        s->tw_over_t = params->tw_over_t;
        s->stream_bytes = params->stream_bytes;
        s->numa_node = tc_shm_numa_node_self();
        s->reduce_slice_min = params->reduce_slice_min;
        s->rfrag_default = s->rfrag_call = params->reduce_slot_bytes / TC_CACHELINE * TC_CACHELINE;
        /* Wide slots (params.h) or none: the fragment race's threshold. */
        s->reduce_wide_min = tc_shm_params_rslot_bytes(params) > params->reduce_slot_bytes
                                 ? params->reduce_wide_min
                                 : 0;
        s->reduce_tree_max = params->reduce_tree_max;
        s->reduce_tree_arity = params->reduce_tree_arity;
        s->scan_tree_min = params->scan_tree_min;
        s->reduce_copy = params->reduce_copy;
        s->bcast_copy = params->bcast_copy;
        if ((err = tc_shm_layout_compute_full(
                 &s->layout, p, params->S, params->q, params->f,
                 params->reduce_slots_contended > params->reduce_slots
                     ? params->reduce_slots_contended
                     : params->reduce_slots,
                 tc_shm_params_rslot_bytes(params) / TC_CACHELINE * TC_CACHELINE,
                 (size_t)sysconf(_SC_PAGESIZE), TC_CACHELINE)) != TC_OK ||
            (params->reduce_slots_contended > params->reduce_slots &&
             (err = tc_shm_layout_set_rdepth(&s->layout, params->reduce_slots)) != TC_OK) ||
            (err = tc_shm_layout_add_store(&s->layout, tc_shm_store_lock_bytes(p),
                                           TC_SHM_STORE_BYTES)) != TC_OK ||
            (err = tc_shm_tree_build(&s->tree, p, rank, params->tree, params->arity)) != TC_OK)
            ; /* err says why */
        else if (!(s->bank_frags = calloc((size_t)params->q, sizeof *s->bank_frags)) ||
                 !(s->seen_done = calloc((size_t)p, sizeof *s->seen_done)) ||
                 !(s->seen_bdone = calloc((size_t)p, sizeof *s->seen_bdone)) ||
                 !(s->seen_rdone = calloc(3 * (size_t)p, sizeof *s->seen_rdone)))
            err = tc_err(TC_ERR_NOMEM);
        else if (s->layout.rdepth < s->layout.rslots &&
                 (!(s->rq_frag = calloc((size_t)s->layout.rslots, sizeof *s->rq_frag)) ||
                  !(s->rq_slot = calloc((size_t)s->layout.rslots, sizeof *s->rq_slot)) ||
                  !(s->rfree = calloc((size_t)s->layout.rslots, sizeof *s->rfree)) ||
                  !(s->rstate = calloc((size_t)s->layout.rslots, sizeof *s->rstate))))
            err = tc_err(TC_ERR_NOMEM);
        if (err == TC_OK)
            s->rdepth_call = s->rwf_call = (uint64_t)s->layout.rslots;
    }
    if (err == TC_OK && policy->fail)
        err = tc_err(TC_ERR_LIMIT);
    if (err == TC_OK && s->layout.total > policy->max_segment) {
        tc_log(TC_LOG_INFO, "segment of %zu bytes exceeds TC_SHM_MAX_SEGMENT=%zu", s->layout.total,
               policy->max_segment);
        err = tc_err(TC_ERR_LIMIT);
    }
    if (err == TC_OK && tc_shm_mapped_total() + s->layout.total > policy->max_total) {
        tc_log(TC_LOG_INFO, "segment of %zu bytes would exceed TC_SHM_MAX_TOTAL=%zu (%zu mapped)",
               s->layout.total, policy->max_total, tc_shm_mapped_total());
        err = tc_err(TC_ERR_LIMIT);
    }

    /* Steps 1-2: the first process creates, everyone learns how to open it. */
    if (rank == 0 && err == TC_OK) {
        /* Every shmem page on the node (our unlinked segments and memfds
         * included) bounds our usage from above; only when that bound is
         * over the cap is /proc read for the exact figure. */
        size_t used = tc_shm_usage_bound();
        if (used + s->layout.total > policy->max_node)
            used = tc_shm_node_usage();
        if (used + s->layout.total > policy->max_node) {
            tc_log(TC_LOG_INFO,
                   "segment of %zu bytes would exceed TC_SHM_MAX_NODE=%zu (%zu in use on the node)",
                   s->layout.total, policy->max_node, used);
            err = tc_err(TC_ERR_LIMIT);
        }
    }
    tc_shm_handle_t hd;
    int kind = TC_SHM_KIND_MEMFD;
    char why[sizeof hd.why] = "";
    if (rank == 0 && err == TC_OK) {
        tc_shm_stale_remove(); /* named files a killed creator left, whatever we make now */
        kind = tc_shm_kind_choose(policy->mechanism, why, sizeof why, &err);
    }
    for (int round = 0;; round++) {
        memset(&hd, 0, sizeof hd);
        hd.kind = TC_SHM_KIND_NONE;
        if (rank == 0 && err == TC_OK) {
            /* TC_SHM_PLACEMENT=none: the creator allocates the whole segment,
             * so every page lands on its node (the NUMA-unaware baseline). */
            size_t first =
                policy->placement == TC_PLACEMENT_NONE ? s->layout.total : s->layout.header_size;
            if (kind == TC_SHM_KIND_MEMFD)
                err = tc_shm_memfd_create(s->layout.total, first, &fd);
            else
                err = tc_shm_file_create(hd.name, sizeof hd.name, s->layout.total, first, &fd);
            if (err == TC_OK) {
                hd.kind = kind;
                hd.pid = (int32_t)getpid();
                hd.fd = fd;
                snprintf(hd.why, sizeof hd.why, "%s", why);
            }
        }
        PMPI_Bcast(&hd, (int)sizeof hd, MPI_BYTE, 0, node_comm);
        /* MIN over the node: [0] all can go on, [1] all opened the memfd,
         * [2] all allow a named segment, [3] all allow a memfd. */
        int mine[4] = {err == TC_OK && hd.kind != TC_SHM_KIND_NONE, 1,
                       policy->mechanism != TC_SHM_MECHANISM_MEMFD,
                       policy->mechanism != TC_SHM_MECHANISM_NAMED},
            all[4];
        if (mine[0] && rank != 0)
            tc_shm_handle_open(&hd, mine, &fd, &err);
        PMPI_Allreduce(mine, all, 4, MPI_INT, MPI_MIN, node_comm);
        /* Everyone that will ever open the name has opened it (or given
         * up): from here on nothing is left in /dev/shm, even if a process
         * is killed. The descriptors keep the segment. */
        if (rank == 0 && hd.kind == TC_SHM_KIND_NAMED)
            shm_unlink(hd.name);
        if (all[0] && (hd.kind != TC_SHM_KIND_MEMFD || all[1]))
            break;
        if (fd >= 0)
            close(fd);
        fd = -1;
        if (!all[0] || hd.kind != TC_SHM_KIND_MEMFD || !all[2] || round > 0) {
            if (err == TC_OK)
                err = tc_err(TC_ERR_PEER);
            break;
        }
        /* A memfd that some process could not open (or refused): all fall
         * back to a named segment together. */
        static bool logged_fallback;
        if (all[3]) {
            atomic_store_explicit(&tc_memfd_peer_failed, 1, memory_order_relaxed);
            snprintf(why, sizeof why, "some process could not open the creator's memfd");
        } else {
            snprintf(why, sizeof why, "TC_SHM_MECHANISM=named on some process");
        }
        if (rank == 0)
            tc_log_once(logged_fallback, TC_LOG_INFO,
                        "%s: %s%s: named /dev/shm segments, unlinked once every process has "
                        "opened them",
                        wait && wait->comm_name ? wait->comm_name : "segment", why,
                        all[3] ? " (TC_VERBOSE=1 there says why)" : "");
        kind = TC_SHM_KIND_NAMED;
    }
    if (err == TC_OK) {
        s->memfd = hd.kind == TC_SHM_KIND_MEMFD;
        if (s->memfd)
            snprintf(s->name, sizeof s->name, "memfd:topocoll (pid %d, fd %d)", (int)hd.pid,
                     (int)hd.fd);
        else
            snprintf(s->name, sizeof s->name, "%s", hd.name);
        snprintf(s->mechanism, sizeof s->mechanism, "%s", hd.why);
    }
    const char *name = s ? s->name : "";
    /* Step 3: map, readahead off, allocate and zero our own region. */
    if (err == TC_OK) {
        struct stat st;
        void *m = MAP_FAILED;
        if (fstat(fd, &st) != 0)
            err = tc_err_sys(errno);
        else if ((size_t)st.st_size != s->layout.total)
            err = tc_err(TC_ERR_INTERN);
        else if ((m = mmap(NULL, s->layout.total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) ==
                 MAP_FAILED)
            err = tc_err_sys(errno);
        if (err != TC_OK) {
            char text[128];
            tc_log(TC_LOG_INFO, "mapping %s failed: %s", name,
                   tc_err_string(err, text, sizeof text));
        } else {
            s->base = m;
            atomic_fetch_add_explicit(&tc_shm_mapped_bytes, s->layout.total, memory_order_relaxed);
            /* Paper 000: readahead would place neighbouring blocks on the
             * toucher's node; random access turns it off during set-up. */
            madvise(s->base, s->layout.total, MADV_RANDOM);
        }
    }
    if (err == TC_OK)
        err = tc_shm_region_allocate(s, fd, policy->placement);
    if (err == TC_OK) {
        if (rank == 0) {
            tc_shm_header_t *h = (tc_shm_header_t *)(void *)s->base;
            h->magic = TC_SHM_MAGIC;
            h->total = s->layout.total;
            h->f = s->layout.f;
            h->p = p;
            h->S = s->layout.S;
            h->q = s->layout.q;
            /* The store's lock and area are in the header, which only the
             * creator has allocated; the others attach after the barrier. */
            tc_shm_store_create(s, params->lock_scheme);
        }
        /* Our control block starts at zero (fallocate gives zeroed pages);
         * writing it is also the first touch of the page. */
        memset(s->base + tc_shm_layout_region(&s->layout, rank), 0, s->layout.ctrl_size);
        ((int *)(void *)(s->base + s->layout.numa_off))[rank] = s->numa_node;
    }
    /* Step 4: the allreduce tells whether all of us are in. It also
     * orders the header and control-block writes above before any use
     * (MPI's synchronisation is a full barrier between processes). */
    int ok = err == TC_OK;
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, node_comm);
    if (fd >= 0)
        close(fd);
    if (!all_ok) {
        tc_shm_comm_destroy(s);
        return ok ? tc_err(TC_ERR_PEER) : err;
    }
    const tc_shm_header_t *h = (const tc_shm_header_t *)(const void *)s->base;
    if (h->magic != TC_SHM_MAGIC || h->total != s->layout.total) {
        /* Cannot happen with agreed parameters; refuse rather than corrupt. */
        tc_log(TC_LOG_ERROR, "segment %s: header mismatch", name);
        tc_shm_comm_destroy(s);
        return tc_err(TC_ERR_INTERN);
    }
    const int *numa = (const int *)(const void *)(s->base + s->layout.numa_off);
    int leader = rank;
    for (int i = 0; i < p; i++)
        if (numa[i] == s->numa_node) {
            leader = i;
            break;
        }
    ((int *)(void *)(s->base + s->layout.leaders_off))[rank] = leader;
    tc_shm_store_attach(s);
    /* Step 5. */
    tc_shm_placement_check(s);
    *out = s;
    return TC_OK;
}

void tc_shm_comm_destroy(tc_shm_comm_t *s)
{
    if (!s)
        return;
    tc_shm_store_detach(s);
    if (s->base) {
        munmap(s->base, s->layout.total);
        atomic_fetch_sub_explicit(&tc_shm_mapped_bytes, s->layout.total, memory_order_relaxed);
    }
    tc_shm_tree_free(&s->tree);
    free(s->bank_frags);
    free(s->seen_done);
    free(s->seen_bdone);
    free(s->seen_rdone);
    free(s->rq_frag);
    free(s->rq_slot);
    free(s->rfree);
    free(s->rstate);
    free(s);
}
