/* The MPI test harness; see tc_test_common.h. */
#define _POSIX_C_SOURCE 200809L

#include "tc_test_common.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* Bytes after the data that must keep the sentinel: catches overruns. */
#define TT_GUARD 64

#define TT_MAX_PRINTED_FAILURES 30

int tt_rank = -1, tt_size = 0;

static const char *tt_prog = "test";
/* Atomic: CHECK may run on several threads of a process (test_ctx_cache). */
static atomic_long tt_nfail;
static long tt_ncases;
static atomic_long tt_nchecks;

/* struct { int; double; } of the STRUCT layout; its padding is a hole. */
typedef struct tt_pair {
    int a;
    double b;
} tt_pair_t;

static MPI_Datatype tt_vector_int_type = MPI_DATATYPE_NULL;
static MPI_Datatype tt_struct_type = MPI_DATATYPE_NULL;

/* vector(2 blocks, 3 ints each, stride 5 ints), resized: element extent 40 B. */
enum { TT_VEC_BLOCKS = 2, TT_VEC_BLOCKLEN = 3, TT_VEC_STRIDE = 5, TT_VEC_EXTENT = 40 };

void *tt_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "%s rank %d: out of memory (%zu bytes)\n", tt_prog, tt_rank, n);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

long long tt_parse_size(const char *text)
{
    char *end;
    long long v;

    if (!text || !*text)
        return -1;
    v = strtoll(text, &end, 10);
    if (end == text || v < 0)
        return -1;
    switch (*end) {
    case 'k':
    case 'K':
        v <<= 10;
        end++;
        break;
    case 'm':
    case 'M':
        v <<= 20;
        end++;
        break;
    case 'g':
    case 'G':
        v <<= 30;
        end++;
        break;
    default:
        break;
    }
    if (end[0] == 'i' && (end[1] == 'B' || end[1] == 'b')) /* KiB */
        end += 2;
    else if (*end == 'B' || *end == 'b') /* KB */
        end++;
    return *end ? -1 : v;
}

const char *tt_arg(int argc, char **argv, const char *name, const char *def)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return argv[i + 1];
    return def;
}

long tt_arg_long(int argc, char **argv, const char *name, long def)
{
    const char *v = tt_arg(argc, argv, name, NULL);
    long long x;

    if (!v)
        return def;
    x = tt_parse_size(v);
    if (x < 0) {
        fprintf(stderr, "%s: bad value '%s' for %s\n", tt_prog, v, name);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return (long)x;
}

static size_t tt_env_size(const char *var, size_t def)
{
    const char *v = getenv(var);
    long long x;

    if (!v)
        return def;
    x = tt_parse_size(v);
    if (x < 0) {
        fprintf(stderr, "%s: cannot parse %s='%s'\n", tt_prog, var, v);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return x == 0 ? def : (size_t)x;
}

/* TC_TEST_RANK_ENV="rank:VAR=value[,rank:VAR=value...]" (',' not ';': the
 * value travels inside a CMake list). */
static void tt_apply_rank_env(void)
{
    const char *spec = getenv("TC_TEST_RANK_ENV");
    char *copy, *item, *save = NULL;

    if (!spec || !*spec)
        return;
    copy = tt_xmalloc(strlen(spec) + 1);
    strcpy(copy, spec);
    for (item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(item, ':');
        char *eq = colon ? strchr(colon + 1, '=') : NULL;
        char *end;
        long r;

        if (!colon || !eq || eq == colon + 1) {
            fprintf(stderr, "%s: malformed TC_TEST_RANK_ENV item '%s'\n", tt_prog, item);
            MPI_Abort(MPI_COMM_WORLD, 2);
            return;
        }
        *colon = '\0';
        *eq = '\0';
        r = strtol(item, &end, 10);
        if (*end || r < 0) {
            fprintf(stderr, "%s: bad rank '%s' in TC_TEST_RANK_ENV\n", tt_prog, item);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        if (r >= tt_size && tt_rank == 0)
            printf("%s: note: TC_TEST_RANK_ENV names rank %ld, job has %d\n", tt_prog, r, tt_size);
        if (r == tt_rank) {
            setenv(colon + 1, eq + 1, 1);
            printf("%s: rank %d: %s=%s\n", tt_prog, tt_rank, colon + 1, eq + 1);
            fflush(stdout);
        }
    }
    free(copy);
}

int tt_check_np(const char *prog)
{
    const char *np_text = getenv("TC_TEST_NP");

    tt_prog = prog;
    MPI_Comm_rank(MPI_COMM_WORLD, &tt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &tt_size);
    /* A launcher of the other MPI would start np singletons: each would see
     * size 1 and could pass alone. */
    if (!np_text || atoi(np_text) != tt_size) {
        fprintf(stderr, "%s: MPI_COMM_WORLD has %d processes but TC_TEST_NP is %s\n", prog, tt_size,
                np_text ? np_text : "unset");
        MPI_Finalize();
        exit(1);
    }
    return tt_size;
}

void tt_init(int *argc, char ***argv, const char *prog, size_t def_f, size_t def_s, size_t *f,
             size_t *s)
{
    unsigned long long fs[2];

    MPI_Init(argc, argv);
    tt_check_np(prog);
    /* f and S come from rank 0's environment, before TC_TEST_RANK_ENV may
     * change them on some rank: every rank must loop over the same sizes. */
    if (tt_rank == 0) {
        fs[0] = tt_env_size("TC_SHM_FRAGMENT_SIZE", def_f);
        fs[1] = tt_env_size("TC_SHM_QUEUE_LENGTH", def_s);
    }
    MPI_Bcast(fs, 2, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    if (f)
        *f = (size_t)fs[0];
    if (s)
        *s = (size_t)fs[1];
    tt_apply_rank_env();
}

void tt_types_create(void)
{
    MPI_Datatype vec;
    int blocklens[2] = {1, 1};
    MPI_Aint displs[2] = {offsetof(tt_pair_t, a), offsetof(tt_pair_t, b)};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Datatype st;

    MPI_Type_vector(TT_VEC_BLOCKS, TT_VEC_BLOCKLEN, TT_VEC_STRIDE, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, TT_VEC_EXTENT, &tt_vector_int_type);
    MPI_Type_commit(&tt_vector_int_type);
    MPI_Type_free(&vec);

    MPI_Type_create_struct(2, blocklens, displs, types, &st);
    MPI_Type_create_resized(st, 0, (MPI_Aint)sizeof(tt_pair_t), &tt_struct_type);
    MPI_Type_commit(&tt_struct_type);
    MPI_Type_free(&st);
}

void tt_types_free(void)
{
    MPI_Type_free(&tt_vector_int_type);
    MPI_Type_free(&tt_struct_type);
}

const char *tt_layout_name(tt_layout_kind_t kind)
{
    static const char *names[TT_LAYOUT_LAST] = {
        "MPI_BYTE",           "MPI_INT",
        "MPI_DOUBLE",         "vector(2x3 int,stride 5)",
        "struct{int;double}", "vector(n x 1 double,stride 2)"};
    return (unsigned)kind < TT_LAYOUT_LAST ? names[kind] : "?";
}

static int tt_round_count(size_t bytes, size_t elem)
{
    return (int)((bytes + elem / 2) / elem);
}

void tt_layout_make(tt_layout_t *l, tt_layout_kind_t kind, size_t target)
{
    size_t data = 0;

    memset(l, 0, sizeof(*l));
    l->kind = kind;
    switch (kind) {
    case TT_LAYOUT_BYTES:
        l->n = (int)target;
        l->count = l->n;
        l->type = MPI_BYTE;
        l->nprims = (size_t)l->n;
        data = (size_t)l->n;
        break;
    case TT_LAYOUT_INTS:
        l->n = tt_round_count(target, sizeof(int));
        l->count = l->n;
        l->type = MPI_INT;
        l->nprims = (size_t)l->n;
        data = (size_t)l->n * sizeof(int);
        break;
    case TT_LAYOUT_DOUBLES:
        l->n = tt_round_count(target, sizeof(double));
        l->count = l->n;
        l->type = MPI_DOUBLE;
        l->nprims = (size_t)l->n;
        data = (size_t)l->n * sizeof(double);
        break;
    case TT_LAYOUT_VECTOR_INT:
        l->n = tt_round_count(target, TT_VEC_BLOCKS * TT_VEC_BLOCKLEN * sizeof(int));
        l->count = l->n;
        l->type = tt_vector_int_type;
        l->nprims = (size_t)l->n * TT_VEC_BLOCKS * TT_VEC_BLOCKLEN;
        data = (size_t)l->n * TT_VEC_EXTENT;
        break;
    case TT_LAYOUT_STRUCT:
        l->n = tt_round_count(target, sizeof(int) + sizeof(double));
        l->count = l->n;
        l->type = tt_struct_type;
        l->nprims = (size_t)l->n * 2;
        data = (size_t)l->n * sizeof(tt_pair_t);
        break;
    case TT_LAYOUT_STRIDED_DOUBLES:
        l->n = tt_round_count(target, sizeof(double));
        /* count 0 rather than 1 x an empty vector when n = 0: Open MPI's
         * PMPI_Bcast (the second opinion) skips a root with count 0 but posts
         * a receive for count 1 of a 0-byte type, and deadlocks. */
        l->count = l->n > 0 ? 1 : 0;
        MPI_Type_vector(l->n, 1, 2, MPI_DOUBLE, &l->type);
        MPI_Type_commit(&l->type);
        l->nprims = (size_t)l->n;
        data = (size_t)l->n * 2 * sizeof(double);
        break;
    default:
        abort();
    }
    l->bytes = data + TT_GUARD;
}

void tt_layout_free(tt_layout_t *l)
{
    if (l->kind == TT_LAYOUT_STRIDED_DOUBLES && l->type != MPI_DATATYPE_NULL)
        MPI_Type_free(&l->type);
    l->type = MPI_DATATYPE_NULL;
}

tt_prim_t tt_layout_prim(const tt_layout_t *l, size_t k, size_t *off)
{
    size_t e, w;

    switch (l->kind) {
    case TT_LAYOUT_BYTES:
        *off = k;
        return TT_PRIM_BYTE;
    case TT_LAYOUT_INTS:
        *off = k * sizeof(int);
        return TT_PRIM_INT;
    case TT_LAYOUT_DOUBLES:
        *off = k * sizeof(double);
        return TT_PRIM_DOUBLE;
    case TT_LAYOUT_VECTOR_INT:
        e = k / (TT_VEC_BLOCKS * TT_VEC_BLOCKLEN);
        w = k % (TT_VEC_BLOCKS * TT_VEC_BLOCKLEN);
        *off = e * TT_VEC_EXTENT +
               ((w / TT_VEC_BLOCKLEN) * TT_VEC_STRIDE + w % TT_VEC_BLOCKLEN) * sizeof(int);
        return TT_PRIM_INT;
    case TT_LAYOUT_STRUCT:
        e = k / 2;
        if (k % 2 == 0) {
            *off = e * sizeof(tt_pair_t) + offsetof(tt_pair_t, a);
            return TT_PRIM_INT;
        }
        *off = e * sizeof(tt_pair_t) + offsetof(tt_pair_t, b);
        return TT_PRIM_DOUBLE;
    case TT_LAYOUT_STRIDED_DOUBLES:
        *off = k * 2 * sizeof(double);
        return TT_PRIM_DOUBLE;
    default:
        abort();
    }
}

/* splitmix64 finaliser. */
static uint64_t tt_mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static uint64_t tt_seed(int root, uint64_t case_id)
{
    return tt_mix(tt_mix(case_id) ^ ((uint64_t)(uint32_t)root * 0xD1B54A32D192ED03ull));
}

static void tt_unsentinel(unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] == TT_SENTINEL)
            b[i] ^= 1u;
}

static size_t tt_prim_value_seeded(tt_prim_t kind, uint64_t seed, size_t k, unsigned char *out)
{
    uint64_t v;

    switch (kind) {
    case TT_PRIM_BYTE:
        v = tt_mix(seed ^ (uint64_t)(k >> 3));
        out[0] = (unsigned char)(v >> (8 * (k & 7)));
        tt_unsentinel(out, 1);
        return 1;
    case TT_PRIM_INT: {
        int32_t x;
        v = tt_mix(seed + 0x100000001ull * (uint64_t)k + 1);
        x = (int32_t)(uint32_t)v;
        memcpy(out, &x, sizeof(x));
        tt_unsentinel(out, sizeof(x));
        return sizeof(x);
    }
    case TT_PRIM_DOUBLE: {
        /* A finite normal number (exponent 0x3F0..0x40F): stays so after
         * tt_unsentinel, which can only flip the lowest bit of a byte that is
         * 0xA5, and the top byte (0x3F/0x40/0xBF/0xC0) never is. */
        uint64_t bits, expo;
        double d;
        v = tt_mix(seed + 0x100000001ull * (uint64_t)k + 2);
        expo = 0x3F0u + ((v >> 52) & 0x1Fu);
        bits = (v & 0x8000000000000000ull) | (expo << 52) | (v & 0x000FFFFFFFFFFFFFull);
        memcpy(&d, &bits, sizeof(d));
        memcpy(out, &d, sizeof(d));
        tt_unsentinel(out, sizeof(d));
        return sizeof(d);
    }
    default:
        abort();
    }
}

size_t tt_prim_value(tt_prim_t kind, int root, uint64_t case_id, size_t k, unsigned char *out)
{
    return tt_prim_value_seeded(kind, tt_seed(root, case_id), k, out);
}

void tt_image_build(void *buf, const tt_layout_t *l, int root, uint64_t case_id)
{
    unsigned char *b = buf;
    uint64_t seed = tt_seed(root, case_id);
    unsigned char v[8];

    memset(b, TT_SENTINEL, l->bytes);
    if (l->kind == TT_LAYOUT_BYTES) {
        /* Same values as tt_prim_value, 8 bytes per hash. */
        for (size_t k = 0; k < l->nprims; k += 8) {
            uint64_t h = tt_mix(seed ^ (uint64_t)(k >> 3));
            size_t n = l->nprims - k < 8 ? l->nprims - k : 8;
            for (size_t j = 0; j < n; j++) {
                unsigned char c = (unsigned char)(h >> (8 * j));
                b[k + j] = c == TT_SENTINEL ? (unsigned char)(c ^ 1u) : c;
            }
        }
        return;
    }
    for (size_t k = 0; k < l->nprims; k++) {
        size_t off;
        tt_prim_t kind = tt_layout_prim(l, k, &off);
        size_t n = tt_prim_value_seeded(kind, seed, k, v);
        memcpy(b + off, v, n);
    }
}

static void tt_hex(char *out, size_t outlen, const unsigned char *b, size_t n)
{
    size_t pos = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n && pos + 3 < outlen; i++)
        pos += (size_t)snprintf(out + pos, outlen - pos, "%02x", b[i]);
}

int tt_image_compare(const void *got, const void *expect, const tt_layout_t *l, char *msg,
                     size_t msglen)
{
    const unsigned char *g = got, *e = expect;
    size_t first = (size_t)-1, ndiff = 0;
    static const char *prim_names[TT_PRIM_LAST] = {"byte", "int", "double"};
    static const size_t prim_sizes[TT_PRIM_LAST] = {1, sizeof(int32_t), sizeof(double)};
    char hex_e[40], hex_g[40];

    if (memcmp(got, expect, l->bytes) == 0)
        return 0;
    if (!msg)
        return 1;
    for (size_t i = 0; i < l->bytes; i++)
        if (g[i] != e[i]) {
            if (first == (size_t)-1)
                first = i;
            ndiff++;
        }
    /* Which primitive holds the first differing byte (none: a hole/guard). */
    for (size_t k = 0; k < l->nprims; k++) {
        size_t off;
        tt_prim_t kind = tt_layout_prim(l, k, &off);
        if (first >= off && first < off + prim_sizes[kind]) {
            tt_hex(hex_e, sizeof(hex_e), e + off, prim_sizes[kind]);
            tt_hex(hex_g, sizeof(hex_g), g + off, prim_sizes[kind]);
            snprintf(msg, msglen,
                     "first difference at byte %zu = element %zu (%s at offset %zu): expected "
                     "%s got %s; %zu bytes differ",
                     first, k, prim_names[kind], off, hex_e, hex_g, ndiff);
            return 1;
        }
    }
    snprintf(msg, msglen,
             "first difference at byte %zu, %s (must keep 0x%02x): got 0x%02x; %zu bytes differ",
             first, first + TT_GUARD >= l->bytes ? "guard after the data" : "a hole of the type",
             TT_SENTINEL, g[first], ndiff);
    return 1;
}

void tt_fail(const char *fmt, ...)
{
    va_list ap;
    char line[1024];
    int pos;

    long n = atomic_fetch_add(&tt_nfail, 1) + 1;

    if (n > TT_MAX_PRINTED_FAILURES)
        return;
    /* One write per line, so lines of different ranks do not interleave. */
    pos = snprintf(line, sizeof(line), "FAIL %s rank %d: ", tt_prog, tt_rank);
    va_start(ap, fmt);
    vsnprintf(line + pos, sizeof(line) - (size_t)pos - 1, fmt, ap);
    va_end(ap);
    strcat(line, "\n");
    fputs(line, stderr);
    if (n == TT_MAX_PRINTED_FAILURES)
        fprintf(stderr, "FAIL %s rank %d: further failures counted, not printed\n", tt_prog,
                tt_rank);
    fflush(stderr);
}

void tt_check_pass(void)
{
    atomic_fetch_add(&tt_nchecks, 1);
}

void tt_check_fail(const char *file, int line, const char *cond, const char *fmt, ...)
{
    va_list ap;
    char msg[768];

    atomic_fetch_add(&tt_nchecks, 1);
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    tt_fail("%s:%d: %s%s", file, line, cond, strcmp(msg, ": ") == 0 ? "" : msg);
}

long tt_checks(void)
{
    return atomic_load(&tt_nchecks);
}

void tt_case_done(void)
{
    tt_ncases++;
}

long tt_failures(void)
{
    return atomic_load(&tt_nfail);
}

int tt_int_pattern(int salt, int i)
{
    return 7 * i + salt;
}

void tt_ints_fill(int *buf, int n, int salt, int is_root)
{
    for (int i = 0; i < n; i++)
        buf[i] = is_root ? tt_int_pattern(salt, i) : -1;
}

int tt_ints_check(const int *buf, int n, int salt, const char *what)
{
    for (int i = 0; i < n; i++)
        if (buf[i] != tt_int_pattern(salt, i)) {
            tt_check_fail(__FILE__, __LINE__, "buf[i] == tt_int_pattern(salt, i)",
                          ": %s: element %d is %d, expected %d", what, i, buf[i],
                          tt_int_pattern(salt, i));
            return 1;
        }
    tt_check_pass();
    return 0;
}

long tt_sum_ranks(int p)
{
    return (long)p * (p - 1) / 2;
}

long tt_failures_all(void)
{
    long mine = tt_failures(), all = 0;

    MPI_Allreduce(&mine, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    return all;
}

long tt_dev_shm_count(const long *pids, int npids)
{
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    long found = 0;

    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long pid;

        if (strncmp(e->d_name, "topocoll-", 9) != 0)
            continue;
        if (!pids) {
            found++;
            continue;
        }
        pid = strtol(e->d_name + 9, &end, 10);
        if (end == e->d_name + 9 || *end != '-')
            continue;
        for (int i = 0; i < npids; i++)
            if (pids[i] == pid) {
                fprintf(stderr, "%s rank %d: /dev/shm/%s exists\n", tt_prog, tt_rank, e->d_name);
                found++;
            }
    }
    closedir(d);
    return found;
}

long tt_maps_count(const char *needle)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[1024];
    long n = 0;

    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f))
        n += strstr(line, needle) != NULL;
    fclose(f);
    return n;
}

int tt_finish(void)
{
    long local[2] = {tt_failures(), tt_ncases}, sum[2], maxc;

    MPI_Allreduce(local, sum, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&tt_ncases, &maxc, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (tt_rank == 0) {
        printf("%s: np=%d: %ld cases (max per rank), %ld failures (all ranks): %s\n", tt_prog,
               tt_size, maxc, sum[0], sum[0] == 0 && maxc > 0 ? "PASS" : "FAIL");
        fflush(stdout);
    }
    MPI_Finalize();
    return sum[0] == 0 && maxc > 0 ? 0 : 1;
}

static long tt_err_calls;
static MPI_Errhandler tt_err_handler = MPI_ERRHANDLER_NULL;

static void tt_err_count(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    (void)code;
    tt_err_calls++;
}

MPI_Comm tt_err_comm_create(void)
{
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    if (tt_err_handler == MPI_ERRHANDLER_NULL)
        MPI_Comm_create_errhandler(tt_err_count, &tt_err_handler);
    MPI_Comm_set_errhandler(comm, tt_err_handler);
    return comm;
}

void tt_err_comm_free(MPI_Comm *comm)
{
    MPI_Comm_free(comm);
    if (tt_err_handler != MPI_ERRHANDLER_NULL)
        MPI_Errhandler_free(&tt_err_handler);
}

long tt_err_handler_calls(void)
{
    return tt_err_calls;
}

void tt_err_case_check(const char *what, int want_class, int rc, long calls_before)
{
    int cls = -1;
    CHECK(tt_err_calls == calls_before + 1, "%s: the handler was called %ld times", what,
          tt_err_calls - calls_before);
    MPI_Error_class(rc, &cls);
    CHECK(cls == want_class, "%s: error class %d, want %d", what, cls, want_class);
}

static struct rlimit tt_limit_saved;
static int tt_limit_lowered;

int tt_limit_as_init(void)
{
    return getrlimit(RLIMIT_AS, &tt_limit_saved);
}

void tt_limit_as_on(int yes, long headroom_mb)
{
    if (!yes)
        return;
    long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f || fscanf(f, "%ld", &pages) != 1) {
        if (f)
            fclose(f);
        return;
    }
    fclose(f);
    struct rlimit r = tt_limit_saved;
    r.rlim_cur = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + ((rlim_t)headroom_mb << 20);
    if (setrlimit(RLIMIT_AS, &r) == 0)
        tt_limit_lowered = 1;
}

void tt_limit_as_off(void)
{
    if (tt_limit_lowered)
        setrlimit(RLIMIT_AS, &tt_limit_saved);
    tt_limit_lowered = 0;
}
