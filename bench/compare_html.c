/* compare_html.c: the comparison as one self-contained page: report/page/page.css and
 * page.js (embedded at build time, as bench_page_css and bench_page_js) and the pairs as
 * JSON, which the script draws as a sortable table and a chart. */
#include "compare.h"

#include <math.h>
#include <stdlib.h>

extern const char bench_page_css[], bench_page_js[];

/* JSON has no NaN or infinity: null. */
static json_t *number(double x) { return isfinite(x) ? json_real(x) : json_null(); }

static json_t *names(const compare_row *const *rows, size_t n)
{
    json_t *list = json_array();
    for (size_t k = 0; k < n; k++)
        json_array_append_new(list, json_string(rows[k]->name));
    return list;
}

/* Each pair as [name, A's median (ns), B's, B/A, threshold, verdict, cv A, cv B]. */
static json_t *pairs(const compare_result *r)
{
    json_t *list = json_array();
    for (size_t k = 0; k < r->npairs; k++) {
        const compare_pair *p = &r->pairs[k];
        json_array_append_new(
            list, json_pack("[s, o, o, o, o, s, o, o]", p->a->name, number(p->a->median),
                            number(p->b->median), number(p->ratio), number(p->threshold),
                            compare_verdict_name(p->verdict), number(p->a->cv), number(p->b->cv)));
    }
    return list;
}

static json_t *compare_json(const compare_result *r)
{
    return json_pack("{s:s, s:s, s:o, s:o, s:o, s:{s:I, s:I, s:I, s:o}}", "a", r->a.label, "b",
                     r->b.label, "pairs", pairs(r), "only_a", names(r->only_a, r->nonly_a),
                     "only_b", names(r->only_b, r->nonly_b), "summary", "faster",
                     (json_int_t)r->count[VERDICT_FASTER], "slower",
                     (json_int_t)r->count[VERDICT_SLOWER], "noise",
                     (json_int_t)r->count[VERDICT_NOISE], "geomean", number(r->geomean));
}

int compare_write_html(FILE *out, void *result)
{
    json_t *data = compare_json(result);
    /* JSON_ESCAPE_SLASH: no "</script>" can end the script early */
    char *text = data ? json_dumps(data, JSON_COMPACT | JSON_ESCAPE_SLASH) : NULL;
    json_decref(data);
    if (!text)
        return -1;
    const int rc =
        fprintf(out,
                "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                "<title>mbd-bench compare</title>\n<style>\n%s</style>\n</head>\n<body>\n"
                "<main id=\"page\"></main>\n<script>\n%s</script>\n"
                "<script>mbdPage.compare(document.getElementById(\"page\"), %s);</script>\n"
                "</body>\n</html>\n",
                bench_page_css, bench_page_js, text) < 0;
    free(text);
    return rc;
}
