/*
 * An unmodified MPI program calling MPI_Scan and MPI_Exscan. Run with
 * LD_PRELOAD=libtopocoll_pmpi.so by run_with_stats.sh, which checks from
 * TC_STATS=1 output that its calls reached the library and that, from two
 * processes on, the library's shared-memory path ran (shm > 0); it prints how
 * many of each it made.
 *
 * Every rank's contribution is input(rank, index, salt), so every rank
 * computes its expected prefix itself, in rank order. Cases: MPI_INT/MPI_SUM,
 * MPI_DOUBLE/MPI_MAX and a non-commutative user op (composition of affine
 * maps mod 65521 on a contiguous pair type), with and without MPI_IN_PLACE,
 * from one element to ~0.25 MiB. Send buffers must come back unchanged.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_test_common.h"

enum { K_INT_SUM, K_DOUBLE_MAX, K_AFFINE, K_LAST };
static const char *const kind_names[K_LAST] = {"int/sum", "double/max", "affine (user)"};
static const size_t kind_size[K_LAST] = {sizeof(int), sizeof(double), 2 * sizeof(int)};
#define MOD 65521

static int input(int kind, int rank, size_t i, int salt)
{
    uint32_t h = (uint32_t)(rank + 1) * 2654435761u ^ (uint32_t)i * 40503u ^ (uint32_t)salt;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    return kind == K_AFFINE ? (int)(h % MOD) : (int)(h % 2001) - 1000;
}

/* inout = in o inout, maps x -> a x + b composed with the left operand (the
 * lower rank) applied last: (a1, b1) o (a2, b2) = (a1 a2, a1 b2 + b1). */
static void affine(const int *in, int *inout)
{
    const long long a = (long long)in[0] * inout[0] % MOD;
    const long long b = ((long long)in[0] * inout[1] + in[1]) % MOD;
    inout[0] = (int)a;
    inout[1] = (int)b;
}

static void affine_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int j = 0; j < *len; j++)
        affine((const int *)in + 2 * j, (int *)inout + 2 * j);
}

static void element(int kind, int rank, size_t i, int salt, void *out)
{
    if (kind == K_INT_SUM) {
        *(int *)out = input(kind, rank, i, salt);
    } else if (kind == K_DOUBLE_MAX) {
        *(double *)out = (double)input(kind, rank, i, salt);
    } else {
        ((int *)out)[0] = input(kind, rank, 2 * i, salt);
        ((int *)out)[1] = input(kind, rank, 2 * i + 1, salt);
    }
}

/* The rank-ordered fold of element i over ranks 0 .. upto-1 (upto >= 1). */
static void expected(int kind, int upto, size_t i, int salt, void *out)
{
    unsigned char acc[16], v[16];
    element(kind, upto - 1, i, salt, acc);
    for (int r = upto - 2; r >= 0; r--) {
        element(kind, r, i, salt, v);
        if (kind == K_INT_SUM) {
            *(int *)acc += *(int *)v;
        } else if (kind == K_DOUBLE_MAX) {
            if (*(double *)v > *(double *)acc)
                *(double *)acc = *(double *)v;
        } else {
            affine((const int *)v, (int *)acc);
        }
    }
    memcpy(out, acc, kind_size[kind]);
}

static long long scans, exscans;

static void run(MPI_Comm comm, int kind, MPI_Datatype dt, MPI_Op op, int n, int exclusive,
                int in_place, int salt)
{
    int me;
    MPI_Comm_rank(comm, &me);
    const size_t e = kind_size[kind], bytes = (size_t)n * e;
    char *send = malloc(bytes + 1), *orig = malloc(bytes + 1), *recv = malloc(bytes + 1);
    for (int i = 0; i < n; i++)
        element(kind, me, (size_t)i, salt, send + (size_t)i * e);
    memcpy(orig, send, bytes);
    if (in_place)
        memcpy(recv, send, bytes);
    else
        memset(recv, 0xA5, bytes);
    const void *sb = in_place ? MPI_IN_PLACE : send;
    int rc;
    if (exclusive) {
        rc = MPI_Exscan(sb, recv, n, dt, op, comm);
        exscans++;
    } else {
        rc = MPI_Scan(sb, recv, n, dt, op, comm);
        scans++;
    }
    CHECK(rc == MPI_SUCCESS, "%s %s returned %d", exclusive ? "MPI_Exscan" : "MPI_Scan",
          kind_names[kind], rc);
    const int upto = exclusive ? me : me + 1;
    for (int i = 0; upto > 0 && i < n; i++) {
        unsigned char want[16];
        expected(kind, upto, (size_t)i, salt, want);
        if (memcmp(recv + (size_t)i * e, want, e) != 0) {
            CHECK(0, "%s %s rank %d%s: %d elements, element %d wrong",
                  exclusive ? "MPI_Exscan" : "MPI_Scan", kind_names[kind], me,
                  in_place ? " in place" : "", n, i);
            break;
        }
    }
    if (!in_place)
        CHECK(memcmp(send, orig, bytes) == 0, "send buffer changed");
    free(send);
    free(orig);
    free(recv);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tt_check_np("scan_c");
    int world_rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Datatype pair;
    MPI_Op op_affine;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    MPI_Op_create(affine_fn, 0, &op_affine);
    const MPI_Datatype dts[K_LAST] = {MPI_INT, MPI_DOUBLE, pair};
    const MPI_Op ops[K_LAST] = {MPI_SUM, MPI_MAX, op_affine};
    static const int sizes[] = {1, 7, 3000, 65536};
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int salt = 0;
    for (int c = 0; c < 2; c++)
        for (int k = 0; k < K_LAST; k++)
            for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
                for (int x = 0; x < 2; x++)
                    for (int in_place = 0; in_place < 2; in_place++)
                        run(c ? dup : MPI_COMM_WORLD, k, dts[k], ops[k],
                            (int)((size_t)sizes[z] * sizeof(int) / kind_size[k]) + 1, x, in_place,
                            ++salt);
    MPI_Comm_free(&dup);
    MPI_Op_free(&op_affine);
    MPI_Type_free(&pair);
    const long all_errors = tt_failures_all();
    printf("tc-pmpi-test rank=%d scans=%lld exscans=%lld errors=%ld\n", world_rank, scans, exscans,
           tt_failures());
    fflush(stdout);
    MPI_Finalize();
    return all_errors == 0 ? 0 : 1;
}
