/* One fuzz input through each topology-file parser (fuzz_hier_parsers.c);
 * shared by the libFuzzer harness and the plain corpus replay driver. */
#ifndef TC_FUZZ_HIER_PARSERS_H
#define TC_FUZZ_HIER_PARSERS_H

#include <stddef.h>
#include <stdint.h>

void tc_fuzz_netfile_one(const uint8_t *data, size_t size);
void tc_fuzz_locfile_one(const uint8_t *data, size_t size);

#endif /* TC_FUZZ_HIER_PARSERS_H */
