/* Tunables of the hierarchy (levels, groups, per-level algorithms): one entry each in
 * settings.c's table (name, type, default, accepted words, description),
 * indexed by the ids below. The configuration engine (base/config.h) loads
 * and prints them; src/core/settings.c gathers them with the other modules'
 * tables into the one table. */
#ifndef TC_HIER_SETTINGS_H
#define TC_HIER_SETTINGS_H

#include "base/config.h"

typedef enum {
    TC_HIER_CFG_ENABLE,                /* TC_HIER */
    TC_HIER_CFG_LEVELS,                /* TC_HIER_LEVELS */
    TC_HIER_CFG_NETWORK_TOPOLOGY_FILE, /* TC_NETWORK_TOPOLOGY_FILE */
    TC_HIER_CFG_LOCALITY_FILE,         /* TC_LOCALITY_FILE */
    TC_HIER_CFG_SHM_LEVEL,             /* TC_HIER_SHM_LEVEL */
    TC_HIER_CFG_BCAST,                 /* TC_HIER_BCAST */
    TC_HIER_CFG_REDUCE,                /* TC_HIER_REDUCE */
    TC_HIER_CFG_ALLREDUCE,             /* TC_HIER_ALLREDUCE */
    TC_HIER_CFG_ALLREDUCE_TOP,         /* TC_HIER_ALLREDUCE_TOP */
    TC_HIER_CFG_ALLGATHER_TOP,         /* TC_HIER_ALLGATHER_TOP */
    TC_HIER_CFG_LARGE,                 /* TC_HIER_LARGE */
    TC_HIER_CFG_SEGMENT,               /* TC_HIER_SEGMENT */
    TC_HIER_CFG_LAST
} tc_hier_cfg_id_t;

/* Values of TC_HIER_SHM_LEVEL, in the order of its accepted words. */
typedef enum {
    TC_HIER_SHM_LEVEL_AUTO,
    TC_HIER_SHM_LEVEL_NONE,
    TC_HIER_SHM_LEVEL_L2,
    TC_HIER_SHM_LEVEL_L3,
    TC_HIER_SHM_LEVEL_NUMA,
    TC_HIER_SHM_LEVEL_PACKAGE,
    TC_HIER_SHM_LEVEL_NODE,
    TC_HIER_SHM_LEVEL_LAST
} tc_hier_shm_level_cfg_t;

/* Values of TC_HIER_ALLREDUCE_TOP, in the order of its accepted words. */
typedef enum {
    TC_HIER_TOP_AUTO,
    TC_HIER_TOP_RECDBL,
    TC_HIER_TOP_RING,
    TC_HIER_TOP_LAST
} tc_hier_top_cfg_t;

/* Values of TC_HIER_ALLGATHER_TOP, in the order of its accepted words. */
typedef enum {
    TC_HIER_AG_TOP_AUTO,
    TC_HIER_AG_TOP_RECDBL,
    TC_HIER_AG_TOP_RING,
    TC_HIER_AG_TOP_BRUCK,
    TC_HIER_AG_TOP_LAST
} tc_hier_ag_top_cfg_t;

/* TC_HIER_ALLREDUCE's values are tc_hier_allreduce_scheme_t (hier.h), in the
 * order of its accepted words. */

extern tc_cfg_module_t tc_hier_config;

#endif /* TC_HIER_SETTINGS_H */
