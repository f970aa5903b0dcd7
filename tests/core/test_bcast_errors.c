/* TC_Bcast with bad arguments, and on intercommunicators.
 *
 * Bad input (every rank passes the same bad argument, as MPI requires of a
 * collective): negative count -> MPI_ERR_COUNT, root -1 / size / size+7 ->
 * MPI_ERR_ROOT, MPI_DATATYPE_NULL -> MPI_ERR_TYPE, through the
 * communicator's error handler (MPI_ERRORS_RETURN: check the class of the
 * return value; a counting handler: check it ran once per bad call, with the
 * right communicator and class). MPI_COMM_NULL -> MPI_ERR_COMM through
 * MPI_COMM_WORLD's handler. After each bad call no buffer may have changed,
 * and a correct broadcast must still work. Covered on a communicator whose
 * first TC_ call is the bad one (no context yet) and on ones already used.
 *
 * Intercommunicator (np >= 2; world split into a low and a high half): the
 * root passes MPI_ROOT, the rest of its group MPI_PROC_NULL, the other group
 * the root's rank; both directions, several roots and sizes, contiguous and
 * contiguous -> strided; compared with the pattern and with PMPI_Bcast.
 */
#define _POSIX_C_SOURCE 200809L

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <topocoll.h>

#include "tc_test_common.h"

/* What the counting error handler saw. */
static int handler_calls;
static int handler_last_class;
static MPI_Comm handler_last_comm = MPI_COMM_NULL;

static void counting_handler(MPI_Comm *comm, int *code, ...)
{
    handler_calls++;
    MPI_Error_class(*code, &handler_last_class);
    handler_last_comm = *comm;
}

static const char *class_name(int cls)
{
    switch (cls) {
    case MPI_SUCCESS:
        return "MPI_SUCCESS";
    case MPI_ERR_COUNT:
        return "MPI_ERR_COUNT";
    case MPI_ERR_ROOT:
        return "MPI_ERR_ROOT";
    case MPI_ERR_TYPE:
        return "MPI_ERR_TYPE";
    case MPI_ERR_COMM:
        return "MPI_ERR_COMM";
    case MPI_ERR_BUFFER:
        return "MPI_ERR_BUFFER";
    case MPI_ERR_ARG:
        return "MPI_ERR_ARG";
    default:
        return "another class";
    }
}

enum { NELEM = 4096 }; /* ints in the test buffer: larger than a page */

/* Buffer image of the bad-call tests: the pattern at rank @p root (as if it
 * were the root of the call), the sentinel elsewhere. */
static void fill(int *buf, const tt_layout_t *l, int me, int root, uint64_t id)
{
    if (me == root)
        tt_image_build(buf, l, root, id);
    else
        memset(buf, TT_SENTINEL, l->bytes);
}

/* A correct broadcast on @p comm still works (after bad calls). */
static void good_bcast(MPI_Comm comm, const char *cname, int root, uint64_t id)
{
    tt_layout_t l;
    int *buf, *expect, me, rc;
    char msg[400];

    MPI_Comm_rank(comm, &me);
    tt_layout_make(&l, TT_LAYOUT_INTS, NELEM * sizeof(int));
    buf = tt_xmalloc(l.bytes);
    expect = tt_xmalloc(l.bytes);
    tt_image_build(expect, &l, root, id);
    fill(buf, &l, me, root, id);
    rc = TC_Bcast(buf, l.count, MPI_INT, root, comm);
    if (rc != MPI_SUCCESS)
        tt_fail("comm=%s: correct TC_Bcast (root %d, %d ints) returned %d", cname, root, l.count,
                rc);
    else if (tt_image_compare(buf, expect, &l, msg, sizeof(msg)))
        tt_fail("comm=%s: correct TC_Bcast (root %d, %d ints): %s", cname, root, l.count, msg);
    free(buf);
    free(expect);
    tt_case_done();
}

/* One bad call: expect class @p want, the handler count to grow by one when
 * @p counting, and no byte of the buffer to change. */
static void bad_call(MPI_Comm comm, MPI_Comm handler_comm, const char *cname, const char *what,
                     int count, MPI_Datatype type, int root, int want, int counting, uint64_t id)
{
    tt_layout_t l;
    int *buf, *before, me = 0, rc, cls = -1, calls0 = handler_calls;
    const int data_root = 0; /* whose buffer holds data */
    char msg[400];

    if (comm != MPI_COMM_NULL)
        MPI_Comm_rank(comm, &me);
    tt_layout_make(&l, TT_LAYOUT_INTS, NELEM * sizeof(int));
    buf = tt_xmalloc(l.bytes);
    before = tt_xmalloc(l.bytes);
    fill(before, &l, me, data_root, id);
    memcpy(buf, before, l.bytes);

    rc = TC_Bcast(buf, count, type, root, comm);
    MPI_Error_class(rc, &cls);
    if (cls != want)
        tt_fail("comm=%s %s: TC_Bcast returned class %d (%s), expected %s", cname, what, cls,
                class_name(cls), class_name(want));
    if (tt_image_compare(buf, before, &l, msg, sizeof(msg)))
        tt_fail("comm=%s %s: the buffer changed although the call failed: %s", cname, what, msg);
    if (counting) {
        if (handler_calls != calls0 + 1)
            tt_fail("comm=%s %s: error handler ran %d times, expected once", cname, what,
                    handler_calls - calls0);
        else if (handler_last_class != want)
            tt_fail("comm=%s %s: error handler got class %d (%s), expected %s", cname, what,
                    handler_last_class, class_name(handler_last_class), class_name(want));
        else if (handler_last_comm != handler_comm)
            tt_fail("comm=%s %s: error handler was called on another communicator", cname, what);
    } else if (handler_calls != calls0) {
        tt_fail("comm=%s %s: the counting handler ran although it is not installed", cname, what);
    }
    free(buf);
    free(before);
    tt_case_done();
}

/* All bad-argument calls on @p comm (its handler already set). */
static void bad_calls(MPI_Comm comm, const char *cname, int counting, uint64_t id)
{
    int p;

    MPI_Comm_size(comm, &p);
    bad_call(comm, comm, cname, "count=-1", -1, MPI_INT, 0, MPI_ERR_COUNT, counting, id + 1);
    bad_call(comm, comm, cname, "count=INT_MIN", INT_MIN, MPI_INT, 0, MPI_ERR_COUNT, counting,
             id + 2);
    bad_call(comm, comm, cname, "root=-1", NELEM, MPI_INT, -1, MPI_ERR_ROOT, counting, id + 3);
    bad_call(comm, comm, cname, "root=size", NELEM, MPI_INT, p, MPI_ERR_ROOT, counting, id + 4);
    bad_call(comm, comm, cname, "root=size+7", NELEM, MPI_INT, p + 7, MPI_ERR_ROOT, counting,
             id + 5);
    bad_call(comm, comm, cname, "datatype=MPI_DATATYPE_NULL", NELEM, MPI_DATATYPE_NULL, 0,
             MPI_ERR_TYPE, counting, id + 6);
}

static void test_bad_input(void)
{
    MPI_Errhandler counting;
    MPI_Comm fresh, used, split;

    MPI_Comm_create_errhandler(counting_handler, &counting);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* First TC_ call on this communicator is a bad one: no context yet. */
    MPI_Comm_dup(MPI_COMM_WORLD, &fresh);
    MPI_Comm_set_errhandler(fresh, MPI_ERRORS_RETURN);
    bad_calls(fresh, "fresh dup (errors return)", 0, 100);
    good_bcast(fresh, "fresh dup (errors return)", tt_size - 1, 110);
    bad_calls(fresh, "fresh dup after a good call", 0, 120);
    good_bcast(fresh, "fresh dup after a good call", 0, 130);
    MPI_Comm_free(&fresh);

    /* World (context created by a good call first). */
    good_bcast(MPI_COMM_WORLD, "world", 0, 200);
    bad_calls(MPI_COMM_WORLD, "world (errors return)", 0, 210);
    good_bcast(MPI_COMM_WORLD, "world", tt_size / 2, 220);

    /* Counting handler on a used dup and on a fresh split. */
    MPI_Comm_dup(MPI_COMM_WORLD, &used);
    MPI_Comm_set_errhandler(used, counting);
    good_bcast(used, "dup (counting handler)", 0, 300);
    bad_calls(used, "dup (counting handler)", 1, 310);
    good_bcast(used, "dup (counting handler)", tt_size - 1, 320);
    MPI_Comm_free(&used);

    MPI_Comm_split(MPI_COMM_WORLD, tt_rank % 2, -tt_rank, &split);
    MPI_Comm_set_errhandler(split, counting);
    bad_calls(split, "split (counting handler, fresh)", 1, 400);
    good_bcast(split, "split (counting handler)", 0, 410);
    MPI_Comm_free(&split);

    /* MPI_COMM_NULL: MPI_COMM_WORLD's handler, first the counting one. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, counting);
    bad_call(MPI_COMM_NULL, MPI_COMM_WORLD, "MPI_COMM_NULL (world: counting handler)",
             "comm=MPI_COMM_NULL", NELEM, MPI_INT, 0, MPI_ERR_COMM, 1, 500);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    bad_call(MPI_COMM_NULL, MPI_COMM_WORLD, "MPI_COMM_NULL (world: errors return)",
             "comm=MPI_COMM_NULL", NELEM, MPI_INT, 0, MPI_ERR_COMM, 0, 510);
    good_bcast(MPI_COMM_WORLD, "world after MPI_COMM_NULL", 0, 520);
    MPI_Errhandler_free(&counting);
}

/* One intercommunicator broadcast from local rank @p root of group @p from. */
static void inter_case(MPI_Comm inter, int my_group, int from, int root, tt_layout_kind_t rkind,
                       tt_layout_kind_t okind, size_t target, uint64_t id)
{
    int me, arg_root, rc, is_root, receives;
    tt_layout_t l;
    unsigned char *buf, *expect, *buf2;
    char what[300], msg[400];

    MPI_Comm_rank(inter, &me);
    is_root = my_group == from && me == root;
    receives = my_group != from;
    arg_root = receives ? root : (is_root ? MPI_ROOT : MPI_PROC_NULL);
    tt_layout_make(&l, is_root ? rkind : okind, target);
    snprintf(what, sizeof(what),
             "intercomm from group %s root %d: bytes=%zu %s x %d (here: %s, root arg %d)",
             from ? "high" : "low", root, target, tt_layout_name(l.kind), l.count,
             is_root    ? "root"
             : receives ? "receiver"
                        : "root's group, not root",
             arg_root);
    buf = tt_xmalloc(l.bytes);
    expect = tt_xmalloc(l.bytes);
    buf2 = tt_xmalloc(l.bytes);
    /* The root keeps its data; the root's group gets nothing (sentinel). */
    if (is_root || receives)
        tt_image_build(expect, &l, root + 1000 * from, id);
    else
        memset(expect, TT_SENTINEL, l.bytes);
    if (is_root) {
        memcpy(buf, expect, l.bytes);
        memcpy(buf2, expect, l.bytes);
    } else {
        memset(buf, TT_SENTINEL, l.bytes);
        memset(buf2, TT_SENTINEL, l.bytes);
    }
    rc = TC_Bcast(buf, l.count, l.type, arg_root, inter);
    if (rc != MPI_SUCCESS)
        tt_fail("%s: TC_Bcast returned %d", what, rc);
    else if (tt_image_compare(buf, expect, &l, msg, sizeof(msg)))
        tt_fail("%s: TC_Bcast: %s", what, msg);
    rc = PMPI_Bcast(buf2, l.count, l.type, arg_root, inter);
    if (rc != MPI_SUCCESS)
        tt_fail("%s: PMPI_Bcast returned %d", what, rc);
    else if (tt_image_compare(buf2, expect, &l, msg, sizeof(msg)))
        tt_fail("%s: PMPI_Bcast (second opinion) disagrees with the pattern: %s", what, msg);
    if (tt_image_compare(buf, buf2, &l, msg, sizeof(msg)))
        tt_fail("%s: TC_Bcast differs from PMPI_Bcast: %s", what, msg);
    free(buf);
    free(expect);
    free(buf2);
    tt_layout_free(&l);
    tt_case_done();
}

static void test_intercomm(size_t f, size_t s)
{
    int half = tt_size / 2, low = tt_rank < half;
    int my_group = low ? 0 : 1, lsize, rsize;
    MPI_Comm local, inter;
    size_t sizes[] = {0, 1, f + 1, s * f + 1, 3 * s * f + 5};
    uint64_t id = 10000;

    if (tt_size < 2) {
        if (tt_rank == 0)
            printf("test_bcast_errors: intercommunicator part needs np >= 2, not run\n");
        return;
    }
    MPI_Comm_split(MPI_COMM_WORLD, my_group, tt_rank, &local);
    /* Local leader 0 of each half; remote leader = first world rank of the
     * other half. */
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? half : 0, 77, &inter);
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    for (int from = 0; from < 2; from++) {
        int from_size = my_group == from ? lsize : rsize;
        int roots[2] = {0, from_size - 1};
        for (int ri = 0; ri < (from_size > 1 ? 2 : 1); ri++)
            for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
                inter_case(inter, my_group, from, roots[ri], TT_LAYOUT_BYTES, TT_LAYOUT_BYTES,
                           sizes[si], id++);
                inter_case(inter, my_group, from, roots[ri], TT_LAYOUT_DOUBLES,
                           TT_LAYOUT_STRIDED_DOUBLES, sizes[si], id++);
            }
    }
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
}

int main(int argc, char **argv)
{
    size_t f, s;

    tt_init(&argc, &argv, "test_bcast_errors", 8192, 4, &f, &s);
    tt_types_create();
    test_bad_input();
    test_intercomm(f, s);
    tt_types_free();
    return tt_finish();
}
