/* Locality override file parser; format in locfile.h. */
#include "locfile.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/names.h"
#include "netfile.h" /* string table, line splitting, file reading */

#define LOC_NAME_MAX 255
#define LOC_MAXTOK   (2 + TC_LEVEL_LAST) /* rank + every key, + 1 to see "too many" */

/* Level names from base/names.h (header-only: the parser stands alone, it is
 * fuzzed without the rest of the library). */
_Static_assert(TC_LEVEL_LAST == TC_BASE_LEVEL_COUNT, "base/names.h names every tc_level_t");

enum { MODE_UNSET, MODE_NUMBER, MODE_NAME };

typedef struct locfile_state {
    const char *filename;
    char *err;
    size_t errlen;
    int mode[TC_LEVEL_LAST];
    long mode_line[TC_LEVEL_LAST]; /* line that fixed the mode (0: the shape) */
    tc_hier_strtab_t names[TC_LEVEL_LAST];
} locfile_state_t;

static void tc_hier_seterr(locfile_state_t *st, long lineno, const char *fmt, ...)
{
    if (st->err == NULL || st->errlen == 0)
        return;
    int n = lineno > 0 ? snprintf(st->err, st->errlen, "%s:%ld: ", st->filename, lineno)
                       : snprintf(st->err, st->errlen, "%s: ", st->filename);
    if (n < 0 || (size_t)n >= st->errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->err + n, st->errlen - (size_t)n, fmt, ap);
    va_end(ap);
}

#define TOK_FMT    "'%.*s%s'"
#define TOK_ARG(t) (int)((t).len > 40 ? 40 : (t).len), (t).s, ((t).len > 40 ? "..." : "")

/* Keys are case-sensitive ("socket" = "package"). */
static int tc_hier_level_from_key(const char *s, size_t len)
{
    return tc_base_level_index(s, len, 0);
}

/* Digits only, no sign; *v <= max. Returns 0, or -1 (not a number), -2 (too big). */
static int tc_hier_parse_uint(const char *s, size_t len, int64_t max, int64_t *v)
{
    if (len == 0)
        return -1;
    int64_t x = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        int d = s[i] - '0';
        if (x > (max - d) / 10)
            return -2;
        x = x * 10 + d;
    }
    *v = x;
    return 0;
}

/* key=value -> level and value field; -1 after setting the message. */
static tc_err_t tc_hier_split_kv(locfile_state_t *st, long lineno, tc_hier_tok_t t, int *level,
                                 tc_hier_tok_t *val)
{
    const char *eq = memchr(t.s, '=', t.len);
    if (eq == NULL) {
        tc_hier_seterr(st, lineno, "expected key=value, got " TOK_FMT, TOK_ARG(t));
        return tc_err(TC_ERR_PARSE);
    }
    size_t klen = (size_t)(eq - t.s);
    *level = tc_hier_level_from_key(t.s, klen);
    if (*level < 0) {
        tc_hier_tok_t k = {t.s, klen};
        tc_hier_seterr(st, lineno,
                       "unknown key " TOK_FMT " (accepted: core l2 l3 numa package socket node "
                       "switch1 switch2 switch3 switch4)",
                       TOK_ARG(k));
        return tc_err(TC_ERR_PARSE);
    }
    val->s = eq + 1;
    val->len = t.len - klen - 1;
    if (val->len == 0) {
        tc_hier_seterr(st, lineno, "%s has an empty value", tc_base_level_name(*level));
        return tc_err(TC_ERR_PARSE);
    }
    return TC_OK;
}

static tc_err_t tc_hier_set_mode(locfile_state_t *st, long lineno, int level, int mode)
{
    if (st->mode[level] == MODE_UNSET) {
        st->mode[level] = mode;
        st->mode_line[level] = lineno;
        return TC_OK;
    }
    if (st->mode[level] == mode)
        return TC_OK;
    const char *was = st->mode[level] == MODE_NUMBER ? "numbers" : "names";
    if (st->mode_line[level] > 0)
        tc_hier_seterr(st, lineno, "%s mixes names and numbers (line %ld gives %s)",
                       tc_base_level_name(level), st->mode_line[level], was);
    else
        tc_hier_seterr(st, lineno, "%s mixes names and numbers (the shape gives %s)",
                       tc_base_level_name(level), was);
    return tc_err(TC_ERR_PARSE);
}

/* Value of one key into *id. */
static tc_err_t tc_hier_parse_value(locfile_state_t *st, long lineno, int level, tc_hier_tok_t v,
                                    int64_t *id)
{
    int rc = tc_hier_parse_uint(v.s, v.len, INT64_MAX, id);
    if (rc == -2) {
        tc_hier_seterr(st, lineno, "%s=" TOK_FMT ": number too large", tc_base_level_name(level),
                       TOK_ARG(v));
        return tc_err(TC_ERR_PARSE);
    }
    if (rc == 0)
        return tc_hier_set_mode(st, lineno, level, MODE_NUMBER);
    if (v.len > LOC_NAME_MAX) {
        tc_hier_seterr(st, lineno, "%s=" TOK_FMT ": name too long (%zu > %d characters)",
                       tc_base_level_name(level), TOK_ARG(v), v.len, LOC_NAME_MAX);
        return tc_err(TC_ERR_PARSE);
    }
    if (tc_hier_set_mode(st, lineno, level, MODE_NAME) != 0)
        return tc_err(TC_ERR_PARSE);
    if (tc_hier_strtab_intern(&st->names[level], v.s, v.len, id, NULL) != 0) {
        tc_hier_seterr(st, lineno, "out of memory");
        return tc_err(TC_ERR_PARSE);
    }
    return TC_OK;
}

static tc_err_t tc_hier_parse_shape(locfile_state_t *st, long lineno, const tc_hier_tok_t *tok,
                                    int ntok, int p, tc_hier_loc_t *locs)
{
    int64_t count[TC_LEVEL_LAST];
    int listed[TC_LEVEL_LAST];
    int nlisted = 0;
    int64_t slots = 1;
    int prev = TC_LEVEL_LAST;

    if (ntok < 2) {
        tc_hier_seterr(st, lineno, "shape lists no level");
        return tc_err(TC_ERR_PARSE);
    }
    for (int i = 1; i < ntok; i++) {
        int level;
        tc_hier_tok_t v;
        if (tc_hier_split_kv(st, lineno, tok[i], &level, &v) != 0)
            return tc_err(TC_ERR_PARSE);
        if (level >= prev) {
            tc_hier_seterr(st, lineno,
                           "shape: %s must come before %s (levels go from the top down, "
                           "each once)",
                           tc_base_level_name(prev < TC_LEVEL_LAST ? prev : level),
                           tc_base_level_name(level));
            return tc_err(TC_ERR_PARSE);
        }
        prev = level;
        /* Counts are capped so the slot product cannot overflow. */
        if (tc_hier_parse_uint(v.s, v.len, INT32_MAX, &count[level]) != 0 || count[level] < 1) {
            tc_hier_seterr(st, lineno, "shape: %s=" TOK_FMT ": expected a count from 1 to %d",
                           tc_base_level_name(level), TOK_ARG(v), INT32_MAX);
            return tc_err(TC_ERR_PARSE);
        }
        if (slots > INT32_MAX / count[level]) {
            tc_hier_seterr(st, lineno, "shape: more than %d slots", INT32_MAX);
            return tc_err(TC_ERR_PARSE);
        }
        slots *= count[level];
        listed[nlisted++] = level;
        st->mode[level] = MODE_NUMBER;
        st->mode_line[level] = 0;
    }
    if (slots < p) {
        tc_hier_seterr(st, lineno, "shape holds %lld ranks, the communicator has %d",
                       (long long)slots, p);
        return tc_err(TC_ERR_PARSE);
    }
    for (int r = 0; r < p; r++) {
        for (int l = 0; l < TC_LEVEL_LAST; l++)
            locs[r].id[l] = TC_LOC_UNKNOWN;
        /* Global unit index = slot / (slots of one unit of this level). */
        int64_t below = 1;
        for (int i = nlisted - 1; i >= 0; i--) {
            locs[r].id[listed[i]] = r / below;
            below *= count[listed[i]];
        }
    }
    return TC_OK;
}

static tc_err_t tc_hier_parse_rank_line(locfile_state_t *st, long lineno, const tc_hier_tok_t *tok,
                                        int ntok, int p, tc_hier_loc_t *locs, unsigned char *seen,
                                        int shaped)
{
    int64_t rank;
    int rc = tc_hier_parse_uint(tok[0].s, tok[0].len, INT32_MAX, &rank);
    if (rc == -1) {
        tc_hier_seterr(st, lineno, "expected a rank number, got " TOK_FMT, TOK_ARG(tok[0]));
        return tc_err(TC_ERR_PARSE);
    }
    if (rc == -2 || rank >= p) {
        tc_hier_seterr(st, lineno, "rank " TOK_FMT " out of range (the communicator has %d ranks)",
                       TOK_ARG(tok[0]), p);
        return tc_err(TC_ERR_PARSE);
    }
    if (seen[rank]) {
        tc_hier_seterr(st, lineno, "rank %lld listed twice", (long long)rank);
        return tc_err(TC_ERR_PARSE);
    }
    seen[rank] = 1;
    if (ntok > 1 + TC_LEVEL_LAST) {
        tc_hier_seterr(st, lineno, "%d keys given, there are only %d levels", ntok - 1,
                       TC_LEVEL_LAST);
        return tc_err(TC_ERR_PARSE);
    }
    tc_hier_loc_t loc;
    int given[TC_LEVEL_LAST] = {0};
    for (int l = 0; l < TC_LEVEL_LAST; l++)
        loc.id[l] = shaped ? locs[rank].id[l] : TC_LOC_UNKNOWN;
    for (int i = 1; i < ntok; i++) {
        int level;
        tc_hier_tok_t v;
        if (tc_hier_split_kv(st, lineno, tok[i], &level, &v) != 0)
            return tc_err(TC_ERR_PARSE);
        if (given[level]) {
            tc_hier_seterr(st, lineno, "%s given twice", tc_base_level_name(level));
            return tc_err(TC_ERR_PARSE);
        }
        given[level] = 1;
        if (tc_hier_parse_value(st, lineno, level, v, &loc.id[level]) != 0)
            return tc_err(TC_ERR_PARSE);
    }
    locs[rank] = loc;
    return TC_OK;
}

tc_err_t tc_hier_locfile_parse(const char *text, size_t len, const char *filename, int p,
                               tc_hier_loc_t *locs, char *err, size_t errlen)
{
    locfile_state_t st;
    tc_hier_tok_t tok[LOC_MAXTOK];
    tc_hier_lines_t ls = {text, len, 0, 0};
    const char *line;
    size_t linelen;
    unsigned char *seen = NULL;
    int shaped = 0, first = 1;
    tc_err_t rc = tc_err(TC_ERR_PARSE);

    memset(&st, 0, sizeof(st));
    st.filename = filename ? filename : "(locality file)";
    st.err = err;
    st.errlen = errlen;
    if (p < 1) {
        tc_hier_seterr(&st, 0, "communicator size %d", p);
        return tc_err(TC_ERR_ARG);
    }
    seen = calloc((size_t)p, 1);
    if (seen == NULL) {
        tc_hier_seterr(&st, 0, "out of memory");
        return tc_err(TC_ERR_NOMEM);
    }
    while (tc_hier_lines_next(&ls, &line, &linelen)) {
        int bad = 0;
        int ntok = tc_hier_line_split(line, linelen, tok, LOC_MAXTOK, &bad);
        if (ntok < 0) {
            tc_hier_seterr(&st, ls.lineno, "non-printable character (byte 0x%02x)", bad);
            goto fn_exit;
        }
        if (ntok == 0)
            continue;
        int is_shape = tok[0].len == 5 && memcmp(tok[0].s, "shape", 5) == 0;
        if (is_shape && !first) {
            tc_hier_seterr(&st, ls.lineno, "shape must be the first line");
            goto fn_exit;
        }
        if (is_shape && ntok > LOC_MAXTOK - 1) {
            tc_hier_seterr(&st, ls.lineno, "shape: %d levels given, there are only %d", ntok - 1,
                           TC_LEVEL_LAST);
            goto fn_exit;
        }
        first = 0;
        if (is_shape) {
            if (tc_hier_parse_shape(&st, ls.lineno, tok, ntok, p, locs) != 0)
                goto fn_exit;
            shaped = 1;
        } else if (tc_hier_parse_rank_line(&st, ls.lineno, tok, ntok, p, locs, seen, shaped) != 0) {
            goto fn_exit;
        }
    }
    if (!shaped) {
        for (int r = 0; r < p; r++) {
            if (!seen[r]) {
                tc_hier_seterr(&st, 0, "rank %d not listed (the communicator has %d ranks)", r, p);
                goto fn_exit;
            }
        }
    }
    rc = TC_OK;
fn_exit:
    free(seen);
    for (int l = 0; l < TC_LEVEL_LAST; l++)
        tc_hier_strtab_free(&st.names[l]);
    return rc;
}

tc_err_t tc_hier_locfile_load(const char *path, int p, tc_hier_loc_t *locs, char *err,
                              size_t errlen)
{
    char *buf;
    size_t len;
    tc_err_t rc = tc_hier_file_read(path, &buf, &len);
    if (rc != TC_OK) {
        if (err && errlen)
            snprintf(err, errlen, "%s: cannot read: %s", path, strerror(tc_err_cause(rc)));
        return rc;
    }
    rc = tc_hier_locfile_parse(buf, len, path, p, locs, err, errlen);
    free(buf);
    return rc;
}
