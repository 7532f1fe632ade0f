/* ranks.c: mbd-bench over MPI ranks: every rank's JSON rows to rank 0, as one table. */
#include "ranks.h"

#include "../src/cli.h"
#include "../src/par.h"

#include <stdlib.h>
#include <string.h>

/* Google Benchmark's family is the run name before "/n:"; families and the instances
 * within them are numbered in order of first appearance, as one process numbers them. */
static void renumber_families(json_t *rows)
{
    json_t *families = json_object(), *instances = json_object();
    size_t k;
    json_t *row;
    json_array_foreach(rows, k, row) {
        const char *run = json_string_value(json_object_get(row, "run_name"));
        const char *cut = run ? strstr(run, "/n:") : NULL;
        char *family = run ? strndup(run, cut ? (size_t)(cut - run) : strlen(run)) : NULL;
        if (!family)
            continue;
        if (!json_object_get(families, family))
            json_object_set_new(families, family, json_object());
        json_t *members = json_object_get(families, family);
        if (!json_object_get(members, run))
            json_object_set_new(members, run, json_integer((json_int_t)json_object_size(members)));
        if (!json_object_get(instances, family))
            json_object_set_new(instances, family, json_integer((json_int_t)json_object_size(instances)));
        json_object_set(row, "family_index", json_object_get(instances, family));
        json_object_set(row, "per_family_instance_index", json_object_get(members, run));
        free(family);
    }
    json_decref(families);
    json_decref(instances);
}

json_t *bench_gather_rows(json_t *rows)
{
    char *text = json_dumps(rows, JSON_COMPACT);
    json_decref(rows);
    char **texts = NULL;
    int rc = par_gather_text(text ? text : "[]", &texts);
    free(text);
    if (par_rank() != 0 || rc)
        return NULL;
    json_t *all = json_array();
    for (int r = 0; r < par_size(); r++) {
        json_error_t error;
        json_t *part = json_loads(texts[r], 0, &error);
        if (!part || json_array_extend(all, part) != 0)
            rc = cli_fail("bench", "rows from the ranks", MBD_EPARSE);
        json_decref(part);
        free(texts[r]);
    }
    free(texts);
    if (rc) {
        json_decref(all);
        return NULL;
    }
    renumber_families(all);
    return all;
}
