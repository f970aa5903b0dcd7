/* The tunables of the reader-writer locks (settings.h). */
#include "settings.h"

static const tc_cfg_desc_t tc_locks_cfg_table[] = {
    [TC_LOCKS_CFG_SCHEME] = {"TC_LOCK_SCHEME", TC_CFG_TYPE_ENUM, "n-mcs",
                             "rwlock,1n-mutex,2n-mutex,n-mutex-signal,n-mcs", 0, 0,
                             "Reader-writer lock of the node store (values the node's leader "
                             "shares with its processes, e.g. the LogP table); n-mcs had the "
                             "highest read throughput in the lock benchmark."},
};
TC_CFG_MODULE(tc_locks_config, "locks", tc_locks_cfg_table, TC_LOCKS_CFG_LAST, NULL);
