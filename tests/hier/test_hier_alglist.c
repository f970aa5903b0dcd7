/* Unit tests of the per-level algorithm lists (TC_HIER_BCAST, TC_HIER_REDUCE;
 * tc_hier_alglist_parse in src/hier/hier_build.c). Expected choices are
 * written out per level. Plain C, no MPI. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hier/hier_build.h"

#include "tc_unit.h"

#define TOP TC_HIER_LEVEL_TOP

/* Level l must be explicit alg (with radix k) or auto (alg < 0). */
static int is(const tc_hier_alg_choice_t *c, int l, int alg, int k)
{
    if (alg < 0)
        return c[l].is_auto == 1 && c[l].k == 2;
    return c[l].is_auto == 0 && c[l].alg == alg && c[l].k == k;
}

static int all_auto(const tc_hier_alg_choice_t *c)
{
    for (int l = 0; l < TC_HIER_MAX_GROUPS; l++)
        if (!is(c, l, -1, 0))
            return 0;
    return 1;
}

static void test_good(void)
{
    tc_hier_alg_choice_t c[TC_HIER_MAX_GROUPS];
    char err[1024];
    const int F = TC_HIER_BCAST_FLAT, K = TC_HIER_BCAST_KNOMIAL,
              SA = TC_HIER_BCAST_SCATTER_ALLGATHER;

    CHECK(tc_hier_alglist_parse("auto", TC_HIER_LIST_BCAST, "X", c, err, sizeof err) == 0);
    CHECK(all_auto(c) && err[0] == '\0');
    CHECK(tc_hier_alglist_parse("", TC_HIER_LIST_BCAST, "X", c, err, sizeof err) == 0 &&
          all_auto(c));
    CHECK(tc_hier_alglist_parse("  \t", TC_HIER_LIST_REDUCE, "X", c, err, sizeof err) == 0 &&
          all_auto(c));
    CHECK(tc_hier_alglist_parse(NULL, TC_HIER_LIST_BCAST, "X", c, err, sizeof err) == 0 &&
          all_auto(c));

    /* The documented example: named levels set, the others auto. */
    CHECK(tc_hier_alglist_parse("numa:flat,node:knomial:4,switch1:scatter_allgather",
                                TC_HIER_LIST_BCAST, "TC_HIER_BCAST", c, err, sizeof err) == 0);
    CHECK(is(c, TC_LEVEL_NUMA, F, 2) && is(c, TC_LEVEL_NODE, K, 4) &&
          is(c, TC_LEVEL_SWITCH1, SA, 2));
    for (int l = 0; l < TC_HIER_MAX_GROUPS; l++)
        if (l != TC_LEVEL_NUMA && l != TC_LEVEL_NODE && l != TC_LEVEL_SWITCH1)
            CHECK(is(c, l, -1, 0));

    /* Blanks, case, aliases, knomial without k = 2, top. */
    CHECK(tc_hier_alglist_parse(" Socket : KNOMIAL , TOP:Flat ,sw2:scatter-allgather",
                                TC_HIER_LIST_BCAST, "X", c, err, sizeof err) == 0);
    CHECK(is(c, TC_LEVEL_PACKAGE, K, 2) && is(c, TOP, F, 2) && is(c, TC_LEVEL_SWITCH2, SA, 2));
    CHECK(is(c, TC_LEVEL_NODE, -1, 0));

    /* A bare algorithm sets every level, top included; later entries override. */
    CHECK(tc_hier_alglist_parse("flat,node:knomial:3", TC_HIER_LIST_BCAST, "X", c, err,
                                sizeof err) == 0);
    for (int l = 0; l < TC_HIER_MAX_GROUPS; l++)
        CHECK(l == TC_LEVEL_NODE ? is(c, l, K, 3) : is(c, l, F, 2));
    CHECK(tc_hier_alglist_parse("node:knomial:3,flat", TC_HIER_LIST_BCAST, "X", c, err,
                                sizeof err) == 0);
    for (int l = 0; l < TC_HIER_MAX_GROUPS; l++)
        CHECK(is(c, l, F, 2));
    CHECK(tc_hier_alglist_parse("knomial:8,numa:auto", TC_HIER_LIST_BCAST, "X", c, err,
                                sizeof err) == 0);
    for (int l = 0; l < TC_HIER_MAX_GROUPS; l++)
        CHECK(l == TC_LEVEL_NUMA ? is(c, l, -1, 0) : is(c, l, K, 8));

    /* Several levels in one word (the level-list syntax), paper codes. */
    CHECK(tc_hier_alglist_parse("NM-SK:flat,SW:scatter_allgather", TC_HIER_LIST_BCAST, "X", c, err,
                                sizeof err) == 0);
    CHECK(is(c, TC_LEVEL_NUMA, F, 2) && is(c, TC_LEVEL_PACKAGE, F, 2) &&
          is(c, TC_LEVEL_SWITCH1, SA, 2) && is(c, TC_LEVEL_SWITCH4, SA, 2) &&
          is(c, TC_LEVEL_NODE, -1, 0) && is(c, TOP, -1, 0));
    CHECK(tc_hier_alglist_parse("all:flat", TC_HIER_LIST_BCAST, "X", c, err, sizeof err) == 0);
    CHECK(is(c, TC_LEVEL_CORE, F, 2) && is(c, TC_LEVEL_SWITCH4, F, 2) && is(c, TOP, -1, 0));

    /* Radix bounds. */
    CHECK(tc_hier_alglist_parse("node:knomial:2", TC_HIER_LIST_BCAST, "X", c, err, sizeof err) ==
              0 &&
          is(c, TC_LEVEL_NODE, K, 2));
    CHECK(tc_hier_alglist_parse("node:knomial:1024", TC_HIER_LIST_BCAST, "X", c, err, sizeof err) ==
              0 &&
          is(c, TC_LEVEL_NODE, K, 1024));

    /* Reduce names. */
    CHECK(tc_hier_alglist_parse("numa:flat,node:binomial,top:rsg", TC_HIER_LIST_REDUCE,
                                "TC_HIER_REDUCE", c, err, sizeof err) == 0);
    CHECK(is(c, TC_LEVEL_NUMA, TC_HIER_REDUCE_FLAT, 2) &&
          is(c, TC_LEVEL_NODE, TC_HIER_REDUCE_BINOMIAL, 2) && is(c, TOP, TC_HIER_REDUCE_RSG, 2) &&
          is(c, TC_LEVEL_PACKAGE, -1, 0));
    CHECK(tc_hier_alglist_parse("RSG", TC_HIER_LIST_REDUCE, "X", c, err, sizeof err) == 0);
    for (int l = 0; l < TC_HIER_MAX_GROUPS; l++)
        CHECK(is(c, l, TC_HIER_REDUCE_RSG, 2));
}

/* Bad lists: TC_ERR_PARSE, everything auto, one message naming the variable, the
 * value and the bad word. */
static void expect_bad(const char *text, tc_hier_list_kind_t kind, const char *word)
{
    tc_hier_alg_choice_t c[TC_HIER_MAX_GROUPS];
    char err[1024], want[128];
    int rc = tc_hier_alglist_parse(text, kind, "TC_HIER_XX", c, err, sizeof err);

    CHECK(rc == tc_err(TC_ERR_PARSE));
    CHECK(all_auto(c));
    snprintf(want, sizeof want, "bad word \"%s\"", word);
    if (!strstr(err, want) || !strstr(err, "TC_HIER_XX=\"") ||
        !strstr(err, "every level uses auto"))
        fprintf(stderr, "  message for \"%s\": %s\n", text, err);
    CHECK(strstr(err, want) != NULL);
    CHECK(strstr(err, "TC_HIER_XX=\"") != NULL);
    CHECK(strstr(err, "every level uses auto") != NULL);
}

static void test_bad(void)
{
    const tc_hier_list_kind_t B = TC_HIER_LIST_BCAST, R = TC_HIER_LIST_REDUCE;
    expect_bad("numa:flat,bogus:flat", B, "bogus");
    expect_bad("numa:fast", B, "fast");
    expect_bad("numa", B, "numa");   /* a level without an algorithm */
    expect_bad("numa:", B, "");      /* empty algorithm */
    expect_bad("numa:flat,", B, ""); /* empty entry */
    expect_bad("numa:flat,,node:flat", B, "");
    expect_bad(":flat", B, ":flat");      /* an empty level: the entry is quoted */
    expect_bad("node:knomial:1", B, "1"); /* radix below 2 */
    expect_bad("node:knomial:1025", B, "1025");
    expect_bad("node:knomial:4x", B, "4x");
    expect_bad("node:knomial:-4", B, "-4");
    expect_bad("node:flat:4", B, "4"); /* :k only after knomial */
    expect_bad("node:auto:4", B, "4");
    expect_bad("node:knomial:4:5", B, "5");     /* one part too many */
    expect_bad("node:binomial", B, "binomial"); /* a reduce name in the bcast list */
    expect_bad("node:knomial", R, "knomial");   /* and the other way round */
    expect_bad("node:rsg:2", R, "2");
    expect_bad("none:flat", B, "none"); /* names no level */
    expect_bad("numa node:flat", B, "numa node");

    /* The message is always terminated and cut to the buffer. */
    tc_hier_alg_choice_t c[TC_HIER_MAX_GROUPS];
    char small[16];
    memset(small, 'x', sizeof small);
    CHECK(tc_hier_alglist_parse("bogus", B, "TC_HIER_BCAST", c, small, sizeof small) ==
          tc_err(TC_ERR_PARSE));
    CHECK(small[15] == '\0' && strlen(small) == 15);
    CHECK(tc_hier_alglist_parse("bogus", B, "TC_HIER_BCAST", c, NULL, 0) == tc_err(TC_ERR_PARSE));
    CHECK(tc_hier_alglist_parse("flat", (tc_hier_list_kind_t)7, "X", c, NULL, 0) ==
          tc_err(TC_ERR_ARG));
}

int main(void)
{
    test_good();
    test_bad();
    if (tu_failures) {
        fprintf(stderr, "test_hier_alglist: %d check(s) failed\n", tu_failures);
        return 1;
    }
    printf("test_hier_alglist: all checks passed\n");
    return 0;
}
