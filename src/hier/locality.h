/* Locality of a process (paper 001): one identifier per hierarchy level, from
 * the core up to the highest network switch.
 *
 * Levels are listed bottom-up. An identifier names a unit *within the unit of
 * the next level up* only once the levels are known to nest; the group
 * builder therefore compares a level's id together with the ids of every
 * level above it, so "NUMA 0" on two different nodes are different units.
 * TC_LOC_UNKNOWN marks a level this process cannot know (e.g. an unbound
 * process below the node level, or no network file).
 */
#ifndef TC_HIER_LOCALITY_H
#define TC_HIER_LOCALITY_H

#include <stdint.h>

#define TC_HIER_MAX_SWITCH 4 /* network levels above the node: leaf .. spine */

typedef enum {
    TC_LEVEL_CORE,
    TC_LEVEL_L2,
    TC_LEVEL_L3,
    TC_LEVEL_NUMA,
    TC_LEVEL_PACKAGE,
    TC_LEVEL_NODE,
    TC_LEVEL_SWITCH1, /* leaf switch */
    TC_LEVEL_SWITCH2,
    TC_LEVEL_SWITCH3,
    TC_LEVEL_SWITCH4,
    TC_LEVEL_LAST
} tc_level_t;

#define TC_LOC_UNKNOWN INT64_C(-1)

typedef struct tc_hier_loc {
    int64_t id[TC_LEVEL_LAST]; /* >= 0, or TC_LOC_UNKNOWN */
} tc_hier_loc_t;

/* Short names used in TC_HIER_LEVELS, files and messages: "core", "l2",
 * "l3", "numa", "package" (alias "socket"), "node", "switch1".."switch4". */
const char *tc_hier_level_name(tc_level_t level);

#endif /* TC_HIER_LOCALITY_H */
