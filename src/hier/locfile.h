/* Locality override file (TC_LOCALITY_FILE): every rank's locality vector
 * given in a file, so that tests can pose machines we do not have (4
 * sockets, 2 switches, the 64-node cluster of paper 001) with a handful of
 * ranks on a small box.
 *
 * Format (text; `#` starts a comment, blank lines are ignored, fields are
 * separated by spaces or tabs, CRLF line ends are accepted):
 *
 *     # rank  key=value ...
 *     0 node=n01 package=0 numa=0 l3=0 l2=0 core=0 switch1=swl1 switch2=spine
 *     1 node=n01 package=0 numa=0 l3=0 l2=1 core=1 switch1=swl1 switch2=spine
 *
 * Keys are the level names core, l2, l3, numa, package (alias socket), node,
 * switch1 (leaf) .. switch4; each at most once per line; a key that is left
 * out makes that level TC_LOC_UNKNOWN for the rank. A value is either a
 * number (digits only, used as the id) or a name (printable ASCII, at most
 * 255 characters) interned to an id per level in order of first appearance
 * (0, 1, 2...). One level uses either numbers or names throughout the file.
 * Ids of a level need only differ within the unit of the level above (the
 * group builder compares whole vectors), but may be globally unique.
 *
 * Without a shape line every rank 0..p-1 must appear exactly once.
 *
 * Generator: the first line may instead be
 *
 *     shape node=2 package=2 numa=2 core=2
 *
 * listing levels from the top down, each with the number of its units in
 * one unit of the level listed before it. The shape has prod(counts) slots,
 * which must be >= p; rank r takes slot r, i.e. ranks fill the innermost
 * listed level first (map-by core). The id of a listed level is the global
 * index of its unit (numa above: 0..7); unlisted levels are unknown. Rank
 * lines may follow the shape: each replaces the keys it names for that rank
 * (at most one line per rank).
 *
 * Errors: "FILE:LINE: what", or "FILE: rank R not listed"; parsing stops at
 * the first error.
 */
#ifndef TC_HIER_LOCFILE_H
#define TC_HIER_LOCFILE_H

#include <stddef.h>

#include "base/err.h"

#include "locality.h"

/* Parse text[0..len) for a communicator of p ranks into locs[0..p).
 * filename is only used in messages. Returns TC_OK, or TC_ERR_PARSE (TC_ERR_ARG,
 * TC_ERR_NOMEM) with the message in
 * err[errlen] (locs is then unspecified). */
tc_err_t tc_hier_locfile_parse(const char *text, size_t len, const char *filename, int p,
                               tc_hier_loc_t *locs, char *err, size_t errlen);

/* Read and parse the file at path; TC_ERR_SYS and "PATH: cannot read: reason"
 * when it cannot be read. */
tc_err_t tc_hier_locfile_load(const char *path, int p, tc_hier_loc_t *locs, char *err,
                              size_t errlen);

#endif /* TC_HIER_LOCFILE_H */
