/*
 * An unmodified MPI program calling MPI_Reduce_scatter_block and
 * MPI_Reduce_scatter. Run with LD_PRELOAD=libtopocoll_pmpi.so by
 * run_with_stats.sh, which checks from TC_STATS=1 output that its calls
 * reached the library and that, from two processes on, the library's
 * shared-memory path ran (shm > 0); it prints how many of each it made.
 *
 * Every rank's contribution is input(case, rank, index), so every rank
 * computes its expected block itself, in rank order. Cases: MPI_INT/MPI_SUM,
 * MPI_DOUBLE/MPI_MAX, and a non-commutative user op (composition of affine
 * maps mod 65521 on a contiguous pair type); each with and without
 * MPI_IN_PLACE, from one element per process to ~0.5 MiB in all, the
 * v-variant with counts that include zeros. Send buffers must come back
 * unchanged.
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

/* The rank-ordered fold of element i over p ranks. */
static void expected(int kind, int p, size_t i, int salt, void *out)
{
    unsigned char acc[16], v[16];
    element(kind, p - 1, i, salt, acc);
    for (int r = p - 2; r >= 0; r--) {
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

static long long rsbs, rss;

static void run(MPI_Comm comm, int kind, MPI_Datatype dt, MPI_Op op, const int *counts, int block,
                int in_place, int salt)
{
    int p, me;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    const size_t e = kind_size[kind];
    size_t total = 0, first = 0;
    for (int i = 0; i < p; i++) {
        if (i == me)
            first = total;
        total += (size_t)(counts ? counts[i] : block);
    }
    const size_t mine = (size_t)(counts ? counts[me] : block);
    char *send = malloc(total * e + 1), *orig = malloc(total * e + 1);
    char *recv = malloc((in_place ? total : mine) * e + 1);
    for (size_t i = 0; i < total; i++)
        element(kind, me, i, salt, send + i * e);
    memcpy(orig, send, total * e);
    if (in_place)
        memcpy(recv, send, total * e);
    else
        memset(recv, 0xA5, mine * e);
    const void *sb = in_place ? MPI_IN_PLACE : send;
    int rc;
    if (counts) {
        rc = MPI_Reduce_scatter(sb, recv, counts, dt, op, comm);
        rss++;
    } else {
        rc = MPI_Reduce_scatter_block(sb, recv, block, dt, op, comm);
        rsbs++;
    }
    CHECK(rc == MPI_SUCCESS, "%s %s returned %d", counts ? "MPI_Reduce_scatter" : "block",
          kind_names[kind], rc);
    for (size_t i = 0; i < mine; i++) {
        unsigned char want[16];
        expected(kind, p, first + i, salt, want);
        if (memcmp(recv + i * e, want, e) != 0) {
            CHECK(0, "%s %s np %d%s: %zu elements in all, element %zu of this rank's %zu wrong",
                  counts ? "MPI_Reduce_scatter" : "MPI_Reduce_scatter_block", kind_names[kind], p,
                  in_place ? " in place" : "", total, i, mine);
            break;
        }
    }
    if (!in_place)
        CHECK(memcmp(send, orig, total * e) == 0, "send buffer changed");
    free(send);
    free(orig);
    free(recv);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int np = tt_check_np("reduce_scatter_c");
    int world_rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Datatype pair;
    MPI_Op op_affine;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    MPI_Op_create(affine_fn, 0, &op_affine);
    const MPI_Datatype dts[K_LAST] = {MPI_INT, MPI_DOUBLE, pair};
    const MPI_Op ops[K_LAST] = {MPI_SUM, MPI_MAX, op_affine};
    static const int blocks[] = {1, 5, 1000, 20000};
    int *counts = malloc(sizeof(int) * (size_t)np);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int salt = 0;
    for (int c = 0; c < 2; c++) {
        MPI_Comm comm = c ? dup : MPI_COMM_WORLD;
        for (int k = 0; k < K_LAST; k++)
            for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++) {
                const int block = (int)((size_t)blocks[b] * sizeof(int) / kind_size[k]);
                for (int in_place = 0; in_place < 2; in_place++) {
                    run(comm, k, dts[k], ops[k], NULL, block, in_place, ++salt);
                    for (int i = 0; i < np; i++)
                        counts[i] = (i + (int)b) % 3 == 1 ? 0 : block + i;
                    run(comm, k, dts[k], ops[k], counts, 0, in_place, ++salt);
                }
            }
    }
    MPI_Comm_free(&dup);
    MPI_Op_free(&op_affine);
    MPI_Type_free(&pair);
    free(counts);
    const long all_errors = tt_failures_all();
    printf("tc-pmpi-test rank=%d reduce_scatter_blocks=%lld reduce_scatters=%lld errors=%ld\n",
           world_rank, rsbs, rss, tt_failures());
    fflush(stdout);
    MPI_Finalize();
    return all_errors == 0 ? 0 : 1;
}
