#include "datatype.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

tc_dt_entry_t tc_dt_table[TC_DT_TABLE_SIZE];
atomic_int tc_dt_table_ready;
static pthread_once_t tc_dt_table_once = PTHREAD_ONCE_INIT;

/* The predefined datatypes the table holds: C, multi-language, pair and
 * Fortran types (those the MPI does not provide are MPI_DATATYPE_NULL or
 * fail PMPI_Type_size, and are left out). */
static const MPI_Datatype tc_dt_predefined[] = {
    MPI_CHAR,
    MPI_SIGNED_CHAR,
    MPI_UNSIGNED_CHAR,
    MPI_BYTE,
    MPI_PACKED,
    MPI_WCHAR,
    MPI_SHORT,
    MPI_UNSIGNED_SHORT,
    MPI_INT,
    MPI_UNSIGNED,
    MPI_LONG,
    MPI_UNSIGNED_LONG,
    MPI_LONG_LONG_INT,
    MPI_LONG_LONG,
    MPI_UNSIGNED_LONG_LONG,
    MPI_FLOAT,
    MPI_DOUBLE,
    MPI_LONG_DOUBLE,
    MPI_C_BOOL,
    MPI_INT8_T,
    MPI_UINT8_T,
    MPI_INT16_T,
    MPI_UINT16_T,
    MPI_INT32_T,
    MPI_UINT32_T,
    MPI_INT64_T,
    MPI_UINT64_T,
    MPI_AINT,
    MPI_OFFSET,
    MPI_COUNT,
    MPI_C_COMPLEX,
    MPI_C_FLOAT_COMPLEX,
    MPI_C_DOUBLE_COMPLEX,
    MPI_C_LONG_DOUBLE_COMPLEX,
    MPI_FLOAT_INT,
    MPI_DOUBLE_INT,
    MPI_LONG_INT,
    MPI_2INT,
    MPI_SHORT_INT,
    MPI_LONG_DOUBLE_INT,
    MPI_INTEGER,
    MPI_REAL,
    MPI_DOUBLE_PRECISION,
    MPI_LOGICAL,
    MPI_CHARACTER,
    MPI_COMPLEX,
    MPI_DOUBLE_COMPLEX,
};
_Static_assert(sizeof tc_dt_predefined / sizeof tc_dt_predefined[0] < TC_DT_TABLE_SIZE / 2,
               "the table stays at most half full, so probes are short");

static void tc_dt_table_fill(void)
{
    for (unsigned i = 0; i < TC_DT_TABLE_SIZE; i++)
        tc_dt_table[i] = (tc_dt_entry_t){0, -1, 0};
    for (size_t t = 0; t < sizeof tc_dt_predefined / sizeof tc_dt_predefined[0]; t++) {
        const MPI_Datatype dt = tc_dt_predefined[t];
        int size;
        MPI_Aint lb = 0;
        if (dt == MPI_DATATYPE_NULL || PMPI_Type_size(dt, &size) != MPI_SUCCESS || size < 0)
            continue;
        /* Two elements contiguous covers one (is_contiguous's count > 1 test
         * implies its count <= 1 test); lb must be 0 for "at buf". */
        const int contig = tc_datatype_is_contiguous(dt, 2, &lb) && lb == 0;
        const uintptr_t key = tc_datatype_key(dt);
        unsigned i = tc_datatype_slot(key);
        while (tc_dt_table[i].size >= 0 && tc_dt_table[i].key != key)
            i = (i + 1) & (TC_DT_TABLE_SIZE - 1);
        tc_dt_table[i] = (tc_dt_entry_t){key, size, contig};
    }
    /* release: pairs with the acquire in tc_datatype_known() */
    atomic_store_explicit(&tc_dt_table_ready, 1, memory_order_release);
}

void tc_datatype_table_init(void)
{
    pthread_once(&tc_dt_table_once, tc_dt_table_fill);
}

/* Built only from combiners that cannot reorder or overlap bytes. */
static int tc_datatype_simple(MPI_Datatype dt, int depth)
{
    int ni, na, nd, combiner;
    if (depth > 16 || PMPI_Type_get_envelope(dt, &ni, &na, &nd, &combiner) != MPI_SUCCESS)
        return 0;
    if (combiner == MPI_COMBINER_NAMED)
        return 1;
    if (combiner != MPI_COMBINER_DUP && combiner != MPI_COMBINER_CONTIGUOUS &&
        combiner != MPI_COMBINER_RESIZED)
        return 0;
    int ints[2];
    MPI_Aint addrs[2];
    MPI_Datatype types[1];
    if (ni > 2 || na > 2 || nd != 1 ||
        PMPI_Type_get_contents(dt, ni, na, nd, ints, addrs, types) != MPI_SUCCESS)
        return 0;
    int ok = tc_datatype_simple(types[0], depth + 1);
    int tni, tna, tnd, tcomb;
    PMPI_Type_get_envelope(types[0], &tni, &tna, &tnd, &tcomb);
    if (tcomb != MPI_COMBINER_NAMED)
        PMPI_Type_free(&types[0]); /* get_contents returned a new handle */
    return ok;
}

int tc_datatype_is_contiguous(MPI_Datatype dt, int count, MPI_Aint *lb)
{
    int size;
    MPI_Aint ext_lb, extent, true_lb, true_extent;
    const tc_dt_entry_t *e = tc_datatype_known(dt);
    if (e && e->contig) {
        *lb = 0;
        return 1;
    }
    if (PMPI_Type_size(dt, &size) != MPI_SUCCESS ||
        PMPI_Type_get_extent(dt, &ext_lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(dt, &true_lb, &true_extent) != MPI_SUCCESS)
        return 0;
    *lb = true_lb;
    if (count <= 1 || size == 0)
        return (MPI_Aint)size == true_extent && tc_datatype_simple(dt, 0);
    return (MPI_Aint)size == extent && (MPI_Aint)size == true_extent && tc_datatype_simple(dt, 0);
}

static tc_err_t tc_dt_map_append(tc_dt_map_t *m, MPI_Aint disp, size_t len)
{
    if (len == 0)
        return TC_OK;
    if (m->nsegs > 0) {
        tc_dt_seg_t *last = &m->segs[m->nsegs - 1];
        if (last->disp + (MPI_Aint)last->len == disp) {
            last->len += len;
            return TC_OK;
        }
    }
    if (m->nsegs == TC_DATATYPE_MAX_SEGS)
        return tc_err(TC_ERR_NOTSUP); /* too many pieces to be worth a map */
    if (m->nsegs == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 16;
        tc_dt_seg_t *segs = realloc(m->segs, cap * sizeof *segs);
        if (!segs)
            return tc_err(TC_ERR_NOMEM);
        m->segs = segs;
        m->cap = cap;
    }
    m->segs[m->nsegs].disp = disp;
    m->segs[m->nsegs].len = len;
    m->nsegs++;
    return TC_OK;
}

static tc_err_t tc_dt_extent(MPI_Datatype dt, MPI_Aint *extent)
{
    MPI_Aint lb;
    return PMPI_Type_get_extent(dt, &lb, extent); /* an MPI code is a tc_err_t */
}

/* Append the runs of one element of @p dt placed at @p base, recursively
 * through the type constructors (MPI-3.1 section 4.1.13). */
static tc_err_t tc_dt_flatten_into(MPI_Datatype dt, MPI_Aint base, tc_dt_map_t *m, int depth)
{
    int ni, na, nd, comb;
    tc_err_t rc = tc_err(TC_ERR_NOTSUP);
    if (depth > 32 || PMPI_Type_get_envelope(dt, &ni, &na, &nd, &comb) != MPI_SUCCESS)
        return tc_err(TC_ERR_NOTSUP);
    if (comb == MPI_COMBINER_NAMED) {
        int size;
        MPI_Aint tlb, text;
        PMPI_Type_size(dt, &size);
        PMPI_Type_get_true_extent(dt, &tlb, &text);
        if ((MPI_Aint)size != text)
            return tc_err(
                TC_ERR_NOTSUP); /* a pair type with a hole (e.g. MPI_SHORT_INT): layout unknown */
        return tc_dt_map_append(m, base + tlb, (size_t)size);
    }
    int *ints = malloc(((size_t)ni + 1) * sizeof *ints);
    MPI_Aint *addrs = malloc(((size_t)na + 1) * sizeof *addrs);
    MPI_Datatype *types = malloc(((size_t)nd + 1) * sizeof *types);
    int got = 0;
    if (!ints || !addrs || !types ||
        PMPI_Type_get_contents(dt, ni, na, nd, ints, addrs, types) != MPI_SUCCESS)
        goto fn_exit;
    got = 1;
    MPI_Aint ext = 0;
    if (nd >= 1 && tc_dt_extent(types[0], &ext) != 0)
        goto fn_exit;
    rc = TC_OK;
    switch (comb) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED: /* only the bounds change, not where the data is */
        rc = tc_dt_flatten_into(types[0], base, m, depth + 1);
        break;
    case MPI_COMBINER_CONTIGUOUS:
        for (int i = 0; i < ints[0] && rc == TC_OK; i++)
            rc = tc_dt_flatten_into(types[0], base + i * ext, m, depth + 1);
        break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
        MPI_Aint stride = comb == MPI_COMBINER_VECTOR ? ints[2] * ext : addrs[0];
        for (int i = 0; i < ints[0] && rc == TC_OK; i++)
            for (int j = 0; j < ints[1] && rc == TC_OK; j++)
                rc = tc_dt_flatten_into(types[0], base + i * stride + j * ext, m, depth + 1);
        break;
    }
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
        for (int i = 0; i < ints[0] && rc == TC_OK; i++) {
            MPI_Aint d = comb == MPI_COMBINER_INDEXED ? ints[1 + ints[0] + i] * ext : addrs[i];
            for (int j = 0; j < ints[1 + i] && rc == TC_OK; j++)
                rc = tc_dt_flatten_into(types[0], base + d + j * ext, m, depth + 1);
        }
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
        for (int i = 0; i < ints[0] && rc == TC_OK; i++) {
            MPI_Aint d = comb == MPI_COMBINER_INDEXED_BLOCK ? ints[2 + i] * ext : addrs[i];
            for (int j = 0; j < ints[1] && rc == TC_OK; j++)
                rc = tc_dt_flatten_into(types[0], base + d + j * ext, m, depth + 1);
        }
        break;
    case MPI_COMBINER_STRUCT:
        for (int i = 0; i < ints[0] && rc == TC_OK; i++) {
            MPI_Aint e;
            if (tc_dt_extent(types[i], &e) != 0) {
                rc = tc_err(TC_ERR_NOTSUP);
                break;
            }
            for (int j = 0; j < ints[1 + i] && rc == TC_OK; j++)
                rc = tc_dt_flatten_into(types[i], base + addrs[i] + j * e, m, depth + 1);
        }
        break;
    default: /* subarray, darray, Fortran parameterised types: MPI_Pack */
        rc = tc_err(TC_ERR_NOTSUP);
    }
fn_exit:
    if (got)
        for (int i = 0; i < nd; i++) {
            int tni, tna, tnd, tcomb;
            PMPI_Type_get_envelope(types[i], &tni, &tna, &tnd, &tcomb);
            if (tcomb != MPI_COMBINER_NAMED)
                PMPI_Type_free(&types[i]); /* get_contents made new handles */
        }
    free(ints);
    free(addrs);
    free(types);
    return rc;
}

tc_err_t tc_datatype_flatten(MPI_Datatype dt, tc_dt_map_t *map)
{
    map->segs = NULL;
    map->nsegs = map->cap = 0;
    tc_err_t rc;
    if ((rc = tc_dt_extent(dt, &map->extent)) != TC_OK ||
        (rc = tc_dt_flatten_into(dt, 0, map, 0)) != TC_OK) {
        tc_datatype_map_free(map);
        return rc;
    }
    return TC_OK;
}

void tc_datatype_map_free(tc_dt_map_t *map)
{
    free(map->segs);
    map->segs = NULL;
    map->nsegs = map->cap = 0;
}

void tc_dt_cursor_init(tc_dt_cursor_t *c, const tc_dt_map_t *map, void *buf)
{
    c->map = map;
    c->elem = buf;
    c->seg = 0;
    c->off = 0;
}

/* Next piece of the stream: at most @p want bytes, contiguous in memory. */
static inline char *tc_dt_cursor_next(tc_dt_cursor_t *c, size_t want, size_t *got)
{
    const tc_dt_seg_t *s = &c->map->segs[c->seg];
    size_t n = s->len - c->off < want ? s->len - c->off : want;
    /* Integer arithmetic: with MPI_BOTTOM the element origin is 0 and the
     * displacements are absolute addresses. */
    char *p = (char *)((uintptr_t)c->elem + (uintptr_t)s->disp + c->off);
    c->off += n;
    if (c->off == s->len) {
        c->off = 0;
        if (++c->seg == c->map->nsegs) {
            c->seg = 0;
            c->elem = (char *)((uintptr_t)c->elem + (uintptr_t)c->map->extent);
        }
    }
    *got = n;
    return p;
}

void tc_dt_cursor_gather(void *cursor, char *dst, size_t n)
{
    tc_dt_cursor_t *c = cursor;
    while (n > 0) {
        size_t got;
        char *p = tc_dt_cursor_next(c, n, &got);
        memcpy(dst, p, got);
        dst += got;
        n -= got;
    }
}

void tc_dt_cursor_scatter(void *cursor, const char *src, size_t n)
{
    tc_dt_cursor_t *c = cursor;
    while (n > 0) {
        size_t got;
        char *p = tc_dt_cursor_next(c, n, &got);
        memcpy(p, src, got);
        src += got;
        n -= got;
    }
}
