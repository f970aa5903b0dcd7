/*
 * copy-pipeline: raw two-process shared-memory copy pipeline, the bandwidth
 * reference for TC_Bcast (see raw_pipeline.h). No MPI: the process forks, the
 * parent produces and the child consumes through an anonymous MAP_SHARED ring.
 *
 * For each size, each repetition sends a burst of messages back to back (about
 * 64 MiB in total, at least 2 messages) after a two-party barrier; the time per
 * message is the consumer's elapsed time divided by the burst length (the
 * consumer finishes last). Reported: the median over repetitions, as
 * microseconds per message and GB/s (10^9 bytes per second), and the best.
 */
#include "bench_util.h"
#include "raw_pipeline.h"

#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_SIZES    64
#define BURST_BYTES  (64u << 20)
#define DEFAULT_REPS 15
#define DEFAULT_MIN  (1u << 20)
#define DEFAULT_MAX  (16u << 20)
#define OPT_PIN      1000

static void usage(FILE *f, const char *prog)
{
    fprintf(f,
            "usage: %s [options]\n"
            "Raw two-process shared-memory copy pipeline (fork, MAP_SHARED ring).\n"
            "  -m MIN:MAX   message sizes in bytes, powers of two, K/M/G suffixes "
            "(default 1M:16M)\n"
            "  -f BYTES     fragment (slot) size (default %d)\n"
            "  -s SLOTS     ring slots (default %d)\n"
            "  -r REPS      repetitions per size, median reported (default %d)\n"
            "  --pin        pin producer to CPU 0 and consumer to CPU 1\n"
            "  -h           this help\n",
            prog, TC_BENCH_RING_FRAG_DEFAULT, TC_BENCH_RING_SLOTS_DEFAULT, DEFAULT_REPS);
}

static void pin_to(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0)
        perror("copy-pipeline: sched_setaffinity (continuing unpinned)");
}

static void *map_shared(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* One side's whole run; the consumer stores its burst times in times[size][rep]. */
static void run_side(int producer, void *ring, const size_t *sizes, int nsizes, int reps,
                     double *times)
{
    tc_bench_ring_end_t end;
    uint64_t round = 0;
    size_t maxsz = sizes[nsizes - 1];
    char *buf = NULL;

    /* Page aligned like topocoll-bench's buffers: malloc's 16-byte offset makes
     * every fragment copy straddle cache lines and costs several times the
     * bandwidth on some machines. */
    if (posix_memalign((void **)&buf, 4096, maxsz ? maxsz : 1) != 0) {
        fprintf(stderr, "copy-pipeline: cannot allocate %zu bytes\n", maxsz);
        exit(1);
    }
    memset(buf, producer ? 0x5a : 0, maxsz); /* first touch outside the timing */
    tc_bench_ring_end_attach(&end, ring);
    for (int si = 0; si < nsizes; si++) {
        size_t n = sizes[si];
        int burst = n ? (int)(BURST_BYTES / n) : 1000;
        if (burst < 2)
            burst = 2;
        for (int r = -1; r < reps; r++) { /* r == -1: warm-up */
            tc_bench_ring_barrier(&end, &round);
            double t0 = tc_bench_now();
            for (int b = 0; b < burst; b++) {
                if (producer)
                    tc_bench_ring_send(&end, buf, n);
                else
                    tc_bench_ring_recv(&end, buf, n);
            }
            double t = (tc_bench_now() - t0) / burst;
            if (!producer && r >= 0)
                times[si * reps + r] = t;
        }
    }
    tc_bench_ring_barrier(&end, &round);
    free(buf);
}

int main(int argc, char **argv)
{
    size_t min = DEFAULT_MIN, max = DEFAULT_MAX, frag = TC_BENCH_RING_FRAG_DEFAULT;
    size_t sizes[MAX_SIZES];
    long slots = TC_BENCH_RING_SLOTS_DEFAULT, reps = DEFAULT_REPS;
    int pin = 0, nsizes, c;
    static const struct option longopts[] = {
        {"pin", no_argument, NULL, OPT_PIN}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};

    while ((c = getopt_long(argc, argv, "m:f:s:r:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'm':
            if (tc_bench_range_parse(optarg, &min, &max) != 0) {
                fprintf(stderr, "copy-pipeline: -m '%s': expected MIN:MAX, e.g. 1M:16M\n", optarg);
                return 2;
            }
            break;
        case 'f':
            if (tc_bench_size_parse(optarg, &frag) != 0 || frag == 0) {
                fprintf(stderr, "copy-pipeline: -f '%s': expected a size > 0, e.g. 8K\n", optarg);
                return 2;
            }
            break;
        case 's':
            slots = strtol(optarg, NULL, 10);
            if (slots < 1 || slots > 1 << 16) {
                fprintf(stderr, "copy-pipeline: -s '%s': expected 1..65536\n", optarg);
                return 2;
            }
            break;
        case 'r':
            reps = strtol(optarg, NULL, 10);
            if (reps < 1 || reps > 100000) {
                fprintf(stderr, "copy-pipeline: -r '%s': expected 1..100000\n", optarg);
                return 2;
            }
            break;
        case OPT_PIN:
            pin = 1;
            break;
        case 'h':
            usage(stdout, argv[0]);
            return 0;
        default:
            usage(stderr, argv[0]);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "copy-pipeline: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    nsizes = tc_bench_range_sizes(min, max, sizes, MAX_SIZES);
    if (nsizes == 0) {
        fprintf(stderr, "copy-pipeline: no power of two in %zu:%zu\n", min, max);
        return 2;
    }

    void *ringmem = map_shared(tc_bench_ring_bytes(frag, (unsigned)slots) + TC_CACHELINE);
    double *times = map_shared((size_t)nsizes * (size_t)reps * sizeof(double));
    if (ringmem == NULL || times == NULL) {
        perror("copy-pipeline: mmap");
        return 1;
    }
    void *ring = tc_bench_ring_align(ringmem);
    tc_bench_ring_init(ring, frag, (unsigned)slots);

    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        perror("copy-pipeline: fork");
        return 1;
    }
    if (pid == 0) {
        if (pin)
            pin_to(1);
        run_side(0, ring, sizes, nsizes, (int)reps, times);
        _exit(0);
    }
    if (pin)
        pin_to(0);
    run_side(1, ring, sizes, nsizes, (int)reps, times);
    int status;
    if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "copy-pipeline: consumer process failed\n");
        return 1;
    }

    printf("# copy-pipeline frag=%zu slots=%ld reps=%ld pin=%d\n", frag, slots, reps, pin);
    printf("# per size: median over repetitions of the consumer's time per message "
           "(bursts of ~64 MiB)\n");
    printf("# %12s %12s %10s %12s %10s\n", "size_bytes", "us", "GB/s", "min_us", "max_GB/s");
    for (int si = 0; si < nsizes; si++) {
        double *t = times + (size_t)si * (size_t)reps;
        double best = tc_bench_min(t, (int)reps);
        double med = tc_bench_median(t, (int)reps);
        double n = (double)sizes[si];
        printf("%14zu %12.2f %10.3f %12.2f %10.3f\n", sizes[si], med * 1e6,
               med > 0 ? n / med / 1e9 : 0.0, best * 1e6, best > 0 ? n / best / 1e9 : 0.0);
    }
    return 0;
}
