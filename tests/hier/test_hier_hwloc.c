/* hwloc topology analysis (src/hier/topo_hwloc.c) on synthetic machines: the
 * locality of several bindings and the nesting/redundant level masks, against
 * values worked out by hand from each machine's shape (PU p of a synthetic
 * topology has OS index p, objects are numbered left to right). Then the
 * cached topology of this machine: loaded once across threads, and the
 * process's own locality when pinned to one CPU. No MPI. */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>
#include <hwloc/export.h>

#include "hier/topo_hwloc.h"

#include "tc_unit.h"

#define U    TC_LOC_UNKNOWN
#define B(l) (1u << TC_LEVEL_##l)
#define ALL5 (B(CORE) | B(L2) | B(L3) | B(NUMA) | B(PACKAGE))

typedef struct {
    const char *cpus;  /* binding as an hwloc list, e.g. "4-7" */
    int64_t expect[5]; /* core, l2, l3, numa, package */
} binding_case_t;

typedef struct {
    const char *name;
    const char *desc;   /* hwloc synthetic description */
    unsigned nest;      /* expected tc_hier_topo_nesting_mask */
    unsigned redundant; /* expected redundant mask */
    binding_case_t bind[8];
} machine_case_t;

/* Expected ids, derived from the shapes (p = PU number). */
static const machine_case_t machines[] = {
    /* (a) 8 PUs. core = L2 = p, L3 = NUMA = package = p / 4: L2 adds nothing to
     * the core, NUMA nothing to L3, the package nothing to NUMA. */
    {"2-socket",
     "pack:2 numa:1 l3:1 l2:4 core:1 pu:1",
     ALL5,
     B(L2) | B(NUMA) | B(PACKAGE),
     {{"5", {5, 5, 1, 1, 1}},
      {"0", {0, 0, 0, 0, 0}},
      {"2-3", {U, U, 0, 0, 0}},
      {"4-7", {U, U, 1, 1, 1}},
      {"3-4", {U, U, U, U, U}},
      {"0-7", {U, U, U, U, U}},
      {"5,100", {5, 5, 1, 1, 1}}, /* PU 100 does not exist: ignored */
      {NULL, {0}}}},
    /* (a') 16 PUs with SMT and a shared L2: core = p / 2, L2 = p / 4,
     * L3 = NUMA = package = p / 8. */
    {"2-socket-smt",
     "pack:2 numa:1 l3:1 l2:2 core:2 pu:2",
     ALL5,
     B(NUMA) | B(PACKAGE),
     {{"11", {5, 2, 1, 1, 1}},
      {"12-13", {6, 3, 1, 1, 1}},
      {"4-7", {U, 1, 0, 0, 0}},
      {"0-7", {U, U, 0, 0, 0}},
      {"0-15", {U, U, U, U, U}},
      {NULL, {0}}}},
    /* (b) AMD-like, 32 PUs: core = L2 = p, L3 = p / 4, NUMA = p / 8,
     * package = p / 16. Several L3 per NUMA node nest fine. */
    {"amd-like",
     "pack:2 numa:2 l3:2 l2:4 core:1 pu:1",
     ALL5,
     B(L2),
     {{"13", {13, 13, 3, 1, 0}},
      {"20-23", {U, U, 5, 2, 1}},
      {"24-31", {U, U, U, 3, 1}},
      {"16-31", {U, U, U, U, 1}},
      {"0-31", {U, U, U, U, U}},
      {NULL, {0}}}},
    /* (c) Intel SNC-like, 16 PUs: one L3 per package spanning two NUMA nodes.
     * core = L2 = p, NUMA = p / 4, L3 = package = p / 8. L3 does not nest in
     * NUMA: dropping L3 keeps core/NUMA/package distinct (3 groupings),
     * dropping NUMA would keep only core/L3 (package = L3). */
    {"intel-snc",
     "pack:2 l3:1 numa:2 l2:4 core:1 pu:1",
     B(CORE) | B(L2) | B(NUMA) | B(PACKAGE),
     B(L2),
     {{"5", {5, 5, 0, 1, 0}},
      {"8-11", {U, U, 1, 2, 1}},
      {"8-15", {U, U, 1, U, 1}},
      {"0-15", {U, U, U, U, U}},
      {NULL, {0}}}},
    /* (c') the same machine with the NUMA nodes attached explicitly. */
    {"intel-snc-attach",
     "pack:2 l3:1 group:2 [numa] l2:4 core:1 pu:1",
     B(CORE) | B(L2) | B(NUMA) | B(PACKAGE),
     B(L2),
     {{"5", {5, 5, 0, 1, 0}}, {"8-11", {U, U, 1, 2, 1}}, {"8-15", {U, U, 1, U, 1}}, {NULL, {0}}}},
    /* (d) no L3, 8 PUs: core = p, L2 = p / 2, NUMA = package = p / 4. */
    {"no-l3",
     "pack:2 numa:1 l2:2 core:2 pu:1",
     B(CORE) | B(L2) | B(NUMA) | B(PACKAGE),
     B(PACKAGE),
     {{"3", {3, 1, U, 0, 0}},
      {"4-5", {U, 2, U, 1, 1}},
      {"4-7", {U, U, U, 1, 1}},
      {"0-7", {U, U, U, U, U}},
      {NULL, {0}}}},
    /* (e) one NUMA node for two packages, 8 PUs, no L2: core = p,
     * L3 = package = p / 4, NUMA = 0 everywhere (even unbound). NUMA does not
     * fit in a package: dropping NUMA or the package both leave 2 groupings
     * (package = L3; NUMA = whole machine), and the package is finer. */
    {"numa-over-packages",
     "numa:1 pack:2 l3:1 core:4 pu:1",
     B(CORE) | B(L3) | B(PACKAGE),
     B(PACKAGE),
     {{"6", {6, U, 1, 0, 1}}, {"0-3", {U, U, 0, 0, 0}}, {"0-7", {U, U, U, 0, U}}, {NULL, {0}}}},
    /* (f) one package, 4 PUs: core = p, L3 = p / 2, NUMA = package = 0, both
     * spanning the machine (the node level groups the same processes). */
    {"1-socket",
     "pack:1 l3:2 core:2 pu:1",
     B(CORE) | B(L3) | B(NUMA) | B(PACKAGE),
     B(NUMA) | B(PACKAGE),
     {{"2", {2, U, 1, 0, 0}}, {"0-3", {U, U, U, 0, 0}}, {NULL, {0}}}},
};

static const char *level_short[5] = {"core", "l2", "l3", "numa", "package"};

static void mask_str(unsigned m, char *buf, size_t len)
{
    buf[0] = '\0';
    for (int l = 0; l < 5; l++)
        if (m & (1u << l)) {
            size_t used = strlen(buf);
            snprintf(buf + used, len - used, "%s%s", used ? "," : "", level_short[l]);
        }
    if (buf[0] == '\0')
        snprintf(buf, len, "-");
}

static void check_bindings(const machine_case_t *m, hwloc_topology_t topo)
{
    for (const binding_case_t *b = m->bind; b->cpus != NULL; b++) {
        hwloc_bitmap_t set = hwloc_bitmap_alloc();
        tc_hier_loc_t loc;
        unsigned known = 0xdead, expect_known = 0;
        int ok = 1;

        CHECK(set != NULL && hwloc_bitmap_list_sscanf(set, b->cpus) == 0);
        CHECK(tc_hier_topo_locality(topo, set, &loc, &known) == 0);
        for (int l = 0; l < 5; l++) {
            if (b->expect[l] != U)
                expect_known |= 1u << l;
            if (loc.id[l] != b->expect[l]) {
                fprintf(stderr, "%s, binding %s: %s = %lld, expected %lld\n", m->name, b->cpus,
                        level_short[l], (long long)loc.id[l], (long long)b->expect[l]);
                ok = 0;
            }
        }
        for (int l = TC_LEVEL_NODE; l < TC_LEVEL_LAST; l++)
            if (loc.id[l] != U)
                ok = 0;
        CHECK(ok);
        CHECK(known == expect_known);
        hwloc_bitmap_free(set);
    }
}

static void check_masks(const machine_case_t *m, hwloc_topology_t topo, const char *how)
{
    unsigned red = 0xdead, nest = tc_hier_topo_nesting_mask(topo, &red);
    char a[64], b[64];

    mask_str(nest, a, sizeof(a));
    mask_str(red, b, sizeof(b));
    printf("  %-20s %-6s nest=%-26s redundant=%s\n", m->name, how, a, b);
    if (nest != m->nest || red != m->redundant) {
        mask_str(m->nest, a, sizeof(a));
        mask_str(m->redundant, b, sizeof(b));
        fprintf(stderr, "%s (%s): expected nest=%s redundant=%s\n", m->name, how, a, b);
    }
    CHECK(nest == m->nest);
    CHECK(red == m->redundant);
    CHECK(tc_hier_topo_nesting_mask(topo, NULL) == m->nest);
}

static void test_machines(void)
{
    for (size_t i = 0; i < sizeof(machines) / sizeof(machines[0]); i++) {
        const machine_case_t *m = &machines[i];
        hwloc_topology_t topo = NULL, xtopo = NULL;
        char *xml = NULL;
        int xmllen = 0;

        if (tc_hier_topo_load_synthetic(m->desc, &topo) != 0) {
            fprintf(stderr, "%s: cannot load \"%s\"\n", m->name, m->desc);
            CHECK(0);
            continue;
        }
        check_masks(m, topo, "synth");
        check_bindings(m, topo);

        /* The same machine through the XML loader gives the same answers. */
        CHECK(hwloc_topology_export_xmlbuffer(topo, &xml, &xmllen, 0) == 0);
        if (xml != NULL) {
            CHECK(tc_hier_topo_load_xml(xml, &xtopo) == 0);
            if (xtopo != NULL) {
                check_masks(m, xtopo, "xml");
                check_bindings(m, xtopo);
            }
            hwloc_free_xmlbuffer(topo, xml);
        }
        tc_hier_topo_destroy(xtopo);
        tc_hier_topo_destroy(topo);
    }
}

static void test_errors(void)
{
    hwloc_topology_t topo = NULL, bad = NULL;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    tc_hier_loc_t loc;
    unsigned known = 0xdead;

    CHECK(tc_hier_topo_load_synthetic("pack:2 bogus:3", &bad) == tc_err(TC_ERR_PARSE) &&
          bad == NULL);
    CHECK(tc_hier_topo_load_synthetic(NULL, &bad) == tc_err(TC_ERR_ARG));
    CHECK(tc_hier_topo_load_xml("<not xml", &bad) == tc_err(TC_ERR_PARSE) && bad == NULL);
    tc_hier_topo_destroy(NULL);
    CHECK(tc_hier_topo_nesting_mask(NULL, NULL) == 0);
    CHECK(tc_hier_topo_load_synthetic("pack:2 core:2 pu:1", &topo) == 0);

    /* Empty binding, or one with no PU of this machine: nothing known. */
    hwloc_bitmap_zero(set);
    CHECK(tc_hier_topo_locality(topo, set, &loc, &known) == 0 && known == 0);
    for (int l = 0; l < TC_LEVEL_LAST; l++)
        CHECK(loc.id[l] == U);
    hwloc_bitmap_only(set, 1000);
    CHECK(tc_hier_topo_locality(topo, set, &loc, &known) == 0 && known == 0);
    CHECK(tc_hier_topo_locality(NULL, set, &loc, &known) == tc_err(TC_ERR_ARG) && known == 0);
    CHECK(loc.id[TC_LEVEL_CORE] == U);
    CHECK(tc_hier_topo_locality(topo, NULL, &loc, NULL) == tc_err(TC_ERR_ARG));
    CHECK(tc_hier_topo_locality(topo, set, NULL, &known) == tc_err(TC_ERR_ARG));
    hwloc_bitmap_free(set);
    tc_hier_topo_destroy(topo);
}

static void *get_cached(void *arg)
{
    hwloc_topology_t *out = arg;

    if (tc_hier_topo_get(out) != 0)
        *out = NULL;
    return NULL;
}

/* The machine we run on: one cached topology for all threads, and the
 * process's locality when pinned to its first allowed CPU, compared with
 * hwloc's own view of that PU's core and package. */
static void test_self(void)
{
    hwloc_topology_t t[4] = {NULL, NULL, NULL, NULL}, topo;
    pthread_t th[4];
    tc_hier_loc_t loc;
    unsigned known;
    int bound, ncpu, first = -1;
    cpu_set_t saved, one;

    for (int i = 0; i < 4; i++)
        CHECK(pthread_create(&th[i], NULL, get_cached, &t[i]) == 0);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    CHECK(t[0] != NULL);
    for (int i = 1; i < 4; i++)
        CHECK(t[i] == t[0]);
    CHECK(tc_hier_topo_get(&topo) == 0 && topo == t[0]);
    if (t[0] == NULL)
        return;

    CHECK(tc_hier_topo_self(&loc, &known, &bound) == 0);
    printf("  this machine: nest mask 0x%x, process %s, known 0x%x\n",
           tc_hier_topo_nesting_mask(topo, NULL), bound ? "bound" : "unbound", known);

    if (sched_getaffinity(0, sizeof(saved), &saved) != 0)
        return;
    ncpu = CPU_COUNT(&saved);
    for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
        if (CPU_ISSET(c, &saved))
            first = c;
    if (ncpu < 2 || first < 0) {
        printf("  this machine: one CPU allowed, pinning check skipped\n");
        return;
    }
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    if (sched_setaffinity(0, sizeof(one), &one) != 0)
        return;
    CHECK(tc_hier_topo_self(&loc, &known, &bound) == 0);
    CHECK(bound == 1);
    {
        hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(topo, (unsigned)first);
        hwloc_obj_t core = pu ? hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, pu) : NULL;
        hwloc_obj_t pkg = pu ? hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, pu) : NULL;

        CHECK(pu != NULL);
        if (core != NULL)
            CHECK(loc.id[TC_LEVEL_CORE] == (int64_t)core->logical_index);
        if (pkg != NULL)
            CHECK(loc.id[TC_LEVEL_PACKAGE] == (int64_t)pkg->logical_index);
        printf("  this machine pinned to CPU %d: core %lld, package %lld\n", first,
               (long long)loc.id[TC_LEVEL_CORE], (long long)loc.id[TC_LEVEL_PACKAGE]);
    }
    CHECK(sched_setaffinity(0, sizeof(saved), &saved) == 0);
}

int main(void)
{
    printf("test_hier_hwloc: synthetic machines\n");
    test_machines();
    test_errors();
    printf("test_hier_hwloc: this machine\n");
    test_self();
    printf("test_hier_hwloc: %d checks, %d failed\n", tu_checks, tu_failures);
    return tu_failures ? 1 : 0;
}
