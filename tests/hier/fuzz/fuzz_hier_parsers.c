/* libFuzzer harness for the topology-file parsers (src/hier/netfile.c and
 * src/hier/locfile.c). The input is the file's text; every successful parse
 * is checked for invariants (ids in range, every node found by lookup), so a
 * violation aborts like a crash.
 *
 * Build and run (clang 14 + libclang-rt-14-dev), from the repository root:
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -Isrc \
 *       -DTC_FUZZ_TARGET_NETFILE tests/hier/fuzz/fuzz_hier_parsers.c src/hier/netfile.c \
 *       src/hier/locfile.c -o /tmp/fuzz_netfile
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -Isrc \
 *       -DTC_FUZZ_TARGET_LOCFILE tests/hier/fuzz/fuzz_hier_parsers.c src/hier/netfile.c \
 *       src/hier/locfile.c -o /tmp/fuzz_locfile
 *   mkdir -p /tmp/fz-net && /tmp/fuzz_netfile -max_total_time=300 -max_len=4096 \
 *       -dict=tests/hier/fuzz/netfile.dict /tmp/fz-net tests/hier/fuzz/corpus-netfile
 *   mkdir -p /tmp/fz-loc && /tmp/fuzz_locfile -max_total_time=300 -max_len=4096 \
 *       -dict=tests/hier/fuzz/locfile.dict /tmp/fz-loc tests/hier/fuzz/corpus-locfile
 *
 * or through CMake (C compiler must be clang; builds only these targets):
 *
 *   CC=clang cmake -S . -B /tmp/build-fuzz -DTOPOCOLL_MPI=openmpi -DTOPOCOLL_FUZZ=ON
 *   cmake --build /tmp/build-fuzz --target fuzz_netfile fuzz_locfile
 *
 * To refresh a corpus after a run, minimise into an empty directory and copy
 * it back (keep it under 200 files / 200 KiB):
 *
 *   mkdir /tmp/min && /tmp/fuzz_netfile -merge=1 /tmp/min /tmp/fz-net \
 *       tests/hier/fuzz/corpus-netfile
 *
 * Without libFuzzer, the test fuzz_replay (replay.c) runs every corpus file
 * through the same functions under ctest.
 */
#include "fuzz_hier_parsers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hier/locfile.h"
#include "hier/netfile.h"

#define FUZZ_ASSERT(cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: invariant violated: %s\n", __FILE__, __LINE__, #cond);         \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

void tc_fuzz_netfile_one(const uint8_t *data, size_t size)
{
    tc_hier_netfile_t nf;
    char err[256];
    err[0] = '\0';
    /* Tiny message buffer on odd sizes: truncation paths too. */
    size_t errlen = (size & 1) ? 5 : sizeof(err);
    if (tc_hier_netfile_parse((const char *)data, size, "fuzz", &nf, err, errlen) != 0) {
        FUZZ_ASSERT(err[0] != '\0');
        FUZZ_ASSERT(tc_hier_netfile_nnodes(&nf) == 0);
        tc_hier_netfile_free(&nf);
        return;
    }
    FUZZ_ASSERT(nf.depth >= 0 && nf.depth <= TC_HIER_MAX_SWITCH);
    FUZZ_ASSERT((nf.depth == 0) == (tc_hier_netfile_nnodes(&nf) == 0));
    for (size_t i = 0; i < nf.nodes.n; i++) {
        int64_t sw[TC_HIER_MAX_SWITCH];
        int depth = -1;
        FUZZ_ASSERT(tc_hier_netfile_lookup(&nf, nf.nodes.strs[i], sw, &depth, err, sizeof(err)) ==
                    0);
        FUZZ_ASSERT(depth == nf.depth);
        for (int d = 0; d < TC_HIER_MAX_SWITCH; d++) {
            if (d < depth)
                FUZZ_ASSERT(sw[d] >= 0 && sw[d] < nf.nswitch[d]);
            else
                FUZZ_ASSERT(sw[d] == TC_LOC_UNKNOWN);
        }
    }
    int64_t sw[TC_HIER_MAX_SWITCH];
    int depth;
    /* A name can never hold a space, so this lookup must fail. */
    FUZZ_ASSERT(tc_err_kind(tc_hier_netfile_lookup(&nf, "no such node", sw, &depth, err,
                                                   sizeof(err))) == TC_ERR_NOTFOUND);
    tc_hier_netfile_free(&nf);
}

void tc_fuzz_locfile_one(const uint8_t *data, size_t size)
{
    static const int sizes[] = {1, 8, 108};
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        int p = sizes[k];
        tc_hier_loc_t *locs = malloc((size_t)p * sizeof(*locs));
        char err[256];
        err[0] = '\0';
        FUZZ_ASSERT(locs != NULL);
        if (tc_hier_locfile_parse((const char *)data, size, "fuzz", p, locs, err, sizeof(err)) ==
            0) {
            for (int r = 0; r < p; r++)
                for (int l = 0; l < TC_LEVEL_LAST; l++)
                    FUZZ_ASSERT(locs[r].id[l] >= 0 || locs[r].id[l] == TC_LOC_UNKNOWN);
        } else {
            FUZZ_ASSERT(err[0] != '\0');
        }
        free(locs);
    }
}

#if defined(TC_FUZZ_TARGET_NETFILE) || defined(TC_FUZZ_TARGET_LOCFILE)
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
#ifdef TC_FUZZ_TARGET_NETFILE
    tc_fuzz_netfile_one(data, size);
#else
    tc_fuzz_locfile_one(data, size);
#endif
    return 0;
}
#endif
