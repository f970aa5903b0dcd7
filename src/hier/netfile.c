/* Network topology file parser; format in netfile.h. */
#include "netfile.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- string interning ---------------------------------------------------- */

static uint64_t tc_hier_strtab_hash(const char *s, size_t len)
{
    uint64_t h = UINT64_C(1469598103934665603); /* FNV-1a */
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= UINT64_C(1099511628211);
    }
    return h;
}

/* Slot holding s, or the empty slot where it would go. */
static size_t tc_hier_strtab_probe(const tc_hier_strtab_t *t, const char *s, size_t len)
{
    size_t mask = t->nslots - 1;
    size_t i = (size_t)tc_hier_strtab_hash(s, len) & mask;
    while (t->slots[i] != 0) {
        const char *c = t->strs[t->slots[i] - 1];
        if (strncmp(c, s, len) == 0 && c[len] == '\0')
            return i;
        i = (i + 1) & mask;
    }
    return i;
}

static tc_err_t tc_hier_strtab_grow(tc_hier_strtab_t *t)
{
    size_t nslots = t->nslots ? 2 * t->nslots : 64;
    size_t *slots = calloc(nslots, sizeof(*slots));
    if (slots == NULL)
        return tc_err(TC_ERR_NOMEM);
    size_t *old = t->slots;
    t->slots = slots;
    t->nslots = nslots;
    for (size_t id = 0; id < t->n; id++) {
        size_t i = tc_hier_strtab_probe(t, t->strs[id], strlen(t->strs[id]));
        t->slots[i] = id + 1;
    }
    free(old);
    return TC_OK;
}

tc_err_t tc_hier_strtab_intern(tc_hier_strtab_t *t, const char *s, size_t len, int64_t *id,
                               int *added)
{
    /* Keep the table at most half full so probes stay short. */
    if (2 * (t->n + 1) > t->nslots && tc_hier_strtab_grow(t) != 0)
        return tc_err(TC_ERR_NOMEM);
    size_t i = tc_hier_strtab_probe(t, s, len);
    if (t->slots[i] != 0) {
        *id = (int64_t)(t->slots[i] - 1);
        if (added)
            *added = 0;
        return TC_OK;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        char **strs = realloc(t->strs, cap * sizeof(*strs));
        if (strs == NULL)
            return tc_err(TC_ERR_NOMEM);
        t->strs = strs;
        t->cap = cap;
    }
    char *copy = malloc(len + 1);
    if (copy == NULL)
        return tc_err(TC_ERR_NOMEM);
    memcpy(copy, s, len);
    copy[len] = '\0';
    t->strs[t->n] = copy;
    t->slots[i] = ++t->n;
    *id = (int64_t)(t->n - 1);
    if (added)
        *added = 1;
    return TC_OK;
}

int64_t tc_hier_strtab_find(const tc_hier_strtab_t *t, const char *s, size_t len)
{
    if (t->nslots == 0)
        return -1;
    size_t i = tc_hier_strtab_probe(t, s, len);
    return t->slots[i] ? (int64_t)(t->slots[i] - 1) : -1;
}

void tc_hier_strtab_free(tc_hier_strtab_t *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->strs[i]);
    free(t->strs);
    free(t->slots);
    memset(t, 0, sizeof(*t));
}

/* ---- lines and fields ---------------------------------------------------- */

int tc_hier_lines_next(tc_hier_lines_t *ls, const char **line, size_t *linelen)
{
    if (ls->pos >= ls->len)
        return 0;
    const char *start = ls->text + ls->pos;
    size_t rest = ls->len - ls->pos;
    const char *nl = memchr(start, '\n', rest);
    size_t n = nl ? (size_t)(nl - start) : rest;
    ls->pos += nl ? n + 1 : n;
    ls->lineno++;
    if (n > 0 && start[n - 1] == '\r')
        n--;
    /* A comment may hold anything (it is never looked at): cut it first. */
    const char *hash = memchr(start, '#', n);
    if (hash)
        n = (size_t)(hash - start);
    *line = start;
    *linelen = n;
    return 1;
}

int tc_hier_line_split(const char *line, size_t len, tc_hier_tok_t *tok, int maxtok, int *badbyte)
{
    int ntok = 0;
    size_t i = 0;
    while (i < len) {
        unsigned char c = (unsigned char)line[i];
        if (c == ' ' || c == '\t') {
            i++;
            continue;
        }
        size_t start = i;
        while (i < len && line[i] != ' ' && line[i] != '\t') {
            c = (unsigned char)line[i];
            if (c < 0x21 || c > 0x7e) {
                *badbyte = c;
                return -1;
            }
            i++;
        }
        if (ntok < maxtok) {
            tok[ntok].s = line + start;
            tok[ntok].len = i - start;
        }
        ntok++;
    }
    return ntok;
}

/* ---- the network file ---------------------------------------------------- */

/* Quote at most 40 characters of a name in messages. */
#define NAME_FMT    "'%.*s%s'"
#define NAME_ARG(t) (int)((t).len > 40 ? 40 : (t).len), (t).s, ((t).len > 40 ? "..." : "")

tc_err_t tc_hier_netfile_parse(const char *text, size_t len, const char *filename,
                               tc_hier_netfile_t *nf, char *err, size_t errlen)
{
    tc_hier_tok_t tok[1 + TC_HIER_MAX_SWITCH];
    tc_hier_lines_t ls = {text, len, 0, 0};
    const char *line;
    size_t linelen;
    size_t cap = 0;
    long depth_line = 0; /* first line that set the depth */

    memset(nf, 0, sizeof(*nf));
    if (filename == NULL)
        filename = "(network file)";
    size_t fnlen = strlen(filename);
    nf->filename = malloc(fnlen + 1);
    if (nf->filename == NULL)
        goto fn_nomem;
    memcpy(nf->filename, filename, fnlen + 1);

    while (tc_hier_lines_next(&ls, &line, &linelen)) {
        int bad = 0;
        int ntok = tc_hier_line_split(line, linelen, tok, 1 + TC_HIER_MAX_SWITCH, &bad);
        if (ntok < 0) {
            tc_err_message(err, errlen, "%s:%ld: non-printable character (byte 0x%02x)", filename,
                           ls.lineno, bad);
            goto fn_fail;
        }
        if (ntok == 0)
            continue;
        int depth = ntok - 1;
        if (depth == 0) {
            tc_err_message(err, errlen, "%s:%ld: node " NAME_FMT " has no switch", filename,
                           ls.lineno, NAME_ARG(tok[0]));
            goto fn_fail;
        }
        if (depth > TC_HIER_MAX_SWITCH) {
            tc_err_message(err, errlen, "%s:%ld: %d switches listed, at most %d are supported",
                           filename, ls.lineno, depth, TC_HIER_MAX_SWITCH);
            goto fn_fail;
        }
        for (int i = 0; i < ntok; i++) {
            if (tok[i].len > TC_HIER_NETFILE_NAME_MAX) {
                tc_err_message(err, errlen,
                               "%s:%ld: name " NAME_FMT " too long (%zu > %d characters)", filename,
                               ls.lineno, NAME_ARG(tok[i]), tok[i].len, TC_HIER_NETFILE_NAME_MAX);
                goto fn_fail;
            }
        }
        if (nf->depth == 0) {
            nf->depth = depth;
            depth_line = ls.lineno;
        } else if (depth != nf->depth) {
            tc_err_message(err, errlen, "%s:%ld: %d switches listed, but line %ld lists %d",
                           filename, ls.lineno, depth, depth_line, nf->depth);
            goto fn_fail;
        }

        int64_t node;
        int added;
        if (tc_hier_strtab_intern(&nf->nodes, tok[0].s, tok[0].len, &node, &added) != 0)
            goto fn_nomem;
        if (!added) {
            tc_err_message(err, errlen, "%s:%ld: node " NAME_FMT " listed twice", filename,
                           ls.lineno, NAME_ARG(tok[0]));
            goto fn_fail;
        }
        if ((size_t)node >= cap) {
            size_t ncap = cap ? 2 * cap : 64;
            int64_t(*sw)[TC_HIER_MAX_SWITCH] = realloc(nf->sw, ncap * sizeof(*sw));
            if (sw == NULL)
                goto fn_nomem;
            nf->sw = sw;
            cap = ncap;
        }
        for (int d = 0; d < TC_HIER_MAX_SWITCH; d++) {
            int64_t id = TC_LOC_UNKNOWN;
            if (d < depth && tc_hier_strtab_intern(&nf->switches[d], tok[1 + d].s, tok[1 + d].len,
                                                   &id, NULL) != 0)
                goto fn_nomem;
            nf->sw[node][d] = id;
        }
    }
    for (int d = 0; d < TC_HIER_MAX_SWITCH; d++)
        nf->nswitch[d] = (int64_t)nf->switches[d].n;
    return TC_OK;

fn_nomem:
    tc_err_message(err, errlen, "%s: out of memory", filename);
    tc_hier_netfile_free(nf);
    return tc_err(TC_ERR_NOMEM);
fn_fail:
    tc_hier_netfile_free(nf);
    return tc_err(TC_ERR_PARSE);
}

/* Whole file into a malloc'd buffer; TC_ERR_SYS with the errno, or TC_ERR_NOMEM. */
tc_err_t tc_hier_file_read(const char *path, char **buf, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return tc_err_sys(errno);
    size_t cap = 4096, n = 0;
    char *b = malloc(cap);
    tc_err_t rc = tc_err(TC_ERR_NOMEM);
    if (b == NULL)
        goto fn_exit;
    for (;;) {
        if (n == cap) {
            char *nb = realloc(b, cap * 2);
            if (nb == NULL)
                goto fn_exit; /* rc: TC_ERR_NOMEM */
            b = nb;
            cap *= 2;
        }
        size_t got = fread(b + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f)) {
                rc = tc_err_sys(errno ? errno : EIO);
                goto fn_exit;
            }
            break;
        }
    }
    *buf = b;
    *len = n;
    b = NULL;
    rc = TC_OK;
fn_exit:
    free(b);
    fclose(f);
    return rc;
}

tc_err_t tc_hier_netfile_load(const char *path, tc_hier_netfile_t *nf, char *err, size_t errlen)
{
    char *buf;
    size_t len;
    memset(nf, 0, sizeof(*nf));
    tc_err_t rc = tc_hier_file_read(path, &buf, &len);
    if (rc != TC_OK) {
        tc_err_message(err, errlen, "%s: cannot read: %s", path, strerror(tc_err_cause(rc)));
        return rc;
    }
    rc = tc_hier_netfile_parse(buf, len, path, nf, err, errlen);
    free(buf);
    return rc;
}

tc_err_t tc_hier_netfile_lookup(const tc_hier_netfile_t *nf, const char *node,
                                int64_t switch_ids[TC_HIER_MAX_SWITCH], int *depth, char *err,
                                size_t errlen)
{
    int64_t i = tc_hier_strtab_find(&nf->nodes, node, strlen(node));
    for (int d = 0; d < TC_HIER_MAX_SWITCH; d++)
        switch_ids[d] = i < 0 ? TC_LOC_UNKNOWN : nf->sw[i][d];
    *depth = i < 0 ? 0 : nf->depth;
    if (i < 0) {
        tc_err_message(err, errlen, "%s: node '%.80s' not listed",
                       nf->filename ? nf->filename : "(network file)", node);
        return tc_err(TC_ERR_NOTFOUND);
    }
    return TC_OK;
}

size_t tc_hier_netfile_nnodes(const tc_hier_netfile_t *nf)
{
    return nf->nodes.n;
}

void tc_hier_netfile_free(tc_hier_netfile_t *nf)
{
    free(nf->filename);
    free(nf->sw);
    tc_hier_strtab_free(&nf->nodes);
    for (int d = 0; d < TC_HIER_MAX_SWITCH; d++)
        tc_hier_strtab_free(&nf->switches[d]);
    memset(nf, 0, sizeof(*nf));
}
