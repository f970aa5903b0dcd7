/* Checks a parameters file written by tools/topocoll-logp (tests/tools/CMakeLists.txt):
 *
 *   test_logp_file FILE NP [LEVEL]
 *
 * LEVEL may be "shm": only the shm row (flags in shared memory) was measured.
 * Without LEVEL every level and the shm row were asked for: the shm row must
 * be measured (the tests run on one machine, so two ranks share a node).
 *
 *  - the library's loader (tc_logp_table_load_file) accepts it;
 *  - an independent reading of the text agrees with what the loader got, line
 *    by line: the five numbers of every level line, finite and >= 0;
 *  - the header names the tool and np=NP; at least one level is marked
 *    "# measured" (exactly LEVEL when given), and every other level still
 *    has its built-in default (tc_logp_table_defaults);
 *  - a measured level is sane: o_s, o_r, g and G > 0 (a real MPI call costs
 *    something, the burst and the large messages take time);
 *  - E, rdv, w (written by the tool on every line): E = 0 (no step found)
 *    or within the scan's sizes (512 B .. 1 MiB) with rdv >= 0; w as the
 *    default;
 *  - X, the duplex factor (the ninth column, on every line): a measured
 *    level's lies in [1, 2] (the tool clamps the measured ratio; the loader
 *    accepts nothing else); an unmeasured level's is its default;
 *  - an oversubscribed run (header "oversubscribed", no TC_LOGP_FILE in the
 *    tests): the measured levels keep every default but w (X too), and w > 0 (the
 *    ring hop with every rank active exceeds the unloaded one-way time);
 *  - the shm row is listed once; measured, it is sane for a flag: o_s > 0
 *    (the library call costs something), L + o_r > 0 (a flag takes time to
 *    cross), g > 0, G > 0; unmeasured, it keeps its default.
 * No upper bound on any measured time or rate: these are measurements on
 * whatever machine runs the tests, and a busy one (a process of the pair
 * descheduled) once measured a 0.08 us flag wait at 2598 us. The tool
 * reports such spreads itself (a warning line); the file only has to be
 * well formed, finite, positive where a cost must be, and read back.
 *  - round trip: tc_logp_table_write of what was loaded reads back with the
 *    same numbers.
 * No MPI. Exit 0 when all hold, 1 otherwise (every failure is printed).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/logp.h"

static int failures;

static void fail(const char *what, const char *detail)
{
    fprintf(stderr, "FAIL: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    failures++;
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: test_logp_file FILE NP [LEVEL]\n");
        return 2;
    }
    const char *path = argv[1];
    int np = atoi(argv[2]);
    int want_shm = argc == 4 && !strcmp(argv[3], TC_LOGP_SHM_NAME);
    int want_level = argc == 4 && !want_shm ? tc_model_level_parse(argv[3]) : -1;
    if (argc == 4 && !want_shm && want_level < 0) {
        fprintf(stderr, "test_logp_file: unknown level %s\n", argv[3]);
        return 2;
    }

    tc_logp_table_t loaded, defaults;
    char err[512];
    tc_logp_table_defaults(&defaults);
    tc_logp_table_defaults(&loaded);
    if (tc_logp_table_load_file(&loaded, path, err, sizeof err) != 0) {
        fail("tc_logp_table_load_file", err);
        return 1;
    }

    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return 1;
    }
    char line[1024], expect_np[32];
    int seen[TC_MODEL_LEVEL_LAST] = {0}, measured[TC_MODEL_LEVEL_LAST] = {0};
    int header_ok = 0, nmeasured = 0, seen_shm = 0, measured_shm = 0, oversub = 0;
    snprintf(expect_np, sizeof expect_np, "np=%d,", np);
    while (fgets(line, sizeof line, f)) {
        char word[64];
        if (line[0] == '#') {
            if (strstr(line, "# origin: topocoll-logp") == line && strstr(line, expect_np))
                header_ok = 1;
            if (strstr(line, "# origin: topocoll-logp") == line && strstr(line, "oversubscribed"))
                oversub = 1;
            continue;
        }
        if (sscanf(line, "%63s", word) != 1)
            continue;
        int is_shm = !strcmp(word, TC_LOGP_SHM_NAME);
        int l = tc_model_level_parse(word);
        if (l < 0 && !is_shm) {
            fail("unknown level line", line);
            continue;
        }
        if (is_shm)
            seen_shm++;
        else
            seen[l]++;
        /* The nine numbers, read without the library's parser. */
        double v[9];
        char *p = line + strcspn(line, " \t");
        for (int k = 0; k < 9; k++) {
            char *end;
            v[k] = strtod(p, &end);
            if (end == p || !isfinite(v[k]) || v[k] < 0) {
                fail("bad number on line", line);
                break;
            }
            p = end;
        }
        const tc_logp_t *row = is_shm ? &loaded.shm : &loaded.level[l];
        const double got[9] = {row->L, row->o_s, row->o_r, row->g, row->G,
                               row->E, row->rdv, row->w,   row->X};
        for (int k = 0; k < 9; k++)
            if (fabs(v[k] - got[k]) > 1e-12 * fabs(v[k]))
                fail("the loader and the text disagree on", word);
        if (strstr(line, "# measured")) {
            if (is_shm)
                measured_shm = 1;
            else
                measured[l] = 1;
            nmeasured++;
        }
    }
    fclose(f);

    if (!header_ok)
        fail("no '# origin: topocoll-logp, np=N,' header for this np", NULL);
    if (nmeasured == 0)
        fail("no level marked '# measured'", NULL);
    if (want_level >= 0 && !measured[want_level])
        fail("level not measured", argv[3]);
    for (int l = 0; l < TC_MODEL_LEVEL_LAST; l++) {
        const char *name = tc_model_level_name((tc_model_level_t)l);
        const tc_logp_t *x = &loaded.level[l], *d = &defaults.level[l];
        if (seen[l] != 1)
            fail("level not listed exactly once", name);
        if (want_level >= 0 && measured[l] && l != want_level)
            fail("a level other than the one asked for was measured", name);
        if (!measured[l]) {
            if (x->L != d->L || x->o_s != d->o_s || x->o_r != d->o_r || x->g != d->g ||
                x->G != d->G || x->X != d->X)
                fail("an unmeasured level lost its default", name);
            continue;
        }
        printf("%s: L %g o_s %g o_r %g g %g G %g E %g rdv %g w %g X %g\n", name, x->L, x->o_s,
               x->o_r, x->g, x->G, x->E, x->rdv, x->w, x->X);
        if (oversub) {
            if (x->L != d->L || x->o_s != d->o_s || x->o_r != d->o_r || x->g != d->g ||
                x->G != d->G || x->E != d->E || x->rdv != d->rdv || x->X != d->X)
                fail("oversubscribed: a parameter other than w changed", name);
            if (!(x->w > 0))
                fail("oversubscribed: w must be > 0", name);
            continue;
        }
        if (x->w != d->w)
            fail("w changed in a run that is not oversubscribed", name);
        if (!(x->E == 0 || (x->E >= 512 && x->E <= (1 << 20) && x->rdv >= 0)))
            fail("E must be 0 or 512 B .. 1 MiB with rdv >= 0", name);
        if (!(x->o_s > 0 && x->o_r > 0 && x->g > 0 && x->G > 0))
            fail("o_s, o_r, g and G must be > 0 when measured", name);
        if (!(x->X >= 1.0 && x->X <= 2.0))
            fail("X (duplex factor) must lie in [1, 2] when measured", name);
    }
    if (seen_shm != 1)
        fail("shm row not listed exactly once", NULL);
    if ((want_shm || argc == 3) && !measured_shm)
        fail("shm row not measured", NULL);
    if (want_shm)
        for (int l = 0; l < TC_MODEL_LEVEL_LAST; l++)
            if (measured[l])
                fail("--level shm measured a level", tc_model_level_name((tc_model_level_t)l));
    if (want_level >= 0 && measured_shm)
        fail("--level LEVEL measured the shm row", argv[3]);
    const tc_logp_t *s = &loaded.shm, *ds = &defaults.shm;
    if (!measured_shm) {
        if (s->L != ds->L || s->o_s != ds->o_s || s->o_r != ds->o_r || s->g != ds->g ||
            s->G != ds->G)
            fail("an unmeasured shm row lost its default", NULL);
    } else {
        printf("shm: L %g o_s %g o_r %g g %g G %g\n", s->L, s->o_s, s->o_r, s->g, s->G);
        if (!(s->o_s > 0 && s->L + s->o_r > 0 && s->g > 0 && s->G > 0))
            fail("shm: o_s, L + o_r, g and G must be > 0 when measured", NULL);
    }
    /* Round trip: the library writes what it loaded, and reads back the same
     * numbers (a file written from a loaded one configures the same model). */
    char again[4200];
    snprintf(again, sizeof again, "%s.again", path);
    tc_logp_table_t back;
    tc_logp_table_defaults(&back);
    if (tc_logp_table_write(&loaded, again, "test_logp_file round trip") != 0) {
        fail("tc_logp_table_write", again);
    } else if (tc_logp_table_load_file(&back, again, err, sizeof err) != 0) {
        fail("the rewritten file does not load", err);
    } else {
        for (int l = 0; l <= TC_MODEL_LEVEL_LAST; l++) {
            const double *a = l < TC_MODEL_LEVEL_LAST ? &loaded.level[l].L : &loaded.shm.L;
            const double *b = l < TC_MODEL_LEVEL_LAST ? &back.level[l].L : &back.shm.L;
            for (int k = 0; k < 9; k++)
                if (!(fabs(a[k] - b[k]) <= 1e-9 * fabs(a[k])))
                    fail("a value changed through write and load on row",
                         l < TC_MODEL_LEVEL_LAST ? tc_model_level_name((tc_model_level_t)l)
                                                 : TC_LOGP_SHM_NAME);
        }
    }
    remove(again);
    if (failures)
        return 1;
    printf("%s: OK (%d row%s measured)\n", path, nmeasured, nmeasured > 1 ? "s" : "");
    return 0;
}
