/* Group hierarchy builder and level-list parser (paper 001, "Groups").
 * See groups.h for the rules; this file only implements them. */
#include "groups.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/names.h"

_Static_assert(TC_LEVEL_LAST == TC_BASE_LEVEL_COUNT, "base/names.h names every tc_level_t");

const char *tc_hier_level_name(tc_level_t level)
{
    if ((int)level >= 0 && level < TC_LEVEL_LAST)
        return tc_base_level_name((int)level);
    if (level == TC_HIER_LEVEL_TOP)
        return "top";
    return "?";
}

/* ---- level list parsing ------------------------------------------------ */

#define SWITCH_BITS                                                                                \
    ((1u << TC_LEVEL_SWITCH1) | (1u << TC_LEVEL_SWITCH2) | (1u << TC_LEVEL_SWITCH3) |              \
     (1u << TC_LEVEL_SWITCH4))

static const struct {
    const char *word;
    unsigned bits;
} level_words[] = {
    {"core", 1u << TC_LEVEL_CORE},
    {"cr", 1u << TC_LEVEL_CORE},
    {"l2", 1u << TC_LEVEL_L2},
    {"l3", 1u << TC_LEVEL_L3},
    {"numa", 1u << TC_LEVEL_NUMA},
    {"nm", 1u << TC_LEVEL_NUMA},
    {"package", 1u << TC_LEVEL_PACKAGE},
    {"socket", 1u << TC_LEVEL_PACKAGE},
    {"sk", 1u << TC_LEVEL_PACKAGE},
    {"node", 1u << TC_LEVEL_NODE},
    {"nd", 1u << TC_LEVEL_NODE},
    {"switch", 1u << TC_LEVEL_SWITCH1},
    {"switch1", 1u << TC_LEVEL_SWITCH1},
    {"switch2", 1u << TC_LEVEL_SWITCH2},
    {"switch3", 1u << TC_LEVEL_SWITCH3},
    {"switch4", 1u << TC_LEVEL_SWITCH4},
    {"sw1", 1u << TC_LEVEL_SWITCH1},
    {"sw2", 1u << TC_LEVEL_SWITCH2},
    {"sw3", 1u << TC_LEVEL_SWITCH3},
    {"sw4", 1u << TC_LEVEL_SWITCH4},
    {"sw", SWITCH_BITS},
    {"all", TC_HIER_LEVELS_ALL},
    {"none", 0u},
};

#define ACCEPTED_WORDS                                                                             \
    "accepted (case-insensitive, separated by ',' or '-'): core, l2, l3, numa, package, "          \
    "socket, node, switch (= switch1), switch1..switch4, sw1..sw4, all, none; or paper codes "     \
    "CR, L2, L3, NM, SK, ND, SW (all switch levels), e.g. NM-SK-ND-SW"

static int tc_hier_is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

tc_err_t tc_hier_levels_parse(const char *text, unsigned *mask, char *err, size_t errlen)
{
    unsigned bits = 0;
    const char *s = text;

    if (err && errlen)
        err[0] = '\0';
    if (!text || !mask) {
        if (err && errlen)
            snprintf(err, errlen, "no level list given; %s", ACCEPTED_WORDS);
        return tc_err(TC_ERR_PARSE);
    }
    for (;;) {
        const char *w = s, *e;
        size_t n, i;
        int found = 0;

        while (*s && *s != ',' && *s != '-')
            s++;
        e = s;
        while (w < e && tc_hier_is_blank(*w))
            w++;
        while (e > w && tc_hier_is_blank(e[-1]))
            e--;
        n = (size_t)(e - w);
        if (n == 0) {
            if (err && errlen)
                snprintf(err, errlen, "empty level name in \"%s\"; %s", text, ACCEPTED_WORDS);
            return tc_err(TC_ERR_PARSE);
        }
        for (i = 0; i < sizeof level_words / sizeof level_words[0]; i++) {
            if (strlen(level_words[i].word) == n && strncasecmp(level_words[i].word, w, n) == 0) {
                bits |= level_words[i].bits;
                found = 1;
                break;
            }
        }
        if (!found) {
            if (err && errlen)
                snprintf(err, errlen, "unknown level \"%.*s\"; %s", n > 64 ? 64 : (int)n, w,
                         ACCEPTED_WORDS);
            return tc_err(TC_ERR_PARSE);
        }
        if (!*s)
            break;
        s++; /* separator: a word must follow, so "numa," is rejected above */
    }
    *mask = bits;
    return TC_OK;
}

/* ---- group builder ----------------------------------------------------- */

/* One participant at one level: its unit key (id at the level, then the ids of
 * the key levels above it) and its rank. Copying the key into the entry keeps
 * the comparison free of shared state (plain qsort, thread-safe). */
typedef struct {
    int64_t key[TC_LEVEL_LAST];
    int nkey;
    int rank;
} unit_entry_t;

static int tc_hier_unit_entry_cmp(const void *a, const void *b)
{
    const unit_entry_t *x = a, *y = b;
    int i;

    for (i = 0; i < x->nkey; i++) {
        if (x->key[i] != y->key[i])
            return x->key[i] < y->key[i] ? -1 : 1;
    }
    /* Within a unit, ascending rank: members[0] is the leader (lowest rank). */
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static int tc_hier_same_unit(const unit_entry_t *x, const unit_entry_t *y)
{
    return memcmp(x->key, y->key, (size_t)x->nkey * sizeof x->key[0]) == 0;
}

static int tc_hier_int_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

void tc_hier_groups_free(tc_hier_groups_t *g)
{
    int i;

    if (!g)
        return;
    for (i = 0; i < g->nlevels; i++) {
        free(g->group[i].members);
        free(g->group[i].owner);
    }
    memset(g, 0, sizeof *g);
}

/* Append this rank's group; the members come from the sorted run
 * ent[first..first+size) or, when @p ent is NULL, from @p ranks. */
static tc_err_t tc_hier_group_add(tc_hier_groups_t *out, tc_level_t level, const unit_entry_t *ent,
                                  const int *ranks, int size, int me)
{
    tc_hier_group_t *g = &out->group[out->nlevels];
    int i;

    g->members = malloc((size_t)size * sizeof *g->members);
    g->owner = NULL;
    if (!g->members)
        return tc_err(TC_ERR_NOMEM);
    g->level = level;
    g->size = size;
    g->my_index = -1;
    for (i = 0; i < size; i++) {
        g->members[i] = ent ? ent[i].rank : ranks[i];
        if (g->members[i] == me)
            g->my_index = i;
    }
    out->nlevels++;
    return TC_OK;
}

/* owner[x] of the group just added (members = @p ranks[0..size)): the index
 * of x's representative rep[x] among them, -1 if rep[x] is not a member.
 * @p idx is p entries of -1 on entry and on return. */
static tc_err_t tc_hier_owner_fill(tc_hier_group_t *g, const int *rep, int *idx, int p)
{
    int i, x;

    g->owner = malloc((size_t)p * sizeof *g->owner);
    if (!g->owner)
        return tc_err(TC_ERR_NOMEM);
    for (i = 0; i < g->size; i++)
        idx[g->members[i]] = i;
    for (x = 0; x < p; x++)
        g->owner[x] = idx[rep[x]];
    for (i = 0; i < g->size; i++)
        idx[g->members[i]] = -1;
    return TC_OK;
}

/* The builder; with @p owners, also each group's owner map, tracking every
 * rank's representative: rep[x] is the participant that stands for x (x
 * itself until x's group at some level makes another rank lead it). */
static tc_err_t tc_hier_groups_build_with(const tc_hier_loc_t *locs, int p, int me, unsigned mask,
                                          tc_hier_groups_t *out, int owners)
{
    const unsigned net_bits = TC_HIER_LEVELS_ALL & ~((1u << TC_LEVEL_NODE) - 1u);
    unsigned known = 0, usable, keyed;
    unit_entry_t *ent = NULL;
    int *part = NULL, *rep = NULL, *newrep = NULL, *idx = NULL;
    int np, i, l, me_in = 1, rc = 0;

    if (!out)
        return tc_err(TC_ERR_ARG);
    memset(out, 0, sizeof *out);
    if (!locs || p < 1 || me < 0 || me >= p)
        return tc_err(TC_ERR_ARG);
    mask &= TC_HIER_LEVELS_ALL;

    /* A level is usable only if every rank knows its id there: ranks must all
     * agree, and one unknown would otherwise look like a unit of its own. */
    for (l = 0; l < TC_LEVEL_LAST; l++) {
        for (i = 0; i < p && locs[i].id[l] != TC_LOC_UNKNOWN; i++)
            ;
        if (i == p)
            known |= 1u << l;
    }
    usable = mask & known;
    out->unknown_mask = mask & ~known;
    /* Levels that name a unit: the enabled ones, and node/network ones always
     * (they nest; see groups.h). */
    keyed = usable | (known & net_bits);

    part = malloc((size_t)p * sizeof *part);
    ent = malloc((size_t)p * sizeof *ent);
    if (!part || !ent) {
        rc = tc_err(TC_ERR_NOMEM);
        goto fn_fail;
    }
    if (owners) {
        rep = malloc((size_t)p * sizeof *rep);
        newrep = malloc((size_t)p * sizeof *newrep);
        idx = malloc((size_t)p * sizeof *idx);
        if (!rep || !newrep || !idx) {
            rc = tc_err(TC_ERR_NOMEM);
            goto fn_fail;
        }
        for (i = 0; i < p; i++) {
            rep[i] = i;
            idx[i] = -1;
        }
    }
    for (i = 0; i < p; i++)
        part[i] = i;
    np = p;

    for (l = 0; l < TC_LEVEL_LAST && np > 1; l++) {
        int nkey = 0, k, start, nlead = 0, active = 0;
        int keylev[TC_LEVEL_LAST];

        if (!(usable & (1u << l)))
            continue;
        /* Key: top-down from the highest keyed level to l, so units sort in
         * hierarchy order (deterministic, and readable in debug output). */
        for (k = TC_LEVEL_LAST - 1; k >= l; k--) {
            if (k == l || (keyed & (1u << k)))
                keylev[nkey++] = k;
        }
        for (i = 0; i < np; i++) {
            ent[i].nkey = nkey;
            ent[i].rank = part[i];
            for (k = 0; k < nkey; k++)
                ent[i].key[k] = locs[part[i]].id[keylev[k]];
        }
        qsort(ent, (size_t)np, sizeof *ent, tc_hier_unit_entry_cmp);

        for (start = 0; start + 1 < np && !active; start++) {
            if (tc_hier_same_unit(&ent[start], &ent[start + 1]))
                active = 1;
        }
        if (!active)
            continue; /* every unit holds one participant: nothing changes */
        out->active_mask |= 1u << l;

        for (start = 0; start < np;) {
            int end = start + 1, mine = 0;
            while (end < np && tc_hier_same_unit(&ent[start], &ent[end]))
                end++;
            if (me_in) {
                for (k = start; k < end; k++)
                    mine |= ent[k].rank == me;
            }
            if (mine && end - start >= 2) {
                rc = tc_hier_group_add(out, (tc_level_t)l, &ent[start], NULL, end - start, me);
                /* rep[] still holds the representatives below this level. */
                if (rc == 0 && owners)
                    rc = tc_hier_owner_fill(&out->group[out->nlevels - 1], rep, idx, p);
                if (rc)
                    goto fn_fail;
                if (ent[start].rank != me)
                    me_in = 0; /* a non-leader stops here */
            }
            if (owners) {
                for (k = start; k < end; k++)
                    newrep[ent[k].rank] = ent[start].rank;
            }
            part[nlead++] = ent[start].rank; /* leaders go on */
            start = end;
        }
        if (owners) {
            /* rep[x] was a participant of this level: its unit's leader now
             * stands for x. */
            for (i = 0; i < p; i++)
                rep[i] = newrep[rep[i]];
        }
        np = nlead;
        qsort(part, (size_t)np, sizeof *part, tc_hier_int_cmp);
    }

    /* Several participants left above the last level (e.g. several nodes and
     * no switch level): join them so the groups span every rank. */
    if (np > 1) {
        out->active_mask |= 1u << TC_HIER_LEVEL_TOP;
        if (me_in) {
            rc = tc_hier_group_add(out, TC_HIER_LEVEL_TOP, NULL, part, np, me);
            if (rc == 0 && owners)
                rc = tc_hier_owner_fill(&out->group[out->nlevels - 1], rep, idx, p);
            if (rc)
                goto fn_fail;
        }
    }

fn_exit:
    free(idx);
    free(newrep);
    free(rep);
    free(ent);
    free(part);
    return rc;
fn_fail:
    tc_hier_groups_free(out);
    goto fn_exit;
}

tc_err_t tc_hier_groups_build(const tc_hier_loc_t *locs, int p, int me, unsigned mask,
                              tc_hier_groups_t *out)
{
    return tc_hier_groups_build_with(locs, p, me, mask, out, 0);
}

tc_err_t tc_hier_groups_build_owners(const tc_hier_loc_t *locs, int p, int me, unsigned mask,
                                     tc_hier_groups_t *out)
{
    return tc_hier_groups_build_with(locs, p, me, mask, out, 1);
}
