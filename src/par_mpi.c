/* par_mpi.c: par.h over Open MPI (see par.h for the protocol that prevents hangs). */
#include "par.h"

#include "cli.h"

#include <limits.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int joined; /* MPI_Init called: a launcher started this process */
static int my_rank, my_size = 1;
static int agreement_failed;
/* ranks other than 0: stderr held in memory between agreements */
static FILE *real_stderr, *held;
static char *held_text;
static size_t held_size;

struct par_file {
    const char *cmd;
    cli_atomic atomic; /* rank 0: the temporary file's name and rename */
    MPI_File handle;
};

/* Open MPI, PMIx (Slurm's srun) and MPICH-style launchers each set one of these. */
static int launched(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_SIZE");
}

static void hold_stderr(void)
{
    held = open_memstream(&held_text, &held_size);
    if (held)
        stderr = held;
}

/* Shows (if show) and drops what this rank held, each line tagged with rank and host. */
static void release_stderr(int show)
{
    if (!held)
        return;
    fflush(held);
    for (char *line = held_text; show && line && *line;) {
        char *end = strchr(line, '\n');
        const int len = end ? (int)(end - line) : (int)strlen(line);
        fprintf(real_stderr, "[rank %d on %s] %.*s\n", my_rank, par_host(), len, line);
        line = end ? end + 1 : NULL;
    }
    fclose(held);
    free(held_text);
    held = NULL, held_text = NULL;
    stderr = real_stderr;
}

int par_start(int *argc, char ***argv)
{
    if (!launched())
        return 0;
    int provided;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "mbd: MPI: cannot join the job (MPI_Init_thread failed)\n");
        return CLI_RUNTIME_ERROR;
    }
    joined = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &my_size);
    real_stderr = stderr;
    if (my_rank != 0)
        hold_stderr();
    return 0;
}

int par_rank(void) { return my_rank; }
int par_size(void) { return my_size; }

const char *par_host(void)
{
    static char host[MPI_MAX_PROCESSOR_NAME + 1];
    int len = 0;
    if (!host[0] && (!joined || MPI_Get_processor_name(host, &len) != MPI_SUCCESS))
        gethostname(host, sizeof host - 1);
    return host[0] ? host : "unknown";
}

/* One reduction gives both the largest status and the lowest failing rank. */
int par_agree(int status)
{
    if (!joined)
        return status;
    int mine[2] = {status, status ? my_size - my_rank : 0}, all[2];
    MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (all[0] != 0)
        agreement_failed = 1;
    release_stderr(all[0] != 0 && my_size - all[1] == my_rank);
    if (my_rank != 0)
        hold_stderr();
    return all[0];
}

int par_finish(int status)
{
    if (!joined)
        return status;
    if (!agreement_failed)
        status = par_agree(status);
    release_stderr(0);
    MPI_Finalize();
    return status;
}

long long par_sum(long long x)
{
    long long sum = x;
    if (joined)
        MPI_Allreduce(&x, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return sum;
}

int par_gather_text(const char *text, char ***texts)
{
    const int len = (int)strlen(text) + 1;
    int *lens = my_rank == 0 ? calloc((size_t)my_size, 2 * sizeof *lens) : NULL;
    *texts = NULL;
    if (joined)
        MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
    else if (lens)
        lens[0] = len;
    char *all = NULL;
    if (lens) {
        long long total = 0;
        for (int r = 0; r < my_size; r++)
            lens[my_size + r] = (int)total, total += lens[r];
        all = total <= INT_MAX ? malloc((size_t)total) : NULL;
    }
    if (joined)
        MPI_Gatherv(text, len, MPI_CHAR, all, lens, lens ? lens + my_size : NULL, MPI_CHAR, 0,
                    MPI_COMM_WORLD);
    else if (all)
        memcpy(all, text, (size_t)len);
    int rc = 0;
    if (my_rank == 0) {
        *texts = all ? calloc((size_t)my_size, sizeof **texts) : NULL;
        int missing = !*texts;
        for (int r = 0; *texts && r < my_size; r++)
            missing |= !((*texts)[r] = strdup(all + lens[my_size + r]));
        if (missing) { /* as par_serial.c: nothing to free for the caller */
            for (int r = 0; *texts && r < my_size; r++)
                free((*texts)[r]);
            free(*texts);
            *texts = NULL;
            rc = cli_fail("par", "gather", MBD_ENOMEM);
        }
    }
    free(all);
    free(lens);
    return rc;
}

static int mpi_fail(const char *cmd, const char *path, const char *step, int code)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(code, text, &len);
    fprintf(stderr, "mbd %s: %s: %s (MPI-IO: %s)\n", cmd, path, step, text);
    return CLI_RUNTIME_ERROR;
}

/* Rank 0 makes the temporary file beside path and tells the others its name; then all
 * open it together. */
par_file *par_file_open(const char *cmd, const char *path)
{
    par_file *file = calloc(1, sizeof *file);
    int rc = file ? 0 : cli_fail(cmd, path, MBD_ENOMEM);
    if (!rc)
        file->cmd = cmd;
    if (!joined) { /* alone: the descriptor stays open for cli_atomic_write_at */
        if (!rc && cli_atomic_open(cmd, path, &file->atomic) == 0)
            return file;
        free(file);
        return NULL;
    }
    if (!rc && my_rank == 0 && !(rc = cli_atomic_open(cmd, path, &file->atomic))) {
        close(file->atomic.fd);
        file->atomic.fd = -1;
        if (!file->atomic.tmp) { /* ranks write their parts at offsets, in any order */
            fprintf(stderr,
                    "mbd %s: output '%s': a FIFO or device cannot take the ranks' parts "
                    "(a regular file can)\n",
                    cmd, path);
            cli_atomic_close(cmd, &file->atomic, CLI_USAGE_ERROR);
            rc = CLI_USAGE_ERROR;
        }
    }
    if (par_agree(rc)) {
        if (file && my_rank == 0 && file->atomic.tmp)
            cli_atomic_close(cmd, &file->atomic, CLI_RUNTIME_ERROR);
        free(file);
        return NULL;
    }
    int len = my_rank == 0 ? (int)strlen(file->atomic.tmp) + 1 : 0;
    MPI_Bcast(&len, 1, MPI_INT, 0, MPI_COMM_WORLD);
    char *tmp = my_rank == 0 ? file->atomic.tmp : malloc((size_t)len);
    MPI_Bcast(tmp, tmp ? len : 0, MPI_CHAR, 0, MPI_COMM_WORLD);
    file->atomic.path = path;
    const int code =
        MPI_File_open(MPI_COMM_WORLD, tmp, MPI_MODE_WRONLY, MPI_INFO_NULL, &file->handle);
    rc = code == MPI_SUCCESS ? 0 : mpi_fail(cmd, path, "cannot open the temporary file", code);
    if (my_rank != 0)
        free(tmp);
    if (par_agree(rc)) {
        if (code == MPI_SUCCESS)
            MPI_File_close(&file->handle);
        if (my_rank == 0)
            cli_atomic_close(cmd, &file->atomic, CLI_RUNTIME_ERROR);
        free(file);
        return NULL;
    }
    return file;
}

int par_file_write_at(par_file *file, long long offset, const void *data, size_t size)
{
    if (!joined)
        return cli_atomic_write_at(file->cmd, &file->atomic, offset, data, size);
    for (size_t done = 0; done < size;) {
        const int chunk = size - done < INT_MAX ? (int)(size - done) : INT_MAX;
        MPI_Status status;
        const int code = MPI_File_write_at(file->handle, (MPI_Offset)(offset + (long long)done),
                                           (const char *)data + done, chunk, MPI_BYTE, &status);
        if (code != MPI_SUCCESS)
            return mpi_fail(file->cmd, file->atomic.path, "cannot write", code);
        done += (size_t)chunk;
    }
    return 0;
}

int par_file_close(par_file *file, int status)
{
    if (!joined) {
        const int rc = cli_atomic_close(file->cmd, &file->atomic, status);
        free(file);
        return status ? status : rc;
    }
    int code = MPI_File_sync(file->handle);
    const int close_code = MPI_File_close(&file->handle);
    code = code != MPI_SUCCESS ? code : close_code;
    if (!status && code != MPI_SUCCESS)
        status = mpi_fail(file->cmd, file->atomic.path, "cannot sync or close", code);
    status = par_agree(status);
    const int renamed = my_rank == 0 ? cli_atomic_close(file->cmd, &file->atomic, status) : 0;
    free(file);
    /* all ranks learn how rank 0's rename went, so that they go on alike */
    return status ? status : par_agree(renamed);
}
