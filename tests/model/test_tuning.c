/* The tuning-file parser (src/model/tuning.c): a good file (every op, level
 * kind, size suffix, ":k", comments, "all", a later line replacing an
 * earlier one), the lookup rule (largest min-bytes <= size), every kind of
 * bad line with its exact message, and unreadable files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/tuning.h"

#include "tc_unit.h"

/* Messages the parser reported, one per line. */
static char msgs[8192];
static int nmsgs;

static void collect(void *arg, const char *msg)
{
    (void)arg;
    size_t n = strlen(msgs);
    snprintf(msgs + n, sizeof msgs - n, "%s\n", msg);
    nmsgs++;
}

static void reset_msgs(void)
{
    msgs[0] = '\0';
    nmsgs = 0;
}

/* The entry that applies, as "alg:k" or "-" (none). */
static const char *lookup(const tc_tuning_t *t, tc_tuning_op_t op, int level, uint64_t n)
{
    static char buf[64];
    const tc_tuning_entry_t *e = tc_tuning_lookup(t, op, level, n);
    if (!e)
        return "-";
    snprintf(buf, sizeof buf, "%s:%d", tc_tuning_alg_name(op, e->alg), e->k);
    return buf;
}

static void test_good(void)
{
    static tc_tuning_t t;
    const char *text = "# a comment line\n"
                       "\n"
                       "bcast   switch1  0     knomial:4   # trailing comment\n"
                       "BCAST   Switch1  256K  scatter_allgather\n"
                       "bcast   node     1k    flat\n"
                       "bcast   node     1K    knomial\n" /* replaces the line above */
                       "reduce  all      1M    rsg\n"
                       "reduce  socket   0     flat\n"
                       "reduce  numa     2M    binomial\n"
                       "allreduce top    0     recdbl\n"
                       "allreduce top    1G    ring\n"
                       "barrier shm      0     tree:8\n"
                       "barrier top      0     dissemination\n"
                       "bcast   top      1T    flat\n"
                       "\t  \r\n"
                       "bcast core 3 knomial:1024"; /* no final newline */
    reset_msgs();
    CHECK(tc_tuning_parse(&t, text, "good.txt", collect, NULL) == 0);
    CHECK(nmsgs == 0 && t.nbad == 0);
    /* switch1 (level 6): knomial:4 from 0, scatter_allgather from 256 KiB. */
    CHECK(!strcmp(lookup(&t, TC_TUNING_OP_BCAST, 6, 0), "knomial:4"));
    CHECK(!strcmp(lookup(&t, TC_TUNING_OP_BCAST, 6, 262143), "knomial:4"));
    CHECK(!strcmp(lookup(&t, TC_TUNING_OP_BCAST, 6, 262144), "scatter_allgather:0"));
    CHECK(!strcmp(lookup(&t, TC_TUNING_OP_BCAST, 6, (uint64_t)1 << 40), "scatter_allgather:0"));
    /* node (5): nothing below 1 KiB (the model decides), knomial:2 from there. */
    CHECK(!strcmp(lookup(&t, TC_TUNING_OP_BCAST, 5, 1023), "-"));
    CHECK(!strcmp(lookup(&t, TC_TUNING_OP_BCAST, 5, 1024), "knomial:2"));
    /* "all": every level and top; socket = package (4); numa (3) overrides
     * from 2 MiB. */
    for (int l = 0; l <= TC_TUNING_LEVEL_TOP; l++)
        CHECK(!strcmp(lookup(&t, TC_TUNING_OP_REDUCE, l, 1 << 20), "rsg:0"));
    CHECK(!strcmp(lookup(&t, TC_TUNING_OP_REDUCE, 4, 100), "flat:0"));
    CHECK(!strcmp(lookup(&t, TC_TUNING_OP_REDUCE, 5, 100), "-"));
    CHECK(!strcmp(lookup(&t, TC_TUNING_OP_REDUCE, 3, 3 << 20), "binomial:0"));
    CHECK(!strcmp(lookup(&t, TC_TUNING_OP_REDUCE, TC_TUNING_LEVEL_SHM, 1 << 20), "-"));
    CHECK(!strcmp(lookup(&t, TC_TUNING_OP_ALLREDUCE, TC_TUNING_LEVEL_TOP, 5), "recdbl:0"));
    CHECK(!strcmp(lookup(&t, TC_TUNING_OP_ALLREDUCE, TC_TUNING_LEVEL_TOP, 1 << 30), "ring:0"));
    CHECK(!strcmp(lookup(&t, TC_TUNING_OP_BARRIER, TC_TUNING_LEVEL_SHM, 0), "tree:8"));
    CHECK(!strcmp(lookup(&t, TC_TUNING_OP_BARRIER, TC_TUNING_LEVEL_TOP, 0), "dissemination:0"));
    CHECK(
        !strcmp(lookup(&t, TC_TUNING_OP_BCAST, TC_TUNING_LEVEL_TOP, ((uint64_t)1 << 40) - 1), "-"));
    CHECK(
        !strcmp(lookup(&t, TC_TUNING_OP_BCAST, TC_TUNING_LEVEL_TOP, (uint64_t)1 << 40), "flat:0"));
    CHECK(!strcmp(lookup(&t, TC_TUNING_OP_BCAST, 0, 3), "knomial:1024"));
    CHECK(!strcmp(lookup(&t, TC_TUNING_OP_BCAST, 0, 2), "-"));
    /* 2 + 1 (node, replaced) + 11 (all) + 1 + 1 + 2 + 2 + 1 + 1 entries. */
    CHECK(t.n == 22);
    /* Names. */
    CHECK(!strcmp(tc_tuning_op_name(TC_TUNING_OP_ALLREDUCE), "allreduce"));
    CHECK(!strcmp(tc_tuning_op_name(TC_TUNING_OP_LAST), "?"));
    CHECK(!strcmp(tc_tuning_level_name(TC_TUNING_LEVEL_SHM), "shm"));
    CHECK(!strcmp(tc_tuning_level_name(4), "package"));
    CHECK(!strcmp(tc_tuning_level_name(TC_TUNING_LEVEL_LAST), "?"));
    CHECK(!strcmp(tc_tuning_alg_name(TC_TUNING_OP_BARRIER, 4), "pairwise"));
    CHECK(!strcmp(tc_tuning_alg_name(TC_TUNING_OP_ALLREDUCE, 2), "?"));
    /* Empty text, NULL table lookups. */
    CHECK(tc_tuning_parse(&t, "", "e", collect, NULL) == 0 && t.n == 0);
    CHECK(tc_tuning_lookup(NULL, TC_TUNING_OP_BCAST, 0, 0) == NULL);
}

/* Each bad line alone: one message, exactly @p want, and no entry. */
static void bad_line(const char *line, const char *want)
{
    static tc_tuning_t t;
    char text[2048];
    snprintf(text, sizeof text, "bcast node 0 flat\n%s\nbcast top 0 flat\n", line);
    reset_msgs();
    int rc = tc_tuning_parse(&t, text, "bad.txt", collect, NULL);
    tu_checks++;
    if (rc != 1 || nmsgs != 1 || strcmp(msgs, want) != 0 || t.n != 2) {
        tu_failures++;
        fprintf(stderr, "FAIL bad line \"%s\": rc %d, %d messages, %d entries:\n  got  %s  want %s",
                line, rc, nmsgs, t.n, msgs, want);
    }
}

static void test_bad(void)
{
    bad_line("bcast node 0",
             "bad.txt:2: 3 fields, expected 4: <op> <level> <min-bytes> <alg>[:k] (e.g. \"bcast "
             "node 64K scatter_allgather\"); line ignored\n");
    bad_line("bcast node 0 flat extra",
             "bad.txt:2: 5 fields, expected 4: <op> <level> <min-bytes> <alg>[:k] (e.g. \"bcast "
             "node 64K scatter_allgather\"); line ignored\n");
    bad_line("gather node 0 flat", "bad.txt:2: unknown operation \"gather\" (expected bcast, "
                                   "reduce, allreduce, barrier); line ignored\n");
    bad_line("bcast rack 0 flat",
             "bad.txt:2: unknown level \"rack\" (expected core, l2, l3, numa, package, socket, "
             "node, switch1..switch4, top, shm, all); line ignored\n");
    bad_line("barrier node 0 central",
             "bad.txt:2: barrier entries take level shm or top (the barrier runs in the segment "
             "and among the top group), not \"node\"; line ignored\n");
    bad_line("barrier all 0 central",
             "bad.txt:2: barrier entries take level shm or top (the barrier runs in the segment "
             "and among the top group), not \"all\"; line ignored\n");
    bad_line("allreduce node 0 ring",
             "bad.txt:2: allreduce entries take level top only (the per-level allreduce runs in "
             "the top group), not \"node\"; line ignored\n");
    bad_line("bcast shm 0 flat", "bad.txt:2: level shm takes barrier entries only (the "
                                 "segment's bcast is not chosen per size); line ignored\n");
    const char *size_msg = "bad.txt:2: bad min-bytes \"%s\" (expected a number of bytes with an "
                           "optional suffix K, M, G or T, binary, at most 2^50); line ignored\n";
    const char *bad_sizes[] = {"-1", "1X", "1KB", "K", "1.5K", "2048T", "1125899906842625", "0x10"};
    for (size_t i = 0; i < sizeof bad_sizes / sizeof bad_sizes[0]; i++) {
        char line[128], want[512];
        snprintf(line, sizeof line, "bcast node %s flat", bad_sizes[i]);
        snprintf(want, sizeof want, size_msg, bad_sizes[i]);
        bad_line(line, want);
    }
    bad_line("barrier top 1 central", "bad.txt:2: barrier has no message size: min-bytes must "
                                      "be 0, not 1; line ignored\n");
    bad_line("bcast node 0 binomial",
             "bad.txt:2: unknown bcast algorithm \"binomial\" (expected flat, knomial[:k], "
             "scatter_allgather); line ignored\n");
    bad_line("reduce node 0 ring", "bad.txt:2: unknown reduce algorithm \"ring\" (expected flat, "
                                   "binomial, rsg); line ignored\n");
    bad_line("allreduce top 0 rsg", "bad.txt:2: unknown allreduce algorithm \"rsg\" (expected "
                                    "recdbl, ring); line ignored\n");
    bad_line("barrier shm 0 butterfly",
             "bad.txt:2: unknown barrier algorithm \"butterfly\" (expected central, tree[:n], "
             "dissemination, tournament, pairwise); line ignored\n");
    bad_line("bcast node 0 flat:4",
             "bad.txt:2: \":4\" after flat: only knomial takes a number; line ignored\n");
    bad_line("reduce node 0 rsg:2",
             "bad.txt:2: \":2\" after rsg: reduce algorithms take no number; line ignored\n");
    bad_line("bcast node 0 knomial:1",
             "bad.txt:2: bad number \"1\" after knomial (expected 2..1024); line ignored\n");
    bad_line("bcast node 0 knomial:1025",
             "bad.txt:2: bad number \"1025\" after knomial (expected 2..1024); line ignored\n");
    bad_line("bcast node 0 knomial:",
             "bad.txt:2: bad number \"\" after knomial (expected 2..1024); line ignored\n");
    bad_line("bcast node 0 knomial:4x",
             "bad.txt:2: bad number \"4x\" after knomial (expected 2..1024); line ignored\n");
    bad_line("barrier shm 0 tree:65",
             "bad.txt:2: bad number \"65\" after tree (expected 2..64); line ignored\n");
    /* A line too long to be an entry. */
    char longline[1200];
    memset(longline, 'x', sizeof longline - 1);
    longline[sizeof longline - 1] = '\0';
    bad_line(longline, "bad.txt:2: line longer than 1023 bytes; line ignored\n");

    /* Several bad lines: each reported with its number, the good ones kept. */
    static tc_tuning_t t;
    reset_msgs();
    CHECK(tc_tuning_parse(&t, "bcast x 0 flat\nbcast node 0 flat\n\nreduce node 1Q rsg\n", "f",
                          collect, NULL) == 2);
    CHECK(nmsgs == 2 && strstr(msgs, "f:1: unknown level") && strstr(msgs, "f:4: bad min-bytes"));
    CHECK(t.n == 1 && t.nbad == 2);
    /* No reporter: still counted. */
    CHECK(tc_tuning_parse(&t, "nonsense\n", "f", NULL, NULL) == 1 && t.n == 0);
    /* Too many entries: the line that overflows is refused as a whole. */
    static char big[64 * 1024];
    size_t n = 0;
    for (int i = 0; i < TC_TUNING_MAX_ENTRIES - 5; i++)
        n += (size_t)snprintf(big + n, sizeof big - n, "bcast node %d flat\n", i);
    n += (size_t)snprintf(big + n, sizeof big - n, "reduce all 0 flat\n");
    reset_msgs();
    CHECK(tc_tuning_parse(&t, big, "big", collect, NULL) == 1);
    CHECK(t.n == TC_TUNING_MAX_ENTRIES - 5);
    CHECK(tc_tuning_lookup(&t, TC_TUNING_OP_REDUCE, 0, 0) == NULL);
    char want[128];
    snprintf(want, sizeof want, "big:%d: more than %d entries; line ignored\n",
             TC_TUNING_MAX_ENTRIES - 4, TC_TUNING_MAX_ENTRIES);
    CHECK(!strcmp(msgs, want));
}

static void test_files(void)
{
    static tc_tuning_t t;
    char path[] = "/tmp/tc_tuning_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    const char *text = "bcast node 64K scatter_allgather\nreduce node 1M bogus\n";
    CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    reset_msgs();
    CHECK(tc_tuning_load_file(&t, path, collect, NULL) == tc_err(TC_ERR_PARSE) && t.nbad == 1);
    char want[256];
    snprintf(want, sizeof want,
             "%s:2: unknown reduce algorithm \"bogus\" (expected flat, binomial, rsg); line "
             "ignored\n",
             path);
    CHECK(!strcmp(msgs, want));
    CHECK(t.n == 1 && !strcmp(lookup(&t, TC_TUNING_OP_BCAST, 5, 65536), "scatter_allgather:0"));
    unlink(path);

    reset_msgs();
    CHECK(tc_tuning_load_file(&t, "/nonexistent/tuning.txt", collect, NULL) == tc_err_sys(ENOENT));
    CHECK(t.n == 0 && !strcmp(msgs, "/nonexistent/tuning.txt: cannot read: No such file or "
                                    "directory; no tuning file is used\n"));
    reset_msgs();
    CHECK(tc_err_kind(tc_tuning_load_file(&t, "/tmp", collect, NULL)) == TC_ERR_SYS && nmsgs == 1 &&
          strstr(msgs, "/tmp: cannot read: "));
}

int main(void)
{
    test_good();
    test_bad();
    test_files();
    printf("%d checks, %d failures\n", tu_checks, tu_failures);
    return tu_failures ? 1 : 0;
}
