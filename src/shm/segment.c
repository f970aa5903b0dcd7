#include "segment.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <numa.h>
#include <numaif.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "../core/log.h"
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

/* Add the topocoll mappings of one maps file to @p seen (distinct segments). */
static void tc_shm_usage_scan(FILE *maps, tc_shm_seen_t **seen, size_t *n, size_t *cap)
{
    char line[512];
    while (fgets(line, sizeof line, maps)) {
        if (!strstr(line, "/dev/shm/topocoll-"))
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
                    return;
                *seen = p;
                *cap = c;
            }
            (*seen)[(*n)++] = (tc_shm_seen_t){dev, inode, 0};
        }
        if (end - start > (*seen)[i].bytes)
            (*seen)[i].bytes = end - start;
    }
}

static size_t tc_shm_dev_shm_used(void)
{
    struct statvfs vfs;
    if (statvfs("/dev/shm", &vfs) != 0)
        return SIZE_MAX / 2; /* unknown: make the caller count exactly */
    return (size_t)(vfs.f_blocks - vfs.f_bfree) * (size_t)vfs.f_frsize;
}

size_t tc_shm_node_usage(void)
{
    DIR *proc = opendir("/proc");
    if (!proc)
        return 0;
    tc_shm_seen_t *seen = NULL;
    size_t n = 0, cap = 0, total = 0;
    uid_t uid = getuid();
    struct dirent *e;
    while ((e = readdir(proc)) != NULL) {
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
        tc_shm_usage_scan(maps, &seen, &n, &cap);
        fclose(maps);
    }
    closedir(proc);
    for (size_t i = 0; i < n; i++)
        total += seen[i].bytes;
    free(seen);
    return total;
}

static int tc_shm_numa_node_self(void)
{
    if (numa_available() < 0)
        return -1;
    int cpu = sched_getcpu();
    return cpu < 0 ? -1 : numa_node_of_cpu(cpu);
}

/* "/topocoll-" + 16 hex digits from the kernel's CSPRNG: not guessable, so
 * another user cannot pre-create or squat the name (O_EXCL catches the rest). */
static int tc_shm_name_random(char *name, size_t len)
{
    uint64_t r;
    if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
        return -1;
    snprintf(name, len, "/topocoll-%016llx", (unsigned long long)r);
    return 0;
}

/* Creator side: open a fresh name, size it, allocate the header. */
static int tc_shm_file_create(char *name, size_t len, size_t total, size_t header_size)
{
    int fd = -1;
    for (int attempt = 0; attempt < 8 && fd < 0; attempt++) {
        if (tc_shm_name_random(name, len) != 0)
            return -1;
        fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd < 0 && errno != EEXIST) {
            tc_log(TC_LOG_INFO, "shm_open(%s) failed: %s", name, strerror(errno));
            return -1;
        }
    }
    if (fd < 0)
        return -1;
    if (ftruncate(fd, (off_t)total) != 0) {
        tc_log(TC_LOG_INFO, "ftruncate(%s, %zu) failed: %s", name, total, strerror(errno));
        goto fn_fail;
    }
    int rc = posix_fallocate(fd, 0, (off_t)header_size);
    if (rc != 0) {
        tc_log(TC_LOG_INFO, "posix_fallocate(%s) failed: %s", name, strerror(rc));
        goto fn_fail;
    }
    return fd;
fn_fail:
    close(fd);
    shm_unlink(name);
    return -1;
}

/* Place and allocate this process's own region (step 3 of segment.h). */
static int tc_shm_region_allocate(tc_shm_comm_t *s, int fd, tc_placement_t placement)
{
    size_t off = tc_shm_layout_region(&s->layout, s->rank);
    size_t len = s->layout.region_size;
    if (placement == TC_PLACEMENT_NONE)
        return 0; /* the creator allocated everything */
    if (placement == TC_PLACEMENT_MBIND && s->numa_node >= 0)
        numa_tonode_memory(s->base + off, len, s->numa_node);
    int rc = posix_fallocate(fd, (off_t)off, (off_t)len);
    if (rc != 0) {
        tc_log(TC_LOG_INFO, "posix_fallocate of %zu bytes in %s failed: %s (is /dev/shm full?)",
               len, s->name, strerror(rc));
        return -1;
    }
    return 0;
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

int tc_shm_comm_create(tc_shm_comm_t **out, MPI_Comm node_comm, const tc_shm_params_t *params,
                       const tc_shm_policy_t *policy, const tc_wait_info_t *wait)
{
    *out = NULL;
    int ok = 1, all_ok = 0, fd = -1;
    tc_shm_comm_t *s = calloc(1, sizeof *s);
    int rank, p;
    PMPI_Comm_rank(node_comm, &rank);
    PMPI_Comm_size(node_comm, &p);
    if (!s) {
        ok = 0;
    } else {
        s->rank = rank;
        s->p = p;
        s->wait = wait;
        s->pages_checked = -1;
        s->tw_over_t = params->tw_over_t;
        s->stream_bytes = params->stream_bytes;
        s->numa_node = tc_shm_numa_node_self();
        s->reduce_slice_min = params->reduce_slice_min;
        s->reduce_tree_max = params->reduce_tree_max;
        s->reduce_tree_arity = params->reduce_tree_arity;
        s->reduce_copy = params->reduce_copy;
        s->bcast_copy = params->bcast_copy;
        if (tc_shm_layout_compute_full(&s->layout, p, params->S, params->q, params->f,
                                       params->reduce_slots,
                                       params->reduce_slot_bytes / TC_CACHELINE * TC_CACHELINE,
                                       (size_t)sysconf(_SC_PAGESIZE), TC_CACHELINE) != 0 ||
            tc_shm_layout_add_store(&s->layout, tc_shm_store_lock_bytes(p), TC_SHM_STORE_BYTES) !=
                0 ||
            tc_shm_tree_build(&s->tree, p, rank, params->tree, params->arity) != 0 ||
            !(s->bank_frags = calloc((size_t)params->q, sizeof *s->bank_frags)) ||
            !(s->seen_done = calloc((size_t)p, sizeof *s->seen_done)) ||
            !(s->seen_rdone = calloc(2 * (size_t)p, sizeof *s->seen_rdone)))
            ok = 0;
    }
    if (ok && policy->fail)
        ok = 0;
    if (ok && s->layout.total > policy->max_segment) {
        tc_log(TC_LOG_INFO, "segment of %zu bytes exceeds TC_SHM_MAX_SEGMENT=%zu", s->layout.total,
               policy->max_segment);
        ok = 0;
    }
    if (ok && tc_shm_mapped_total() + s->layout.total > policy->max_total) {
        tc_log(TC_LOG_INFO, "segment of %zu bytes would exceed TC_SHM_MAX_TOTAL=%zu (%zu mapped)",
               s->layout.total, policy->max_total, tc_shm_mapped_total());
        ok = 0;
    }

    /* Steps 1-2: the first process creates, everyone learns the name ("" on failure). */
    char name[40] = "";
    if (rank == 0 && ok) {
        /* Everything /dev/shm holds (our unlinked but mapped segments
         * included) bounds our usage from above; only when that bound is
         * over the cap is /proc read for the exact figure. */
        size_t used = tc_shm_dev_shm_used();
        if (used + s->layout.total > policy->max_node)
            used = tc_shm_node_usage();
        if (used + s->layout.total > policy->max_node) {
            tc_log(TC_LOG_INFO,
                   "segment of %zu bytes would exceed TC_SHM_MAX_NODE=%zu (%zu in use on the node)",
                   s->layout.total, policy->max_node, used);
            ok = 0;
        }
    }
    if (rank == 0 && ok) {
        /* TC_SHM_PLACEMENT=none: the creator allocates the whole segment, so
         * every page lands on its node (the NUMA-unaware baseline). */
        fd = tc_shm_file_create(name, sizeof name, s->layout.total,
                                policy->placement == TC_PLACEMENT_NONE ? s->layout.total
                                                                       : s->layout.header_size);
        if (fd < 0)
            ok = 0;
    }
    PMPI_Bcast(name, sizeof name, MPI_CHAR, 0, node_comm);
    if (name[0] == '\0')
        ok = 0;
    if (ok) {
        memcpy(s->name, name, sizeof name);
        if (rank != 0 && (fd = shm_open(name, O_RDWR, 0600)) < 0) {
            tc_log(TC_LOG_INFO, "shm_open(%s) failed: %s", name, strerror(errno));
            ok = 0;
        }
    }
    /* Step 3: map, readahead off, allocate and zero our own region. */
    if (ok) {
        struct stat st;
        void *m = MAP_FAILED;
        if (fstat(fd, &st) == 0 && (size_t)st.st_size == s->layout.total)
            m = mmap(NULL, s->layout.total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED) {
            tc_log(TC_LOG_INFO, "mapping %s failed: %s", name, strerror(errno));
            ok = 0;
        } else {
            s->base = m;
            atomic_fetch_add_explicit(&tc_shm_mapped_bytes, s->layout.total, memory_order_relaxed);
            /* Paper 000: readahead would place neighbouring blocks on the
             * toucher's node; random access turns it off during set-up. */
            madvise(s->base, s->layout.total, MADV_RANDOM);
        }
    }
    if (ok && tc_shm_region_allocate(s, fd, policy->placement) != 0)
        ok = 0;
    if (ok) {
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
    /* Step 4: everyone that will ever open the name has done so. The
     * allreduce is the barrier and tells whether all of us are in. It also
     * orders the header and control-block writes above before any use
     * (MPI's synchronisation is a full barrier between processes). */
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, node_comm);
    if (rank == 0 && name[0] != '\0')
        shm_unlink(name);
    if (fd >= 0)
        close(fd);
    if (!all_ok) {
        tc_shm_comm_destroy(s);
        return ok ? MPI_ERR_OTHER : MPI_ERR_NO_MEM;
    }
    const tc_shm_header_t *h = (const tc_shm_header_t *)(const void *)s->base;
    if (h->magic != TC_SHM_MAGIC || h->total != s->layout.total) {
        /* Cannot happen with agreed parameters; refuse rather than corrupt. */
        tc_log(TC_LOG_ERROR, "segment %s: header mismatch", name);
        tc_shm_comm_destroy(s);
        return MPI_ERR_INTERN;
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
    return MPI_SUCCESS;
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
    free(s->seen_rdone);
    free(s);
}
