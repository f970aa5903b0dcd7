/* topocoll-info: what the library sees and would do on this machine.
 *
 *   mpirun -n N topocoll-info [--root R] [--comm world|reversed]
 *
 * Prints every tunable with its value and where it came from, the node layout
 * (ranks, hosts, cores, NUMA nodes, bindings), the context the library builds
 * on the communicator (path, f, S, q, tree, segment layout and size), the
 * NUMA placement check of every rank's queue, the notification tree for
 * root R, and the hierarchy the group builder derives from every rank's hwloc
 * locality (not used by the collectives yet). It uses the internal query interface: tc_ctx_get()
 * and the read-only fields of tc_ctx_t / tc_shm_comm_t (src/core/ctx.h, src/shm/segment.h).
 */
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/ctx.h"
#include "hier/groups.h"
#include "hier/topo_hwloc.h"
#include "topocoll.h"

static const char *const path_names[TC_PATH_LAST] = {
    "shm (shared-memory pipelined broadcast)",
    "hier",
    "trivial (one process)",
    "PMPI_Bcast: the communicator spans several nodes",
    "PMPI_Bcast: TC_SHM=0 on some rank",
    "PMPI_Bcast: the segment could not be created on some rank",
    "PMPI_Bcast: intercommunicator"};

static void print_tunables(void)
{
    static const char *const src[] = {"default", "env", "INVALID in env, default used"};
    printf("## Tunables\n");
    for (int id = 0; id < TC_CFG_LAST; id++) {
        const tc_cfg_desc_t *d = tc_config_desc((tc_cfg_id_t)id);
        char val[64];
        if (d->type == TC_CFG_TYPE_ENUM)
            snprintf(val, sizeof val, "%s",
                     tc_config_enum_name((tc_cfg_id_t)id, tc_config_int((tc_cfg_id_t)id)));
        else if (d->type == TC_CFG_TYPE_DOUBLE)
            snprintf(val, sizeof val, "%g", tc_config_double((tc_cfg_id_t)id));
        else
            snprintf(val, sizeof val, "%lld", (long long)tc_config_int((tc_cfg_id_t)id));
        const char *raw = tc_config_raw((tc_cfg_id_t)id);
        printf("%-22s = %-10s (%s%s%s%s)\n", d->name, val, src[tc_config_source((tc_cfg_id_t)id)],
               raw ? ": \"" : "", raw ? raw : "", raw ? "\"" : "");
    }
}

/* Every rank's locality (hwloc, its binding) with the node named by the
 * lowest world rank on it, the levels that nest on this machine, and the
 * groups the builder makes of them (paper 001). */
static void print_hierarchy(MPI_Comm comm, int rank, int size)
{
    tc_hier_loc_t me, *all = malloc((size_t)size * sizeof *all);
    unsigned known = 0, redundant = 0, nesting = 0;
    int bound = 0, world_rank, node_first;
    hwloc_topology_t topo;
    tc_hier_topo_self(&me, &known, &bound);
    if (tc_hier_topo_get(&topo) == 0)
        nesting = tc_hier_topo_nesting_mask(topo, &redundant);
    for (int l = 0; l < TC_LEVEL_LAST; l++)
        if (!(nesting & known & (1u << l)))
            me.id[l] = TC_LOC_UNKNOWN;
    MPI_Comm node;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Allreduce(&world_rank, &node_first, 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
    me.id[TC_LEVEL_NODE] = node_first;
    MPI_Allgather(&me, sizeof me, MPI_BYTE, all, sizeof me, MPI_BYTE, comm);
    unsigned mask = TC_HIER_LEVELS_ALL & ~redundant;
    tc_hier_groups_t g;
    int rc = tc_hier_groups_build(all, size, rank, mask, &g);
    char line[1024];
    int n = snprintf(line, sizeof line, "rank %-4d", rank);
    for (int i = 0; rc == 0 && i < g.nlevels && n < 900; i++) {
        const tc_hier_group_t *gr = &g.group[i];
        n += snprintf(line + n, sizeof line - (size_t)n, " %s(%d", tc_hier_level_name(gr->level),
                      gr->members[0]);
        for (int m = 1; m < gr->size && n < 900; m++)
            n +=
                snprintf(line + n, sizeof line - (size_t)n, m < 8 ? ",%d" : ",...", gr->members[m]);
        n += snprintf(line + n, sizeof line - (size_t)n, ")");
    }
    char *lines = rank == 0 ? malloc((size_t)size * sizeof line) : NULL;
    MPI_Gather(line, sizeof line, MPI_CHAR, lines, sizeof line, MPI_CHAR, 0, comm);
    if (rank == 0) {
        printf("\n## Hierarchy (paper 001; not used by the collectives yet)\n");
        printf("levels that nest here:");
        for (int l = 0; l < TC_LEVEL_LAST; l++)
            if (nesting & (1u << l))
                printf(" %s%s", tc_hier_level_name((tc_level_t)l),
                       redundant & (1u << l) ? "(redundant)" : "");
        printf("\nactive levels:");
        for (int l = 0; rc == 0 && l <= TC_HIER_LEVEL_TOP; l++)
            if (g.active_mask & (1u << l))
                printf(" %s", tc_hier_level_name((tc_level_t)l));
        printf("%s\n", bound ? "" : " (rank 0 is not bound: levels below the node are unknown)");
        printf("locality (rank: core l2 l3 numa package node):\n");
        for (int i = 0; i < size; i++) {
            printf("rank %-4d", i);
            for (int l = TC_LEVEL_CORE; l <= TC_LEVEL_NODE; l++)
                printf(" %5lld", (long long)all[i].id[l]);
            printf("\n");
        }
        printf("groups (level(leader,members...)), bottom-up:\n");
        for (int i = 0; i < size; i++)
            printf("%s\n", lines + (size_t)i * sizeof line);
        free(lines);
    }
    if (rc == 0)
        tc_hier_groups_free(&g);
    free(all);
}

typedef struct {
    char host[64];
    char binding[64];
    int numa_node;
    int cores_on_host, numa_on_host;
    long pages_local, pages_checked;
} rank_info_t;

int main(int argc, char **argv)
{
    int root = 0, reversed = 0;
    MPI_Init(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--root") && i + 1 < argc)
            root = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--comm") && i + 1 < argc)
            reversed = !strcmp(argv[++i], "reversed");
        else {
            fprintf(stderr, "usage: topocoll-info [--root R] [--comm world|reversed]\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    int rank, size;
    MPI_Comm comm = MPI_COMM_WORLD;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *want = getenv("TC_TEST_NP"); /* the test suite's launcher check */
    if (want && atoi(want) != size) {
        fprintf(stderr, "topocoll-info: %d processes, TC_TEST_NP=%s (wrong launcher?)\n", size,
                want);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (reversed)
        MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &comm);
    MPI_Comm_rank(comm, &rank);
    if (root < 0 || root >= size) {
        if (rank == 0)
            fprintf(stderr, "topocoll-info: --root %d out of range 0..%d\n", root, size - 1);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    tc_ctx_t *ctx;
    if (tc_ctx_get(comm, &ctx) != MPI_SUCCESS) {
        fprintf(stderr, "topocoll-info: context creation failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    rank_info_t me = {.numa_node = -1, .pages_checked = -1};
    gethostname(me.host, sizeof me.host - 1);
    hwloc_topology_t topo;
    hwloc_topology_init(&topo);
    hwloc_topology_load(topo);
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) == 0) {
        char *s = NULL;
        hwloc_bitmap_list_asprintf(&s, set);
        int all = hwloc_bitmap_isequal(set, hwloc_topology_get_topology_cpuset(topo));
        snprintf(me.binding, sizeof me.binding, "%s%s", s ? s : "?", all ? " (unbound)" : "");
        free(s);
    }
    hwloc_bitmap_free(set);
    me.cores_on_host = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    me.numa_on_host = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    hwloc_topology_destroy(topo);
    if (ctx->shm) {
        me.numa_node = ctx->shm->numa_node;
        me.pages_local = ctx->shm->pages_local;
        me.pages_checked = ctx->shm->pages_checked;
    }
    rank_info_t *all = rank == 0 ? calloc((size_t)size, sizeof *all) : NULL;
    MPI_Gather(&me, sizeof me, MPI_BYTE, all, sizeof me, MPI_BYTE, 0, comm);

    if (rank == 0) {
        int ma, mi, pa;
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        TC_Get_version(&ma, &mi, &pa);
        MPI_Get_library_version(lib, &len);
        lib[strcspn(lib, "\n")] = '\0';
        printf("# topocoll-info: libtopocoll %d.%d.%d on %s, %d processes%s\n\n", ma, mi, pa, lib,
               size, reversed ? " (reversed communicator)" : "");
        print_tunables();

        printf("\n## Processes (rank in the communicator)\n");
        printf("%-5s %-20s %-18s %-5s %s\n", "rank", "host", "binding", "numa", "host: cores numa");
        for (int i = 0; i < size; i++)
            printf("%-5d %-20s %-18s %-5d %d %d\n", i, all[i].host, all[i].binding,
                   all[i].numa_node, all[i].cores_on_host, all[i].numa_on_host);

        printf("\n## Context on %s\n", ctx->comm_name);
        printf("node processes: %d of %d\n", ctx->node_size, ctx->size);
        printf("bcast path:     %s\n", path_names[ctx->bcast_path]);
        const tc_shm_params_t *sp = &ctx->shm_params;
        printf("agreed:         f=%zu S=%d q=%d tree=%s arity=%d\n", sp->f, sp->S, sp->q,
               tc_config_enum_name(TC_CFG_SHM_TREE, sp->tree), sp->arity);
        if (ctx->shm) {
            const tc_shm_layout_t *l = &ctx->shm->layout;
            printf("segment:        %zu bytes (%.1f MiB): header %zu + %d x (control %zu + queue "
                   "%d x %zu)\n",
                   l->total, (double)l->total / 1048576.0, l->header_size, l->p, l->ctrl_size, l->S,
                   l->f);
            printf("                banks of %d buffers (%zu bytes); name %s, unlinked at set-up\n",
                   l->S / l->q, (size_t)(l->S / l->q) * l->f, ctx->shm->name);
            printf("\n## NUMA placement of each rank's control block and queue (move_pages)\n");
            for (int i = 0; i < size; i++) {
                if (all[i].pages_checked < 0)
                    printf("rank %-4d not checked (no NUMA support or node unknown)\n", i);
                else
                    printf("rank %-4d %ld of %ld pages on its node %d: %s\n", i, all[i].pages_local,
                           all[i].pages_checked, all[i].numa_node,
                           all[i].pages_local == all[i].pages_checked ? "ok" : "MISPLACED");
            }
        }
        free(all);
    }
    /* The tree for the given root, one line per rank, in rank order. */
    if (ctx->shm) {
        char line[512];
        int n = snprintf(line, sizeof line, "rank %-4d parent %-4d children", rank,
                         tc_shm_tree_parent(&ctx->shm->tree, root));
        const int *ch = tc_shm_tree_children(&ctx->shm->tree, root);
        for (int c = 0; c < tc_shm_tree_nchildren(&ctx->shm->tree, root) && n < 480; c++)
            n += snprintf(line + n, sizeof line - (size_t)n, " %d", ch[c]);
        char *lines = rank == 0 ? malloc((size_t)size * sizeof line) : NULL;
        MPI_Gather(line, sizeof line, MPI_CHAR, lines, sizeof line, MPI_CHAR, 0, comm);
        if (rank == 0) {
            printf("\n## Notification tree for root %d\n", root);
            for (int i = 0; i < size; i++)
                printf("%s\n", lines + (size_t)i * sizeof line);
            free(lines);
        }
    }
    print_hierarchy(comm, rank, size);
    if (comm != MPI_COMM_WORLD)
        MPI_Comm_free(&comm);
    MPI_Finalize();
    return 0;
}
