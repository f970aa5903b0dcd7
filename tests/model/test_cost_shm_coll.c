/* Shared-memory Reduce/Allreduce costs (src/model/cost_shm_coll.c) against
 * values worked out by hand from docs/model.md ("Prediction of a whole
 * collective"), with parameters chosen so every term is visible: t = 0.001,
 * t_w = 0.5, gamma = 0.002 (so t + gamma = 0.003). The tree shapes are those
 * of shm/reduce.c's range tree, drawn by hand in the comments. */
#include <math.h>
#include <stdio.h>

#include "model/cost_shm_coll.h"

static int failures, checks;

static void check_close(double got, double want, const char *what)
{
    checks++;
    if (!(fabs(got - want) <= 1e-9 * fmax(1.0, fabs(want)))) {
        failures++;
        fprintf(stderr, "FAIL %s: got %.17g, want %.17g\n", what, got, want);
    }
}

static void check_int(int got, int want, const char *what)
{
    checks++;
    if (got != want) {
        failures++;
        fprintf(stderr, "FAIL %s: got %d, want %d\n", what, got, want);
    }
}

static const tc_model_shm_t sp = {0.001, 0.5, 0.5, 0.2};
static const double gamma_ = 0.002;

static void test_from_shm_row(void)
{
    const tc_logp_t p = {.L = 0.1, .o_s = 0.05, .o_r = 0.2, .g = 0.3, .G = 0.0001};
    tc_model_shm_t s;
    /* The shm row: G is copy-in plus copy-out, g a contended fetch-add. */
    tc_model_shm_from_shm_row(&p, &s);
    check_close(s.t, 0.00005, "from_shm_row t = G / 2");
    check_close(s.t_w, 0.3, "from_shm_row t_w = L + o_r");
    check_close(s.t_ws, 0.3, "from_shm_row t_ws = L + o_r");
    check_close(s.t_a, 0.3, "from_shm_row t_a = g");
}

static void test_scheme(void)
{
    const tc_model_shm_red_cfg_t cfg = {56, 4096, 2048, 2};
    const tc_model_shm_red_cfg_t notree = {56, 4096, 0, 2};
    check_int(tc_model_shm_reduce_scheme(0, 1024, 4, &cfg), TC_MODEL_SHM_RED_LAST, "m = 0");
    check_int(tc_model_shm_reduce_scheme(64, 1024, 1, &cfg), TC_MODEL_SHM_RED_LAST, "p = 1");
    check_int(tc_model_shm_reduce_scheme(16, 1024, 4, &cfg), TC_MODEL_SHM_RED_INLINE_TREE,
              "16 B, p 4: inline tree");
    check_int(tc_model_shm_reduce_scheme(56, 1024, 2, &cfg), TC_MODEL_SHM_RED_INLINE,
              "56 B, p 2: inline direct (no tree on two)");
    check_int(tc_model_shm_reduce_scheme(16, 1024, 4, &notree), TC_MODEL_SHM_RED_INLINE,
              "16 B, p 4, tree off: inline direct");
    check_int(tc_model_shm_reduce_scheme(57, 1024, 4, &cfg), TC_MODEL_SHM_RED_TREE,
              "57 B, p 4: tree (min(f, m) <= tree_max)");
    check_int(tc_model_shm_reduce_scheme(100000, 8192, 4, &cfg), TC_MODEL_SHM_RED_SLICE,
              "f >= slice_min, p 4: slice");
    check_int(tc_model_shm_reduce_scheme(100000, 8192, 2, &cfg), TC_MODEL_SHM_RED_DIRECT,
              "p 2: never slice");
    check_int(tc_model_shm_reduce_scheme(100000, 2048, 4, &cfg), TC_MODEL_SHM_RED_TREE,
              "f = tree_max: tree");
    check_int(tc_model_shm_reduce_scheme(100000, 3000, 4, &cfg), TC_MODEL_SHM_RED_DIRECT,
              "tree_max < f < slice_min: direct");
    check_int(tc_model_shm_reduce_scheme(100000, 3000, 4, &notree), TC_MODEL_SHM_RED_DIRECT,
              "tree off: direct");
}

static void test_direct_slice(void)
{
    /* inline, 16 B, p 4: 16 t + 3 t_w + 3*16 gamma + 16 t
     * = 0.016 + 1.5 + 0.096 + 0.016 */
    check_close(tc_model_shm_reduce_direct_cost(16, 16, 4, gamma_, 1, &sp), 1.628,
                "inline direct 16 B p 4");
    /* direct, 10000 B in 4096 B fragments (3), p 2: 4096 t + 1 t_w + 2 t_w
     * + 10000 (t + gamma) = 4.096 + 0.5 + 1.0 + 30 */
    check_close(tc_model_shm_reduce_direct_cost(10000, 4096, 2, gamma_, 0, &sp), 35.596,
                "direct 10000 B p 2");
    /* message shorter than a fragment, p 3: 1000 t + 2 t_w + 2*1000*0.003 */
    check_close(tc_model_shm_reduce_direct_cost(1000, 4096, 3, gamma_, 0, &sp), 8.0,
                "direct 1000 B p 3");
    /* slice, 8192 B in 4096 B fragments (2), p 4: 3*8192 t + (3/4) 8192 gamma
     * + 2*3 t_w + 2*1 t_w = 24.576 + 12.288 + 3 + 1 */
    check_close(tc_model_shm_reduce_slice_cost(8192, 4096, 4, gamma_, &sp), 40.864,
                "slice 8192 B p 4");
    check_close(tc_model_shm_reduce_direct_cost(0, 4096, 4, gamma_, 0, &sp), 0.0, "direct m 0");
    check_close(tc_model_shm_reduce_slice_cost(8192, 4096, 1, gamma_, &sp), 0.0, "slice p 1");
}

static void test_tree(void)
{
    /* p 4, arity 2: rank 0 heads [0,4), its 3 others cut in 2 chunks: [1,2)
     * (a leaf) and [2,4) (rank 2 with the leaf 3). x = 100 B:
     * leaf 100 t = 0.1; rank 2: 0.1 + (t_w + 100*0.003) = 0.9;
     * rank 0: max(0.1, 0.9) + 2 (0.5 + 0.3) = 2.5. */
    check_close(tc_model_shm_tree_up_cost(100, 4, 2, gamma_, &sp), 2.5, "up 100 B p 4 k 2");
    /* p 7, arity 3: chunks [1,3) [3,5) [5,7), each a node with one leaf.
     * x = 10: leaf 0.01; chunk head 0.01 + 0.5 + 0.03 = 0.54; rank 0:
     * 0.54 + 3 * 0.53 = 2.13. */
    check_close(tc_model_shm_tree_up_cost(10, 7, 3, gamma_, &sp), 2.13, "up 10 B p 7 k 3");
    /* p 5, arity 2: [1,3) and [3,5), heads 1 and 3 with one leaf each:
     * x = 10: 0.54 + 2 * 0.53 = 1.6. Arity 1 is clamped to 2. */
    check_close(tc_model_shm_tree_up_cost(10, 5, 2, gamma_, &sp), 1.6, "up 10 B p 5 k 2");
    check_close(tc_model_shm_tree_up_cost(10, 5, 1, gamma_, &sp), 1.6, "up arity 1 -> 2");
    /* p 4, arity 8 (clamped to the 3 others): a flat tree, 3 leaves:
     * x = 10: 0.01 + 3 * 0.53 = 1.6. */
    check_close(tc_model_shm_tree_up_cost(10, 4, 8, gamma_, &sp), 1.6, "up flat p 4");
    /* tree, one fragment: U(100) + t_w + 100 t = 2.5 + 0.5 + 0.1 */
    check_close(tc_model_shm_reduce_tree_cost(100, 4096, 4, 2, gamma_, &sp), 3.1,
                "tree 100 B p 4 k 2");
    /* tree, 3000 B in 1000 B fragments, p 4, k 2: U(1000): leaf 1.0, rank 2
     * 1.0 + 0.5 + 3.0 = 4.5, rank 0 4.5 + 2 * 3.5 = 11.5; + 0.5 + 1.0; later
     * fragments 2 t_w + c0 (2000) 0.003 = 1.0 + 12.0. */
    check_close(tc_model_shm_reduce_tree_cost(3000, 1000, 4, 2, gamma_, &sp), 26.0,
                "tree 3000 B p 4 k 2");
}

static void test_dispatch(void)
{
    const tc_model_shm_red_cfg_t cfg = {56, 4096, 2048, 2};
    const tc_model_shm_red_cfg_t notree = {56, 4096, 0, 2};
    check_close(tc_model_shm_reduce_cost(16, 16, 4, gamma_, &notree, &sp), 1.628,
                "dispatch inline direct");
    /* inline tree, 16 B p 4 k 2: leaf 0.016; rank 2 0.016 + 0.5 + 0.048 =
     * 0.564; rank 0 0.564 + 2 * 0.548 = 1.66; + t_w + 16 t = 2.176 */
    check_close(tc_model_shm_reduce_cost(16, 16, 4, gamma_, &cfg, &sp), 2.176,
                "dispatch inline tree");
    check_close(tc_model_shm_reduce_cost(10000, 4096, 2, gamma_, &cfg, &sp), 35.596,
                "dispatch direct");
    check_close(tc_model_shm_reduce_cost(8192, 4096, 4, gamma_, &cfg, &sp), 40.864,
                "dispatch slice");
    check_close(tc_model_shm_reduce_cost(3000, 1000, 4, gamma_, &cfg, &sp), 26.0, "dispatch tree");
    check_close(tc_model_shm_reduce_cost(0, 1000, 4, gamma_, &cfg, &sp), 0.0, "dispatch m 0");
    check_close(tc_model_shm_reduce_cost(100, 1000, 1, gamma_, &cfg, &sp), 0.0, "dispatch p 1");
}

/* The leaders' Exscan across nodes: ceil(log2 n) rounds of an exchange and
 * a fold, L + o_s + o_r + X m G + m gamma each (L 1, o 0.5 + 0.25,
 * G 0.001, m 1000, gamma 0.002: 1.75 + X + 2). */
static void test_exscan(void)
{
    tc_logp_t lp = {.L = 1, .o_s = 0.5, .o_r = 0.25, .g = 2, .G = 0.001};
    check_close(tc_model_exscan_recdbl_cost(1000, 4, gamma_, &lp), 2 * 4.75, "exscan n 4, X unset");
    lp.X = 1;
    check_close(tc_model_exscan_recdbl_cost(1000, 5, gamma_, &lp), 3 * 4.75, "exscan n 5, X 1");
    lp.X = 2;
    check_close(tc_model_exscan_recdbl_cost(1000, 4, gamma_, &lp), 2 * 5.75, "exscan n 4, X 2");
    check_close(tc_model_exscan_recdbl_cost(1000, 1, gamma_, &lp), 0.0, "exscan n 1");
}

int main(void)
{
    test_from_shm_row();
    test_scheme();
    test_direct_slice();
    test_tree();
    test_dispatch();
    test_exscan();
    printf("%d checks, %d failures\n", checks, failures);
    return failures != 0;
}
