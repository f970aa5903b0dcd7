/* Building a communicator's hierarchy (see hier.h for the design and
 * hier_build.h for the interface). */
#include "hier_build.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/log.h"
#include "groups.h"
#include "locfile.h"
#include "netfile.h"
#include "settings.h"
#include "topo_hwloc.h"

#define BIT(l) (1u << (l))
/* Intra-node levels that can hold the shared segment (core cannot: one
 * process per core is the normal case, so it has no groups). */
#define SHM_CANDIDATES                                                                             \
    (BIT(TC_LEVEL_L2) | BIT(TC_LEVEL_L3) | BIT(TC_LEVEL_NUMA) | BIT(TC_LEVEL_PACKAGE) |            \
     BIT(TC_LEVEL_NODE))
#define NET_LEVELS (TC_HIER_LEVELS_ALL & ~(BIT(TC_LEVEL_NODE) - 1u))

/* ---- per-level algorithm lists ----------------------------------------- */

static const char *const list_algs[TC_HIER_LIST_LAST] = {
    "flat, knomial[:k], scatter_allgather, auto",
    "flat, binomial, rsg, auto",
};

static void tc_hier_choice_all_auto(tc_hier_alg_choice_t c[TC_HIER_MAX_GROUPS])
{
    for (int l = 0; l < TC_HIER_MAX_GROUPS; l++) {
        c[l].is_auto = 1;
        c[l].alg = 0;
        c[l].k = TC_HIER_KNOMIAL_K_MIN;
    }
}

/* [s, e) without surrounding blanks. */
static void tc_hier_trim(const char **s, const char **e)
{
    while (*s < *e && isspace((unsigned char)**s))
        (*s)++;
    while (*e > *s && isspace((unsigned char)(*e)[-1]))
        (*e)--;
}

/* Parse one algorithm word (NUL-terminated) of @p kind; "auto" gives
 * *is_auto = 1. Returns TC_OK or TC_ERR_PARSE. */
static tc_err_t tc_hier_alg_word(const char *w, tc_hier_list_kind_t kind, int *is_auto, int *alg)
{
    if (strcasecmp(w, "auto") == 0) {
        *is_auto = 1;
        *alg = 0;
        return TC_OK;
    }
    *is_auto = 0;
    if (kind == TC_HIER_LIST_BCAST) {
        tc_hier_bcast_alg_t a;
        if (tc_hier_bcast_alg_parse(w, &a) != 0)
            return tc_err(TC_ERR_PARSE);
        *alg = (int)a;
    } else {
        tc_hier_reduce_alg_t a;
        if (tc_hier_reduce_alg_parse(w, &a) != 0)
            return tc_err(TC_ERR_PARSE);
        *alg = (int)a;
    }
    return TC_OK;
}

/* Copy [s, e) into buf (NUL-terminated); -1 if it does not fit. */
static tc_err_t tc_hier_word_copy(const char *s, const char *e, char *buf, size_t len)
{
    size_t n = (size_t)(e - s);
    if (n + 1 > len)
        return tc_err(TC_ERR_PARSE);
    memcpy(buf, s, n);
    buf[n] = '\0';
    return TC_OK;
}

tc_err_t tc_hier_alglist_parse(const char *text, tc_hier_list_kind_t kind, const char *var,
                               tc_hier_alg_choice_t choice[TC_HIER_MAX_GROUPS], char *err,
                               size_t errlen)
{
    tc_hier_alg_choice_t tmp[TC_HIER_MAX_GROUPS];
    const char *bad_s = NULL, *bad_e = NULL;
    const char *s = text;

    tc_hier_choice_all_auto(choice);
    tc_hier_choice_all_auto(tmp);
    if (err && errlen)
        err[0] = '\0';
    if ((int)kind < 0 || kind >= TC_HIER_LIST_LAST)
        return tc_err(TC_ERR_ARG);
    if (!text)
        return TC_OK;
    {
        const char *a = text, *b = text + strlen(text);
        tc_hier_trim(&a, &b);
        if (a == b)
            return TC_OK; /* empty: all auto */
    }
    for (;;) {
        const char *es = s, *ee, *part_s[4], *part_e[4];
        int nparts = 0, a, is_auto, alg, k = TC_HIER_KNOMIAL_K_MIN;
        unsigned levels = 0;
        char w[64];

        while (*s && *s != ',')
            s++;
        ee = s;
        tc_hier_trim(&es, &ee);
        /* Split at ':' into at most 4 parts (a fourth is always an error). */
        for (const char *p = es; nparts < 4;) {
            const char *q = p;
            while (q < ee && *q != ':')
                q++;
            part_s[nparts] = p;
            part_e[nparts] = q;
            tc_hier_trim(&part_s[nparts], &part_e[nparts]);
            nparts++;
            if (q >= ee)
                break;
            p = q + 1;
        }
        bad_s = es;
        bad_e = ee;
        if (part_s[0] == part_e[0])
            goto fn_bad; /* empty entry or empty level */
        /* A bare algorithm applies to every level, "top" included. */
        if (tc_hier_word_copy(part_s[0], part_e[0], w, sizeof w) == 0 &&
            tc_hier_alg_word(w, kind, &is_auto, &alg) == 0) {
            levels = TC_HIER_LEVELS_ALL | BIT(TC_HIER_LEVEL_TOP);
            a = 0;
        } else {
            bad_s = part_s[0];
            bad_e = part_e[0];
            if (tc_hier_word_copy(part_s[0], part_e[0], w, sizeof w) != 0)
                goto fn_bad;
            if (strcasecmp(w, "top") == 0)
                levels = BIT(TC_HIER_LEVEL_TOP);
            else if (tc_hier_levels_parse(w, &levels, NULL, 0) != 0 || levels == 0)
                goto fn_bad;
            a = 1;
            if (nparts < 2) {
                bad_s = es; /* a level without an algorithm */
                bad_e = ee;
                goto fn_bad;
            }
            bad_s = part_s[1];
            bad_e = part_e[1];
            if (tc_hier_word_copy(part_s[1], part_e[1], w, sizeof w) != 0 ||
                tc_hier_alg_word(w, kind, &is_auto, &alg) != 0)
                goto fn_bad;
        }
        if (nparts > a + 1) {
            /* ":k" only after knomial */
            char *end;
            long v;
            bad_s = part_s[a + 1];
            bad_e = part_e[a + 1];
            if (is_auto || kind != TC_HIER_LIST_BCAST || alg != (int)TC_HIER_BCAST_KNOMIAL ||
                tc_hier_word_copy(bad_s, bad_e, w, sizeof w) != 0 || !isdigit((unsigned char)w[0]))
                goto fn_bad;
            errno = 0;
            v = strtol(w, &end, 10);
            if (errno || *end || v < TC_HIER_KNOMIAL_K_MIN || v > TC_HIER_KNOMIAL_K_MAX)
                goto fn_bad;
            k = (int)v;
        }
        if (nparts > a + 2) {
            bad_s = part_s[a + 2];
            bad_e = part_e[a + 2];
            goto fn_bad;
        }
        for (int l = 0; l < TC_HIER_MAX_GROUPS; l++) {
            if (levels & BIT(l)) {
                tmp[l].is_auto = is_auto;
                tmp[l].alg = is_auto ? 0 : alg;
                tmp[l].k = k;
            }
        }
        if (!*s)
            break;
        s++; /* past ',': an entry must follow ("numa:flat," is an error) */
    }
    memcpy(choice, tmp, sizeof tmp);
    return TC_OK;

fn_bad:
    if (err && errlen) {
        int n = (int)(bad_e - bad_s);
        snprintf(err, errlen,
                 "%s=\"%.200s%s\": bad word \"%.*s\"; expected entries level:alg[:k] or alg[:k] "
                 "separated by ',' (levels core, l2, l3, numa, package, socket, node, "
                 "switch1..switch4, top, all; algorithms %s; :k only after knomial, %d..%d), "
                 "e.g. \"numa:flat,node:knomial:4\"; every level uses auto",
                 var ? var : "list", text, strlen(text) > 200 ? "..." : "", n > 64 ? 64 : n, bad_s,
                 list_algs[kind], TC_HIER_KNOMIAL_K_MIN, TC_HIER_KNOMIAL_K_MAX);
    }
    return tc_err(TC_ERR_PARSE);
}

/* ---- settings ---------------------------------------------------------- */

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

static bool settings_loaded;
static tc_hier_settings_t settings_cached;

static void tc_hier_settings_from_config(tc_hier_settings_t *s)
{
    char err[1024];
    unsigned m = 0;
    const char *lv = tc_config_string(&tc_hier_config, TC_HIER_CFG_LEVELS);
    const char *def = tc_config_desc(&tc_hier_config, TC_HIER_CFG_LEVELS)->def;

    memset(s, 0, sizeof *s); /* no stray bytes: the struct is compared and sent as bytes */
    s->enabled = tc_config_int(&tc_hier_config, TC_HIER_CFG_ENABLE) != 0;
    if (tc_hier_levels_parse(lv, &m, err, sizeof err) != 0) {
        tc_log(TC_LOG_ERROR, "TC_HIER_LEVELS=\"%.200s\": %s; using the default \"%s\"", lv, err,
               def);
        (void)tc_hier_levels_parse(def, &m, NULL, 0);
    }
    s->levels = m;
    switch ((tc_hier_shm_level_cfg_t)tc_config_int(&tc_hier_config, TC_HIER_CFG_SHM_LEVEL)) {
    case TC_HIER_SHM_LEVEL_NONE:
        s->shm_level = TC_HIER_SHM_NONE;
        break;
    case TC_HIER_SHM_LEVEL_L2:
        s->shm_level = TC_LEVEL_L2;
        break;
    case TC_HIER_SHM_LEVEL_L3:
        s->shm_level = TC_LEVEL_L3;
        break;
    case TC_HIER_SHM_LEVEL_NUMA:
        s->shm_level = TC_LEVEL_NUMA;
        break;
    case TC_HIER_SHM_LEVEL_PACKAGE:
        s->shm_level = TC_LEVEL_PACKAGE;
        break;
    case TC_HIER_SHM_LEVEL_NODE:
        s->shm_level = TC_LEVEL_NODE;
        break;
    default:
        s->shm_level = TC_HIER_SHM_AUTO;
        break;
    }
    s->allreduce_scheme =
        tc_config_int(&tc_hier_config, TC_HIER_CFG_ALLREDUCE) == TC_HIER_ALLREDUCE_RB
            ? TC_HIER_ALLREDUCE_RB
            : TC_HIER_ALLREDUCE_RAB;
    int64_t top = tc_config_int(&tc_hier_config, TC_HIER_CFG_ALLREDUCE_TOP);
    s->allreduce_top_auto = top == TC_HIER_TOP_AUTO;
    s->allreduce_top = top == TC_HIER_TOP_RING ? TC_HIER_ALLREDUCE_RING : TC_HIER_ALLREDUCE_RECDBL;
    int64_t ag = tc_config_int(&tc_hier_config, TC_HIER_CFG_ALLGATHER_TOP);
    s->allgather_top_auto = ag == TC_HIER_AG_TOP_AUTO;
    s->allgather_top = ag == TC_HIER_AG_TOP_RING    ? TC_HIER_ALLGATHER_RING
                       : ag == TC_HIER_AG_TOP_BRUCK ? TC_HIER_ALLGATHER_BRUCK
                                                    : TC_HIER_ALLGATHER_RECDBL;
    s->large = (uint64_t)tc_config_int(&tc_hier_config, TC_HIER_CFG_LARGE);
    s->segment = (uint64_t)tc_config_int(&tc_hier_config, TC_HIER_CFG_SEGMENT);
    if (tc_hier_alglist_parse(tc_config_string(&tc_hier_config, TC_HIER_CFG_BCAST),
                              TC_HIER_LIST_BCAST, "TC_HIER_BCAST", s->bcast, err, sizeof err) != 0)
        tc_log(TC_LOG_ERROR, "%s", err);
    if (tc_hier_alglist_parse(tc_config_string(&tc_hier_config, TC_HIER_CFG_REDUCE),
                              TC_HIER_LIST_REDUCE, "TC_HIER_REDUCE", s->reduce, err,
                              sizeof err) != 0)
        tc_log(TC_LOG_ERROR, "%s", err);
}

void tc_hier_settings_get(tc_hier_settings_t *s)
{
    pthread_mutex_lock(&cache_lock);
    if (!settings_loaded) {
        tc_hier_settings_from_config(&settings_cached);
        settings_loaded = true;
    }
    *s = settings_cached;
    pthread_mutex_unlock(&cache_lock);
}

/* ---- this process's locality (cached per process) ---------------------- */

static bool hw_loaded;
static tc_hier_loc_t hw_loc; /* intra-node levels only */
static int hw_bound;

/* hwloc: the levels this process knows that also nest on this machine and
 * add a grouping (a redundant level would only rename another one's
 * groups). Unbound: nothing below the node. Call with cache_lock held. */
static void tc_hier_hw_self_locked(void)
{
    unsigned known = 0, nesting = 0, redundant = 0;
    hwloc_topology_t topo;
    int bound = 0;

    if (hw_loaded)
        return;
    hw_loaded = true;
    if (tc_hier_topo_self(&hw_loc, &known, &bound) == 0 && tc_hier_topo_get(&topo) == 0)
        nesting = tc_hier_topo_nesting_mask(topo, &redundant);
    hw_bound = bound;
    for (int l = 0; l < TC_LEVEL_LAST; l++) {
        if (!bound || !(TC_HIER_TOPO_LEVELS & BIT(l)) || !(known & nesting & ~redundant & BIT(l)))
            hw_loc.id[l] = TC_LOC_UNKNOWN;
    }
}

static bool net_loaded;
static int64_t net_sw[TC_HIER_MAX_SWITCH];

/* Switch ids of this process's node from TC_NETWORK_TOPOLOGY_FILE (all
 * unknown without a file or on any error, said once). Call with cache_lock
 * held. */
static void tc_hier_net_self_locked(void)
{
    const char *path = tc_config_string(&tc_hier_config, TC_HIER_CFG_NETWORK_TOPOLOGY_FILE);
    char name[MPI_MAX_PROCESSOR_NAME + 1] = "", err[1024];
    tc_hier_netfile_t nf;
    int len = 0, depth = 0;

    if (net_loaded)
        return;
    net_loaded = true;
    for (int d = 0; d < TC_HIER_MAX_SWITCH; d++)
        net_sw[d] = TC_LOC_UNKNOWN;
    if (!path[0])
        return;
    if (tc_hier_netfile_load(path, &nf, err, sizeof err) != 0) {
        tc_log(TC_LOG_ERROR, "%s; continuing without switch levels", err);
        return;
    }
    PMPI_Get_processor_name(name, &len);
    if (tc_hier_netfile_lookup(&nf, name, net_sw, &depth, err, sizeof err) != 0) {
        for (int d = 0; d < TC_HIER_MAX_SWITCH; d++)
            net_sw[d] = TC_LOC_UNKNOWN;
        tc_log(TC_LOG_ERROR, "%s (MPI_Get_processor_name); continuing without switch levels", err);
    }
    tc_hier_netfile_free(&nf);
}

static bool loc_loaded;
static int loc_state; /* 0: TC_LOCALITY_FILE unset; 1: row read; -1: error (said) */
static tc_hier_loc_t loc_row;

/* This process's row of TC_LOCALITY_FILE (by MPI_COMM_WORLD rank; the file
 * describes MPI_COMM_WORLD). Call with cache_lock held. */
static void tc_hier_loc_self_locked(void)
{
    const char *path = tc_config_string(&tc_hier_config, TC_HIER_CFG_LOCALITY_FILE);
    char err[1024];
    int wrank = 0, wsize = 1;

    if (loc_loaded)
        return;
    loc_loaded = true;
    if (!path[0])
        return;
    PMPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    PMPI_Comm_size(MPI_COMM_WORLD, &wsize);
    tc_hier_loc_t *all = malloc((size_t)wsize * sizeof *all);
    if (!all) {
        tc_log(TC_LOG_ERROR, "TC_LOCALITY_FILE: out of memory; the file is not used");
        loc_state = -1;
        return;
    }
    if (tc_hier_locfile_load(path, wsize, all, err, sizeof err) != 0) {
        tc_log(TC_LOG_ERROR, "TC_LOCALITY_FILE: %s; the file is not used", err);
        loc_state = -1;
    } else {
        loc_row = all[wrank];
        loc_state = 1;
    }
    free(all);
}

/* ---- construction ------------------------------------------------------ */

/* What every rank contributes: its locality and the id of the real node it
 * runs on (lowest MPI_COMM_WORLD rank there), which the locality file may
 * contradict. 96 bytes, no padding. */
typedef struct hier_rec {
    tc_hier_loc_t loc;
    int64_t real_node;
} hier_rec_t;

typedef struct unit_key {
    int64_t key[TC_LEVEL_LAST + 1];
    int nkey;
} unit_key_t;

static int tc_hier_unit_key_cmp(const void *a, const void *b)
{
    const unit_key_t *x = a, *y = b;
    for (int i = 0; i < x->nkey; i++) {
        if (x->key[i] != y->key[i])
            return x->key[i] < y->key[i] ? -1 : 1;
    }
    return 0;
}

static unsigned tc_hier_known_levels(const hier_rec_t *recs, int p)
{
    unsigned known = 0;
    for (int l = 0; l < TC_LEVEL_LAST; l++) {
        int i = 0;
        while (i < p && recs[i].loc.id[l] != TC_LOC_UNKNOWN)
            i++;
        if (i == p)
            known |= BIT(l);
    }
    return known;
}

/* 1 if every unit of level @p l (as the group builder names units under
 * @p mask: the id at l and at the keyed levels above) holds ranks of one real
 * node only; 0 if not; -1 when out of memory. */
static int tc_hier_units_within_real_nodes(const hier_rec_t *recs, int p, unsigned mask,
                                           unsigned known, int l)
{
    unsigned keyed = (mask & known) | (known & NET_LEVELS);
    unit_key_t *u = malloc((size_t)p * sizeof *u);
    int ok = 1;

    if (!u)
        return -1;
    for (int i = 0; i < p; i++) {
        int n = 0;
        for (int k = TC_LEVEL_LAST - 1; k >= l; k--)
            if (k == l || (keyed & BIT(k)))
                u[i].key[n++] = recs[i].loc.id[k];
        u[i].key[n++] = recs[i].real_node; /* last: runs of one unit are adjacent */
        u[i].nkey = n;
    }
    qsort(u, (size_t)p, sizeof *u, tc_hier_unit_key_cmp);
    for (int i = 0; i + 1 < p && ok; i++) {
        int n = u[i].nkey - 1;
        if (memcmp(u[i].key, u[i + 1].key, (size_t)n * sizeof u[i].key[0]) == 0 &&
            u[i].key[n] != u[i + 1].key[n])
            ok = 0;
    }
    free(u);
    return ok;
}

void tc_hier_free(tc_hier_t *h)
{
    if (!h)
        return;
    tc_hier_groups_free(&h->groups);
    free(h->locs);
    free(h->scratch);
    free(h);
}

int tc_hier_shm_index(const tc_hier_t *h)
{
    if (!h || h->shm_level < 0)
        return -1;
    for (int i = 0; i < h->nlevels; i++)
        if ((int)h->level[i].level == h->shm_level)
            return i;
    return -1;
}

/* Pure part: the hierarchy from the gathered records. Returns TC_OK or why not;
 * *msg gets a note for rank 0 to log (or stays NULL). */
static tc_err_t tc_hier_compute(tc_hier_t *h, const tc_hier_settings_t *s, const hier_rec_t *recs,
                                int p, int rank, int shm_allowed, const char **msg)
{
    unsigned known = tc_hier_known_levels(recs, p);
    unsigned mask = s->enabled ? s->levels : BIT(TC_LEVEL_NODE);
    int shm = -1, rc;
    tc_err_t err;

    *msg = NULL;
    h->p = p;
    h->rank = rank;
    h->locs = malloc((size_t)p * sizeof *h->locs);
    if (!h->locs)
        return tc_err(TC_ERR_NOMEM);
    for (int i = 0; i < p; i++)
        h->locs[i] = recs[i].loc;

    if (shm_allowed && s->shm_level != TC_HIER_SHM_NONE) {
        if (s->shm_level == TC_HIER_SHM_AUTO || !s->enabled) {
            /* The highest enabled level up to node whose units stay inside
             * real nodes. */
            for (int l = TC_LEVEL_NODE; l >= 0 && shm < 0; l--) {
                if (!(SHM_CANDIDATES & mask & known & BIT(l)))
                    continue;
                rc = tc_hier_units_within_real_nodes(recs, p, mask, known, l);
                if (rc < 0)
                    return tc_err(TC_ERR_NOMEM);
                if (rc)
                    shm = l;
            }
        } else {
            int l = s->shm_level;
            mask |= BIT(l); /* asked for by name: enabled even if TC_HIER_LEVELS omits it */
            rc = (known & BIT(l)) ? tc_hier_units_within_real_nodes(recs, p, mask, known, l) : 0;
            if (rc < 0)
                return tc_err(TC_ERR_NOMEM);
            if (rc)
                shm = l;
            else
                *msg = (known & BIT(l)) ? "its units span several real nodes"
                                        : "some rank does not know its id there";
        }
    }
    /* The shared-memory level's groups must hold every rank of their unit,
     * so nothing below it is grouped. */
    if (shm >= 0)
        mask &= ~(BIT(shm) - 1u);

    err = tc_hier_groups_build_owners(h->locs, p, rank, mask, &h->groups);
    if (err != TC_OK)
        return err;
    if (shm >= 0 && !(h->groups.active_mask & BIT(shm)))
        shm = -1; /* every unit holds one rank: nothing to share */

    h->nlevels = h->groups.nlevels;
    for (int i = 0; i < h->nlevels; i++) {
        const tc_hier_group_t *g = &h->groups.group[i];
        tc_hier_level_t *L = &h->level[i];
        const tc_hier_alg_choice_t *b = &s->bcast[g->level], *r = &s->reduce[g->level];
        L->level = g->level;
        L->size = g->size;
        L->members = g->members;
        L->my_index = g->my_index;
        L->owner = g->owner;
        L->shm = 0; /* set by the caller once the segment exists */
        L->bcast_auto = b->is_auto;
        L->bcast = b->is_auto ? TC_HIER_BCAST_KNOMIAL : (tc_hier_bcast_alg_t)b->alg;
        L->bcast_k = b->k;
        L->reduce_auto = r->is_auto;
        L->reduce = r->is_auto ? TC_HIER_REDUCE_BINOMIAL : (tc_hier_reduce_alg_t)r->alg;
    }
    h->enabled_mask = mask;
    h->active_mask = h->groups.active_mask;
    h->unknown_mask = h->groups.unknown_mask;
    h->shm_level = shm;
    h->single_shm = 0;
    h->allreduce_scheme = (tc_hier_allreduce_scheme_t)s->allreduce_scheme;
    h->allreduce_top_auto = s->allreduce_top_auto;
    h->allreduce_top = (tc_hier_allreduce_alg_t)s->allreduce_top;
    h->allgather_top_auto = s->allgather_top_auto;
    h->allgather_top = (tc_hier_allgather_alg_t)s->allgather_top;
    h->large = (size_t)s->large;
    h->segment = (size_t)s->segment;
    tc_hier_tables_rule(h);
    return TC_OK;
}

void tc_hier_tables_rule(tc_hier_t *h)
{
    h->model = 0;
    h->gamma = 0;
    for (int i = 0; i < h->nlevels; i++) {
        tc_hier_level_t *L = &h->level[i];
        L->model_level = -1;
        for (int c = 0; c < TC_HIER_SIZE_CLASSES; c++) {
            /* A class follows its smallest size, so a TC_HIER_LARGE that is not a
             * power of two takes effect from the next one. */
            const size_t m = c ? (size_t)1 << (c - 1) : 0;
            const int big = m >= h->large && L->size > 2;
            L->bcast_tab[c] = (uint8_t)(!L->bcast_auto ? L->bcast
                                        : big          ? TC_HIER_BCAST_SCATTER_ALLGATHER
                                                       : TC_HIER_BCAST_KNOMIAL);
            L->bcast_k_tab[c] = (uint16_t)L->bcast_k;
            L->bcast_why[c] = L->bcast_auto ? TC_HIER_WHY_RULE : TC_HIER_WHY_OVERRIDE;
            L->reduce_tab[c] = (uint8_t)(!L->reduce_auto ? L->reduce
                                         : big           ? TC_HIER_REDUCE_RSG
                                                         : TC_HIER_REDUCE_BINOMIAL);
            L->reduce_why[c] = L->reduce_auto ? TC_HIER_WHY_RULE : TC_HIER_WHY_OVERRIDE;
            L->reduce_nc_tab[c] = L->reduce_tab[c] == TC_HIER_REDUCE_RSG
                                      ? (uint8_t)TC_HIER_REDUCE_BINOMIAL
                                      : L->reduce_tab[c];
            L->reduce_nc_why[c] = L->reduce_why[c];
        }
    }
    for (int c = 0; c < TC_HIER_SIZE_CLASSES; c++) {
        const size_t m = c ? (size_t)1 << (c - 1) : 0;
        h->allreduce_tab[c] = (uint8_t)(!h->allreduce_top_auto ? h->allreduce_top
                                        : m >= h->large        ? TC_HIER_ALLREDUCE_RING
                                                               : TC_HIER_ALLREDUCE_RECDBL);
        h->allreduce_why[c] = h->allreduce_top_auto ? TC_HIER_WHY_RULE : TC_HIER_WHY_OVERRIDE;
        /* Allgather: recursive doubling (Bruck on a non-power-of-two group)
         * below TC_HIER_LARGE, the ring from there. */
        h->allgather_tab[c] = (uint8_t)(!h->allgather_top_auto ? h->allgather_top
                                        : m >= h->large        ? TC_HIER_ALLGATHER_RING
                                                               : TC_HIER_ALLGATHER_RECDBL);
        h->allgather_why[c] = h->allgather_top_auto ? TC_HIER_WHY_RULE : TC_HIER_WHY_OVERRIDE;
    }
}

tc_err_t tc_hier_create(tc_hier_t **out, MPI_Comm priv, MPI_Comm node, int shm_allowed,
                        const char *comm_name)
{
    static bool logged_unbound, logged_settings, logged_locfile, logged_shm, logged_fail;
    tc_hier_settings_t mine, s;
    hier_rec_t me, *recs = NULL;
    tc_hier_loc_t file_row;
    tc_hier_t *h = NULL;
    int rank, p, wrank, node_first, file_state = 0, bound = 1;
    tc_err_t rc;

    *out = NULL;
    PMPI_Comm_rank(priv, &rank);
    PMPI_Comm_size(priv, &p);
    PMPI_Comm_rank(MPI_COMM_WORLD, &wrank);

    /* 1. Settings: rank 0's, so every rank builds the same hierarchy. */
    tc_hier_settings_get(&mine);
    s = mine;
    if ((rc = PMPI_Bcast(&s, (int)sizeof s, MPI_BYTE, 0, priv)) != MPI_SUCCESS)
        return rc;
    if (memcmp(&s, &mine, sizeof s) != 0)
        tc_log_once(logged_settings, TC_LOG_INFO,
                    "%s: this rank's TC_HIER* settings differ from rank 0's; rank 0's are used",
                    comm_name);

    /* 2. This process's locality, from the per-process caches. */
    pthread_mutex_lock(&cache_lock);
    memset(&me, 0, sizeof me);
    for (int l = 0; l < TC_LEVEL_LAST; l++)
        me.loc.id[l] = TC_LOC_UNKNOWN;
    if (s.enabled) {
        tc_hier_loc_self_locked();
        file_state = loc_state;
        file_row = loc_row;
        tc_hier_hw_self_locked();
        tc_hier_net_self_locked();
        me.loc = hw_loc;
        bound = hw_bound;
        for (int d = 0; d < TC_HIER_MAX_SWITCH; d++)
            me.loc.id[TC_LEVEL_SWITCH1 + d] = net_sw[d];
    }
    pthread_mutex_unlock(&cache_lock);
    if (!bound && file_state != 1)
        tc_log_once(logged_unbound, TC_LOG_INFO,
                    "this process is not bound to cores: levels below the node are unknown, the "
                    "hierarchy uses the node level and above (bind processes, e.g. --bind-to "
                    "core, for the NUMA and package levels)");
    if ((rc = PMPI_Allreduce(&wrank, &node_first, 1, MPI_INT, MPI_MIN, node)) != MPI_SUCCESS)
        return rc;
    me.real_node = node_first;
    me.loc.id[TC_LEVEL_NODE] = node_first;

    /* 3. Agree on the locality source and on the gather buffer. */
    recs = malloc((size_t)p * sizeof *recs);
    int flags[3] = {file_state != 0, file_state != 1, recs == NULL}, any[3];
    if ((rc = PMPI_Allreduce(flags, any, 3, MPI_INT, MPI_MAX, priv)) != MPI_SUCCESS)
        goto fn_exit;
    if (any[2]) {
        tc_log_once(logged_fail, TC_LOG_INFO, "%s: out of memory on some rank: no hierarchy",
                    comm_name);
        goto fn_exit;
    }
    if (any[0] && !any[1]) {
        me.loc = file_row; /* every rank has its row */
    } else if (any[0] && rank == 0) {
        tc_log_once(logged_locfile, TC_LOG_INFO,
                    "%s: TC_LOCALITY_FILE is unset or unusable on some rank (its messages say "
                    "why): the hierarchy comes from hwloc and the network file",
                    comm_name);
    }
    if ((rc = PMPI_Allgather(&me, (int)sizeof me, MPI_BYTE, recs, (int)sizeof me, MPI_BYTE,
                             priv)) != MPI_SUCCESS)
        goto fn_exit;

    /* 4. Everything else is a function of the gathered records. */
    int multinode = 0;
    for (int i = 1; i < p; i++)
        multinode |= recs[i].real_node != recs[0].real_node;
    int ok = 1;
    const char *note = NULL;
    if (!s.enabled && multinode) {
        ok = -1; /* TC_HIER=0: no hierarchy across nodes (not a failure) */
    } else {
        h = calloc(1, sizeof *h);
        tc_err_t err =
            h ? tc_hier_compute(h, &s, recs, p, rank, shm_allowed, &note) : tc_err(TC_ERR_NOMEM);
        ok = err == TC_OK;
        if (!ok) {
            char why[128];
            tc_log(TC_LOG_INFO, "%s: no hierarchy on this rank: %s", comm_name,
                   tc_err_string(err, why, sizeof why));
        }
    }
    int all_ok;
    if ((rc = PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, priv)) != MPI_SUCCESS)
        goto fn_exit;
    if (all_ok == 0)
        tc_log_once(logged_fail, TC_LOG_INFO,
                    "%s: the hierarchy could not be built on some rank (TC_VERBOSE=1 there says "
                    "why): none is used",
                    comm_name);
    if (all_ok <= 0)
        goto fn_exit;
    if (note && rank == 0)
        tc_log_once(logged_shm, TC_LOG_INFO,
                    "%s: TC_HIER_SHM_LEVEL=%s cannot hold a shared segment (%s): no level uses "
                    "shared memory",
                    comm_name, tc_hier_shm_level_name(s.shm_level), note);
    if (rank == 0 && tc_log_level >= TC_LOG_DEBUG) {
        char lv[256];
        int n = 0;
        lv[0] = '\0';
        for (int l = 0; l <= TC_HIER_LEVEL_TOP && n < 200; l++)
            if (h->active_mask & BIT(l))
                n += snprintf(lv + n, sizeof lv - (size_t)n, " %s",
                              tc_hier_level_name((tc_level_t)l));
        tc_log(TC_LOG_DEBUG, "%s: hierarchy from %s, active levels:%s, shared-memory level %s",
               comm_name, any[0] && !any[1] ? "TC_LOCALITY_FILE" : "hwloc", n ? lv : " (none)",
               h->shm_level >= 0 ? tc_hier_level_name((tc_level_t)h->shm_level) : "none");
    }
    *out = h;
    h = NULL;

fn_exit:
    tc_hier_free(h);
    free(recs);
    return rc;
}

/* ---- reports ----------------------------------------------------------- */

const char *tc_hier_shm_level_name(int shm_level)
{
    if (shm_level == TC_HIER_SHM_AUTO)
        return "auto";
    if (shm_level == TC_HIER_SHM_NONE)
        return "none";
    return tc_hier_level_name((tc_level_t)shm_level);
}

const char *tc_hier_why_name(tc_hier_why_t why)
{
    static const char *const names[TC_HIER_WHY_LAST] = {"rule", "override", "file", "model"};
    return (int)why >= 0 && why < TC_HIER_WHY_LAST ? names[why] : "?";
}

void tc_hier_size_format(uint64_t bytes, char *buf, size_t len)
{
    static const char suffix[] = "KMGT";
    int s = -1;
    while (s < 3 && bytes >= 1024 && bytes % 1024 == 0) {
        bytes /= 1024;
        s++;
    }
    if (s < 0)
        snprintf(buf, len, "%llu", (unsigned long long)bytes);
    else
        snprintf(buf, len, "%llu%c", (unsigned long long)bytes, suffix[s]);
}

/* One table as runs over the size classes from 1 byte: "knomial:2,
 * scatter_allgather from 64K", entries from the tuning file marked
 * "[file]". @p name gives an entry's text. */
static void tc_hier_tab_summary(char *buf, size_t len, const uint8_t *tab, const uint16_t *ktab,
                                const uint8_t *why, void (*name)(int alg, int k, char *b, size_t n))
{
    size_t n = 0;
    buf[0] = '\0';
    for (int c = 1; c < TC_HIER_SIZE_CLASSES && n + 1 < len; c++) {
        const int k = ktab ? ktab[c] : 0;
        if (c > 1 && tab[c] == tab[c - 1] && (!ktab || ktab[c] == ktab[c - 1]) &&
            (why[c] == TC_HIER_WHY_FILE) == (why[c - 1] == TC_HIER_WHY_FILE))
            continue;
        char a[48], from[32] = "";
        name(tab[c], k, a, sizeof a);
        if (c > 1) {
            char sz[24];
            tc_hier_size_format((uint64_t)1 << (c - 1), sz, sizeof sz);
            snprintf(from, sizeof from, " from %s", sz);
        }
        int w = snprintf(buf + n, len - n, "%s%s%s%s", c > 1 ? ", " : "", a, from,
                         why[c] == TC_HIER_WHY_FILE ? " [file]" : "");
        n += w > 0 ? (size_t)w : 0;
    }
}

static void tc_hier_bcast_name(int alg, int k, char *b, size_t n)
{
    if (alg == TC_HIER_BCAST_KNOMIAL)
        snprintf(b, n, "knomial:%d", k);
    else
        snprintf(b, n, "%s", tc_hier_bcast_alg_name((tc_hier_bcast_alg_t)alg));
}
static void tc_hier_reduce_name(int alg, int k, char *b, size_t n)
{
    (void)k;
    snprintf(b, n, "%s", tc_hier_reduce_alg_name((tc_hier_reduce_alg_t)alg));
}
static void tc_hier_allreduce_name(int alg, int k, char *b, size_t n)
{
    (void)k;
    snprintf(b, n, "%s", tc_hier_allreduce_alg_name((tc_hier_allreduce_alg_t)alg));
}

void tc_hier_level_describe(const tc_hier_t *h, const tc_hier_level_t *l, char *buf, size_t len)
{
    char b[200], r[200], t[180];

    (void)h;
    if (l->shm) {
        snprintf(buf, len, "shared memory (segment)");
        return;
    }
    if (!l->bcast_auto) {
        tc_hier_bcast_name(l->bcast, l->bcast_k, b, sizeof b);
    } else {
        tc_hier_tab_summary(t, sizeof t, l->bcast_tab, l->bcast_k_tab, l->bcast_why,
                            tc_hier_bcast_name);
        snprintf(b, sizeof b, "auto (%s)", t);
    }
    if (!l->reduce_auto) {
        tc_hier_reduce_name(l->reduce, 0, r, sizeof r);
    } else {
        tc_hier_tab_summary(t, sizeof t, l->reduce_tab, NULL, l->reduce_why, tc_hier_reduce_name);
        snprintf(r, sizeof r, "auto (%s)", t);
    }
    snprintf(buf, len, "bcast %s; reduce %s", b, r);
}

static void tc_hier_allgather_name(int alg, int k, char *b, size_t n)
{
    (void)k;
    snprintf(b, n, "%s", tc_hier_allgather_alg_name((tc_hier_allgather_alg_t)alg));
}

void tc_hier_top_allgather_describe(const tc_hier_t *h, char *buf, size_t len)
{
    char t[180];
    if (!h->allgather_top_auto) {
        snprintf(buf, len, "%s", tc_hier_allgather_alg_name(h->allgather_top));
        return;
    }
    tc_hier_tab_summary(t, sizeof t, h->allgather_tab, NULL, h->allgather_why,
                        tc_hier_allgather_name);
    snprintf(buf, len, "auto (%s)", t);
}

void tc_hier_top_allreduce_describe(const tc_hier_t *h, char *buf, size_t len)
{
    char t[180];
    if (!h->allreduce_top_auto) {
        snprintf(buf, len, "%s", tc_hier_allreduce_alg_name(h->allreduce_top));
        return;
    }
    tc_hier_tab_summary(t, sizeof t, h->allreduce_tab, NULL, h->allreduce_why,
                        tc_hier_allreduce_name);
    snprintf(buf, len, "auto (%s)", t);
}
