/* Message tags on a context's private communicator (ctx->priv), one list so
 * that no two of the library's point-to-point protocols share a tag. Calls
 * on one communicator are ordered, so a shared tag would rarely misdeliver,
 * but only rarely: a process that finished one collective may already send
 * the next one's message while a peer still receives the first's (wildcard
 * or out-of-order receives would then match the wrong one). A new protocol
 * takes new numbers here. */
#ifndef TC_BASE_TAGS_H
#define TC_BASE_TAGS_H

enum {
    /* hier/hier_coll.c: the per-level Bcast, Reduce, Allreduce */
    TC_TAG_HIER_BCAST = 0x7c01,
    TC_TAG_HIER_REDUCE = 0x7c02,
    TC_TAG_HIER_ALLREDUCE = 0x7c03,
    /* core/barrier.c: the message-based barrier stage */
    TC_TAG_BARRIER_ARRIVE = 0x7c10,
    TC_TAG_BARRIER_RELEASE = 0x7c11,
    TC_TAG_BARRIER_TOP = 0x7c12,
    /* hier/hier_allgather.c */
    TC_TAG_HIER_ALLGATHER = 0x7c18,
    /* hier/hier_alltoall.c: the node leaders' aggregation; Alltoallv's sizes
     * and its blocks sent straight to their receivers */
    TC_TAG_A2A_GATHER = 0x7c21,
    TC_TAG_A2A_EXCHANGE = 0x7c22,
    TC_TAG_A2A_SCATTER = 0x7c23,
    TC_TAG_A2A_COUNTS = 0x7c24,
    TC_TAG_A2A_DIRECT = 0x7c25,
    /* core/scan.c: the leaders' exclusive scan of the node totals */
    TC_TAG_SCAN_HIER = 0x7c28,
    /* hier/level_gather.c */
    TC_TAG_HIER_GATHER_SIZES = 0x7c30,
    TC_TAG_HIER_GATHER = 0x7c31,
    TC_TAG_HIER_SCATTER_SIZES = 0x7c32,
    TC_TAG_HIER_SCATTER = 0x7c33,
    /* hier/hier_reduce_scatter.c */
    TC_TAG_HIER_RS_UP = 0x7c38,
    TC_TAG_HIER_RS_TOP = 0x7c39,
    TC_TAG_HIER_RS_DOWN = 0x7c3a,
    /* rma/runtime.c */
    TC_TAG_RMA_CREATE = 0x7c52,
};

#endif /* TC_BASE_TAGS_H */
