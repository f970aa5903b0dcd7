/* The user tuning file: see tuning.h for the format. Pure C + libc. */
#include "tuning.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/names.h"

#define MAX_FILE_BYTES ((size_t)1 << 20)

static const char *const op_names[TC_TUNING_OP_LAST] = {"bcast", "reduce", "allreduce", "barrier"};

/* Levels 0 .. TOP - 1 are base/names.h's; then the two rows of this file. */
_Static_assert(TC_TUNING_LEVEL_TOP == TC_BASE_LEVEL_COUNT, "tuning levels start as base's");
_Static_assert((int)TC_TUNING_OP_LAST == (int)TC_BASE_OP_LAST &&
                   (int)TC_TUNING_OP_BARRIER == (int)TC_BASE_OP_BARRIER,
               "tuning operations are base/names.h's");

#define MAX_ALGS TC_BASE_ALG_MAX
static const char *const alg_accepted[TC_TUNING_OP_LAST] = {
    "flat, knomial[:k], scatter_allgather",
    "flat, binomial, rsg",
    "recdbl, ring",
    "central, tree[:n], dissemination, tournament, pairwise",
};

/* The algorithm that takes ":k" per op (-1: none), and its bounds. */
static const int alg_with_k[TC_TUNING_OP_LAST] = {1, -1, -1, 1};
static const int k_min[TC_TUNING_OP_LAST] = {2, 0, 0, 2};
static const int k_max[TC_TUNING_OP_LAST] = {1024, 0, 0, 64};

const char *tc_tuning_op_name(tc_tuning_op_t op)
{
    return (int)op >= 0 && op < TC_TUNING_OP_LAST ? op_names[op] : "?";
}

const char *tc_tuning_level_name(int level)
{
    if (level == TC_TUNING_LEVEL_TOP)
        return "top";
    if (level == TC_TUNING_LEVEL_SHM)
        return "shm";
    const char *name = tc_base_level_name(level);
    return name ? name : "?";
}

const char *tc_tuning_alg_name(tc_tuning_op_t op, int alg)
{
    if ((int)op < 0 || op >= TC_TUNING_OP_LAST || alg < 0 || alg >= MAX_ALGS)
        return "?";
    const char *name = tc_base_alg_name((int)op, alg);
    return name ? name : "?";
}

void tc_tuning_init(tc_tuning_t *t)
{
    memset(t, 0, sizeof *t); /* no stray bytes: the table is broadcast as bytes */
}

/* One bad line: "<name>:<line>: <what>; line ignored". */
static void tc_model_bad(tc_tuning_report_fn report, void *arg, const char *name, int line,
                         const char *fmt, ...)
{
    char what[400], msg[600];
    va_list ap;

    if (!report)
        return;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(msg, sizeof msg, "%s:%d: %s; line ignored", name, line, what);
    report(arg, msg);
}

static int tc_model_word_index(const char *w, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (names[i] && strcasecmp(w, names[i]) == 0)
            return i;
    return -1;
}

/* A level of base/names.h (case ignored, "socket" = "package"), "top" or
 * "shm"; -1 if none. */
static int tc_model_level_index(const char *w)
{
    int l = tc_base_level_index(w, strlen(w), 1);
    if (l >= 0)
        return l;
    if (strcasecmp(w, "top") == 0)
        return TC_TUNING_LEVEL_TOP;
    return strcasecmp(w, "shm") == 0 ? TC_TUNING_LEVEL_SHM : -1;
}

/* Bytes with an optional binary K/M/G/T suffix; TC_ERR_PARSE when malformed
 * or above TC_TUNING_MAX_BYTES. */
static tc_err_t tc_model_parse_bytes(const char *w, uint64_t *out)
{
    uint64_t v = 0;
    const char *p = w;
    int shift = 0;

    if (!isdigit((unsigned char)*p))
        return tc_err(TC_ERR_PARSE);
    for (; isdigit((unsigned char)*p); p++) {
        v = v * 10 + (uint64_t)(*p - '0');
        if (v > TC_TUNING_MAX_BYTES)
            return tc_err(TC_ERR_PARSE);
    }
    switch (toupper((unsigned char)*p)) {
    case '\0':
        break;
    case 'K':
        shift = 10;
        break;
    case 'M':
        shift = 20;
        break;
    case 'G':
        shift = 30;
        break;
    case 'T':
        shift = 40;
        break;
    default:
        return tc_err(TC_ERR_PARSE);
    }
    if (shift && p[1] != '\0')
        return tc_err(TC_ERR_PARSE);
    if (v > (TC_TUNING_MAX_BYTES >> shift))
        return tc_err(TC_ERR_PARSE);
    *out = v << shift;
    return TC_OK;
}

/* Add (or replace: same op, level and min_bytes) one entry. */
static tc_err_t tc_model_add_entry(tc_tuning_t *t, const tc_tuning_entry_t *e)
{
    for (int i = 0; i < t->n; i++) {
        tc_tuning_entry_t *x = &t->e[i];
        if (x->op == e->op && x->level == e->level && x->min_bytes == e->min_bytes) {
            *x = *e;
            return TC_OK;
        }
    }
    if (t->n >= TC_TUNING_MAX_ENTRIES)
        return tc_err(TC_ERR_LIMIT); /* TC_TUNING_MAX_ENTRIES */
    t->e[t->n++] = *e;
    return TC_OK;
}

/* Parse one line (NUL-terminated, comment removed). Returns TC_OK (entry
 * added or blank), or an error (reported). */
static tc_err_t tc_model_parse_line(tc_tuning_t *t, char *s, const char *name, int line,
                                    tc_tuning_report_fn report, void *arg)
{
    char *w[5];
    int n = 0;
    /* Split at blanks in place (no strtok: it is not thread-safe). */
    for (char *p = s;;) {
        while (*p && isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        if (n < 5)
            w[n] = p;
        n++;
        while (*p && !isspace((unsigned char)*p))
            p++;
        if (*p)
            *p++ = '\0';
    }
    if (n == 0)
        return TC_OK;
    if (n != 4) {
        tc_model_bad(
            report, arg, name, line,
            "%d fields, expected 4: <op> <level> <min-bytes> <alg>[:k] (e.g. \"bcast node 64K "
            "scatter_allgather\")",
            n);
        return tc_err(TC_ERR_PARSE);
    }
    tc_tuning_entry_t e;
    memset(&e, 0, sizeof e);
    e.op = tc_model_word_index(w[0], op_names, TC_TUNING_OP_LAST);
    if (e.op < 0) {
        tc_model_bad(report, arg, name, line,
                     "unknown operation \"%.64s\" (expected bcast, reduce, allreduce, barrier)",
                     w[0]);
        return tc_err(TC_ERR_PARSE);
    }
    int all = strcasecmp(w[1], "all") == 0;
    e.level = tc_model_level_index(w[1]);
    if (e.level < 0 && !all) {
        tc_model_bad(report, arg, name, line,
                     "unknown level \"%.64s\" (expected core, l2, l3, numa, package, socket, node, "
                     "switch1..switch4, top, shm, all)",
                     w[1]);
        return tc_err(TC_ERR_PARSE);
    }
    if (e.op == TC_TUNING_OP_BARRIER &&
        (all || (e.level != TC_TUNING_LEVEL_SHM && e.level != TC_TUNING_LEVEL_TOP))) {
        tc_model_bad(
            report, arg, name, line,
            "barrier entries take level shm or top (the barrier runs in the segment and among "
            "the top group), not \"%.64s\"",
            w[1]);
        return tc_err(TC_ERR_PARSE);
    }
    if (e.op == TC_TUNING_OP_ALLREDUCE && (all || e.level != TC_TUNING_LEVEL_TOP)) {
        tc_model_bad(
            report, arg, name, line,
            "allreduce entries take level top only (the per-level allreduce runs in the top "
            "group), not \"%.64s\"",
            w[1]);
        return tc_err(TC_ERR_PARSE);
    }
    if (e.level == TC_TUNING_LEVEL_SHM && e.op != TC_TUNING_OP_BARRIER) {
        tc_model_bad(
            report, arg, name, line,
            "level shm takes barrier entries only (the segment's %s is not chosen per size)",
            op_names[e.op]);
        return tc_err(TC_ERR_PARSE);
    }
    uint64_t min = 0;
    if (tc_model_parse_bytes(w[2], &min) != 0) {
        tc_model_bad(report, arg, name, line,
                     "bad min-bytes \"%.64s\" (expected a number of bytes with an "
                     "optional suffix K, M, "
                     "G or T, binary, at most 2^50)",
                     w[2]);
        return tc_err(TC_ERR_PARSE);
    }
    if (e.op == TC_TUNING_OP_BARRIER && min != 0) {
        tc_model_bad(report, arg, name, line,
                     "barrier has no message size: min-bytes must be 0, not %.64s", w[2]);
        return tc_err(TC_ERR_PARSE);
    }
    e.min_bytes = min;
    char *colon = strchr(w[3], ':');
    if (colon)
        *colon = '\0';
    e.alg = tc_base_alg_index(e.op, w[3]);
    if (e.alg < 0) {
        tc_model_bad(report, arg, name, line, "unknown %s algorithm \"%.64s\" (expected %s)",
                     op_names[e.op], w[3], alg_accepted[e.op]);
        return tc_err(TC_ERR_PARSE);
    }
    if (colon) {
        const char *ks = colon + 1;
        char *end;
        long k;
        if (alg_with_k[e.op] < 0) {
            tc_model_bad(report, arg, name, line,
                         "\":%.32s\" after %s: %s algorithms take no number", ks,
                         tc_tuning_alg_name(e.op, e.alg), op_names[e.op]);
            return tc_err(TC_ERR_PARSE);
        }
        if (e.alg != alg_with_k[e.op]) {
            tc_model_bad(report, arg, name, line, "\":%.32s\" after %s: only %s takes a number", ks,
                         tc_tuning_alg_name(e.op, e.alg),
                         tc_tuning_alg_name(e.op, alg_with_k[e.op]));
            return tc_err(TC_ERR_PARSE);
        }
        errno = 0;
        k = isdigit((unsigned char)*ks) ? strtol(ks, &end, 10) : -1;
        if (k < 0 || errno || *end || k < k_min[e.op] || k > k_max[e.op]) {
            tc_model_bad(report, arg, name, line, "bad number \"%.32s\" after %s (expected %d..%d)",
                         ks, tc_tuning_alg_name(e.op, e.alg), k_min[e.op], k_max[e.op]);
            return tc_err(TC_ERR_PARSE);
        }
        e.k = (int32_t)k;
    } else if (e.op == TC_TUNING_OP_BCAST && e.alg == alg_with_k[e.op]) {
        e.k = 2; /* as in TC_HIER_BCAST */
    }
    /* "all": every level and top, as one entry each (so a later line for one
     * level replaces only that level's entry). */
    int lo = all ? 0 : e.level, hi = all ? TC_TUNING_LEVEL_TOP : e.level;
    tc_tuning_t save = *t;
    for (int l = lo; l <= hi; l++) {
        e.level = l;
        if (tc_model_add_entry(t, &e) != 0) {
            *t = save;
            tc_model_bad(report, arg, name, line, "more than %d entries", TC_TUNING_MAX_ENTRIES);
            return tc_err(TC_ERR_PARSE);
        }
    }
    return TC_OK;
}

int tc_tuning_parse(tc_tuning_t *t, const char *text, const char *name, tc_tuning_report_fn report,
                    void *arg)
{
    char buf[1024];
    int line = 0;

    tc_tuning_init(t);
    if (!name)
        name = "tuning file";
    for (const char *s = text; s && *s;) {
        const char *e = strchr(s, '\n');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        line++;
        if (len >= sizeof buf) {
            tc_model_bad(report, arg, name, line, "line longer than %zu bytes", sizeof buf - 1);
            t->nbad++;
        } else {
            memcpy(buf, s, len);
            buf[len] = '\0';
            char *hash = strchr(buf, '#');
            if (hash)
                *hash = '\0';
            if (tc_model_parse_line(t, buf, name, line, report, arg) != 0)
                t->nbad++;
        }
        s = e ? e + 1 : s + len;
    }
    return t->nbad;
}

tc_err_t tc_tuning_load_file(tc_tuning_t *t, const char *path, tc_tuning_report_fn report,
                             void *arg)
{
    char msg[600];
    const char *why = NULL;
    char *text = NULL;
    size_t n = 0;
    tc_err_t err = TC_OK;
    FILE *f = fopen(path, "r");

    tc_tuning_init(t);
    if (!f) {
        err = tc_err_sys(errno);
    } else if (!(text = malloc(MAX_FILE_BYTES + 1))) {
        err = tc_err(TC_ERR_NOMEM);
        why = "out of memory";
    } else {
        n = fread(text, 1, MAX_FILE_BYTES + 1, f);
        if (ferror(f)) {
            err = tc_err_sys(errno ? errno : EIO);
        } else if (n > MAX_FILE_BYTES) {
            err = tc_err(TC_ERR_PARSE);
            why = "larger than 1 MiB";
        } else if (memchr(text, '\0', n)) {
            err = tc_err(TC_ERR_PARSE);
            why = "not a text file (NUL byte)";
        }
    }
    if (f)
        fclose(f);
    if (err != TC_OK) {
        free(text);
        if (report) {
            snprintf(msg, sizeof msg, "%s: cannot read: %s; no tuning file is used", path,
                     why ? why : strerror(tc_err_cause(err)));
            report(arg, msg);
        }
        return err;
    }
    text[n] = '\0';
    int nbad = tc_tuning_parse(t, text, path, report, arg);
    free(text);
    return nbad ? tc_err(TC_ERR_PARSE) : TC_OK;
}

const tc_tuning_entry_t *tc_tuning_lookup(const tc_tuning_t *t, tc_tuning_op_t op, int level,
                                          uint64_t nbytes)
{
    const tc_tuning_entry_t *best = NULL;
    for (int i = 0; t && i < t->n && i < TC_TUNING_MAX_ENTRIES; i++) {
        const tc_tuning_entry_t *e = &t->e[i];
        if (e->op == (int32_t)op && e->level == level && e->min_bytes <= nbytes &&
            (!best || e->min_bytes > best->min_bytes))
            best = e;
    }
    return best;
}
