/* The configuration engine: parsing, lookup, sources and the printed text of
 * TC_* environment variables. It knows no module's variables: each module
 * declares its own tunables once, in a table of its own (e.g. src/shm/settings.c:
 * name, type, default, accepted words, description) indexed by an id enum of
 * its own (tc_shm_cfg_id_t), and reads them as tc_config_int(&tc_shm_config,
 * TC_SHM_CFG_BANKS). The gathered list of every module's table (the one table
 * docs/tunables.md, topocoll-tunables and topocoll-info print) is in
 * src/core/settings.c.
 *
 * A module's values are read from the environment once per process, on the
 * first read of one of its variables or by tc_config_module_load (thread-safe;
 * the library loads every module at the first context creation). A bad value
 * gives one message naming the variable, the value and what is accepted, and
 * the default is used.
 */
#ifndef TC_BASE_CONFIG_H
#define TC_BASE_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "atomics.h"
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

/* Per-variable state the engine fills when it loads a module. */
typedef struct tc_cfg_slot {
    tc_cfg_value_t value;
    tc_cfg_source_t source;
    char *raw;   /* the environment's text, or NULL when unset */
    char *str;   /* STRING: the trimmed text from the environment, or NULL */
    char *words; /* ENUM: a copy of the accepted list cut at the commas */
} tc_cfg_slot_t;

/* One module's tunables: a table of @p count descriptors indexed by the
 * module's own id enum, and as many slots for the loaded values. Defined once
 * by the module (static storage: the engine's fields start zeroed), e.g.
 *   TC_CFG_MODULE(tc_shm_config, "shm", tc_shm_cfg_table, TC_SHM_CFG_LAST, NULL);
 */
typedef struct tc_cfg_module {
    const char *name;           /* "shm" */
    const tc_cfg_desc_t *table; /* [count] */
    int count;
    tc_cfg_slot_t *slots; /* [count], written by the engine only */
    /* Called (under the engine's lock) after every load of the module, e.g.
     * base's sets tc_log_level from TC_VERBOSE; may be NULL. */
    void (*loaded_hook)(const struct tc_cfg_module *m);
    tc_atomic_u64_t loaded; /* the engine's: 1 once the slots hold the values */
} tc_cfg_module_t;

/* Define the module @p var (name @p name) over the descriptor array @p table,
 * indexed by the ids 0..@p last - 1, with its slots; @p hook: the loaded_hook
 * or NULL. */
#define TC_CFG_MODULE(var, name_, table_, last, hook)                                              \
    _Static_assert(sizeof table_ / sizeof table_[0] == (last), "one " name_ " entry per id");      \
    static tc_cfg_slot_t var##_slots[last];                                                        \
    tc_cfg_module_t var = {                                                                        \
        .name = name_, .table = table_, .count = last, .slots = var##_slots, .loaded_hook = hook}

/* Parse @p text as a value of @p desc. Pure. On failure returns TC_ERR_PARSE
 * and writes a message naming the variable, the value and what is accepted
 * into @p err. */
tc_err_t tc_config_parse(const tc_cfg_desc_t *desc, const char *text, tc_cfg_value_t *out,
                         char *err, size_t errlen);

/* Read @p m's variables from the environment (once per process; later calls
 * do nothing). Bad values are reported on stderr (always) and replaced by the
 * default. */
void tc_config_module_load(tc_cfg_module_t *m);

/* The same for each of @p n modules, in order. */
void tc_config_load(tc_cfg_module_t *const *modules, int n);

/* Forget the loaded values of every module, so the next read re-reads the
 * environment (unit tests). Not thread-safe. */
void tc_config_reset(void);

/* The module's values are loaded (the check every read makes: one acquire
 * load once they are). */
static inline void tc_config_module_ready(tc_cfg_module_t *m)
{
    /* acquire: pairs with the release at the end of tc_config_module_load() */
    if (!tc_load_acquire_u64(&m->loaded))
        tc_config_module_load(m);
}

/* The descriptor of variable @p id of @p m, or NULL when out of range. */
static inline const tc_cfg_desc_t *tc_config_desc(const tc_cfg_module_t *m, int id)
{
    return id >= 0 && id < m->count ? &m->table[id] : NULL;
}

/* The loaded value (ENUM: the index of its word in the accepted list; STRING:
 * the text's length); 0 for an id out of range. */
static inline int64_t tc_config_int(tc_cfg_module_t *m, int id)
{
    tc_config_module_ready(m);
    return id >= 0 && id < m->count ? m->slots[id].value.i : 0;
}

static inline double tc_config_double(tc_cfg_module_t *m, int id)
{
    tc_config_module_ready(m);
    return id >= 0 && id < m->count ? m->slots[id].value.d : 0;
}

static inline tc_cfg_source_t tc_config_source(tc_cfg_module_t *m, int id)
{
    tc_config_module_ready(m);
    return id >= 0 && id < m->count ? m->slots[id].source : TC_CFG_SRC_DEFAULT;
}

/* The raw environment text, or NULL when unset. */
static inline const char *tc_config_raw(tc_cfg_module_t *m, int id)
{
    tc_config_module_ready(m);
    return id >= 0 && id < m->count ? m->slots[id].raw : NULL;
}

/* A STRING variable's value (trimmed), or its default text when unset or
 * invalid; "" for an id that is not a STRING. Valid until tc_config_reset. */
const char *tc_config_string(tc_cfg_module_t *m, int id);

/* The variable named @p name among @p n modules: its module (and *id), or
 * NULL. */
tc_cfg_module_t *tc_config_find(tc_cfg_module_t *const *modules, int n, const char *name, int *id);

/* A size as the parser accepts it: exact multiples of MiB or GiB with the
 * suffix (so 1 TiB prints as 1024G), anything else in plain bytes. */
void tc_config_size_format(double v, char *buf, size_t len);

/* Word @p index of the accepted list of ENUM variable @p id (e.g. "knomial");
 * "?" if out of range or @p id is not an ENUM. The accepted list is the one
 * spelling of the words: a module's enum lists its values in the same order. */
const char *tc_config_enum_name(tc_cfg_module_t *m, int id, int64_t index);

/* The loaded value of @p id as a user would write it: an enum's word, "auto"
 * for an auto field left at 0, a size with its suffix (64K, 1M), a STRING's
 * text or "(unset)" when it is empty, a bool as 0/1. What topocoll-info prints. */
void tc_config_value_text(tc_cfg_module_t *m, int id, char *buf, size_t len);

#endif /* TC_BASE_CONFIG_H */
