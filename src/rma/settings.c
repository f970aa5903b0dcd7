/* The tunables of the one-sided broadcast (settings.h). */
#include "settings.h"

#define GiB (1024.0 * 1024.0 * 1024.0)

static const tc_cfg_desc_t tc_rma_cfg_table[] = {
    [TC_RMA_CFG_BCAST] = {"TC_RMA_BCAST", TC_CFG_TYPE_ENUM, "auto", "auto,linear,binomial", 0, 0,
                          "One-sided broadcast algorithm of TC_Rma_bcast calls that ask for the "
                          "default: linear puts from the root, the binomial tree forwarded by "
                          "helper threads, or auto (binomial from TC_RMA_BCAST_SWITCH bytes)."},
    [TC_RMA_CFG_BCAST_SWITCH] = {"TC_RMA_BCAST_SWITCH", TC_CFG_TYPE_SIZE, "16M", NULL, 0,
                                 1024 * GiB,
                                 "Message size from which TC_RMA_BCAST=auto uses the binomial "
                                 "tree (measured crossover at np=8 on one 2-core node)."},
    [TC_RMA_CFG_PUTLOOP] = {"TC_RMA_PUTLOOP", TC_CFG_TYPE_ENUM, "down", "down,up", 0, 0,
                            "Order of the binomial tree's forwarding: down = largest subtree "
                            "first (log2 P steps), up = paper 002's upward bit scan."},
    [TC_RMA_CFG_POLL_SPIN] = {"TC_RMA_POLL_SPIN", TC_CFG_TYPE_INT, "0", NULL, 0, 1000000,
                              "Polls the RMA helper thread makes (yielding) before it starts "
                              "sleeping; 0 because polling helpers starved MPICH's main "
                              "thread."},
    [TC_RMA_CFG_POLL_MIN_US] = {"TC_RMA_POLL_MIN_US", TC_CFG_TYPE_INT, "16", NULL, 1, 1000000,
                                "The RMA helper's first sleep when idle, microseconds (doubled "
                                "up to TC_RMA_POLL_MAX_US)."},
    [TC_RMA_CFG_POLL_MAX_US] = {"TC_RMA_POLL_MAX_US", TC_CFG_TYPE_INT, "1000", NULL, 1, 1000000,
                                "The RMA helper's longest idle sleep, microseconds (paper: 1 "
                                "ms); an idle helper then costs 2.5-4% of a core."},
};
TC_CFG_MODULE(tc_rma_config, "rma", tc_rma_cfg_table, TC_RMA_CFG_LAST, NULL);
