/* src/cli.c's helpers called directly: the option parser's edges, and atomic writes that
 * lose nothing when the writer fails, a file size limit is hit or the disk is full. */
#define _GNU_SOURCE /* mount, RLIMIT_FSIZE helpers */
#include "support.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

/* In a child prepared by prepare (0, or nonzero to give up), writes bytes onto path, which
 * holds an earlier result: expects rc and a message with reason; then path still holds its
 * earlier result and no temporary file (prefix tmp_prefix) is left. */
static void expect_failed_write_in_child(const char *path, int (*prepare)(void), size_t bytes,
                                         int rc, const char *reason, const char *tmp_prefix)
{
    unlink(temp_path(3, "stderr.txt")); /* write_atomic_captured's, which the child makes */
    const pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        if (prepare())
            _exit(3);
        payload p = {.bytes = bytes};
        char message[512];
        const int got = write_atomic_captured(path, &p, message, sizeof message);
        _exit(got == rc && strstr(message, reason) ? 0 : 1);
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char *text = read_text_file(path);
    assert_string_equal(text, "earlier result\n");
    free(text);
    assert_int_equal(count_prefixed(temp_dir, tmp_prefix), 0);
}

/* Writes of more than 8 KiB fail with EFBIG (SIGXFSZ ignored). */
static int limit_file_size(void)
{
    signal(SIGXFSZ, SIG_IGN);
    const struct rlimit limit = {8192, 8192};
    return setrlimit(RLIMIT_FSIZE, &limit);
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
    /* a directory in the way, or no such directory: refused before anything is written */
    const char *dir_path = temp_path(1, "a-directory");
    assert_int_equal(mkdir(dir_path, 0700), 0);
    p.fail_after = 0;
    assert_int_equal(write_atomic_captured(dir_path, &p, message, sizeof message), CLI_USAGE_ERROR);
    assert_non_null(strstr(message, "a directory"));
    assert_int_equal(count_prefixed(temp_dir, "a-directory.tmp."), 0);
    assert_int_equal(
        write_atomic_captured(temp_path(1, "no/such/dir/out.txt"), &p, message, sizeof message),
        CLI_USAGE_ERROR);
    assert_non_null(strstr(message, "No such file or directory"));
    assert_int_equal(write_atomic_captured("", &p, message, sizeof message), CLI_USAGE_ERROR);
    assert_non_null(strstr(message, "an empty path"));
}

/* ---- output files that are not ours: never replaced by a plain file ---- */

/* A symbolic link: its file is replaced, the link stays; one to nothing is refused. */
static void test_output_through_symlink(void **state)
{
    (void)state;
    const char *target = temp_path(0, "linked.txt"), *link_path = temp_path(1, "link.txt");
    write_text(target, "earlier result\n");
    assert_int_equal(symlink("linked.txt", link_path), 0);
    payload p = {.bytes = 64};
    char message[512];
    assert_int_equal(write_atomic_captured(link_path, &p, message, sizeof message), 0);
    struct stat info;
    assert_int_equal(lstat(link_path, &info), 0);
    assert_true(S_ISLNK(info.st_mode));
    assert_int_equal(stat(target, &info), 0);
    assert_int_equal((int)info.st_size, 64);
    const char *dangling = temp_path(2, "dangling.txt");
    assert_int_equal(symlink("nothing-here", dangling), 0);
    assert_int_equal(write_atomic_captured(dangling, &p, message, sizeof message), CLI_USAGE_ERROR);
    assert_non_null(strstr(message, "a symbolic link to nothing"));
    unlink(link_path), unlink(dangling), unlink(target);
}

/* A FIFO and a device are written in place: still a FIFO (its reader gets every byte) and
 * still a device afterwards. */
static void test_output_fifo_and_device(void **state)
{
    (void)state;
    const char *fifo = temp_path(0, "fifo");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    int pipe_fds[2];
    assert_int_equal(pipe(pipe_fds), 0);
    const pid_t reader = fork();
    assert_true(reader >= 0);
    if (reader == 0) { /* counts the bytes from the FIFO, reports them through the pipe */
        FILE *in = fopen(fifo, "r");
        long count = 0;
        while (in && fgetc(in) != EOF)
            count++;
        _exit(write(pipe_fds[1], &count, sizeof count) == sizeof count ? 0 : 1);
    }
    payload p = {.bytes = 4096};
    char message[512];
    const int rc = write_atomic_captured(fifo, &p, message, sizeof message);
    struct stat info;
    const int still_fifo = lstat(fifo, &info) == 0 && S_ISFIFO(info.st_mode);
    if (!still_fifo) /* replaced: the reader would wait for a writer for ever */
        kill(reader, SIGKILL);
    assert_true(still_fifo);
    assert_int_equal(rc, 0);
    long count = 0;
    assert_int_equal(read(pipe_fds[0], &count, sizeof count), (ssize_t)sizeof count);
    assert_int_equal(count, 4096);
    int status;
    waitpid(reader, &status, 0);
    close(pipe_fds[0]), close(pipe_fds[1]);
    unlink(fifo);
    assert_int_equal(write_atomic_captured("/dev/null", &p, message, sizeof message), 0);
    assert_int_equal(lstat("/dev/null", &info), 0);
    assert_true(S_ISCHR(info.st_mode));
}

/* /dev/stdout onto a regular file (a shell's redirection) is written in place after what
 * is there; it is not replaced by a new file that the descriptor would not see. */
static void test_output_dev_stdout(void **state)
{
    (void)state;
    const char *path = temp_path(0, "redirected.txt");
    write_text(path, "earlier line\n");
    fflush(stdout);
    const int saved = dup(1), fd = open(path, O_WRONLY | O_APPEND);
    assert_true(saved >= 0 && fd >= 0);
    dup2(fd, 1);
    payload p = {.bytes = 64};
    char message[512];
    const int rc = write_atomic_captured("/dev/stdout", &p, message, sizeof message);
    dup2(saved, 1);
    close(saved), close(fd);
    assert_int_equal(rc, 0);
    struct stat info;
    assert_int_equal(stat(path, &info), 0);
    assert_int_equal((int)info.st_size, 13 + 64);
}

/* Root may write anything: the read-only test runs as nobody. */
static int become_unprivileged(void)
{
    return geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0);
}

/* A read-only file is refused (exit 2) and stays as it was, permissions included. */
static void test_output_read_only(void **state)
{
    (void)state;
    assert_int_equal(chmod(temp_dir, 0777), 0);
    const char *path = temp_path(0, "read-only.txt");
    write_text(path, "earlier result\n");
    assert_int_equal(chmod(path, 0444), 0);
    expect_failed_write_in_child(path, become_unprivileged, 64, CLI_USAGE_ERROR,
                                 "Permission denied", "read-only.txt.tmp.");
    struct stat info;
    assert_int_equal(stat(path, &info), 0);
    assert_int_equal((int)(info.st_mode & 0777), 0444);
    chmod(temp_dir, 0700);
}

/* A writer that is interrupted (SIGINT, SIGTERM) halfway leaves no temporary file and the
 * earlier result whole. */
static int write_then_signal(FILE *out, void *ctx)
{
    payload half = {.bytes = 1 << 16};
    write_payload(out, &half);
    fflush(out);
    raise(*(const int *)ctx);
    return 0;
}

static void test_output_signal_removes_temporary(void **state)
{
    (void)state;
    const char *path = temp_path(0, "interrupted.txt");
    static const int signals[] = {SIGINT, SIGTERM};
    for (size_t k = 0; k < sizeof signals / sizeof signals[0]; k++) {
        write_text(path, "earlier result\n");
        const pid_t child = fork();
        assert_true(child >= 0);
        if (child == 0) {
            signal(signals[k], SIG_DFL);
            cli_write_atomic("test", path, write_then_signal, (void *)&signals[k]);
            _exit(0);
        }
        int status;
        assert_int_equal(waitpid(child, &status, 0), child);
        assert_true(WIFSIGNALED(status) && WTERMSIG(status) == signals[k]);
        char *text = read_text_file(path);
        assert_string_equal(text, "earlier result\n");
        free(text);
        assert_int_equal(count_prefixed(temp_dir, "interrupted.txt.tmp."), 0);
    }
}

/* A NaN or Inf in a result is named, with its element. */
static void test_check_finite(void **state)
{
    (void)state;
    const double ok[2] = {1.0, -2.0}, bad[3] = {0.0, 0.0, INFINITY};
    assert_int_equal(cli_check_finite("test", "tau", ok, 2), 0);
    assert_int_equal(cli_check_finite("test", "tau", bad, 3), CLI_RUNTIME_ERROR);
}

/* The disk fills up (RLIMIT_FSIZE of 8 KiB in a child): an error naming the reason, the
 * earlier file intact, no temporary file. */
static void test_write_atomic_file_size_limit(void **state)
{
    (void)state;
    const char *path = temp_path(0, "limited.txt");
    write_text(path, "earlier result\n");
    expect_failed_write_in_child(path, limit_file_size, 1 << 20, CLI_RUNTIME_ERROR,
                                 "File too large", "limited.txt.tmp.");
}

/* A real full disk: a 64 KiB tmpfs (needs root and permission to mount; skipped
 * otherwise). ENOSPC: an error, the earlier file intact, no temporary file. */
static void test_write_atomic_full_disk(void **state)
{
    (void)state;
    const char *mount_point = temp_path(1, "tiny-tmpfs");
    assert_int_equal(mkdir(mount_point, 0700), 0);
    if (mount("tmpfs", mount_point, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k") != 0) {
        print_message("full disk: cannot mount a tmpfs (%s); RLIMIT_FSIZE test only\n",
                      strerror(errno));
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
        cmocka_unit_test(test_output_through_symlink),
        cmocka_unit_test(test_output_fifo_and_device),
        cmocka_unit_test(test_output_dev_stdout),
        cmocka_unit_test(test_output_read_only),
        cmocka_unit_test(test_output_signal_removes_temporary),
        cmocka_unit_test(test_check_finite),
    };
    return cmocka_run_group_tests_name("cli helpers", tests, make_temp_dir, remove_temp_dir);
}
