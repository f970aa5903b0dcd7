/* Tunables: every TC_* environment variable is declared once, in the table in
 * config.c (name, type, default, accepted values, description). The table in
 * docs/tunables.md and topocoll-info's listing are generated from that table.
 *
 * Values are read from the environment once per process (tc_config_load, at
 * the first context creation; thread-safe). A bad value gives one message
 * naming the variable, the value and what is accepted, and the default is used.
 */
#ifndef TC_CORE_CONFIG_H
#define TC_CORE_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

typedef enum {
    TC_CFG_TYPE_BOOL,   /* 0/1, yes/no, on/off, true/false */
    TC_CFG_TYPE_INT,    /* decimal integer in [min, max] */
    TC_CFG_TYPE_SIZE,   /* bytes, with optional K/M/G (binary) suffix; in [min, max] */
    TC_CFG_TYPE_DOUBLE, /* decimal number in [min, max] */
    TC_CFG_TYPE_ENUM,   /* one word of a comma-separated list; value = its index */
    TC_CFG_TYPE_STRING, /* free text, trimmed, at most TC_CFG_STRING_MAX bytes; value i = its
                           length; the text from tc_config_string() */
    TC_CFG_TYPE_LAST
} tc_cfg_type_t;

typedef enum {
    TC_CFG_VERBOSE,               /* int 0..3 */
    TC_CFG_STATS,                 /* bool: print per-path call counts at finalize */
    TC_CFG_WAIT_TIMEOUT,          /* double seconds, 0 = forever */
    TC_CFG_SPIN_COUNT,            /* int polls before yielding */
    TC_CFG_WAIT,                  /* enum auto,spin,yield,futex (core/wait.h) */
    TC_CFG_SHM,                   /* bool: use the shared-memory path */
    TC_CFG_SHM_FRAGMENT_SIZE,     /* size; 0 = auto (model) */
    TC_CFG_SHM_QUEUE_LENGTH,      /* int S; 0 = auto (budget / f) */
    TC_CFG_SHM_BANKS,             /* int q */
    TC_CFG_SHM_QUEUE_BYTES,       /* size: per-process queue budget used by auto S */
    TC_CFG_SHM_DESIGN_SIZE,       /* size: message size m the auto fragment size is tuned for */
    TC_CFG_SHM_TREE,              /* enum flat,chain,kary,knomial */
    TC_CFG_SHM_TREE_ARITY,        /* int k >= 2 */
    TC_CFG_SHM_MAX_SEGMENT,       /* size: cap per communicator segment */
    TC_CFG_SHM_MAX_TOTAL,         /* size: cap on all segments mapped by one process */
    TC_CFG_SHM_MAX_NODE,          /* size: cap on all segments on the node (this user's) */
    TC_CFG_SHM_PLACEMENT,         /* enum touch,mbind,none */
    TC_CFG_SHM_MECHANISM,         /* enum auto,memfd,named: how a segment is shared */
    TC_CFG_SHM_TW_RATIO,          /* int: t_w / t of the paper-000 model */
    TC_CFG_SHM_STREAM_BYTES,      /* size: ring window for messages larger than the queue */
    TC_CFG_SHM_REDUCE_SLOTS,      /* int: fragment slots per process (Reduce/Allreduce) */
    TC_CFG_SHM_REDUCE_SLOT_BYTES, /* size: bytes per slot (rounded down to 64) */
    TC_CFG_SHM_REDUCE_SLICE_MIN,  /* size: fragments from here are reduced slice by slice */
    TC_CFG_SHM_REDUCE_TREE_MAX,   /* size: fragments up to this go up a tree (0 = never) */
    TC_CFG_SHM_REDUCE_TREE_ARITY, /* int: children per process in that tree */
    TC_CFG_SHM_REDUCE_COPY, /* enum auto,memcpy,stream: publication copy of large reductions */
    TC_CFG_SHM_BCAST_COPY,  /* enum auto,memcpy,stream: the root's copy-in of large broadcasts */
    TC_CFG_PMPI_RACE_MIN,   /* size: messages from here race the MPI's own (0 = never) */
    TC_CFG_HIER,            /* bool: hierarchical algorithms across nodes / posed levels */
    TC_CFG_HIER_LEVELS,     /* string: enabled levels (tc_hier_levels_parse) */
    TC_CFG_NETWORK_TOPOLOGY_FILE, /* string: path of the network file, "" = none */
    TC_CFG_LOCALITY_FILE,         /* string: path of the locality override file, "" = none */
    TC_CFG_HIER_SHM_LEVEL,        /* enum auto,none,l2,l3,numa,package,node */
    TC_CFG_HIER_BCAST,            /* string: per-level broadcast algorithms */
    TC_CFG_HIER_REDUCE,           /* string: per-level reduce algorithms */
    TC_CFG_HIER_ALLREDUCE,        /* enum rab,rb */
    TC_CFG_HIER_ALLREDUCE_TOP,    /* enum auto,recdbl,ring */
    TC_CFG_HIER_LARGE,            /* size: "auto" switches to the large-message algorithms */
    TC_CFG_HIER_SEGMENT,          /* size: pieces large messages cross the levels in */
    TC_CFG_BARRIER,               /* enum auto,central,tree,dissemination,tournament,pairwise */
    TC_CFG_BARRIER_ARITY,         /* int: combining-tree arity (messages) */
    TC_CFG_SHM_BARRIER,           /* enum auto,central,tree,dissemination,tournament */
    TC_CFG_SHM_BARRIER_ARITY,     /* int: combining-tree arity (shared memory) */
    TC_CFG_LOGP_FILE,             /* string: LogP/LogGP parameters file, "" = none */
    TC_CFG_LOGP,                  /* string: LogP/LogGP parameters, "" = none */
    TC_CFG_TUNING_FILE,           /* string: fixed algorithm choices, "" = none */
    TC_CFG_MODEL_GAMMA,           /* double: reduction cost per byte (us) */
    TC_CFG_HIER_MODEL,            /* bool: auto levels use the LogGP model */
    TC_CFG_LOCK_SCHEME,           /* enum rwlock,1n-mutex,2n-mutex,n-mutex-signal,n-mcs */
    TC_CFG_RMA_BCAST,             /* enum auto,linear,binomial */
    TC_CFG_RMA_BCAST_SWITCH,      /* size: auto uses the binomial tree from here */
    TC_CFG_RMA_PUTLOOP,           /* enum down,up */
    TC_CFG_RMA_POLL_SPIN,         /* int: helper polls before it sleeps */
    TC_CFG_RMA_POLL_MIN_US,       /* int: helper's first idle sleep, us */
    TC_CFG_RMA_POLL_MAX_US,       /* int: helper's longest idle sleep, us */
    TC_CFG_LAST
} tc_cfg_id_t;

/* Values of TC_CFG_SHM_TREE. */
typedef enum {
    TC_TREE_FLAT,
    TC_TREE_CHAIN,
    TC_TREE_KARY,
    TC_TREE_KNOMIAL,
    TC_TREE_LAST
} tc_tree_kind_t;

/* Values of TC_CFG_LOCK_SCHEME, in the order of tc_lock_scheme_t (locks/rwlock.h;
 * ctx.c asserts it). */
typedef enum {
    TC_LOCK_SCHEME_CFG_RWLOCK,
    TC_LOCK_SCHEME_CFG_1N_MUTEX,
    TC_LOCK_SCHEME_CFG_2N_MUTEX,
    TC_LOCK_SCHEME_CFG_N_MUTEX_SIGNAL,
    TC_LOCK_SCHEME_CFG_N_MCS,
    TC_LOCK_SCHEME_CFG_LAST
} tc_lock_scheme_cfg_t;

/* Values of TC_CFG_SHM_PLACEMENT. */
typedef enum {
    TC_PLACEMENT_TOUCH,
    TC_PLACEMENT_MBIND,
    TC_PLACEMENT_NONE,
    TC_PLACEMENT_LAST
} tc_placement_t;

/* Values of TC_CFG_SHM_MECHANISM. */
typedef enum {
    TC_SHM_MECHANISM_AUTO,  /* memfd where every process can open it, else named */
    TC_SHM_MECHANISM_MEMFD, /* memfd only: no segment (the MPI's own) where it fails */
    TC_SHM_MECHANISM_NAMED, /* a /dev/shm name, unlinked once every process has opened it */
    TC_SHM_MECHANISM_LAST
} tc_shm_mechanism_t;

/* Values of TC_CFG_HIER_SHM_LEVEL (the words' order in its accepted list). */
typedef enum {
    TC_HIER_SHM_LEVEL_AUTO,
    TC_HIER_SHM_LEVEL_NONE,
    TC_HIER_SHM_LEVEL_L2,
    TC_HIER_SHM_LEVEL_L3,
    TC_HIER_SHM_LEVEL_NUMA,
    TC_HIER_SHM_LEVEL_PACKAGE,
    TC_HIER_SHM_LEVEL_NODE,
    TC_HIER_SHM_LEVEL_LAST
} tc_hier_shm_level_cfg_t;

/* Values of TC_CFG_HIER_ALLREDUCE (same order as tc_hier_allreduce_scheme_t). */
typedef enum { TC_HIER_SCHEME_RAB, TC_HIER_SCHEME_RB, TC_HIER_SCHEME_LAST } tc_hier_scheme_cfg_t;

/* Values of TC_CFG_HIER_ALLREDUCE_TOP. */
typedef enum {
    TC_HIER_TOP_AUTO,
    TC_HIER_TOP_RECDBL,
    TC_HIER_TOP_RING,
    TC_HIER_TOP_LAST
} tc_hier_top_cfg_t;

/* Longest TC_CFG_TYPE_STRING value, in bytes (after trimming). */
#define TC_CFG_STRING_MAX 4096

typedef struct tc_cfg_desc {
    const char *name; /* environment variable, e.g. "TC_SHM_BANKS" */
    tc_cfg_type_t type;
    const char *def;      /* default, as text (parsed like an env value) */
    const char *accepted; /* enum: "flat,chain,kary,knomial"; else NULL */
    double min, max;      /* bounds for INT, SIZE, DOUBLE */
    const char *doc;      /* one-sentence description */
} tc_cfg_desc_t;

typedef enum {
    TC_CFG_SRC_DEFAULT, /* not set */
    TC_CFG_SRC_ENV,     /* set and valid */
    TC_CFG_SRC_INVALID, /* set but invalid: default used */
    TC_CFG_SRC_LAST
} tc_cfg_source_t;

typedef struct tc_cfg_value {
    int64_t i; /* BOOL, INT, SIZE, ENUM (index into accepted) */
    double d;  /* DOUBLE (also set for the integer types) */
} tc_cfg_value_t;

/* The table. */
const tc_cfg_desc_t *tc_config_desc(tc_cfg_id_t id);

/* Parse @p text as a value of @p desc. Pure. On failure returns TC_ERR_PARSE
 * and writes a message naming the variable, the value and what is accepted
 * into @p err. */
tc_err_t tc_config_parse(const tc_cfg_desc_t *desc, const char *text, tc_cfg_value_t *out,
                         char *err, size_t errlen);

/* Read every variable from the environment (once per process; later calls do
 * nothing). Bad values are reported on stderr (always) and replaced by the
 * default. */
void tc_config_load(void);

/* Forget loaded values so the next tc_config_load re-reads (unit tests). */
void tc_config_reset(void);

int64_t tc_config_int(tc_cfg_id_t id);
double tc_config_double(tc_cfg_id_t id);
tc_cfg_source_t tc_config_source(tc_cfg_id_t id);
/* The raw environment text, or NULL when unset. */
const char *tc_config_raw(tc_cfg_id_t id);
/* A STRING variable's value (trimmed), or its default text when unset or
 * invalid; "" for an id that is not a STRING. Valid until tc_config_reset. */
const char *tc_config_string(tc_cfg_id_t id);

/* A size as the parser accepts it: exact multiples of MiB or GiB with the
 * suffix (so 1 TiB prints as 1024G), anything else in plain bytes. */
void tc_config_size_format(double v, char *buf, size_t len);

/* Name of the enum value @p index of @p id (e.g. "knomial"); "?" if out of range
 * or @p id is not an ENUM. Works for every ENUM entry of the table. */
const char *tc_config_enum_name(tc_cfg_id_t id, int64_t index);

/* The same, read from the entry's accepted list alone (what tc_config_enum_name
 * falls back to for entries without a word array of their own). */
const char *tc_config_enum_word(tc_cfg_id_t id, int64_t index);

/* The loaded value of @p id as a user would write it: an enum's word, "auto"
 * for an auto field left at 0, a size with its suffix (64K, 1M), a STRING's
 * text or "(unset)" when it is empty, a bool as 0/1. What topocoll-info prints. */
void tc_config_value_text(tc_cfg_id_t id, char *buf, size_t len);

#endif /* TC_CORE_CONFIG_H */
