/* General tunables of the library (messages, statistics, waiting): one entry each in
 * settings.c's table (name, type, default, accepted words, description),
 * indexed by the ids below. The configuration engine (base/config.h) loads
 * and prints them; src/core/settings.c gathers them with the other modules'
 * tables into the one table. */
#ifndef TC_BASE_SETTINGS_H
#define TC_BASE_SETTINGS_H

#include "config.h"

typedef enum {
    TC_BASE_CFG_VERBOSE,        /* TC_VERBOSE */
    TC_BASE_CFG_STATS,          /* TC_STATS */
    TC_BASE_CFG_WAIT_TIMEOUT,   /* TC_WAIT_TIMEOUT */
    TC_BASE_CFG_SPIN_COUNT,     /* TC_SPIN_COUNT */
    TC_BASE_CFG_WAIT,           /* TC_WAIT */
    TC_BASE_CFG_SPIN_CONTENDED, /* TC_SPIN_CONTENDED_US */
    TC_BASE_CFG_LAST
} tc_base_cfg_id_t;

/* TC_WAIT's values are tc_wait_policy_t (wait.h), in the order of its accepted
 * words. */

extern tc_cfg_module_t tc_base_config;

struct tc_wait_info;
/* The waits' settings into @p info: timeout_s = TC_WAIT_TIMEOUT, spin_polls =
 * TC_SPIN_COUNT, policy = TC_WAIT, contended_spin_s = TC_SPIN_CONTENDED_US; the
 * other fields are left alone. */
void tc_base_settings_wait(struct tc_wait_info *info);

#endif /* TC_BASE_SETTINGS_H */
