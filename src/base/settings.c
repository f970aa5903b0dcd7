/* The general tunables of the library (messages, statistics, waiting) (settings.h). */
#include "settings.h"

#include "log.h"
#include "wait.h"

static const tc_cfg_desc_t tc_base_cfg_table[] = {
    [TC_BASE_CFG_VERBOSE] =
        {"TC_VERBOSE", TC_CFG_TYPE_INT, "0", NULL, 0, 3,
         "Messages on stderr: 0 errors only, 1 adds fallbacks and disagreements "
         "(each once), 2 adds context creation and release, 3 adds a line per "
         "call."},
    [TC_BASE_CFG_STATS] = {"TC_STATS", TC_CFG_TYPE_BOOL, "0", NULL, 0, 1,
                           "At MPI_Finalize, print how many calls of each operation took each path "
                           "(shared memory, fallback to the MPI's own collective, ...)."},
    [TC_BASE_CFG_WAIT_TIMEOUT] =
        {"TC_WAIT_TIMEOUT", TC_CFG_TYPE_DOUBLE, "600", NULL, 0, 1e6,
         "Seconds a process may wait inside a collective before the job is "
         "aborted with a message naming the communicator, the stage and the "
         "peer waited for; 0 waits forever."},
    [TC_BASE_CFG_SPIN_COUNT] =
        {"TC_SPIN_COUNT", TC_CFG_TYPE_INT, "200", NULL, 0, 10000000,
         "Polls a waiting process makes before it gives the CPU to other "
         "processes (sleeps or yields, see TC_WAIT); when a communicator has "
         "more processes on a node than the node has CPUs the default becomes "
         "0 (at once)."},
    [TC_BASE_CFG_WAIT] = {"TC_WAIT", TC_CFG_TYPE_ENUM, "auto", "auto,spin,yield,futex", 0, 0,
                          "How a process waits for a peer inside a collective: auto spins "
                          "TC_SPIN_COUNT polls (counted again whenever the peer makes progress), "
                          "then yields while a yield comes back within 0.5 ms (1 ms at most), "
                          "then sleeps on a futex the peer wakes (yields when polling RMA); spin "
                          "never gives the CPU away; yield spins then calls sched_yield() (the "
                          "former behaviour); futex sleeps after TC_SPIN_COUNT polls."},
    [TC_BASE_CFG_SPIN_CONTENDED] =
        {"TC_SPIN_CONTENDED_US", TC_CFG_TYPE_INT, "100", NULL, 0, 1000000,
         "TC_WAIT=auto, while this process's yields meet CPU-bound processes "
         "(a yield lost the CPU for a time slice lately): microseconds a wait "
         "keeps spinning after TC_SPIN_COUNT polls before it sleeps, counted "
         "again whenever the peer makes progress. A peer that runs publishes "
         "within microseconds, and a sleep costs a wake-up that may wait for a "
         "busy process's time slice. 0: sleep at once (the former behaviour); "
         "off where TC_SPIN_COUNT is 0 (more of a communicator's processes on "
         "a node than CPUs)."},
};

/* TC_VERBOSE takes effect as soon as it is loaded. */
static void tc_base_config_loaded(const tc_cfg_module_t *m)
{
    tc_log_level = (int)m->slots[TC_BASE_CFG_VERBOSE].value.i;
}

TC_CFG_MODULE(tc_base_config, "base", tc_base_cfg_table, TC_BASE_CFG_LAST, tc_base_config_loaded);

void tc_base_settings_wait(tc_wait_info_t *info)
{
    tc_cfg_module_t *c = &tc_base_config;
    info->timeout_s = tc_config_double(c, TC_BASE_CFG_WAIT_TIMEOUT);
    info->spin_polls = (uint32_t)tc_config_int(c, TC_BASE_CFG_SPIN_COUNT);
    info->policy = (int)tc_config_int(c, TC_BASE_CFG_WAIT);
    info->contended_spin_s = (double)tc_config_int(c, TC_BASE_CFG_SPIN_CONTENDED) * 1e-6;
}
