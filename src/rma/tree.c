/* Binomial tree of the RMA broadcast (paper 002, PutLoop). Pure arithmetic. */
#include <stdlib.h>

#include "rma.h"

int tc_rma_tree_children(int srank, int p, tc_rma_order_t order, int children[32])
{
    int n = 0;
    if (srank < 0 || srank >= p)
        return 0;
    if (order == TC_RMA_ORDER_UP) {
        /* The paper's loop: scan the bits upward while srank's bit is 0; the
         * first child (srank + 1) has the smallest subtree. */
        for (long bit = 1; bit < p; bit <<= 1) {
            if (srank & bit)
                break;
            long prank = srank | bit;
            if (prank >= p)
                break;
            children[n++] = (int)prank;
        }
        return n;
    }
    /* Largest subtree first: the children of srank are srank + 2^k for every
     * 2^k below srank's lowest set bit (all 2^k < p for the root). */
    long lim = 1;
    if (srank == 0) {
        while (lim < p)
            lim <<= 1;
    } else {
        lim = srank & -srank;
    }
    for (long bit = lim >> 1; bit > 0; bit >>= 1)
        if (srank + bit < p)
            children[n++] = (int)(srank + bit);
    return n;
}

int tc_rma_tree_rounds(int p, tc_rma_order_t order)
{
    if (p <= 1)
        return 0;
    /* Simulate: a parent's i-th child gets its data i steps after the parent
     * (PutRequests of one process are sequential). Children have larger
     * relative ranks than their parent, so one pass in rank order works. */
    int *arrive = calloc((size_t)p, sizeof *arrive);
    if (arrive == NULL)
        return -1;
    int rounds = 0, ch[32];
    for (int s = 0; s < p; s++) {
        int n = tc_rma_tree_children(s, p, order, ch);
        for (int i = 0; i < n; i++) {
            arrive[ch[i]] = arrive[s] + i + 1;
            if (arrive[ch[i]] > rounds)
                rounds = arrive[ch[i]];
        }
    }
    free(arrive);
    return rounds;
}
