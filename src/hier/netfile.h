/* Network topology file (TC_NETWORK_TOPOLOGY_FILE), paper 001.
 *
 * Format, one line per compute node:
 *
 *     <node-name> <leaf-switch> [<next-switch> ...]   # optional comment
 *
 * The leaf switch comes first, then each switch above it, up to
 * TC_HIER_MAX_SWITCH switches; every line must list the same number of
 * switches (the depth). Fields are separated by spaces or tabs; `#` starts a
 * comment (whole line or trailing); blank lines are ignored; CRLF line ends
 * are accepted. Names are printable ASCII without spaces or `#`, at most
 * TC_HIER_NETFILE_NAME_MAX characters. A node may be listed only once.
 *
 * Switch ids: the switch at depth d (0 = leaf) gets the index of the first
 * appearance of its name among the depth-d switches of the file, so ids are
 * stable for a given file and equal on every rank that reads it. Names are
 * per depth: "sw1" as a leaf and "sw1" as a spine are different switches.
 *
 * Errors are reported as "FILE:LINE: what" (or "FILE: what" when no line is
 * concerned); parsing stops at the first error. Nothing here uses MPI, so the
 * parser is unit-tested and fuzzed on its own.
 */
#ifndef TC_HIER_NETFILE_H
#define TC_HIER_NETFILE_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

#include "locality.h"

#define TC_HIER_NETFILE_NAME_MAX 255

/* String interning: each distinct string gets the next id (0, 1, 2...);
 * lookups are hashed (open addressing). Shared by the network and locality
 * file parsers. A zero-initialised table is empty and valid. */
typedef struct tc_hier_strtab {
    char **strs;   /* id -> NUL-terminated copy */
    size_t n, cap; /* strings held, capacity of strs */
    size_t *slots; /* id + 1, or 0 for an empty slot */
    size_t nslots; /* power of two, kept at most half full */
} tc_hier_strtab_t;

/* Find s[0..len) or add it. *id receives its id, *added (may be NULL) 1 if
 * it was new. Returns TC_OK, or TC_ERR_NOMEM. */
tc_err_t tc_hier_strtab_intern(tc_hier_strtab_t *t, const char *s, size_t len, int64_t *id,
                               int *added);
/* Id of s[0..len), or -1 when absent. */
int64_t tc_hier_strtab_find(const tc_hier_strtab_t *t, const char *s, size_t len);
void tc_hier_strtab_free(tc_hier_strtab_t *t);

/* Line splitting shared by the file parsers: `#` comments, spaces/tabs,
 * LF or CRLF line ends. */
typedef struct tc_hier_tok {
    const char *s;
    size_t len;
} tc_hier_tok_t;

typedef struct tc_hier_lines {
    const char *text;
    size_t len, pos;
    long lineno; /* of the line last returned, 1-based */
} tc_hier_lines_t;

/* Next line (comment and line end removed) into *line, *linelen; returns 1,
 * or 0 at the end of the text. */
int tc_hier_lines_next(tc_hier_lines_t *ls, const char **line, size_t *linelen);

/* Split a line into fields. Stores at most maxtok of them and returns how
 * many there are (possibly more than maxtok), or -1 when the line holds a
 * byte that is neither printable ASCII nor a separator (its value is put in
 * *badbyte). */
int tc_hier_line_split(const char *line, size_t len, tc_hier_tok_t *tok, int maxtok, int *badbyte);

/* Whole file into a malloc'd buffer (*buf, *len); TC_ERR_SYS (the errno as
 * cause) or TC_ERR_NOMEM on failure. */
tc_err_t tc_hier_file_read(const char *path, char **buf, size_t *len);

typedef struct tc_hier_netfile {
    char *filename;                                /* copy, for lookup messages */
    int depth;                                     /* switches per node, 0 when no node is listed */
    tc_hier_strtab_t nodes;                        /* node name -> node index (file order) */
    int64_t (*sw)[TC_HIER_MAX_SWITCH];             /* [node index][depth]: switch ids, leaf first */
    int64_t nswitch[TC_HIER_MAX_SWITCH];           /* distinct switches per depth */
    tc_hier_strtab_t switches[TC_HIER_MAX_SWITCH]; /* names per depth, for messages */
} tc_hier_netfile_t;

/* Parse text[0..len) (need not be NUL-terminated; may contain any bytes).
 * filename is used only in messages. On success fills *nf (release it with
 * tc_hier_netfile_free) and returns TC_OK; on error returns TC_ERR_PARSE
 * (TC_ERR_NOMEM), writes the
 * message into err[errlen] (if err != NULL) and leaves *nf empty. */
tc_err_t tc_hier_netfile_parse(const char *text, size_t len, const char *filename,
                               tc_hier_netfile_t *nf, char *err, size_t errlen);

/* Read the file at path and parse it; TC_ERR_SYS with "PATH: cannot read: reason"
 * when it cannot be read. */
tc_err_t tc_hier_netfile_load(const char *path, tc_hier_netfile_t *nf, char *err, size_t errlen);

/* Switch ids of node (leaf first) into switch_ids[0..*depth); the remaining
 * entries are set to TC_LOC_UNKNOWN. Returns TC_ERR_NOTFOUND with "FILE: node 'x' not
 * listed" when the node is absent. O(1) expected (hashed). */
tc_err_t tc_hier_netfile_lookup(const tc_hier_netfile_t *nf, const char *node,
                                int64_t switch_ids[TC_HIER_MAX_SWITCH], int *depth, char *err,
                                size_t errlen);

/* Number of nodes listed. */
size_t tc_hier_netfile_nnodes(const tc_hier_netfile_t *nf);

/* Release everything; *nf becomes empty (freeing twice is harmless). */
void tc_hier_netfile_free(tc_hier_netfile_t *nf);

#endif /* TC_HIER_NETFILE_H */
