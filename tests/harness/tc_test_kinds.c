/* Datatype kinds of the gathering collectives' tests; see tc_test_kinds.h. */
#include "tc_test_kinds.h"

#include <string.h>

#include "tc_test_common.h"

tt_kind_t tt_kinds[TT_KIND_LAST] = {
    [TT_KIND_BYTE] = {"byte", TT_FAM_BYTES, 1, 1, {0, 0}, 1, MPI_DATATYPE_NULL},
    [TT_KIND_INT] = {"int", TT_FAM_INTS, 2, 1, {0, 0}, 4, MPI_DATATYPE_NULL},
    [TT_KIND_STRIDED] = {"int/8", TT_FAM_INTS, 2, 1, {0, 0}, 8, MPI_DATATYPE_NULL},
    [TT_KIND_VEC] = {"vector", TT_FAM_INTS, 1, 2, {0, 12}, 16, MPI_DATATYPE_NULL},
    [TT_KIND_PAIR] = {"contig2", TT_FAM_INTS, 1, 2, {0, 4}, 8, MPI_DATATYPE_NULL},
    [TT_KIND_SUB] = {"subarray", TT_FAM_INTS, 1, 2, {4, 8}, 16, MPI_DATATYPE_NULL},
    [TT_KIND_SID] = {"struct", TT_FAM_PAIRS, 1, 2, {0, 8}, 16, MPI_DATATYPE_NULL},
    [TT_KIND_SIDP] = {"struct-packed", TT_FAM_PAIRS, 1, 2, {0, 4}, 12, MPI_DATATYPE_NULL},
};
const int tt_family_kinds[TT_FAM_LAST][5] = {
    {TT_KIND_BYTE, -1},
    {TT_KIND_INT, TT_KIND_STRIDED, TT_KIND_VEC, TT_KIND_PAIR, TT_KIND_SUB},
    {TT_KIND_SID, TT_KIND_SIDP, -1}};
const int tt_family_nkinds[TT_FAM_LAST] = {1, 5, 2};
const int tt_family_unit_bytes[TT_FAM_LAST] = {1, 8, 12};

void tt_kinds_create(void)
{
    MPI_Datatype t;
    tt_kinds[TT_KIND_BYTE].type = MPI_BYTE;
    tt_kinds[TT_KIND_INT].type = MPI_INT;
    MPI_Type_create_resized(MPI_INT, 0, 8, &tt_kinds[TT_KIND_STRIDED].type);
    MPI_Type_vector(2, 1, 3, MPI_INT, &tt_kinds[TT_KIND_VEC].type);
    MPI_Type_contiguous(2, MPI_INT, &tt_kinds[TT_KIND_PAIR].type);
    int sizes[1] = {4}, sub[1] = {2}, start[1] = {1};
    MPI_Type_create_subarray(1, sizes, sub, start, MPI_ORDER_C, MPI_INT,
                             &tt_kinds[TT_KIND_SUB].type);
    int bl[2] = {1, 1};
    MPI_Datatype tt[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Aint d1[2] = {0, 8}, d2[2] = {0, 4};
    MPI_Type_create_struct(2, bl, d1, tt, &t);
    MPI_Type_create_resized(t, 0, 16, &tt_kinds[TT_KIND_SID].type);
    MPI_Type_free(&t);
    MPI_Type_create_struct(2, bl, d2, tt, &t);
    MPI_Type_create_resized(t, 0, 12, &tt_kinds[TT_KIND_SIDP].type);
    MPI_Type_free(&t);
    for (int k = TT_KIND_STRIDED; k < TT_KIND_LAST; k++)
        MPI_Type_commit(&tt_kinds[k].type);
}

void tt_kinds_free(void)
{
    for (int k = TT_KIND_STRIDED; k < TT_KIND_LAST; k++)
        MPI_Type_free(&tt_kinds[k].type);
}

uint32_t tt_kind_mix(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t x = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full ^
                 (c + 1) * 0x165667B19E3779F9ull;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    return (uint32_t)x;
}

void tt_kind_prim_write(int family, uint64_t cid, uint64_t b, size_t k, char *p)
{
    uint32_t m = tt_kind_mix(cid, b, k);
    if (family == TT_FAM_BYTES) {
        unsigned char c = (unsigned char)m;
        *p = (char)(c == TT_SENTINEL ? 0x5A : c);
    } else if (family == TT_FAM_INTS || k % 2 == 0) {
        int32_t v = (int32_t)(m | 1u); /* no byte pattern of all sentinels */
        memcpy(p, &v, 4);
    } else {
        double v = (double)(m % 1000003) + 0.25;
        memcpy(p, &v, 8);
    }
}

void tt_kind_block_write(const tt_kind_t *kd, uint64_t cid, uint64_t b, int count, char *base)
{
    size_t k = 0;
    for (int e = 0; e < count; e++)
        for (int i = 0; i < kd->nprim; i++, k++)
            tt_kind_prim_write(kd->family, cid, b, k,
                               base + (size_t)e * (size_t)kd->ext + kd->off[i]);
}

size_t tt_kind_span(const tt_kind_t *kd, int count)
{
    return count ? (size_t)count * (size_t)kd->ext : 0;
}
