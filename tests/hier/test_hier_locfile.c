/* Locality override file parser (src/hier/locfile.c): the paper 001 example
 * and a 2x2x2 shape from tests/data, the generator against explicit lines,
 * and every error with its line number. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hier/locfile.h"

#include "tc_unit.h"

static char data_dir[4096];

/* tests/data: from the build (TC_TEST_DATA_DIR), argv[1], or next to this file. */
static void set_data_dir(int argc, char **argv)
{
#ifdef TC_TEST_DATA_DIR
    snprintf(data_dir, sizeof(data_dir), "%s", TC_TEST_DATA_DIR);
#else
    snprintf(data_dir, sizeof(data_dir), "%s", __FILE__);
    for (int i = 0; i < 2; i++) {
        char *slash = strrchr(data_dir, '/');
        if (slash)
            *slash = '\0';
    }
    strncat(data_dir, "/data", sizeof(data_dir) - strlen(data_dir) - 1);
#endif
    if (argc > 1)
        snprintf(data_dir, sizeof(data_dir), "%s", argv[1]);
}

static void expect_loc(int line, const tc_hier_loc_t *got, int rank, const int64_t *want)
{
    for (int l = 0; l < TC_LEVEL_LAST; l++) {
        if (got[rank].id[l] != want[l]) {
            fprintf(stderr, "%s:%d: rank %d level %d: id %lld, expected %lld\n", __FILE__, line,
                    rank, l, (long long)got[rank].id[l], (long long)want[l]);
            tu_failures++;
        }
    }
}

static int parse(const char *text, int p, tc_hier_loc_t *locs, char *err, size_t errlen)
{
    return tc_hier_locfile_parse(text, strlen(text), "loc", p, locs, err, errlen);
}

static void expect_error(int line, const char *text, int p, const char *msg)
{
    tc_hier_loc_t locs[16];
    char err[512] = "";
    int rc = parse(text, p, locs, err, sizeof(err));
    if (rc >= 0 || strcmp(err, msg) != 0) {
        fprintf(stderr, "%s:%d: rc %d, message \"%s\", expected \"%s\"\n", __FILE__, line, rc, err,
                msg);
        tu_failures++;
    }
}
#define EXPECT_ERROR(text, p, msg) expect_error(__LINE__, text, p, msg)

static void test_paper_file(void)
{
    enum { P = 108 };
    tc_hier_loc_t locs[P];
    char path[4200], err[512] = "";
    snprintf(path, sizeof(path), "%s/locfile-paper001.txt", data_dir);
    int rc = tc_hier_locfile_load(path, P, locs, err, sizeof(err));
    if (rc != 0)
        fprintf(stderr, "load: %s\n", err);
    CHECK(rc == 0);
    /* 36 ranks on each of node01, node02 (leaf swl1) and node48 (leaf swl3);
     * names are interned in order of first appearance. */
    for (int r = 0; r < P; r++) {
        int c = r % 36, socket = c / 18, node = r / 36;
        int64_t want[TC_LEVEL_LAST];
        want[TC_LEVEL_CORE] = c;
        want[TC_LEVEL_L2] = c;
        want[TC_LEVEL_L3] = socket;
        want[TC_LEVEL_NUMA] = socket;
        want[TC_LEVEL_PACKAGE] = socket;
        want[TC_LEVEL_NODE] = node;
        want[TC_LEVEL_SWITCH1] = node < 2 ? 0 : 1;
        want[TC_LEVEL_SWITCH2] = 0;
        want[TC_LEVEL_SWITCH3] = TC_LOC_UNKNOWN;
        want[TC_LEVEL_SWITCH4] = TC_LOC_UNKNOWN;
        expect_loc(__LINE__, locs, r, want);
    }
    /* The file lists exactly 108 ranks: a larger communicator misses some. */
    tc_hier_loc_t more[P + 1];
    CHECK(tc_hier_locfile_load(path, P + 1, more, err, sizeof(err)) < 0);
    char want_msg[4300];
    snprintf(want_msg, sizeof(want_msg), "%s: rank 108 not listed (the communicator has 109 ranks)",
             path);
    CHECK(strcmp(err, want_msg) == 0);
}

static void test_2x2x2_file(void)
{
    tc_hier_loc_t locs[8], expl[8];
    char path[4200], err[512] = "";
    snprintf(path, sizeof(path), "%s/locfile-2x2x2.txt", data_dir);
    int rc = tc_hier_locfile_load(path, 8, locs, err, sizeof(err));
    if (rc != 0)
        fprintf(stderr, "load: %s\n", err);
    CHECK(rc == 0);
    /* The same machine written out, with the socket alias and CRLF. */
    const char *text = "0 node=0 socket=0 numa=0\r\n1 node=0 socket=0 numa=1\r\n"
                       "2 node=0 socket=1 numa=2\r\n3 node=0 socket=1 numa=3\r\n"
                       "4 node=1 socket=2 numa=4\r\n5 node=1 socket=2 numa=5\r\n"
                       "6 node=1 socket=3 numa=6\r\n7 node=1 socket=3 numa=7\r\n";
    CHECK(parse(text, 8, expl, err, sizeof(err)) == 0);
    for (int r = 0; r < 8; r++) {
        int64_t want[TC_LEVEL_LAST];
        for (int l = 0; l < TC_LEVEL_LAST; l++)
            want[l] = TC_LOC_UNKNOWN;
        want[TC_LEVEL_NODE] = r / 4;
        want[TC_LEVEL_PACKAGE] = r / 2;
        want[TC_LEVEL_NUMA] = r;
        expect_loc(__LINE__, locs, r, want);
        expect_loc(__LINE__, expl, r, want);
    }
    /* Fewer ranks than slots: the first ones are filled. */
    CHECK(tc_hier_locfile_load(path, 5, locs, err, sizeof(err)) == 0);
    CHECK(locs[4].id[TC_LEVEL_NODE] == 1 && locs[4].id[TC_LEVEL_NUMA] == 4);
    CHECK(tc_hier_locfile_load(path, 9, locs, err, sizeof(err)) < 0);
    char want_msg[4300];
    snprintf(want_msg, sizeof(want_msg), "%s:3: shape holds 8 ranks, the communicator has 9", path);
    CHECK(strcmp(err, want_msg) == 0);
}

static void test_shape_deep(void)
{
    /* Every level but the top switches, counts per parent unit; the expected
     * vectors come from nested loops in slot order. */
    const int cnt[] = {2, 3, 1, 2, 2, 1, 2, 1}; /* switch2 .. core */
    const int lev[] = {TC_LEVEL_SWITCH2, TC_LEVEL_SWITCH1, TC_LEVEL_NODE, TC_LEVEL_PACKAGE,
                       TC_LEVEL_NUMA,    TC_LEVEL_L3,      TC_LEVEL_L2,   TC_LEVEL_CORE};
    enum { P = 2 * 3 * 1 * 2 * 2 * 1 * 2 * 1 };
    tc_hier_loc_t locs[P], want[P];
    int r = 0;
    int idx[8] = {0}; /* global index of the current unit per listed level */
    for (int a = 0; a < cnt[0]; a++)
        for (int b = 0; b < cnt[1]; b++)
            for (int c = 0; c < cnt[2]; c++)
                for (int d = 0; d < cnt[3]; d++)
                    for (int e = 0; e < cnt[4]; e++)
                        for (int f = 0; f < cnt[5]; f++)
                            for (int g = 0; g < cnt[6]; g++)
                                for (int h = 0; h < cnt[7]; h++) {
                                    int loop[8] = {a, b, c, d, e, f, g, h};
                                    /* global index = parent's index * count + local */
                                    for (int i = 0; i < 8; i++)
                                        idx[i] = (i ? idx[i - 1] * cnt[i] : 0) + loop[i];
                                    for (int l = 0; l < TC_LEVEL_LAST; l++)
                                        want[r].id[l] = TC_LOC_UNKNOWN;
                                    for (int i = 0; i < 8; i++)
                                        want[r].id[lev[i]] = idx[i];
                                    r++;
                                }
    char err[256] = "";
    CHECK(parse("# deep\nshape switch2=2 switch1=3 node=1 package=2 numa=2 l3=1 l2=2 core=1\n", P,
                locs, err, sizeof(err)) == 0);
    for (int i = 0; i < P; i++)
        expect_loc(__LINE__, locs, i, want[i].id);

    /* Rank lines after a shape override the keys they name. */
    CHECK(parse("shape node=2 core=2\n3 core=9 switch1=7\n", 4, locs, err, sizeof(err)) == 0);
    expect_loc(__LINE__, locs, 2, (int64_t[]){2, -1, -1, -1, -1, 1, -1, -1, -1, -1});
    expect_loc(__LINE__, locs, 3, (int64_t[]){9, -1, -1, -1, -1, 1, 7, -1, -1, -1});
}

static void test_explicit(void)
{
    /* Names per level by first appearance, numbers kept, missing keys unknown,
     * comments and tabs, any rank order. */
    const char *text = "# two nodes\n"
                       "2\tnode=beta  core=5   # trailing\n"
                       "\n"
                       "0 node=alpha core=0 switch1=leafB\n"
                       "1 core=1 node=beta switch1=leafA#glued\n"
                       "3";
    tc_hier_loc_t locs[4];
    char err[256] = "";
    CHECK(parse(text, 4, locs, err, sizeof(err)) == 0);
    expect_loc(__LINE__, locs, 0, (int64_t[]){0, -1, -1, -1, -1, 1, 0, -1, -1, -1});
    expect_loc(__LINE__, locs, 1, (int64_t[]){1, -1, -1, -1, -1, 0, 1, -1, -1, -1});
    expect_loc(__LINE__, locs, 2, (int64_t[]){5, -1, -1, -1, -1, 0, -1, -1, -1, -1});
    expect_loc(__LINE__, locs, 3, (int64_t[]){-1, -1, -1, -1, -1, -1, -1, -1, -1, -1});
    /* Largest id. */
    CHECK(parse("0 switch4=9223372036854775807\n", 1, locs, err, sizeof(err)) == 0);
    CHECK(locs[0].id[TC_LEVEL_SWITCH4] == INT64_MAX);
}

static void test_errors(void)
{
    EXPECT_ERROR("0 node=a\n1 node=a\n\n0 node=b\n", 2, "loc:4: rank 0 listed twice");
    EXPECT_ERROR("0\n# x\n2 node=a\n", 2,
                 "loc:3: rank '2' out of range (the communicator has 2 ranks)");
    EXPECT_ERROR("99999999999999999999 core=1\n", 2,
                 "loc:1: rank '99999999999999999999' out of range (the communicator has 2 ranks)");
    EXPECT_ERROR("0\nr1 node=a\n", 2, "loc:2: expected a rank number, got 'r1'");
    EXPECT_ERROR("-1 node=a\n", 2, "loc:1: expected a rank number, got '-1'");
    EXPECT_ERROR("0\n1\n3\n", 4, "loc: rank 2 not listed (the communicator has 4 ranks)");
    EXPECT_ERROR("0 node=a\n1 rack=3\n", 2,
                 "loc:2: unknown key 'rack' (accepted: core l2 l3 numa package socket node "
                 "switch1 switch2 switch3 switch4)");
    EXPECT_ERROR("0 node\n", 1, "loc:1: expected key=value, got 'node'");
    EXPECT_ERROR("0 node=\n", 1, "loc:1: node has an empty value");
    EXPECT_ERROR("0 package=1 socket=1\n", 1, "loc:1: package given twice");
    EXPECT_ERROR("0 node=a\n1 node=7\n", 2,
                 "loc:2: node mixes names and numbers (line 1 gives names)");
    EXPECT_ERROR("0 numa=0\n1 numa=x\n", 2,
                 "loc:2: numa mixes names and numbers (line 1 gives numbers)");
    EXPECT_ERROR("shape numa=2\n1 numa=x\n", 2,
                 "loc:2: numa mixes names and numbers (the shape gives numbers)");
    EXPECT_ERROR("0 core=9223372036854775808\n", 1,
                 "loc:1: core='9223372036854775808': number too large");
    EXPECT_ERROR("0 core=1\n1 core=\x01\n", 2, "loc:2: non-printable character (byte 0x01)");
    EXPECT_ERROR("0 core=1\r\r\n", 1, "loc:1: non-printable character (byte 0x0d)");
    EXPECT_ERROR("0 core=1 l2=1 l3=1 numa=1 package=1 node=1 switch1=1 switch2=1 switch3=1 "
                 "switch4=1 core=2\n",
                 1, "loc:1: 11 keys given, there are only 10 levels");
    EXPECT_ERROR("0 core=1 l2=1 core=2\n", 1, "loc:1: core given twice");
    EXPECT_ERROR("# c\n0\nshape node=1\n", 1, "loc:3: shape must be the first line");
    EXPECT_ERROR("shape\n", 1, "loc:1: shape lists no level");
    EXPECT_ERROR("shape core=2 node=2\n", 4,
                 "loc:1: shape: core must come before node (levels go from the top down, each "
                 "once)");
    EXPECT_ERROR("shape node=2 numa=2 numa=2\n", 4,
                 "loc:1: shape: numa must come before numa (levels go from the top down, each "
                 "once)");
    EXPECT_ERROR("shape node=0\n", 1,
                 "loc:1: shape: node='0': expected a count from 1 to 2147483647");
    EXPECT_ERROR("shape node=x\n", 1,
                 "loc:1: shape: node='x': expected a count from 1 to 2147483647");
    EXPECT_ERROR("shape node=65536 core=65536\n", 1, "loc:1: shape: more than 2147483647 slots");
    EXPECT_ERROR("shape node=2 core=2\n\n1 core=1\n1 core=2\n", 4, "loc:4: rank 1 listed twice");
    EXPECT_ERROR("\n\nshape node=2 core=2\n", 5,
                 "loc:3: shape holds 4 ranks, the communicator has 5");

    char name[300], text[400], msg[200];
    memset(name, 'n', 256);
    name[256] = '\0';
    snprintf(text, sizeof(text), "0 node=%s\n", name);
    snprintf(msg, sizeof(msg), "loc:1: node='%.40s...': name too long (256 > 255 characters)",
             name);
    EXPECT_ERROR(text, 1, msg);
    tc_hier_loc_t locs[1];
    char err[256];
    /* One character less is accepted. */
    snprintf(text, sizeof(text), "0 node=%s\n", name + 1);
    CHECK(parse(text, 1, locs, err, sizeof(err)) == 0);

    CHECK(tc_hier_locfile_load("/nonexistent/loc.txt", 1, locs, err, sizeof(err)) ==
          tc_err_sys(ENOENT));
    CHECK(strcmp(err, "/nonexistent/loc.txt: cannot read: No such file or directory") == 0);
    CHECK(parse("0\n", 0, locs, err, sizeof(err)) < 0);
    CHECK(parse("0 x\n", 1, locs, NULL, 0) < 0);
}

int main(int argc, char **argv)
{
    set_data_dir(argc, argv);
    test_paper_file();
    test_2x2x2_file();
    test_shape_deep();
    test_explicit();
    test_errors();
    if (tu_failures) {
        fprintf(stderr, "%d check(s) failed\n", tu_failures);
        return 1;
    }
    printf("test_hier_locfile: all checks passed\n");
    return 0;
}
