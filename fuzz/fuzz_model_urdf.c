/* fuzz_model_urdf: libFuzzer target for the URDF reader (models/model_urdf.c, libxml2)
 * and the merge of fixed joints (algorithms/model/fixed.c). Each input is written to one
 * temporary file and loaded through mbd_model_load twice: with the root fixed to the
 * world and with a floating base; a model that loads is then described and solved
 * (fuzz_exercise.h). A failed load must leave a one-line message naming the file. */
#include "fuzz_exercise.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    fuzz_make_model_file(".urdf");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_write_model_file(data, size);
    for (int floating = 0; floating <= 1; floating++)
        fuzz_load_model_file(&(mbd_load_options){.floating_base = floating});
    return 0;
}
