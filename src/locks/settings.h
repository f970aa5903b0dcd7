/* Tunables of the reader-writer locks: one entry each in
 * settings.c's table (name, type, default, accepted words, description),
 * indexed by the ids below. The configuration engine (base/config.h) loads
 * and prints them; src/core/settings.c gathers them with the other modules'
 * tables into the one table. */
#ifndef TC_LOCKS_SETTINGS_H
#define TC_LOCKS_SETTINGS_H

#include "base/config.h"

typedef enum {
    TC_LOCKS_CFG_SCHEME, /* TC_LOCK_SCHEME */
    TC_LOCKS_CFG_LAST
} tc_locks_cfg_id_t;

/* TC_LOCK_SCHEME's values are tc_lock_scheme_t (rwlock.h), in the order of
 * its accepted words. */

extern tc_cfg_module_t tc_locks_config;

#endif /* TC_LOCKS_SETTINGS_H */
