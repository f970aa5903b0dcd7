/* Tunables of the shared-memory module (segments, the pipelined broadcast, the reductions): one
 * entry each in settings.c's table (name, type, default, accepted words, description), indexed by
 * the ids below. The configuration engine (base/config.h) loads and prints them;
 * src/core/settings.c gathers them with the other modules' tables into the one table. */
#ifndef TC_SHM_SETTINGS_H
#define TC_SHM_SETTINGS_H

#include "base/config.h"

typedef enum {
    TC_SHM_CFG_ENABLE,                 /* TC_SHM */
    TC_SHM_CFG_FRAGMENT_SIZE,          /* TC_SHM_FRAGMENT_SIZE */
    TC_SHM_CFG_QUEUE_LENGTH,           /* TC_SHM_QUEUE_LENGTH */
    TC_SHM_CFG_BANKS,                  /* TC_SHM_BANKS */
    TC_SHM_CFG_QUEUE_BYTES,            /* TC_SHM_QUEUE_BYTES */
    TC_SHM_CFG_DESIGN_SIZE,            /* TC_SHM_DESIGN_SIZE */
    TC_SHM_CFG_TREE,                   /* TC_SHM_TREE */
    TC_SHM_CFG_TREE_ARITY,             /* TC_SHM_TREE_ARITY */
    TC_SHM_CFG_MAX_SEGMENT,            /* TC_SHM_MAX_SEGMENT */
    TC_SHM_CFG_MAX_TOTAL,              /* TC_SHM_MAX_TOTAL */
    TC_SHM_CFG_MAX_NODE,               /* TC_SHM_MAX_NODE */
    TC_SHM_CFG_PLACEMENT,              /* TC_SHM_PLACEMENT */
    TC_SHM_CFG_MECHANISM,              /* TC_SHM_MECHANISM */
    TC_SHM_CFG_TW_RATIO,               /* TC_SHM_TW_RATIO */
    TC_SHM_CFG_STREAM_BYTES,           /* TC_SHM_STREAM_BYTES */
    TC_SHM_CFG_REDUCE_SLOTS,           /* TC_SHM_REDUCE_SLOTS */
    TC_SHM_CFG_REDUCE_SLOT_BYTES,      /* TC_SHM_REDUCE_SLOT_BYTES */
    TC_SHM_CFG_REDUCE_SLOTS_CONTENDED, /* TC_SHM_REDUCE_SLOTS_CONTENDED */
    TC_SHM_CFG_REDUCE_WIDE_BYTES,      /* TC_SHM_REDUCE_WIDE_BYTES */
    TC_SHM_CFG_REDUCE_WIDE_MIN,        /* TC_SHM_REDUCE_WIDE_MIN */
    TC_SHM_CFG_REDUCE_SLICE_MIN,       /* TC_SHM_REDUCE_SLICE_MIN */
    TC_SHM_CFG_REDUCE_TREE_MAX,        /* TC_SHM_REDUCE_TREE_MAX */
    TC_SHM_CFG_REDUCE_TREE_ARITY,      /* TC_SHM_REDUCE_TREE_ARITY */
    TC_SHM_CFG_SCAN_TREE_MIN,          /* TC_SHM_SCAN_TREE_MIN */
    TC_SHM_CFG_REDUCE_COPY,            /* TC_SHM_REDUCE_COPY */
    TC_SHM_CFG_BCAST_COPY,             /* TC_SHM_BCAST_COPY */
    TC_SHM_CFG_LAST
} tc_shm_cfg_id_t;

/* Values of TC_SHM_PLACEMENT, in the order of its accepted words. */
typedef enum {
    TC_PLACEMENT_TOUCH,
    TC_PLACEMENT_MBIND,
    TC_PLACEMENT_NONE,
    TC_PLACEMENT_LAST
} tc_placement_t;

/* Values of TC_SHM_MECHANISM, in the order of its accepted words. */
typedef enum {
    TC_SHM_MECHANISM_AUTO,  /* memfd where every process can open it, else named */
    TC_SHM_MECHANISM_MEMFD, /* memfd only: no segment (the MPI's own) where it fails */
    TC_SHM_MECHANISM_NAMED, /* a /dev/shm name, unlinked once every process has opened it */
    TC_SHM_MECHANISM_LAST
} tc_shm_mechanism_t;

/* TC_SHM_TREE's values are tc_tree_kind_t (tree.h), TC_SHM_REDUCE_COPY's and
 * TC_SHM_BCAST_COPY's TC_SHM_COPY_* (copy.h), TC_LOCK_SCHEME's tc_lock_scheme_t
 * (locks/rwlock.h): each in the order of its accepted words. */

extern tc_cfg_module_t tc_shm_config;

#endif /* TC_SHM_SETTINGS_H */
