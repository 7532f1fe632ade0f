/* fuzz_output: libFuzzer target for the output files of mbd and mbd-bench (src/cli.c:
 * cli_check_output, cli_check_output_dir, cli_write_atomic and the cli_atomic steps) on
 * fuzzed paths inside a scratch directory that holds one of each kind a path may name: a
 * regular file, a read-only one, a symbolic link to each, a link to nothing, a FIFO (with
 * a reader this target drains), a link to /dev/null and a directory. The first byte picks
 * the call and, for the stepwise writer, whether it fails; the second the number of bytes
 * written; the rest, up to a NUL, is the path (within the scratch directory; one with a
 * ".." component, starting with '/' or naming a temporary file is skipped, so nothing
 * outside is touched).
 * Checks: each call returns one of its statuses; afterwards no temporary file is left, each
 * fixed entry is still of its kind, and a refused or failed write left the regular file's
 * earlier content. */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "fuzz_exercise.h"

#define EARLIER "earlier result\n"

static char scratch[] = "/tmp/fuzz-output-XXXXXX";
static int fifo_reader = -1;

/* The fixed entries and their kinds (lstat's S_IFMT). */
static const struct {
    const char *name;
    mode_t kind;
} fixed[] = {
    {"file", S_IFREG},     {"read-only", S_IFREG}, {"link", S_IFLNK}, {"link-read-only", S_IFLNK},
    {"dangling", S_IFLNK}, {"fifo", S_IFIFO},      {"null", S_IFLNK}, {"dir", S_IFDIR},
};

static int is_fixed(const char *name)
{
    for (size_t k = 0; k < sizeof fixed / sizeof *fixed; k++)
        if (strcmp(fixed[k].name, name) == 0)
            return 1;
    return 0;
}

/* scratch/name in a static buffer of its own per slot (0, 1). */
static const char *in_scratch(int slot, const char *name)
{
    static char paths[2][512];
    snprintf(paths[slot], sizeof paths[slot], "%s/%s", scratch, name);
    return paths[slot];
}

static void write_file(const char *name, const char *text, mode_t mode)
{
    const int fd = open(in_scratch(1, name), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    fuzz_require(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text), "scratch file");
    fchmod(fd, mode);
    close(fd);
}

static void remove_scratch(void);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    fuzz_require(mkdtemp(scratch) != NULL, "scratch directory");
    atexit(remove_scratch);
    write_file("file", EARLIER, 0644);
    write_file("read-only", EARLIER, 0444);
    fuzz_require(symlink("file", in_scratch(0, "link")) == 0 &&
                     symlink("read-only", in_scratch(0, "link-read-only")) == 0 &&
                     symlink("nothing", in_scratch(0, "dangling")) == 0 &&
                     symlink("/dev/null", in_scratch(0, "null")) == 0 &&
                     mkfifo(in_scratch(0, "fifo"), 0644) == 0 &&
                     mkdir(in_scratch(0, "dir"), 0755) == 0,
                 "scratch entries");
    /* a reader, so that opening the FIFO to write never waits */
    fifo_reader = open(in_scratch(0, "fifo"), O_RDONLY | O_NONBLOCK);
    fuzz_require(fifo_reader >= 0, "FIFO reader");
    return 0;
}

/* Removes what the input made in the scratch directory (top: its fixed entries stay) or
 * its subdirectory dir, and drains the FIFO. */
static void clean_up(const char *dir_name, int top)
{
    DIR *dir = opendir(dir_name);
    fuzz_require(dir != NULL, "opendir");
    for (struct dirent *e; (e = readdir(dir));) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir_name, e->d_name);
        fuzz_require(strstr(e->d_name, ".tmp.") == NULL, "a temporary file left behind");
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && !(top && is_fixed(e->d_name)))
            unlink(path);
    }
    closedir(dir);
    char sink[4096];
    while (read(fifo_reader, sink, sizeof sink) > 0)
        ;
}

/* Every fixed entry is still of its kind; unless the call succeeded (when it may have
 * written the regular file through one of its names), that file holds its earlier result. */
static void remove_scratch(void)
{
    clean_up(in_scratch(0, "dir"), 0);
    rmdir(in_scratch(0, "dir"));
    clean_up(scratch, 0);
    close(fifo_reader);
    rmdir(scratch);
}

static void check_fixed_entries(int succeeded)
{
    for (size_t k = 0; k < sizeof fixed / sizeof *fixed; k++) {
        struct stat info;
        fuzz_require(lstat(in_scratch(0, fixed[k].name), &info) == 0 &&
                         (info.st_mode & S_IFMT) == fixed[k].kind,
                     "a fixed entry changed kind");
    }
    if (succeeded)
        return;
    const int fd = open(in_scratch(0, "file"), O_RDONLY);
    char text[64] = "";
    fuzz_require(fd >= 0 && read(fd, text, sizeof text - 1) >= 0, "read the regular file");
    close(fd);
    fuzz_require(strcmp(text, EARLIER) == 0, "a failed write changed the regular file");
}

typedef struct {
    const uint8_t *data;
    size_t size;
} bytes;

static int write_bytes(FILE *out, void *ctx)
{
    const bytes *b = ctx;
    return fwrite(b->data, 1, b->size, out) == b->size ? 0 : -1;
}

/* The stepwise writer (par_file's serial path): the bytes in two parts, then closed with
 * the given status. */
static int write_stepwise(const char *path, const bytes *b, int status)
{
    cli_atomic file;
    int rc = cli_atomic_open("fuzz", path, &file);
    if (rc)
        return rc;
    const size_t half = b->size / 2;
    rc = cli_atomic_write_at("fuzz", &file, 0, b->data, half);
    if (!rc)
        rc = cli_atomic_write_at("fuzz", &file, (long long)half, b->data + half, b->size - half);
    const int closed = cli_atomic_close("fuzz", &file, status ? status : rc);
    return status ? status : rc ? rc : closed;
}

/* Paths that could leave the scratch directory, or that look like a temporary file. */
static int skipped(const char *path)
{
    if (path[0] == '/' || strstr(path, ".tmp."))
        return 1;
    for (const char *at = path; (at = strstr(at, "..")); at += 2)
        if ((at == path || at[-1] == '/') && (at[2] == '\0' || at[2] == '/'))
            return 1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    char name[256], path[512];
    const size_t length = strnlen((const char *)data + 2, size - 2);
    snprintf(name, sizeof name, "%.*s", (int)(length < sizeof name ? length : sizeof name - 1),
             (const char *)data + 2);
    if (skipped(name))
        return 0;
    /* an empty name stays empty: the path that names nothing */
    snprintf(path, sizeof path, "%s%s%s", name[0] ? scratch : "", name[0] ? "/" : "", name);
    const bytes b = {data, data[1] < size ? data[1] : size};
    int rc;
    switch (data[0] % 5) {
    case 0:
        rc = cli_check_output("fuzz", path);
        break;
    case 1:
        rc = cli_check_output_dir("fuzz", path);
        break;
    case 2:
        rc = cli_write_atomic("fuzz", path, write_bytes, (void *)&b);
        break;
    case 3:
        rc = write_stepwise(path, &b, 0);
        break;
    default:
        rc = write_stepwise(path, &b, CLI_RUNTIME_ERROR);
        break;
    }
    fuzz_require(rc == 0 || rc == CLI_USAGE_ERROR || rc == CLI_RUNTIME_ERROR, "status");
    clean_up(scratch, 1);
    clean_up(in_scratch(0, "dir"), 0);
    check_fixed_entries(rc == 0);
    if (rc == 0) { /* as root the read-only file is written too */
        write_file("file", EARLIER, 0644);
        write_file("read-only", EARLIER, 0444);
    }
    return 0;
}
