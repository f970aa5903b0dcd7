/* TC_Scan and TC_Exscan against prefixes every process folds itself (no MPI
 * collective gives the expected values).
 *
 *   --parts LIST  comma-separated, default "types,sizes,small,comms,mixed":
 *     types   every (type, op) spec of redspec.h, a few sizes, Scan and
 *             Exscan, in place and not
 *     sizes   int sum, the non-commutative 2x2 matrix product, a derived
 *             type (and float sum) at 0, 1, inline-line, slot-1, slot,
 *             slot+1 bytes and several fragments
 *     small   the direct path of calls of basic types beside the general
 *             one in the same call (datatypes of one signature), at 1, 2,
 *             16 elements, around one inline line and 1 KiB, two slots
 *     comms   dup'd, split (odd/even), reversed and shuffled (the last rank
 *             second: interleaves posed nodes that world keeps
 *             contiguous) communicators
 *     mixed   Scan and Exscan interleaved with TC_Allreduce, TC_Reduce and
 *             TC_Reduce_scatter_block on one communicator, inline and
 *             fragmented sizes: they share the segment's sequence numbers
 *     errors  bad arguments -> the right error class through the
 *             communicator's handler, buffers untouched
 *   --quick       fewer specs and sizes (MPICH at np > 3)
 *
 * Data, specs and expected values: redspec.h. Send buffers must come back
 * unchanged; Exscan's receive buffer at rank 0 must be untouched (the
 * library leaves it alone; MPI leaves it undefined, so this is checked only
 * when the library's path ran: TC_PMPI_RACE_MIN=0 and --exscan-rank0).
 * TC_SHM_REDUCE_SLOT_BYTES (if set) gives the slot size the sizes are
 * placed around (default 32K).
 */
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <topocoll.h>

#include "redspec.h"
#include "tc_test_common.h"

static const char *prog = "test_scan";
static int quick, check_rank0;
static size_t slot_bytes = 32768;

/* How a process passes the n elements of a case (part small): @p count of
 * @p dt, a datatype of the same signature as n of the spec's (or, for a
 * bitwise op, of the same bytes: MPI_BYTE). */
typedef struct {
    MPI_Datatype dt;
    int count;
} as_t;

/* One call of TC_Scan or (@p exclusive) TC_Exscan of @p n elements, passed
 * as @p as says (NULL: n of the spec's datatype). */
static void run_case_as(MPI_Comm comm, const int *wr, const rt_spec_t *s, size_t n, int exclusive,
                        int in_place, uint32_t salt, const as_t *as)
{
    int p, me;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    const size_t bytes = n * s->extent;
    char *send = malloc(bytes + 1), *orig = malloc(bytes + 1);
    char *recv = malloc(bytes + 1), *want = malloc(bytes + 1);
    if (!send || !recv || !want || !orig) {
        tt_fail("out of memory");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    rt_fill(s, send, n, wr[me], 0, salt);
    memcpy(orig, send, bytes);
    if (in_place)
        memcpy(recv, send, bytes);
    else
        rt_fill(s, recv, n, -1, 0, salt);
    /* Scan: processes 0 .. me; Exscan: 0 .. me-1 (rank 0: its buffer as it
     * was before the call). */
    const int upto = exclusive ? me : me + 1;
    if (upto > 0)
        rt_expect(s, want, n, 0, upto, wr, salt);
    else
        memcpy(want, recv, bytes);
    const void *sb = in_place ? MPI_IN_PLACE : send;
    const MPI_Datatype dt = as ? as->dt : s->dt;
    const int count = as ? as->count : (int)n;
    const int rc = exclusive ? TC_Exscan(sb, recv, count, dt, s->op, comm)
                             : TC_Scan(sb, recv, count, dt, s->op, comm);
    char cname[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Comm_get_name(comm, cname, &len);
#define CASE_FMT "%s %s on %s (np %d, rank %d) %zu elements%s: "
#define CASE_ARGS                                                                                  \
    exclusive ? "TC_Exscan" : "TC_Scan", s->name, cname, p, me, n, in_place ? ", in place" : ""
    CHECK(rc == MPI_SUCCESS, CASE_FMT "returned %d", CASE_ARGS, rc);
    /* (A user op on a non-contiguous type goes to the MPI's own.) */
    if (upto > 0 || (check_rank0 && !(s->derived && s->o == O_MATMUL))) {
        const long bad = rt_compare(s, recv, want, n);
        CHECK(bad<0, CASE_FMT "wrong result at byte %ld of %zu (element %ld)%s", CASE_ARGS, bad,
                  bytes, bad / (long)s->extent, upto> 0
                  ? ""
                  : " (rank 0's buffer changed)");
    }
    if (!in_place)
        CHECK(memcmp(send, orig, bytes) == 0, CASE_FMT "sendbuf was modified", CASE_ARGS);
    tt_case_done();
    free(send);
    free(orig);
    free(recv);
    free(want);
}

static void run_case(MPI_Comm comm, const int *wr, const rt_spec_t *s, size_t n, int exclusive,
                     int in_place, uint32_t salt)
{
    run_case_as(comm, wr, s, n, exclusive, in_place, salt, NULL);
}

/* Scan and Exscan, in place and not. */
static void run_all(MPI_Comm comm, const int *wr, const rt_spec_t *s, size_t n, uint32_t salt)
{
    for (int exclusive = 0; exclusive < 2; exclusive++)
        for (int in_place = 0; in_place < 2; in_place++)
            run_case(comm, wr, s, n, exclusive, in_place,
                     salt + 2u * (uint32_t)exclusive + (uint32_t)in_place);
}

static int world_ranks[1024];

static void part_types(MPI_Comm comm)
{
    static const size_t sizes[] = {0, 1, 3, 100, 5000};
    for (int i = 0; i < rt_nspecs; i++)
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
            run_all(comm, world_ranks, &rt_specs[i], sizes[z],
                    1000u * (uint32_t)i + 10u * (uint32_t)z);
}

static void part_sizes(MPI_Comm comm)
{
    static const char *const names[] = {"int sum", "matmul (user, non-commutative)",
                                        "vector(int) sum", "float sum"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        const rt_spec_t *s = rt_spec_find(names[k]);
        if (quick && k >= 3)
            break;
        const size_t eb = rt_kind_size(s->k) * (size_t)s->nprim; /* packed bytes per element */
        const size_t slot = slot_bytes / eb;
        const size_t sizes[] = {0,    1,        56 / eb,      56 / eb + 1,  slot - 1,
                                slot, slot + 1, 3 * slot + 7, 11 * slot + 1};
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
            if (quick && (z == 4 || z == 6 || z == 8))
                continue;
            run_all(comm, world_ranks, s, sizes[z],
                    50000u + 100u * (uint32_t)k + 10u * (uint32_t)z);
        }
    }
}

static void part_comms(void)
{
    int me, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm c[4];
    MPI_Comm_dup(MPI_COMM_WORLD, &c[0]);
    MPI_Comm_set_name(c[0], "dup(world)");
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &c[1]);
    MPI_Comm_set_name(c[1], "split(odd/even)");
    MPI_Comm_split(MPI_COMM_WORLD, 0, p - me, &c[2]);
    MPI_Comm_set_name(c[2], "reversed(world)");
    MPI_Comm_split(MPI_COMM_WORLD, 0, me == p - 1 ? 1 : 2 * me, &c[3]);
    MPI_Comm_set_name(c[3], "shuffled(world)");
    const char *const names[] = {"int sum", "matmul (user, non-commutative)", "vector(int) sum"};
    for (int k = 0; k < 4; k++) {
        int wr[1024];
        rt_comm_ranks(c[k], wr);
        for (size_t n = 0; n < sizeof names / sizeof names[0]; n++) {
            const rt_spec_t *s = rt_spec_find(names[n]);
            const size_t eb = rt_kind_size(s->k) * (size_t)s->nprim;
            const size_t sizes[] = {1, 7, 2 * slot_bytes / eb + 5};
            for (size_t z = 0; z < 3; z++)
                run_all(c[k], wr, s, sizes[z],
                        90000u + 1000u * (uint32_t)k + 10u * (uint32_t)n + (uint32_t)z);
        }
        MPI_Comm_free(&c[k]);
    }
}

/* Calls of basic types (the library's direct path, core/scan.c
 * tc_scan_direct) beside the general path in the same call: at 1, 2, 16
 * elements, around one inline line, around 1 KiB and over two slots
 * (TC_SHM_REDUCE_SLOT_BYTES: several fragments), every process passes the spec's
 * type (mode 0), or the odd (1) or even (2) ranks one contiguous type of
 * the n elements instead (count 1: the general path, the same protocol),
 * or, for the bitwise op, every process the bytes as MPI_BYTE (3). The
 * non-commutative user op between them shares the segment's sequence
 * numbers. */
static void part_small(MPI_Comm comm)
{
    static const char *const names[] = {
        "int sum",       "float sum", "double min",      "unsigned bxor",
        "long long sum", "int prod",  "signed char sum", "matmul (user, non-commutative)"};
    int me;
    MPI_Comm_rank(comm, &me);
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        const rt_spec_t *s = rt_spec_find(names[k]);
        if (!s)
            continue; /* --quick */
        const size_t eb = rt_kind_size(s->k);
        const size_t sizes[] = {
            1, 2, 16, 56 / eb, 56 / eb + 1, 1024 / eb, 1024 / eb + 1, 2 * slot_bytes / eb + 3};
        const int modes = s->o == O_MATMUL ? 1 : s->o == O_BXOR ? 4 : 3;
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
            const size_t n = sizes[z];
            if (n == 0)
                continue;
            for (int mode = 0; mode < modes; mode++) {
                as_t as = {s->dt, (int)n};
                const int contig = (mode == 1 && me % 2 == 1) || (mode == 2 && me % 2 == 0);
                if (contig) {
                    MPI_Type_contiguous((int)n, s->dt, &as.dt);
                    MPI_Type_commit(&as.dt);
                    as.count = 1;
                } else if (mode == 3) {
                    as = (as_t){MPI_BYTE, (int)(n * eb)};
                }
                const uint32_t salt = 120000u + 1000u * (uint32_t)k + 10u * (uint32_t)z;
                for (int exclusive = 0; exclusive < 2; exclusive++)
                    for (int in_place = 0; in_place < 2; in_place++)
                        run_case_as(comm, world_ranks, s, n, exclusive, in_place,
                                    salt + 4u * (uint32_t)mode + 2u * (uint32_t)exclusive +
                                        (uint32_t)in_place,
                                    &as);
                if (contig)
                    MPI_Type_free(&as.dt);
            }
        }
    }
}

/* Element i of process r's int operand in the mixed part. */
static int mixed_val(int r, int i, int round)
{
    return (int)(rt_mix((uint32_t)r + 1, (uint32_t)i, (uint32_t)round) % 17) - 8;
}

static void part_mixed(void)
{
    int me, p;
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_name(c, "dup(world) mixed");
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &p);
    int wr[1024];
    rt_comm_ranks(c, wr);
    const rt_spec_t *mat = rt_spec_find("matmul (user, non-commutative)");
    const size_t sizes[] = {3, 2 * slot_bytes / sizeof(int) + 11};
    for (int round = 0; round < (quick ? 6 : 20); round++) {
        const size_t n = sizes[round % 2];
        int *send = malloc(sizeof(int) * n * (size_t)p),
            *recv = malloc(sizeof(int) * n * (size_t)p);
        for (size_t i = 0; i < n * (size_t)p; i++)
            send[i] = mixed_val(wr[me], (int)i, round);
        /* Allreduce and Reduce to root round % p of n ints, Reduce_scatter_block of n each. */
        const int root = round % p;
        CHECK(TC_Allreduce(send, recv, (int)n, MPI_INT, MPI_SUM, c) == MPI_SUCCESS);
        for (size_t i = 0; i < n; i++) {
            int want = 0;
            for (int r = 0; r < p; r++)
                want += mixed_val(wr[r], (int)i, round);
            if (recv[i] != want) {
                CHECK(0, "mixed round %d: TC_Allreduce element %zu", round, i);
                break;
            }
        }
        run_case(c, wr, mat, n, round % 3 == 0, round % 4 == 1, 70000u + (uint32_t)round);
        CHECK(TC_Reduce(send, recv, (int)n, MPI_INT, MPI_SUM, root, c) == MPI_SUCCESS);
        CHECK(TC_Reduce_scatter_block(send, recv, (int)n, MPI_INT, MPI_SUM, c) == MPI_SUCCESS);
        for (size_t i = 0; i < n; i++) {
            int want = 0;
            for (int r = 0; r < p; r++)
                want += mixed_val(wr[r], (int)((size_t)me * n + i), round);
            if (recv[i] != want) {
                CHECK(0, "mixed round %d: TC_Reduce_scatter_block element %zu", round, i);
                break;
            }
        }
        run_case(c, wr, rt_spec_find("int sum"), n, round % 2, 0, 80000u + (uint32_t)round);
        free(send);
        free(recv);
    }
    MPI_Comm_free(&c);
}

static void part_errors(void)
{
    enum { N = 16 };
    int send[N], recv[N];
    MPI_Errhandler eh;
    MPI_Comm c;
    for (int i = 0; i < N; i++)
        send[i] = 1000 + i, recv[i] = -7;
    MPI_Comm_create_errhandler(rt_record_handler, &eh);
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh); /* MPI_COMM_NULL's errors go there */
    for (int x = 0; x < 2; x++) {
        int (*fn)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm) =
            x ? TC_Exscan : TC_Scan;
        char what[64];
#define BAD(label, call, cls)                                                                      \
    do {                                                                                           \
        snprintf(what, sizeof what, "%s %s", x ? "TC_Exscan" : "TC_Scan", label);                  \
        rt_expect_error(what, call, cls, send, recv, N);                                           \
    } while (0)
        BAD("count -1", fn(send, recv, -1, MPI_INT, MPI_SUM, c), MPI_ERR_COUNT);
        BAD("MPI_DATATYPE_NULL", fn(send, recv, N, MPI_DATATYPE_NULL, MPI_SUM, c), MPI_ERR_TYPE);
        BAD("MPI_OP_NULL", fn(send, recv, N, MPI_INT, MPI_OP_NULL, c), MPI_ERR_OP);
        BAD("MPI_COMM_NULL", fn(send, recv, N, MPI_INT, MPI_SUM, MPI_COMM_NULL), MPI_ERR_COMM);
        BAD("sendbuf == recvbuf", fn(recv, recv, N, MPI_INT, MPI_SUM, c), MPI_ERR_BUFFER);
#undef BAD
    }
    /* Still works afterwards. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    int wr[1024];
    rt_comm_ranks(c, wr);
    run_all(c, wr, rt_spec_find("int sum"), 5, 777);
    run_all(c, wr, rt_spec_find("int sum"), slot_bytes / 4 + 1, 778);
    CHECK(rt_handler_calls == 0, "errors: the handler ran on good calls");
    MPI_Comm_free(&c);
    MPI_Errhandler_free(&eh);
}

int main(int argc, char **argv)
{
    const char *parts = "types,sizes,small,comms,mixed";
    MPI_Init(&argc, &argv);
    tt_check_np(prog);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--exscan-rank0") == 0)
            check_rank0 = 1;
        else if (strcmp(argv[i], "--parts") == 0 && i + 1 < argc)
            parts = argv[++i];
    }
    const char *sb = getenv("TC_SHM_REDUCE_SLOT_BYTES");
    if (sb && atol(sb) > 0)
        slot_bytes = (size_t)atol(sb);
    if (tt_size > 1024) {
        fprintf(stderr, "%s: at most 1024 processes\n", prog);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int i = 0; i < tt_size; i++)
        world_ranks[i] = i;
    MPI_Comm_set_name(MPI_COMM_WORLD, "world");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    rt_specs_create(quick);
    if (rt_in_list(parts, "types"))
        part_types(MPI_COMM_WORLD);
    if (rt_in_list(parts, "sizes"))
        part_sizes(MPI_COMM_WORLD);
    if (rt_in_list(parts, "small"))
        part_small(MPI_COMM_WORLD);
    if (rt_in_list(parts, "comms"))
        part_comms();
    if (rt_in_list(parts, "mixed"))
        part_mixed();
    if (rt_in_list(parts, "errors"))
        part_errors();
    rt_specs_free();
    return tt_finish();
}
