#include "blocks.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* MPI_Pack (unpack false) or MPI_Unpack (true) of (buf, count, dt) to or
 * from @p bytes (@p n bytes). MPICH's MPI_Pack rejects a NULL buffer, so
 * MPI_BOTTOM is described relative to a real address instead. */
static tc_err_t tc_blocks_pack(bool unpack, const void *buf, int count, MPI_Datatype dt,
                               char *bytes, size_t n, MPI_Comm comm)
{
    static char anchor;
    MPI_Datatype rebased = MPI_DATATYPE_NULL;
    int rc, pos = 0;
    if (n > INT_MAX)
        return tc_err(TC_ERR_COUNT); /* MPI_Pack's int positions */
    if (buf == MPI_BOTTOM) {
        MPI_Aint a;
        PMPI_Get_address(&anchor, &a);
        MPI_Aint disp = -a;
        if ((rc = PMPI_Type_create_struct(1, &count, &disp, &dt, &rebased)) != MPI_SUCCESS ||
            (rc = PMPI_Type_commit(&rebased)) != MPI_SUCCESS)
            return rc;
        buf = &anchor;
        dt = rebased;
        count = 1;
    }
    if (unpack)
        rc = PMPI_Unpack(bytes, (int)n, &pos, (void *)(uintptr_t)buf, count, dt, comm);
    else
        rc = PMPI_Pack(buf, count, dt, bytes, (int)n, &pos, comm);
    if (rebased != MPI_DATATYPE_NULL)
        PMPI_Type_free(&rebased);
    return rc;
}

tc_err_t tc_blocks_init(tc_blocks_t *b, const void *buf, int n, int count, const int *counts,
                        const int *displs, MPI_Datatype type, int flags, MPI_Comm comm)
{
    /* No memset: the struct is large (a type map, a cursor) and this runs
     * on every call; every field a later call reads is set here or where
     * its mode is chosen. */
    tc_blocks_none(b);
    b->buf = buf;
    b->type = type;
    b->n = n;
    b->count = count;
    b->counts = counts;
    b->displs = displs;
    b->lb = 0;
    const tc_dt_entry_t *e = tc_datatype_known(type);
    if (e && e->contig) {
        b->tsize = (size_t)e->size;
        b->extent = e->size;
        return MPI_SUCCESS;
    }
    int size;
    MPI_Aint lb0;
    PMPI_Type_size(type, &size);
    PMPI_Type_get_extent(type, &lb0, &b->extent);
    b->tsize = (size_t)size;
    /* Two elements: contiguous also from one element to the next. */
    if (tc_datatype_is_contiguous(type, 2, &b->lb))
        return MPI_SUCCESS;
    b->lb = 0;
    bool mapped = tc_datatype_flatten(type, &b->map) == 0;
    if (mapped && !(flags & TC_BLOCKS_STAGE)) {
        b->mode = TC_BLOCKS_MAPPED;
        if (n > 1 && !(b->cursors = malloc((size_t)n * sizeof *b->cursors)))
            return tc_err(TC_ERR_NOMEM);
        return MPI_SUCCESS;
    }
    b->mode = TC_BLOCKS_STAGED;
    b->prefix = n > 1 ? malloc(((size_t)n + 1) * sizeof *b->prefix) : b->prefix_one;
    if (!b->prefix) {
        tc_datatype_map_free(&b->map);
        return tc_err(TC_ERR_NOMEM);
    }
    size_t at = 0;
    for (int j = 0; j < n; j++) {
        b->prefix[j] = at;
        at += tc_blocks_bytes(b, j);
    }
    b->prefix[n] = at;
    int rc = MPI_SUCCESS;
    if (!(b->staged = malloc(at ? at : 1)))
        rc = tc_err(TC_ERR_NOMEM);
    for (int j = 0; j < n && rc == MPI_SUCCESS && (flags & TC_BLOCKS_READ); j++) {
        size_t len = tc_blocks_bytes(b, j);
        if (len == 0)
            continue;
        if (mapped) {
            tc_dt_cursor_init(&b->one, &b->map, tc_blocks_origin(b, j));
            tc_dt_cursor_gather(&b->one, b->staged + b->prefix[j], len);
        } else {
            rc = tc_blocks_pack(false, tc_blocks_origin(b, j), tc_blocks_count(b, j), type,
                                b->staged + b->prefix[j], len, comm);
        }
    }
    /* Unpacking (tc_blocks_finish) goes through MPI_Unpack: keep no map. */
    tc_datatype_map_free(&b->map);
    return rc;
}

tc_err_t tc_blocks_stage_contig(tc_blocks_t *b, bool read)
{
    size_t *prefix = b->n > 1 ? malloc(((size_t)b->n + 1) * sizeof *prefix) : b->prefix_one;
    if (!prefix)
        return tc_err(TC_ERR_NOMEM);
    prefix[0] = 0;
    for (int j = 0; j < b->n; j++)
        prefix[j + 1] = prefix[j] + tc_blocks_bytes(b, j);
    char *staged = malloc(prefix[b->n] > 0 ? prefix[b->n] : 1);
    if (!staged) {
        if (prefix != b->prefix_one)
            free(prefix);
        return tc_err(TC_ERR_NOMEM);
    }
    for (int j = 0; read && j < b->n; j++)
        memcpy(staged + prefix[j], tc_blocks_data(b, j), tc_blocks_bytes(b, j));
    b->prefix = prefix;
    b->staged = staged;
    b->mode = TC_BLOCKS_STAGED;
    return TC_OK;
}

void tc_blocks_free(tc_blocks_t *b)
{
    if (b->mode == TC_BLOCKS_MAPPED)
        tc_datatype_map_free(&b->map);
    if (b->cursors != &b->one)
        free(b->cursors);
    if (b->prefix != b->prefix_one)
        free(b->prefix);
    free(b->staged);
    tc_blocks_none(b);
}

static inline tc_dt_cursor_t *tc_blocks_cursor(tc_blocks_t *b, int j, size_t off)
{
    tc_dt_cursor_t *c = b->n > 1 ? &b->cursors[j] : &b->one;
    if (off == 0)
        tc_dt_cursor_init(c, &b->map, tc_blocks_origin(b, j));
    return c;
}

void tc_blocks_read(tc_blocks_t *b, int j, size_t off, char *dst, size_t len)
{
    if (b->mode == TC_BLOCKS_MAPPED)
        tc_dt_cursor_gather(tc_blocks_cursor(b, j, off), dst, len);
    else
        memcpy(dst, tc_blocks_data(b, j) + off, len);
}

void tc_blocks_write(tc_blocks_t *b, int j, size_t off, const char *src, size_t len)
{
    if (b->mode == TC_BLOCKS_MAPPED)
        tc_dt_cursor_scatter(tc_blocks_cursor(b, j, off), src, len);
    else
        memcpy((char *)(uintptr_t)tc_blocks_data(b, j) + off, src, len);
}

tc_err_t tc_blocks_finish(tc_blocks_t *b, int skip, MPI_Comm comm)
{
    int rc = MPI_SUCCESS;
    if (b->mode != TC_BLOCKS_STAGED)
        return MPI_SUCCESS;
    for (int j = 0; j < b->n && rc == MPI_SUCCESS; j++) {
        size_t len = tc_blocks_bytes(b, j);
        if (j != skip && len > 0)
            rc = tc_blocks_pack(true, tc_blocks_origin(b, j), tc_blocks_count(b, j), b->type,
                                b->staged + b->prefix[j], len, comm);
    }
    return rc;
}

void tc_blocks_copy(tc_blocks_t *dst, int dj, tc_blocks_t *src, int sj, size_t nbytes)
{
    if (dst->mode != TC_BLOCKS_MAPPED && src->mode != TC_BLOCKS_MAPPED) {
        memmove((char *)(uintptr_t)tc_blocks_data(dst, dj), tc_blocks_data(src, sj), nbytes);
        return;
    }
    char bounce[4096];
    for (size_t off = 0; off < nbytes; off += sizeof bounce) {
        size_t len = nbytes - off < sizeof bounce ? nbytes - off : sizeof bounce;
        tc_blocks_read(src, sj, off, bounce, len);
        tc_blocks_write(dst, dj, off, bounce, len);
    }
}

char *tc_blocks_span(const void *buf, size_t count, MPI_Datatype type, size_t need)
{
    MPI_Aint lb, ext, tlb, text;
    if (need == 0)
        return (char *)(uintptr_t)buf;
    if (count == 0 || PMPI_Type_get_extent(type, &lb, &ext) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(type, &tlb, &text) != MPI_SUCCESS)
        return NULL;
    const size_t step = (size_t)(ext < 0 ? -ext : ext);
    if ((count - 1) * step + (size_t)text < need)
        return NULL;
    const MPI_Aint first = ext < 0 ? (MPI_Aint)(count - 1) * ext : 0;
    return (char *)((uintptr_t)buf + (uintptr_t)(first + tlb));
}

void tc_blocks_direct_read_one(void *state, int j, size_t off, char *dst, size_t n)
{
    (void)j;
    memcpy(dst, ((const tc_blocks_direct_t *)state)->one + off, n);
}
void tc_blocks_direct_write_one(void *state, int j, size_t off, const char *src, size_t n)
{
    (void)j;
    memcpy((char *)(uintptr_t)((const tc_blocks_direct_t *)state)->one + off, src, n);
}
void tc_blocks_direct_read_all(void *state, int j, size_t off, char *dst, size_t n)
{
    memcpy(dst, tc_blocks_direct_at(state, j) + off, n);
}
void tc_blocks_direct_write_all(void *state, int j, size_t off, const char *src, size_t n)
{
    memcpy(tc_blocks_direct_at(state, j) + off, src, n);
}
