/* Tunables of the LogP/LogGP model and the tuning file: one entry each in
 * settings.c's table (name, type, default, accepted words, description),
 * indexed by the ids below. The configuration engine (base/config.h) loads
 * and prints them; src/core/settings.c gathers them with the other modules'
 * tables into the one table. */
#ifndef TC_MODEL_SETTINGS_H
#define TC_MODEL_SETTINGS_H

#include "base/config.h"

typedef enum {
    TC_MODEL_CFG_LOGP_FILE,   /* TC_LOGP_FILE */
    TC_MODEL_CFG_LOGP,        /* TC_LOGP */
    TC_MODEL_CFG_TUNING_FILE, /* TC_TUNING_FILE */
    TC_MODEL_CFG_GAMMA,       /* TC_MODEL_GAMMA */
    TC_MODEL_CFG_HIER_MODEL,  /* TC_HIER_MODEL */
    TC_MODEL_CFG_LAST
} tc_model_cfg_id_t;

extern tc_cfg_module_t tc_model_config;

#endif /* TC_MODEL_SETTINGS_H */
