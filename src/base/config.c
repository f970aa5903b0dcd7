/* The configuration engine: parsing, per-module loading, and the text of a
 * value. The variables themselves are in the modules' tables (settings.c of
 * each module; the gathered list in src/core/settings.c).
 *
 * "auto" fields. config.h's descriptor has no field for "0 means automatic, and
 * explicit values start at 4096", so the rule is carried by the default text: an
 * INT or SIZE entry whose default is the word "auto" accepts "auto" and "0" (both
 * give 0, meaning "derive it") in addition to the explicit range [min, max]. min is
 * therefore the smallest explicit value (4096 for the fragment size, a page), not
 * 0, and every consumer of the tables (docs/tunables.md, topocoll-info) sees the real
 * range and "auto" as the default without a private side table.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------------------------ */
/* Parsing (pure) */

/* Longest value quoted in a message; longer ones are cut with "...". */
#define TC_CFG_QUOTE_MAX 64

static bool tc_config_is_auto(const tc_cfg_desc_t *desc)
{
    return (desc->type == TC_CFG_TYPE_INT || desc->type == TC_CFG_TYPE_SIZE) && desc->def &&
           strcmp(desc->def, "auto") == 0;
}

void tc_config_size_format(double v, char *buf, size_t len)
{
    /* Integer arithmetic: the bounds are exact. */
    const uint64_t mib = 1024 * 1024, gib = mib * 1024;
    uint64_t x = (uint64_t)v;
    if (x >= gib && x % gib == 0)
        snprintf(buf, len, "%lluG", (unsigned long long)(x / gib));
    else if (x >= mib && x % mib == 0)
        snprintf(buf, len, "%lluM", (unsigned long long)(x / mib));
    else
        snprintf(buf, len, "%llu", (unsigned long long)x);
}

/* Copy @p text for quoting into @p buf (TC_CFG_QUOTE_MAX + 4 bytes): control
 * characters become '?', long values are cut and end in "...". */
static void tc_config_quote(const char *text, char *buf)
{
    size_t n = 0;
    for (; text[n] && n < TC_CFG_QUOTE_MAX; n++)
        buf[n] = iscntrl((unsigned char)text[n]) ? '?' : text[n];
    strcpy(buf + n, text[n] ? "..." : "");
}

static void tc_config_error(const tc_cfg_desc_t *desc, const char *text, char *err, size_t errlen)
{
    char quoted[TC_CFG_QUOTE_MAX + 4];
    char lo[32], hi[32];
    const char *autotext = tc_config_is_auto(desc) ? "auto (or 0) or " : "";

    if (!err || errlen == 0)
        return;
    tc_config_quote(text, quoted);
    switch (desc->type) {
    case TC_CFG_TYPE_BOOL:
        snprintf(err, errlen, "%s=\"%s\": expected one of 0, 1, yes, no, on, off, true, false",
                 desc->name, quoted);
        break;
    case TC_CFG_TYPE_INT:
        snprintf(err, errlen, "%s=\"%s\": expected %san integer in %.0f..%.0f", desc->name, quoted,
                 autotext, desc->min, desc->max);
        break;
    case TC_CFG_TYPE_SIZE:
        tc_config_size_format(desc->min, lo, sizeof lo);
        tc_config_size_format(desc->max, hi, sizeof hi);
        snprintf(err, errlen,
                 "%s=\"%s\": expected %sa size in bytes in %s..%s (optional suffix K, M or G, "
                 "binary)",
                 desc->name, quoted, autotext, lo, hi);
        break;
    case TC_CFG_TYPE_DOUBLE:
        snprintf(err, errlen, "%s=\"%s\": expected a number in %.15g..%.15g", desc->name, quoted,
                 desc->min, desc->max);
        break;
    case TC_CFG_TYPE_ENUM:
        snprintf(err, errlen, "%s=\"%s\": expected one of %s", desc->name, quoted,
                 desc->accepted ? desc->accepted : "(none)");
        break;
    case TC_CFG_TYPE_STRING:
        snprintf(err, errlen, "%s=\"%s\": expected at most %d bytes of text", desc->name, quoted,
                 TC_CFG_STRING_MAX);
        break;
    default:
        snprintf(err, errlen, "%s=\"%s\": unknown variable type", desc->name, quoted);
        break;
    }
}

/* Strip leading and trailing white space into @p buf; false if it does not fit. */
static bool tc_config_trim(const char *text, char *buf, size_t len)
{
    const char *end;
    size_t n;

    while (isspace((unsigned char)*text))
        text++;
    end = text + strlen(text);
    while (end > text && isspace((unsigned char)end[-1]))
        end--;
    n = (size_t)(end - text);
    if (n + 1 > len)
        return false;
    memcpy(buf, text, n);
    buf[n] = '\0';
    return true;
}

/* Length of @p text without leading and trailing white space. */
static size_t tc_config_trimmed_len(const char *text)
{
    const char *end;

    while (isspace((unsigned char)*text))
        text++;
    end = text + strlen(text);
    while (end > text && isspace((unsigned char)end[-1]))
        end--;
    return (size_t)(end - text);
}

static tc_err_t tc_config_parse_bool(const char *s, int64_t *v)
{
    static const char *const yes[] = {"1", "yes", "on", "true"};
    static const char *const no[] = {"0", "no", "off", "false"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *v = 1;
            return TC_OK;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *v = 0;
            return TC_OK;
        }
    }
    return tc_err(TC_ERR_PARSE);
}

static tc_err_t tc_config_parse_int(const char *s, int64_t *v)
{
    char *end;
    long long x;

    /* strtoll alone would accept inner white space and an empty digit string. */
    if (!(isdigit((unsigned char)s[0]) ||
          ((s[0] == '-' || s[0] == '+') && isdigit((unsigned char)s[1]))))
        return tc_err(TC_ERR_PARSE);
    errno = 0;
    x = strtoll(s, &end, 10);
    if (errno == ERANGE || *end != '\0')
        return tc_err(TC_ERR_PARSE);
    *v = (int64_t)x;
    return TC_OK;
}

/* Digits with an optional binary suffix; no sign, no fraction. */
static tc_err_t tc_config_parse_size(const char *s, int64_t *v)
{
    static const struct {
        const char *word;
        unsigned shift;
    } suffixes[] = {{"", 0},     {"k", 10}, {"kib", 10}, {"m", 20},
                    {"mib", 20}, {"g", 30}, {"gib", 30}};
    uint64_t x = 0;
    const char *p = s;

    if (!isdigit((unsigned char)*p))
        return tc_err(TC_ERR_PARSE);
    for (; isdigit((unsigned char)*p); p++) {
        uint64_t d = (uint64_t)(*p - '0');
        if (x > (UINT64_MAX - d) / 10)
            return tc_err(TC_ERR_PARSE);
        x = x * 10 + d;
    }
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        if (strcasecmp(p, suffixes[i].word) != 0)
            continue;
        /* Keep the result representable as int64_t (and exactly as a double
         * for every value within the table's bounds). */
        if (x > ((uint64_t)INT64_MAX >> suffixes[i].shift))
            return tc_err(TC_ERR_PARSE);
        *v = (int64_t)(x << suffixes[i].shift);
        return TC_OK;
    }
    return tc_err(TC_ERR_PARSE);
}

static tc_err_t tc_config_parse_double(const char *s, double *v)
{
    char *end;
    double x;

    if (*s == '\0')
        return tc_err(TC_ERR_PARSE);
    errno = 0;
    x = strtod(s, &end);
    if (*end != '\0' || !isfinite(x))
        return tc_err(TC_ERR_PARSE);
    *v = x;
    return TC_OK;
}

/* Index of @p s in the comma-separated @p list (case-insensitive), or -1. */
static int64_t tc_config_parse_enum(const char *list, const char *s)
{
    size_t n = strlen(s);
    int64_t index = 0;

    if (!list || n == 0)
        return -1;
    for (const char *w = list;; index++) {
        const char *comma = strchr(w, ',');
        size_t wl = comma ? (size_t)(comma - w) : strlen(w);
        if (wl == n && strncasecmp(w, s, n) == 0)
            return index;
        if (!comma)
            return -1;
        w = comma + 1;
    }
}

tc_err_t tc_config_parse(const tc_cfg_desc_t *desc, const char *text, tc_cfg_value_t *out,
                         char *err, size_t errlen)
{
    /* Longer than any valid value by far; a value that does not fit is invalid. */
    char s[128];
    int64_t i = 0;
    double d = 0;
    tc_err_t rc = tc_err(TC_ERR_PARSE);

    if (err && errlen)
        err[0] = '\0';
    if (!desc || !out)
        return tc_err(TC_ERR_ARG);
    if (!text)
        text = "";
    if (desc->type == TC_CFG_TYPE_STRING) {
        /* Free text: only its length is checked here; tc_config_string()
         * keeps the trimmed copy. */
        size_t n = tc_config_trimmed_len(text);
        if (n > TC_CFG_STRING_MAX)
            goto fn_fail;
        out->i = (int64_t)n;
        out->d = (double)n;
        return 0;
    }
    if (!tc_config_trim(text, s, sizeof s))
        goto fn_fail;

    if (tc_config_is_auto(desc) && strcasecmp(s, "auto") == 0) {
        out->i = 0;
        out->d = 0;
        return 0;
    }

    switch (desc->type) {
    case TC_CFG_TYPE_BOOL:
        rc = tc_config_parse_bool(s, &i);
        d = (double)i;
        break;
    case TC_CFG_TYPE_INT:
    case TC_CFG_TYPE_SIZE:
        rc = desc->type == TC_CFG_TYPE_INT ? tc_config_parse_int(s, &i)
                                           : tc_config_parse_size(s, &i);
        d = (double)i;
        /* An auto field takes 0 (however spelt) besides its explicit range. */
        if (rc == TC_OK && !(i == 0 && tc_config_is_auto(desc)) && (d < desc->min || d > desc->max))
            rc = tc_err(TC_ERR_PARSE);
        break;
    case TC_CFG_TYPE_DOUBLE:
        rc = tc_config_parse_double(s, &d);
        if (rc == TC_OK && (d < desc->min || d > desc->max))
            rc = tc_err(TC_ERR_PARSE);
        if (rc == TC_OK && d > -9e18 && d < 9e18) /* keep the conversion defined */
            i = (int64_t)d;
        break;
    case TC_CFG_TYPE_ENUM:
        i = tc_config_parse_enum(desc->accepted, s);
        rc = i < 0 ? tc_err(TC_ERR_PARSE) : TC_OK;
        d = (double)i;
        break;
    default:
        break;
    }
    if (rc != 0)
        goto fn_fail;
    out->i = i;
    out->d = d;
    return TC_OK;

fn_fail:
    tc_config_error(desc, text, err, errlen);
    return tc_err(TC_ERR_PARSE);
}

/* ------------------------------------------------------------------------ */
/* Loaded values */

/* Double-checked loading per module instead of pthread_once, because
 * tc_config_reset must be able to re-arm it (a pthread_once_t cannot portably
 * be reset). The modules loaded so far, for tc_config_reset. */
#define TC_CFG_MODULES_MAX 32
static pthread_mutex_t tc_cfg_lock = PTHREAD_MUTEX_INITIALIZER;
static tc_cfg_module_t *tc_cfg_known[TC_CFG_MODULES_MAX];
static int tc_cfg_nknown;

/* Cut a copy of an ENUM entry's accepted list at its commas, once: the words
 * are the values' names in index order (tc_config_enum_name). */
static void tc_config_words_split(const tc_cfg_desc_t *desc, tc_cfg_slot_t *slot)
{
    if (desc->type != TC_CFG_TYPE_ENUM || !desc->accepted || slot->words)
        return;
    slot->words = strdup(desc->accepted);
    for (char *c = slot->words; c && *c; c++)
        if (*c == ',')
            *c = '\0';
}

static void tc_config_read_env(tc_cfg_module_t *m)
{
    char err[256];

    for (int id = 0; id < m->count; id++) {
        const tc_cfg_desc_t *desc = &m->table[id];
        tc_cfg_slot_t *slot = &m->slots[id];
        const char *env = getenv(desc->name);

        slot->value = (tc_cfg_value_t){0, 0};
        slot->source = TC_CFG_SRC_DEFAULT;
        free(slot->raw);
        slot->raw = NULL;
        free(slot->str);
        slot->str = NULL;
        tc_config_words_split(desc, slot);
        if (env) {
            slot->raw = strdup(env);
            if (tc_config_parse(desc, env, &slot->value, err, sizeof err) == 0) {
                if (desc->type == TC_CFG_TYPE_STRING) {
                    size_t n = (size_t)slot->value.i;
                    char *copy = malloc(n + 1);
                    if (!copy) {
                        fprintf(stderr, "topocoll: %s: out of memory; using the default \"%s\"\n",
                                desc->name, desc->def);
                        slot->source = TC_CFG_SRC_INVALID;
                        (void)tc_config_parse(desc, desc->def, &slot->value, NULL, 0);
                        continue;
                    }
                    (void)tc_config_trim(env, copy, n + 1);
                    slot->str = copy;
                }
                slot->source = TC_CFG_SRC_ENV;
                continue;
            }
            slot->source = TC_CFG_SRC_INVALID;
            /* Always printed: the user asked for something and does not get it. */
            fprintf(stderr, "topocoll: %s; using the default %s\n", err,
                    desc->def[0] ? desc->def : "(empty)");
        }
        /* Defaults are checked by test_config, so this cannot fail. */
        (void)tc_config_parse(desc, desc->def, &slot->value, NULL, 0);
    }
}

void tc_config_module_load(tc_cfg_module_t *m)
{
    /* acquire: pairs with the release below, so the values are visible. */
    if (tc_load_acquire_u64(&m->loaded))
        return;
    pthread_mutex_lock(&tc_cfg_lock);
    if (!tc_load_relaxed_u64(&m->loaded)) {
        int known = 0;
        for (int i = 0; i < tc_cfg_nknown; i++)
            known |= tc_cfg_known[i] == m;
        if (!known && tc_cfg_nknown < TC_CFG_MODULES_MAX)
            tc_cfg_known[tc_cfg_nknown++] = m;
        tc_config_read_env(m);
        if (m->loaded_hook)
            m->loaded_hook(m);
        /* release: pairs with the acquire above and in tc_config_module_ready(). */
        tc_store_release_u64(&m->loaded, 1);
    }
    pthread_mutex_unlock(&tc_cfg_lock);
}

void tc_config_load(tc_cfg_module_t *const *modules, int n)
{
    for (int i = 0; i < n; i++)
        tc_config_module_load(modules[i]);
}

/* Not thread-safe: no other thread may be loading or reading the values. */
void tc_config_reset(void)
{
    pthread_mutex_lock(&tc_cfg_lock);
    for (int i = 0; i < tc_cfg_nknown; i++)
        tc_store_relaxed_u64(&tc_cfg_known[i]->loaded, 0);
    pthread_mutex_unlock(&tc_cfg_lock);
}

const char *tc_config_string(tc_cfg_module_t *m, int id)
{
    tc_config_module_ready(m);
    if (id < 0 || id >= m->count || m->table[id].type != TC_CFG_TYPE_STRING)
        return "";
    return m->slots[id].str ? m->slots[id].str : m->table[id].def;
}

tc_cfg_module_t *tc_config_find(tc_cfg_module_t *const *modules, int n, const char *name, int *id)
{
    for (int i = 0; i < n; i++)
        for (int k = 0; k < modules[i]->count; k++)
            if (strcmp(modules[i]->table[k].name, name) == 0) {
                if (id)
                    *id = k;
                return modules[i];
            }
    return NULL;
}

const char *tc_config_enum_name(tc_cfg_module_t *m, int id, int64_t index)
{
    const tc_cfg_desc_t *desc = tc_config_desc(m, id);
    const char *w, *end;

    if (!desc || desc->type != TC_CFG_TYPE_ENUM || index < 0)
        return "?";
    tc_config_module_ready(m); /* the words are cut at loading */
    w = m->slots[id].words;
    if (!w)
        return "?";
    end = w + strlen(desc->accepted); /* the copy's last NUL */
    for (; index > 0; index--) {
        w += strlen(w) + 1;
        if (w > end)
            return "?";
    }
    return w;
}

static void tc_config_size_text(int64_t v, char *buf, size_t len)
{
    /* As a user would write it: the largest binary suffix that divides it. */
    const int64_t kib = 1024;
    if (v >= kib && v % kib == 0 && (v % (kib * kib) != 0 || v < kib * kib))
        snprintf(buf, len, "%lldK", (long long)(v / kib));
    else
        tc_config_size_format((double)v, buf, len);
}

void tc_config_value_text(tc_cfg_module_t *m, int id, char *buf, size_t len)
{
    const tc_cfg_desc_t *desc = tc_config_desc(m, id);
    int64_t i;

    if (!buf || len == 0)
        return;
    if (!desc) {
        snprintf(buf, len, "?");
        return;
    }
    i = tc_config_int(m, id);
    switch (desc->type) {
    case TC_CFG_TYPE_BOOL:
        snprintf(buf, len, "%d", i ? 1 : 0);
        break;
    case TC_CFG_TYPE_INT:
        if (i == 0 && tc_config_is_auto(desc))
            snprintf(buf, len, "auto");
        else
            snprintf(buf, len, "%lld", (long long)i);
        break;
    case TC_CFG_TYPE_SIZE:
        if (i == 0 && tc_config_is_auto(desc))
            snprintf(buf, len, "auto");
        else
            tc_config_size_text(i, buf, len);
        break;
    case TC_CFG_TYPE_DOUBLE:
        snprintf(buf, len, "%.15g", tc_config_double(m, id));
        break;
    case TC_CFG_TYPE_ENUM:
        snprintf(buf, len, "%s", tc_config_enum_name(m, id, i));
        break;
    case TC_CFG_TYPE_STRING: {
        const char *s = tc_config_string(m, id);
        snprintf(buf, len, "%s", s[0] ? s : "(unset)");
        break;
    }
    default:
        snprintf(buf, len, "?");
        break;
    }
}
