/* The dispatcher's tunables and the gathered list (settings.h). */
#include "settings.h"

#include "barrier/settings.h"
#include "base/settings.h"
#include "hier/settings.h"
#include "locks/settings.h"
#include "model/settings.h"
#include "rma/settings.h"
#include "shm/settings.h"

#define GiB (1024.0 * 1024.0 * 1024.0)

static const tc_cfg_desc_t tc_core_cfg_table[] = {
    [TC_CORE_CFG_PMPI_RACE_MIN] =
        {"TC_PMPI_RACE_MIN", TC_CFG_TYPE_SIZE, "64K", NULL, 0, 1 * GiB,
         "TC_Bcast, TC_Reduce, TC_Allreduce, TC_Allgather(v), TC_Gather, TC_Scatter, "
         "TC_Reduce_scatter(_block), TC_Scan, TC_Exscan and TC_Alltoall of at least this many "
         "bytes (in "
         "all) time the library's path and the MPI's own on the caller's calls, per size "
         "class (powers "
         "of two), and use the faster: both alternate for the first calls of a class, "
         "then the faster runs, the other again every 32nd call (every 256th once it was "
         "found 1.5x slower or more three times in a row, and less often the slower it was, "
         "until the probes cost at most 1/32 of the time, up to every 65536th; at once when "
         "the one in use "
         "got twice as slow). Times are agreed over the processes, so all run the same "
         "one. Reductions race only when every algorithm gives the same bits: integer and "
         "logical operations, and on two processes sums and products of floats and "
         "doubles; other floating-point reductions always take the library's path. "
         "TC_Gatherv and TC_Scatterv never race (only the root knows their size); "
         "TC_Alltoallv, whose blocks each process knows only of its own, races on the "
         "previous TC_Alltoallv's largest block times the number of processes (agreed "
         "inside a node; the first call does not race). 0: never race."},
};
TC_CFG_MODULE(tc_core_config, "core", tc_core_cfg_table, TC_CORE_CFG_LAST, NULL);

tc_cfg_module_t *const tc_settings_modules[] = {
    &tc_base_config,    &tc_shm_config,   &tc_core_config,  &tc_hier_config,
    &tc_barrier_config, &tc_model_config, &tc_locks_config, &tc_rma_config,
};
const int tc_settings_nmodules = (int)(sizeof tc_settings_modules / sizeof tc_settings_modules[0]);

void tc_settings_load(void)
{
    tc_config_load(tc_settings_modules, tc_settings_nmodules);
}
