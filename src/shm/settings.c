/* The tunables of the shared-memory module (segments, the pipelined broadcast, the reductions)
 * (settings.h). */
#include "settings.h"

#define MiB (1024.0 * 1024.0)
#define GiB (1024.0 * 1024.0 * 1024.0)

static const tc_cfg_desc_t tc_shm_cfg_table[] = {
    [TC_SHM_CFG_ENABLE] = {"TC_SHM", TC_CFG_TYPE_BOOL, "1", NULL, 0, 1,
                           "Use the shared-memory path inside a node; 0 turns it off (e.g. to "
                           "compare with the MPI's own collectives)."},
    [TC_SHM_CFG_FRAGMENT_SIZE] = {"TC_SHM_FRAGMENT_SIZE", TC_CFG_TYPE_SIZE, "auto", NULL, 4096,
                                  16 * MiB,
                                  "Bytes per pipelined fragment of a shared-memory broadcast; "
                                  "auto derives it from the cost model (sqrt(m t_w / t) for "
                                  "TC_SHM_DESIGN_SIZE m, rounded up to whole pages)."},
    [TC_SHM_CFG_QUEUE_LENGTH] = {"TC_SHM_QUEUE_LENGTH", TC_CFG_TYPE_INT, "auto", NULL, 1, 65536,
                                 "Fragment buffers in each process's shared-memory queue; auto "
                                 "uses TC_SHM_QUEUE_BYTES divided by the fragment size, rounded "
                                 "to a multiple of TC_SHM_BANKS."},
    [TC_SHM_CFG_BANKS] = {"TC_SHM_BANKS", TC_CFG_TYPE_INT, "16", NULL, 1, 63,
                          "Banks each queue is split into, so the root can fill one bank while "
                          "readers are still copying out of another; more banks let the root run "
                          "further ahead of slow readers (a small Gather, or a Bcast or Scatter "
                          "of 57-168 bytes, runs up to this many calls ahead; smaller Bcasts and "
                          "Scatters have a ring of 128 of their own; oversubscribed nodes, "
                          "docs/shm.md) but cut an Allgather or Alltoall into more hand-overs."},
    [TC_SHM_CFG_QUEUE_BYTES] = {"TC_SHM_QUEUE_BYTES", TC_CFG_TYPE_SIZE, "1M", NULL, 4096, GiB,
                                "Shared-memory budget of each process's queue, used when "
                                "TC_SHM_QUEUE_LENGTH is auto."},
    [TC_SHM_CFG_DESIGN_SIZE] = {"TC_SHM_DESIGN_SIZE", TC_CFG_TYPE_SIZE, "100K", NULL, 1, GiB,
                                "Message size in bytes that the automatic fragment buffer is "
                                "tuned for: sqrt(100 KiB x 10000) gives 32 KiB buffers; each "
                                "message is cut for its own size, larger ones into whole "
                                "buffers."},
    [TC_SHM_CFG_TREE] = {"TC_SHM_TREE", TC_CFG_TYPE_ENUM, "kary", "flat,chain,kary,knomial", 0, 0,
                         "Shape of the tree that passes fragment notifications between the "
                         "processes of a node."},
    [TC_SHM_CFG_TREE_ARITY] = {"TC_SHM_TREE_ARITY", TC_CFG_TYPE_INT, "2", NULL, 2, 64,
                               "Children per process in the kary and knomial notification "
                               "trees."},
    [TC_SHM_CFG_MAX_SEGMENT] = {"TC_SHM_MAX_SEGMENT", TC_CFG_TYPE_SIZE, "256M", NULL, 4096,
                                64 * GiB,
                                "Largest shared-memory segment one communicator may create on "
                                "a node; a communicator that needs more uses the MPI's own "
                                "collectives."},
    [TC_SHM_CFG_MAX_TOTAL] = {"TC_SHM_MAX_TOTAL", TC_CFG_TYPE_SIZE, "1G", NULL, 4096, 1024 * GiB,
                              "Largest total of shared-memory segments one process may map "
                              "across all its communicators; beyond it new communicators use "
                              "the MPI's own collectives."},
    [TC_SHM_CFG_MAX_NODE] = {"TC_SHM_MAX_NODE", TC_CFG_TYPE_SIZE, "4G", NULL, 4096, 1024 * GiB,
                             "Largest total of the library's shared-memory segments on one node "
                             "(all processes of this user, counted from /proc at segment "
                             "creation); a communicator that would exceed it uses the MPI's own "
                             "collectives."},
    [TC_SHM_CFG_PLACEMENT] = {"TC_SHM_PLACEMENT", TC_CFG_TYPE_ENUM, "touch", "touch,mbind,none", 0,
                              0,
                              "Where each process's queue lives: touch = the process allocates it "
                              "itself (first-touch, its own NUMA node), mbind = bound to its node "
                              "with libnuma first, none = the creator allocates the whole segment "
                              "(NUMA-unaware baseline)."},
    [TC_SHM_CFG_MECHANISM] = {"TC_SHM_MECHANISM", TC_CFG_TYPE_ENUM, "auto", "auto,memfd,named", 0,
                              0,
                              "How a node's processes share a segment: memfd = an anonymous "
                              "memfd opened through /proc/<pid>/fd or pidfd_getfd (nothing "
                              "named, freed by the kernel when the last process exits), named "
                              "= a /dev/shm/topocoll-<pid>-<random> file unlinked once every "
                              "process has opened it, auto = memfd where every process of the "
                              "node can open it, else named (said once at TC_VERBOSE=1)."},
    [TC_SHM_CFG_TW_RATIO] = {"TC_SHM_TW_RATIO", TC_CFG_TYPE_INT, "10000", NULL, 1, 1000000,
                             "The model's t_w / t: a fragment notification's wait in units of "
                             "one byte's copy time; fragments are sqrt(m t_w / t) bytes (the "
                             "paper used 50; on a 2-core KVM guest a notification costs about "
                             "10000 in-cache byte copies, docs/shm.md)."},
    [TC_SHM_CFG_STREAM_BYTES] = {"TC_SHM_STREAM_BYTES", TC_CFG_TYPE_SIZE, "128K", NULL, 0, GiB,
                                 "A message larger than the whole queue streams through only "
                                 "this many bytes of it (all banks), in fragments of a quarter "
                                 "bank, so the ring stays in the L2 cache; 0 uses the whole "
                                 "queue."},
    [TC_SHM_CFG_REDUCE_SLOTS] = {"TC_SHM_REDUCE_SLOTS", TC_CFG_TYPE_INT, "auto", NULL, 2, 1024,
                                 "Fragment slots in each process's shared-memory area for "
                                 "Reduce and Allreduce, so a process can put the next fragments "
                                 "in place while its peers still combine earlier ones; auto: "
                                 "1 MiB of slots per process, at most 16 MiB per node, at "
                                 "least 8 slots."},
    [TC_SHM_CFG_REDUCE_SLOT_BYTES] = {"TC_SHM_REDUCE_SLOT_BYTES", TC_CFG_TYPE_SIZE, "32K", NULL,
                                      1024, 16 * MiB,
                                      "Bytes per Reduce/Allreduce fragment slot (rounded down to a "
                                      "multiple of 64, a cache line); where "
                                      "TC_SHM_REDUCE_WIDE_BYTES is on, the slots are that large "
                                      "and this is the default fragments' largest size."},
    [TC_SHM_CFG_REDUCE_SLOTS_CONTENDED] =
        {"TC_SHM_REDUCE_SLOTS_CONTENDED", TC_CFG_TYPE_INT, "auto", NULL, 2, 1024,
         "Reduction slots a process may run ahead through while its waits meet CPU-bound "
         "processes (a yield that lost the CPU for a time slice, TC_WAIT=auto), each writer "
         "then choosing its slots; otherwise it uses TC_SHM_REDUCE_SLOTS of them. auto: on a "
         "node with more of the communicator's processes than CPUs, 4 MiB of slots per "
         "process within 16 MiB per node; elsewhere TC_SHM_REDUCE_SLOTS (no extra slots). "
         "Values below TC_SHM_REDUCE_SLOTS mean TC_SHM_REDUCE_SLOTS."},
    [TC_SHM_CFG_REDUCE_WIDE_BYTES] =
        {"TC_SHM_REDUCE_WIDE_BYTES", TC_CFG_TYPE_SIZE, "auto", NULL, 1024, 16 * MiB,
         "Wide reduction fragments: the reduction slots are this large, and a Reduce, "
         "Allreduce or Reduce_scatter of at least TC_SHM_REDUCE_WIDE_MIN bytes on one node "
         "races fragments of up to TC_SHM_REDUCE_SLOT_BYTES against fragments of up to this "
         "many bytes, timed on its own calls, where the fragment size cannot change the "
         "result (beside CPU-bound processes larger fragments need fewer hand-overs; alone "
         "smaller ones stay in cache). auto: 128K on a node with more of the communicator's "
         "processes than CPUs, elsewhere off; values up to TC_SHM_REDUCE_SLOT_BYTES are off."},
    [TC_SHM_CFG_REDUCE_WIDE_MIN] =
        {"TC_SHM_REDUCE_WIDE_MIN", TC_CFG_TYPE_SIZE, "1M", NULL, 0, GiB,
         "Reductions of at least this many bytes race the two fragment sizes where "
         "TC_SHM_REDUCE_WIDE_BYTES is on; 0: never (always the default fragments)."},
    [TC_SHM_CFG_REDUCE_SLICE_MIN] =
        {"TC_SHM_REDUCE_SLICE_MIN", TC_CFG_TYPE_SIZE, "16K", NULL, 0, 16 * MiB,
         "On more than two processes, a Reduce/Allreduce fragment of "
         "at least this many bytes is combined slice by slice, every "
         "process reducing its own slice; smaller ones are folded by the "
         "receivers, or up a tree (TC_SHM_REDUCE_TREE_MAX)."},
    [TC_SHM_CFG_REDUCE_TREE_MAX] = {"TC_SHM_REDUCE_TREE_MAX", TC_CFG_TYPE_SIZE, "16K", NULL, 0,
                                    16 * MiB,
                                    "On more than two processes, a Reduce/Allreduce fragment of "
                                    "at most this many bytes is combined up a tree of partial "
                                    "results (rank order kept); 0 folds every contribution at "
                                    "the receivers. Unless set, 0 on a node with more processes "
                                    "than CPUs (each tree level then costs a scheduler round)."},
    [TC_SHM_CFG_REDUCE_TREE_ARITY] = {"TC_SHM_REDUCE_TREE_ARITY", TC_CFG_TYPE_INT, "2", NULL, 2, 64,
                                      "Children per process in the shared-memory reduction "
                                      "tree."},
    [TC_SHM_CFG_SCAN_TREE_MIN] = {"TC_SHM_SCAN_TREE_MIN", TC_CFG_TYPE_INT, "4", NULL, 0, 1 << 20,
                                  "From this many processes on, a Scan/Exscan of one cache "
                                  "line (and of one slot where the model finds it cheaper) runs "
                                  "in log2(p) rounds (recursive doubling, rank order kept) "
                                  "instead of the chain; 0 never. Unless set, 0 on a node with "
                                  "more processes than CPUs."},
    [TC_SHM_CFG_REDUCE_COPY] = {"TC_SHM_REDUCE_COPY", TC_CFG_TYPE_ENUM, "auto",
                                "auto,memcpy,stream", 0, 0,
                                "How a process copies its part of a Reduce/Allreduce of at least "
                                "256 KiB into its shared slots: memcpy (stays in its cache; the "
                                "reader pulls it cache to cache), stream (non-temporal stores "
                                "through memory), or auto (each process times both on its own "
                                "calls and keeps the cheaper, re-timing the other every 32 "
                                "calls of each size class). Local: processes may differ; results "
                                "do not."},
    [TC_SHM_CFG_BCAST_COPY] = {"TC_SHM_BCAST_COPY", TC_CFG_TYPE_ENUM, "auto", "auto,memcpy,stream",
                               0, 0,
                               "How the root of a shared-memory Bcast of at least 256 KiB (a "
                               "contiguous buffer) copies it into its queue: memcpy, stream "
                               "(non-temporal stores), or auto: messages larger than the queue "
                               "(which stream through TC_SHM_STREAM_BYTES) are timed per size "
                               "class as for TC_SHM_REDUCE_COPY, from the moment the readers "
                               "free the first bank; smaller ones use memcpy. Local: processes "
                               "may differ."},
};
TC_CFG_MODULE(tc_shm_config, "shm", tc_shm_cfg_table, TC_SHM_CFG_LAST, NULL);
