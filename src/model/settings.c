/* The tunables of the LogP/LogGP model and the tuning file (settings.h). */
#include "settings.h"

#define MiB (1024.0 * 1024.0)

static const tc_cfg_desc_t tc_model_cfg_table[] = {
    [TC_MODEL_CFG_LOGP_FILE] = {"TC_LOGP_FILE", TC_CFG_TYPE_STRING, "", NULL, 0, 0,
                                "LogP/LogGP parameters per level, as written by topocoll-logp; "
                                "empty: the built-in defaults."},
    [TC_MODEL_CFG_LOGP] =
        {"TC_LOGP", TC_CFG_TYPE_STRING, "", NULL, 0, 0,
         "LogP/LogGP parameters in microseconds, 'L=..,o_s=..,o_r=..,g=..,G=..' for "
         "every level or 'level:L=..,...;level:...'; applied after TC_LOGP_FILE."},
    [TC_MODEL_CFG_TUNING_FILE] =
        {"TC_TUNING_FILE", TC_CFG_TYPE_STRING, "", NULL, 0, 0,
         "File of fixed algorithm choices, lines '<op> <level> <min-bytes> "
         "<alg>[:k]' (docs/model.md), applied after explicit TC_HIER_*/TC_BARRIER "
         "settings and before the LogP model; empty: none."},
    [TC_MODEL_CFG_GAMMA] = {"TC_MODEL_GAMMA", TC_CFG_TYPE_DOUBLE, "6.6667e-05", NULL, 0, 1,
                            "Reduction cost per byte (us) the model uses to choose "
                            "Reduce/Allreduce algorithms; default ~15 GB/s, the library's "
                            "MPI_SUM loop over doubles (base/redop.c), ~15 GB/s on 1 MiB "
                            "vectors in cache on the CI machine."},
    [TC_MODEL_CFG_HIER_MODEL] =
        {"TC_HIER_MODEL", TC_CFG_TYPE_BOOL, "1", NULL, 0, 1,
         "Levels left on auto get the LogGP model's cheapest algorithm per "
         "message size; 0 uses the TC_HIER_LARGE threshold rule instead (the "
         "tuning file applies either way)."},
};
TC_CFG_MODULE(tc_model_config, "model", tc_model_cfg_table, TC_MODEL_CFG_LAST, NULL);
