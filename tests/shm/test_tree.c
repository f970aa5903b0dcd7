/* Unit test of the notification trees (src/shm/tree.c).
 *
 * For every kind (flat, chain, k-ary and k-nomial with k = 2, 3, 4), every
 * p in 1..64 and every root, the per-process tables of all p processes are
 * put together and checked as one tree:
 *   (a) the root has parent -1, every other process one parent in range;
 *   (b) children lists agree with parents: c is listed by x iff parent(c) == x;
 *   (c) a walk from the root reaches every process exactly once;
 *   (d) the depth equals an independently computed value (below);
 *   (e) each process has p-1 children entries over all roots, CSR well formed;
 *   (f) tc_shm_tree_parent_rel/children_rel agree with the tables;
 *   plus the documented child order (largest subtree first).
 * Then bad arguments, free on zeroed/failed structs, and large p / arity.
 *
 * Expected depths, from the definitions rather than from tree.c:
 *   flat: 1 (0 for p = 1); chain: p - 1;
 *   k-ary: level d holds k^d nodes, so the depth is the smallest d with
 *     1 + k + ... + k^d = (k^(d+1) - 1)/(k - 1) >= p;
 *   k-nomial: every step to the parent clears one non-zero base-k digit, so
 *     the depth of v is its number of non-zero digits and the tree depth is
 *     the maximum of that over v <= p-1. Closed form: with m = p-1 in base k,
 *     either m itself, or for a digit position i where m has a non-zero digit
 *     a_i: keep the digits above i, put a_i - 1 at i and k-1 everywhere
 *     below. That closed form is cross-checked by brute force here.
 */
#include "shm/tree.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_P 64

static long n_failures;

static const char *kind_name(tc_tree_kind_t kind)
{
    switch (kind) {
    case TC_TREE_FLAT:
        return "flat";
    case TC_TREE_CHAIN:
        return "chain";
    case TC_TREE_KARY:
        return "kary";
    case TC_TREE_KNOMIAL:
        return "knomial";
    default:
        return "?";
    }
}

/* Report a failure with the tree's coordinates; stop printing after a few. */
#define FAIL(kind, arity, p, root, me, ...)                                                        \
    do {                                                                                           \
        if (n_failures++ < 20) {                                                                   \
            fprintf(stderr,                                                                        \
                    "test_tree: FAIL kind=%s arity=%d p=%d root=%d me=%d: ", kind_name(kind),      \
                    (arity), (p), (root), (me));                                                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

/* ---- independent expectations ---------------------------------------------------------- */

static int nonzero_digits(long v, long k)
{
    int n = 0;
    for (; v > 0; v /= k) {
        n += (v % k) != 0;
    }
    return n;
}

static int knomial_depth_closed(int p, int k)
{
    long m = p - 1;
    int digits[64];
    int nd = 0;
    for (long x = m; x > 0; x /= k) {
        digits[nd++] = (int)(x % k);
    }
    int best = nonzero_digits(m, k);
    for (int i = 0; i < nd; i++) {
        if (digits[i] == 0) {
            continue;
        }
        int above = 0;
        for (int j = i + 1; j < nd; j++) {
            above += digits[j] != 0;
        }
        int cand = above + (digits[i] - 1 != 0) + i; /* i lower digits set to k-1 */
        if (cand > best) {
            best = cand;
        }
    }
    return best;
}

static int knomial_depth_brute(int p, int k)
{
    int best = 0;
    for (int v = 0; v < p; v++) {
        int d = nonzero_digits(v, k);
        if (d > best) {
            best = d;
        }
    }
    return best;
}

static int expected_depth(tc_tree_kind_t kind, int k, int p)
{
    switch (kind) {
    case TC_TREE_FLAT:
        return p > 1 ? 1 : 0;
    case TC_TREE_CHAIN:
        return p - 1;
    case TC_TREE_KARY: {
        long total = 1, level = 1;
        int d = 0;
        while (total < p) {
            level *= k;
            total += level;
            d++;
        }
        return d;
    }
    case TC_TREE_KNOMIAL:
        return knomial_depth_closed(p, k);
    default:
        return -1;
    }
}

/* Place value k^j of the lowest non-zero base-k digit of x >= 1. */
static long low_place(long x, long k)
{
    long pw = 1;
    while ((x / pw) % k == 0) {
        pw *= k;
    }
    return pw;
}

static int rel(int rank, int root, int p)
{
    return (rank - root + p) % p;
}

/* ---- one (kind, arity, p): all roots ---------------------------------------------------- */

static long check_config(tc_tree_kind_t kind, int k, int p)
{
    tc_shm_tree_t trees[MAX_P];
    int queue[MAX_P], depth[MAX_P], seen[MAX_P], nlisted[MAX_P], size[MAX_P];
    int *relbuf = malloc((size_t)(p > 1 ? p - 1 : 1) * sizeof(int)); /* exactly p-1: ASan */
    long checked = 0;

    memset(trees, 0, sizeof(trees));
    for (int me = 0; me < p; me++) {
        if (tc_shm_tree_build(&trees[me], p, me, kind, k) != 0) {
            FAIL(kind, k, p, -1, me, "build failed");
            goto out;
        }
        const tc_shm_tree_t *t = &trees[me];
        /* (e) */
        if (t->p != p || t->me != me || t->kind != kind) {
            FAIL(kind, k, p, -1, me, "header fields p=%d me=%d kind=%d", t->p, t->me, t->kind);
        }
        if (t->child_start[0] != 0 || t->child_start[p] != p - 1) {
            FAIL(kind, k, p, -1, me, "child_start[0]=%d child_start[p]=%d, want 0 and %d",
                 t->child_start[0], t->child_start[p], p - 1);
            goto out;
        }
        for (int r = 0; r < p; r++) {
            if (t->child_start[r + 1] < t->child_start[r]) {
                FAIL(kind, k, p, r, me, "child_start not monotone");
                goto out;
            }
        }
    }

    for (int root = 0; root < p; root++) {
        checked++;
        /* (a) */
        memset(nlisted, 0, sizeof(nlisted));
        for (int x = 0; x < p; x++) {
            int par = tc_shm_tree_parent(&trees[x], root);
            if (x == root ? par != -1 : (par < 0 || par >= p || par == x)) {
                FAIL(kind, k, p, root, x, "bad parent %d", par);
                goto out;
            }
        }
        /* (b): every listed child names x as its parent, and every non-root is
         * listed exactly once (so the converse holds too). */
        for (int x = 0; x < p; x++) {
            int n = tc_shm_tree_nchildren(&trees[x], root);
            const int *ch = tc_shm_tree_children(&trees[x], root);
            for (int i = 0; i < n; i++) {
                int c = ch[i];
                if (c < 0 || c >= p) {
                    FAIL(kind, k, p, root, x, "child %d out of range", c);
                    goto out;
                }
                if (tc_shm_tree_parent(&trees[c], root) != x) {
                    FAIL(kind, k, p, root, x, "child %d has parent %d", c,
                         tc_shm_tree_parent(&trees[c], root));
                }
                nlisted[c]++;
            }
        }
        for (int c = 0; c < p; c++) {
            if (nlisted[c] != (c == root ? 0 : 1)) {
                FAIL(kind, k, p, root, c, "listed as a child %d times", nlisted[c]);
            }
        }
        /* (c), (d): breadth-first walk over the children lists. */
        memset(seen, 0, sizeof(seen));
        int head = 0, tail = 0, maxdepth = 0;
        queue[tail++] = root;
        seen[root] = 1;
        depth[root] = 0;
        while (head < tail) {
            int x = queue[head++];
            int n = tc_shm_tree_nchildren(&trees[x], root);
            const int *ch = tc_shm_tree_children(&trees[x], root);
            for (int i = 0; i < n; i++) {
                int c = ch[i];
                if (c < 0 || c >= p || seen[c]++) {
                    FAIL(kind, k, p, root, x, "walk reaches %d twice (or out of range)", c);
                    goto out;
                }
                depth[c] = depth[x] + 1;
                if (depth[c] > maxdepth) {
                    maxdepth = depth[c];
                }
                queue[tail++] = c;
            }
        }
        if (tail != p) {
            FAIL(kind, k, p, root, -1, "walk reaches %d of %d processes", tail, p);
            goto out;
        }
        int want = expected_depth(kind, k, p);
        if (maxdepth != want) {
            FAIL(kind, k, p, root, -1, "depth %d, expected %d", maxdepth, want);
        }
        /* Subtree sizes, leaves first (reverse breadth-first order). */
        for (int i = p - 1; i >= 0; i--) {
            int x = queue[i];
            int n = tc_shm_tree_nchildren(&trees[x], root);
            const int *ch = tc_shm_tree_children(&trees[x], root);
            size[x] = 1;
            for (int j = 0; j < n; j++) {
                size[x] += size[ch[j]];
            }
        }
        /* Child order; (f) relative functions. */
        for (int x = 0; x < p; x++) {
            int v = rel(x, root, p);
            int n = tc_shm_tree_nchildren(&trees[x], root);
            const int *ch = tc_shm_tree_children(&trees[x], root);
            for (int i = 0; i + 1 < n; i++) {
                int c1 = rel(ch[i], root, p), c2 = rel(ch[i + 1], root, p);
                int ok;
                if (kind == TC_TREE_KNOMIAL) {
                    /* child v + d*k^j owns k^j ranks: descending j, then ascending d */
                    long cap1 = low_place(c1 - v, k), cap2 = low_place(c2 - v, k);
                    ok = cap1 > cap2 || (cap1 == cap2 && c1 < c2);
                } else {
                    ok = c1 < c2 && size[ch[i]] >= size[ch[i + 1]];
                }
                if (!ok) {
                    FAIL(kind, k, p, root, x, "children out of order at %d: rel %d then %d", i, c1,
                         c2);
                }
            }
            if (kind == TC_TREE_KNOMIAL) {
                for (int i = 0; i < n; i++) {
                    long c = rel(ch[i], root, p), cap = low_place(c - v, k);
                    long want_size = cap < p - c ? cap : p - c;
                    if (size[ch[i]] != want_size) {
                        FAIL(kind, k, p, root, x, "child rel %ld subtree %d, expected %ld", c,
                             size[ch[i]], want_size);
                    }
                }
            }

            int par = tc_shm_tree_parent(&trees[x], root);
            int prel = tc_shm_tree_parent_rel(kind, k, p, v);
            int pabs = prel < 0 ? -1 : (prel + root) % p;
            if (pabs != par) {
                FAIL(kind, k, p, root, x, "parent_rel(%d)=%d gives %d, table has %d", v, prel, pabs,
                     par);
            }
            int nrel = tc_shm_tree_children_rel(kind, k, p, v, relbuf);
            if (nrel != n) {
                FAIL(kind, k, p, root, x, "children_rel(%d) returns %d, table has %d", v, nrel, n);
                continue;
            }
            for (int i = 0; i < n; i++) {
                if ((relbuf[i] + root) % p != ch[i]) {
                    FAIL(kind, k, p, root, x, "children_rel(%d)[%d]=%d, table has %d", v, i,
                         relbuf[i], ch[i]);
                }
            }
        }
    }
out:
    for (int me = 0; me < p; me++) {
        tc_shm_tree_free(&trees[me]);
    }
    free(relbuf);
    return checked;
}

/* ---- arguments, free, large p and arity ------------------------------------------------- */

static void check_bad_args(void)
{
    static const struct {
        int p, me, kind, arity;
    } bad[] = {
        {0, 0, TC_TREE_FLAT, 2},     {-3, 0, TC_TREE_CHAIN, 2},  {4, -1, TC_TREE_FLAT, 2},
        {4, 4, TC_TREE_KARY, 2},     {4, 0, TC_TREE_LAST, 2},    {4, 0, -1, 2},
        {4, 0, TC_TREE_KARY, 1},     {4, 0, TC_TREE_KARY, 0},    {4, 0, TC_TREE_KNOMIAL, 1},
        {4, 0, TC_TREE_KNOMIAL, -2}, {1, 1, TC_TREE_KNOMIAL, 2},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        tc_shm_tree_t t;
        memset(&t, 0xA5, sizeof(t)); /* garbage in: build must leave it freeable */
        int rc =
            tc_shm_tree_build(&t, bad[i].p, bad[i].me, (tc_tree_kind_t)bad[i].kind, bad[i].arity);
        if (rc != tc_err(TC_ERR_ARG) || t.parent != NULL || t.child_start != NULL ||
            t.children != NULL) {
            FAIL((tc_tree_kind_t)bad[i].kind, bad[i].arity, bad[i].p, -1, bad[i].me,
                 "bad arguments accepted (rc=%d) or struct not left empty", rc);
        }
        tc_shm_tree_free(&t);
        tc_shm_tree_free(&t);
    }
    if (tc_shm_tree_build(NULL, 4, 0, TC_TREE_FLAT, 2) != tc_err(TC_ERR_ARG)) {
        FAIL(TC_TREE_FLAT, 2, 4, -1, 0, "NULL tree accepted");
    }
    if (tc_shm_tree_parent_rel(TC_TREE_KARY, 1, 4, 1) != -1 ||
        tc_shm_tree_parent_rel(TC_TREE_KARY, 2, 4, 4) != -1 ||
        tc_shm_tree_parent_rel(TC_TREE_KARY, 2, 4, 0) != -1 ||
        tc_shm_tree_children_rel(TC_TREE_KNOMIAL, 1, 4, 0, NULL) != 0) {
        FAIL(TC_TREE_KARY, 1, 4, -1, -1, "relative functions accept bad arguments");
    }

    /* free: zeroed struct, twice after a good build; arity ignored for flat/chain */
    tc_shm_tree_t z;
    memset(&z, 0, sizeof(z));
    tc_shm_tree_free(&z);
    tc_shm_tree_free(NULL);
    if (tc_shm_tree_build(&z, 5, 2, TC_TREE_CHAIN, 0) != 0) {
        FAIL(TC_TREE_CHAIN, 0, 5, -1, 2, "chain with arity 0 refused (arity is ignored)");
    }
    tc_shm_tree_free(&z);
    tc_shm_tree_free(&z);
    if (z.parent != NULL || z.child_start != NULL || z.children != NULL) {
        FAIL(TC_TREE_CHAIN, 0, 5, -1, 2, "free did not clear the struct");
    }
}

/* Large p: tables well formed and equal to the relative functions at a few
 * roots; large arity: no overflow in k*v+k or d*k^j, the tree is a star. */
static void check_large(void)
{
    const int p = 1 << 17;
    const int me = 98765;
    static const struct {
        int kind, arity;
    } cfg[] = {
        {TC_TREE_KNOMIAL, 2}, {TC_TREE_KNOMIAL, 7}, {TC_TREE_KARY, 3},
        {TC_TREE_CHAIN, 0},   {TC_TREE_FLAT, 0},
    };
    int *buf = malloc((size_t)(p - 1) * sizeof(int));
    for (size_t i = 0; i < sizeof(cfg) / sizeof(cfg[0]); i++) {
        tc_tree_kind_t kind = (tc_tree_kind_t)cfg[i].kind;
        int k = cfg[i].arity;
        tc_shm_tree_t t;
        if (tc_shm_tree_build(&t, p, me, kind, k) != 0 || t.child_start[p] != p - 1) {
            FAIL(kind, k, p, -1, me, "large build failed or wrong total");
            tc_shm_tree_free(&t);
            continue;
        }
        for (int root = 0; root < p; root += 4099) {
            int v = rel(me, root, p);
            int prel = tc_shm_tree_parent_rel(kind, k, p, v);
            int n = tc_shm_tree_children_rel(kind, k, p, v, buf);
            int ok = tc_shm_tree_parent(&t, root) == (prel < 0 ? -1 : (prel + root) % p) &&
                     tc_shm_tree_nchildren(&t, root) == n;
            for (int j = 0; ok && j < n; j++) {
                ok = tc_shm_tree_children(&t, root)[j] == (buf[j] + root) % p;
            }
            if (!ok) {
                FAIL(kind, k, p, root, me, "large table differs from relative functions");
            }
        }
        tc_shm_tree_free(&t);
    }
    free(buf);

    /* k >= q-1: the root's children are 1..q-1 (a star); k = 500: two levels. */
    static const int big_arity[] = {INT_MAX, INT_MAX / 2 + 1, 1000, 999, 500};
    const int q = 1000;
    int out[999];
    for (size_t i = 0; i < sizeof(big_arity) / sizeof(big_arity[0]); i++) {
        for (int kind = TC_TREE_KARY; kind <= TC_TREE_KNOMIAL; kind++) {
            tc_tree_kind_t kd = (tc_tree_kind_t)kind;
            int k = big_arity[i];
            int star = k >= q - 1;
            int n0 = tc_shm_tree_children_rel(kd, k, q, 0, out);
            int ok = n0 == (star ? q - 1 : k);
            for (int c = 1; ok && c < q; c++) {
                int par = tc_shm_tree_parent_rel(kd, k, q, c);
                int nc = tc_shm_tree_children_rel(kd, k, q, c, NULL);
                if (star) {
                    /* k-nomial with k = q-1: 999 = 1*k^1 owns k ranks, so it comes first */
                    int first_k = kind == TC_TREE_KNOMIAL && k < q;
                    int want = first_k ? (c == 1 ? k : c - 1) : c;
                    ok = par == 0 && out[c - 1] == want && nc == 0;
                } else {
                    /* kary: 1..500 under 0, 501..999 under 1; knomial: 1..500 under 0
                     * (500 first), 501..999 under 500 */
                    int want = c <= 500 ? 0 : (kind == TC_TREE_KARY ? 1 : 500);
                    ok = par == want;
                }
            }
            if (!ok) {
                FAIL(kd, k, q, 0, -1, "large arity: not the expected tree");
            }
        }
    }
}

int main(void)
{
    static const struct {
        tc_tree_kind_t kind;
        int arity;
    } cfg[] = {
        {TC_TREE_FLAT, 0}, {TC_TREE_CHAIN, 0},   {TC_TREE_KARY, 2},    {TC_TREE_KARY, 3},
        {TC_TREE_KARY, 4}, {TC_TREE_KNOMIAL, 2}, {TC_TREE_KNOMIAL, 3}, {TC_TREE_KNOMIAL, 4},
    };
    long trees = 0;

    /* The closed-form k-nomial depth must match brute force before it judges tree.c. */
    for (int k = 2; k <= 5; k++) {
        for (int p = 1; p <= 4096; p++) {
            if (knomial_depth_closed(p, k) != knomial_depth_brute(p, k)) {
                FAIL(TC_TREE_KNOMIAL, k, p, -1, -1, "closed-form depth %d != brute force %d",
                     knomial_depth_closed(p, k), knomial_depth_brute(p, k));
            }
        }
    }
    /* Spot values worked by hand: binomial p=8 -> 3, p=9 -> 3; trinomial p=9 (v=8=22_3) -> 2. */
    if (expected_depth(TC_TREE_KNOMIAL, 2, 8) != 3 || expected_depth(TC_TREE_KNOMIAL, 2, 9) != 3 ||
        expected_depth(TC_TREE_KNOMIAL, 3, 9) != 2 || expected_depth(TC_TREE_KARY, 2, 7) != 2 ||
        expected_depth(TC_TREE_KARY, 2, 8) != 3 || expected_depth(TC_TREE_KARY, 3, 13) != 2) {
        FAIL(TC_TREE_KNOMIAL, 0, 0, -1, -1, "hand-checked expected depths disagree");
    }

    for (size_t i = 0; i < sizeof(cfg) / sizeof(cfg[0]); i++) {
        for (int p = 1; p <= MAX_P; p++) {
            trees += check_config(cfg[i].kind, cfg[i].arity, p);
        }
    }
    check_bad_args();
    check_large();

    printf("test_tree: %ld trees checked, %ld failures\n", trees, n_failures);
    return n_failures == 0 ? 0 : 1;
}
