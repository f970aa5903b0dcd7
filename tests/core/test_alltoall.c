/* MPI tests of TC_Alltoall and TC_Alltoallv (public header + MPI only).
 *
 * Every result is compared with a locally computed image of the whole
 * receive buffer: sentinel bytes everywhere, and the value of primitive k of
 * the block from process i to process j (a pure function of case, i, j, k)
 * at the byte position the receive type puts it. Gaps between blocks and
 * holes inside elements must keep the sentinel; the send buffer must come
 * back unchanged. The MPI's own collective is only a second opinion, run
 * where the installed MPIs are known to get it right: every rank with the
 * same contiguous type on both sides, never in place.
 *
 * Type kinds (harness/tc_test_kinds.h), by signature family:
 *   bytes:  MPI_BYTE
 *   ints:   MPI_INT; int resized to 8 bytes (a strided receiver of a
 *           contiguous sender); vector(2 x 1 int, stride 3); contiguous(2
 *           ints); subarray (2 of 4 ints: staged through MPI_Pack)
 *   pairs:  struct {int; double} with padding (extent 16); the same packed
 * Blocks are counted in units: 1 byte, 2 ints, or 1 (int, double) pair.
 * Block sizes: 0, 1, around the inline limit ((p - 1) blocks in one line),
 * around the slot (a bank split into p - 1 lines-aligned slots), several
 * slots. Alltoallv: random counts per (sender, receiver) with zeros, random
 * or reversed displacements with gaps. Communicators: world, a duplicate, a
 * split in two, and world reversed.
 *
 * Options: --quick 1 (fewer sizes: the slow oversubscribed runs); --slots N
 * (the largest block N slots and 1000 bytes instead of 3: more bank uses
 * than banks, for the run-ahead of shm/alltoall.c); --v-only 1
 * (Alltoallv only, blocks around TC_HIER_A2A_AGGREGATE: the aggregation
 * across nodes, where one call mixes blocks through the node leaders and
 * blocks sent straight); --inline 1 (only blocks around the inline lines'
 * boundaries: run_inline; predefined types at a few elements per block:
 * run_small).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_test_common.h"
#include "tc_test_kinds.h"
#include "topocoll.h"

/* Deterministic per-case random numbers, the same on every rank. */
static uint32_t rnd(uint64_t cid, uint64_t i)
{
    return tt_kind_mix(cid, 0x5eed, i);
}

static long calls_tc, calls_ok;

typedef struct ccase {
    int v, in_place, family;
    int skind, rkind; /* this rank's */
    int uniform;      /* every rank the same contiguous kind on both sides */
    int u;            /* Alltoall: units per block; Alltoallv: the largest */
    uint64_t cid;
} ccase_t;

/* Units of the block from @p i to @p j (the same on every rank). In place
 * (v): symmetric, since each block is sent from where the reply lands. */
static int units_of(const ccase_t *cc, int i, int j)
{
    if (!cc->v)
        return cc->u;
    if (cc->in_place && i > j) {
        int t = i;
        i = j;
        j = t;
    }
    uint32_t r = rnd(cc->cid, (uint64_t)i * 4096 + (uint64_t)j);
    return r % 5 == 0 ? 0 : (int)(r % (uint32_t)(cc->u + 1));
}

/* Element displacements of @p p blocks of @p counts: in a random or reversed
 * order with random gaps (v), else j * counts[0]; returns the span. */
static int layout(const ccase_t *cc, uint64_t salt, int p, const int *counts, int *displs)
{
    if (!cc->v) {
        for (int j = 0; j < p; j++)
            displs[j] = j * counts[0];
        return p * counts[0];
    }
    int *order = tt_xmalloc((size_t)p * sizeof(int));
    for (int j = 0; j < p; j++)
        order[j] = j;
    if (rnd(cc->cid, salt) % 3 == 0) {
        for (int j = 0; j < p; j++)
            order[j] = p - 1 - j;
    } else {
        for (int j = p - 1; j > 0; j--) {
            int x = (int)(rnd(cc->cid, salt + 200 + (uint64_t)j) % (uint32_t)(j + 1));
            int t = order[j];
            order[j] = order[x];
            order[x] = t;
        }
    }
    int at = 0;
    for (int i = 0; i < p; i++) {
        int j = order[i];
        displs[j] = at;
        at += counts[j] + (int)(rnd(cc->cid, salt + 100 + (uint64_t)i) % 3);
    }
    free(order);
    return at;
}

/* One call on @p comm: build, call TC, compare; the MPI's own second. */
static void run_case(MPI_Comm comm, const char *cname, const ccase_t *cc)
{
    int rank, p;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    const tt_kind_t *sk = &tt_kinds[cc->skind], *rk = &tt_kinds[cc->rkind];
    int *scounts = tt_xmalloc((size_t)p * sizeof(int)),
        *sdispls = tt_xmalloc((size_t)p * sizeof(int));
    int *rcounts = tt_xmalloc((size_t)p * sizeof(int)),
        *rdispls = tt_xmalloc((size_t)p * sizeof(int));
    for (int j = 0; j < p; j++) {
        scounts[j] = units_of(cc, rank, j) * sk->per_unit;
        rcounts[j] = units_of(cc, j, rank) * rk->per_unit;
    }
    const int sspan = layout(cc, 1000 + (uint64_t)rank * 7, p, scounts, sdispls);
    const int rspan = layout(cc, 5000 + (uint64_t)rank * 7, p, rcounts, rdispls);
    size_t rbytes = (size_t)rspan * (size_t)rk->ext + 64;
    size_t sbytes = (size_t)sspan * (size_t)sk->ext + 64;
    char *rbuf = tt_xmalloc(rbytes), *expect = tt_xmalloc(rbytes);
    char *sbuf = tt_xmalloc(sbytes), *sref = tt_xmalloc(sbytes);
    memset(sbuf, TT_SENTINEL, sbytes);
    for (int j = 0; j < p; j++)
        tt_kind_block_write(sk, cc->cid, (uint64_t)rank * 4096 + (uint64_t)j, scounts[j],
                            sbuf + (size_t)sdispls[j] * (size_t)sk->ext);
    memcpy(sref, sbuf, sbytes);
    memset(expect, TT_SENTINEL, rbytes);
    for (int i = 0; i < p; i++)
        tt_kind_block_write(rk, cc->cid, (uint64_t)i * 4096 + (uint64_t)rank, rcounts[i],
                            expect + (size_t)rdispls[i] * (size_t)rk->ext);
    memset(rbuf, TT_SENTINEL, rbytes);
    const void *send = sbuf;
    if (cc->in_place) {
        /* The outgoing blocks in the receive buffer (receive layout). */
        send = MPI_IN_PLACE;
        for (int j = 0; j < p; j++)
            tt_kind_block_write(rk, cc->cid, (uint64_t)rank * 4096 + (uint64_t)j, rcounts[j],
                                rbuf + (size_t)rdispls[j] * (size_t)rk->ext);
    }
    int rc;
    calls_tc++;
    if (cc->v)
        rc = TC_Alltoallv(send, scounts, sdispls, sk->type, rbuf, rcounts, rdispls, rk->type, comm);
    else
        rc = TC_Alltoall(send, scounts[0], sk->type, rbuf, rcounts[0], rk->type, comm);
    char what[200];
    snprintf(what, sizeof what, "%s %son %s (np %d): send %s, recv %s, units %d, case %llu",
             cc->v ? "TC_Alltoallv" : "TC_Alltoall", cc->in_place ? "in place " : "", cname, p,
             sk->name, rk->name, cc->u, (unsigned long long)cc->cid);
    CHECK(rc == MPI_SUCCESS, "%s returned %d", what, rc);
    size_t bad = 0, first = 0;
    for (size_t b = 0; b < rbytes; b++)
        if (rbuf[b] != expect[b] && bad++ == 0)
            first = b;
    CHECK(bad == 0, "%s: %zu bytes wrong, first at %zu (got 0x%02x, want 0x%02x)", what, bad, first,
          bad ? (unsigned char)rbuf[first] : 0, bad ? (unsigned char)expect[first] : 0);
    CHECK(memcmp(sbuf, sref, sbytes) == 0, "%s changed the send buffer", what);
    if (bad == 0 && rc == MPI_SUCCESS)
        calls_ok++;
    tt_case_done();
    if (cc->uniform && !cc->in_place) {
        memset(rbuf, TT_SENTINEL, rbytes);
        if (cc->v)
            rc = PMPI_Alltoallv(send, scounts, sdispls, sk->type, rbuf, rcounts, rdispls, rk->type,
                                comm);
        else
            rc = PMPI_Alltoall(send, scounts[0], sk->type, rbuf, rcounts[0], rk->type, comm);
        CHECK(rc == MPI_SUCCESS && memcmp(rbuf, expect, rbytes) == 0,
              "%s: the MPI's own result differs from the expected image (second opinion)", what);
    }
    free(scounts);
    free(sdispls);
    free(rcounts);
    free(rdispls);
    free(rbuf);
    free(expect);
    free(sbuf);
    free(sref);
}

/* The case's datatype kinds (cc->family and cc->cid set): with @p uniform,
 * everyone MPI_BYTE or MPI_INT on both sides (where the MPI's own result is a
 * second opinion), else kinds that differ by rank and between send and
 * receive. */
static void case_kinds(ccase_t *cc, int uniform, int rank)
{
    const int fam = cc->family, nk = tt_family_nkinds[fam];
    const int k0 = (int)(rnd(cc->cid, 99) % (uint32_t)nk);
    cc->uniform = uniform && fam != TT_FAM_PAIRS;
    if (cc->uniform) {
        cc->skind = cc->rkind = fam == TT_FAM_BYTES ? TT_KIND_BYTE : TT_KIND_INT;
    } else {
        cc->skind = tt_family_kinds[fam][(k0 + rank) % nk];
        cc->rkind = tt_family_kinds[fam][(k0 + rank + 1) % nk];
    }
}

static void run_comm(MPI_Comm comm, const char *cname, size_t bank, int quick, long slots)
{
    int rank, p;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    /* Bytes per block: 0, 1, (p - 1) blocks filling the inline line and one
     * byte more, a slot (the library's: a bank in p - 1 line-aligned parts)
     * and around it, several slots (@p slots of them with --slots: more bank
     * uses than banks, for the run-ahead). */
    const size_t slot = p > 1 ? bank / (size_t)(p - 1) / 64 * 64 : bank;
    const size_t inl = p > 1 ? 56 / (size_t)(p - 1) : 56;
    const size_t many = (size_t)(slots > 0 ? slots : 3) * slot + 1000;
    size_t bsizes[] = {0, 1, inl, inl + 1, slot - 1, slot, slot + 1, many};
    int nb = (int)(sizeof bsizes / sizeof bsizes[0]);
    uint64_t cid = 1;
    for (int fam = 0; fam < TT_FAM_LAST; fam++) {
        for (int si = 0; si < nb; si++) {
            if (quick && si % 3 != 0 && si != nb - 1)
                continue;
            const int u =
                (int)(bsizes[si] / (size_t)tt_family_unit_bytes[fam]) + (bsizes[si] && fam ? 1 : 0);
            for (int mode = 0; mode < 4; mode++, cid++) {
                /* mode: 0 Alltoall, 1 in place, 2 Alltoallv, 3 in place. */
                ccase_t cc = {0};
                cc.v = mode >= 2;
                cc.in_place = mode & 1;
                cc.family = fam;
                cc.u = u;
                cc.cid = cid * 7919 + (uint64_t)fam;
                case_kinds(&cc, (si + mode) % 2 == 0, rank);
                run_case(comm, cname, &cc);
            }
        }
    }
}

/* Alltoallv only: random counts with zeros from none to about twice the
 * aggregation threshold @p agg (TC_HIER_A2A_AGGREGATE), so that across nodes
 * one call mixes blocks through the node leaders and blocks sent straight;
 * displacements random or reversed with gaps, in place or not, the types
 * differing by rank and between the sides in every other case. */
static void run_vcases(MPI_Comm comm, const char *cname, size_t agg)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    const size_t bsizes[] = {1, 24, agg / 2, agg, 2 * agg + 3};
    const int nb = (int)(sizeof bsizes / sizeof bsizes[0]);
    uint64_t cid = 90001;
    for (int fam = 0; fam < TT_FAM_LAST; fam++)
        for (int si = 0; si < nb; si++)
            for (int mode = 0; mode < 2; mode++, cid++) {
                ccase_t cc = {0};
                cc.v = 1;
                cc.in_place = mode;
                cc.family = fam;
                cc.u = (int)(bsizes[si] / (size_t)tt_family_unit_bytes[fam]) + 1;
                cc.cid = cid * 7919 + (uint64_t)fam;
                case_kinds(&cc, (si + mode) % 2 == 0, rank);
                run_case(comm, cname, &cc);
            }
}

/* TC_HIER_A2A_AGGREGATE (a size), or its default. */
static size_t agg_threshold(void)
{
    const char *e = getenv("TC_HIER_A2A_AGGREGATE");
    const long long v = e && *e ? tt_parse_size(e) : -1;
    return v > 0 && v < (1 << 20) ? (size_t)v : 4096;
}

/* The Bcast, the Allgather and this operation share the segment's bank uses
 * and ready lines: interleave them with sizes from one line to several banks
 * and check each result. */
static void run_mixed(MPI_Comm comm, size_t bank)
{
    int rank, p;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    const int nmax = (int)(bank / sizeof(int)) + 100;
    int *sb = tt_xmalloc((size_t)nmax * (size_t)p * sizeof(int));
    int *rb = tt_xmalloc((size_t)nmax * (size_t)p * sizeof(int));
    int *sc = tt_xmalloc((size_t)p * sizeof(int)), *sd = tt_xmalloc((size_t)p * sizeof(int));
    int *rc_ = tt_xmalloc((size_t)p * sizeof(int)), *rd = tt_xmalloc((size_t)p * sizeof(int));
    const int ns[] = {1, 13, 14, 1000, nmax / 3, nmax};
    for (int it = 0; it < 24; it++) {
        const int n = ns[it % 6], root = (it / 6) % p;
        const uint64_t cid = 700000 + (uint64_t)it;
        int ok = 1, rc;
        const int nb = ns[(it + 3) % 6];
        for (int i = 0; i < nb; i++)
            rb[i] = rank == root ? (int)tt_kind_mix(cid, (uint64_t)root, (uint64_t)i) : -1;
        rc = TC_Bcast(rb, nb, MPI_INT, root, comm);
        for (int i = 0; i < nb; i++)
            ok &= rb[i] == (int)tt_kind_mix(cid, (uint64_t)root, (uint64_t)i);
        CHECK(rc == MPI_SUCCESS && ok, "mixed %d: TC_Bcast of %d ints from %d", it, nb, root);
        if (it % 3 == 2) {
            for (int i = 0; i < n; i++)
                sb[i] = (int)tt_kind_mix(cid + 3, (uint64_t)rank, (uint64_t)i);
            rc = TC_Allgather(sb, n, MPI_INT, rb, n, MPI_INT, comm);
            ok = rc == MPI_SUCCESS;
            for (int j = 0; j < p; j++)
                for (int i = 0; i < n; i++)
                    ok &= rb[j * n + i] == (int)tt_kind_mix(cid + 3, (uint64_t)j, (uint64_t)i);
            CHECK(ok, "mixed %d: TC_Allgather of %d ints", it, n);
        }
        /* Alltoall (even it) or Alltoallv with counts n or n / 2 (odd it),
         * reversed displacements on the receive side. */
        for (int j = 0; j < p; j++) {
            sc[j] = it % 2 == 0 || (rank + j + it) % 3 ? n : n / 2;
            rc_[j] = it % 2 == 0 || (j + rank + it) % 3 ? n : n / 2;
            sd[j] = j * n;
            rd[j] = (p - 1 - j) * n;
        }
        for (int j = 0; j < p; j++)
            for (int i = 0; i < sc[j]; i++)
                sb[sd[j] + i] = (int)tt_kind_mix(cid + 1, (uint64_t)(rank * p + j), (uint64_t)i);
        for (long i = 0; i < (long)n * p; i++)
            rb[i] = -1;
        if (it % 2 == 0)
            rc = TC_Alltoall(sb, n, MPI_INT, rb, n, MPI_INT, comm);
        else
            rc = TC_Alltoallv(sb, sc, sd, MPI_INT, rb, rc_, rd, MPI_INT, comm);
        ok = rc == MPI_SUCCESS;
        for (int j = 0; j < p; j++) {
            const int *at = it % 2 == 0 ? rb + j * n : rb + rd[j];
            for (int i = 0; i < rc_[j]; i++)
                ok &= at[i] == (int)tt_kind_mix(cid + 1, (uint64_t)(j * p + rank), (uint64_t)i);
        }
        CHECK(ok, "mixed %d: %s of %d ints after a Bcast", it,
              it % 2 == 0 ? "TC_Alltoall" : "TC_Alltoallv", n);
        tt_case_done();
    }
    free(sb);
    free(rb);
    free(sc);
    free(sd);
    free(rc_);
    free(rd);
}

/* Blocks in the writer's inline lines (shm/inline_lines.h: (p - 1) blocks of
 * m bytes in up to three lines' payload, 56, 112, 168 bytes with 64-byte
 * lines): m around each boundary's share and a few fixed sizes, Alltoall and
 * Alltoallv (never inline: the interleaving), in place or not, MPI_BYTE then
 * a derived kind by rank; each case after a Bcast of an inline size (the same
 * lines, written by the root's tree) and every third after an Allgather of
 * inline blocks (written by their owners). */
static void run_inline(MPI_Comm comm, const char *cname)
{
    int rank, p;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    const size_t q = p > 1 ? (size_t)(p - 1) : 1;
    size_t ms[] = {1,       8,           56 / q - 1,  56 / q,  56 / q + 1,  64 / q + 1,
                   112 / q, 112 / q + 1, 168 / q - 1, 168 / q, 168 / q + 1, 64};
    const int nm = (int)(sizeof ms / sizeof ms[0]);
    const int bsz[] = {1, 60, 100, 168};
    char *bb = tt_xmalloc(200), *ag = tt_xmalloc(200 * (size_t)p);
    uint64_t cid = 300000;
    for (int mi = 0; mi < nm; mi++)
        for (int mode = 0; mode < 4; mode++)
            for (int pass = 0; pass < 2; pass++, cid++) {
                const int fam = pass == 0 ? TT_FAM_BYTES : mode % 2 ? TT_FAM_PAIRS : TT_FAM_INTS;
                const size_t m = ms[mi] ? ms[mi] : 1;
                const int root = (int)(cid % (uint64_t)p), nb = bsz[cid % 4];
                int ok = 1, rc;
                for (int i = 0; i < nb; i++)
                    bb[i] = rank == root ? (char)tt_kind_mix(cid, 0xbc, (uint64_t)i)
                                         : (char)TT_SENTINEL;
                rc = TC_Bcast(bb, nb, MPI_BYTE, root, comm);
                for (int i = 0; i < nb; i++)
                    ok &= bb[i] == (char)tt_kind_mix(cid, 0xbc, (uint64_t)i);
                CHECK(rc == MPI_SUCCESS && ok, "inline %llu: TC_Bcast of %d bytes from %d",
                      (unsigned long long)cid, nb, root);
                if (cid % 3 == 0) {
                    for (int i = 0; i < nb; i++)
                        bb[i] = (char)tt_kind_mix(cid + 1, (uint64_t)rank, (uint64_t)i);
                    rc = TC_Allgather(bb, nb, MPI_BYTE, ag, nb, MPI_BYTE, comm);
                    ok = rc == MPI_SUCCESS;
                    for (int j = 0; j < p; j++)
                        for (int i = 0; i < nb; i++)
                            ok &= ag[j * nb + i] ==
                                  (char)tt_kind_mix(cid + 1, (uint64_t)j, (uint64_t)i);
                    CHECK(ok, "inline %llu: TC_Allgather of %d bytes", (unsigned long long)cid, nb);
                }
                ccase_t cc = {0};
                cc.v = mode >= 2;
                cc.in_place = (mode + pass) % 2;
                cc.family = fam;
                cc.u = (int)((m + (size_t)tt_family_unit_bytes[fam] - 1) /
                             (size_t)tt_family_unit_bytes[fam]);
                cc.cid = cid * 7919 + (uint64_t)fam;
                const int nk = tt_family_nkinds[fam];
                const int k0 = (int)(rnd(cc.cid, 99) % (uint32_t)nk);
                cc.uniform = pass == 0;
                if (cc.uniform) {
                    cc.skind = cc.rkind = TT_KIND_BYTE;
                } else {
                    cc.skind = tt_family_kinds[fam][(k0 + rank) % nk];
                    cc.rkind = tt_family_kinds[fam][(k0 + rank + 1) % nk];
                }
                run_case(comm, cname, &cc);
            }
    free(bb);
    free(ag);
}

/* Byte b of element e of the block from @p i to @p j in case @p cid: never
 * the sentinel. */
static char small_byte(uint64_t cid, int i, int j, int e, int b)
{
    char v =
        (char)tt_kind_mix(cid, (uint64_t)i * 4096 + (uint64_t)j, (uint64_t)e * 64 + (uint64_t)b);
    return v == (char)TT_SENTINEL ? (char)(v ^ 1) : v;
}

/* Alltoall of predefined types at 1, 2, 3 and 16 elements per block and of
 * MPI_BYTE at 1 to 17 bytes and around the inline line's share and the
 * slot's first line: the segment's path for contiguous blocks
 * (tc_shm_alltoall_contig, its short copies of 1-3, 4-7, 8-16 and more
 * bytes), in place or not, against locally computed bytes. In every other
 * case the odd ranks receive (in place: hold) their blocks with a derived
 * type of the same signature, the predefined one resized to twice its
 * extent (the block sets' path), so one call mixes both paths; the holes
 * and the bytes after the last block keep the sentinel. */
static void run_small(MPI_Comm comm, const char *cname)
{
    int rank, p;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    const MPI_Datatype types[] = {MPI_BYTE,  MPI_CHAR,   MPI_SHORT,     MPI_INT,
                                  MPI_FLOAT, MPI_DOUBLE, MPI_LONG_LONG, MPI_C_DOUBLE_COMPLEX};
    const int ntypes = (int)(sizeof types / sizeof types[0]);
    const int inl = p > 1 ? 56 / (p - 1) : 56;
    int counts[40], nc = 0;
    uint64_t cid = 500000;
    for (int t = 0; t < ntypes; t++) {
        int tsize;
        MPI_Type_size(types[t], &tsize);
        nc = 0;
        if (t == 0) {
            for (int n = 1; n <= 17; n++)
                counts[nc++] = n;
            const int more[] = {24, inl - 1, inl, inl + 1, 57, 64, 65, 130};
            for (int k = 0; k < 8; k++)
                if (more[k] > 17)
                    counts[nc++] = more[k];
        } else {
            const int few[] = {1, 2, 3, 16};
            for (int k = 0; k < 4; k++)
                counts[nc++] = few[k];
        }
        MPI_Datatype wide;
        MPI_Type_create_resized(types[t], 0, 2 * (MPI_Aint)tsize, &wide);
        MPI_Type_commit(&wide);
        for (int ci = 0; ci < nc; ci++)
            for (int mode = 0; mode < 4; mode++, cid++) {
                const int n = counts[ci], in_place = mode & 1, mixed = mode >> 1;
                const int rwide = mixed && rank % 2 == 1;
                const size_t rext = (size_t)tsize * (rwide ? 2 : 1);
                const size_t rbytes = (size_t)p * (size_t)n * rext + 32;
                const size_t sbytes = (size_t)p * (size_t)n * (size_t)tsize;
                char *rbuf = tt_xmalloc(rbytes), *expect = tt_xmalloc(rbytes);
                char *sbuf = tt_xmalloc(sbytes + 1), *sref = tt_xmalloc(sbytes + 1);
                memset(rbuf, TT_SENTINEL, rbytes);
                memset(expect, TT_SENTINEL, rbytes);
                for (int j = 0; j < p; j++)
                    for (int e = 0; e < n; e++)
                        for (int b = 0; b < tsize; b++) {
                            const size_t e_at = ((size_t)j * (size_t)n + (size_t)e);
                            sbuf[e_at * (size_t)tsize + (size_t)b] = small_byte(cid, rank, j, e, b);
                            expect[e_at * rext + (size_t)b] = small_byte(cid, j, rank, e, b);
                            if (in_place)
                                rbuf[e_at * rext + (size_t)b] = small_byte(cid, rank, j, e, b);
                        }
                memcpy(sref, sbuf, sbytes);
                const MPI_Datatype rt = rwide ? wide : types[t];
                int rc = in_place
                             ? TC_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, n, rt, comm)
                             : TC_Alltoall(sbuf, n, types[t], rbuf, n, rt, comm);
                size_t bad = 0, first = 0;
                for (size_t b = 0; b < rbytes; b++)
                    if (rbuf[b] != expect[b] && bad++ == 0)
                        first = b;
                char tname[MPI_MAX_OBJECT_NAME];
                int tlen;
                MPI_Type_get_name(types[t], tname, &tlen);
                CHECK(rc == MPI_SUCCESS && bad == 0,
                      "small %llu on %s (np %d): TC_Alltoall %sof %d x %s%s returned %d, %zu bytes "
                      "wrong, first at %zu",
                      (unsigned long long)cid, cname, p, in_place ? "in place " : "", n, tname,
                      rwide ? " (received resized)" : "", rc, bad, first);
                CHECK(memcmp(sbuf, sref, sbytes) == 0, "small %llu: the send buffer changed",
                      (unsigned long long)cid);
                calls_tc++;
                calls_ok += rc == MPI_SUCCESS && bad == 0;
                tt_case_done();
                free(rbuf);
                free(expect);
                free(sbuf);
                free(sref);
            }
        MPI_Type_free(&wide);
    }
}

/* Bad arguments: the right class through the communicator's handler, no
 * byte moved. Every rank makes the same mistake. */
static void run_errors(void)
{
    MPI_Comm comm = tt_err_comm_create();
    int p, rank;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &rank);
    int *sb = tt_xmalloc((size_t)p * 2 * sizeof(int));
    int *rb = tt_xmalloc((size_t)p * 2 * sizeof(int));
    int *counts = tt_xmalloc((size_t)p * sizeof(int));
    int *displs = tt_xmalloc((size_t)p * sizeof(int));
    for (int j = 0; j < p; j++) {
        counts[j] = 1;
        displs[j] = j;
        sb[j] = 100 * rank + j;
    }
    for (int j = 0; j < 2 * p; j++)
        rb[j] = -7;
    int cls;
    TT_ERR_CASE("negative sendcount", MPI_ERR_COUNT,
                TC_Alltoall(sb, -1, MPI_INT, rb, 1, MPI_INT, comm));
    TT_ERR_CASE("negative recvcount", MPI_ERR_COUNT,
                TC_Alltoall(sb, 1, MPI_INT, rb, -1, MPI_INT, comm));
    TT_ERR_CASE("null sendtype", MPI_ERR_TYPE,
                TC_Alltoall(sb, 1, MPI_DATATYPE_NULL, rb, 1, MPI_INT, comm));
    TT_ERR_CASE("null recvtype", MPI_ERR_TYPE,
                TC_Alltoall(sb, 1, MPI_INT, rb, 1, MPI_DATATYPE_NULL, comm));
    TT_ERR_CASE("aliased buffers", MPI_ERR_BUFFER,
                TC_Alltoall(rb, 1, MPI_INT, rb, 1, MPI_INT, comm));
    TT_ERR_CASE("send block larger than the receive block", MPI_ERR_TRUNCATE,
                TC_Alltoall(sb, 2, MPI_INT, rb, 1, MPI_INT, comm));
    TT_ERR_CASE("v: NULL sendcounts", MPI_ERR_ARG,
                TC_Alltoallv(sb, NULL, displs, MPI_INT, rb, counts, displs, MPI_INT, comm));
    TT_ERR_CASE("v: NULL rdispls", MPI_ERR_ARG,
                TC_Alltoallv(sb, counts, displs, MPI_INT, rb, counts, NULL, MPI_INT, comm));
    TT_ERR_CASE(
        "v: null recvtype", MPI_ERR_TYPE,
        TC_Alltoallv(sb, counts, displs, MPI_INT, rb, counts, displs, MPI_DATATYPE_NULL, comm));
    counts[p - 1] = -1;
    TT_ERR_CASE("v: negative counts", MPI_ERR_COUNT,
                TC_Alltoallv(sb, counts, displs, MPI_INT, rb, counts, displs, MPI_INT, comm));
    TT_ERR_CASE("v in place: negative recvcounts", MPI_ERR_COUNT,
                TC_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_INT, rb, counts, displs, MPI_INT, comm));
    counts[p - 1] = 1;
    counts[rank] = 2;
    TT_ERR_CASE("v: block to self larger than the block from self", MPI_ERR_TRUNCATE,
                TC_Alltoallv(sb, counts, displs, MPI_INT, rb, counts, displs, MPI_BYTE, comm));
    counts[rank] = 1;
    int untouched = 1;
    for (int j = 0; j < 2 * p; j++)
        untouched &= rb[j] == -7;
    CHECK(untouched, "a call with bad arguments wrote into the receive buffer");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = TC_Alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, MPI_COMM_NULL);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COMM, "MPI_COMM_NULL: error class %d", cls);
    rc = TC_Alltoallv(sb, counts, displs, MPI_INT, rb, counts, displs, MPI_INT, MPI_COMM_NULL);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COMM, "v, MPI_COMM_NULL: error class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    /* The communicator is still usable after the errors. */
    rc = TC_Alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, comm);
    int ok = rc == MPI_SUCCESS;
    for (int j = 0; j < p; j++)
        ok &= rb[j] == 100 * j + rank;
    CHECK(ok, "a good call after the errors failed");
    tt_err_comm_free(&comm);
    free(sb);
    free(rb);
    free(counts);
    free(displs);
}

/* An intercommunicator goes to the MPI's own: block j goes to remote rank j. */
static void run_intercomm(void)
{
    if (tt_size < 2)
        return;
    MPI_Comm half, inter;
    int color = tt_rank % 2;
    MPI_Comm_split(MPI_COMM_WORLD, color, tt_rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - color, 77, &inter);
    int rsize, lrank, lsize;
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Comm_rank(inter, &lrank);
    MPI_Comm_size(inter, &lsize);
    int *sb = tt_xmalloc((size_t)rsize * sizeof(int)),
        *rb = tt_xmalloc((size_t)rsize * sizeof(int));
    int *counts = tt_xmalloc((size_t)rsize * sizeof(int));
    int *displs = tt_xmalloc((size_t)rsize * sizeof(int));
    for (int j = 0; j < rsize; j++) {
        sb[j] = 1000 * tt_rank + j;
        rb[j] = -1;
        counts[j] = 1;
        displs[j] = rsize - 1 - j;
    }
    int rc = TC_Alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, inter);
    int ok = rc == MPI_SUCCESS;
    for (int j = 0; j < rsize; j++)
        ok &= rb[j] == 1000 * (2 * j + (1 - color)) + lrank; /* remote j = world 2j + other */
    CHECK(ok, "TC_Alltoall on an intercommunicator");
    rc = TC_Alltoallv(sb, counts, displs, MPI_INT, rb, counts, displs, MPI_INT, inter);
    ok = rc == MPI_SUCCESS;
    for (int j = 0; j < rsize; j++)
        ok &= rb[rsize - 1 - j] == 1000 * (2 * j + (1 - color)) + (lsize - 1 - lrank);
    CHECK(ok, "TC_Alltoallv on an intercommunicator");
    free(sb);
    free(rb);
    free(counts);
    free(displs);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
}

int main(int argc, char **argv)
{
    size_t f, S;
    tt_init(&argc, &argv, "test_alltoall", 4096, 256, &f, &S);
    int quick = tt_arg_long(argc, argv, "--quick", 0) != 0;
    const long slots = tt_arg_long(argc, argv, "--slots", 0);
    const int inl = tt_arg_long(argc, argv, "--inline", 0) != 0;
    const char *qenv = getenv("TC_SHM_BANKS");
    long q = qenv && atol(qenv) > 0 ? atol(qenv) : 16;
    size_t bank = S * f / (size_t)q;
    if (bank > (size_t)1 << 20)
        bank = (size_t)1 << 20;
    tt_kinds_create();

    MPI_Comm dup, split, rev;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, tt_rank % 2, tt_rank, &split);
    MPI_Comm_split(MPI_COMM_WORLD, 0, tt_size - tt_rank, &rev);
    if (tt_arg_long(argc, argv, "--v-only", 0) != 0) {
        const size_t agg = agg_threshold();
        run_vcases(MPI_COMM_WORLD, "world", agg);
        run_vcases(rev, "reversed", agg);
        run_vcases(split, "split", agg);
        /* A new context on the same communicator builds its node plan
         * again (the old one went with the old context). */
        TC_Comm_detach(rev);
        run_vcases(rev, "reversed, detached", agg);
    } else if (inl) {
        run_small(MPI_COMM_WORLD, "world");
        run_small(split, "split");
        run_inline(MPI_COMM_WORLD, "world");
        run_inline(split, "split");
    } else {
        run_comm(MPI_COMM_WORLD, "world", bank, quick, slots);
        run_comm(rev, "reversed", bank, 1, slots);
        run_comm(split, "split", bank, 1, slots);
        run_comm(dup, "dup", bank, 1, slots);
        run_mixed(MPI_COMM_WORLD, bank);
        run_mixed(split, bank);
        run_errors();
        run_intercomm();
    }
    MPI_Comm_free(&dup);
    MPI_Comm_free(&split);
    MPI_Comm_free(&rev);
    tt_kinds_free();
    if (tt_rank == 0)
        printf("test_alltoall: %ld TC calls, %ld right\n", calls_tc, calls_ok);
    return tt_finish();
}
