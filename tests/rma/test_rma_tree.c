/* Binomial tree of the RMA broadcast (src/rma/tree.c), no MPI: for P = 1..200
 * and both PutLoop orders every relative rank but 0 has exactly one parent,
 * the parent is smaller, the children sets of both orders are equal (only
 * the order differs: ascending for the paper's upward scan, descending for
 * largest subtree first), and the completion steps match the closed forms
 * (ceil(log2 P); k (k + 1) / 2 for P = 2^k) and a brute-force recursion. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rma/rma.h"

#include "tc_unit.h"

static int ceil_log2(int p)
{
    int k = 0;
    while ((1 << k) < p)
        k++;
    return k;
}

/* Finish time of the subtree of s when s gets the data at time t: brute force. */
static int finish(int s, int p, tc_rma_order_t order, int t)
{
    int ch[32], n = tc_rma_tree_children(s, p, order, ch), end = t;
    for (int i = 0; i < n; i++) {
        int f = finish(ch[i], p, order, t + i + 1);
        if (f > end)
            end = f;
    }
    return end;
}

int main(void)
{
    for (int p = 1; p <= 200; p++) {
        int *parents = calloc((size_t)p, sizeof(int));
        for (int i = 0; i < p; i++)
            parents[i] = -1;
        for (int s = 0; s < p; s++) {
            int up[32], down[32];
            int nu = tc_rma_tree_children(s, p, TC_RMA_ORDER_UP, up);
            int nd = tc_rma_tree_children(s, p, TC_RMA_ORDER_DOWN, down);
            CHECK(nu == nd, "p=%d s=%d: %d children up, %d down", p, s, nu, nd);
            for (int i = 0; i < nu && i < nd; i++) {
                CHECK(up[i] == down[nd - 1 - i], "p=%d s=%d: orders are not reverses", p, s);
                CHECK(up[i] > s && up[i] < p, "p=%d s=%d: child %d out of range", p, s, up[i]);
                if (i > 0)
                    CHECK(up[i] > up[i - 1], "p=%d s=%d: upward order not ascending", p, s);
                CHECK(parents[up[i]] == -1, "p=%d: %d has two parents", p, up[i]);
                parents[up[i]] = s;
                /* binomial: child = s + 2^k with 2^k below s's lowest set bit */
                int d = up[i] - s;
                CHECK((d & (d - 1)) == 0 && (s == 0 || d < (s & -s)), "p=%d: %d -> %d not binomial",
                      p, s, up[i]);
            }
        }
        for (int s = 1; s < p; s++)
            CHECK(parents[s] >= 0, "p=%d: %d unreached", p, s);
        free(parents);
        int rd = tc_rma_tree_rounds(p, TC_RMA_ORDER_DOWN),
            ru = tc_rma_tree_rounds(p, TC_RMA_ORDER_UP);
        CHECK(rd == ceil_log2(p), "p=%d: down rounds %d, want %d", p, rd, ceil_log2(p));
        CHECK(rd == finish(0, p, TC_RMA_ORDER_DOWN, 0), "p=%d: down rounds vs brute force", p);
        CHECK(ru == finish(0, p, TC_RMA_ORDER_UP, 0), "p=%d: up rounds %d vs brute force", p, ru);
        CHECK(ru >= rd, "p=%d: upward order faster than downward?", p);
        if ((p & (p - 1)) == 0) {
            int k = ceil_log2(p);
            CHECK(ru == k * (k + 1) / 2, "p=%d: up rounds %d, want %d", p, ru, k * (k + 1) / 2);
        }
    }
    printf("rma tree: %s\n", tu_failures ? "FAILED" : "ok");
    return tu_failures != 0;
}
