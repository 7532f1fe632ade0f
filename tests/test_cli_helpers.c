/* src/cli.c's helpers called directly: the option parser's edges, and atomic writes that
 * lose nothing when the writer fails, a file size limit is hit or the disk is full. */
#define _GNU_SOURCE /* mount, RLIMIT_FSIZE helpers */
#include "support.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../src/cli.c" /* cli_write_atomic and the option parser, tested directly */

/* ---- the option parser ---- */

static void test_cli_parser_edges(void **state)
{
    (void)state;
    cli_flag flags[] = {{"--q", NULL, 0}, {"--t1", NULL, 0}, {"--quiet", NULL, 1}, {NULL, NULL, 0}};
    const char *pos[1];
    int npos;
    char *argv1[] = {"mbd", "fd", "m", "--q", "", "--t1", "1e-3", "--quiet", NULL};
    assert_int_equal(cli_parse("t", 8, argv1, 2, flags, pos, 1, &npos), 0);
    double v[2], t1;
    assert_int_equal(cli_vector("t", flags, "--q", 1, v), CLI_USAGE_ERROR); /* empty element */
    assert_int_equal(cli_number("t", flags, "--t1", 0, 1, 0.5, &t1), 0);
    assert_true(t1 == 1e-3);
    char long_number[200];
    memset(long_number, '1', sizeof long_number - 1);
    long_number[sizeof long_number - 1] = '\0';
    cli_flag flags2[] = {{"--q", NULL, 0}, {NULL, NULL, 0}};
    char *argv2[] = {"mbd", "fd", "--q", long_number, NULL};
    assert_int_equal(cli_parse("t", 4, argv2, 2, flags2, pos, 0, &npos), 0);
    assert_int_equal(cli_vector("t", flags2, "--q", 1, v), CLI_USAGE_ERROR); /* token too long */
    char many[] = "1,2,3,4,5,6,7,8,9";
    flags2[0].value = many;
    assert_int_equal(cli_vector("t", flags2, "--q", 2, v), CLI_USAGE_ERROR); /* too many */
    flags2[0].value = "0x1p-3,-0";
    assert_int_equal(cli_vector("t", flags2, "--q", 2, v), 0);
    assert_true(v[0] == 0.125 && v[1] == 0.0 && signbit(v[1]));
    flags2[0].value = "1,";
    assert_int_equal(cli_vector("t", flags2, "--q", 2, v), CLI_USAGE_ERROR); /* trailing comma */
    char *argv3[] = {"mbd", "fd", "--quiet", "--quiet", NULL};
    flags[2].value = NULL;
    assert_int_equal(cli_parse("t", 4, argv3, 2, flags, pos, 1, &npos), CLI_USAGE_ERROR);
}

/* ---- atomic writes: nothing lost ---- */

typedef struct {
    size_t bytes;   /* how much to write */
    int fail_after; /* write_fn reports failure (after writing) if nonzero */
} payload;

static int write_payload(FILE *out, void *ctx)
{
    const payload *p = ctx;
    char line[64];
    memset(line, 'x', sizeof line - 1);
    line[sizeof line - 1] = '\n';
    for (size_t done = 0; done < p->bytes; done += sizeof line)
        if (fwrite(line, 1, sizeof line, out) != sizeof line)
            return -1;
    return p->fail_after ? -1 : 0;
}

/* Names in dir that start with prefix ("x.tmp."): temporary files left behind. */
static int count_prefixed(const char *dir_path, const char *prefix)
{
    DIR *dir = opendir(dir_path);
    assert_non_null(dir);
    int count = 0;
    for (struct dirent *e; (e = readdir(dir));)
        count += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(dir);
    return count;
}

/* Runs cli_write_atomic with stderr captured into message (size bytes). */
static int write_atomic_captured(const char *path, payload *p, char *message, size_t size)
{
    fflush(stderr);
    const int saved = dup(2);
    const char *capture = temp_path(3, "stderr.txt");
    FILE *file = fopen(capture, "w+");
    assert_non_null(file);
    dup2(fileno(file), 2);
    const int rc = cli_write_atomic("test", path, write_payload, p);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(file);
    const size_t n = fread(message, 1, size - 1, file);
    message[n] = '\0';
    fclose(file);
    return rc;
}

static void test_write_atomic_ok_and_failing_writer(void **state)
{
    (void)state;
    const char *path = temp_path(0, "result.txt");
    payload p = {.bytes = 1000};
    char message[512];
    assert_int_equal(write_atomic_captured(path, &p, message, sizeof message), 0);
    struct stat info;
    assert_int_equal(stat(path, &info), 0);
    assert_int_equal((int)info.st_size, 1024); /* 16 lines of 64 */
    assert_int_equal((int)(info.st_mode & 0777), 0644);
    write_text(path, "earlier result\n");
    p.fail_after = 1;
    assert_int_equal(write_atomic_captured(path, &p, message, sizeof message), CLI_RUNTIME_ERROR);
    assert_non_null(strstr(message, path));
    char *text = read_text_file(path);
    assert_string_equal(text, "earlier result\n");
    free(text);
    assert_int_equal(count_prefixed(temp_dir, "result.txt.tmp."), 0);
    /* a directory in the way: rename fails, the temporary file goes */
    const char *dir_path = temp_path(1, "a-directory");
    assert_int_equal(mkdir(dir_path, 0700), 0);
    p.fail_after = 0;
    assert_int_equal(write_atomic_captured(dir_path, &p, message, sizeof message), CLI_RUNTIME_ERROR);
    assert_non_null(strstr(message, "cannot rename"));
    assert_int_equal(count_prefixed(temp_dir, "a-directory.tmp."), 0);
    /* no such directory: mkstemp fails, with the reason */
    assert_int_equal(write_atomic_captured(temp_path(1, "no/such/dir/out.txt"), &p, message, sizeof message),
                     CLI_RUNTIME_ERROR);
    assert_non_null(strstr(message, "No such file or directory"));
}

/* The disk fills up (RLIMIT_FSIZE of 8 KiB in a child, SIGXFSZ ignored, so writes fail
 * with EFBIG): an error naming the reason, the earlier file intact, no temporary file. */
static void test_write_atomic_file_size_limit(void **state)
{
    (void)state;
    const char *path = temp_path(0, "limited.txt");
    write_text(path, "earlier result\n");
    const pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        signal(SIGXFSZ, SIG_IGN);
        const struct rlimit limit = {8192, 8192};
        setrlimit(RLIMIT_FSIZE, &limit);
        payload p = {.bytes = 1 << 20};
        char message[512];
        const int rc = write_atomic_captured(path, &p, message, sizeof message);
        _exit(rc == CLI_RUNTIME_ERROR && strstr(message, "File too large") ? 0 : 1);
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char *text = read_text_file(path);
    assert_string_equal(text, "earlier result\n");
    free(text);
    assert_int_equal(count_prefixed(temp_dir, "limited.txt.tmp."), 0);
}

/* A real full disk: a 64 KiB tmpfs (needs root and permission to mount; skipped
 * otherwise). ENOSPC: an error, the earlier file intact, no temporary file. */
static void test_write_atomic_full_disk(void **state)
{
    (void)state;
    const char *mount_point = temp_path(1, "tiny-tmpfs");
    assert_int_equal(mkdir(mount_point, 0700), 0);
    if (mount("tmpfs", mount_point, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k") != 0) {
        print_message("full disk: cannot mount a tmpfs (%s); RLIMIT_FSIZE test only\n", strerror(errno));
        rmdir(mount_point);
        skip();
    }
    char path[300];
    snprintf(path, sizeof path, "%s/result.txt", mount_point);
    write_text(path, "earlier result\n");
    payload p = {.bytes = 1 << 20};
    char message[512];
    const int rc = write_atomic_captured(path, &p, message, sizeof message);
    char *text = read_text_file(path);
    const int leftovers = count_prefixed(mount_point, "result.txt.tmp.");
    umount(mount_point);
    rmdir(mount_point);
    assert_int_equal(rc, CLI_RUNTIME_ERROR);
    assert_non_null(strstr(message, "No space left on device"));
    assert_non_null(text);
    assert_string_equal(text, "earlier result\n");
    free(text);
    assert_int_equal(leftovers, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cli_parser_edges),
        cmocka_unit_test(test_write_atomic_ok_and_failing_writer),
        cmocka_unit_test(test_write_atomic_file_size_limit),
        cmocka_unit_test(test_write_atomic_full_disk),
    };
    return cmocka_run_group_tests_name("cli helpers", tests, make_temp_dir, remove_temp_dir);
}
