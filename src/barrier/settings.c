/* The tunables of the barriers (message-based and shared-memory) (settings.h). */
#include "settings.h"

static const tc_cfg_desc_t tc_barrier_cfg_table[] = {
    [TC_BARRIER_CFG_ALG] = {"TC_BARRIER", TC_CFG_TYPE_ENUM, "auto",
                            "auto,central,tree,dissemination,tournament,pairwise", 0, 0,
                            "Message-based barrier algorithm between nodes (or groups without "
                            "shared memory); auto takes the cheapest by the LogP model."},
    [TC_BARRIER_CFG_ARITY] = {"TC_BARRIER_ARITY", TC_CFG_TYPE_INT, "4", NULL, 2, 64,
                              "Children per process in the message-based combining-tree "
                              "barrier."},
    [TC_BARRIER_CFG_SHM_ALG] = {"TC_SHM_BARRIER", TC_CFG_TYPE_ENUM, "auto",
                                "auto,central,tree,dissemination,tournament", 0, 0,
                                "Shared-memory barrier algorithm inside a node; auto takes the "
                                "cheapest by the LogP model."},
    [TC_BARRIER_CFG_SHM_ARITY] = {"TC_SHM_BARRIER_ARITY", TC_CFG_TYPE_INT, "4", NULL, 2, 64,
                                  "Children per process in the shared-memory combining-tree "
                                  "barrier."},
};
TC_CFG_MODULE(tc_barrier_config, "barrier", tc_barrier_cfg_table, TC_BARRIER_CFG_LAST, NULL);

void tc_barrier_settings_get(tc_barrier_settings_t *s)
{
    tc_cfg_module_t *c = &tc_barrier_config;
    s->shm_override = (int)tc_config_int(c, TC_BARRIER_CFG_SHM_ALG);
    s->shm_arity = (int)tc_config_int(c, TC_BARRIER_CFG_SHM_ARITY);
    s->msg_override = (int)tc_config_int(c, TC_BARRIER_CFG_ALG);
    s->msg_arity = (int)tc_config_int(c, TC_BARRIER_CFG_ARITY);
}
