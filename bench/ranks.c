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
    json_array_foreach(rows, k, row)
    {
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
            json_object_set_new(instances, family,
                                json_integer((json_int_t)json_object_size(instances)));
        json_object_set(row, "family_index", json_object_get(instances, family));
        json_object_set(row, "per_family_instance_index", json_object_get(members, run));
        free(family);
    }
    json_decref(families);
    json_decref(instances);
}

/* [[group, rows], ...] of this rank's records, in its order (groups ascending). */
static char *records_text(const bench_results *results, const char *host)
{
    json_t *records = json_array();
    for (int k = 0; k < results->count; k++) {
        const bench_results one = {.records = &results->records[k], .count = 1};
        json_array_append_new(
            records, json_pack("[i, o]", results->records[k].group, bench_json_rows(&one, host)));
    }
    char *text = json_dumps(records, JSON_COMPACT);
    json_decref(records);
    return text;
}

/* Merges the ranks' lists (each ascending in group; a group is on one rank) into rows. */
static json_t *merge_ranks(json_t **parts, int nparts)
{
    json_t *rows = json_array();
    size_t *next = calloc((size_t)nparts, sizeof *next);
    for (;;) {
        int best = -1;
        json_int_t best_group = 0;
        for (int r = 0; next && r < nparts; r++) {
            json_t *item = json_array_get(parts[r], next[r]);
            const json_int_t group = json_integer_value(json_array_get(item, 0));
            if (item && (best < 0 || group < best_group))
                best = r, best_group = group;
        }
        if (best < 0)
            break;
        json_array_extend(rows, json_array_get(json_array_get(parts[best], next[best]++), 1));
    }
    free(next);
    return rows;
}

json_t *bench_gather_rows(const bench_results *results, const char *host)
{
    char *text = records_text(results, host);
    char **texts = NULL;
    int rc = par_gather_text(text ? text : "[]", &texts);
    free(text);
    if (par_rank() != 0 || rc)
        return NULL;
    const int size = par_size();
    json_t **parts = calloc((size_t)size, sizeof *parts);
    for (int r = 0; r < size; r++) {
        json_error_t error;
        if (!parts || !(parts[r] = json_loads(texts[r], 0, &error)))
            rc = cli_fail("bench", "rows from the ranks", parts ? MBD_EPARSE : MBD_ENOMEM);
        free(texts[r]);
    }
    free(texts);
    json_t *rows = rc ? NULL : merge_ranks(parts, size);
    for (int r = 0; parts && r < size; r++)
        json_decref(parts[r]);
    free(parts);
    if (rows)
        renumber_families(rows);
    return rows;
}
