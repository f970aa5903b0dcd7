/* Tunables of the barriers (message-based and shared-memory): one entry each in
 * settings.c's table (name, type, default, accepted words, description),
 * indexed by the ids below. The configuration engine (base/config.h) loads
 * and prints them; src/core/settings.c gathers them with the other modules'
 * tables into the one table. */
#ifndef TC_BARRIER_SETTINGS_H
#define TC_BARRIER_SETTINGS_H

#include "base/config.h"

typedef enum {
    TC_BARRIER_CFG_ALG,       /* TC_BARRIER */
    TC_BARRIER_CFG_ARITY,     /* TC_BARRIER_ARITY */
    TC_BARRIER_CFG_SHM_ALG,   /* TC_SHM_BARRIER */
    TC_BARRIER_CFG_SHM_ARITY, /* TC_SHM_BARRIER_ARITY */
    TC_BARRIER_CFG_LAST
} tc_barrier_cfg_id_t;

extern tc_cfg_module_t tc_barrier_config;

/* The barrier choices of a context: an override 0 (auto) or 1 + a
 * tc_barrier_alg_t (barrier.h: the accepted words after "auto" are in its
 * order), and the combining trees' arities. */
typedef struct tc_barrier_settings {
    int shm_override; /* TC_SHM_BARRIER */
    int shm_arity;    /* TC_SHM_BARRIER_ARITY */
    int msg_override; /* TC_BARRIER */
    int msg_arity;    /* TC_BARRIER_ARITY */
} tc_barrier_settings_t;

/* This process's (the context agrees on them). */
void tc_barrier_settings_get(tc_barrier_settings_t *s);

#endif /* TC_BARRIER_SETTINGS_H */
