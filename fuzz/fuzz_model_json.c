/* fuzz_model_json: libFuzzer target for the JSON model loader (models/model_json.c and
 * mbd_model_build). Each input is written to one temporary file and loaded through
 * mbd_model_load, so that the file-size and nesting limits are on the path; a model that
 * loads is then described and solved (fuzz_exercise.h). A failed load must leave a
 * one-line message. */
#include "fuzz_exercise.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    fuzz_make_model_file(".json");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_write_model_file(data, size);
    fuzz_load_model_file(NULL);
    return 0;
}
