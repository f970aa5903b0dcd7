/* topocoll-tunables: print the table of TC_* environment variables (from
 * every module's table, gathered in
 * src/core/settings.c) as a Markdown table, the one in docs/tunables.md.
 *
 *   topocoll-tunables               print the table
 *   topocoll-tunables --check FILE  exit 1 unless FILE holds exactly this table
 *                                   (a test keeps docs/tunables.md in sync)
 *
 * Needs no MPI at run time: it only reads the table.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/config.h"
#include "core/query.h"

typedef struct {
    char *buf;
    size_t len, cap;
} tc_tun_text_t;

static void tc_tun_text_append(tc_tun_text_t *t, const char *s)
{
    size_t n = strlen(s);
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (t->len + n + 1 > cap)
            cap *= 2;
        char *nb = realloc(t->buf, cap);
        if (!nb) {
            fprintf(stderr, "topocoll-tunables: out of memory\n");
            exit(2);
        }
        t->buf = nb;
        t->cap = cap;
    }
    memcpy(t->buf + t->len, s, n + 1);
    t->len += n;
}

/* A table cell: '|' would end the cell, so it is escaped. */
static void tc_tun_text_cell(tc_tun_text_t *t, const char *s)
{
    char one[2] = {0, 0};
    tc_tun_text_append(t, " ");
    for (; *s; s++) {
        if (*s == '|') {
            tc_tun_text_append(t, "\\|");
        } else {
            one[0] = *s;
            tc_tun_text_append(t, one);
        }
    }
    tc_tun_text_append(t, " |");
}

static const char *tc_tun_type_name(tc_cfg_type_t type)
{
    switch (type) {
    case TC_CFG_TYPE_BOOL:
        return "bool";
    case TC_CFG_TYPE_INT:
        return "integer";
    case TC_CFG_TYPE_SIZE:
        return "size";
    case TC_CFG_TYPE_DOUBLE:
        return "number";
    case TC_CFG_TYPE_ENUM:
        return "word";
    case TC_CFG_TYPE_STRING:
        return "text";
    default:
        return "?";
    }
}

static void tc_tun_accepted(const tc_cfg_desc_t *d, char *buf, size_t len)
{
    char lo[32], hi[32];
    /* config.c: an INT or SIZE whose default is "auto" also takes auto (= 0). */
    const char *autotext =
        (d->type == TC_CFG_TYPE_INT || d->type == TC_CFG_TYPE_SIZE) && strcmp(d->def, "auto") == 0
            ? "`auto` (or 0), "
            : "";

    switch (d->type) {
    case TC_CFG_TYPE_BOOL:
        snprintf(buf, len, "0/1, yes/no, on/off, true/false");
        break;
    case TC_CFG_TYPE_INT:
        snprintf(buf, len, "%s%.0f..%.0f", autotext, d->min, d->max);
        break;
    case TC_CFG_TYPE_SIZE:
        tc_config_size_format(d->min, lo, sizeof lo);
        tc_config_size_format(d->max, hi, sizeof hi);
        snprintf(buf, len, "%s%s..%s bytes (suffix K, M, G)", autotext, lo, hi);
        break;
    case TC_CFG_TYPE_DOUBLE:
        snprintf(buf, len, "%.15g..%.15g", d->min, d->max);
        break;
    case TC_CFG_TYPE_ENUM: {
        /* `a`, `b`, `c` from "a,b,c" */
        size_t n = 0;
        buf[0] = '\0';
        for (const char *w = d->accepted; w && *w && n + 1 < len;) {
            const char *comma = strchr(w, ',');
            int wl = comma ? (int)(comma - w) : (int)strlen(w);
            int r = snprintf(buf + n, len - n, "%s`%.*s`", n ? ", " : "", wl, w);
            if (r < 0)
                break;
            n += (size_t)r;
            if (!comma)
                break;
            w = comma + 1;
        }
        break;
    }
    case TC_CFG_TYPE_STRING:
        snprintf(buf, len, "text, at most %d bytes", TC_CFG_STRING_MAX);
        break;
    default:
        snprintf(buf, len, "?");
        break;
    }
}

/* One row of the table. */
static void tc_tun_row(tc_tun_text_t *t, const tc_cfg_desc_t *d)
{
    char cell[512];

    tc_tun_text_append(t, "|");
    snprintf(cell, sizeof cell, "`%s`", d->name);
    tc_tun_text_cell(t, cell);
    tc_tun_text_cell(t, tc_tun_type_name(d->type));
    /* An empty code span does not render: say "(empty)". */
    if (d->def[0])
        snprintf(cell, sizeof cell, "`%s`", d->def);
    else
        snprintf(cell, sizeof cell, "(empty)");
    tc_tun_text_cell(t, cell);
    tc_tun_accepted(d, cell, sizeof cell);
    tc_tun_text_cell(t, cell);
    tc_tun_text_cell(t, d->doc);
    tc_tun_text_append(t, "\n");
}

/* Every module's table, in the gathered order (core/settings.c), through the
 * query interface. */
static void tc_tun_table_build(tc_tun_text_t *t)
{
    tc_tun_text_append(t, "| Variable | Type | Default | Accepted | Description |\n");
    tc_tun_text_append(t, "|---|---|---|---|---|\n");
    const int n = tc_query_tunable_count();
    for (int i = 0; i < n; i++)
        tc_tun_row(t, tc_query_tunable_desc(i));
}

static char *tc_tun_file_read(const char *path)
{
    FILE *f = fopen(path, "rb");
    tc_tun_text_t t = {0};
    char chunk[4096];
    size_t n;

    if (!f)
        return NULL;
    tc_tun_text_append(&t, "");
    while ((n = fread(chunk, 1, sizeof chunk - 1, f)) > 0) {
        chunk[n] = '\0';
        if (memchr(chunk, '\0', n)) /* not text: cannot hold the table */
            break;
        tc_tun_text_append(&t, chunk);
    }
    fclose(f);
    return t.buf;
}

/* FILE must hold the table as whole lines, with no extra rows glued to it. */
static int tc_tun_check(const char *path, const char *table)
{
    char *text = tc_tun_file_read(path);
    const char *at;
    int ok;

    if (!text) {
        perror(path);
        return 1;
    }
    at = strstr(text, table);
    ok = at && (at == text || at[-1] == '\n') && at[strlen(table)] != '|';
    if (ok && strstr(at + 1, table))
        ok = 0; /* twice: one copy is stale or a paste went wrong */
    free(text);
    if (!ok) {
        fprintf(stderr,
                "%s: does not contain the current tunables table; regenerate it with "
                "topocoll-tunables\n",
                path);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    tc_tun_text_t table = {0};
    int rc;

    tc_tun_table_build(&table);
    if (argc == 1) {
        fputs(table.buf, stdout);
        rc = 0;
    } else if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        /* Every option here must appear in docs/man/topocoll-tunables.1 (test man_pages). */
        printf("usage: topocoll-tunables [--check FILE] [-h]\n"
               "  Prints the table of TC_* environment variables as Markdown.\n"
               "  --check FILE   exit 1 unless FILE holds exactly this table\n"
               "  -h, --help     this help\n");
        rc = 0;
    } else if (argc == 3 && strcmp(argv[1], "--check") == 0) {
        rc = tc_tun_check(argv[2], table.buf);
    } else {
        fprintf(stderr, "usage: %s [--check FILE] [-h]\n", argv[0]);
        rc = 2;
    }
    free(table.buf);
    return rc;
}
