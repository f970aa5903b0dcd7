/* The tunables of the hierarchy (levels, groups, per-level algorithms) (settings.h). */
#include "settings.h"

#define GiB (1024.0 * 1024.0 * 1024.0)

static const tc_cfg_desc_t tc_hier_cfg_table[] = {
    [TC_HIER_CFG_ENABLE] =
        {"TC_HIER", TC_CFG_TYPE_BOOL, "1", NULL, 0, 1,
         "Use the hierarchical algorithms on communicators that span several nodes or "
         "whose levels TC_LOCALITY_FILE poses; 0 ignores TC_LOCALITY_FILE and leaves "
         "communicators spanning several nodes to the MPI's own collectives."},
    [TC_HIER_CFG_LEVELS] =
        {"TC_HIER_LEVELS", TC_CFG_TYPE_STRING, "numa,package,node,switch1,switch2,switch3,switch4",
         NULL, 0, 0,
         "Hierarchy levels to group processes by, bottom-up, separated by ',' "
         "or '-' (core, l2, l3, numa, package or socket, node, switch1..switch4, "
         "all, none, or paper 001's codes such as NM-SK-ND-SW); a level the "
         "machine does not show is skipped."},
    [TC_HIER_CFG_NETWORK_TOPOLOGY_FILE] =
        {"TC_NETWORK_TOPOLOGY_FILE", TC_CFG_TYPE_STRING, "", NULL, 0, 0,
         "File naming each compute node's switches, one line "
         "'<node> <leaf-switch> [<next-switch> ...]' per node, from "
         "which the switch levels come; empty: no switch levels."},
    [TC_HIER_CFG_LOCALITY_FILE] =
        {"TC_LOCALITY_FILE", TC_CFG_TYPE_STRING, "", NULL, 0, 0,
         "File giving every MPI_COMM_WORLD rank's whole locality vector "
         "(node, package, NUMA node, caches, core, switches) instead of hwloc "
         "and the network file, to pose a machine for tests; empty: none."},
    [TC_HIER_CFG_SHM_LEVEL] = {"TC_HIER_SHM_LEVEL", TC_CFG_TYPE_ENUM, "auto",
                               "auto,none,l2,l3,numa,package,node", 0, 0,
                               "Level whose groups share a memory segment (the levels below it "
                               "are not used); auto takes the highest enabled level up to node "
                               "whose units each lie within one real node, none uses none."},
    [TC_HIER_CFG_BCAST] = {"TC_HIER_BCAST", TC_CFG_TYPE_STRING, "auto", NULL, 0, 0,
                           "Broadcast algorithm per level as 'level:alg[:k],...' with alg flat, "
                           "knomial[:k], scatter_allgather or auto (a bare alg sets every level; "
                           "levels not named use auto: TC_TUNING_FILE, then the LogGP model "
                           "(TC_HIER_MODEL))."},
    [TC_HIER_CFG_REDUCE] = {"TC_HIER_REDUCE", TC_CFG_TYPE_STRING, "auto", NULL, 0, 0,
                            "Reduce algorithm per level as 'level:alg,...' with alg flat, "
                            "binomial, rsg (reduce-scatter then gather) or auto (a bare alg sets "
                            "every level; levels not named use auto: TC_TUNING_FILE, then the "
                            "LogGP model (TC_HIER_MODEL))."},
    [TC_HIER_CFG_ALLREDUCE] = {"TC_HIER_ALLREDUCE", TC_CFG_TYPE_ENUM, "rab", "rab,rb", 0, 0,
                               "How Allreduce combines the levels: rab reduces up to the top "
                               "group, allreduces among its members and broadcasts down; rb "
                               "reduces to rank 0 and broadcasts from it."},
    [TC_HIER_CFG_ALLREDUCE_TOP] = {"TC_HIER_ALLREDUCE_TOP", TC_CFG_TYPE_ENUM, "auto",
                                   "auto,recdbl,ring", 0, 0,
                                   "Allreduce among the top group's members: recursive doubling, "
                                   "ring, or auto (the tuning file, then the model)."},
    [TC_HIER_CFG_ALLGATHER_TOP] = {"TC_HIER_ALLGATHER_TOP", TC_CFG_TYPE_ENUM, "auto",
                                   "auto,recdbl,ring,bruck", 0, 0,
                                   "Allgather(v) exchange among the top group's members: recursive "
                                   "doubling (Bruck when their count is not a power of two), ring, "
                                   "Bruck, or auto (the model)."},
    [TC_HIER_CFG_LARGE] = {"TC_HIER_LARGE", TC_CFG_TYPE_SIZE, "64K", NULL, 0, 64 * GiB,
                           "With TC_HIER_MODEL=0: message size (rounded up to a power of two) "
                           "from which auto takes scatter_allgather, rsg (groups of more than "
                           "two) and ring; ignored by the model."},
    [TC_HIER_CFG_SEGMENT] = {"TC_HIER_SEGMENT", TC_CFG_TYPE_SIZE, "1M", NULL, 4096, GiB,
                             "Large messages cross the hierarchy's levels in pieces of this many "
                             "bytes, so the levels work on different pieces at the same time."},
    [TC_HIER_CFG_A2A_AGGREGATE] = {"TC_HIER_A2A_AGGREGATE", TC_CFG_TYPE_SIZE, "4K", NULL, 0, GiB,
                                   "Alltoall and Alltoallv across nodes: blocks of at most this "
                                   "many bytes are gathered per node by its leader and exchanged "
                                   "as one message per node pair; larger blocks go to the MPI's "
                                   "own (Alltoallv's: straight to their receivers), and 0 turns "
                                   "the aggregation off."},
};
TC_CFG_MODULE(tc_hier_config, "hier", tc_hier_cfg_table, TC_HIER_CFG_LAST, NULL);
