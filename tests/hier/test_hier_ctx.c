/* MPI test of the hierarchy a context builds (src/hier/hier_build.c,
 * src/core/ctx.c): every rank's groups, owner maps, shared-memory level and
 * segment, checked against a hierarchy computed here, independently, from
 * the machine the test knows it runs on.
 *
 *   test_hier_ctx --machine real|2x2x2|uneven
 *
 * The machine: `real` is this host (every rank's node is the lowest
 * MPI_COMM_WORLD rank sharing its memory, found here with
 * MPI_Comm_split_type; the levels below the node come from hwloc and are
 * taken from the context, since they cannot be posed); `2x2x2` is
 * tests/data/locfile-2x2x2.txt (node r/4, package r/2, NUMA node r) and
 * `uneven` tests/data/locfile-uneven-3-1.txt, posed through
 * TC_LOCALITY_FILE. The settings the library follows are read here from the
 * same environment (TC_HIER, TC_HIER_LEVELS, TC_HIER_SHM_LEVEL, TC_SHM) with
 * the test's own parser.
 *
 * The reference builder below is the definition of paper 001 written naively
 * (pairwise unit comparison, O(p^2), no sorting): levels bottom-up, the
 * lowest rank leads, leaders go on, a final "top" group of what remains. Two
 * communicators are checked: MPI_COMM_WORLD and a reversed one (comm rank c
 * is world rank p-1-c, so the locality file's rows, which are by world rank,
 * land on other comm ranks). On each, a TC_Bcast from the last rank is
 * checked against the pattern (the path it takes must work).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/ctx.h"
#include "hier/hier.h"
#include "topocoll.h"

#include "tc_test_common.h"

#define BIT(l) (1u << (l))
#define MAXP   64

static int world_rank;

/* ---- settings, read from the environment with our own parser ----------- */

static const char *const names[TC_LEVEL_LAST] = {
    "core", "l2", "l3", "numa", "package", "node", "switch1", "switch2", "switch3", "switch4"};

static int level_of(const char *w, size_t n)
{
    for (int l = 0; l < TC_LEVEL_LAST; l++)
        if (strlen(names[l]) == n && strncasecmp(w, names[l], n) == 0)
            return l;
    if (n == 6 && strncasecmp(w, "socket", 6) == 0)
        return TC_LEVEL_PACKAGE;
    return -1;
}

static unsigned parse_levels(const char *s)
{
    unsigned m = 0;
    while (*s) {
        size_t n = strcspn(s, ",-");
        int l = level_of(s, n);
        if (l < 0) {
            fprintf(stderr, "test_hier_ctx: cannot read TC_HIER_LEVELS=%s\n", s);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        m |= BIT(l);
        s += n;
        if (*s)
            s++;
    }
    return m;
}

typedef struct {
    int hier;      /* TC_HIER */
    int shm;       /* TC_SHM */
    unsigned mask; /* TC_HIER_LEVELS */
    int shm_level; /* -2 auto, -1 none, else a level */
} settings_t;

static settings_t read_settings(void)
{
    settings_t s = {1, 1, 0, -2};
    const char *v;
    if ((v = getenv("TC_HIER")) && (!strcmp(v, "0") || !strcasecmp(v, "off")))
        s.hier = 0;
    if ((v = getenv("TC_SHM")) && (!strcmp(v, "0") || !strcasecmp(v, "off")))
        s.shm = 0;
    v = getenv("TC_HIER_LEVELS");
    s.mask = parse_levels(v ? v : "numa,package,node,switch1,switch2,switch3,switch4");
    if ((v = getenv("TC_HIER_SHM_LEVEL")) && strcasecmp(v, "auto") != 0) {
        s.shm_level = strcasecmp(v, "none") == 0 ? -1 : level_of(v, strlen(v));
        if (s.shm_level == -1 && strcasecmp(v, "none") != 0) {
            fprintf(stderr, "test_hier_ctx: cannot read TC_HIER_SHM_LEVEL=%s\n", v);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    return s;
}

/* ---- the posed machines ------------------------------------------------ */

static void loc_unknown(tc_hier_loc_t *loc)
{
    for (int l = 0; l < TC_LEVEL_LAST; l++)
        loc->id[l] = TC_LOC_UNKNOWN;
}

/* Locality of world rank @p w on the posed machine (as the data files say). */
static void posed(const char *machine, int w, tc_hier_loc_t *loc)
{
    loc_unknown(loc);
    if (!strcmp(machine, "2x2x2")) {
        loc->id[TC_LEVEL_NODE] = w / 4;
        loc->id[TC_LEVEL_PACKAGE] = w / 2;
        loc->id[TC_LEVEL_NUMA] = w;
    } else if (!strcmp(machine, "uneven")) {
        static const int node[4] = {0, 0, 0, 1}, package[4] = {0, 0, 1, 2};
        loc->id[TC_LEVEL_NODE] = node[w];
        loc->id[TC_LEVEL_PACKAGE] = package[w];
        loc->id[TC_LEVEL_NUMA] = package[w];
    }
}

/* ---- the reference builder --------------------------------------------- */

typedef struct {
    int level, size, members[MAXP], owner[MAXP], shm;
} ref_group_t;

typedef struct {
    int n;
    ref_group_t g[TC_LEVEL_LAST + 1];
} ref_rank_t;

typedef struct {
    unsigned mask, known, active;
    int shm_level;
    ref_rank_t rank[MAXP];
} ref_t;

static int same_unit(const ref_t *R, const tc_hier_loc_t *locs, unsigned mask, int l, int a, int b)
{
    for (int k = l; k < TC_LEVEL_LAST; k++) {
        int keyed = k == l || ((R->known & BIT(k)) && ((mask & BIT(k)) || k >= TC_LEVEL_NODE));
        if (keyed && locs[a].id[k] != locs[b].id[k])
            return 0;
    }
    return 1;
}

/* Every unit of level l within one real node. */
static int within_real(const ref_t *R, const tc_hier_loc_t *locs, const int64_t *real, int p,
                       unsigned mask, int l)
{
    for (int a = 0; a < p; a++)
        for (int b = a + 1; b < p; b++)
            if (same_unit(R, locs, mask, l, a, b) && real[a] != real[b])
                return 0;
    return 1;
}

static void reference(ref_t *R, const tc_hier_loc_t *locs, const int64_t *real, int p,
                      const settings_t *s)
{
    int part[MAXP], np = p, rep[MAXP];
    unsigned mask = s->hier ? s->mask : BIT(TC_LEVEL_NODE);

    memset(R, 0, sizeof *R);
    for (int l = 0; l < TC_LEVEL_LAST; l++) {
        int k = 0;
        while (k < p && locs[k].id[l] != TC_LOC_UNKNOWN)
            k++;
        if (k == p)
            R->known |= BIT(l);
    }
    R->shm_level = -1;
    if (s->shm && s->shm_level != -1) {
        if (s->shm_level == -2 || !s->hier) {
            for (int l = TC_LEVEL_NODE; l >= TC_LEVEL_L2 && R->shm_level < 0; l--)
                if ((mask & R->known & BIT(l)) && within_real(R, locs, real, p, mask, l))
                    R->shm_level = l;
        } else {
            mask |= BIT(s->shm_level);
            if ((R->known & BIT(s->shm_level)) && within_real(R, locs, real, p, mask, s->shm_level))
                R->shm_level = s->shm_level;
        }
    }
    if (R->shm_level >= 0)
        mask &= ~(BIT(R->shm_level) - 1u);
    R->mask = mask;

    int in[MAXP]; /* still in: has not been a non-leader yet */
    for (int i = 0; i < p; i++) {
        part[i] = rep[i] = i;
        in[i] = 1;
    }
    for (int l = 0; l <= TC_LEVEL_LAST && np > 1; l++) {
        int unit_of[MAXP], first[MAXP], nunits = 0, size[MAXP];
        if (l < TC_LEVEL_LAST && !(mask & R->known & BIT(l)))
            continue;
        for (int i = 0; i < np; i++) {
            int u = 0;
            while (u < nunits &&
                   !(l == TC_LEVEL_LAST || same_unit(R, locs, mask, l, part[i], first[u])))
                u++;
            if (u == nunits) {
                first[nunits] = part[i];
                size[nunits++] = 0;
            }
            unit_of[i] = u;
            size[u]++;
        }
        int active = 0;
        for (int u = 0; u < nunits; u++)
            active |= size[u] >= 2;
        if (!active)
            continue;
        R->active |= BIT(l);
        for (int u = 0; u < nunits; u++) {
            ref_group_t g;
            if (size[u] < 2)
                continue;
            g.level = l;
            g.size = 0;
            g.shm = l == R->shm_level;
            for (int i = 0; i < np; i++)
                if (unit_of[i] == u)
                    g.members[g.size++] = part[i]; /* part is ascending */
            for (int x = 0; x < p; x++) {
                g.owner[x] = -1;
                for (int m = 0; m < g.size; m++)
                    if (g.members[m] == rep[x])
                        g.owner[x] = m;
            }
            for (int m = 0; m < g.size; m++) {
                int r = g.members[m];
                if (in[r])
                    R->rank[r].g[R->rank[r].n++] = g;
            }
            for (int m = 1; m < g.size; m++)
                in[g.members[m]] = 0;
        }
        /* Leaders go on and stand for everyone their unit stood for. */
        for (int x = 0; x < p; x++)
            for (int i = 0; i < np; i++)
                if (part[i] == rep[x]) {
                    rep[x] = first[unit_of[i]];
                    break;
                }
        for (int u = 0; u < nunits; u++)
            part[u] = first[u];
        np = nunits;
        /* first[] follows the order of first appearance in ascending part[]:
         * ascending already. */
    }
    if (R->shm_level >= 0 && !(R->active & BIT(R->shm_level)))
        R->shm_level = -1;
    for (int r = 0; r < p; r++)
        for (int i = 0; i < R->rank[r].n; i++)
            R->rank[r].g[i].shm = R->rank[r].g[i].level == R->shm_level;
}

/* ---- checks ------------------------------------------------------------ */

static void check_bcast(MPI_Comm comm, int rank, int p, const char *what)
{
    enum { N = 5000 };
    static int buf[N];
    const int root = p - 1;
    for (int i = 0; i < N; i++)
        buf[i] = rank == root ? i * 7 + 13 : -1;
    if (TC_Bcast(buf, N, MPI_INT, root, comm) != MPI_SUCCESS)
        tt_fail("%s: TC_Bcast failed", what);
    for (int i = 0; i < N; i++)
        if (buf[i] != i * 7 + 13) {
            tt_fail("%s: TC_Bcast element %d is %d, expected %d", what, i, buf[i], i * 7 + 13);
            break;
        }
}

static void check_comm(MPI_Comm comm, const char *what, const char *machine, const settings_t *s,
                       const int64_t *real_world)
{
    int rank, p, w;
    tc_ctx_t *ctx;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &w);
    if (tc_ctx_get(comm, &ctx) != MPI_SUCCESS) {
        tt_fail("%s: no context", what);
        return;
    }
    if (p == 1) {
        if (ctx->hier || ctx->shm || ctx->shmcomm != MPI_COMM_NULL ||
            ctx->bcast_path != TC_PATH_TRIVIAL)
            tt_fail("%s: one process: expected no hierarchy, no segment, trivial path", what);
        check_bcast(comm, rank, p, what);
        return;
    }

    /* Every comm rank's world rank, and from it the expected locality. */
    int worlds[MAXP];
    MPI_Allgather(&w, 1, MPI_INT, worlds, 1, MPI_INT, comm);
    tc_hier_loc_t locs[MAXP];
    int64_t real[MAXP];
    const tc_hier_t *h = ctx->hier;
    if (!h) {
        tt_fail("%s: no hierarchy", what);
        return;
    }
    int posed_used = s->hier && strcmp(machine, "real") != 0;
    for (int c = 0; c < p; c++) {
        real[c] = real_world[worlds[c]];
        if (posed_used) {
            posed(machine, worlds[c], &locs[c]);
        } else {
            /* Below the node: hwloc's, as the context saw it (cannot be
             * posed); the node is ours. */
            locs[c] = h->locs[c];
            for (int l = TC_LEVEL_NODE; l < TC_LEVEL_LAST; l++)
                locs[c].id[l] = TC_LOC_UNKNOWN;
            locs[c].id[TC_LEVEL_NODE] = real[c];
        }
        for (int l = 0; l < TC_LEVEL_LAST; l++)
            if (h->locs[c].id[l] != locs[c].id[l])
                tt_fail("%s: locality of comm rank %d at %s is %lld, expected %lld", what, c,
                        names[l], (long long)h->locs[c].id[l], (long long)locs[c].id[l]);
    }

    static ref_t R;
    reference(&R, locs, real, p, s);
    const ref_rank_t *me = &R.rank[rank];
    if (h->p != p || h->rank != rank)
        tt_fail("%s: h->p %d h->rank %d", what, h->p, h->rank);
    if (h->shm_level != R.shm_level)
        tt_fail("%s: shm level %d, expected %d", what, h->shm_level, R.shm_level);
    if (h->active_mask != R.active)
        tt_fail("%s: active mask 0x%x, expected 0x%x", what, h->active_mask, R.active);
    if (h->enabled_mask != R.mask)
        tt_fail("%s: enabled mask 0x%x, expected 0x%x", what, h->enabled_mask, R.mask);
    if (h->nlevels != me->n)
        tt_fail("%s: %d groups, expected %d", what, h->nlevels, me->n);
    int shm_index = -1;
    for (int i = 0; i < h->nlevels && i < me->n; i++) {
        const tc_hier_level_t *l = &h->level[i];
        const ref_group_t *g = &me->g[i];
        if ((int)l->level != g->level || l->size != g->size ||
            memcmp(l->members, g->members, (size_t)g->size * sizeof(int)) != 0) {
            tt_fail("%s: group %d: level %d size %d leader %d, expected level %d size %d leader %d",
                    what, i, (int)l->level, l->size, l->members[0], g->level, g->size,
                    g->members[0]);
            continue;
        }
        if (l->members[l->my_index] != rank)
            tt_fail("%s: group %d: my_index %d", what, i, l->my_index);
        if (memcmp(l->owner, g->owner, (size_t)p * sizeof(int)) != 0)
            tt_fail("%s: group %d (level %d): owner map differs", what, i, g->level);
        if (l->shm != g->shm)
            tt_fail("%s: group %d: shm %d, expected %d", what, i, l->shm, g->shm);
        if (g->shm)
            shm_index = i;
    }

    /* The segment: over exactly this rank's shm group, ranks = member indices. */
    int single = shm_index >= 0 && me->g[shm_index].size == p;
    if (h->single_shm != single)
        tt_fail("%s: single_shm %d, expected %d", what, h->single_shm, single);
    if (shm_index < 0) {
        if (ctx->shm || ctx->shmcomm != MPI_COMM_NULL)
            tt_fail("%s: a segment without a shared-memory group", what);
    } else if (!ctx->shm || ctx->shmcomm == MPI_COMM_NULL) {
        tt_fail("%s: shared-memory group without a segment", what);
    } else {
        const ref_group_t *g = &me->g[shm_index];
        int sp, sr, tr[MAXP], idx[MAXP];
        MPI_Group gs, gp;
        MPI_Comm_size(ctx->shmcomm, &sp);
        MPI_Comm_rank(ctx->shmcomm, &sr);
        if (ctx->shm->p != g->size || sp != g->size ||
            ctx->shm->rank != h->level[shm_index].my_index || sr != ctx->shm->rank)
            tt_fail("%s: segment p %d rank %d, shmcomm %d/%d, expected %d/%d", what, ctx->shm->p,
                    ctx->shm->rank, sr, sp, h->level[shm_index].my_index, g->size);
        MPI_Comm_group(ctx->shmcomm, &gs);
        MPI_Comm_group(comm, &gp);
        for (int i = 0; i < sp && i < MAXP; i++)
            idx[i] = i;
        MPI_Group_translate_ranks(gs, sp < MAXP ? sp : MAXP, idx, gp, tr);
        for (int i = 0; i < sp && i < g->size; i++)
            if (tr[i] != g->members[i])
                tt_fail("%s: shmcomm rank %d is comm rank %d, expected member %d", what, i, tr[i],
                        g->members[i]);
        MPI_Group_free(&gs);
        MPI_Group_free(&gp);
    }
    if (single != (ctx->bcast_path == TC_PATH_SHM))
        tt_fail("%s: bcast path %d with single_shm %d", what, (int)ctx->bcast_path, single);
    /* The single-node fast path stays: a plain run on this host. */
    if (!strcmp(machine, "real") && s->shm && s->shm_level == -2 &&
        (s->mask & BIT(TC_LEVEL_NODE)) && ctx->bcast_path != TC_PATH_SHM)
        tt_fail("%s: plain single-node run: bcast path %d, expected shm", what,
                (int)ctx->bcast_path);
    check_bcast(comm, rank, p, what);
}

int main(int argc, char **argv)
{
    const char *machine = "real";
    int p;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    tt_check_np("test_hier_ctx");
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--machine") && i + 1 < argc)
            machine = argv[++i];
        else {
            fprintf(stderr, "usage: test_hier_ctx --machine real|2x2x2|uneven\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (p > MAXP || (!strcmp(machine, "2x2x2") && p > 8) ||
        (!strcmp(machine, "uneven") && p != 4)) {
        fprintf(stderr, "test_hier_ctx: machine %s cannot hold %d ranks\n", machine, p);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    settings_t s = read_settings();

    /* Real node of every world rank: the lowest world rank sharing memory. */
    MPI_Comm shared;
    int first;
    int64_t real_world[MAXP], mine;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
    MPI_Allreduce(&world_rank, &first, 1, MPI_INT, MPI_MIN, shared);
    MPI_Comm_free(&shared);
    mine = first;
    MPI_Allgather(&mine, 1, MPI_INT64_T, real_world, 1, MPI_INT64_T, MPI_COMM_WORLD);

    check_comm(MPI_COMM_WORLD, "world", machine, &s, real_world);
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, p - world_rank, &rev);
    check_comm(rev, "reversed", machine, &s, real_world);
    MPI_Comm_free(&rev);

    long total = tt_failures_all();
    if (world_rank == 0)
        printf("test_hier_ctx (%s, np %d): %s (%ld failure(s))\n", machine, p,
               total ? "FAILED" : "ok", total);
    MPI_Finalize();
    return total ? 1 : 0;
}
