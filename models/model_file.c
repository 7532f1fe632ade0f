/* model_file.c: a model file's text, for whichever reader parses it, and the limits that
 * hold before any parser runs: regular files only (a FIFO must not hang the loader), at
 * most MAX_FILE_BYTES, also for a file that grows while it is read. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "models.h"

#define MAX_FILE_BYTES (64L * 1024 * 1024)

typedef struct {
    const char *file;
    char *err;
    size_t err_size;
} loader;

/* The whole file into *out (*size bytes, NUL-terminated), or a status after a message;
 * the size limit holds also for a file that grows while it is read. */
static int read_stream(const loader *ld, FILE *file, char **out, size_t *size)
{
    struct stat info;
    if (fstat(fileno(file), &info) != 0) {
        model_error(ld->err, ld->err_size, "%s: cannot open: %s", ld->file, strerror(errno));
        return MBD_EIO;
    }
    if (!S_ISREG(info.st_mode)) {
        model_error(ld->err, ld->err_size, "%s: cannot open: not a regular file", ld->file);
        return MBD_EIO;
    }
    if (info.st_size > MAX_FILE_BYTES) {
        model_error(ld->err, ld->err_size, "%s: %lld bytes, over the limit of %ld (64 MiB)",
                    ld->file, (long long)info.st_size, MAX_FILE_BYTES);
        return MBD_ELIMIT;
    }
    /* One byte more than fstat says, to see a file that grew since; never more than the
     * limit plus one byte, to see one that grew past it. */
    const size_t limit = (size_t)MAX_FILE_BYTES + 1;
    size_t capacity = (size_t)info.st_size + 1, used = 0;
    char *text = malloc(capacity + 1);
    while (text) {
        used += fread(text + used, 1, capacity - used, file);
        if (used < capacity || ferror(file))
            break;
        if (used >= limit) {
            model_error(ld->err, ld->err_size, "%s: over the limit of %ld bytes (64 MiB)", ld->file,
                        MAX_FILE_BYTES);
            free(text);
            return MBD_ELIMIT;
        }
        capacity = capacity > limit / 2 ? limit : 2 * capacity;
        char *bigger = realloc(text, capacity + 1);
        if (!bigger)
            free(text);
        text = bigger;
    }
    if (!text) {
        model_error(ld->err, ld->err_size, "%s: out of memory", ld->file);
        return MBD_ENOMEM;
    }
    if (ferror(file)) {
        model_error(ld->err, ld->err_size, "%s: cannot read: %s", ld->file, strerror(errno));
        free(text);
        return MBD_EIO;
    }
    text[used] = '\0';
    *size = used;
    *out = text;
    return MBD_OK;
}

int model_read_file(const char *path, char **text, size_t *size, char *err, size_t err_size)
{
    const loader ld = {path, err, err_size};
    /* O_NONBLOCK: opening a FIFO must not wait for a writer (read_stream then rejects it). */
    const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    FILE *file = fd >= 0 ? fdopen(fd, "rb") : NULL;
    if (!file) {
        model_error(err, err_size, "%s: cannot open: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return MBD_EIO;
    }
    const int status = read_stream(&ld, file, text, size);
    fclose(file);
    return status;
}
