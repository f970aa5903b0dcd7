/* MPI tests of TC_Allgather and TC_Allgatherv (public header + MPI only).
 *
 * Every result is compared with a locally computed image of the whole
 * receive buffer: sentinel bytes everywhere, and the value of primitive k of
 * block j (a pure function of case, j, k) at the byte position the receive
 * type puts it. Gaps between blocks and holes inside elements must keep the
 * sentinel; the send buffer must come back unchanged. The MPI's own
 * collective is only a second opinion, run where the installed MPIs are
 * known to get it right: every rank with the same send and receive type
 * (MPICH 4.0.2's MPI_Allgatherv fails when ranks receive with different
 * types of one signature; Open MPI 4.1.4's hangs when a rank's send and
 * receive types differ in size), and never Allgatherv on one process
 * (MPICH ignores displs[0] there); for Gather(v)/Scatter(v) contiguous types
 * only (MPICH's MPI_Scatter fails on a resized int, see run_rooted).
 *
 * Type kinds (harness/tc_test_kinds.h), by signature family:
 *   bytes:  MPI_BYTE
 *   ints:   MPI_INT; int resized to 8 bytes (a strided receiver of a
 *           contiguous sender); vector(2 x 1 int, stride 3); contiguous(2
 *           ints); subarray (2 of 4 ints: the flattener does not know it, so
 *           it is staged through MPI_Pack)
 *   pairs:  struct {int; double} with padding (extent 16); the same packed
 *           (offsets 0 and 4, extent 12)
 * Blocks are counted in units: 1 byte, 2 ints, or 1 (int, double) pair.
 * Communicators: world, a duplicate, a split in two, and world reversed.
 *
 * Options: --quick 1 (fewer sizes: the slow oversubscribed runs);
 * --allgather-only 1 (Allgather(v) on every communicator and the mixed
 * sequence, no Gather(v)/Scatter(v) matrix, error or intercommunicator
 * cases: the posed hierarchies and the emulated cluster); --rooted 1
 * (Gather(v) and Scatter(v) only, on world, reversed and split: the
 * hierarchical runs); --inline 1 (only blocks of 0-170 bytes, around the
 * inline lines' boundaries, every operation and root: run_inline).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_test_common.h"
#include "tc_test_kinds.h"
#include "topocoll.h"

static long calls_tc, calls_ok;

typedef struct ccase {
    int v; /* Allgatherv */
    int in_place;
    int family;
    int skind, rkind; /* this rank's */
    int uniform;      /* every rank uses the same kinds, send == recv */
    int unit_base;    /* Allgather: units per block */
    uint64_t cid;
} ccase_t;

/* One call on @p comm: build, call TC, compare; the MPI's own second. */
static void run_case(MPI_Comm comm, const char *cname, const ccase_t *cc, const int *units,
                     const int *order, const int *gaps)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    const tt_kind_t *sk = &tt_kinds[cc->skind], *rk = &tt_kinds[cc->rkind];
    int *rcounts = tt_xmalloc((size_t)size * sizeof(int));
    int *displs = tt_xmalloc((size_t)size * sizeof(int));
    /* Blocks in the order given, each followed by its gap (elements). */
    int at = 0;
    for (int i = 0; i < size; i++) {
        int j = order[i];
        rcounts[j] = units[j] * rk->per_unit;
        displs[j] = at;
        at += rcounts[j] + gaps[i];
    }
    if (!cc->v)
        for (int j = 0; j < size; j++)
            displs[j] = j * rcounts[0];
    size_t rbytes = tt_kind_span(rk, at + (cc->v ? 0 : size * rcounts[0])) + 64;
    char *rbuf = tt_xmalloc(rbytes), *expect = tt_xmalloc(rbytes);
    int scount = units[rank] * sk->per_unit;
    size_t sbytes = tt_kind_span(sk, scount) + 64;
    char *sbuf = tt_xmalloc(sbytes), *sref = tt_xmalloc(sbytes);
    memset(sbuf, TT_SENTINEL, sbytes);
    tt_kind_block_write(sk, cc->cid, rank, scount, sbuf);
    memcpy(sref, sbuf, sbytes);
    memset(expect, TT_SENTINEL, rbytes);
    for (int j = 0; j < size; j++)
        tt_kind_block_write(rk, cc->cid, j, rcounts[j],
                            expect + (size_t)displs[j] * (size_t)rk->ext);
    memset(rbuf, TT_SENTINEL, rbytes);
    const void *send = sbuf;
    if (cc->in_place) {
        send = MPI_IN_PLACE;
        tt_kind_block_write(rk, cc->cid, rank, rcounts[rank],
                            rbuf + (size_t)displs[rank] * (size_t)rk->ext);
    }
    int rc;
    calls_tc++;
    if (cc->v)
        rc = TC_Allgatherv(send, scount, sk->type, rbuf, rcounts, displs, rk->type, comm);
    else
        rc = TC_Allgather(send, scount, sk->type, rbuf, rcounts[0], rk->type, comm);
    char what[200];
    snprintf(what, sizeof what, "%s %s%s on %s (np %d): send %s x %d, recv %s, units[0] %d",
             cc->v ? "TC_Allgatherv" : "TC_Allgather", cc->in_place ? "in place " : "", "", cname,
             size, sk->name, scount, rk->name, units[0]);
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
    if (cc->uniform && !(cc->v && size == 1)) {
        memset(rbuf, TT_SENTINEL, rbytes);
        if (cc->in_place)
            tt_kind_block_write(rk, cc->cid, rank, rcounts[rank],
                                rbuf + (size_t)displs[rank] * (size_t)rk->ext);
        if (cc->v)
            rc = PMPI_Allgatherv(send, scount, sk->type, rbuf, rcounts, displs, rk->type, comm);
        else
            rc = PMPI_Allgather(send, scount, sk->type, rbuf, rcounts[0], rk->type, comm);
        CHECK(rc == MPI_SUCCESS && memcmp(rbuf, expect, rbytes) == 0,
              "%s: the MPI's own result differs from the expected image (second opinion)", what);
    }
    free(rcounts);
    free(displs);
    free(rbuf);
    free(expect);
    free(sbuf);
    free(sref);
}

/* Deterministic per-case random numbers, the same on every rank. */
static uint32_t rnd(uint64_t cid, int i)
{
    return tt_kind_mix(cid, 0x5eed, (uint64_t)i);
}

/* A case's kinds from signature family @p fam: one drawn from @p c for
 * every rank and both sides (@p uniform), else kinds that differ by rank and
 * between the sides (*first the drawn one's k0 + rank-th, *second the next). */
static void case_kinds(int fam, uint64_t c, int uniform, int rank, int *first, int *second)
{
    const int nk = tt_family_nkinds[fam];
    const int k0 = (int)(rnd(c, 99) % (uint32_t)nk);
    *first = *second = tt_family_kinds[fam][k0];
    if (!uniform) {
        *first = tt_family_kinds[fam][(k0 + rank) % nk];
        *second = tt_family_kinds[fam][(k0 + rank + 1) % nk];
    }
}

/* How a v-variant's blocks are ordered in the buffer: reversed rank order,
 * a random order, or reversed and then shuffled. */
enum { ORD_REVERSED, ORD_SHUFFLED, ORD_REVERSED_SHUFFLED };

/* A case's blocks: @p u units each, in rank order, no gaps; a v-variant's
 * (@p v) random units up to u drawn from @p c (zeros included; block
 * @p full, if one, keeps u: the largest decides), random gaps of 0-2
 * elements, in the order @p ord. */
static void case_blocks(int size, int u, int v, uint64_t c, int full, int ord, int *units,
                        int *order, int *gaps)
{
    for (int j = 0; j < size; j++) {
        order[j] = j;
        gaps[j] = 0;
        units[j] = u;
    }
    if (!v)
        return;
    for (int j = 0; j < size; j++) {
        uint32_t r = rnd(c, j);
        units[j] = j == full ? u : r % 5 == 0 ? 0 : (int)(r % (uint32_t)(u + 1));
        gaps[j] = (int)(rnd(c, 100 + j) % 3);
        if (ord != ORD_SHUFFLED)
            order[j] = size - 1 - j;
    }
    if (ord != ORD_REVERSED)
        for (int j = size - 1; j > 0; j--) {
            int x = (int)(rnd(c, 200 + j) % (uint32_t)(j + 1));
            int t = order[j];
            order[j] = order[x];
            order[x] = t;
        }
}

static void run_comm(MPI_Comm comm, const char *cname, size_t f, size_t bank, int quick)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    /* A case's blocks (case_blocks), in one allocation. */
    int *units = tt_xmalloc(3 * (size_t)size * sizeof(int)), *order = units + size,
        *gaps = order + size;
    /* Bytes per block: 0, 1, the inline boundary (56 = a line minus the
     * sequence number), a fragment and around it, a bank and beyond. */
    size_t bsizes[] = {0, 1, 55, 56, 57, f - 1, f, f + 1, bank + 3, 3 * bank + 1000};
    int nb = (int)(sizeof bsizes / sizeof bsizes[0]);
    uint64_t cid = 1;
    for (int fam = 0; fam < TT_FAM_LAST; fam++) {
        const int unit_bytes = tt_family_unit_bytes[fam];
        for (int si = 0; si < nb; si++) {
            if (quick && si % 3 != 0 && si != nb - 1)
                continue;
            const int u = (int)(bsizes[si] / (size_t)unit_bytes) + (bsizes[si] && fam ? 1 : 0);
            for (int mode = 0; mode < 4; mode++, cid++) {
                /* mode: 0 Allgather, 1 Allgather in place, 2 Allgatherv,
                 * 3 Allgatherv in place. */
                ccase_t cc = {0};
                cc.v = mode >= 2;
                cc.in_place = mode & 1;
                cc.family = fam;
                cc.cid = cid * 7919 + (uint64_t)fam;
                /* Alternate: everyone the same kind (second opinion), or
                 * kinds that differ by rank and between send and receive. */
                cc.uniform = (si + mode) % 2 == 0 || tt_family_nkinds[fam] == 1;
                case_kinds(fam, cc.cid, cc.uniform, rank, &cc.skind, &cc.rkind);
                /* v: random counts up to the size, reversed displacements
                 * or a random order of the blocks, random gaps. */
                case_blocks(size, u, cc.v, cc.cid, -1, cid % 3 == 0 ? ORD_REVERSED : ORD_SHUFFLED,
                            units, order, gaps);
                run_case(comm, cname, &cc, units, order, gaps);
            }
        }
    }
    free(units);
}

/* ---- Gather(v), Scatter(v) ----------------------------------------------------------- */

enum { R_GATHER, R_GATHERV, R_SCATTER, R_SCATTERV, R_LAST };
static const char *const rooted_names[R_LAST] = {"TC_Gather", "TC_Gatherv", "TC_Scatter",
                                                 "TC_Scatterv"};

/* One rooted call. The "many" side (the root's receive buffer of a gather,
 * its send buffer of a scatter) holds block j at displs[j] elements of kind
 * mk; each process's own block is count elements of kind ok. */
static void run_rooted(MPI_Comm comm, const char *cname, int op, int in_place, int root, int mkind,
                       int okind, int uniform, const int *units, const int *order, const int *gaps,
                       uint64_t cid)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    const int v = op == R_GATHERV || op == R_SCATTERV, gather = op <= R_GATHERV;
    const tt_kind_t *mk = &tt_kinds[mkind], *ok = &tt_kinds[okind];
    int *counts = tt_xmalloc((size_t)size * sizeof(int));
    int *displs = tt_xmalloc((size_t)size * sizeof(int));
    int at = 0;
    for (int i = 0; i < size; i++) {
        int j = order[i];
        counts[j] = units[j] * mk->per_unit;
        displs[j] = v ? at : j * units[0] * mk->per_unit;
        at += counts[j] + gaps[i];
    }
    size_t mbytes = tt_kind_span(mk, at > size * counts[0] ? at : size * counts[0]) + 64;
    const int ocount = units[rank] * ok->per_unit;
    size_t obytes = tt_kind_span(ok, ocount) + 64;
    char *many = tt_xmalloc(mbytes), *mexp = tt_xmalloc(mbytes);
    char *own = tt_xmalloc(obytes), *oexp = tt_xmalloc(obytes);
    memset(many, TT_SENTINEL, mbytes);
    memset(own, TT_SENTINEL, obytes);
    memset(mexp, TT_SENTINEL, mbytes);
    memset(oexp, TT_SENTINEL, obytes);
    /* The images every buffer must hold after the call. */
    if (rank == root || !gather)
        for (int j = 0; j < size; j++)
            if (rank == root)
                tt_kind_block_write(mk, cid, j, counts[j],
                                    mexp + (size_t)displs[j] * (size_t)mk->ext);
    if (!(in_place && rank == root))
        tt_kind_block_write(ok, cid, rank, ocount, oexp);
    /* Inputs: gather: own (and, in place, the root's block in many);
     * scatter: the root's many. */
    if (gather) {
        memcpy(own, oexp, obytes);
        if (in_place && rank == root)
            tt_kind_block_write(mk, cid, rank, counts[rank],
                                many + (size_t)displs[rank] * (size_t)mk->ext);
    } else if (rank == root) {
        memcpy(many, mexp, mbytes);
    }
    void *ownp = in_place && rank == root ? MPI_IN_PLACE : own;
    int rc;
    switch (op) {
    case R_GATHER:
        rc = TC_Gather(ownp, ocount, ok->type, many, counts[0], mk->type, root, comm);
        break;
    case R_GATHERV:
        rc = TC_Gatherv(ownp, ocount, ok->type, many, counts, displs, mk->type, root, comm);
        break;
    case R_SCATTER:
        rc = TC_Scatter(many, counts[0], mk->type, ownp, ocount, ok->type, root, comm);
        break;
    default:
        rc = TC_Scatterv(many, counts, displs, mk->type, ownp, ocount, ok->type, root, comm);
        break;
    }
    calls_tc++;
    char what[200];
    snprintf(what, sizeof what, "%s%s root %d on %s (np %d): many %s, own %s x %d, units[0] %d",
             rooted_names[op], in_place ? " in place" : "", root, cname, size, mk->name, ok->name,
             ocount, units[0]);
    CHECK(rc == MPI_SUCCESS, "%s returned %d", what, rc);
    size_t bad = 0, first = 0;
    for (size_t b = 0; b < mbytes; b++)
        if (many[b] != mexp[b] && bad++ == 0)
            first = b;
    CHECK(bad == 0,
          "%s: %zu bytes of the root's buffer wrong (or a non-root's touched), first at %zu", what,
          bad, first);
    size_t bad2 = 0;
    for (size_t b = 0; b < obytes; b++)
        bad2 += own[b] != oexp[b];
    CHECK(bad2 == 0, "%s: %zu bytes of this process's own block wrong", what, bad2);
    if (bad == 0 && bad2 == 0 && rc == MPI_SUCCESS)
        calls_ok++;
    tt_case_done();
    /* MPICH 4.0.2's MPI_Scatter (binomial) reports "Message truncated" for
     * types whose extent exceeds their size (int resized to 8 bytes, seen
     * here): the second opinion of the rooted operations takes contiguous
     * types only. */
    const int contiguous =
        (size_t)mk->ext == (size_t)mk->nprim * (mk->family == TT_FAM_BYTES ? 1 : 4) &&
        mk->family != TT_FAM_PAIRS;
    if (uniform && contiguous && !(v && size == 1)) {
        /* Second opinion: the MPI's own on the same inputs. */
        memset(many, TT_SENTINEL, mbytes);
        memset(own, TT_SENTINEL, obytes);
        if (gather) {
            memcpy(own, oexp, obytes);
            if (in_place && rank == root)
                tt_kind_block_write(mk, cid, rank, counts[rank],
                                    many + (size_t)displs[rank] * (size_t)mk->ext);
        } else if (rank == root) {
            memcpy(many, mexp, mbytes);
        }
        if (op == R_GATHER)
            rc = PMPI_Gather(ownp, ocount, ok->type, many, counts[0], mk->type, root, comm);
        else if (op == R_GATHERV)
            rc = PMPI_Gatherv(ownp, ocount, ok->type, many, counts, displs, mk->type, root, comm);
        else if (op == R_SCATTER)
            rc = PMPI_Scatter(many, counts[0], mk->type, ownp, ocount, ok->type, root, comm);
        else
            rc = PMPI_Scatterv(many, counts, displs, mk->type, ownp, ocount, ok->type, root, comm);
        CHECK(rc == MPI_SUCCESS && memcmp(many, mexp, mbytes) == 0 &&
                  memcmp(own, oexp, obytes) == 0,
              "%s: the MPI's own result differs from the expected images (second opinion)", what);
    }
    free(counts);
    free(displs);
    free(many);
    free(mexp);
    free(own);
    free(oexp);
}

/* Every root, a few sizes per signature family, every operation with and
 * without MPI_IN_PLACE. */
static void run_comm_rooted(MPI_Comm comm, const char *cname, size_t f, size_t bank, int quick)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int *units = tt_xmalloc(3 * (size_t)size * sizeof(int)), *order = units + size,
        *gaps = order + size;
    size_t bsizes[] = {0, 1, 56, 57, f + 1, 2 * bank + 100};
    int nb = (int)(sizeof bsizes / sizeof bsizes[0]);
    uint64_t cid = 77;
    for (int root = 0; root < size; root++)
        for (int fam = 0; fam < TT_FAM_LAST; fam++) {
            const int unit_bytes = tt_family_unit_bytes[fam];
            for (int si = 0; si < nb; si++) {
                if (quick && (si + root + fam) % 2)
                    continue;
                const int u = (int)(bsizes[si] / (size_t)unit_bytes) + (bsizes[si] && fam ? 1 : 0);
                for (int op = 0; op < R_LAST; op++)
                    for (int in_place = 0; in_place < 2; in_place++, cid++) {
                        const uint64_t c = cid * 104729 + (uint64_t)fam;
                        const int v = op == R_GATHERV || op == R_SCATTERV;
                        const int uniform =
                            (si + op + in_place) % 2 == 0 || tt_family_nkinds[fam] == 1;
                        int mkind, okind;
                        case_kinds(fam, c, uniform, rank, &mkind, &okind);
                        case_blocks(size, u, v, c, -1,
                                    cid % 2 ? ORD_REVERSED_SHUFFLED : ORD_REVERSED, units, order,
                                    gaps);
                        run_rooted(comm, cname, op, in_place, root, mkind, okind, uniform, units,
                                   order, gaps, c);
                    }
            }
        }
    free(units);
}

/* The Bcast and these operations share the segment's bank uses and ready
 * lines (docs/allgather.md): interleave them, with sizes from one line to
 * several banks and every root, and check each result. */
static void run_mixed(MPI_Comm comm, size_t bank)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    const int nmax = (int)(2 * bank / sizeof(int)) + 100;
    int *buf = tt_xmalloc((size_t)nmax * (size_t)size * sizeof(int));
    int *mine = tt_xmalloc((size_t)nmax * sizeof(int));
    int *counts = tt_xmalloc((size_t)size * sizeof(int));
    int *displs = tt_xmalloc((size_t)size * sizeof(int));
    const int ns[] = {1, 13, 14, 1000, nmax / 3, nmax};
    for (int it = 0; it < 48; it++) {
        const int n = ns[it % 6], root = (it / 6) % size, op = it % 4;
        const uint64_t cid = 900000 + (uint64_t)it;
        int ok = 1, rc;
        /* A Bcast of a size the gathering call below does not use. */
        const int nb = ns[(it + 3) % 6];
        for (int i = 0; i < nb; i++)
            buf[i] = rank == root ? (int)tt_kind_mix(cid, (uint64_t)root, (uint64_t)i) : -1;
        rc = TC_Bcast(buf, nb, MPI_INT, root, comm);
        for (int i = 0; i < nb; i++)
            ok &= buf[i] == (int)tt_kind_mix(cid, (uint64_t)root, (uint64_t)i);
        CHECK(rc == MPI_SUCCESS && ok, "mixed %d: TC_Bcast of %d ints from %d", it, nb, root);
        for (int i = 0; i < n; i++)
            mine[i] = (int)tt_kind_mix(cid + 1, (uint64_t)rank, (uint64_t)i);
        for (int j = 0; j < size; j++) {
            counts[j] = (j + it) % 3 == 0 ? n / 2 : n;
            displs[j] = (size - 1 - j) * n; /* reversed */
        }
        for (long i = 0; i < (long)n * size; i++)
            buf[i] = -1;
        const char *what = "";
        ok = 1;
        switch (op) {
        case 0:
            what = "TC_Allgather";
            rc = TC_Allgather(mine, n, MPI_INT, buf, n, MPI_INT, comm);
            for (int j = 0; j < size; j++)
                for (int i = 0; i < n; i++)
                    ok &= buf[j * n + i] == (int)tt_kind_mix(cid + 1, (uint64_t)j, (uint64_t)i);
            break;
        case 1:
            what = "TC_Gatherv";
            rc = TC_Gatherv(mine, counts[rank], MPI_INT, buf, counts, displs, MPI_INT, root, comm);
            for (int j = 0; j < size && rank == root; j++)
                for (int i = 0; i < counts[j]; i++)
                    ok &= buf[displs[j] + i] == (int)tt_kind_mix(cid + 1, (uint64_t)j, (uint64_t)i);
            break;
        case 2:
            what = "TC_Scatterv";
            for (int j = 0; j < size && rank == root; j++)
                for (int i = 0; i < counts[j]; i++)
                    buf[displs[j] + i] = (int)tt_kind_mix(cid + 2, (uint64_t)j, (uint64_t)i);
            for (int i = 0; i < n; i++)
                mine[i] = -1;
            rc = TC_Scatterv(buf, counts, displs, MPI_INT, mine, counts[rank], MPI_INT, root, comm);
            for (int i = 0; i < counts[rank]; i++)
                ok &= mine[i] == (int)tt_kind_mix(cid + 2, (uint64_t)rank, (uint64_t)i);
            break;
        default:
            what = "TC_Allgatherv";
            rc = TC_Allgatherv(mine, counts[rank], MPI_INT, buf, counts, displs, MPI_INT, comm);
            for (int j = 0; j < size; j++)
                for (int i = 0; i < counts[j]; i++)
                    ok &= buf[displs[j] + i] == (int)tt_kind_mix(cid + 1, (uint64_t)j, (uint64_t)i);
            break;
        }
        CHECK(rc == MPI_SUCCESS && ok, "mixed %d: %s of %d ints, root %d, after a Bcast", it, what,
              n, root);
        tt_case_done();
    }
    free(buf);
    free(mine);
    free(counts);
    free(displs);
}

/* A Bcast of @p n bytes from @p root, checked (interleaved with the inline
 * cases: it writes the same lines in its own bank uses). */
static void bcast_check(MPI_Comm comm, size_t n, int root, uint64_t cid)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    char *b = tt_xmalloc(n + 1);
    for (size_t k = 0; k < n; k++)
        b[k] = rank == root ? (char)tt_kind_mix(cid, 0xbc, k) : (char)TT_SENTINEL;
    int rc = TC_Bcast(b, (int)n, MPI_BYTE, root, comm);
    int ok = rc == MPI_SUCCESS;
    for (size_t k = 0; k < n; k++)
        ok &= b[k] == (char)tt_kind_mix(cid, 0xbc, k);
    CHECK(ok, "inline: TC_Bcast of %zu bytes from %d (returned %d)", n, root, rc);
    free(b);
}

/* Blocks in the inline lines (shm/inline_lines.h: up to three lines' payload,
 * 56, 112, 168 bytes with 64-byte lines): every size around each line
 * boundary, each operation, every root, MPI_BYTE (the exact sizes) and then a
 * derived type of another family (in place the other way round, kinds by
 * rank for half of them), each call after a Bcast of another inline size or
 * a queued one (they share the bank uses and the lines). */
static void run_inline(MPI_Comm comm, const char *cname)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    static const size_t bsizes[] = {0,  1,   8,   55,  56,  57,  63,  64,
                                    65, 111, 112, 113, 167, 168, 169, 170};
    static const size_t bcast[] = {1, 60, 120, 168, 5000};
    const int nb = (int)(sizeof bsizes / sizeof bsizes[0]);
    int *units = tt_xmalloc(3 * (size_t)size * sizeof(int)), *order = units + size,
        *gaps = order + size;
    uint64_t cid = 500000;
    for (int si = 0; si < nb; si++)
        for (int op = -2; op < R_LAST; op++)
            for (int root = 0; root < (op < 0 ? 1 : size); root++)
                for (int pass = 0; pass < 2; pass++, cid++) {
                    /* pass 0: bytes; 1: ints or pairs, derived kinds. */
                    const int fam = pass == 0         ? TT_FAM_BYTES
                                    : (si + root) % 2 ? TT_FAM_PAIRS
                                                      : TT_FAM_INTS;
                    const int ub = fam == TT_FAM_BYTES ? 1 : fam == TT_FAM_INTS ? 8 : 12;
                    const int u = (int)((bsizes[si] + (size_t)ub - 1) / (size_t)ub);
                    const int in_place = (si + root + op + pass) % 2;
                    const int v = op == -1 || op == R_GATHERV || op == R_SCATTERV;
                    const uint64_t c = cid * 6151 + (uint64_t)fam;
                    const int uniform = pass == 0 || (si + root) % 4 < 2;
                    int rkind, skind;
                    case_kinds(fam, c, uniform, rank, &rkind, &skind);
                    /* v: sizes up to the case's (zeros included), one block
                     * of the full size: the largest decides, so a block
                     * past a boundary among smaller ones. */
                    case_blocks(size, u, v, c, (int)(c % (uint64_t)size), ORD_REVERSED, units,
                                order, gaps);
                    bcast_check(comm, bcast[cid % 5], (root + 1 + (int)(cid % 2)) % size, cid);
                    if (op < 0) {
                        ccase_t cc = {v, in_place, fam, skind, rkind, uniform, u, c};
                        run_case(comm, cname, &cc, units, order, gaps);
                    } else {
                        run_rooted(comm, cname, op, in_place, root, rkind, skind, uniform, units,
                                   order, gaps, c);
                    }
                }
    free(units);
}

/* Bad arguments: the right class through the communicator's handler, no
 * byte moved. Every rank makes the same mistake (a check failing on one
 * rank only would leave the others in the collective). */
static void run_errors(void)
{
    MPI_Comm comm = tt_err_comm_create();
    int size;
    MPI_Comm_size(comm, &size);
    int sb[4] = {1, 2, 3, 4};
    int *rb = tt_xmalloc((size_t)size * 4 * sizeof(int));
    int *counts = tt_xmalloc((size_t)size * sizeof(int));
    int *displs = tt_xmalloc((size_t)size * sizeof(int));
    for (int j = 0; j < size; j++) {
        counts[j] = 1;
        displs[j] = j;
    }
    for (int j = 0; j < 4 * size; j++)
        rb[j] = -7;
    int cls;
    TT_ERR_CASE("negative sendcount", MPI_ERR_COUNT,
                TC_Allgather(sb, -1, MPI_INT, rb, 1, MPI_INT, comm));
    TT_ERR_CASE("negative recvcount", MPI_ERR_COUNT,
                TC_Allgather(sb, 1, MPI_INT, rb, -1, MPI_INT, comm));
    TT_ERR_CASE("null sendtype", MPI_ERR_TYPE,
                TC_Allgather(sb, 1, MPI_DATATYPE_NULL, rb, 1, MPI_INT, comm));
    TT_ERR_CASE("null recvtype", MPI_ERR_TYPE,
                TC_Allgather(sb, 1, MPI_INT, rb, 1, MPI_DATATYPE_NULL, comm));
    TT_ERR_CASE("aliased buffers", MPI_ERR_BUFFER,
                TC_Allgather(rb, 1, MPI_INT, rb, 1, MPI_INT, comm));
    TT_ERR_CASE("send larger than the block", MPI_ERR_TRUNCATE,
                TC_Allgather(sb, 2, MPI_INT, rb, 1, MPI_INT, comm));
    TT_ERR_CASE("v: NULL recvcounts", MPI_ERR_ARG,
                TC_Allgatherv(sb, 1, MPI_INT, rb, NULL, displs, MPI_INT, comm));
    TT_ERR_CASE("v: NULL displs", MPI_ERR_ARG,
                TC_Allgatherv(sb, 1, MPI_INT, rb, counts, NULL, MPI_INT, comm));
    counts[size - 1] = -1;
    TT_ERR_CASE("v: negative recvcounts", MPI_ERR_COUNT,
                TC_Allgatherv(sb, 1, MPI_INT, rb, counts, displs, MPI_INT, comm));
    counts[size - 1] = 1;
    TT_ERR_CASE("v: send smaller than the block", MPI_ERR_TRUNCATE,
                TC_Allgatherv(sb, 0, MPI_INT, rb, counts, displs, MPI_INT, comm));
    TT_ERR_CASE("gather: root -1", MPI_ERR_ROOT,
                TC_Gather(sb, 1, MPI_INT, rb, 1, MPI_INT, -1, comm));
    TT_ERR_CASE("gatherv: root = size", MPI_ERR_ROOT,
                TC_Gatherv(sb, 1, MPI_INT, rb, counts, displs, MPI_INT, size, comm));
    TT_ERR_CASE("gather: negative sendcount", MPI_ERR_COUNT,
                TC_Gather(sb, -1, MPI_INT, rb, 1, MPI_INT, 0, comm));
    TT_ERR_CASE("scatter: root = size", MPI_ERR_ROOT,
                TC_Scatter(sb, 1, MPI_INT, rb, 1, MPI_INT, size, comm));
    TT_ERR_CASE("scatterv: root -1", MPI_ERR_ROOT,
                TC_Scatterv(sb, counts, displs, MPI_INT, rb, 1, MPI_INT, -1, comm));
    TT_ERR_CASE("scatter: negative recvcount", MPI_ERR_COUNT,
                TC_Scatter(sb, 1, MPI_INT, rb, -1, MPI_INT, 0, comm));
    TT_ERR_CASE("scatter: null recvtype", MPI_ERR_TYPE,
                TC_Scatter(sb, 1, MPI_INT, rb, 1, MPI_DATATYPE_NULL, 0, comm));
    int untouched = 1;
    for (int j = 0; j < 4 * size; j++)
        untouched &= rb[j] == -7;
    CHECK(untouched, "a call with bad arguments wrote into the receive buffer");
    /* MPI_COMM_NULL: MPI_COMM_WORLD's handler. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = TC_Allgather(sb, 1, MPI_INT, rb, 1, MPI_INT, MPI_COMM_NULL);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COMM, "MPI_COMM_NULL: error class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    /* The communicator is still usable after the errors. */
    rc = TC_Allgather(sb, 1, MPI_INT, rb, 1, MPI_INT, comm);
    int ok = rc == MPI_SUCCESS;
    for (int j = 0; j < size; j++)
        ok &= rb[j] == 1;
    CHECK(ok, "a good call after the errors failed");
    tt_err_comm_free(&comm);
    free(rb);
    free(counts);
    free(displs);
}

/* An intercommunicator goes to the MPI's own: each side receives the other
 * side's blocks. */
static void run_intercomm(void)
{
    if (tt_size < 2)
        return;
    MPI_Comm half, inter;
    int color = tt_rank % 2;
    MPI_Comm_split(MPI_COMM_WORLD, color, tt_rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - color, 77, &inter);
    int rsize;
    MPI_Comm_remote_size(inter, &rsize);
    int mine = 1000 + tt_rank, *rb = tt_xmalloc((size_t)rsize * sizeof(int));
    int rc = TC_Allgather(&mine, 1, MPI_INT, rb, 1, MPI_INT, inter);
    int ok = rc == MPI_SUCCESS;
    for (int j = 0; j < rsize; j++)
        ok &= rb[j] == 1000 + 2 * j + (1 - color); /* remote rank j = world 2j + other color */
    CHECK(ok, "TC_Allgather on an intercommunicator");
    int *counts = tt_xmalloc((size_t)rsize * sizeof(int));
    int *displs = tt_xmalloc((size_t)rsize * sizeof(int));
    for (int j = 0; j < rsize; j++) {
        counts[j] = 1;
        displs[j] = rsize - 1 - j;
    }
    rc = TC_Allgatherv(&mine, 1, MPI_INT, rb, counts, displs, MPI_INT, inter);
    ok = rc == MPI_SUCCESS;
    for (int j = 0; j < rsize; j++)
        ok &= rb[rsize - 1 - j] == 1000 + 2 * j + (1 - color);
    CHECK(ok, "TC_Allgatherv on an intercommunicator");
    free(counts);
    free(displs);
    free(rb);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
}

int main(int argc, char **argv)
{
    size_t f, S;
    tt_init(&argc, &argv, "test_allgather", 4096, 256, &f, &S);
    int quick = tt_arg_long(argc, argv, "--quick", 0) != 0;
    const int only = tt_arg_long(argc, argv, "--allgather-only", 0) != 0;
    const int rooted = tt_arg_long(argc, argv, "--rooted", 0) != 0;
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
    if (inl) {
        run_inline(MPI_COMM_WORLD, "world");
        run_inline(split, "split");
    }
    if (!rooted && !inl) {
        run_comm(MPI_COMM_WORLD, "world", f, bank, quick);
        run_comm(rev, "reversed", f, bank, 1);
        run_comm(split, "split", f, bank, 1);
        run_comm(dup, "dup", f, bank, 1);
    }
    if (!only && !inl) {
        run_comm_rooted(MPI_COMM_WORLD, "world", f, bank, quick);
        run_comm_rooted(rev, "reversed", f, bank, 1);
        run_comm_rooted(split, "split", f, bank, 1);
    }
    if (!rooted && !inl) {
        run_mixed(MPI_COMM_WORLD, bank);
        run_mixed(rev, bank);
    }
    if (!only && !rooted && !inl) {
        run_errors();
        run_intercomm();
    }
    MPI_Comm_free(&dup);
    MPI_Comm_free(&split);
    MPI_Comm_free(&rev);
    tt_kinds_free();
    if (tt_rank == 0)
        printf("test_allgather: %ld TC calls, %ld right\n", calls_tc, calls_ok);
    return tt_finish();
}
