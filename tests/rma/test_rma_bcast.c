/* One-sided broadcast (TC_Rma_*): every root, sizes 0 .. --max bytes,
 * linear and both binomial orders, non-zero displacements, two windows used
 * alternately (different disp units), back-to-back broadcasts with one flush,
 * test polled to completion, non-root wait and test, every process a root at
 * once, forwarding by the helper threads alone (non-roots not waiting), a
 * non-contiguous datatype refused with MPI_ERR_TYPE.
 *
 * Every byte a non-root receives is compared with pattern(round, root, index)
 * computed locally, and the guard bytes around the target region must be
 * untouched.
 *
 * Options: --single (MPI_Init instead of MPI_Init_thread(MULTIPLE): no helper
 * thread; the binomial request must fall back to linear and say so, checked by
 * capturing stderr), --max BYTES (largest size), --quick (fewer sizes),
 * --leave-registered (window A is left for MPI_Finalize to unregister).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <topocoll.h>
#include <unistd.h>

#include "tc_test_common.h"

#define GUARD   0xEE
#define DISP0   24 /* bytes before the first region: a non-zero displacement */
#define UNIT_B  8  /* disp unit of window B */
#define MAXALGS 3

static int rank, np;
static const char *prog = "test_rma_bcast";

static inline uint8_t pattern(unsigned round, int root, size_t i)
{
    uint32_t x = round * 2654435761u ^ (uint32_t)root * 40503u ^ (uint32_t)i * 2246822519u;
    x ^= x >> 13;
    return (uint8_t)(x * 0x5bd1e995u >> 24);
}

typedef struct win {
    MPI_Win win;
    int wid;
    uint8_t *mem;
    size_t bytes;
    int unit;
} win_t;

static void win_open(win_t *w, size_t bytes, int unit)
{
    /* MPICH 4.0.2 (ch4:ucx) shifts remote displacements by 8 bytes in a
     * window whose size is 8 modulo 16 (8 bytes per rank is one such size;
     * test_rma_small_win probes it): whole cache lines only. */
    bytes = (bytes + 63) / 64 * 64;
    w->bytes = bytes;
    w->unit = unit;
    MPI_Win_allocate((MPI_Aint)bytes, unit, MPI_INFO_NULL, MPI_COMM_WORLD, &w->mem, &w->win);
    memset(w->mem, GUARD, bytes);
    MPI_Win_set_errhandler(w->win, MPI_ERRORS_RETURN);
    int rc = TC_Rma_win_register(w->win, &w->wid);
    CHECK(rc == MPI_SUCCESS, "TC_Rma_win_register returned %d", rc);
    /* Every member agrees on the id. */
    int lo, hi;
    MPI_Allreduce(&w->wid, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&w->wid, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(lo == hi, "window ids differ across ranks (%d..%d)", lo, hi);
}

static void win_close(win_t *w)
{
    int rc = TC_Rma_win_unregister(w->wid);
    CHECK(rc == MPI_SUCCESS, "TC_Rma_win_unregister returned %d", rc);
    MPI_Win_free(&w->win);
}

/* Non-root: verify the region [off, off + n) and its guards, then restore the
 * guard bytes for the next round (the library's epoch is open: Win_sync
 * orders our stores before the next round's puts, after the barrier). */
static void verify_region(win_t *w, size_t off, size_t n, unsigned round, int root)
{
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++)
        if (w->mem[off + i] != pattern(round, root, i) && bad++ == 0)
            first = i;
    CHECK(bad == 0,
          "round %u root %d size %zu off %zu: %zu wrong bytes, first at %zu (got 0x%02x, want "
          "0x%02x)",
          round, root, n, off, bad, first, w->mem[off + first], pattern(round, root, first));
    if (bad && getenv("RMA_DEBUG")) {
        for (size_t k = 0; k + 4 < w->bytes; k++)
            if (w->mem[k] == pattern(round, root, 0) && w->mem[k + 1] == pattern(round, root, 1) &&
                w->mem[k + 2] == pattern(round, root, 2))
                fprintf(stderr, "  data found at offset %zu\n", k);
        for (size_t k = 0; k < 48; k++)
            fprintf(stderr, "%02x%s", w->mem[k], k == 47 ? "\n" : " ");
    }
    if (off > 0)
        CHECK(w->mem[off - 1] == GUARD, "round %u: guard before the region overwritten", round);
    if (off + n < w->bytes)
        CHECK(w->mem[off + n] == GUARD, "round %u root %d size %zu: guard after overwritten", round,
              root, n);
    memset(w->mem + off, GUARD, n);
    MPI_Win_sync(w->win);
}

static void fill(uint8_t *src, size_t n, unsigned round, int root)
{
    for (size_t i = 0; i < n; i++)
        src[i] = pattern(round, root, i);
}

/* Root: complete either with flush or with test polled to completion. */
static void root_complete(int wid, int poll)
{
    int rc;
    if (poll) {
        int flag = 0;
        long polls = 0;
        while (!flag) {
            rc = TC_Rma_bcast_test(wid, &flag);
            CHECK(rc == MPI_SUCCESS, "TC_Rma_bcast_test returned %d", rc);
            if (rc != MPI_SUCCESS)
                break;
            polls++;
        }
    } else {
        rc = TC_Rma_bcast_flush(wid);
        CHECK(rc == MPI_SUCCESS, "TC_Rma_bcast_flush returned %d", rc);
    }
}

/* Non-root: wait, or test polled. */
static void recv_complete(int wid, int root, int poll)
{
    int rc;
    if (poll) {
        int flag = 0;
        while (!flag) {
            rc = TC_Rma_bcast_recv_test(wid, root, &flag);
            CHECK(rc == MPI_SUCCESS, "TC_Rma_bcast_recv_test returned %d", rc);
            if (rc != MPI_SUCCESS)
                break;
        }
    } else {
        rc = TC_Rma_bcast_recv_wait(wid, root);
        CHECK(rc == MPI_SUCCESS, "TC_Rma_bcast_recv_wait returned %d", rc);
    }
}

/* One broadcast of n bytes from root to offset off (bytes) of w, sent as
 * elements of dt (element size esz), verified everywhere. */
static void one_bcast(win_t *w, uint8_t *src, size_t n, size_t off, int root, int alg,
                      unsigned round, MPI_Datatype dt, int esz)
{
    int poll = round & 1;
    if (rank == root) {
        fill(src, n, round, root);
        int rc = TC_Rma_bcast(src, (int)(n / (size_t)esz), dt, (MPI_Aint)(off / (size_t)w->unit),
                              w->wid, alg);
        CHECK(rc == MPI_SUCCESS, "TC_Rma_bcast returned %d", rc);
        root_complete(w->wid, poll);
    } else {
        recv_complete(w->wid, root, poll);
        verify_region(w, off, n, round, root);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    int single = 0, quick = 0, leave = 0, provided = MPI_THREAD_SINGLE;
    size_t max = (size_t)1 << 20;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--single") == 0)
            single = 1;
        else if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--leave-registered") == 0)
            leave = 1;
        else if (strcmp(argv[i], "--max") == 0 && i + 1 < argc)
            max = (size_t)strtoull(argv[++i], NULL, 0);
    }
    if (single)
        MPI_Init(&argc, &argv);
    else
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    tt_check_np(prog);
    if (!single && provided != MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            fprintf(stderr, "%s: MPI_THREAD_MULTIPLE not provided (%d)\n", prog, provided);
        MPI_Finalize();
        return 1; /* the threaded test must really run threaded */
    }

    /* Sizes: 0, odd small ones, one past a page, then powers of four up to max. */
    size_t sizes[32];
    int nsizes = 0;
    if (max < 8192)
        max = 8192; /* the back-to-back phase needs 3 regions */
    size_t base_sizes[] = {0, 1, 7, 1200, 4099};
    for (int i = 0; i < 5; i++)
        if (!(quick && (i == 2 || i == 4)))
            sizes[nsizes++] = base_sizes[i];
    for (size_t s = (size_t)1 << 16; s <= max && nsizes < 30; s <<= (quick ? 4 : 2))
        sizes[nsizes++] = s + 3 <= max ? s + 3 : s;
    if (sizes[nsizes - 1] != max)
        sizes[nsizes++] = max;

    size_t abytes = DISP0 + max + 64;
    win_t A, B;
    win_open(&A, abytes, 1);
    /* B: disp unit 8, room for one region per root (the all-roots phase). */
    size_t slot = 4096;
    win_open(&B, (size_t)DISP0 + (size_t)np * slot + 64, UNIT_B);
    uint8_t *src = malloc(max + 64);
    if (src == NULL)
        MPI_Abort(MPI_COMM_WORLD, 2);

    int algs[MAXALGS] = {TC_RMA_BCAST_LINEAR, TC_RMA_BCAST_BINOMIAL_DOWN, TC_RMA_BCAST_BINOMIAL_UP};
    int nalgs = MAXALGS;
    unsigned round = 1;
    long bcasts = 0;

    /* Single-threaded: the first binomial request must say it falls back.
     * Rank 0 is the root and captures its stderr around that call. */
    if (single) {
        char path[] = "/tmp/test_rma_stderr_XXXXXX";
        int fd = -1, saved = -1;
        if (rank == 0) {
            fd = mkstemp(path);
            fflush(stderr);
            saved = dup(2);
            dup2(fd, 2);
        }
        one_bcast(&A, src, 100, DISP0, 0, TC_RMA_BCAST_BINOMIAL, round++, MPI_BYTE, 1);
        bcasts++;
        if (rank == 0) {
            fflush(stderr);
            dup2(saved, 2);
            close(saved);
            char text[4096] = {0};
            ssize_t got = pread(fd, text, sizeof text - 1, 0);
            close(fd);
            unlink(path);
            CHECK(got > 0 && strstr(text, "falls back to linear") != NULL,
                  "no fallback message on stderr (TC_VERBOSE=1 expected), got: '%s'",
                  got > 0 ? text : "");
        }
    }

    /* Every algorithm, every root, every size; windows A and B alternate for
     * the small sizes (B holds 4096 bytes per slot). */
    for (int a = 0; a < nalgs; a++) {
        for (int root = 0; root < np; root++) {
            for (int si = 0; si < nsizes; si++) {
                size_t n = sizes[si];
                int useB = n <= slot && (si & 1);
                win_t *w = useB ? &B : &A;
                /* Some sizes go as MPI_INT (n multiple of 4) or as a
                 * contiguous derived type of 3 ints (multiple of 12). */
                MPI_Datatype dt = MPI_BYTE;
                int esz = 1;
                if (n % 12 == 0 && n > 0 && (si % 3) == 0) {
                    MPI_Type_contiguous(3, MPI_INT, &dt);
                    MPI_Type_commit(&dt);
                    esz = 12;
                } else if (n % 4 == 0 && n > 0) {
                    dt = MPI_INT;
                    esz = 4;
                }
                one_bcast(w, src, n, DISP0, root, algs[a], round++, dt, esz);
                bcasts++;
                if (esz == 12)
                    MPI_Type_free(&dt);
            }
        }
    }

    /* Back-to-back: three broadcasts (A, B, A at another offset) with one
     * flush at the end; the library completes each before the next. */
    for (int a = 0; a < nalgs; a++) {
        for (int root = 0; root < np; root++) {
            size_t n = 1000, off2 = DISP0 + 2048;
            unsigned r0 = round;
            round += 3;
            if (rank == root) {
                uint8_t *s2 = src + 2048;
                fill(src, n, r0, root);
                TC_Rma_bcast(src, (int)n, MPI_BYTE, DISP0, A.wid, algs[a]);
                fill(s2, n, r0 + 1, root);
                TC_Rma_bcast(s2, (int)n, MPI_BYTE, DISP0 / UNIT_B, B.wid, algs[a]);
                fill(src + 4096, n, r0 + 2, root);
                TC_Rma_bcast(src + 4096, (int)n, MPI_BYTE, (MPI_Aint)off2, A.wid, algs[a]);
                root_complete(A.wid, 0);
            } else {
                recv_complete(A.wid, root, 0);
                recv_complete(B.wid, root, 1);
                recv_complete(A.wid, root, 0);
                verify_region(&A, DISP0, n, r0, root);
                verify_region(&B, DISP0, n, r0 + 1, root);
                verify_region(&A, off2, n, r0 + 2, root);
            }
            bcasts += 3;
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }

    /* Every process a root at once (binomial trees of different roots
     * cross): rank r broadcasts to its own slot of B. */
    for (int a = 0; a < nalgs; a++) {
        size_t n = slot - 8;
        size_t myoff = DISP0 + (size_t)rank * slot;
        fill(src, n, round + (unsigned)rank, rank);
        int rc = TC_Rma_bcast(src, (int)n, MPI_BYTE, (MPI_Aint)(myoff / UNIT_B), B.wid, algs[a]);
        CHECK(rc == MPI_SUCCESS, "all-roots TC_Rma_bcast returned %d", rc);
        for (int r = 0; r < np; r++) {
            if (r == rank)
                continue;
            recv_complete(B.wid, r, r & 1);
            verify_region(&B, DISP0 + (size_t)r * slot, n, round + (unsigned)r, r);
        }
        root_complete(B.wid, a & 1);
        bcasts += np;
        round += (unsigned)np;
        MPI_Barrier(MPI_COMM_WORLD);
    }

    /* Forwarding by the helper threads alone: the non-roots do not wait (a
     * waiting main thread forwards itself), they sit in MPI_Barrier while
     * the root flushes. The flush returns only once every process has its
     * data and has forwarded it, so afterwards one recv_test must say so. */
    if (!single) {
        for (int a = 1; a < nalgs; a++) {
            for (int root = 0; root < np; root++) {
                size_t n = 3000;
                if (rank == root) {
                    fill(src, n, round, root);
                    int rc = TC_Rma_bcast(src, (int)n, MPI_BYTE, DISP0, A.wid, algs[a]);
                    CHECK(rc == MPI_SUCCESS, "helper-only TC_Rma_bcast returned %d", rc);
                    root_complete(A.wid, 0);
                }
                MPI_Barrier(MPI_COMM_WORLD);
                if (rank != root) {
                    int flag = 0;
                    int rc = TC_Rma_bcast_recv_test(A.wid, root, &flag);
                    CHECK(rc == MPI_SUCCESS && flag == 1,
                          "helper-only: after the root's flush recv_test gave rc %d flag %d", rc,
                          flag);
                    verify_region(&A, DISP0, n, round, root);
                }
                bcasts++;
                round++;
                MPI_Barrier(MPI_COMM_WORLD);
            }
        }
    }

    /* A non-contiguous datatype is refused before anything moves. */
    if (rank == 0) {
        MPI_Datatype vec;
        MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
        MPI_Type_commit(&vec);
        fprintf(stderr, "%s: (an error message about a non-contiguous datatype is expected)\n",
                prog);
        int rc = TC_Rma_bcast(src, 1, vec, DISP0, A.wid, TC_RMA_BCAST_DEFAULT);
        int cls = -1;
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_TYPE, "non-contiguous datatype: got %d, want MPI_ERR_TYPE", rc);
        MPI_Type_free(&vec);
        rc = TC_Rma_bcast(src, 1, MPI_INT, DISP0, A.wid, 99);
        CHECK(rc != MPI_SUCCESS, "bad algorithm accepted");
    }
    MPI_Barrier(MPI_COMM_WORLD);

    win_close(&B);
    /* --leave-registered: A stays registered (and allocated), so MPI_Finalize
     * must unregister it and join the helper threads without hanging. Open
     * MPI only: MPICH 4.0.2 (ch4:ucx) aborts in MPI_Finalize on any window
     * the application did not free, ours or not. */
    if (!leave)
        win_close(&A);
    free(src);

    int total = 0;
    int failures = (int)tt_failures();
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: np=%d %s max=%zu: %ld broadcasts, %d failures\n", prog, np,
               single ? "single" : "multiple", max, bcasts, total);
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}
