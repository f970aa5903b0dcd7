/* Network topology file parser (src/hier/netfile.c): good files of depth 1..4,
 * the paper 001 cluster from tests/data, every error with its line number,
 * and hashed lookup on a large file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hier/netfile.h"

#include "tc_unit.h"

/* tests/data: from the build (TC_TEST_DATA_DIR), argv[1], or next to this file. */
static char data_dir[4096];

static void set_data_dir(int argc, char **argv)
{
#ifdef TC_TEST_DATA_DIR
    snprintf(data_dir, sizeof(data_dir), "%s", TC_TEST_DATA_DIR);
#else
    /* __FILE__ is .../tests/hier/test_hier_netfile.c: strip two components. */
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

static int parse(const char *text, tc_hier_netfile_t *nf, char *err, size_t errlen)
{
    return tc_hier_netfile_parse(text, strlen(text), "net", nf, err, errlen);
}

/* text must fail with exactly msg. */
static void expect_error(int line, const char *text, size_t len, const char *msg)
{
    tc_hier_netfile_t nf;
    char err[512] = "";
    int rc = tc_hier_netfile_parse(text, len, "net", &nf, err, sizeof(err));
    if (rc >= 0 || strcmp(err, msg) != 0) {
        fprintf(stderr, "%s:%d: rc %d, message \"%s\", expected \"%s\"\n", __FILE__, line, rc, err,
                msg);
        tu_failures++;
    }
    /* A failed parse leaves nf empty. */
    CHECK(tc_hier_netfile_nnodes(&nf) == 0 && nf.sw == NULL && nf.filename == NULL);
    tc_hier_netfile_free(&nf);
}
#define EXPECT_ERROR(text, msg)   expect_error(__LINE__, text, strlen(text), msg)
#define EXPECT_ERROR_N(t, n, msg) expect_error(__LINE__, t, n, msg)

static void lookup_expect(const tc_hier_netfile_t *nf, const char *node, int depth,
                          const int64_t *ids)
{
    int64_t sw[TC_HIER_MAX_SWITCH];
    int d = -1;
    char err[256] = "";
    int rc = tc_hier_netfile_lookup(nf, node, sw, &d, err, sizeof(err));
    CHECK(rc == 0);
    CHECK(d == depth);
    for (int i = 0; i < TC_HIER_MAX_SWITCH; i++) {
        int64_t want = i < depth ? ids[i] : TC_LOC_UNKNOWN;
        if (sw[i] != want) {
            fprintf(stderr, "node %s depth %d: id %lld, expected %lld\n", node, i, (long long)sw[i],
                    (long long)want);
            tu_failures++;
        }
    }
}

static void test_paper_file(void)
{
    char path[4200], err[512] = "";
    tc_hier_netfile_t nf;
    snprintf(path, sizeof(path), "%s/netfile-paper001.txt", data_dir);
    int rc = tc_hier_netfile_load(path, &nf, err, sizeof(err));
    if (rc != 0)
        fprintf(stderr, "load: %s\n", err);
    CHECK(rc == 0);
    CHECK(tc_hier_netfile_nnodes(&nf) == 64);
    CHECK(nf.depth == 2);
    CHECK(nf.nswitch[0] == 4 && nf.nswitch[1] == 1);
    for (int n = 1; n <= 64; n++) {
        char name[32];
        snprintf(name, sizeof(name), "node%02d", n);
        /* 16 nodes per leaf in file order, so leaf ids 0..3; one spine. */
        int64_t ids[2] = {(n - 1) / 16, 0};
        lookup_expect(&nf, name, 2, ids);
    }
    int64_t sw[TC_HIER_MAX_SWITCH];
    int d = 7;
    rc = tc_hier_netfile_lookup(&nf, "node65", sw, &d, err, sizeof(err));
    CHECK(tc_err_kind(rc) == TC_ERR_NOTFOUND);
    char want[4300];
    snprintf(want, sizeof(want), "%s: node 'node65' not listed", path);
    CHECK(strcmp(err, want) == 0);
    CHECK(d == 0 && sw[0] == TC_LOC_UNKNOWN);
    tc_hier_netfile_free(&nf);
    tc_hier_netfile_free(&nf); /* harmless twice */
}

static void test_depth1_syntax(void)
{
    /* Comments (whole line, trailing, right after a name), CRLF, tabs, blank
     * lines with blanks, no newline at the end. */
    const char *text = "# header\r\n"
                       "\r\n"
                       "   \t \n"
                       "a\tswA\r\n"
                       "  b   swB   # trailing comment\n"
                       "c swA#glued comment\n"
                       "\t# indented comment\n"
                       "d\t \tswC";
    tc_hier_netfile_t nf;
    char err[256] = "";
    CHECK(parse(text, &nf, err, sizeof(err)) == 0);
    CHECK(tc_hier_netfile_nnodes(&nf) == 4);
    CHECK(nf.depth == 1 && nf.nswitch[0] == 3);
    lookup_expect(&nf, "a", 1, (int64_t[]){0});
    lookup_expect(&nf, "b", 1, (int64_t[]){1});
    lookup_expect(&nf, "c", 1, (int64_t[]){0});
    lookup_expect(&nf, "d", 1, (int64_t[]){2});
    tc_hier_netfile_free(&nf);

    /* Only comments: no node, depth 0; every lookup fails. */
    CHECK(parse("# nothing\n\n", &nf, err, sizeof(err)) == 0);
    CHECK(tc_hier_netfile_nnodes(&nf) == 0 && nf.depth == 0);
    int64_t sw[TC_HIER_MAX_SWITCH];
    int d;
    CHECK(tc_err_kind(tc_hier_netfile_lookup(&nf, "a", sw, &d, err, sizeof(err))) ==
          TC_ERR_NOTFOUND);
    CHECK(strcmp(err, "net: node 'a' not listed") == 0);
    tc_hier_netfile_free(&nf);

    /* The length bounds the text: what follows is not read. */
    const char buf[] = "x s1\ny";
    CHECK(tc_hier_netfile_parse(buf, 4, "net", &nf, err, sizeof(err)) == 0);
    CHECK(tc_hier_netfile_nnodes(&nf) == 1);
    tc_hier_netfile_free(&nf);
}

static void test_depth3_and_4(void)
{
    /* Names are per depth: "s" as a leaf and "s" as a spine are different;
     * ids follow first appearance at each depth. */
    const char *text = "n1 l1 m1 s\n"
                       "n2 l1 m1 s\n"
                       "n3 l2 m2 s\n"
                       "n4 s  m2 l1\n"
                       "n5 l3 m1 t\n";
    tc_hier_netfile_t nf;
    char err[256] = "";
    CHECK(parse(text, &nf, err, sizeof(err)) == 0);
    CHECK(nf.depth == 3);
    CHECK(nf.nswitch[0] == 4 && nf.nswitch[1] == 2 && nf.nswitch[2] == 3);
    lookup_expect(&nf, "n1", 3, (int64_t[]){0, 0, 0});
    lookup_expect(&nf, "n2", 3, (int64_t[]){0, 0, 0});
    lookup_expect(&nf, "n3", 3, (int64_t[]){1, 1, 0});
    lookup_expect(&nf, "n4", 3, (int64_t[]){2, 1, 1});
    lookup_expect(&nf, "n5", 3, (int64_t[]){3, 0, 2});
    tc_hier_netfile_free(&nf);

    CHECK(parse("n a b c d\nm a b c e\n", &nf, err, sizeof(err)) == 0);
    CHECK(nf.depth == TC_HIER_MAX_SWITCH);
    lookup_expect(&nf, "m", 4, (int64_t[]){0, 0, 0, 1});
    tc_hier_netfile_free(&nf);
}

static void test_errors(void)
{
    EXPECT_ERROR("a s1\nb s1\n# c\na s2\n", "net:4: node 'a' listed twice");
    EXPECT_ERROR("a s1 t\n\nb s1\n", "net:3: 1 switches listed, but line 1 lists 2");
    EXPECT_ERROR("# x\na s1\nb s1 t\n", "net:3: 2 switches listed, but line 2 lists 1");
    EXPECT_ERROR("a s1\nb 1 2 3 4 5\n", "net:2: 5 switches listed, at most 4 are supported");
    EXPECT_ERROR("a 1 2 3 4 5 6 7 8 9\n", "net:1: 9 switches listed, at most 4 are supported");
    EXPECT_ERROR("a s1\r\nb   # no switch\r\n", "net:2: node 'b' has no switch");
    EXPECT_ERROR("lonely", "net:1: node 'lonely' has no switch");
    EXPECT_ERROR("a s1\nb s\x01\n", "net:2: non-printable character (byte 0x01)");
    EXPECT_ERROR("a s1\n\nb\x7f s\n", "net:3: non-printable character (byte 0x7f)");
    EXPECT_ERROR("n\xc3\xa9 s\n", "net:1: non-printable character (byte 0xc3)");
    EXPECT_ERROR("a s1\rb s2\n", "net:1: non-printable character (byte 0x0d)");
    EXPECT_ERROR("a\vs1\n", "net:1: non-printable character (byte 0x0b)");
    EXPECT_ERROR_N("a s1\nb\0 s1\n", 11, "net:2: non-printable character (byte 0x00)");

    /* 255 characters are fine, 256 are not (in either field). */
    char name[300], text[700], msg[200];
    memset(name, 'x', 256);
    name[256] = '\0';
    snprintf(text, sizeof(text), "ok s\n%s s\n", name + 1);
    tc_hier_netfile_t nf;
    char err[512] = "";
    CHECK(parse(text, &nf, err, sizeof(err)) == 0);
    CHECK(tc_hier_netfile_nnodes(&nf) == 2);
    tc_hier_netfile_free(&nf);
    snprintf(text, sizeof(text), "ok s\n\nn2 %s\n", name);
    snprintf(msg, sizeof(msg), "net:3: name '%.40s...' too long (256 > 255 characters)", name);
    EXPECT_ERROR(text, msg);
    snprintf(text, sizeof(text), "%s s\n", name);
    snprintf(msg, sizeof(msg), "net:1: name '%.40s...' too long (256 > 255 characters)", name);
    EXPECT_ERROR(text, msg);

    /* Unreadable file. */
    CHECK(tc_hier_netfile_load("/nonexistent/topo.txt", &nf, err, sizeof(err)) ==
          tc_err_sys(ENOENT));
    CHECK(strcmp(err, "/nonexistent/topo.txt: cannot read: No such file or directory") == 0);
    CHECK(tc_err_kind(tc_hier_netfile_load("/", &nf, err, sizeof(err))) ==
          TC_ERR_SYS); /* a directory */
    CHECK(strncmp(err, "/: cannot read: ", 16) == 0);
    tc_hier_netfile_free(&nf);

    /* No message buffer, or a tiny one: no crash, truncated message. */
    CHECK(parse("a\n", &nf, NULL, 0) < 0);
    char small[8];
    CHECK(parse("a\n", &nf, small, sizeof(small)) < 0);
    CHECK(strcmp(small, "net:1: ") == 0);
}

static void test_large(void)
{
    /* 20000 nodes, 40 per leaf, 10 leaves per spine: every lookup hashed. */
    enum { N = 20000 };
    size_t cap = (size_t)N * 48, len = 0;
    char *text = malloc(cap);
    CHECK(text != NULL);
    if (text == NULL)
        return;
    for (int n = 0; n < N; n++)
        len +=
            (size_t)snprintf(text + len, cap - len, "cn%05d leaf%d spine%d\n", n, n / 40, n / 400);
    tc_hier_netfile_t nf;
    char err[256] = "";
    CHECK(tc_hier_netfile_parse(text, len, "big", &nf, err, sizeof(err)) == 0);
    CHECK(tc_hier_netfile_nnodes(&nf) == N);
    CHECK(nf.nswitch[0] == N / 40 && nf.nswitch[1] == N / 400);
    for (int n = N - 1; n >= 0; n--) {
        char name[16];
        snprintf(name, sizeof(name), "cn%05d", n);
        lookup_expect(&nf, name, 2, (int64_t[]){n / 40, n / 400});
    }
    tc_hier_netfile_free(&nf);
    free(text);
}

int main(int argc, char **argv)
{
    set_data_dir(argc, argv);
    test_paper_file();
    test_depth1_syntax();
    test_depth3_and_4();
    test_errors();
    test_large();
    if (tu_failures) {
        fprintf(stderr, "%d check(s) failed\n", tu_failures);
        return 1;
    }
    printf("test_hier_netfile: all checks passed\n");
    return 0;
}
