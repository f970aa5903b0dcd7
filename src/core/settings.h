/* The dispatcher's own tunables (declared once here and in settings.c: name,
 * type, default, accepted words, description), and the gathered list of
 * every module's tunables: the one table that docs/tunables.md,
 * topocoll-tunables and topocoll-info print, in this order. */
#ifndef TC_CORE_SETTINGS_H
#define TC_CORE_SETTINGS_H

#include "base/config.h"

typedef enum {
    TC_CORE_CFG_PMPI_RACE_MIN, /* TC_PMPI_RACE_MIN */
    TC_CORE_CFG_LAST
} tc_core_cfg_id_t;

extern tc_cfg_module_t tc_core_config;

/* Every module's table, in the printed order (base, shm, core, hier, barrier,
 * model, locks, rma). */
extern tc_cfg_module_t *const tc_settings_modules[];
extern const int tc_settings_nmodules;

/* Load every module's values (once per process; thread-safe). The library
 * calls it at the first context creation, so bad values of any module are
 * reported then. */
void tc_settings_load(void);

#endif /* TC_CORE_SETTINGS_H */
