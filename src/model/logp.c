/* LogP / LogGP parameter tables: names, defaults, the file format, TC_LOGP.
 * See logp.h for the formats and docs/model.md for where every default
 * comes from. Pure C + libc and the base layer's names (DESIGN.md). */
#include "logp.h"

#include "base/err.h"
#include "base/names.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(TC_MODEL_LEVEL_LAST == TC_BASE_LEVEL_COUNT &&
                   TC_MODEL_LEVEL_PACKAGE == TC_BASE_LEVEL_PACKAGE,
               "base/names.h names every tc_model_level_t");

#define ACCEPTED_LEVELS "core, l2, l3, numa, package (or socket), node, switch1..switch4, shm"
#define ACCEPTED_FIELDS "L, o_s, o_r, g, G, E, rdv, w, X"
#define NFIELDS         9
/* Fields every file line must have; E, rdv, w and X are optional (logp.h). */
#define NFIELDS_REQUIRED 5
/* The duplex factor's field and its range (logp.h). */
#define FIELD_X 8
#define X_MIN   1.0
#define X_MAX   2.0

/* Field order of the file format and of tc_logp_t. */
static const char *const field_names[NFIELDS] = {"L", "o_s", "o_r", "g", "G", "E", "rdv", "w", "X"};

/* Built-in defaults (microseconds; G in us/byte). Provenance in
 * docs/model.md, "Defaults":
 *  - core..numa: ping-pong of 8 B between two ranks of Open MPI 4 (vader) on
 *    the 2-core AMD EPYC KVM guest of CI (the two cores share the L3, not an
 *    L2): one-way 0.22-0.25 us, send call 0.07 us (Wtime cost removed), gap of
 *    back-to-back Isends 0.10-0.13 us, 1 MiB ping-pong 0.00012 us/B. Levels
 *    closer than l3 are taken as l3 (a shared L2 saves little on a message
 *    path), numa adds an AMD cross-CCD hop;
 *  - package/node: not measurable here (one socket); a cross-socket cache
 *    line transfer costs ~2-3x a same-socket one, hence L 0.20 / 0.35 and a
 *    lower copy bandwidth;
 *  - switch1..4: InfiniBand EDR (100 Gb/s, ~12 GB/s payload -> G = 1/12000
 *    us/B), MPI one-way ~1.0 us through one switch, +2 switch hops of ~90 ns
 *    per extra level (up and down), o ~0.3 us, g ~0.2 us.
 * E, rdv: within a node, Open MPI's shared-memory BTL (vader) sends
 * messages from 4 KiB on with a rendezvous (btl_vader_eager_limit, which
 * counts the fragment header: payloads above ~4064 B); the
 * ping-pong's one-way time steps up there by 2.5-3 us on the CI machine
 * (0.65 us at 4000 B, 3.45 us at 4096 B; docs/model.md). MPICH differs (~8
 * KiB, 3-7 us): topocoll-logp measures both for the MPI at hand. Between
 * nodes UCX's and the usual InfiniBand thresholds lie at 8-16 KiB: 8 KiB,
 * and a handshake of one small-message round trip, 2 (0.3 + 1.0 + 0.3)
 * (estimate). w: 0 (measured by topocoll-logp when run oversubscribed;
 * without a measurement no scheduler term).
 * X (duplex): 2 within a node, where the MPI's shared memory moves every
 * byte with the CPUs of the processes themselves: the CI machine measured
 * 1.9-2.0 while other jobs held its cores and ~1.0 when both were free
 * (docs/model.md, "Duplex"), and 2 is the safer guess (taking 1 where 2
 * holds costs more than the reverse); 1 between nodes, where the defaults
 * describe InfiniBand, whose NICs move both directions by DMA at once (a
 * network whose per-byte cost is the CPU's, TCP or the emulated cluster,
 * measures its own with topocoll-logp). */
#define EAGER_SHM 4064.0
#define RDV_SHM   2.6
#define EAGER_NET 8192.0
#define RDV_NET   3.2
#define X_SHM     2.0
#define X_NET     1.0
static const tc_logp_t level_defaults[TC_MODEL_LEVEL_LAST] = {
    /*                        L     o_s   o_r   g     G              E  rdv w  X */
    [TC_MODEL_LEVEL_CORE] = {0.08, 0.07, 0.08, 0.10, 0.00012, EAGER_SHM, RDV_SHM, 0, X_SHM},
    [TC_MODEL_LEVEL_L2] = {0.08, 0.07, 0.08, 0.10, 0.00012, EAGER_SHM, RDV_SHM, 0, X_SHM},
    [TC_MODEL_LEVEL_L3] = {0.08, 0.07, 0.08, 0.10, 0.00012, EAGER_SHM, RDV_SHM, 0, X_SHM},
    [TC_MODEL_LEVEL_NUMA] = {0.12, 0.07, 0.08, 0.10, 0.00012, EAGER_SHM, RDV_SHM, 0, X_SHM},
    [TC_MODEL_LEVEL_PACKAGE] = {0.20, 0.07, 0.08, 0.10, 0.00015, EAGER_SHM, RDV_SHM, 0, X_SHM},
    [TC_MODEL_LEVEL_NODE] = {0.35, 0.07, 0.08, 0.10, 0.00020, EAGER_SHM, RDV_SHM, 0, X_SHM},
    [TC_MODEL_LEVEL_SWITCH1] = {1.00, 0.30, 0.30, 0.20, 1.0 / 12000.0, EAGER_NET, RDV_NET, 0,
                                X_NET},
    [TC_MODEL_LEVEL_SWITCH2] = {1.18, 0.30, 0.30, 0.20, 1.0 / 12000.0, EAGER_NET, RDV_NET, 0,
                                X_NET},
    [TC_MODEL_LEVEL_SWITCH3] = {1.36, 0.30, 0.30, 0.20, 1.0 / 12000.0, EAGER_NET, RDV_NET, 0,
                                X_NET},
    [TC_MODEL_LEVEL_SWITCH4] = {1.54, 0.30, 0.30, 0.20, 1.0 / 12000.0, EAGER_NET, RDV_NET, 0,
                                X_NET},
};

/* The shm row (logp.h): flags between two processes of this machine through
 * shared memory, measured by topocoll-logp on the CI machine (2-core AMD
 * EPYC KVM guest, the two cores share the L3; docs/model.md, "The shm
 * row"). X is not used there: 1. */
static const tc_logp_t shm_default = {0.036, 0.034, 0.021, 0.025, 0.00007, 0, 0, 0, 1};

/* Rows of a table: the levels, then the shm row at index SHM_ROW. */
#define SHM_ROW TC_MODEL_LEVEL_LAST

static tc_logp_t *tc_model_row_get(tc_logp_table_t *t, int r)
{
    return r == SHM_ROW ? &t->shm : &t->level[r];
}

static void tc_model_row_set(tc_logp_table_t *t, int r, const tc_logp_t *v, tc_logp_source_t src)
{
    *tc_model_row_get(t, r) = *v;
    if (r == SHM_ROW)
        t->shm_source = src;
    else
        t->source[r] = src;
}

static const char *tc_model_row_name(int r)
{
    return r == SHM_ROW ? TC_LOGP_SHM_NAME : tc_base_level_name(r);
}

static double *tc_model_logp_field(tc_logp_t *p, int i)
{
    switch (i) {
    case 0:
        return &p->L;
    case 1:
        return &p->o_s;
    case 2:
        return &p->o_r;
    case 3:
        return &p->g;
    case 4:
        return &p->G;
    case 5:
        return &p->E;
    case 6:
        return &p->rdv;
    case 7:
        return &p->w;
    default:
        return &p->X;
    }
}

static double tc_model_logp_field_get(const tc_logp_t *p, int i)
{
    /* X as the model uses it: a struct built without it (0) writes 1. */
    const double v[NFIELDS] = {p->L,   p->o_s, p->o_r,           p->g, p->G, p->E,
                               p->rdv, p->w,   tc_logp_duplex(p)};
    return v[i];
}

double tc_logp_duplex(const tc_logp_t *p)
{
    return p->X > X_MIN ? (p->X < X_MAX ? p->X : X_MAX) : X_MIN;
}

/* Field @p i's own range beyond "finite, >= 0": X lies in [1, 2]. */
static int tc_model_field_in_range(int i, double v)
{
    return i != FIELD_X || (v >= X_MIN && v <= X_MAX);
}

/* Case-insensitive comparison of the @p n bytes at @p s with the string @p w. */
static int tc_model_word_eq(const char *s, size_t n, const char *w)
{
    return tc_base_word_eq(s, n, w, 1);
}

static int tc_model_is_space(int c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

static int tc_model_level_parse_n(const char *s, size_t n)
{
    return tc_base_level_index(s, n, 1);
}

/* A level, or SHM_ROW for "shm"; -1 if neither. */
static int tc_model_row_parse_n(const char *s, size_t n)
{
    return tc_model_word_eq(s, n, TC_LOGP_SHM_NAME) ? SHM_ROW : tc_model_level_parse_n(s, n);
}

const char *tc_model_level_name(tc_model_level_t level)
{
    if ((int)level < 0 || level >= TC_MODEL_LEVEL_LAST)
        return NULL;
    return tc_base_level_name((int)level);
}

int tc_model_level_parse(const char *name)
{
    if (name == NULL)
        return -1;
    return tc_model_level_parse_n(name, strlen(name));
}

void tc_logp_table_defaults(tc_logp_table_t *t)
{
    for (int i = 0; i < TC_MODEL_LEVEL_LAST; i++) {
        t->level[i] = level_defaults[i];
        t->source[i] = TC_LOGP_SOURCE_DEFAULT;
    }
    t->shm = shm_default;
    t->shm_source = TC_LOGP_SOURCE_DEFAULT;
}

/* A model parameter: the whole of [s, s+n) is one finite number >= 0.
 * strtod alone would accept "nan", "inf" and a trailing "us". */
static tc_err_t tc_model_number_parse_n(const char *s, size_t n, double *out)
{
    char buf[64];
    if (n == 0 || n >= sizeof buf)
        return tc_err(TC_ERR_PARSE);
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (end != buf + n || errno == ERANGE || !isfinite(v) || v < 0.0)
        return tc_err(TC_ERR_PARSE);
    *out = v;
    return TC_OK;
}

/* Parse one line of the file format (comment already cut off) against the
 * rows of @p t (E, rdv, w not on the line keep the row's values). Returns 1
 * for a parameter line (*level, *val set), 0 for a blank line, -1 on
 * error. */
static int tc_model_file_line_parse(tc_logp_table_t *t, const char *s, const char *name, int lineno,
                                    int *level, tc_logp_t *val, char *err, size_t errlen)
{
    const char *tok[NFIELDS + 1];
    size_t len[NFIELDS + 1];
    int ntok = 0;
    while (*s) {
        while (tc_model_is_space((unsigned char)*s))
            s++;
        if (!*s)
            break;
        const char *b = s;
        while (*s && !tc_model_is_space((unsigned char)*s))
            s++;
        if (ntok < NFIELDS + 1) {
            tok[ntok] = b;
            len[ntok] = (size_t)(s - b);
        }
        ntok++;
    }
    if (ntok == 0)
        return 0;
    int lv = tc_model_row_parse_n(tok[0], len[0]);
    if (lv < 0) {
        tc_err_message(err, errlen, "%s:%d: unknown level '%.*s' (accepted: " ACCEPTED_LEVELS ")",
                       name, lineno, (int)len[0], tok[0]);
        return -1;
    }
    if (ntok < NFIELDS_REQUIRED + 1) {
        tc_err_message(err, errlen,
                       "%s:%d: level '%s' has %d number%s, expected 5: L o_s o_r g G "
                       "(microseconds; G in us/byte)",
                       name, lineno, tc_model_row_name(lv), ntok - 1, ntok == 2 ? "" : "s");
        return -1;
    }
    if (ntok > NFIELDS + 1) {
        tc_err_message(
            err, errlen,
            "%s:%d: level '%s' has %d numbers, expected 5 to 9: L o_s o_r g G [E [rdv [w [X]]]] "
            "(microseconds; G in us/byte, E in bytes; comments after '#')",
            name, lineno, tc_model_row_name(lv), ntok - 1);
        return -1;
    }
    tc_logp_t v = *tc_model_row_get(t, lv);
    for (int i = 0; i < ntok - 1; i++) {
        double *f = tc_model_logp_field(&v, i);
        if (tc_model_number_parse_n(tok[i + 1], len[i + 1], f) != 0) {
            tc_err_message(
                err, errlen, "%s:%d: %s of level '%s' is '%.*s': expected a finite number >= 0",
                name, lineno, field_names[i], tc_model_row_name(lv), (int)len[i + 1], tok[i + 1]);
            return -1;
        }
        if (!tc_model_field_in_range(i, *f)) {
            tc_err_message(err, errlen,
                           "%s:%d: X of level '%s' is '%.*s': expected a number from 1 to 2 (the "
                           "duplex factor: 1 = the two directions of an exchange overlap, 2 = "
                           "they serialise)",
                           name, lineno, tc_model_row_name(lv), (int)len[i + 1], tok[i + 1]);
            return -1;
        }
    }
    *level = lv;
    *val = v;
    return 1;
}

tc_err_t tc_logp_table_load_text(tc_logp_table_t *t, const char *text, const char *name, char *err,
                                 size_t errlen)
{
    if (name == NULL)
        name = "(text)";
    if (text == NULL) {
        tc_err_message(err, errlen, "%s: no text", name);
        return tc_err(TC_ERR_ARG);
    }
    const char *p = text;
    int lineno = 0;
    char line[1024];
    while (*p) {
        lineno++;
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) : strlen(p);
        const char *hash = memchr(p, '#', n);
        size_t used = hash ? (size_t)(hash - p) : n;
        if (used >= sizeof line) {
            tc_err_message(err, errlen, "%s:%d: line longer than %zu characters", name, lineno,
                           sizeof line - 1);
            return tc_err(TC_ERR_PARSE);
        }
        memcpy(line, p, used);
        line[used] = '\0';
        int level;
        tc_logp_t val;
        int rc = tc_model_file_line_parse(t, line, name, lineno, &level, &val, err, errlen);
        if (rc < 0)
            return tc_err(TC_ERR_PARSE);
        if (rc > 0)
            tc_model_row_set(t, level, &val, TC_LOGP_SOURCE_FILE);
        p = eol ? eol + 1 : p + n;
    }
    return TC_OK;
}

tc_err_t tc_logp_table_load_file(tc_logp_table_t *t, const char *path, char *err, size_t errlen)
{
    /* A parameter file is a dozen lines; the cap only guards against being
     * pointed at something that is not one. */
    enum { MAX_BYTES = 1 << 20 };
    if (path == NULL) {
        tc_err_message(err, errlen, "(null): no file name");
        return tc_err(TC_ERR_ARG);
    }
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        int e = errno;
        tc_err_message(err, errlen, "%s: cannot open: %s", path, strerror(e));
        return tc_err_sys(e);
    }
    char *buf = malloc(MAX_BYTES + 1);
    if (buf == NULL) {
        fclose(f);
        tc_err_message(err, errlen, "%s: out of memory", path);
        return tc_err(TC_ERR_NOMEM);
    }
    size_t n = fread(buf, 1, MAX_BYTES + 1, f);
    tc_err_t rc = tc_err(TC_ERR_PARSE);
    if (ferror(f)) {
        rc = tc_err_sys(errno ? errno : EIO);
        tc_err_message(err, errlen, "%s: cannot read: %s", path, strerror(tc_err_cause(rc)));
    } else if (n > MAX_BYTES) {
        tc_err_message(err, errlen, "%s: larger than %d bytes: not a LogP parameter file", path,
                       (int)MAX_BYTES);
    } else if (memchr(buf, '\0', n) != NULL) {
        tc_err_message(err, errlen, "%s: contains a NUL byte: not a LogP parameter file", path);
    } else {
        buf[n] = '\0';
        rc = tc_logp_table_load_text(t, buf, path, err, errlen);
    }
    free(buf);
    fclose(f);
    return rc;
}

/* Trim spaces at both ends of [*s, *s + *n). */
static void tc_model_trim(const char **s, size_t *n)
{
    while (*n > 0 && tc_model_is_space((unsigned char)**s)) {
        (*s)++;
        (*n)--;
    }
    while (*n > 0 && tc_model_is_space((unsigned char)(*s)[*n - 1]))
        (*n)--;
}

/* Apply "f=v,f=v" in [s, s+n) to @p p (field names are case-sensitive: g and
 * G differ). @p entry names the whole entry in messages. */
static tc_err_t tc_model_env_fields_apply(tc_logp_t *p, const char *s, size_t n, const char *entry,
                                          size_t entrylen, char *err, size_t errlen)
{
    const char *end = s + n;
    while (s < end) {
        const char *comma = memchr(s, ',', (size_t)(end - s));
        const char *aend = comma ? comma : end;
        const char *a = s;
        size_t an = (size_t)(aend - s);
        tc_model_trim(&a, &an);
        s = comma ? comma + 1 : end;
        if (an == 0)
            continue;
        const char *eq = memchr(a, '=', an);
        if (eq == NULL) {
            tc_err_message(err, errlen,
                           "TC_LOGP: '%.*s' in '%.*s' is not field=value (fields: " ACCEPTED_FIELDS
                           ")",
                           (int)an, a, (int)entrylen, entry);
            return tc_err(TC_ERR_PARSE);
        }
        const char *k = a, *v = eq + 1;
        size_t kn = (size_t)(eq - a), vn = an - kn - 1;
        tc_model_trim(&k, &kn);
        tc_model_trim(&v, &vn);
        int fi = -1;
        for (int i = 0; i < NFIELDS; i++)
            if (strlen(field_names[i]) == kn && memcmp(k, field_names[i], kn) == 0)
                fi = i;
        if (fi < 0) {
            tc_err_message(err, errlen,
                           "TC_LOGP: unknown field '%.*s' in '%.*s' (accepted: " ACCEPTED_FIELDS
                           ", case-sensitive)",
                           (int)kn, k, (int)entrylen, entry);
            return tc_err(TC_ERR_PARSE);
        }
        double *f = tc_model_logp_field(p, fi);
        if (tc_model_number_parse_n(v, vn, f) != 0) {
            tc_err_message(
                err, errlen,
                "TC_LOGP: bad number '%.*s' for %s in '%.*s': expected a finite number >= 0 "
                "(microseconds; G in us/byte, E in bytes)",
                (int)vn, v, field_names[fi], (int)entrylen, entry);
            return tc_err(TC_ERR_PARSE);
        }
        if (!tc_model_field_in_range(fi, *f)) {
            tc_err_message(err, errlen,
                           "TC_LOGP: X=%.*s in '%.*s': expected a number from 1 to 2 (the duplex "
                           "factor)",
                           (int)vn, v, (int)entrylen, entry);
            return tc_err(TC_ERR_PARSE);
        }
    }
    return TC_OK;
}

tc_err_t tc_logp_table_apply_env(tc_logp_table_t *t, const char *spec, char *err, size_t errlen)
{
    if (spec == NULL)
        return TC_OK;
    /* Work on a copy so that an error leaves @p t unchanged. */
    tc_logp_table_t tmp = *t;
    const char *s = spec;
    while (*s) {
        const char *semi = strchr(s, ';');
        size_t n = semi ? (size_t)(semi - s) : strlen(s);
        const char *e = s;
        size_t en = n;
        tc_model_trim(&e, &en);
        if (en > 0) {
            const char *colon = memchr(e, ':', en);
            if (colon == NULL) {
                /* No level: the fields apply to every hierarchy level, not to
                 * the shm row (cache-line flags, not MPI messages). */
                for (int i = 0; i < TC_MODEL_LEVEL_LAST; i++) {
                    if (tc_model_env_fields_apply(&tmp.level[i], e, en, e, en, err, errlen) != 0)
                        return tc_err(TC_ERR_PARSE);
                    tmp.source[i] = TC_LOGP_SOURCE_ENV;
                }
            } else {
                const char *ln = e;
                size_t lnn = (size_t)(colon - e);
                tc_model_trim(&ln, &lnn);
                int lv = tc_model_row_parse_n(ln, lnn);
                if (lv < 0) {
                    tc_err_message(
                        err, errlen,
                        "TC_LOGP: unknown level '%.*s' in '%.*s' (accepted: " ACCEPTED_LEVELS ")",
                        (int)lnn, ln, (int)en, e);
                    return tc_err(TC_ERR_PARSE);
                }
                tc_logp_t v = *tc_model_row_get(&tmp, lv);
                if (tc_model_env_fields_apply(&v, colon + 1, (size_t)(e + en - colon - 1), e, en,
                                              err, errlen) != 0)
                    return tc_err(TC_ERR_PARSE);
                tc_model_row_set(&tmp, lv, &v, TC_LOGP_SOURCE_ENV);
            }
        }
        s = semi ? semi + 1 : s + n;
    }
    *t = tmp;
    return TC_OK;
}

/* The shortest %.*g that reads back as the same double, so that write then
 * load gives the table back bit for bit and the file stays readable. */
static void tc_model_number_format(char *buf, size_t len, double v)
{
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

static const char *tc_model_source_name(tc_logp_source_t s)
{
    switch (s) {
    case TC_LOGP_SOURCE_FILE:
        return "file";
    case TC_LOGP_SOURCE_ENV:
        return "TC_LOGP";
    default:
        return "default";
    }
}

tc_err_t tc_logp_table_write(const tc_logp_table_t *t, const char *path, const char *origin)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return tc_err_sys(errno);
    fprintf(f, "# libtopocoll LogP/LogGP parameters (TC_LOGP_FILE format)\n");
    if (origin != NULL && *origin) {
        /* One comment line per line of origin, so a newline in it cannot
         * turn into a parameter line. */
        fputs("# origin: ", f);
        for (const char *c = origin; *c; c++) {
            fputc(*c, f);
            if (*c == '\n' && c[1])
                fputs("#   ", f);
        }
        if (origin[strlen(origin) - 1] != '\n')
            fputc('\n', f);
    }
    fprintf(f, "# units: microseconds (L, o_s, o_r, g, rdv, w), microseconds per byte (G), bytes\n"
               "# (E). E: eager limit (0 = none), rdv: what a rendezvous adds to a message above\n"
               "# E, w: scheduler round per wait, used when the node is oversubscribed, X: a byte\n"
               "# sent and received at once costs X G (1 = full duplex, 2 = serialised)\n");
    fprintf(f, "# %-8s %-10s %-10s %-10s %-10s %-10s %-10s %-10s %-10s %s\n", "level", "L", "o_s",
            "o_r", "g", "G", "E", "rdv", "w", "X");
    for (int i = 0; i <= SHM_ROW; i++) {
        const tc_logp_t *row = i == SHM_ROW ? &t->shm : &t->level[i];
        if (i == SHM_ROW)
            fprintf(f, "# shared-memory flags (shm barriers): L = store + line transfer, o_s = "
                       "library call,\n# o_r = poll that finds it set, g = max(flag-write gap, "
                       "fetch-add on a line\n# another process wrote), G = copy-in + copy-out "
                       "per byte\n");
        fprintf(f, "%-10s", tc_model_row_name(i));
        for (int k = 0; k < NFIELDS; k++) {
            char num[40];
            tc_model_number_format(num, sizeof num, tc_model_logp_field_get(row, k));
            fprintf(f, " %-10s", num);
        }
        fprintf(f, " # %s\n", tc_model_source_name(i == SHM_ROW ? t->shm_source : t->source[i]));
    }
    int werr = ferror(f);
    int cerr = fclose(f);
    if (werr || cerr != 0) {
        if (errno == 0)
            errno = EIO;
        return tc_err_sys(errno);
    }
    return TC_OK;
}

int tc_logp_eager_step(const double *sz, const double *t, int n, double G, double min_us,
                       double min_rel)
{
    int best = -1;
    double best_rel = 0;
    for (int k = 0; k + 1 < n; k++) {
        double d = t[k + 1] - t[k] - G * (sz[k + 1] - sz[k]);
        if (!(t[k] > 0) || d < min_us || d < min_rel * t[k])
            continue;
        if (d / t[k] > best_rel) {
            best_rel = d / t[k];
            best = k;
        }
    }
    return best;
}

static int tc_model_robust_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Quantile q of sorted v[0..n-1], linear interpolation. */
static double tc_model_robust_quantile(const double *v, int n, double q)
{
    double pos = q * (n - 1);
    int i = (int)pos;
    if (i >= n - 1)
        return v[n - 1];
    return v[i] + (pos - i) * (v[i + 1] - v[i]);
}

int tc_logp_robust(double *v, int n, double floor, tc_logp_robust_t *out)
{
    memset(out, 0, sizeof *out);
    if (n < 1)
        return 0;
    qsort(v, (size_t)n, sizeof *v, tc_model_robust_cmp);
    double m = tc_model_robust_quantile(v, n, 0.5);
    /* MAD: the median of |v - m|, in a scratch copy (n is small: repetitions). */
    double *d = malloc((size_t)n * sizeof *d), mad = 0;
    if (d) {
        for (int i = 0; i < n; i++)
            d[i] = fabs(v[i] - m);
        qsort(d, (size_t)n, sizeof *d, tc_model_robust_cmp);
        mad = tc_model_robust_quantile(d, n, 0.5);
        free(d);
    }
    double scale = fmax(fmax(1.4826 * mad, 0.05 * fabs(m)), floor);
    double lim = TC_LOGP_OUTLIER_MADS * scale;
    int kept = 0;
    for (int i = 0; i < n; i++)
        if (fabs(v[i] - m) <= lim)
            v[kept++] = v[i]; /* stays sorted: a subsequence of a sorted array */
    if (kept == 0) {          /* cannot happen (the median is within 0 of itself) */
        kept = n;
    }
    out->kept = kept;
    out->dropped = n - kept;
    out->med = tc_model_robust_quantile(v, kept, 0.5);
    out->q1 = tc_model_robust_quantile(v, kept, 0.25);
    out->q3 = tc_model_robust_quantile(v, kept, 0.75);
    out->min = v[0];
    out->max = v[kept - 1];
    out->wide = 4 * out->dropped > n || out->q3 - out->q1 > 0.5 * fabs(out->med) + floor;
    return out->dropped;
}
