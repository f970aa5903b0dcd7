/* The tunables tables (each module's settings.c, gathered in
 * src/core/settings.c) and the configuration engine (src/base/config.c): every default parses, good
 * and bad values of every type, the error text, and loading from the
 * environment. Plain C, no MPI. Expected values are literal arithmetic. */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "barrier/barrier.h"
#include "barrier/settings.h"
#include "base/config.h"
#include "base/log.h"
#include "base/settings.h"
#include "base/wait.h"
#include "core/settings.h"
#include "hier/hier.h"
#include "hier/settings.h"
#include "locks/rwlock.h"
#include "locks/settings.h"
#include "model/settings.h"
#include "rma/settings.h"
#include "shm/settings.h"
#include "shm/tree.h"

static int failures;

/* The tests name variables as a user does; these find them in the gathered
 * table (core/settings.c) and call the engine with the module and its id. */
static tc_cfg_module_t *find(const char *name, int *id)
{
    tc_cfg_module_t *m = tc_config_find(tc_settings_modules, tc_settings_nmodules, name, id);
    if (!m) {
        fprintf(stderr, "FAIL: %s is not in the table\n", name);
        exit(1);
    }
    return m;
}

static int nall(void)
{
    int n = 0;
    for (int i = 0; i < tc_settings_nmodules; i++)
        n += tc_settings_modules[i]->count;
    return n;
}

/* The name of entry @p k of the printed table. */
static const char *nth(int k)
{
    for (int i = 0; i < tc_settings_nmodules; i++) {
        if (k < tc_settings_modules[i]->count)
            return tc_settings_modules[i]->table[k].name;
        k -= tc_settings_modules[i]->count;
    }
    return "?";
}

static const tc_cfg_desc_t *desc(const char *name)
{
    int id;
    tc_cfg_module_t *m = find(name, &id);
    return tc_config_desc(m, id);
}

static int64_t cint(const char *name)
{
    int id;
    tc_cfg_module_t *m = find(name, &id);
    return tc_config_int(m, id);
}

static double cdouble(const char *name)
{
    int id;
    tc_cfg_module_t *m = find(name, &id);
    return tc_config_double(m, id);
}

static tc_cfg_source_t csource(const char *name)
{
    int id;
    tc_cfg_module_t *m = find(name, &id);
    return tc_config_source(m, id);
}

static const char *craw(const char *name)
{
    int id;
    tc_cfg_module_t *m = find(name, &id);
    return tc_config_raw(m, id);
}

static const char *cstring(const char *name)
{
    int id;
    tc_cfg_module_t *m = find(name, &id);
    return tc_config_string(m, id);
}

static const char *cenum(const char *name, int64_t index)
{
    int id;
    tc_cfg_module_t *m = find(name, &id);
    return tc_config_enum_name(m, id, index);
}

static void ctext(const char *name, char *buf, size_t len)
{
    int id;
    tc_cfg_module_t *m = find(name, &id);
    tc_config_value_text(m, id, buf, len);
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    failures++;
}

/* Parse @p text for @p id and expect success with integer value @p want. */
static void expect_int(const char *id, const char *text, int64_t want)
{
    tc_cfg_value_t v = {-7, -7};
    char err[256] = "";
    const tc_cfg_desc_t *d = desc(id);
    if (tc_config_parse(d, text, &v, err, sizeof err) != 0) {
        fail("%s=\"%s\": rejected (%s), expected %lld", d->name, text, err, (long long)want);
        return;
    }
    if (v.i != want || v.d != (double)want)
        fail("%s=\"%s\": got i=%lld d=%g, expected %lld", d->name, text, (long long)v.i, v.d,
             (long long)want);
}

static void expect_double(const char *id, const char *text, double want)
{
    tc_cfg_value_t v = {-7, -7};
    char err[256] = "";
    const tc_cfg_desc_t *d = desc(id);
    if (tc_config_parse(d, text, &v, err, sizeof err) != 0) {
        fail("%s=\"%s\": rejected (%s), expected %g", d->name, text, err, want);
        return;
    }
    if (v.d != want)
        fail("%s=\"%s\": got %.17g, expected %.17g", d->name, text, v.d, want);
}

/* Expect rejection with a message naming the variable, quoting @p text and
 * containing @p accepted (what is accepted). */
static void expect_bad(const char *id, const char *text, const char *accepted)
{
    tc_cfg_value_t v = {-7, -7};
    char err[512] = "";
    char head[256];
    const tc_cfg_desc_t *d = desc(id);
    if (tc_config_parse(d, text, &v, err, sizeof err) == 0) {
        fail("%s=\"%s\": accepted (i=%lld d=%g), expected an error", d->name, text, (long long)v.i,
             v.d);
        return;
    }
    snprintf(head, sizeof head, "%s=\"%s\": expected ", d->name, text);
    if (strncmp(err, head, strlen(head)) != 0)
        fail("%s=\"%s\": message \"%s\" does not start with \"%s\"", d->name, text, err, head);
    if (accepted && !strstr(err, accepted))
        fail("%s=\"%s\": message \"%s\" does not say \"%s\"", d->name, text, err, accepted);
}

static void test_table(void)
{
    const char *seen[256];
    for (int id = 0; id < nall(); id++) {
        const tc_cfg_desc_t *d = desc(nth(id));
        tc_cfg_value_t v;
        char err[256];
        if (!d || !d->name || !d->def || !d->doc) {
            fail("entry %d incomplete", id);
            continue;
        }
        seen[id] = d->name;
        if (strncmp(d->name, "TC_", 3) != 0)
            fail("%s: not a TC_ name", d->name);
        for (int j = 0; j < id; j++)
            if (strcmp(seen[j], d->name) == 0)
                fail("%s: listed twice", d->name);
        if (tc_config_parse(d, d->def, &v, err, sizeof err) != 0)
            fail("%s: default \"%s\" does not parse: %s", d->name, d->def, err);
        if ((d->type == TC_CFG_TYPE_ENUM) != (d->accepted != NULL))
            fail("%s: accepted list must be set exactly for enums", d->name);
        if (strlen(d->doc) < 20 || d->doc[strlen(d->doc) - 1] != '.')
            fail("%s: doc should be a sentence", d->name);
        if (d->type != TC_CFG_TYPE_ENUM && d->type != TC_CFG_TYPE_BOOL && !(d->min <= d->max))
            fail("%s: bounds %g..%g", d->name, d->min, d->max);
    }
    /* Each module's table: its id enum indexes it, the ids past it have no entry. */
    for (int i = 0; i < tc_settings_nmodules; i++) {
        tc_cfg_module_t *m = tc_settings_modules[i];
        if (!m->name || m->count <= 0 || !m->table || !m->slots)
            fail("module %d incomplete", i);
        if (tc_config_desc(m, m->count) != NULL || tc_config_desc(m, -1) != NULL ||
            tc_config_int(m, m->count) != 0 || tc_config_raw(m, -1) != NULL)
            fail("module %s: an id out of range should have no entry", m->name);
        for (int j = 0; j < i; j++)
            if (tc_settings_modules[j] == m || strcmp(tc_settings_modules[j]->name, m->name) == 0)
                fail("module %s gathered twice", m->name);
    }
    static const struct {
        tc_cfg_module_t *m;
        int last;
    } lasts[] = {{&tc_base_config, TC_BASE_CFG_LAST},       {&tc_shm_config, TC_SHM_CFG_LAST},
                 {&tc_core_config, TC_CORE_CFG_LAST},       {&tc_hier_config, TC_HIER_CFG_LAST},
                 {&tc_barrier_config, TC_BARRIER_CFG_LAST}, {&tc_model_config, TC_MODEL_CFG_LAST},
                 {&tc_locks_config, TC_LOCKS_CFG_LAST},     {&tc_rma_config, TC_RMA_CFG_LAST}};
    if ((int)(sizeof lasts / sizeof lasts[0]) != tc_settings_nmodules)
        fail("%d modules gathered, expected %d", tc_settings_nmodules,
             (int)(sizeof lasts / sizeof lasts[0]));
    for (size_t i = 0; i < sizeof lasts / sizeof lasts[0]; i++)
        if (tc_settings_modules[i] != lasts[i].m || lasts[i].m->count != lasts[i].last)
            fail("module %zu: not %s with %d entries", i, lasts[i].m->name, lasts[i].last);

    /* Names as the README and the design documents spell them. */
    static const struct {
        const char *id;
        const char *name;
    } names[] = {{"TC_VERBOSE", "TC_VERBOSE"},
                 {"TC_STATS", "TC_STATS"},
                 {"TC_WAIT_TIMEOUT", "TC_WAIT_TIMEOUT"},
                 {"TC_SPIN_COUNT", "TC_SPIN_COUNT"},
                 {"TC_WAIT", "TC_WAIT"},
                 {"TC_SPIN_CONTENDED_US", "TC_SPIN_CONTENDED_US"},
                 {"TC_SHM", "TC_SHM"},
                 {"TC_SHM_FRAGMENT_SIZE", "TC_SHM_FRAGMENT_SIZE"},
                 {"TC_SHM_QUEUE_LENGTH", "TC_SHM_QUEUE_LENGTH"},
                 {"TC_SHM_BANKS", "TC_SHM_BANKS"},
                 {"TC_SHM_QUEUE_BYTES", "TC_SHM_QUEUE_BYTES"},
                 {"TC_SHM_DESIGN_SIZE", "TC_SHM_DESIGN_SIZE"},
                 {"TC_SHM_TREE", "TC_SHM_TREE"},
                 {"TC_SHM_TREE_ARITY", "TC_SHM_TREE_ARITY"},
                 {"TC_SHM_MAX_SEGMENT", "TC_SHM_MAX_SEGMENT"},
                 {"TC_SHM_MAX_TOTAL", "TC_SHM_MAX_TOTAL"},
                 {"TC_SHM_MAX_NODE", "TC_SHM_MAX_NODE"},
                 {"TC_SHM_PLACEMENT", "TC_SHM_PLACEMENT"},
                 {"TC_SHM_MECHANISM", "TC_SHM_MECHANISM"},
                 {"TC_SHM_TW_RATIO", "TC_SHM_TW_RATIO"},
                 {"TC_SHM_STREAM_BYTES", "TC_SHM_STREAM_BYTES"},
                 {"TC_SHM_REDUCE_SLOTS", "TC_SHM_REDUCE_SLOTS"},
                 {"TC_SHM_REDUCE_SLOT_BYTES", "TC_SHM_REDUCE_SLOT_BYTES"},
                 {"TC_SHM_REDUCE_SLOTS_CONTENDED", "TC_SHM_REDUCE_SLOTS_CONTENDED"},
                 {"TC_SHM_REDUCE_WIDE_BYTES", "TC_SHM_REDUCE_WIDE_BYTES"},
                 {"TC_SHM_REDUCE_WIDE_MIN", "TC_SHM_REDUCE_WIDE_MIN"},
                 {"TC_SHM_REDUCE_SLICE_MIN", "TC_SHM_REDUCE_SLICE_MIN"},
                 {"TC_SHM_REDUCE_TREE_MAX", "TC_SHM_REDUCE_TREE_MAX"},
                 {"TC_SHM_REDUCE_TREE_ARITY", "TC_SHM_REDUCE_TREE_ARITY"},
                 {"TC_SHM_SCAN_TREE_MIN", "TC_SHM_SCAN_TREE_MIN"},
                 {"TC_SHM_REDUCE_COPY", "TC_SHM_REDUCE_COPY"},
                 {"TC_SHM_BCAST_COPY", "TC_SHM_BCAST_COPY"},
                 {"TC_PMPI_RACE_MIN", "TC_PMPI_RACE_MIN"},
                 {"TC_HIER", "TC_HIER"},
                 {"TC_HIER_LEVELS", "TC_HIER_LEVELS"},
                 {"TC_NETWORK_TOPOLOGY_FILE", "TC_NETWORK_TOPOLOGY_FILE"},
                 {"TC_LOCALITY_FILE", "TC_LOCALITY_FILE"},
                 {"TC_HIER_SHM_LEVEL", "TC_HIER_SHM_LEVEL"},
                 {"TC_HIER_BCAST", "TC_HIER_BCAST"},
                 {"TC_HIER_REDUCE", "TC_HIER_REDUCE"},
                 {"TC_HIER_ALLREDUCE", "TC_HIER_ALLREDUCE"},
                 {"TC_HIER_ALLREDUCE_TOP", "TC_HIER_ALLREDUCE_TOP"},
                 {"TC_HIER_ALLGATHER_TOP", "TC_HIER_ALLGATHER_TOP"},
                 {"TC_HIER_LARGE", "TC_HIER_LARGE"},
                 {"TC_HIER_SEGMENT", "TC_HIER_SEGMENT"},
                 {"TC_HIER_A2A_AGGREGATE", "TC_HIER_A2A_AGGREGATE"},
                 {"TC_BARRIER", "TC_BARRIER"},
                 {"TC_BARRIER_ARITY", "TC_BARRIER_ARITY"},
                 {"TC_SHM_BARRIER", "TC_SHM_BARRIER"},
                 {"TC_SHM_BARRIER_ARITY", "TC_SHM_BARRIER_ARITY"},
                 {"TC_LOGP_FILE", "TC_LOGP_FILE"},
                 {"TC_LOGP", "TC_LOGP"},
                 {"TC_TUNING_FILE", "TC_TUNING_FILE"},
                 {"TC_MODEL_GAMMA", "TC_MODEL_GAMMA"},
                 {"TC_HIER_MODEL", "TC_HIER_MODEL"},
                 {"TC_LOCK_SCHEME", "TC_LOCK_SCHEME"},
                 {"TC_RMA_BCAST", "TC_RMA_BCAST"},
                 {"TC_RMA_BCAST_SWITCH", "TC_RMA_BCAST_SWITCH"},
                 {"TC_RMA_PUTLOOP", "TC_RMA_PUTLOOP"},
                 {"TC_RMA_POLL_SPIN", "TC_RMA_POLL_SPIN"},
                 {"TC_RMA_POLL_MIN_US", "TC_RMA_POLL_MIN_US"},
                 {"TC_RMA_POLL_MAX_US", "TC_RMA_POLL_MAX_US"}};
    /* ... and in the printed order (docs/tunables.md). */
    if (sizeof names / sizeof names[0] != (size_t)nall())
        fail("test list out of date");
    for (size_t i = 0; i < sizeof names / sizeof names[0] && (int)i < nall(); i++)
        if (strcmp(nth((int)i), names[i].name) != 0 || strcmp(desc(names[i].id)->name, names[i].id))
            fail("entry %d is %s, expected %s", (int)i, nth((int)i), names[i].name);
}

/* The default values, stated independently of the table's text. */
static void test_defaults(void)
{
    const struct {
        const char *id;
        double want;
    } defs[] = {{"TC_VERBOSE", 0},
                {"TC_STATS", 0},
                {"TC_WAIT_TIMEOUT", 600},
                {"TC_SPIN_COUNT", 200},
                {"TC_SPIN_CONTENDED_US", 100},
                {"TC_SHM", 1},
                {"TC_SHM_FRAGMENT_SIZE", 0},
                {"TC_SHM_QUEUE_LENGTH", 0},
                {"TC_SHM_BANKS", 16},
                {"TC_SHM_QUEUE_BYTES", 1024 * 1024},
                {"TC_SHM_DESIGN_SIZE", 100 * 1024},
                {"TC_SHM_TREE", TC_TREE_KARY},
                {"TC_SHM_TREE_ARITY", 2},
                {"TC_SHM_MAX_SEGMENT", 256.0 * 1024 * 1024},
                {"TC_SHM_MAX_TOTAL", 1024.0 * 1024 * 1024},
                {"TC_SHM_MAX_NODE", 4.0 * 1024 * 1024 * 1024},
                {"TC_SHM_PLACEMENT", TC_PLACEMENT_TOUCH},
                {"TC_SHM_MECHANISM", TC_SHM_MECHANISM_AUTO},
                {"TC_LOCK_SCHEME", TC_LOCK_SCHEME_N_MCS},
                {"TC_SHM_TW_RATIO", 10000},
                {"TC_SHM_STREAM_BYTES", 128 * 1024},
                {"TC_SHM_REDUCE_SLOTS", 0},
                {"TC_SHM_REDUCE_SLOT_BYTES", 32 * 1024},
                {"TC_SHM_REDUCE_SLOTS_CONTENDED", 0},
                {"TC_SHM_REDUCE_WIDE_BYTES", 0},
                {"TC_SHM_REDUCE_WIDE_MIN", 1024 * 1024},
                {"TC_SHM_REDUCE_SLICE_MIN", 16 * 1024},
                {"TC_HIER", 1},
                {"TC_HIER_SHM_LEVEL", TC_HIER_SHM_LEVEL_AUTO},
                {"TC_HIER_ALLREDUCE", TC_HIER_ALLREDUCE_RAB},
                {"TC_HIER_ALLREDUCE_TOP", TC_HIER_TOP_AUTO},
                {"TC_HIER_ALLGATHER_TOP", TC_HIER_AG_TOP_AUTO},
                {"TC_HIER_LARGE", 64 * 1024},
                {"TC_HIER_SEGMENT", 1024 * 1024},
                {"TC_HIER_A2A_AGGREGATE", 4 * 1024},
                /* STRING: the value is the trimmed length */
                {"TC_HIER_LEVELS", 49},
                {"TC_NETWORK_TOPOLOGY_FILE", 0},
                {"TC_LOCALITY_FILE", 0},
                {"TC_HIER_BCAST", 4},
                {"TC_HIER_REDUCE", 4}};
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++) {
        const tc_cfg_desc_t *d = desc(defs[i].id);
        tc_cfg_value_t v = {-7, -7};
        if (tc_config_parse(d, d->def, &v, NULL, 0) != 0 || v.d != defs[i].want)
            fail("%s: default gives %g, expected %g", d->name, v.d, defs[i].want);
    }
}

static void test_bool(void)
{
    const char *yes[] = {"1", "yes", "YES", "on", "On", "true", "TRUE", " true ", "\tyes\n"};
    const char *no[] = {"0", "no", "No", "off", "OFF", "false", "False", "  0"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        expect_int("TC_SHM", yes[i], 1);
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        expect_int("TC_STATS", no[i], 0);
    const char *bad[] = {"", "  ", "2", "-1", "y", "n", "yess", "truee", "on1", "0x1", "1 1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_bad("TC_SHM", bad[i], "0, 1, yes, no, on, off, true, false");
}

static void test_int(void)
{
    expect_int("TC_VERBOSE", "0", 0);
    expect_int("TC_VERBOSE", "3", 3);
    expect_int("TC_VERBOSE", " 2 ", 2);
    expect_int("TC_VERBOSE", "+1", 1);
    expect_int("TC_SHM_BANKS", "1", 1);
    expect_int("TC_SHM_BANKS", "63", 63);
    expect_int("TC_SHM_BANKS", "007", 7);
    expect_int("TC_SPIN_COUNT", "10000000", 10 * 1000 * 1000);
    expect_int("TC_SPIN_COUNT", "0", 0);
    expect_int("TC_SPIN_CONTENDED_US", "0", 0);
    expect_int("TC_SPIN_CONTENDED_US", "1000000", 1000 * 1000);
    expect_int("TC_SHM_TREE_ARITY", "2", 2);

    expect_bad("TC_SHM_BANKS", "0", "an integer in 1..63");
    expect_bad("TC_SHM_BANKS", "64", "an integer in 1..63");
    expect_bad("TC_SHM_BANKS", "-1", "an integer in 1..63");
    expect_bad("TC_SHM_BANKS", "2x", "an integer in 1..63");
    expect_bad("TC_SHM_BANKS", "2 2", "an integer in 1..63");
    expect_bad("TC_SHM_BANKS", "2.0", "an integer in 1..63");
    expect_bad("TC_SHM_BANKS", "0x2", "an integer in 1..63");
    expect_bad("TC_SHM_BANKS", "", "an integer in 1..63");
    expect_bad("TC_SHM_BANKS", "+", "an integer in 1..63");
    expect_bad("TC_SHM_BANKS", "- 2", "an integer in 1..63");
    expect_bad("TC_SHM_BANKS", "auto", "an integer in 1..63"); /* not an auto field */
    expect_bad("TC_SHM_BANKS", "99999999999999999999", "an integer in 1..63");
    expect_bad("TC_VERBOSE", "4", "an integer in 0..3");
    expect_bad("TC_SPIN_COUNT", "10000001", "an integer in 0..10000000");
    expect_bad("TC_SPIN_CONTENDED_US", "1000001", "an integer in 0..1000000");
    expect_bad("TC_SPIN_CONTENDED_US", "-1", "an integer in 0..1000000");
    expect_bad("TC_SHM_TREE_ARITY", "1", "an integer in 2..64");

    /* auto field: auto/0 = 0, explicit values 1..65536 */
    expect_int("TC_SHM_QUEUE_LENGTH", "auto", 0);
    expect_int("TC_SHM_QUEUE_LENGTH", "AUTO", 0);
    expect_int("TC_SHM_QUEUE_LENGTH", " Auto ", 0);
    expect_int("TC_SHM_QUEUE_LENGTH", "0", 0);
    expect_int("TC_SHM_QUEUE_LENGTH", "1", 1);
    expect_int("TC_SHM_QUEUE_LENGTH", "65536", 65536);
    expect_bad("TC_SHM_QUEUE_LENGTH", "65537", "auto (or 0) or an integer in 1..65536");
    expect_bad("TC_SHM_QUEUE_LENGTH", "-1", "1..65536");
    expect_bad("TC_SHM_QUEUE_LENGTH", "autox", "1..65536");
    expect_bad("TC_SHM_QUEUE_LENGTH", "au to", "1..65536");
}

static void test_size(void)
{
    const char *qb = "TC_SHM_QUEUE_BYTES"; /* 4096..1G */
    expect_int(qb, "4096", 4096);
    expect_int(qb, "8k", 8 * 1024);
    expect_int(qb, "8K", 8 * 1024);
    expect_int(qb, "8KiB", 8 * 1024);
    expect_int(qb, "8kib", 8 * 1024);
    expect_int(qb, "3m", 3 * 1024 * 1024);
    expect_int(qb, "3M", 3 * 1024 * 1024);
    expect_int(qb, "3MiB", 3 * 1024 * 1024);
    expect_int(qb, "1g", 1024 * 1024 * 1024);
    expect_int(qb, "1G", 1024 * 1024 * 1024);
    expect_int(qb, "1GiB", 1024 * 1024 * 1024);
    expect_int(qb, "1048576", 1024 * 1024);
    expect_int(qb, "  64K\t", 64 * 1024);
    expect_int(qb, "1024M", 1024 * 1024 * 1024);

    const char *range = "a size in bytes in 4096..1G";
    expect_bad(qb, "4095", range);
    expect_bad(qb, "3k", range);
    expect_bad(qb, "1025M", range);
    expect_bad(qb, "2G", range);
    expect_bad(qb, "-4096", range);
    expect_bad(qb, "-1M", range);
    expect_bad(qb, "+4096", range);
    expect_bad(qb, "", range);
    expect_bad(qb, "K", range);
    expect_bad(qb, "1.5M", range);
    expect_bad(qb, "8 K", range);
    expect_bad(qb, "8KB", range);
    expect_bad(qb, "8T", range);
    expect_bad(qb, "8Kx", range);
    expect_bad(qb, "8MiBs", range);
    expect_bad(qb, "0x1000", range);
    expect_bad(qb, "auto", range); /* not an auto field */
    expect_bad(qb, "0", range);
    expect_bad(qb, "99999999999999999999G", range);
    expect_bad(qb, "99999999999999999999", range);
    expect_bad(qb, "18446744073709551616", range); /* 2^64 */
    expect_bad(qb, "9007199254740993G", range);    /* shifts out of 64 bits */
    expect_bad(qb, "8589934592G", range);          /* 2^33 G = 2^63: just too big */

    /* Bounds with G suffix and above 4 GiB. */
    expect_int("TC_SHM_MAX_SEGMENT", "64G", 64LL * 1024 * 1024 * 1024);
    expect_int("TC_SHM_MAX_SEGMENT", "4096", 4096);
    expect_bad("TC_SHM_MAX_SEGMENT", "65537M", "4096..64G");
    expect_int("TC_SHM_MAX_TOTAL", "1024G", 1024LL * 1024 * 1024 * 1024);
    expect_bad("TC_SHM_MAX_TOTAL", "1025G", "4096..1024G");
    expect_int("TC_SHM_DESIGN_SIZE", "1", 1);
    expect_bad("TC_SHM_DESIGN_SIZE", "0", "1..1G");

    /* auto field: auto/0 = 0, otherwise 4096..16M */
    const char *fs = "TC_SHM_FRAGMENT_SIZE";
    expect_int(fs, "auto", 0);
    expect_int(fs, "AUTO", 0);
    expect_int(fs, "0", 0);
    expect_int(fs, "4096", 4096);
    expect_int(fs, "4k", 4096);
    expect_int(fs, "16M", 16 * 1024 * 1024);
    expect_int(fs, "128KiB", 128 * 1024);
    const char *frange = "auto (or 0) or a size in bytes in 4096..16M";
    expect_bad(fs, "1", frange);
    expect_bad(fs, "4095", frange);
    expect_bad(fs, "3K", frange);
    expect_bad(fs, "16385K", frange);
    expect_bad(fs, "1G", frange);
    expect_bad(fs, "-4096", frange);
    expect_bad(fs, "autoK", frange);
}

static void test_double(void)
{
    const char *wt = "TC_WAIT_TIMEOUT"; /* 0..1e6 */
    expect_double(wt, "0", 0);
    expect_double(wt, "600", 600);
    expect_double(wt, "0.5", 0.5);
    expect_double(wt, " 2.25 ", 2.25);
    expect_double(wt, "1e3", 1000);
    expect_double(wt, "1000000", 1000000);
    expect_double(wt, "1e6", 1000000);

    const char *range = "a number in 0..1000000";
    expect_bad(wt, "-1", range);
    expect_bad(wt, "-0.001", range);
    expect_bad(wt, "1000000.5", range);
    expect_bad(wt, "1e7", range);
    expect_bad(wt, "", range);
    expect_bad(wt, "10s", range);
    expect_bad(wt, "1.2.3", range);
    expect_bad(wt, "nan", range);
    expect_bad(wt, "inf", range);
    expect_bad(wt, "infinity", range);
    expect_bad(wt, "1e999", range);
    expect_bad(wt, "forever", range);
}

static void test_enum(void)
{
    expect_int("TC_SHM_TREE", "flat", TC_TREE_FLAT);
    expect_int("TC_SHM_TREE", "chain", TC_TREE_CHAIN);
    expect_int("TC_SHM_TREE", "kary", TC_TREE_KARY);
    expect_int("TC_SHM_TREE", "knomial", TC_TREE_KNOMIAL);
    expect_int("TC_SHM_TREE", "KNOMIAL", TC_TREE_KNOMIAL);
    expect_int("TC_SHM_TREE", " Chain\n", TC_TREE_CHAIN);
    expect_int("TC_SHM_PLACEMENT", "touch", TC_PLACEMENT_TOUCH);
    expect_int("TC_SHM_PLACEMENT", "MBind", TC_PLACEMENT_MBIND);
    expect_int("TC_SHM_PLACEMENT", "none", TC_PLACEMENT_NONE);

    const char *trees = "one of flat,chain,kary,knomial";
    const char *bad[] = {"", "k", "kar", "karyy", "flat,chain", ",", "0", "1", "k-ary", "fl at"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_bad("TC_SHM_TREE", bad[i], trees);
    expect_bad("TC_SHM_PLACEMENT", "first-touch", "one of touch,mbind,none");
    expect_int("TC_SHM_MECHANISM", "auto", TC_SHM_MECHANISM_AUTO);
    expect_int("TC_SHM_MECHANISM", "MemFD", TC_SHM_MECHANISM_MEMFD);
    expect_int("TC_SHM_MECHANISM", "named", TC_SHM_MECHANISM_NAMED);
    expect_bad("TC_SHM_MECHANISM", "shm_open", "one of auto,memfd,named");
    if (strcmp(cenum("TC_SHM_MECHANISM", TC_SHM_MECHANISM_NAMED), "named") != 0 ||
        strcmp(cenum("TC_SHM_MECHANISM", TC_SHM_MECHANISM_LAST), "?") != 0)
        fail("enum names of TC_SHM_MECHANISM");

    /* tc_config_enum_name spells the accepted list, in the C enums' order. */
    const char *tree_names[] = {"flat", "chain", "kary", "knomial"};
    for (int i = 0; i < TC_TREE_LAST; i++)
        if (strcmp(cenum("TC_SHM_TREE", i), tree_names[i]) != 0)
            fail("enum_name(SHM_TREE, %d) = %s", i, cenum("TC_SHM_TREE", i));
    const char *place_names[] = {"touch", "mbind", "none"};
    for (int i = 0; i < TC_PLACEMENT_LAST; i++)
        if (strcmp(cenum("TC_SHM_PLACEMENT", i), place_names[i]) != 0)
            fail("enum_name(SHM_PLACEMENT, %d) = %s", i, cenum("TC_SHM_PLACEMENT", i));
    if (strcmp(desc("TC_SHM_TREE")->accepted, "flat,chain,kary,knomial") != 0 ||
        strcmp(desc("TC_SHM_PLACEMENT")->accepted, "touch,mbind,none") != 0)
        fail("enum accepted lists changed");
    if (strcmp(cenum("TC_SHM_TREE", TC_TREE_LAST), "?") != 0 ||
        strcmp(cenum("TC_SHM_TREE", -1), "?") != 0 || strcmp(cenum("TC_SHM_BANKS", 0), "?") != 0)
        fail("enum_name out of range should be \"?\"");
}

/* The new enums: words in the order of their C enums. */
static void test_hier_enums(void)
{
    const char *shm[] = {"auto", "none", "l2", "l3", "numa", "package", "node"};
    for (int i = 0; i < TC_HIER_SHM_LEVEL_LAST; i++) {
        expect_int("TC_HIER_SHM_LEVEL", shm[i], i);
        if (strcmp(cenum("TC_HIER_SHM_LEVEL", i), shm[i]) != 0)
            fail("enum_name(HIER_SHM_LEVEL, %d) = %s", i, cenum("TC_HIER_SHM_LEVEL", i));
    }
    expect_int("TC_HIER_SHM_LEVEL", "NUMA", TC_HIER_SHM_LEVEL_NUMA);
    expect_bad("TC_HIER_SHM_LEVEL", "socket", "one of auto,none,l2,l3,numa,package,node");
    expect_bad("TC_HIER_SHM_LEVEL", "core", "one of auto,none,l2,l3,numa,package,node");
    expect_int("TC_HIER_ALLREDUCE", "rab", TC_HIER_ALLREDUCE_RAB);
    expect_int("TC_HIER_ALLREDUCE", "RB", TC_HIER_ALLREDUCE_RB);
    expect_bad("TC_HIER_ALLREDUCE", "ring", "one of rab,rb");
    expect_int("TC_HIER_ALLREDUCE_TOP", "recdbl", TC_HIER_TOP_RECDBL);
    expect_int("TC_HIER_ALLREDUCE_TOP", "ring", TC_HIER_TOP_RING);
    expect_int("TC_HIER_ALLREDUCE_TOP", "auto", TC_HIER_TOP_AUTO);
    expect_int("TC_HIER_ALLGATHER_TOP", "bruck", TC_HIER_AG_TOP_BRUCK);
    expect_int("TC_HIER_ALLGATHER_TOP", "Ring", TC_HIER_AG_TOP_RING);
    expect_bad("TC_HIER_ALLGATHER_TOP", "knomial", "one of auto,recdbl,ring,bruck");
    if (strcmp(cenum("TC_HIER_ALLREDUCE", TC_HIER_ALLREDUCE_RB), "rb") != 0 ||
        strcmp(cenum("TC_HIER_ALLREDUCE_TOP", TC_HIER_TOP_RING), "ring") != 0 ||
        strcmp(cenum("TC_HIER_ALLREDUCE_TOP", TC_HIER_TOP_LAST), "?") != 0)
        fail("enum names of the hierarchy's enums");

    /* TC_WAIT: the words in the order of tc_wait_policy_t (base/wait.h). */
    const char *waitw[] = {"auto", "spin", "yield", "futex"};
    _Static_assert(sizeof waitw / sizeof waitw[0] == TC_WAIT_LAST, "TC_WAIT words");
    for (int i = 0; i < TC_WAIT_LAST; i++)
        expect_int("TC_WAIT", waitw[i], i);
    expect_bad("TC_WAIT", "sleep", "one of auto,spin,yield,futex");

    /* Sizes of the new entries: bounds as documented. */
    expect_int("TC_SHM_REDUCE_SLOT_BYTES", "1K", 1024);
    expect_int("TC_SHM_REDUCE_SLOT_BYTES", "16M", 16 * 1024 * 1024);
    expect_bad("TC_SHM_REDUCE_SLOT_BYTES", "1023", "1024..16M");
    expect_int("TC_SHM_REDUCE_SLOTS", "2", 2);
    expect_int("TC_SHM_REDUCE_SLOTS", "auto", 0);
    expect_bad("TC_SHM_REDUCE_SLOTS", "1", "an integer in 2..1024");
    expect_bad("TC_SHM_REDUCE_SLOTS", "1025", "an integer in 2..1024");
    expect_int("TC_SHM_REDUCE_SLOTS_CONTENDED", "auto", 0);
    expect_int("TC_SHM_REDUCE_SLOTS_CONTENDED", "128", 128);
    expect_bad("TC_SHM_REDUCE_SLOTS_CONTENDED", "1", "an integer in 2..1024");
    expect_int("TC_SHM_REDUCE_WIDE_BYTES", "auto", 0);
    expect_int("TC_SHM_REDUCE_WIDE_BYTES", "256K", 256 * 1024);
    expect_bad("TC_SHM_REDUCE_WIDE_BYTES", "1000", "1024..16M");
    expect_int("TC_SHM_REDUCE_WIDE_MIN", "0", 0);
    expect_int("TC_SHM_REDUCE_WIDE_MIN", "4M", 4 * 1024 * 1024);
    expect_int("TC_HIER_LARGE", "0", 0);
    expect_int("TC_HIER_SEGMENT", "4K", 4096);
    /* Barrier choices: 0 = auto, then the algorithms in tc_barrier_alg_t order + 1. */
    expect_int("TC_BARRIER", "auto", 0);
    expect_int("TC_BARRIER", "central", 1);
    expect_int("TC_BARRIER", "pairwise", 5);
    expect_int("TC_SHM_BARRIER", "tournament", 4);
    expect_bad("TC_SHM_BARRIER", "pairwise", "one of auto,central,tree,dissemination,tournament");
    expect_bad("TC_BARRIER_ARITY", "1", "an integer in 2..64");
    expect_bad("TC_HIER_SEGMENT", "4095", "4096..1G");
}

/* STRING: any text up to TC_CFG_STRING_MAX bytes after trimming; the value
 * is its trimmed length; tc_config_string gives the text or the default. */
static void test_string(void)
{
    const char *lf = "TC_LOCALITY_FILE";
    expect_int(lf, "", 0);
    expect_int(lf, "   ", 0);
    expect_int(lf, "/tmp/x.txt", 10);
    expect_int(lf, "  a b  ", 3);
    expect_int(lf, "\tnuma:flat, node:knomial:4\n", 25);
    char *big = malloc(TC_CFG_STRING_MAX + 8);
    if (!big) {
        fail("out of memory");
        return;
    }
    memset(big, 'x', TC_CFG_STRING_MAX);
    big[TC_CFG_STRING_MAX] = '\0';
    expect_int(lf, big, TC_CFG_STRING_MAX);
    strcpy(big + TC_CFG_STRING_MAX, "  "); /* trailing blanks do not count */
    expect_int(lf, big, TC_CFG_STRING_MAX);
    strcpy(big + TC_CFG_STRING_MAX, "y");
    {
        /* Too long: quoted cut (test_messages), so check the tail of the message. */
        tc_cfg_value_t v = {-7, -7};
        char err[512] = "";
        if (tc_config_parse(desc(lf), big, &v, err, sizeof err) == 0 ||
            !strstr(err, "TC_LOCALITY_FILE=\"xxx") ||
            !strstr(err, "...\": expected at most 4096 bytes of text"))
            fail("4097 bytes of text: \"%s\"", err);
    }
    free(big);

    for (int id = 0; id < nall(); id++)
        unsetenv(desc(nth(id))->name);
    tc_config_reset();
    if (strcmp(cstring("TC_HIER_LEVELS"), "numa,package,node,switch1,switch2,switch3,switch4") !=
            0 ||
        strcmp(cstring("TC_LOCALITY_FILE"), "") != 0 ||
        strcmp(cstring("TC_HIER_BCAST"), "auto") != 0 ||
        csource("TC_HIER_BCAST") != TC_CFG_SRC_DEFAULT)
        fail("string defaults: \"%s\" \"%s\" \"%s\"", cstring("TC_HIER_LEVELS"),
             cstring("TC_LOCALITY_FILE"), cstring("TC_HIER_BCAST"));
    if (strcmp(cstring("TC_SHM_BANKS"), "") != 0 ||
        strcmp(tc_config_string(&tc_shm_config, TC_SHM_CFG_LAST), "") != 0)
        fail("tc_config_string of a non-string should be \"\"");

    setenv("TC_HIER_BCAST", "  numa:flat , node:knomial:4\t", 1);
    setenv("TC_LOCALITY_FILE", "", 1); /* set, empty: valid, "" */
    char *huge = malloc(TC_CFG_STRING_MAX + 2);
    if (huge) {
        memset(huge, 'z', TC_CFG_STRING_MAX + 1);
        huge[TC_CFG_STRING_MAX + 1] = '\0';
        setenv("TC_NETWORK_TOPOLOGY_FILE", huge, 1); /* too long: default "" */
        free(huge);
    }
    tc_config_reset();
    fprintf(stderr, "(one 'TC_NETWORK_TOPOLOGY_FILE=...' message is expected next)\n");
    tc_settings_load();
    if (strcmp(cstring("TC_HIER_BCAST"), "numa:flat , node:knomial:4") != 0 ||
        csource("TC_HIER_BCAST") != TC_CFG_SRC_ENV || cint("TC_HIER_BCAST") != 26)
        fail("loaded string: \"%s\" source %d", cstring("TC_HIER_BCAST"),
             (int)csource("TC_HIER_BCAST"));
    if (strcmp(cstring("TC_LOCALITY_FILE"), "") != 0 ||
        csource("TC_LOCALITY_FILE") != TC_CFG_SRC_ENV)
        fail("empty string from the environment");
    if (strcmp(cstring("TC_NETWORK_TOPOLOGY_FILE"), "") != 0 ||
        csource("TC_NETWORK_TOPOLOGY_FILE") != TC_CFG_SRC_INVALID)
        fail("too long a string should be invalid and give the default");
    /* The loaded text is a copy. */
    setenv("TC_HIER_BCAST", "flat", 1);
    if (strcmp(cstring("TC_HIER_BCAST"), "numa:flat , node:knomial:4") != 0)
        fail("string follows the environment");
    for (int id = 0; id < nall(); id++)
        unsetenv(desc(nth(id))->name);
    tc_config_reset();
    if (strcmp(cstring("TC_HIER_BCAST"), "auto") != 0)
        fail("string after reset: \"%s\"", cstring("TC_HIER_BCAST"));
}

static void test_messages(void)
{
    tc_cfg_value_t v;
    char err[512];
    const tc_cfg_desc_t *d = desc("TC_SHM_BANKS");

    /* The example of the brief, verbatim. */
    if (tc_config_parse(d, "0", &v, err, sizeof err) == 0 ||
        strcmp(err, "TC_SHM_BANKS=\"0\": expected an integer in 1..63") != 0)
        fail("message: \"%s\"", err);

    /* The raw value is quoted as given (white space included). */
    if (tc_config_parse(d, " 99 ", &v, err, sizeof err) == 0 ||
        strncmp(err, "TC_SHM_BANKS=\" 99 \"", 19) != 0)
        fail("message: \"%s\"", err);

    /* Long values are cut, control characters replaced. */
    char longv[300];
    memset(longv, '7', sizeof longv - 1);
    longv[sizeof longv - 1] = '\0';
    if (tc_config_parse(d, longv, &v, err, sizeof err) == 0 || !strstr(err, "...\": expected") ||
        strlen(err) > 200)
        fail("long value message: \"%s\"", err);
    if (tc_config_parse(d, "1\n2", &v, err, sizeof err) == 0 || strchr(err, '\n'))
        fail("control character in message: \"%s\"", err);

    /* A short buffer truncates but stays a string; NULL err is allowed. */
    char small[8];
    memset(small, 'x', sizeof small);
    if (tc_config_parse(d, "0", &v, small, sizeof small) == 0 || small[7] != '\0')
        fail("short message buffer not terminated");
    if (tc_config_parse(d, "0", &v, NULL, 0) == 0)
        fail("NULL err: accepted");
    /* Success leaves an empty message. */
    strcpy(err, "junk");
    if (tc_config_parse(d, "3", &v, err, sizeof err) != 0 || err[0] != '\0')
        fail("success should clear the message: \"%s\"", err);
}

static void test_load(void)
{
    /* Unset everything we touch so the results do not depend on the caller. */
    for (int id = 0; id < nall(); id++)
        unsetenv(desc(nth(id))->name);

    tc_config_reset();
    /* Accessors load on first use. */
    if (cint("TC_SHM_BANKS") != 16 || csource("TC_SHM_BANKS") != TC_CFG_SRC_DEFAULT ||
        craw("TC_SHM_BANKS") != NULL)
        fail("defaults: banks %lld source %d", (long long)cint("TC_SHM_BANKS"),
             (int)csource("TC_SHM_BANKS"));
    if (cdouble("TC_WAIT_TIMEOUT") != 600 || tc_log_level != 0)
        fail("defaults: timeout %g log level %d", cdouble("TC_WAIT_TIMEOUT"), tc_log_level);

    setenv("TC_SHM_BANKS", "0", 1);           /* invalid: default 16 */
    setenv("TC_SHM_QUEUE_BYTES", " 2M ", 1);  /* valid */
    setenv("TC_SHM_TREE", "Knomial", 1);      /* valid */
    setenv("TC_WAIT_TIMEOUT", "forever", 1);  /* invalid: default 600 */
    setenv("TC_SHM_FRAGMENT_SIZE", "64K", 1); /* valid */
    setenv("TC_SHM_QUEUE_LENGTH", "auto", 1); /* valid, = 0 */
    setenv("TC_SHM", "off", 1);               /* valid */
    setenv("TC_VERBOSE", "3", 1);             /* valid: sets tc_log_level */
    setenv("TC_SHM_MAX_TOTAL", "", 1);        /* set but empty: invalid */
    setenv("TC_SHM_PLACEMENT", "first", 1);   /* invalid */

    /* Loaded values stay until reset. */
    tc_settings_load();
    if (cint("TC_SHM_BANKS") != 16 || csource("TC_SHM_BANKS") != TC_CFG_SRC_DEFAULT)
        fail("not re-read without reset");
    tc_config_reset();
    fprintf(stderr, "(four 'topocoll: ...; using the default' lines are expected next)\n");
    tc_settings_load();
    tc_settings_load(); /* second call does nothing (no second set of messages) */

    struct {
        const char *id;
        tc_cfg_source_t src;
        double want;
        const char *raw;
    } cases[] = {
        {"TC_SHM_BANKS", TC_CFG_SRC_INVALID, 16, "0"},
        {"TC_SHM_QUEUE_BYTES", TC_CFG_SRC_ENV, 2 * 1024 * 1024, " 2M "},
        {"TC_SHM_TREE", TC_CFG_SRC_ENV, TC_TREE_KNOMIAL, "Knomial"},
        {"TC_WAIT_TIMEOUT", TC_CFG_SRC_INVALID, 600, "forever"},
        {"TC_SHM_FRAGMENT_SIZE", TC_CFG_SRC_ENV, 64 * 1024, "64K"},
        {"TC_SHM_QUEUE_LENGTH", TC_CFG_SRC_ENV, 0, "auto"},
        {"TC_SHM", TC_CFG_SRC_ENV, 0, "off"},
        {"TC_VERBOSE", TC_CFG_SRC_ENV, 3, "3"},
        {"TC_SHM_MAX_TOTAL", TC_CFG_SRC_INVALID, 1024.0 * 1024 * 1024, ""},
        {"TC_SHM_PLACEMENT", TC_CFG_SRC_INVALID, TC_PLACEMENT_TOUCH, "first"},
        {"TC_SHM_MAX_SEGMENT", TC_CFG_SRC_DEFAULT, 256.0 * 1024 * 1024, NULL},
        {"TC_SPIN_COUNT", TC_CFG_SRC_DEFAULT, 200, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *name = desc(cases[i].id)->name;
        const char *raw = craw(cases[i].id);
        if (csource(cases[i].id) != cases[i].src)
            fail("load %s: source %d, expected %d", name, (int)csource(cases[i].id),
                 (int)cases[i].src);
        if (cdouble(cases[i].id) != cases[i].want || cint(cases[i].id) != (int64_t)cases[i].want)
            fail("load %s: value %g, expected %g", name, cdouble(cases[i].id), cases[i].want);
        if ((raw == NULL) != (cases[i].raw == NULL) || (raw && strcmp(raw, cases[i].raw) != 0))
            fail("load %s: raw \"%s\", expected \"%s\"", name, raw ? raw : "(null)",
                 cases[i].raw ? cases[i].raw : "(null)");
    }
    if (strcmp(cenum("TC_SHM_TREE", cint("TC_SHM_TREE")), "knomial"))
        fail("enum name of loaded tree");
    if (tc_log_level != 3)
        fail("tc_log_level %d after TC_VERBOSE=3", tc_log_level);

    /* The raw text is a copy: changing the environment does not change it. */
    setenv("TC_SHM_TREE", "flat", 1);
    if (strcmp(craw("TC_SHM_TREE"), "Knomial") != 0)
        fail("raw text follows the environment");

    for (int id = 0; id < nall(); id++)
        unsetenv(desc(nth(id))->name);
    tc_config_reset();
    /* A module loads on the first read of one of its variables, the others
     * stay as they were until read (or tc_settings_load). */
    if (cint("TC_SHM_TREE") != TC_TREE_KARY || csource("TC_SHM_TREE") != TC_CFG_SRC_DEFAULT)
        fail("reset and reload did not return to the defaults");
    if (!tc_load_relaxed_u64(&tc_shm_config.loaded) || tc_load_relaxed_u64(&tc_rma_config.loaded))
        fail("reading TC_SHM_TREE should load shm alone");
    tc_settings_load();
    for (int i = 0; i < tc_settings_nmodules; i++)
        if (!tc_load_relaxed_u64(&tc_settings_modules[i]->loaded))
            fail("tc_settings_load left %s unloaded", tc_settings_modules[i]->name);
    if (tc_log_level != 0)
        fail("tc_log_level %d after reset to the defaults", tc_log_level);

    /* The modules' own handles read the same values as the names. */
    setenv("TC_SHM_BANKS", "8", 1);
    setenv("TC_LOCK_SCHEME", "rwlock", 1);
    setenv("TC_HIER_ALLREDUCE_TOP", "ring", 1);
    setenv("TC_BARRIER", "tournament", 1);
    setenv("TC_RMA_POLL_MAX_US", "77", 1);
    setenv("TC_MODEL_GAMMA", "0.5", 1);
    setenv("TC_PMPI_RACE_MIN", "0", 1);
    setenv("TC_STATS", "yes", 1);
    tc_config_reset();
    if (tc_config_int(&tc_shm_config, TC_SHM_CFG_BANKS) != 8 ||
        tc_config_int(&tc_locks_config, TC_LOCKS_CFG_SCHEME) != TC_LOCK_SCHEME_RWLOCK ||
        tc_config_int(&tc_hier_config, TC_HIER_CFG_ALLREDUCE_TOP) != TC_HIER_TOP_RING ||
        tc_config_int(&tc_barrier_config, TC_BARRIER_CFG_ALG) != 1 + TC_BARRIER_TOURNAMENT ||
        tc_config_int(&tc_rma_config, TC_RMA_CFG_POLL_MAX_US) != 77 ||
        tc_config_double(&tc_model_config, TC_MODEL_CFG_GAMMA) != 0.5 ||
        tc_config_source(&tc_core_config, TC_CORE_CFG_PMPI_RACE_MIN) != TC_CFG_SRC_ENV ||
        tc_config_int(&tc_core_config, TC_CORE_CFG_PMPI_RACE_MIN) != 0 ||
        tc_config_int(&tc_base_config, TC_BASE_CFG_STATS) != 1)
        fail("module handles do not read the environment's values");
    tc_barrier_settings_t bs;
    tc_barrier_settings_get(&bs);
    if (bs.msg_override != 1 + TC_BARRIER_TOURNAMENT || bs.msg_arity != 4 || bs.shm_override != 0 ||
        bs.shm_arity != 4)
        fail("barrier settings %d %d %d %d", bs.msg_override, bs.msg_arity, bs.shm_override,
             bs.shm_arity);
    for (int id = 0; id < nall(); id++)
        unsetenv(desc(nth(id))->name);
    tc_config_reset();
}

/* Concurrent first use: every thread sees the loaded values (run under
 * ThreadSanitizer in CI). */
static void *load_thread(void *arg)
{
    int64_t *got = arg;
    *got = cint("TC_SHM_TREE_ARITY");
    return NULL;
}

static void test_load_threads(void)
{
    enum { NT = 8 };
    pthread_t th[NT];
    int64_t got[NT];

    setenv("TC_SHM_TREE_ARITY", "5", 1);
    tc_config_reset();
    for (int i = 0; i < NT; i++)
        if (pthread_create(&th[i], NULL, load_thread, &got[i]) != 0) {
            fail("pthread_create");
            got[i] = 5;
            th[i] = pthread_self();
        }
    for (int i = 0; i < NT; i++) {
        if (!pthread_equal(th[i], pthread_self()))
            pthread_join(th[i], NULL);
        if (got[i] != 5)
            fail("thread %d saw arity %lld, expected 5", i, (long long)got[i]);
    }
    unsetenv("TC_SHM_TREE_ARITY");
    tc_config_reset();
}

/* tc_config_value_text: every loaded value printed as a user would write it
 * (topocoll-info's table): words, not enum indices or string lengths. */
static void expect_text(const char *id, const char *want)
{
    char got[TC_CFG_STRING_MAX + 1];
    ctext(id, got, sizeof got);
    if (strcmp(got, want) != 0)
        fail("value_text(%s) = \"%s\", expected \"%s\"", desc(id)->name, got, want);
}

static void test_value_text(void)
{
    char text[TC_CFG_STRING_MAX + 1];

    for (int id = 0; id < nall(); id++)
        unsetenv(desc(nth(id))->name);
    tc_config_reset();

    /* The defaults that topocoll-info printed as "?", a number or 0. */
    expect_text("TC_SHM_REDUCE_COPY", "auto");
    expect_text("TC_SHM_BCAST_COPY", "auto");
    expect_text("TC_BARRIER", "auto");
    expect_text("TC_SHM_BARRIER", "auto");
    expect_text("TC_RMA_BCAST", "auto");
    expect_text("TC_RMA_PUTLOOP", "down");
    expect_text("TC_HIER_LEVELS", "numa,package,node,switch1,switch2,switch3,switch4");
    expect_text("TC_HIER_BCAST", "auto");
    expect_text("TC_HIER_REDUCE", "auto");
    expect_text("TC_NETWORK_TOPOLOGY_FILE", "(unset)");
    expect_text("TC_LOCALITY_FILE", "(unset)");
    expect_text("TC_LOGP_FILE", "(unset)");
    expect_text("TC_LOCK_SCHEME", "n-mcs");
    expect_text("TC_HIER_SHM_LEVEL", "auto");
    expect_text("TC_HIER_ALLREDUCE", "rab");
    expect_text("TC_SHM_TREE", "kary");
    expect_text("TC_SHM_PLACEMENT", "touch");
    expect_text("TC_SHM_FRAGMENT_SIZE", "auto");
    expect_text("TC_SHM_QUEUE_LENGTH", "auto");
    expect_text("TC_HIER_LARGE", "64K");
    expect_text("TC_HIER_SEGMENT", "1M");
    expect_text("TC_SHM_MAX_TOTAL", "1G");
    expect_text("TC_SHM_BANKS", "16");
    expect_text("TC_SHM", "1");
    expect_text("TC_STATS", "0");
    expect_text("TC_WAIT_TIMEOUT", "600");
    expect_text("TC_MODEL_GAMMA", "6.6667e-05");

    /* Every entry, including ones added later: an ENUM never prints "?", and
     * what is printed parses back to the loaded value. */
    for (int id = 0; id < nall(); id++) {
        const tc_cfg_desc_t *d = desc(nth(id));
        tc_cfg_value_t v = {-7, -7};
        ctext(nth(id), text, sizeof text);
        if (d->type == TC_CFG_TYPE_STRING) {
            if (strcmp(text, d->def[0] ? d->def : "(unset)") != 0)
                fail("value_text(%s) = \"%s\", expected its default", d->name, text);
            continue;
        }
        if (strcmp(text, "?") == 0 || tc_config_parse(d, text, &v, NULL, 0) != 0 ||
            v.i != cint(nth(id)) || v.d != cdouble(nth(id)))
            fail("value_text(%s) = \"%s\" does not parse back to the loaded value", d->name, text);
    }

    /* Every ENUM word, at its index, for every entry (the accepted list is
     * the one source of the names). */
    for (int id = 0; id < nall(); id++) {
        const tc_cfg_desc_t *d = desc(nth(id));
        int64_t k = 0;
        if (d->type != TC_CFG_TYPE_ENUM)
            continue;
        for (const char *w = d->accepted;; k++) {
            const char *comma = strchr(w, ',');
            size_t wl = comma ? (size_t)(comma - w) : strlen(w);
            const char *name = cenum(nth(id), k);
            if (strlen(name) != wl || strncmp(name, w, wl) != 0)
                fail("enum_name(%s, %lld) = \"%s\", expected \"%.*s\"", d->name, (long long)k, name,
                     (int)wl, w);
            if (!comma)
                break;
            w = comma + 1;
        }
        if (strcmp(cenum(nth(id), k + 1), "?") != 0)
            fail("enum_name(%s, %lld) past the list is not \"?\"", d->name, (long long)(k + 1));
    }
    if (strcmp(cenum("TC_SHM_BANKS", 0), "?") != 0)
        fail("enum_name of a non-ENUM entry is not \"?\"");

    /* Values from the environment. */
    setenv("TC_SHM_BCAST_COPY", "Stream", 1);
    setenv("TC_BARRIER", "dissemination", 1);
    setenv("TC_NETWORK_TOPOLOGY_FILE", "  /tmp/net file.txt ", 1);
    setenv("TC_HIER_BCAST", "numa:flat,node:knomial:4", 1);
    setenv("TC_SHM_QUEUE_BYTES", "2048K", 1);
    setenv("TC_HIER_SEGMENT", "1536K", 1);
    setenv("TC_HIER_LARGE", "1000", 1);
    setenv("TC_SHM_FRAGMENT_SIZE", "0", 1);
    setenv("TC_SHM", "off", 1);
    setenv("TC_RMA_BCAST", "nonsense", 1); /* invalid: the default's word */
    tc_config_reset();
    fprintf(stderr,
            "(one 'topocoll: TC_RMA_BCAST=...; using the default' line is expected next)\n");
    expect_text("TC_SHM_BCAST_COPY", "stream");
    expect_text("TC_BARRIER", "dissemination");
    expect_text("TC_NETWORK_TOPOLOGY_FILE", "/tmp/net file.txt");
    expect_text("TC_HIER_BCAST", "numa:flat,node:knomial:4");
    expect_text("TC_SHM_QUEUE_BYTES", "2M");
    expect_text("TC_HIER_SEGMENT", "1536K");
    expect_text("TC_HIER_LARGE", "1000");
    expect_text("TC_SHM_FRAGMENT_SIZE", "auto");
    expect_text("TC_SHM", "0");
    expect_text("TC_RMA_BCAST", "auto");

    /* A short buffer is cut, not overrun. */
    char small[4] = {'x', 'x', 'x', 'x'};
    ctext("TC_BARRIER", small, sizeof small);
    if (strcmp(small, "dis") != 0)
        fail("value_text into 4 bytes = \"%s\", expected \"dis\"", small);

    for (int id = 0; id < nall(); id++)
        unsetenv(desc(nth(id))->name);
    tc_config_reset();
}

int main(void)
{
    test_table();
    test_defaults();
    test_bool();
    test_int();
    test_size();
    test_double();
    test_enum();
    test_hier_enums();
    test_string();
    test_messages();
    test_load();
    test_load_threads();
    test_value_text();
    if (failures) {
        fprintf(stderr, "test_config: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_config: ok\n");
    return 0;
}
