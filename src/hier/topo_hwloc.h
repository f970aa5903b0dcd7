/* Node topology from hwloc (paper 001, "Topology analysis"): where this
 * process sits below the node level (core, L2, L3, NUMA node, package), and
 * which of those levels form a usable bottom-up hierarchy on this machine.
 *
 * Two kinds of topology are handled the same way:
 *  - the process's own machine, loaded once per process and cached
 *    (tc_hier_topo_get); load it when a communicator's context is created,
 *    never on a collective's call path (loading takes milliseconds);
 *  - explicit topologies built from an hwloc synthetic description or an XML
 *    string (tc_hier_topo_load_synthetic / _xml), so unit tests can pose many
 *    machines in one process. hwloc's own HWLOC_XMLFILE / HWLOC_SYNTHETIC
 *    environment variables also replace the cached topology.
 *
 * Every function taking a hwloc_topology_t only reads it: concurrent calls on
 * one loaded topology are safe (hwloc guarantees that for read-only queries).
 *
 * Level masks use bit (1u << TC_LEVEL_x); only CORE..PACKAGE ever appear here
 * (node and switch levels come from elsewhere).
 */
#ifndef TC_HIER_TOPO_HWLOC_H
#define TC_HIER_TOPO_HWLOC_H

#include <hwloc.h>

#include "base/err.h"

#include "locality.h"

/* Bits of the intra-node levels this module reports. */
#define TC_HIER_TOPO_LEVELS                                                                        \
    ((1u << TC_LEVEL_CORE) | (1u << TC_LEVEL_L2) | (1u << TC_LEVEL_L3) | (1u << TC_LEVEL_NUMA) |   \
     (1u << TC_LEVEL_PACKAGE))

/**
 * The process-wide topology of this machine, loaded on first call.
 *
 * @param topo  on success, the cached topology; owned by this module and valid
 *              until process exit (never destroy it)
 * @return TC_OK, or TC_ERR_NOTSUP if hwloc could not load a topology (every later call
 *         returns -1 too: the load is attempted once).
 *
 * Thread-safe (pthread_once). Honours HWLOC_XMLFILE / HWLOC_SYNTHETIC and the
 * other variables hwloc reads at load time.
 */
tc_err_t tc_hier_topo_get(hwloc_topology_t *topo);

/**
 * Build a topology from an hwloc synthetic description, e.g.
 * "pack:2 l3:1 numa:2 l2:4 core:1 pu:1" (NUMA nodes attach to the object
 * above them; hwloc inserts a Group when needed) or "pack:2 [numa] core:4 pu:1".
 *
 * @param desc  the description (hwloc_topology_set_synthetic syntax)
 * @param topo  on success, a new topology; release with tc_hier_topo_destroy()
 * @return TC_OK, or TC_ERR_PARSE on a bad description or load failure (@p topo untouched).
 *
 * Thread-safe (no shared state).
 */
tc_err_t tc_hier_topo_load_synthetic(const char *desc, hwloc_topology_t *topo);

/**
 * Build a topology from an XML document held in a string (as written by
 * `lstopo file.xml` or hwloc_topology_export_xmlbuffer()), for shapes the
 * synthetic syntax cannot express.
 *
 * @param xml   NUL-terminated XML text
 * @param topo  on success, a new topology; release with tc_hier_topo_destroy()
 * @return TC_OK, or TC_ERR_PARSE on bad XML or load failure (@p topo untouched).
 *
 * Thread-safe (no shared state).
 */
tc_err_t tc_hier_topo_load_xml(const char *xml, hwloc_topology_t *topo);

/** Release a topology from tc_hier_topo_load_synthetic/_xml. NULL is allowed;
 *  never pass the cached topology of tc_hier_topo_get(). */
void tc_hier_topo_destroy(hwloc_topology_t topo);

/**
 * Locality of a binding: the logical index of the core, L2, L3, NUMA node and
 * package containing it.
 *
 * A level is known only when the whole binding lies inside one object of that
 * type: a process bound to one PU knows all five; one bound to a whole
 * package knows its package (and its L3/NUMA node if the package has only
 * one); an unbound process usually knows none. A level the machine does not
 * have (e.g. no L3 object), or whose objects sit at several depths, is
 * unknown. NUMA nodes without CPUs are ignored, and NUMA nodes with identical
 * cpusets (e.g. DRAM and HBM behind the same cores) count as one unit named
 * by the lowest logical index among them. The ids are reported whether or not
 * the level nests (see tc_hier_topo_nesting_mask; the caller drops the levels
 * that do not). NODE and SWITCH1..4 are set to TC_LOC_UNKNOWN.
 *
 * @param topo        a loaded topology
 * @param binding     the binding cpuset; PUs outside the topology are ignored
 * @param loc         filled: every level, known or TC_LOC_UNKNOWN
 * @param known_mask  if not NULL, bit l set for each level l with a known id
 * @return TC_OK, or TC_ERR_ARG / TC_ERR_NOMEM on NULL arguments / allocation failure (then @p loc,
 * if not NULL, is all TC_LOC_UNKNOWN and the mask 0).
 *
 * O(objects) time. Thread-safe.
 */
tc_err_t tc_hier_topo_locality(hwloc_topology_t topo, hwloc_const_cpuset_t binding,
                               tc_hier_loc_t *loc, unsigned *known_mask);

/**
 * Locality of the calling process on the cached topology, from its binding
 * (hwloc_get_cpubind(HWLOC_CPUBIND_PROCESS): the union over its threads).
 *
 * @param loc         filled as by tc_hier_topo_locality()
 * @param known_mask  if not NULL, bit l set for each known level
 * @param bound       if not NULL, 1 if the binding leaves out some PU of the
 *                    machine, 0 if it covers them all or cannot be read
 * @return TC_OK (an unreadable binding counts as unbound: nothing known), or an error
 *         if the topology could not be loaded (all unknown, unbound).
 *
 * Thread-safe; loads the cached topology on first use.
 */
tc_err_t tc_hier_topo_self(tc_hier_loc_t *loc, unsigned *known_mask, int *bound);

/**
 * Which intra-node levels form a usable hierarchy, from actual containment.
 *
 * The fixed bottom-up order is core < L2 < L3 < NUMA < package (< node). A
 * level is present when the machine has objects of it with CPUs, at a single
 * depth, forming a partition (pairwise equal or disjoint cpusets). A set of
 * present levels is usable when each of its levels nests in the next one kept
 * (every object's cpuset inside one object of the level above; cpusets, not
 * hwloc parents, since NUMA nodes are memory children in hwloc 2.x). Among the
 * usable sets the one kept is, in order of preference:
 *   1. the one with the most non-redundant levels (distinct groupings),
 *   2. then the one with the most levels,
 *   3. then the finest: the largest total number of units (objects).
 * Examples: Intel sub-NUMA clustering (an L3 per package spanning several
 * NUMA nodes) drops L3, not NUMA: that L3 is as wide as its package, so only
 * NUMA adds a grouping. A NUMA node spanning several packages drops NUMA (the
 * package is finer). AMD-like machines (several L3 per NUMA node) keep all.
 *
 * A kept level is redundant when it adds no grouping: its partition of the
 * PUs equals that of the next kept level below it (e.g. private L2 = core), or
 * it is one unit spanning the whole machine (the node level groups the same
 * processes). The group builder may skip redundant levels.
 *
 * @param topo            a loaded topology
 * @param redundant_mask  if not NULL, the redundant levels (a subset of the
 *                        returned mask)
 * @return the usable levels (subset of TC_HIER_TOPO_LEVELS); 0 on NULL
 *         @p topo or allocation failure.
 *
 * O(n^2) bitmap tests for n objects per level, a few ms on a 256-core
 * machine; call once per topology, not per collective. Thread-safe.
 */
unsigned tc_hier_topo_nesting_mask(hwloc_topology_t topo, unsigned *redundant_mask);

#endif /* TC_HIER_TOPO_HWLOC_H */
