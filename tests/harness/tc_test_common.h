/* The MPI test harness (library tc_test_harness), linked by every MPI test of
 * the tree (public header + MPI only): the launched-size check (tt_check_np),
 * CHECK and the failure bookkeeping, the end of a test (tt_finish,
 * tt_failures_all), the expected-value images below, and the /dev/shm and
 * /proc/self/maps scans of the tests that check what a segment leaves behind.
 *
 * Data pattern. Every test buffer is an "image": sentinel bytes everywhere,
 * and at the position of the k-th primitive of the type signature (k-th byte,
 * int or double) a value that is a pure function of (root, case id, k). The
 * expected receive buffer is therefore computed independently of any MPI
 * call: build the image of the receiver's layout. No byte of a pattern value
 * equals the sentinel, so a byte that was never written is always caught, and
 * holes (vector gaps, struct padding) must still hold the sentinel afterwards.
 *
 * Layouts are the (count, datatype) pairs the tests pass; the byte offsets of
 * their primitives are computed here from the type constructors' definitions,
 * not asked of MPI.
 */
#ifndef TC_TEST_COMMON_H
#define TC_TEST_COMMON_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#define TT_SENTINEL 0xA5u

typedef enum { TT_PRIM_BYTE, TT_PRIM_INT, TT_PRIM_DOUBLE, TT_PRIM_LAST } tt_prim_t;

typedef enum {
    TT_LAYOUT_BYTES,           /* MPI_BYTE x n */
    TT_LAYOUT_INTS,            /* MPI_INT x n */
    TT_LAYOUT_DOUBLES,         /* MPI_DOUBLE x n */
    TT_LAYOUT_VECTOR_INT,      /* n x vector(2 blocks of 3 ints, stride 5) resized to 40 B */
    TT_LAYOUT_STRUCT,          /* n x struct { int; double; } (padding after the int) */
    TT_LAYOUT_STRIDED_DOUBLES, /* 1 x vector(n blocks of 1 double, stride 2) */
    TT_LAYOUT_LAST
} tt_layout_kind_t;

typedef struct tt_layout {
    tt_layout_kind_t kind;
    int n;             /* elements (STRIDED: doubles) */
    int count;         /* count argument of the MPI call */
    MPI_Datatype type; /* datatype argument (predefined or from tt_types_create) */
    size_t nprims;     /* primitives in the type signature */
    size_t bytes;      /* buffer size needed (>= 1 so malloc never gets 0) */
} tt_layout_t;

/* World rank and size, set by tt_init. */
extern int tt_rank, tt_size;

/* The launched-size check every MPI test makes, right after MPI_Init or
 * MPI_Init_thread: set the program name of the messages (@p prog), tt_rank
 * and tt_size from MPI_COMM_WORLD, and compare tt_size with TC_TEST_NP. A
 * launcher of the other MPI would start np singletons, each of size 1 that
 * could pass alone: when TC_TEST_NP is unset or differs, print
 * "<prog>: MPI_COMM_WORLD has N processes but TC_TEST_NP is X", finalize and
 * exit 1. Returns tt_size. */
int tt_check_np(const char *prog);

/* CHECK(cond) or CHECK(cond, fmt, ...): count the check (tt_checks) and, when
 * @p cond is false, record a failure through tt_fail with the file, line, the
 * condition's text and the optional message. The failure does not stop the
 * test: it ends with tt_finish, or reduces tt_failures() itself. The message
 * arguments are evaluated only when the check fails. */
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (cond)                                                                                  \
            tt_check_pass();                                                                       \
        else                                                                                       \
            tt_check_fail(__FILE__, __LINE__, #cond, ": " __VA_ARGS__);                            \
    } while (0)

void tt_check_pass(void);
/* @p fmt starts with ": " (CHECK adds it, so that a CHECK without a message
 * still has a format); ": " alone adds nothing to the message. */
void tt_check_fail(const char *file, int line, const char *cond, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* CHECKs made by this process so far (passed or not). CHECK, tt_fail and
 * these counters may be used from several threads at once. */
long tt_checks(void);

/* MPI_Init, the launched-size check (tt_check_np), read the fragment size f and queue length S the
 * test was given (TC_SHM_FRAGMENT_SIZE / TC_SHM_QUEUE_LENGTH; @p def_f / @p def_s when unset or 0 =
 * auto) on world rank 0 and broadcast them, then apply TC_TEST_RANK_ENV
 * ("rank:VAR=value[,rank:VAR=value...]") by setenv on the matching world ranks: the library reads
 * its environment at the first context creation, so this must happen before the first TC_ call. */
void tt_init(int *argc, char ***argv, const char *prog, size_t def_f, size_t def_s, size_t *f,
             size_t *s);

/* Create / free the derived datatypes used by the layouts (collective-free). */
void tt_types_create(void);
void tt_types_free(void);

/* Layout of @p kind holding about @p target_bytes of data (counts rounded to
 * the nearest whole element); the datatype for STRIDED is created here and
 * must be released with tt_layout_free. */
void tt_layout_make(tt_layout_t *l, tt_layout_kind_t kind, size_t target_bytes);
void tt_layout_free(tt_layout_t *l);
const char *tt_layout_name(tt_layout_kind_t kind);

/* Primitive @p k of @p l: its kind, and its byte offset in the buffer. */
tt_prim_t tt_layout_prim(const tt_layout_t *l, size_t k, size_t *off);

/* Fill @p buf (l->bytes) with the image of @p l for (root, case_id). */
void tt_image_build(void *buf, const tt_layout_t *l, int root, uint64_t case_id);

/* The value of primitive @p k as bytes (1, 4 or 8 are written to @p out). */
size_t tt_prim_value(tt_prim_t kind, int root, uint64_t case_id, size_t k, unsigned char *out);

/* Compare @p got with @p expect (l->bytes each). Returns 0 when equal; else 1
 * and, if @p msg, describes the first difference: byte offset, primitive
 * index and kind (or "hole"), expected and received bytes, and how many bytes
 * differ in total. */
int tt_image_compare(const void *got, const void *expect, const tt_layout_t *l, char *msg,
                     size_t msglen);

/* Failure bookkeeping: tt_fail prints "FAIL <prog> rank r: ..." (at most 30
 * lines per process, all are counted). tt_finish reduces the counts over
 * MPI_COMM_WORLD, prints the one-line summary on rank 0, finalizes and
 * returns the exit code (0 or 1). */
void tt_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tt_case_done(void);
long tt_failures(void);
int tt_finish(void);

/* Expected values of the small int checks (a broadcast of n ints, then an
 * allreduce of the ranks), shared by the tests of segments (test_node_cap,
 * test_shm_mechanism, kill_churn). The pattern of @p salt >= 0: element i is
 * 7 i + salt, never the -1 the receivers start with. tt_ints_fill writes it
 * (@p is_root) or -1 (the others); tt_ints_check compares @p buf with it and
 * counts one check, failed at the first wrong element ("<what>: element i is
 * x, expected y"); returns 1 when wrong, 0 when right. */
int tt_int_pattern(int salt, int i);
void tt_ints_fill(int *buf, int n, int salt, int is_root);
int tt_ints_check(const int *buf, int n, int salt, const char *what);

/* 0 + 1 + ... + (p - 1): the sum of the ranks of a communicator of @p p. */
long tt_sum_ranks(int p);

/* Failures of every process (a collective over MPI_COMM_WORLD: the sum of
 * tt_failures()), for the tests that print their own summary line. */
long tt_failures_all(void);

/* Entries /dev/shm/topocoll-* (what a named segment is called). With @p pids
 * (@p npids of them), only those of the creators listed there, i.e.
 * /dev/shm/topocoll-<pid>-..., each printed as "<prog> rank r: /dev/shm/...
 * exists". -1 when /dev/shm cannot be read. */
long tt_dev_shm_count(const long *pids, int npids);

/* Lines of /proc/self/maps containing @p needle (-1 when it cannot be read). */
long tt_maps_count(const char *needle);

/* Bad-argument cases: tt_err_comm_create returns a duplicate of
 * MPI_COMM_WORLD whose error handler counts its calls (free it with
 * tt_err_comm_free); TT_ERR_CASE(what, class, call) makes @p call (every
 * rank the same mistake: a check failing on one rank only would leave the
 * others in the collective) and CHECKs that it called that handler once and
 * returned an error of MPI error class @p class. */
MPI_Comm tt_err_comm_create(void);
void tt_err_comm_free(MPI_Comm *comm);
long tt_err_handler_calls(void);
void tt_err_case_check(const char *what, int want_class, int rc, long calls_before);
#define TT_ERR_CASE(what, want_class, call)                                                        \
    do {                                                                                           \
        const long tt_before_ = tt_err_handler_calls();                                            \
        const int tt_rc_ = (call);                                                                 \
        tt_err_case_check(what, want_class, tt_rc_, tt_before_);                                   \
    } while (0)

/* Value following "--name" in argv, or @p def when absent. */
const char *tt_arg(int argc, char **argv, const char *name, const char *def);
long tt_arg_long(int argc, char **argv, const char *name, long def);

/* Parse a size with an optional K/M/G (binary) suffix; -1 on error. */
long long tt_parse_size(const char *text);

/* Malloc or abort the job. */
void *tt_xmalloc(size_t n);

/* The allocation-failure tests: tt_limit_as_init() reads this process's
 * address-space limit (RLIMIT_AS; 0 on success); tt_limit_as_on(yes, mb),
 * when @p yes, lowers it to the current size plus @p headroom_mb MiB, so a
 * larger allocation fails; tt_limit_as_off() puts the limit back. */
int tt_limit_as_init(void);
void tt_limit_as_on(int yes, long headroom_mb);
void tt_limit_as_off(void);

#endif /* TC_TEST_COMMON_H */
