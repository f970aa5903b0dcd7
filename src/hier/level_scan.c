/* Exclusive scan among the members of a group (level_scan.h). */
#include "level_scan.h"

#include <stdbool.h>
#include <string.h>

/* Pieces of at most 1 GiB: every count fits an int. */
#define TC_HIER_SCAN_PIECE ((size_t)1 << 30)

static tc_err_t tc_hier_scan_exchange(const char *sbuf, char *rbuf, size_t len, int peer,
                                      MPI_Comm comm, int tag, const tc_wait_info_t *wait)
{
    for (size_t off = 0; off < len; off += TC_HIER_SCAN_PIECE) {
        const int n = (int)(len - off < TC_HIER_SCAN_PIECE ? len - off : TC_HIER_SCAN_PIECE);
        tc_err_t rc = tc_wait_mpi_sendrecv(sbuf + off, n, peer, rbuf + off, n, peer, tag, comm,
                                           wait, "hier scan: exchange between the leaders");
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return TC_OK;
}

tc_err_t tc_hier_exscan_group(const void *total, void *result, void *scratch, size_t nelem,
                              const tc_redop_t *op, const int *members, int nmembers, int my_index,
                              MPI_Comm comm, int tag, const tc_wait_info_t *wait)
{
    const size_t len = nelem * op->elem;
    char *part = scratch, *tmp = (char *)scratch + len;
    bool have = false;
    if (len == 0 || nmembers < 2)
        return TC_OK;
    memcpy(part, total, len);
    for (int mask = 1; mask < nmembers; mask <<= 1) {
        const int peer = my_index ^ mask;
        if (peer >= nmembers)
            continue; /* the partner's block is empty: nothing to add */
        tc_err_t rc = tc_hier_scan_exchange(part, tmp, len, members[peer], comm, tag, wait);
        if (rc != TC_OK)
            return rc;
        if (peer < my_index) {
            /* tmp: the block just below everything combined so far. */
            if (have) {
                tc_redop_apply(op, tmp, result, nelem); /* result = tmp op result */
            } else {
                memcpy(result, tmp, len);
                have = true;
            }
            tc_redop_apply(op, tmp, part, nelem); /* part = tmp op part */
        } else {
            tc_redop_apply(op, part, tmp, nelem); /* tmp = part op tmp */
            char *t = part;
            part = tmp;
            tmp = t;
        }
    }
    return TC_OK;
}
