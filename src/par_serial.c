/* par_serial.c: par.h for a build without MPI: one process, rank 0 of 1. */
#include "par.h"

#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct par_file {
    cli_atomic atomic;
    const char *cmd;
};

int par_start(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    return 0;
}

int par_rank(void) { return 0; }
int par_size(void) { return 1; }

const char *par_host(void)
{
    static char host[256];
    if (!host[0] && gethostname(host, sizeof host - 1) != 0)
        strcpy(host, "unknown");
    return host;
}

int par_agree(int status) { return status; }
int par_finish(int status) { return status; }
long long par_sum(long long x) { return x; }

int par_gather_text(const char *text, char ***texts)
{
    *texts = malloc(sizeof **texts);
    if (*texts && !((*texts)[0] = strdup(text))) {
        free(*texts);
        *texts = NULL;
    }
    return *texts ? 0 : cli_fail("par", "gather", MBD_ENOMEM);
}

par_file *par_file_open(const char *cmd, const char *path)
{
    par_file *file = malloc(sizeof *file);
    if (!file) {
        cli_fail(cmd, path, MBD_ENOMEM);
        return NULL;
    }
    file->cmd = cmd;
    if (cli_atomic_open(cmd, path, &file->atomic) == 0)
        return file;
    free(file);
    return NULL;
}

int par_file_write_at(par_file *file, long long offset, const void *data, size_t size)
{
    return cli_atomic_write_at(file->cmd, &file->atomic, offset, data, size);
}

int par_file_close(par_file *file, int status)
{
    const int rc = cli_atomic_close(file->cmd, &file->atomic, status);
    free(file);
    return status ? status : rc;
}
