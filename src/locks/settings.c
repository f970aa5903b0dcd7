/* The tunables of the reader-writer locks (settings.h). */
#include "settings.h"

static const tc_cfg_desc_t tc_locks_cfg_table[] = {
    [TC_LOCKS_CFG_SCHEME] = {"TC_LOCK_SCHEME", TC_CFG_TYPE_ENUM, "n-mcs",
                             "rwlock,1n-mutex,2n-mutex,n-mutex-signal,n-mcs", 0, 0,
                             "Reader-writer lock of the node store (values the node's leader "
                             "shares with its processes, e.g. the LogP table); n-mcs had the "
                             "highest read throughput in the lock benchmark."},
};
_Static_assert(sizeof tc_locks_cfg_table / sizeof tc_locks_cfg_table[0] == TC_LOCKS_CFG_LAST,
               "one entry per tc_locks_cfg_id_t");

static tc_cfg_slot_t tc_locks_cfg_slots[TC_LOCKS_CFG_LAST];

tc_cfg_module_t tc_locks_config = {
    .name = "locks",
    .table = tc_locks_cfg_table,
    .count = TC_LOCKS_CFG_LAST,
    .slots = tc_locks_cfg_slots,
};
