/* fuzz_model_json: libFuzzer target for the JSON model loader (models/model_json.c and
 * mbd_model_build). Each input is written to one temporary file and loaded through
 * mbd_model_load, so that the file-size and nesting limits are on the path; a model that
 * loads is then described and solved (fuzz_exercise.h). A failed load must leave a
 * one-line message. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_exercise.h"
#include "mbd.h"

static char model_path[96];

static void remove_model_file(void)
{
    if (model_path[0])
        unlink(model_path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    const char *dir = getenv("TMPDIR");
    snprintf(model_path, sizeof model_path, "%s/mbd-fuzz-XXXXXX.json", dir && *dir ? dir : "/tmp");
    const int fd = mkstemps(model_path, 5);
    if (fd < 0) {
        perror("fuzz_model_json: mkstemps");
        exit(1);
    }
    close(fd);
    atexit(remove_model_file);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const int fd = open(model_path, O_WRONLY | O_TRUNC);
    fuzz_require(fd >= 0, "open the temporary model file");
    for (size_t done = 0; done < size;) {
        const ssize_t n = write(fd, data + done, size - done);
        fuzz_require(n > 0, "write the temporary model file");
        done += (size_t)n;
    }
    close(fd);
    char err[512] = "";
    mbd_model *model = mbd_model_load(model_path, err, sizeof err);
    if (!model) {
        fuzz_check_message(err);
        fuzz_require(strncmp(err, model_path, strlen(model_path)) == 0,
                     "error message does not start with the file name");
        return 0;
    }
    fuzz_exercise_model(model);
    mbd_model_free(model);
    return 0;
}
