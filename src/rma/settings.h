/* Tunables of the one-sided broadcast: one entry each in
 * settings.c's table (name, type, default, accepted words, description),
 * indexed by the ids below. The configuration engine (base/config.h) loads
 * and prints them; src/core/settings.c gathers them with the other modules'
 * tables into the one table. */
#ifndef TC_RMA_SETTINGS_H
#define TC_RMA_SETTINGS_H

#include "base/config.h"

typedef enum {
    TC_RMA_CFG_BCAST,        /* TC_RMA_BCAST */
    TC_RMA_CFG_BCAST_SWITCH, /* TC_RMA_BCAST_SWITCH */
    TC_RMA_CFG_PUTLOOP,      /* TC_RMA_PUTLOOP */
    TC_RMA_CFG_POLL_SPIN,    /* TC_RMA_POLL_SPIN */
    TC_RMA_CFG_POLL_MIN_US,  /* TC_RMA_POLL_MIN_US */
    TC_RMA_CFG_POLL_MAX_US,  /* TC_RMA_POLL_MAX_US */
    TC_RMA_CFG_LAST
} tc_rma_cfg_id_t;

/* TC_RMA_BCAST's values are tc_rma_alg_t, TC_RMA_PUTLOOP's tc_rma_order_t
 * (rma.h), each in the order of its accepted words. */

extern tc_cfg_module_t tc_rma_config;

#endif /* TC_RMA_SETTINGS_H */
