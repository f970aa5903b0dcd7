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
#include <stddef.h>

#define TC_DATATYPE_MAX_SEGS 65536

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

/* Flatten @p dt. Returns 0, or -1 when the type is not supported (the map
 * is then empty; free it anyway). */
int tc_datatype_flatten(MPI_Datatype dt, tc_dt_map_t *map);
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
