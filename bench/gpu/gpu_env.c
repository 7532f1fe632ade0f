/* gpu_env.c: mbd_gpu_options from the environment (gpu_env.h). */
#include "gpu_env.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Each variable, the option it sets, and its two words (0 and 1), or none: an integer. */
static const struct {
    const char *name;
    size_t option;
    const char *words[2];
} settings[] = {
    {"MBD_GPU_JIT_LEVEL", offsetof(mbd_gpu_options, jit_level), {NULL, NULL}},
    {"MBD_GPU_IMAGE", offsetof(mbd_gpu_options, ptx), {"cubin", "ptx"}},
    {"MBD_GPU_WORKSPACE", offsetof(mbd_gpu_options, global_works), {"stack", "global"}},
    {"MBD_GPU_THREADS_PER_SM", offsetof(mbd_gpu_options, threads_per_sm), {NULL, NULL}},
    {"MBD_GPU_INERTIA_SUMS", offsetof(mbd_gpu_options, inertia_slots), {"body", "slots"}},
};

/* The option's value from text, or -1 where text is not one. */
static int value_of(const char *text, const char *const words[2])
{
    if (words[0])
        return strcmp(text, words[0]) == 0 ? 0 : strcmp(text, words[1]) == 0 ? 1 : -1;
    char *end;
    errno = 0;
    const long value = strtol(text, &end, 10);
    return *end || errno || value < 0 || value > INT_MAX ? -1 : (int)value;
}

int gpu_options_from_env(mbd_gpu_options *options, char *error, size_t error_size)
{
    mbd_gpu_default_options(options);
    for (size_t s = 0; s < sizeof settings / sizeof *settings; s++) {
        const char *text = getenv(settings[s].name);
        if (!text || !*text)
            continue;
        const int value = value_of(text, settings[s].words);
        if (value < 0) {
            if (settings[s].words[0])
                snprintf(error, error_size, "%s=%.64s: not %s or %s", settings[s].name, text,
                         settings[s].words[0], settings[s].words[1]);
            else
                snprintf(error, error_size, "%s=%.64s: not a whole number", settings[s].name, text);
            return -1;
        }
        *(int *)((char *)options + settings[s].option) = value;
    }
    return 0;
}
