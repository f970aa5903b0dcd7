/* Corpus replay without libFuzzer: every file of the fuzz corpora (and the
 * topology files in tests/data) goes through the same checks as in the
 * fuzzer (fuzz_hier_parsers.c); a crash, sanitizer report or violated
 * invariant fails the test. Directories come from TC_FUZZ_DIR and
 * TC_TEST_DATA_DIR, or default to the ones next to this file. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_hier_parsers.h"
#include "hier/netfile.h"

static int replay_dir(const char *dir, const char *only_prefix,
                      void (*one)(const uint8_t *, size_t))
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        fprintf(stderr, "cannot open %s\n", dir);
        return -1;
    }
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (only_prefix && strncmp(e->d_name, only_prefix, strlen(only_prefix)) != 0)
            continue;
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        char *buf;
        size_t len;
        if (tc_hier_file_read(path, &buf, &len) != 0) {
            fprintf(stderr, "cannot read %s\n", path);
            closedir(d);
            return -1;
        }
        one((const uint8_t *)buf, len);
        free(buf);
        n++;
    }
    closedir(d);
    return n;
}

int main(void)
{
    char fuzz_dir[4096], data_dir[4096], dir[4200];
#ifdef TC_FUZZ_DIR
    snprintf(fuzz_dir, sizeof(fuzz_dir), "%s", TC_FUZZ_DIR);
#else
    snprintf(fuzz_dir, sizeof(fuzz_dir), "%s", __FILE__);
    *strrchr(fuzz_dir, '/') = '\0';
#endif
#ifdef TC_TEST_DATA_DIR
    snprintf(data_dir, sizeof(data_dir), "%s", TC_TEST_DATA_DIR);
#else
    snprintf(data_dir, sizeof(data_dir), "%s/../data", fuzz_dir);
#endif
    int total = 0, n;
    snprintf(dir, sizeof(dir), "%s/corpus-netfile", fuzz_dir);
    if ((n = replay_dir(dir, NULL, tc_fuzz_netfile_one)) < 1)
        return 1;
    total += n;
    snprintf(dir, sizeof(dir), "%s/corpus-locfile", fuzz_dir);
    if ((n = replay_dir(dir, NULL, tc_fuzz_locfile_one)) < 1)
        return 1;
    total += n;
    if ((n = replay_dir(data_dir, "netfile", tc_fuzz_netfile_one)) < 0)
        return 1;
    total += n;
    if ((n = replay_dir(data_dir, "locfile", tc_fuzz_locfile_one)) < 0)
        return 1;
    total += n;
    printf("fuzz_replay: %d inputs replayed without a fault\n", total);
    return 0;
}
