/* Datatype helpers.
 *
 * A message of (count, datatype) is a stream of bytes in type-signature
 * order. Contiguous data is copied directly; other datatypes are flattened
 * into a list of (displacement, length) runs per element so that the stream
 * can be copied piece by piece (fragment by fragment) with a cursor. Types
 * the flattener does not know (subarray, darray, named types with holes, or
 * more than TC_DATATYPE_MAX_SEGS runs per element) are packed with MPI_Pack
 * instead.
 */
#ifndef TC_CORE_DATATYPE_H
#define TC_CORE_DATATYPE_H

#include <mpi.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define TC_DATATYPE_MAX_SEGS 65536

/* Predefined datatypes answered without an MPI call (issue 16: a
 * PMPI_Type_size or a contiguity check of three PMPI calls costs more than
 * the rest of a 4-byte call). An open-addressed table keyed by the handle's
 * value, filled once by tc_datatype_table_init() (sizes and contiguity asked
 * of the MPI then) and read-only afterwards. Predefined handles never change
 * meaning and no derived datatype can have their value, so an entry never
 * goes stale. */
#define TC_DT_TABLE_BITS 7
#define TC_DT_TABLE_SIZE (1 << TC_DT_TABLE_BITS)

typedef struct tc_dt_entry {
    uintptr_t key; /* the handle's value; 0 with size < 0: empty */
    int size;      /* MPI_Type_size; -1: empty */
    int contig;    /* one run of size bytes at lb 0, elements back to back */
} tc_dt_entry_t;

extern tc_dt_entry_t tc_dt_table[TC_DT_TABLE_SIZE];
extern atomic_int tc_dt_table_ready;

/* Fill the table (idempotent, thread-safe; needs MPI initialised). */
void tc_datatype_table_init(void);

static inline uintptr_t tc_datatype_key(MPI_Datatype dt)
{
    return (uintptr_t)dt; /* a pointer in Open MPI, an int in MPICH */
}

static inline unsigned tc_datatype_slot(uintptr_t key)
{
    return (unsigned)(((uint64_t)key * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - TC_DT_TABLE_BITS));
}

/* The entry of predefined datatype @p dt, or NULL (a derived datatype, one
 * not in the table, or the table not yet filled: ask the MPI). */
static inline const tc_dt_entry_t *tc_datatype_known(MPI_Datatype dt)
{
    /* acquire: pairs with the release in tc_datatype_table_init() */
    if (!atomic_load_explicit(&tc_dt_table_ready, memory_order_acquire))
        return NULL;
    const uintptr_t key = tc_datatype_key(dt);
    for (unsigned i = tc_datatype_slot(key);; i = (i + 1) & (TC_DT_TABLE_SIZE - 1)) {
        const tc_dt_entry_t *e = &tc_dt_table[i];
        if (e->size < 0)
            return NULL;
        if (e->key == key)
            return e;
    }
}

/* MPI_Type_size of @p dt: the table for predefined types, else the MPI.
 * Returns MPI_SUCCESS or the MPI's error (an invalid datatype). */
static inline int tc_datatype_size(MPI_Datatype dt, int *size)
{
    const tc_dt_entry_t *e = tc_datatype_known(dt);
    if (e) {
        *size = e->size;
        return MPI_SUCCESS;
    }
    return PMPI_Type_size(dt, size);
}

/* Non-zero when @p count elements of @p dt occupy exactly their type size in
 * one contiguous run starting at buf + *lb (no holes, no overlaps, no
 * reordering), so bytes can be copied directly. */
int tc_datatype_is_contiguous(MPI_Datatype dt, int count, MPI_Aint *lb);

typedef struct tc_dt_seg {
    MPI_Aint disp; /* from the element's origin */
    size_t len;
} tc_dt_seg_t;

typedef struct tc_dt_map {
    tc_dt_seg_t *segs; /* in type-signature order; adjacent runs merged */
    size_t nsegs, cap;
    MPI_Aint extent; /* distance between consecutive elements */
} tc_dt_map_t;

/* Flatten @p dt. Returns TC_OK, or TC_ERR_NOTSUP when the type is not
 * supported (TC_ERR_NOMEM; the map is then empty; free it anyway). */
tc_err_t tc_datatype_flatten(MPI_Datatype dt, tc_dt_map_t *map);
void tc_datatype_map_free(tc_dt_map_t *map);

/* Walks the byte stream of (buf, count elements of a flattened type). */
typedef struct tc_dt_cursor {
    const tc_dt_map_t *map;
    char *elem; /* origin of the current element */
    size_t seg; /* current run */
    size_t off; /* bytes of the current run already done */
} tc_dt_cursor_t;

void tc_dt_cursor_init(tc_dt_cursor_t *c, const tc_dt_map_t *map, void *buf);
/* Copy the next @p n bytes of the stream to @p dst / from @p src. The
 * signatures match tc_shm_copier_t. */
void tc_dt_cursor_gather(void *cursor, char *dst, size_t n);
void tc_dt_cursor_scatter(void *cursor, const char *src, size_t n);

#endif /* TC_CORE_DATATYPE_H */
