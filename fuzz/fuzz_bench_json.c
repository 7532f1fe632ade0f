/* fuzz_bench_json: libFuzzer target for `mbd-bench compare` (bench/compare.c) on Google
 * Benchmark JSON. An input is run A, then a form feed, then run B (without one, A against
 * itself); both go through the reader, the pairing, the text and the page, and the counts
 * must add up. */
#include "../bench/compare.h"
#include "cli.h"

#include <stdint.h>
#include <string.h>

/* The page's style and script are embedded by the Makefile into mbd-bench only. */
const char bench_page_css[] = "", bench_page_js[] = "";

static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    devnull = fopen("/dev/null", "w");
    return devnull ? 0 : 1;
}

static int read_run(const char *text, size_t size, const char *label, compare_run *run)
{
    char err[256];
    json_t *root = json_loadb(text, size, 0, NULL);
    int rc = root ? compare_read_run(root, label, run, err, sizeof err) : CLI_USAGE_ERROR;
    json_decref(root);
    if (rc && run->count)
        abort(); /* a failed read leaves no rows behind */
    return rc;
}

/* Every row of each run is paired or listed as one run's only; the verdicts add up. */
static void check(const compare_result *r, size_t rows_a, size_t rows_b)
{
    if (r->npairs + r->nonly_a != rows_a || r->npairs + r->nonly_b != rows_b ||
        r->count[VERDICT_FASTER] + r->count[VERDICT_SLOWER] + r->count[VERDICT_NOISE] != r->npairs)
        abort();
    for (size_t k = 0; k < r->npairs; k++)
        if (!(r->pairs[k].ratio >= 0) || strcmp(r->pairs[k].a->name, r->pairs[k].b->name))
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data, *split = memchr(text, '\f', size);
    const size_t size_a = split ? (size_t)(split - text) : size;
    const char *text_b = split ? split + 1 : text;
    const size_t size_b = split ? size - size_a - 1 : size;
    compare_run a = {0}, b = {0};
    if (read_run(text, size_a, "A.json", &a) || read_run(text_b, size_b, "B.json", &b)) {
        compare_run_free(&a);
        compare_run_free(&b);
        return 0;
    }
    const size_t rows_a = a.count, rows_b = b.count;
    compare_result result;
    char err[512];
    if (compare_runs(&a, &b, &result, err, sizeof err) == 0) {
        check(&result, rows_a, rows_b);
        compare_print(devnull, &result);
        if (compare_write_html(devnull, &result))
            abort();
    }
    compare_result_free(&result);
    return 0;
}
