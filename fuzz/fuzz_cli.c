/* fuzz_cli: libFuzzer target for the option parser of mbd (src/cli.c): cli_parse over an
 * argv made from the input, then cli_get, cli_vector, cli_number and cli_solver on what it
 * parsed; then the same argv through one of the commands that read a MODEL and write only
 * to standard output (fd, id, coeffs, minv, info, derivatives), unless an argument holds
 * a '/' (a file anywhere) or asks for a model of more than CLI_MAX_BODIES bodies. The first
 * byte picks the vector length (bits 0-3, 0 to 15) and the command (bits 4-6); the rest is split at
 * NUL bytes into at most MAX_ARGS arguments. Checks: the parser's results agree with its
 * return values (positional count, finite in-range numbers), and the command returns one
 * of its exit statuses. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fuzz_exercise.h"

#define MAX_ARGS 24
#define MAX_POS 2
#define CLI_MAX_BODIES 16

/* The command that the argv runs; 0 where it would read a file or build a large model. */
static int run_command(const uint8_t first, int argc, char **argv)
{
    static int (*const commands[])(const char *, int, char **) = {
        cmd_fd, cmd_id, cmd_coeffs, cmd_minv, cmd_info, cmd_derivatives};
    static const char *const names[] = {"fd", "id", "coeffs", "minv", "info", "derivatives"};
    for (int k = 2; k < argc; k++)
        if (strchr(argv[k], '/') || fuzz_spec_too_large(argv[k], CLI_MAX_BODIES))
            return 0;
    const int c = (first >> 4) % 6;
    argv[1] = (char *)names[c];
    return commands[c](names[c], argc, argv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const int n = data[0] & 15;
    /* A private copy, NUL-terminated, so that each argument is a C string. */
    char *text = malloc(size);
    fuzz_require(text != NULL, "allocation");
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    char *argv[MAX_ARGS + 3] = {"mbd", "fd"};
    int argc = 2;
    for (size_t at = 0; at < size - 1 && argc < MAX_ARGS + 2; at += strlen(text + at) + 1)
        argv[argc++] = text + at;
    argv[argc] = NULL;

    cli_flag flags[] = {{"--solver", NULL, 0}, {"--q", NULL, 0},  {"--qd", NULL, 0},
                        {"--tau", NULL, 0},    {"--t1", NULL, 0}, {"--dt", NULL, 0},
                        {"--quiet", NULL, 1},  {NULL, NULL, 0}};
    const char *pos[MAX_POS] = {NULL, NULL};
    int npos = -1;
    const int rc = cli_parse("fuzz", argc, argv, 2, flags, pos, MAX_POS, &npos);
    fuzz_require(rc == 0 || rc == CLI_USAGE_ERROR, "cli_parse status");
    fuzz_require(npos >= 0 && npos <= MAX_POS, "positional count");
    if (rc == 0) {
        for (int k = 0; k < npos; k++)
            fuzz_require(pos[k] != NULL, "positional argument");
        double vector[16], number;
        static const char *const vectors[] = {"--q", "--qd", "--tau"};
        for (int v = 0; v < 3; v++)
            if (cli_vector("fuzz", flags, vectors[v], n, vector) == 0)
                for (int k = 0; k < n; k++)
                    fuzz_require(isfinite(vector[k]), "cli_vector accepted a non-finite number");
        if (cli_number("fuzz", flags, "--t1", 0.0, 1e6, 1.0, &number) == 0)
            fuzz_require(number >= 0.0 && number <= 1e6, "cli_number out of range");
        if (cli_number("fuzz", flags, "--dt", -1e-3, 1e-3, 0.0, &number) == 0)
            fuzz_require(number >= -1e-3 && number <= 1e-3, "cli_number out of range");
        const char *quiet = cli_get(flags, "--quiet");
        fuzz_require(!quiet || strcmp(quiet, "1") == 0, "switch value");
        (void)cli_solver("fuzz", flags, "dense");
    }
    const int status = run_command(data[0], argc, argv);
    fuzz_require(status == 0 || status == CLI_USAGE_ERROR || status == CLI_RUNTIME_ERROR,
                 "exit status");
    free(text);
    return 0;
}
