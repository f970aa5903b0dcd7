/* Unit tests of the group builder and of the level-list parser (paper 001).
 * Expected groups are written out by hand (the paper's example) or derived from
 * the placement formula; random localities are checked against the builder's
 * defining properties (partition, lowest-rank leaders, spanning tree). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hier/groups.h"

#include "tc_unit.h"

#define BIT(l) (1u << (l))
#define SWITCHES                                                                                   \
    (BIT(TC_LEVEL_SWITCH1) | BIT(TC_LEVEL_SWITCH2) | BIT(TC_LEVEL_SWITCH3) | BIT(TC_LEVEL_SWITCH4))

static void loc_clear(tc_hier_loc_t *loc)
{
    int l;
    for (l = 0; l < TC_LEVEL_LAST; l++)
        loc->id[l] = TC_LOC_UNKNOWN;
}

/* Build every rank's view; aborts the test on an error code. */
static tc_hier_groups_t *build_all(const tc_hier_loc_t *locs, int p, unsigned mask)
{
    tc_hier_groups_t *g = calloc((size_t)p, sizeof *g);
    int r;

    if (!g) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    for (r = 0; r < p; r++) {
        int rc = tc_hier_groups_build(locs, p, r, mask, &g[r]);
        if (rc != 0) {
            fprintf(stderr, "build failed rc=%d rank %d\n", rc, r);
            exit(1);
        }
    }
    return g;
}

static void free_all(tc_hier_groups_t *g, int p)
{
    int r;
    for (r = 0; r < p; r++)
        tc_hier_groups_free(&g[r]);
    free(g);
}

/* Group i of @p g must be at @p level with exactly members lo..hi step @p step
 * (when list is NULL) or the @p n ranks of @p list. */
static int group_is(const tc_hier_groups_t *g, int i, int me, int level, const int *list, int n)
{
    const tc_hier_group_t *x;
    int k;

    if (i >= g->nlevels)
        return 0;
    x = &g->group[i];
    if ((int)x->level != level || x->size != n)
        return 0;
    for (k = 0; k < n; k++) {
        if (x->members[k] != list[k])
            return 0;
        if (list[k] == me && x->my_index != k)
            return 0;
    }
    return 1;
}

static int group_range(const tc_hier_groups_t *g, int i, int me, int level, int lo, int hi)
{
    int list[512], n = 0, r;
    for (r = lo; r <= hi; r++)
        list[n++] = r;
    return group_is(g, i, me, level, list, n);
}

#define GROUP2(g, i, me, level, a, b) group_is(g, i, me, level, (const int[]){a, b}, 2)

/* ---- property checks --------------------------------------------------- */

/* The key the builder must use (groups.h): id at l, ids of usable enabled
 * levels above, ids of known levels from the node up. */
static int same_unit(const tc_hier_loc_t *locs, int p, unsigned mask, int l, int a, int b)
{
    int k, i;
    for (k = l; k < TC_LEVEL_LAST; k++) {
        int known = 1;
        for (i = 0; i < p; i++)
            known &= locs[i].id[k] != TC_LOC_UNKNOWN;
        if (!known || (k != l && !(mask & BIT(k)) && k < TC_LEVEL_NODE))
            continue;
        if (locs[a].id[k] != locs[b].id[k])
            return 0;
    }
    return 1;
}

static const tc_hier_group_t *group_at(const tc_hier_groups_t *g, int level)
{
    int i;
    for (i = 0; i < g->nlevels; i++)
        if ((int)g->group[i].level == level)
            return &g->group[i];
    return NULL;
}

/* Owner maps (tc_hier_groups_build_owners), checked against definitions
 * computed here from the plain builder's parent links:
 *  - the same groups as tc_hier_groups_build;
 *  - owner[x] == -1 exactly when x lies outside the group's unit;
 *  - otherwise members[owner[x]] is the first of x, parent(x),
 *    parent(parent(x)), ... that is a member (x's representative);
 *  - from rank 0 down, following at each leader the highest group whose
 *    owner map holds x ends at x. */
static void check_owners(const tc_hier_loc_t *locs, int p, unsigned mask, const tc_hier_groups_t *g,
                         const int *parent)
{
    tc_hier_groups_t *o = calloc((size_t)p, sizeof *o);
    int r, i, x, k, f0 = tu_failures;

    if (!o) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    for (r = 0; r < p; r++) {
        CHECK(tc_hier_groups_build_owners(locs, p, r, mask, &o[r]) == 0);
        CHECK(o[r].nlevels == g[r].nlevels && o[r].active_mask == g[r].active_mask);
        for (i = 0; i < o[r].nlevels && i < g[r].nlevels; i++) {
            const tc_hier_group_t *y = &o[r].group[i], *z = &g[r].group[i];
            CHECK(z->owner == NULL && y->owner != NULL);
            CHECK(y->level == z->level && y->size == z->size && y->my_index == z->my_index &&
                  memcmp(y->members, z->members, (size_t)y->size * sizeof(int)) == 0);
            if (!y->owner)
                continue;
            for (x = 0; x < p; x++) {
                int in = (int)y->level == TC_HIER_LEVEL_TOP ||
                         same_unit(locs, p, mask, (int)y->level, x, y->members[0]);
                int rep = x, steps = 0, member = -1;
                CHECK((y->owner[x] == -1) == !in);
                if (!in || y->owner[x] < 0 || y->owner[x] >= y->size)
                    continue;
                for (;;) {
                    for (k = 0; k < y->size && y->members[k] != rep; k++)
                        ;
                    if (k < y->size) {
                        member = k;
                        break;
                    }
                    if (parent[rep] < 0 || ++steps > TC_HIER_MAX_GROUPS)
                        break;
                    rep = parent[rep];
                }
                CHECK(member >= 0 && y->owner[x] == member);
            }
        }
    }
    /* Routing from rank 0 down reaches every rank. */
    for (x = 0; x < p; x++) {
        int cur = 0, lev = TC_HIER_LEVEL_TOP + 1, hops = 0;
        for (;;) {
            const tc_hier_group_t *next = NULL;
            for (i = o[cur].nlevels - 1; i >= 0; i--) {
                const tc_hier_group_t *y = &o[cur].group[i];
                if ((int)y->level < lev && y->my_index == 0 && y->owner && y->owner[x] >= 0) {
                    next = y;
                    break;
                }
            }
            if (!next || ++hops > TC_HIER_MAX_GROUPS + 1)
                break;
            cur = next->members[next->owner[x]];
            lev = (int)next->level;
        }
        CHECK(cur == x);
    }
    if (tu_failures != f0)
        fprintf(stderr, "  (owner check p=%d mask=0x%x)\n", p, mask);
    free_all(o, p);
}

static void check_properties(const tc_hier_loc_t *locs, int p, unsigned mask)
{
    tc_hier_groups_t *g = build_all(locs, p, mask);
    int *parent = malloc((size_t)p * sizeof *parent);
    int *plevel = malloc((size_t)p * sizeof *plevel);
    int *in = malloc((size_t)p * sizeof *in); /* still a participant */
    int r, i, l, k, f0 = tu_failures;

    for (r = 0; r < p; r++) {
        CHECK(g[r].active_mask == g[0].active_mask);
        CHECK(g[r].unknown_mask == g[0].unknown_mask);
        parent[r] = -1;
        plevel[r] = -1;
        in[r] = 1;
        for (i = 0; i < g[r].nlevels; i++) {
            const tc_hier_group_t *x = &g[r].group[i];
            CHECK(x->size >= 2);
            CHECK(x->my_index >= 0 && x->my_index < x->size && x->members[x->my_index] == r);
            CHECK(g[r].active_mask & BIT(x->level));
            if (i > 0)
                CHECK(x->level > g[r].group[i - 1].level);
            for (k = 1; k < x->size; k++)
                CHECK(x->members[k] > x->members[k - 1]); /* ascending: leader is min */
            if (x->my_index != 0) {
                CHECK(i == g[r].nlevels - 1); /* non-leader stops */
                CHECK(parent[r] == -1);
                parent[r] = x->members[0];
                plevel[r] = (int)x->level;
            }
            /* Every member sees the same group at this level. */
            for (k = 0; k < x->size; k++) {
                const tc_hier_group_t *y = group_at(&g[x->members[k]], (int)x->level);
                CHECK(y && y->size == x->size &&
                      memcmp(y->members, x->members, (size_t)x->size * sizeof(int)) == 0);
                if ((int)x->level < TC_HIER_LEVEL_TOP)
                    CHECK(same_unit(locs, p, mask, (int)x->level, r, x->members[k]));
            }
        }
    }
    /* Per level: groups partition the participants maximally. */
    for (l = 0; l <= TC_HIER_LEVEL_TOP; l++) {
        int a, b;
        int usable = l == TC_HIER_LEVEL_TOP || (mask & BIT(l) && !(g[0].unknown_mask & BIT(l)));
        int any = 0;
        for (a = 0; a < p; a++) {
            const tc_hier_group_t *ga = in[a] ? group_at(&g[a], l) : NULL;
            if (!in[a]) {
                CHECK(group_at(&g[a], l) == NULL);
                continue;
            }
            any |= ga != NULL;
            if (!usable) {
                CHECK(ga == NULL);
                continue;
            }
            for (b = a + 1; b < p; b++) {
                int together;
                if (!in[b])
                    continue;
                together =
                    ga && group_at(&g[b], l) && group_at(&g[b], l)->members[0] == ga->members[0];
                if (l == TC_HIER_LEVEL_TOP)
                    CHECK(together); /* top joins every remaining participant */
                else
                    CHECK(together == same_unit(locs, p, mask, l, a, b));
            }
        }
        CHECK(any == !!(g[0].active_mask & BIT(l)));
        for (a = 0; a < p; a++) {
            const tc_hier_group_t *ga = group_at(&g[a], l);
            if (in[a] && ga && ga->my_index != 0)
                in[a] = 0;
        }
    }
    /* Spanning tree rooted at rank 0: walking parents climbs levels and ends at 0. */
    CHECK(parent[0] == -1);
    for (r = 1; r < p; r++) {
        int cur = r, steps = 0, lev = -1;
        CHECK(parent[r] >= 0);
        while (cur != 0 && parent[cur] >= 0 && steps <= p) {
            CHECK(plevel[cur] > lev);
            lev = plevel[cur];
            cur = parent[cur];
            steps++;
        }
        CHECK(cur == 0);
    }
    check_owners(locs, p, mask, g, parent);
    if (tu_failures != f0)
        fprintf(stderr, "  (property check p=%d mask=0x%x)\n", p, mask);
    free(in);
    free(plevel);
    free(parent);
    free_all(g, p);
}

/* ---- the paper's example (Fig. 1) -------------------------------------- */

static void paper_locs(tc_hier_loc_t *locs)
{
    int r;
    for (r = 0; r < 108; r++) {
        int node = r < 36 ? 1 : r < 72 ? 2 : 48, local = r % 36;
        loc_clear(&locs[r]);
        locs[r].id[TC_LEVEL_CORE] = local;
        locs[r].id[TC_LEVEL_L2] = local;
        locs[r].id[TC_LEVEL_L3] = local / 18;
        locs[r].id[TC_LEVEL_NUMA] = local / 18; /* NUMA ids repeat on every node */
        locs[r].id[TC_LEVEL_PACKAGE] = local / 18;
        locs[r].id[TC_LEVEL_NODE] = node;
        locs[r].id[TC_LEVEL_SWITCH1] = (node - 1) / 16;
        locs[r].id[TC_LEVEL_SWITCH2] = 0;
    }
}

static void test_paper(const char *levels)
{
    tc_hier_loc_t locs[108];
    tc_hier_groups_t *g;
    unsigned mask = 0;
    char err[512];
    int r;

    CHECK(tc_hier_levels_parse(levels, &mask, err, sizeof err) == 0);
    paper_locs(locs);
    g = build_all(locs, 108, mask);

    /* Exactly as printed in the paper. */
    CHECK(g[0].nlevels == 4);
    CHECK(group_range(&g[0], 0, 0, TC_LEVEL_NUMA, 0, 17));
    CHECK(GROUP2(&g[0], 1, 0, TC_LEVEL_NODE, 0, 18));
    CHECK(GROUP2(&g[0], 2, 0, TC_LEVEL_SWITCH1, 0, 36));
    CHECK(GROUP2(&g[0], 3, 0, TC_LEVEL_SWITCH2, 0, 72));
    CHECK(g[1].nlevels == 1);
    CHECK(group_range(&g[1], 0, 1, TC_LEVEL_NUMA, 0, 17));
    CHECK(g[36].nlevels == 3);
    CHECK(group_range(&g[36], 0, 36, TC_LEVEL_NUMA, 36, 53));
    CHECK(GROUP2(&g[36], 1, 36, TC_LEVEL_NODE, 36, 54));
    CHECK(GROUP2(&g[36], 2, 36, TC_LEVEL_SWITCH1, 0, 36));

    /* Every other rank, from the placement. */
    for (r = 0; r < 108; r++) {
        int local = r % 36, base = r - local, numa0 = base + (local / 18) * 18;
        int n = 1;
        CHECK(group_range(&g[r], 0, r, TC_LEVEL_NUMA, numa0, numa0 + 17));
        if (local % 18 == 0)
            CHECK(GROUP2(&g[r], n++, r, TC_LEVEL_NODE, base, base + 18));
        if (local == 0 && base < 72)
            CHECK(GROUP2(&g[r], n++, r, TC_LEVEL_SWITCH1, 0, 36));
        if (local == 0 && (base == 0 || base == 72))
            CHECK(GROUP2(&g[r], n++, r, TC_LEVEL_SWITCH2, 0, 72));
        CHECK(g[r].nlevels == n);
    }
    /* Owner maps of process 0's four groups, as the paper's tree implies:
     * G1 (0..17) holds ranks 0..17 themselves; G2 (0,18) represents the
     * node, 18 standing for 18..35; G3 (0,36) the leaf switch, 36 for node
     * 2; G4 (0,72) the spine, 72 for node 48. */
    {
        tc_hier_groups_t o;
        CHECK(tc_hier_groups_build_owners(locs, 108, 0, mask, &o) == 0 && o.nlevels == 4);
        if (o.nlevels == 4) {
            const int *g1 = o.group[0].owner, *g2 = o.group[1].owner;
            const int *g3 = o.group[2].owner, *g4 = o.group[3].owner;
            for (r = 0; r < 108; r++) {
                CHECK(g1[r] == (r < 18 ? r : -1));
                CHECK(g2[r] == (r < 18 ? 0 : r < 36 ? 1 : -1));
                CHECK(g3[r] == (r < 36 ? 0 : r < 72 ? 1 : -1));
                CHECK(g4[r] == (r < 72 ? 0 : 1));
            }
        }
        tc_hier_groups_free(&o);
        /* Process 36: its NUMA group, node group (36,54), and G3 (0,36) as a
         * non-leader, where it stands for all of node 2. */
        CHECK(tc_hier_groups_build_owners(locs, 108, 36, mask, &o) == 0 && o.nlevels == 3);
        if (o.nlevels == 3) {
            for (r = 0; r < 108; r++) {
                CHECK(o.group[0].owner[r] == (r >= 36 && r < 54 ? r - 36 : -1));
                CHECK(o.group[1].owner[r] == (r >= 36 && r < 54 ? 0 : r >= 54 && r < 72 ? 1 : -1));
                CHECK(o.group[2].owner[r] == (r < 36 ? 0 : r < 72 ? 1 : -1));
            }
        }
        tc_hier_groups_free(&o);
    }
    /* Package = NUMA here: inactive. switch3/4 unknown: skipped when asked. */
    CHECK(g[0].active_mask == (BIT(TC_LEVEL_NUMA) | BIT(TC_LEVEL_NODE) | BIT(TC_LEVEL_SWITCH1) |
                               BIT(TC_LEVEL_SWITCH2)));
    CHECK(g[0].unknown_mask == (mask & (BIT(TC_LEVEL_SWITCH3) | BIT(TC_LEVEL_SWITCH4))));
    free_all(g, 108);
    check_properties(locs, 108, mask);
}

static void test_paper_masks(void)
{
    tc_hier_loc_t locs[108];
    tc_hier_groups_t *g;

    paper_locs(locs);
    /* Node only: node groups, then the three node leaders at the top. */
    g = build_all(locs, 108, BIT(TC_LEVEL_NODE));
    CHECK(g[0].nlevels == 2);
    CHECK(group_range(&g[0], 0, 0, TC_LEVEL_NODE, 0, 35));
    CHECK(group_is(&g[0], 1, 0, TC_HIER_LEVEL_TOP, (const int[]){0, 36, 72}, 3));
    CHECK(group_is(&g[72], 1, 72, TC_HIER_LEVEL_TOP, (const int[]){0, 36, 72}, 3));
    CHECK(g[5].nlevels == 1 && group_range(&g[5], 0, 5, TC_LEVEL_NODE, 0, 35));
    CHECK(g[0].active_mask == (BIT(TC_LEVEL_NODE) | BIT(TC_HIER_LEVEL_TOP)));
    free_all(g, 108);

    /* NUMA only: NUMA 0 of node 1 and of node 2 stay apart (node id is in the key). */
    g = build_all(locs, 108, BIT(TC_LEVEL_NUMA));
    CHECK(group_range(&g[36], 0, 36, TC_LEVEL_NUMA, 36, 53));
    CHECK(group_is(&g[36], 1, 36, TC_HIER_LEVEL_TOP, (const int[]){0, 18, 36, 54, 72, 90}, 6));
    CHECK(g[36].nlevels == 2);
    free_all(g, 108);

    /* NM-SW (node off): NUMA leaders meet at the leaf switch, then the spine. */
    g = build_all(locs, 108, BIT(TC_LEVEL_NUMA) | SWITCHES);
    CHECK(group_is(&g[0], 1, 0, TC_LEVEL_SWITCH1, (const int[]){0, 18, 36, 54}, 4));
    CHECK(GROUP2(&g[0], 2, 0, TC_LEVEL_SWITCH2, 0, 72));
    CHECK(GROUP2(&g[90], 1, 90, TC_LEVEL_SWITCH1, 72, 90));
    CHECK(g[90].nlevels == 2);
    free_all(g, 108);

    /* Nothing enabled: one flat group of everyone. */
    g = build_all(locs, 108, 0);
    CHECK(g[7].nlevels == 1 && group_range(&g[7], 0, 7, TC_HIER_LEVEL_TOP, 0, 107));
    CHECK(g[0].active_mask == BIT(TC_HIER_LEVEL_TOP));
    free_all(g, 108);

    check_properties(locs, 108, BIT(TC_LEVEL_NODE));
    check_properties(locs, 108, BIT(TC_LEVEL_NUMA));
    check_properties(locs, 108, BIT(TC_LEVEL_NUMA) | SWITCHES);
    check_properties(locs, 108, 0);
    check_properties(locs, 108, TC_HIER_LEVELS_ALL);
}

/* ---- small placements -------------------------------------------------- */

static void node_locs(tc_hier_loc_t *locs, const int *node, int p)
{
    int r;
    for (r = 0; r < p; r++) {
        loc_clear(&locs[r]);
        locs[r].id[TC_LEVEL_NODE] = node[r];
        locs[r].id[TC_LEVEL_CORE] = r; /* distinct cores: core level inactive */
    }
}

static void test_small(void)
{
    tc_hier_loc_t locs[16];
    tc_hier_groups_t *g, one;
    int node[16], r;

    /* Uneven: three ranks on node 5, one on node 2. */
    node_locs(locs, (const int[]){5, 5, 5, 2}, 4);
    g = build_all(locs, 4, TC_HIER_LEVELS_ALL);
    CHECK(g[0].nlevels == 2 && group_range(&g[0], 0, 0, TC_LEVEL_NODE, 0, 2) &&
          GROUP2(&g[0], 1, 0, TC_HIER_LEVEL_TOP, 0, 3));
    CHECK(g[1].nlevels == 1 && group_range(&g[1], 0, 1, TC_LEVEL_NODE, 0, 2));
    CHECK(g[3].nlevels == 1 && GROUP2(&g[3], 0, 3, TC_HIER_LEVEL_TOP, 0, 3));
    CHECK(g[3].group[0].my_index == 1);
    /* Everything but core and node is unknown: those enabled levels are skipped. */
    CHECK(g[0].unknown_mask == (TC_HIER_LEVELS_ALL & ~(BIT(TC_LEVEL_NODE) | BIT(TC_LEVEL_CORE))));
    free_all(g, 4);
    check_properties(locs, 4, TC_HIER_LEVELS_ALL);

    /* One rank per node: node level inactive, one top group. */
    node_locs(locs, (const int[]){0, 1, 2, 3}, 4);
    g = build_all(locs, 4, TC_HIER_LEVELS_ALL);
    for (r = 0; r < 4; r++)
        CHECK(g[r].nlevels == 1 && group_range(&g[r], 0, r, TC_HIER_LEVEL_TOP, 0, 3));
    CHECK(g[0].active_mask == BIT(TC_HIER_LEVEL_TOP));
    free_all(g, 4);

    /* Reversed placement: rank r on node (p-1-r)/k. */
    for (r = 0; r < 8; r++)
        node[r] = (8 - 1 - r) / 4;
    node_locs(locs, node, 8);
    g = build_all(locs, 8, TC_HIER_LEVELS_ALL);
    CHECK(group_range(&g[0], 0, 0, TC_LEVEL_NODE, 0, 3) &&
          GROUP2(&g[0], 1, 0, TC_HIER_LEVEL_TOP, 0, 4));
    CHECK(group_range(&g[6], 0, 6, TC_LEVEL_NODE, 4, 7) && g[6].nlevels == 1);
    CHECK(g[4].nlevels == 2 && GROUP2(&g[4], 1, 4, TC_HIER_LEVEL_TOP, 0, 4));
    free_all(g, 8);
    check_properties(locs, 8, TC_HIER_LEVELS_ALL);

    /* Scattered (round-robin) placement over three nodes. */
    for (r = 0; r < 8; r++)
        node[r] = r % 3;
    node_locs(locs, node, 8);
    g = build_all(locs, 8, TC_HIER_LEVELS_ALL);
    CHECK(group_is(&g[0], 0, 0, TC_LEVEL_NODE, (const int[]){0, 3, 6}, 3));
    CHECK(group_is(&g[7], 0, 7, TC_LEVEL_NODE, (const int[]){1, 4, 7}, 3) && g[7].nlevels == 1);
    CHECK(group_is(&g[5], 0, 5, TC_LEVEL_NODE, (const int[]){2, 5}, 2));
    CHECK(group_is(&g[2], 1, 2, TC_HIER_LEVEL_TOP, (const int[]){0, 1, 2}, 3));
    free_all(g, 8);
    check_properties(locs, 8, TC_HIER_LEVELS_ALL);

    /* A NUMA level unknown on one rank is skipped for all. */
    node_locs(locs, (const int[]){0, 0, 1, 1}, 4);
    locs[0].id[TC_LEVEL_NUMA] = 0;
    locs[1].id[TC_LEVEL_NUMA] = 0;
    locs[2].id[TC_LEVEL_NUMA] = 0;
    g = build_all(locs, 4, BIT(TC_LEVEL_NUMA) | BIT(TC_LEVEL_NODE));
    CHECK(g[0].unknown_mask == BIT(TC_LEVEL_NUMA));
    CHECK(g[0].active_mask == (BIT(TC_LEVEL_NODE) | BIT(TC_HIER_LEVEL_TOP)));
    CHECK(g[3].nlevels == 1 && GROUP2(&g[3], 0, 3, TC_LEVEL_NODE, 2, 3));
    free_all(g, 4);
    locs[3].id[TC_LEVEL_NUMA] = 1; /* now known: ranks 2 and 3 split */
    g = build_all(locs, 4, BIT(TC_LEVEL_NUMA) | BIT(TC_LEVEL_NODE));
    CHECK(g[0].unknown_mask == 0);
    CHECK(g[0].active_mask == (BIT(TC_LEVEL_NUMA) | BIT(TC_LEVEL_NODE) | BIT(TC_HIER_LEVEL_TOP)));
    CHECK(GROUP2(&g[3], 0, 3, TC_LEVEL_NODE, 2, 3));
    CHECK(GROUP2(&g[0], 0, 0, TC_LEVEL_NUMA, 0, 1) && GROUP2(&g[0], 1, 0, TC_HIER_LEVEL_TOP, 0, 2));
    free_all(g, 4);

    /* p = 1: no group at all. */
    node_locs(locs, (const int[]){0}, 1);
    CHECK(tc_hier_groups_build(locs, 1, 0, TC_HIER_LEVELS_ALL, &one) == 0);
    CHECK(one.nlevels == 0 && one.active_mask == 0);
    tc_hier_groups_free(&one);

    /* Bad arguments. */
    CHECK(tc_hier_groups_build(locs, 0, 0, 0, &one) == tc_err(TC_ERR_ARG) && one.nlevels == 0);
    CHECK(tc_hier_groups_build(locs, 1, 1, 0, &one) == tc_err(TC_ERR_ARG));
    CHECK(tc_hier_groups_build(NULL, 1, 0, 0, &one) == tc_err(TC_ERR_ARG));
    CHECK(tc_hier_groups_build(locs, 1, 0, 0, NULL) == tc_err(TC_ERR_ARG));
    tc_hier_groups_free(NULL);
}

/* ---- random localities ------------------------------------------------- */

static unsigned long long rng_state = 0x9e3779b97f4a7c15ull;

static unsigned rnd(unsigned n)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)(rng_state >> 33) % n;
}

static void test_random(void)
{
    tc_hier_loc_t locs[64];
    int iter;

    for (iter = 0; iter < 300; iter++) {
        int p = 1 + (int)rnd(48), r, l;
        int nodes = 1 + (int)rnd(6);
        unsigned mask = rnd(8) == 0 ? TC_HIER_LEVELS_ALL : rnd(1u << TC_LEVEL_LAST);
        for (r = 0; r < p; r++) {
            int node = (int)rnd((unsigned)nodes), core = (int)rnd(8);
            loc_clear(&locs[r]);
            locs[r].id[TC_LEVEL_CORE] = core;
            locs[r].id[TC_LEVEL_L2] = core / 2;
            locs[r].id[TC_LEVEL_L3] = core / 4;
            locs[r].id[TC_LEVEL_NUMA] = core / 4;
            locs[r].id[TC_LEVEL_PACKAGE] = iter % 2 ? core / 4 : 0;
            locs[r].id[TC_LEVEL_NODE] = node * 7 + 3; /* any non-negative id */
            locs[r].id[TC_LEVEL_SWITCH1] = node / 2;
            locs[r].id[TC_LEVEL_SWITCH2] = node / 4;
            if (iter % 3 == 0)
                locs[r].id[TC_LEVEL_SWITCH3] = 0;
        }
        /* Sometimes one rank lacks a level. */
        if (iter % 5 == 0) {
            l = (int)rnd(TC_LEVEL_LAST);
            locs[rnd((unsigned)p)].id[l] = TC_LOC_UNKNOWN;
        }
        check_properties(locs, p, mask);
    }
}

/* ---- parser and names -------------------------------------------------- */

static void test_parse(void)
{
    const unsigned nm = BIT(TC_LEVEL_NUMA), sk = BIT(TC_LEVEL_PACKAGE), nd = BIT(TC_LEVEL_NODE);
    char err[512];
    unsigned m;

    CHECK(tc_hier_levels_parse("NM-SK-ND-SW", &m, err, sizeof err) == 0 &&
          m == (nm | sk | nd | SWITCHES));
    CHECK(tc_hier_levels_parse("NM-ND-SW", &m, err, sizeof err) == 0 && m == (nm | nd | SWITCHES));
    CHECK(tc_hier_levels_parse("nm-nd", &m, err, sizeof err) == 0 && m == (nm | nd));
    CHECK(tc_hier_levels_parse("numa,node", &m, err, sizeof err) == 0 && m == (nm | nd));
    CHECK(tc_hier_levels_parse(" Socket , NODE ", &m, err, sizeof err) == 0 && m == (sk | nd));
    CHECK(tc_hier_levels_parse("package", &m, err, sizeof err) == 0 && m == sk);
    CHECK(tc_hier_levels_parse("switch", &m, err, sizeof err) == 0 && m == BIT(TC_LEVEL_SWITCH1));
    CHECK(tc_hier_levels_parse("sw3,switch4", &m, err, sizeof err) == 0 &&
          m == (BIT(TC_LEVEL_SWITCH3) | BIT(TC_LEVEL_SWITCH4)));
    CHECK(tc_hier_levels_parse("CR-L2-L3", &m, err, sizeof err) == 0 &&
          m == (BIT(TC_LEVEL_CORE) | BIT(TC_LEVEL_L2) | BIT(TC_LEVEL_L3)));
    CHECK(tc_hier_levels_parse("core,l2,l3", &m, err, sizeof err) == 0 &&
          m == (BIT(TC_LEVEL_CORE) | BIT(TC_LEVEL_L2) | BIT(TC_LEVEL_L3)));
    CHECK(tc_hier_levels_parse("ALL", &m, err, sizeof err) == 0 && m == TC_HIER_LEVELS_ALL);
    CHECK(tc_hier_levels_parse("none", &m, err, sizeof err) == 0 && m == 0);
    CHECK(tc_hier_levels_parse("numa", &m, NULL, 0) == 0 && m == nm);

    m = 12345;
    CHECK(tc_hier_levels_parse("numa,bogus", &m, err, sizeof err) == tc_err(TC_ERR_PARSE) &&
          m == 12345);
    CHECK(strstr(err, "\"bogus\"") && strstr(err, "numa") && strstr(err, "NM-SK-ND-SW"));
    CHECK(tc_hier_levels_parse("NM-XX-ND", &m, err, sizeof err) == tc_err(TC_ERR_PARSE));
    CHECK(strstr(err, "\"XX\"") != NULL);
    CHECK(tc_hier_levels_parse("", &m, err, sizeof err) == tc_err(TC_ERR_PARSE) &&
          strstr(err, "empty"));
    CHECK(tc_hier_levels_parse("numa,", &m, err, sizeof err) == tc_err(TC_ERR_PARSE));
    CHECK(tc_hier_levels_parse("numa,,node", &m, err, sizeof err) == tc_err(TC_ERR_PARSE));
    CHECK(tc_hier_levels_parse("-NM", &m, err, sizeof err) == tc_err(TC_ERR_PARSE));
    CHECK(tc_hier_levels_parse("numa node", &m, err, sizeof err) == tc_err(TC_ERR_PARSE) &&
          strstr(err, "\"numa node\""));
    CHECK(tc_hier_levels_parse("switch5", &m, err, 8) == tc_err(TC_ERR_PARSE) && strlen(err) == 7);
    CHECK(tc_hier_levels_parse(NULL, &m, err, sizeof err) == tc_err(TC_ERR_PARSE));
    CHECK(m == 12345);

    CHECK(strcmp(tc_hier_level_name(TC_LEVEL_CORE), "core") == 0);
    CHECK(strcmp(tc_hier_level_name(TC_LEVEL_L2), "l2") == 0);
    CHECK(strcmp(tc_hier_level_name(TC_LEVEL_L3), "l3") == 0);
    CHECK(strcmp(tc_hier_level_name(TC_LEVEL_NUMA), "numa") == 0);
    CHECK(strcmp(tc_hier_level_name(TC_LEVEL_PACKAGE), "package") == 0);
    CHECK(strcmp(tc_hier_level_name(TC_LEVEL_NODE), "node") == 0);
    CHECK(strcmp(tc_hier_level_name(TC_LEVEL_SWITCH1), "switch1") == 0);
    CHECK(strcmp(tc_hier_level_name(TC_LEVEL_SWITCH4), "switch4") == 0);
    CHECK(strcmp(tc_hier_level_name(TC_HIER_LEVEL_TOP), "top") == 0);
    /* Every name parses back to its own level. */
    {
        int l;
        for (l = 0; l < TC_LEVEL_LAST; l++)
            CHECK(tc_hier_levels_parse(tc_hier_level_name((tc_level_t)l), &m, err, sizeof err) ==
                      0 &&
                  m == BIT(l));
    }
}

int main(void)
{
    test_parse();
    test_paper("NM-SK-ND-SW");
    test_paper("NM-ND-SW");
    test_paper("numa,package,node,switch1,switch2");
    test_paper_masks();
    test_small();
    test_random();
    if (tu_failures) {
        fprintf(stderr, "test_hier_groups: %d check(s) failed\n", tu_failures);
        return 1;
    }
    printf("test_hier_groups: all checks passed\n");
    return 0;
}
