/* Node topology from hwloc: cached process topology, locality of a binding,
 * and which intra-node levels nest (see topo_hwloc.h for the rules). */
#include "topo_hwloc.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define NLEVELS (TC_LEVEL_PACKAGE + 1) /* CORE..PACKAGE, indexed by tc_level_t */

static const hwloc_obj_type_t level_type[NLEVELS] = {
    [TC_LEVEL_CORE] = HWLOC_OBJ_CORE,       [TC_LEVEL_L2] = HWLOC_OBJ_L2CACHE,
    [TC_LEVEL_L3] = HWLOC_OBJ_L3CACHE,      [TC_LEVEL_NUMA] = HWLOC_OBJ_NUMANODE,
    [TC_LEVEL_PACKAGE] = HWLOC_OBJ_PACKAGE,
};

/* ---- process-wide cached topology ---------------------------------------- */

static pthread_once_t cached_once = PTHREAD_ONCE_INIT;
static hwloc_topology_t cached_topo;
static int cached_rc = -1;

static void tc_hier_cached_load(void)
{
    hwloc_topology_t t;

    if (hwloc_topology_init(&t) != 0)
        return;
    /* I/O objects are off by default in hwloc 2.x; nothing else to filter. */
    if (hwloc_topology_load(t) != 0) {
        hwloc_topology_destroy(t);
        return;
    }
    cached_topo = t;
    cached_rc = 0;
}

tc_err_t tc_hier_topo_get(hwloc_topology_t *topo)
{
    if (topo == NULL)
        return tc_err(TC_ERR_ARG);
    /* pthread_once orders the writes in tc_hier_cached_load() before every return. */
    if (pthread_once(&cached_once, tc_hier_cached_load) != 0 || cached_rc != 0)
        return tc_err(TC_ERR_NOTSUP); /* hwloc could not load this machine's topology */
    *topo = cached_topo;
    return TC_OK;
}

/* ---- explicit topologies -------------------------------------------------- */

tc_err_t tc_hier_topo_load_synthetic(const char *desc, hwloc_topology_t *topo)
{
    hwloc_topology_t t;

    if (desc == NULL || topo == NULL)
        return tc_err(TC_ERR_ARG);
    if (hwloc_topology_init(&t) != 0)
        return tc_err(TC_ERR_NOMEM);
    if (hwloc_topology_set_synthetic(t, desc) != 0 || hwloc_topology_load(t) != 0) {
        hwloc_topology_destroy(t);
        return tc_err(TC_ERR_PARSE);
    }
    *topo = t;
    return TC_OK;
}

tc_err_t tc_hier_topo_load_xml(const char *xml, hwloc_topology_t *topo)
{
    hwloc_topology_t t;
    size_t len;

    if (xml == NULL || topo == NULL)
        return tc_err(TC_ERR_ARG);
    len = strlen(xml) + 1; /* hwloc's buffer length counts the final NUL */
    if (len > (size_t)INT_MAX)
        return tc_err(TC_ERR_ARG);
    if (hwloc_topology_init(&t) != 0)
        return tc_err(TC_ERR_NOMEM);
    if (hwloc_topology_set_xmlbuffer(t, xml, (int)len) != 0 || hwloc_topology_load(t) != 0) {
        hwloc_topology_destroy(t);
        return tc_err(TC_ERR_PARSE);
    }
    *topo = t;
    return TC_OK;
}

void tc_hier_topo_destroy(hwloc_topology_t topo)
{
    if (topo != NULL)
        hwloc_topology_destroy(topo);
}

/* ---- locality -------------------------------------------------------------- */

/* Depth of a level's objects, or TC_ERR_NOTFOUND when unusable: absent, or spread over
 * several depths (logical indexes are per depth, so ids would collide). NUMA
 * nodes live at the virtual depth HWLOC_TYPE_DEPTH_NUMANODE, which the
 * by-depth accessors accept. */
static tc_err_t tc_hier_level_depth(hwloc_topology_t topo, int level, int *depth)
{
    int d = hwloc_get_type_depth(topo, level_type[level]);

    if (d == HWLOC_TYPE_DEPTH_UNKNOWN || d == HWLOC_TYPE_DEPTH_MULTIPLE)
        return tc_err(TC_ERR_NOTFOUND);
    *depth = d;
    return TC_OK;
}

static void tc_hier_loc_clear(tc_hier_loc_t *loc)
{
    for (int l = 0; l < TC_LEVEL_LAST; l++)
        loc->id[l] = TC_LOC_UNKNOWN;
}

/* Id of the unit holding @set at @level, or TC_LOC_UNKNOWN. Every object whose
 * cpuset includes @set must have the same cpuset (one unit: several NUMA nodes
 * behind the same cores); the unit is named by its lowest logical index. */
static int64_t tc_hier_level_locate(hwloc_topology_t topo, int level, hwloc_const_cpuset_t set)
{
    hwloc_const_cpuset_t unit = NULL;
    int64_t id = TC_LOC_UNKNOWN;
    int depth, n;

    if (tc_hier_level_depth(topo, level, &depth) != 0)
        return TC_LOC_UNKNOWN;
    n = hwloc_get_nbobjs_by_depth(topo, depth);
    for (int i = 0; i < n; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_depth(topo, depth, (unsigned)i);

        if (o == NULL || o->cpuset == NULL || hwloc_bitmap_iszero(o->cpuset) ||
            !hwloc_bitmap_isincluded(set, o->cpuset))
            continue;
        if (unit == NULL) {
            unit = o->cpuset;
            id = o->logical_index;
        } else if (!hwloc_bitmap_isequal(unit, o->cpuset)) {
            return TC_LOC_UNKNOWN; /* nested, unequal NUMA nodes: no single unit */
        } else if ((int64_t)o->logical_index < id) {
            id = o->logical_index;
        }
    }
    return id;
}

tc_err_t tc_hier_topo_locality(hwloc_topology_t topo, hwloc_const_cpuset_t binding,
                               tc_hier_loc_t *loc, unsigned *known_mask)
{
    hwloc_bitmap_t set = NULL;
    unsigned known = 0;
    tc_err_t rc = tc_err(TC_ERR_ARG);

    if (loc != NULL)
        tc_hier_loc_clear(loc);
    if (topo == NULL || binding == NULL || loc == NULL)
        goto fn_exit;
    rc = tc_err(TC_ERR_NOMEM);
    set = hwloc_bitmap_alloc();
    if (set == NULL ||
        hwloc_bitmap_and(set, binding, hwloc_topology_get_topology_cpuset(topo)) != 0)
        goto fn_exit;
    rc = TC_OK;
    /* The empty set is inside everything; it locates nothing. */
    if (hwloc_bitmap_iszero(set))
        goto fn_exit;
    for (int l = 0; l < NLEVELS; l++) {
        loc->id[l] = tc_hier_level_locate(topo, l, set);
        if (loc->id[l] != TC_LOC_UNKNOWN)
            known |= 1u << l;
    }

fn_exit:
    hwloc_bitmap_free(set);
    if (known_mask != NULL)
        *known_mask = known;
    return rc;
}

tc_err_t tc_hier_topo_self(tc_hier_loc_t *loc, unsigned *known_mask, int *bound)
{
    hwloc_topology_t topo;
    hwloc_bitmap_t set = NULL;
    tc_err_t rc;
    int is_bound = 0;
    tc_hier_loc_t dummy;

    if (loc == NULL)
        loc = &dummy;
    tc_hier_loc_clear(loc);
    if (known_mask != NULL)
        *known_mask = 0;
    if ((rc = tc_hier_topo_get(&topo)) != TC_OK)
        goto fn_exit;
    set = hwloc_bitmap_alloc();
    /* An unreadable binding (unsupported OS, allocation failure) is treated
     * as unbound: the caller then falls back to the node level. */
    if (set == NULL || hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) != 0)
        goto fn_exit;
    is_bound = !hwloc_bitmap_isincluded(hwloc_topology_get_topology_cpuset(topo), set);
    rc = tc_hier_topo_locality(topo, set, loc, known_mask);

fn_exit:
    hwloc_bitmap_free(set);
    if (bound != NULL)
        *bound = is_bound;
    return rc;
}

/* ---- nesting --------------------------------------------------------------- */

/* The distinct cpusets ("units") of one level's objects. */
typedef struct {
    int n;
    hwloc_const_cpuset_t *unit;
    int partition; /* units pairwise disjoint */
    int whole;     /* a single unit covering the whole machine */
} level_units_t;

static tc_err_t tc_hier_units_collect(hwloc_topology_t topo, int level, level_units_t *u)
{
    int depth, n;

    memset(u, 0, sizeof(*u));
    if (tc_hier_level_depth(topo, level, &depth) != 0)
        return TC_OK;
    n = hwloc_get_nbobjs_by_depth(topo, depth);
    if (n <= 0)
        return TC_OK;
    u->unit = malloc((size_t)n * sizeof(*u->unit));
    if (u->unit == NULL)
        return tc_err(TC_ERR_NOMEM);
    u->partition = 1;
    for (int i = 0; i < n; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_depth(topo, depth, (unsigned)i);
        int dup = 0;

        /* CPU-less NUMA nodes (CXL, some HBM modes) group no process. */
        if (o == NULL || o->cpuset == NULL || hwloc_bitmap_iszero(o->cpuset))
            continue;
        for (int j = 0; j < u->n && !dup; j++) {
            if (hwloc_bitmap_isequal(u->unit[j], o->cpuset))
                dup = 1;
            else if (hwloc_bitmap_intersects(u->unit[j], o->cpuset))
                u->partition = 0;
        }
        if (!dup)
            u->unit[u->n++] = o->cpuset;
    }
    u->whole =
        u->n == 1 && hwloc_bitmap_isincluded(hwloc_topology_get_topology_cpuset(topo), u->unit[0]);
    return TC_OK;
}

/* Every unit of @lo lies inside one unit of @hi. */
static int tc_hier_units_nest(const level_units_t *lo, const level_units_t *hi)
{
    for (int i = 0; i < lo->n; i++) {
        int inside = 0;

        for (int j = 0; j < hi->n && !inside; j++)
            inside = hwloc_bitmap_isincluded(lo->unit[i], hi->unit[j]);
        if (!inside)
            return 0;
    }
    return 1;
}

/* Same partition of the PUs (both levels are partitions, @lo nests in @hi). */
static int tc_hier_units_same(const level_units_t *lo, const level_units_t *hi)
{
    if (lo->n != hi->n)
        return 0;
    for (int i = 0; i < lo->n; i++) {
        int found = 0;

        for (int j = 0; j < hi->n && !found; j++)
            found = hwloc_bitmap_isequal(lo->unit[i], hi->unit[j]);
        if (!found)
            return 0;
    }
    return 1;
}

unsigned tc_hier_topo_nesting_mask(hwloc_topology_t topo, unsigned *redundant_mask)
{
    level_units_t u[NLEVELS];
    int nest[NLEVELS][NLEVELS], same[NLEVELS][NLEVELS];
    unsigned present = 0, best = 0, best_red = 0;
    int best_distinct = -1, best_kept = -1;
    long best_units = -1;

    memset(u, 0, sizeof(u));
    if (redundant_mask != NULL)
        *redundant_mask = 0;
    if (topo == NULL)
        return 0;
    for (int l = 0; l < NLEVELS; l++) {
        if (tc_hier_units_collect(topo, l, &u[l]) != 0)
            goto fn_exit;
        /* Overlapping unequal units (nested NUMA nodes) do not partition the
         * PUs, so they cannot define groups. */
        if (u[l].n > 0 && u[l].partition)
            present |= 1u << l;
    }
    for (int a = 0; a < NLEVELS; a++)
        for (int b = a + 1; b < NLEVELS; b++) {
            nest[a][b] = tc_hier_units_nest(&u[a], &u[b]);
            same[a][b] = nest[a][b] && tc_hier_units_same(&u[a], &u[b]);
        }

    /* Five levels: trying all 32 subsets is simpler and easier to trust than
     * a greedy repair, and finds the preferred one directly. */
    for (unsigned s = 0; s < (1u << NLEVELS); s++) {
        unsigned red = 0;
        int prev = -1, ok = 1, kept = 0, distinct;
        long units = 0;

        if ((s & ~present) != 0)
            continue;
        for (int l = 0; l < NLEVELS && ok; l++) {
            if (!(s & (1u << l)))
                continue;
            if (prev >= 0 && !nest[prev][l])
                ok = 0;
            else if (u[l].whole || (prev >= 0 && same[prev][l]))
                red |= 1u << l;
            kept++;
            units += u[l].n;
            prev = l;
        }
        if (!ok)
            continue;
        distinct = kept;
        for (int l = 0; l < NLEVELS; l++)
            distinct -= (int)((red >> l) & 1u);
        if (distinct > best_distinct ||
            (distinct == best_distinct &&
             (kept > best_kept || (kept == best_kept && units > best_units)))) {
            best = s;
            best_red = red;
            best_distinct = distinct;
            best_kept = kept;
            best_units = units;
        }
    }
    if (redundant_mask != NULL)
        *redundant_mask = best_red;

fn_exit:
    for (int l = 0; l < NLEVELS; l++)
        free(u[l].unit);
    return best;
}
