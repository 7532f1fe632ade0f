/* fuzz_model_spec: libFuzzer target for generator specs ("tree:n=7,branching=2", ...):
 * mbd_model_load's dispatch between files and specs, models/generators.c's parser and the
 * generated models (described and solved by fuzz_exercise.h). Inputs are cut at the first
 * NUL or newline; fuzz_spec_skipped (fuzz_exercise.h) passes over inputs holding a '/'
 * (they would name files anywhere) and specs asking for more bodies than is quick. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_exercise.h"
#include "mbd.h"

#define MAX_SPEC_CHARS 512

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char spec[MAX_SPEC_CHARS + 1];
    size_t len = 0;
    while (len < size && len < MAX_SPEC_CHARS && data[len] != '\0' && data[len] != '\n')
        len++;
    memcpy(spec, data, len);
    spec[len] = '\0';
    if (fuzz_spec_skipped(spec))
        return 0;
    char err[512] = "";
    mbd_model *model;
    mbd_model_load(spec, NULL, &model, err, sizeof err);
    if (!model) {
        fuzz_check_message(err);
        return 0;
    }
    fuzz_exercise_model(model);
    mbd_model_free(model);
    return 0;
}
