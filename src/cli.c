/* cli.c: option parsing, vector arguments, JSON output and atomic writes for mbd. */
#include "cli.h"

#include "mbd_plugin.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static cli_flag *find_flag(cli_flag *flags, const char *name)
{
    for (cli_flag *f = flags; f->name; f++)
        if (strcmp(f->name, name) == 0)
            return f;
    return NULL;
}

int cli_parse(const char *cmd, int argc, char **argv, int first, cli_flag *flags, const char **pos,
              int max_pos, int *npos)
{
    *npos = 0;
    for (int k = first; k < argc; k++) {
        const char *arg = argv[k];
        if (strncmp(arg, "--", 2) != 0) {
            if (*npos == max_pos) {
                fprintf(stderr, "mbd %s: unexpected argument '%s'\n", cmd, arg);
                return CLI_USAGE_ERROR;
            }
            pos[(*npos)++] = arg;
            continue;
        }
        cli_flag *flag = find_flag(flags, arg);
        if (!flag) {
            fprintf(stderr, "mbd %s: unknown flag '%s' (flags:", cmd, arg);
            for (const cli_flag *f = flags; f->name; f++)
                fprintf(stderr, " %s", f->name);
            fprintf(stderr, "%s)\n", flags->name ? "" : " none");
            return CLI_USAGE_ERROR;
        }
        if (flag->value) {
            fprintf(stderr, "mbd %s: flag '%s' given twice\n", cmd, arg);
            return CLI_USAGE_ERROR;
        }
        if (flag->kind == CLI_SWITCH) {
            flag->value = "1";
        } else if (k + 1 < argc) {
            flag->value = argv[++k];
        } else {
            fprintf(stderr, "mbd %s: flag '%s' needs a value\n", cmd, arg);
            return CLI_USAGE_ERROR;
        }
        if (flag->kind == CLI_OUTPUT && cli_check_output(cmd, flag->value))
            return CLI_USAGE_ERROR;
    }
    return 0;
}

/* Loads one plugin for cli_load_plugins; where names what gave it. */
static int load_plugin(const char *prog, const char *where, const char *path)
{
    char err[512];
    if (mbd_plugin_load(path, err, sizeof err) == MBD_OK)
        return 0;
    fprintf(stderr, "%s: %s: %s\n", prog, where, err);
    return CLI_USAGE_ERROR;
}

int cli_load_plugins(const char *prog, int *argc, char **argv, int first)
{
    const char *listed = getenv("MBD_PLUGINS");
    for (const char *at = listed; at && *at;) {
        const size_t length = strcspn(at, ":");
        char path[4096];
        snprintf(path, sizeof path, "%.*s", (int)length, at);
        if (length > 0 && load_plugin(prog, "MBD_PLUGINS", path))
            return CLI_USAGE_ERROR;
        at += length + (at[length] == ':');
    }
    int kept = first;
    for (int k = first; k < *argc; k++) {
        if (strcmp(argv[k], "--plugin") != 0) {
            argv[kept++] = argv[k];
            continue;
        }
        if (k + 1 == *argc) {
            fprintf(stderr, "%s: flag '--plugin' needs a value (a plugin library)\n", prog);
            return CLI_USAGE_ERROR;
        }
        if (load_plugin(prog, "--plugin", argv[++k]))
            return CLI_USAGE_ERROR;
    }
    *argc = kept;
    argv[kept] = NULL;
    return 0;
}

int cli_wants_help(int argc, char **argv, int first)
{
    for (int k = first; k < argc; k++)
        if (strcmp(argv[k], "--help") == 0 || strcmp(argv[k], "-h") == 0)
            return 1;
    return 0;
}

const char *cli_get(const cli_flag *flags, const char *name)
{
    return find_flag((cli_flag *)flags, name)->value;
}

/* strtod over the whole token, finite only. */
static int parse_double(const char *text, const char *end, double *out)
{
    char *stop;
    errno = 0;
    *out = strtod(text, &stop);
    return stop != text && stop == end && errno == 0 && isfinite(*out) ? 0 : -1;
}

int cli_vector(const char *cmd, const cli_flag *flags, const char *name, int n, double *out)
{
    const char *text = cli_get(flags, name);
    memset(out, 0, (size_t)n * sizeof *out);
    if (!text)
        return 0;
    int count = 0;
    for (const char *p = text;; count++) {
        const char *comma = strchr(p, ',');
        const char *end = comma ? comma : p + strlen(p);
        double x;
        char token[64];
        size_t len = (size_t)(end - p);
        if (len == 0 || len >= sizeof token ||
            (memcpy(token, p, len), token[len] = '\0', parse_double(token, token + len, &x))) {
            fprintf(stderr, "mbd %s: %s: element %d is not a finite number: '%.*s'\n", cmd, name,
                    count, (int)(len < 40 ? len : 40), p);
            return CLI_USAGE_ERROR;
        }
        if (count < n)
            out[count] = x;
        if (!comma)
            break;
        p = comma + 1;
    }
    if (count + 1 != n) {
        fprintf(stderr, "mbd %s: %s: expected %d numbers, got %d: '%.60s'\n", cmd, name, n,
                count + 1, text);
        return CLI_USAGE_ERROR;
    }
    return 0;
}

int cli_positions(const char *cmd, const cli_flag *flags, const char *name, const mbd_model *model,
                  double *q)
{
    if (!cli_get(flags, name)) {
        mbd_neutral_positions(model, q);
        return 0;
    }
    int rc = cli_vector(cmd, flags, name, mbd_model_nq(model), q);
    if (rc == 0 && mbd_normalize_positions(model, q) != MBD_OK) {
        fprintf(stderr, "mbd %s: %s: a spherical or free joint's quaternion (w, x, y, z) is zero\n",
                cmd, name);
        rc = CLI_USAGE_ERROR;
    }
    return rc;
}

int cli_number(const char *cmd, const cli_flag *flags, const char *name, double lo, double hi,
               double def, double *out)
{
    const char *text = cli_get(flags, name);
    *out = def;
    if (!text)
        return 0;
    if (parse_double(text, text + strlen(text), out) || *out < lo || *out > hi) {
        fprintf(stderr, "mbd %s: %s: expected a number in [%g, %g], got '%.60s'\n", cmd, name, lo,
                hi, text);
        return CLI_USAGE_ERROR;
    }
    return 0;
}

int cli_integer(const char *cmd, const cli_flag *flags, const char *name, double lo, double hi,
                double def, long long *out)
{
    double x;
    int rc = cli_number(cmd, flags, name, lo, hi, def, &x);
    if (!rc && x != floor(x)) {
        fprintf(stderr, "mbd %s: %s: expected an integer, got '%.60s'\n", cmd, name,
                cli_get(flags, name));
        rc = CLI_USAGE_ERROR;
    }
    *out = (long long)x;
    return rc;
}

mbd_model *cli_load_model(const char *cmd, const char *path, const cli_flag *flags)
{
    const cli_flag *floating = flags ? find_flag((cli_flag *)flags, "--floating-base") : NULL;
    const mbd_load_options options = {.floating_base = floating && floating->value};
    char err[MBD_ERROR_SIZE];
    mbd_model *model;
    mbd_model_load(path, &options, &model, err, sizeof err);
    if (!model)
        fprintf(stderr, "mbd %s: %s\n", cmd, err);
    else if (mbd_model_left_out(model) && strcmp(cmd, "info") != 0) /* info lists it */
        fprintf(stderr, "mbd %s: %s: left out of the dynamics: %s\n", cmd, path,
                mbd_model_left_out(model));
    return model;
}

int cli_open_model(const char *cmd, int argc, char **argv, cli_flag *flags, mbd_model **model)
{
    const char *pos[1];
    int npos, rc = cli_parse(cmd, argc, argv, 2, flags, pos, 1, &npos);
    if (rc)
        return rc;
    if (npos != 1) {
        fprintf(stderr, "mbd %s: missing MODEL (a model file or a generator spec)\n", cmd);
        return CLI_USAGE_ERROR;
    }
    *model = cli_load_model(cmd, pos[0], flags);
    return *model ? 0 : CLI_USAGE_ERROR;
}

const mbd_solver *cli_solver(const char *cmd, const cli_flag *flags, const char *def)
{
    const char *name = cli_get(flags, "--solver");
    const mbd_solver *solver = mbd_solver_find(name ? name : def);
    if (!solver) {
        fprintf(stderr, "mbd %s: --solver: unknown solver '%.60s' (one of:", cmd, name);
        for (int k = 0; k < mbd_solver_count(); k++)
            fprintf(stderr, " %s", mbd_solver_name(mbd_solver_at(k)));
        fprintf(stderr, ")\n");
    }
    return solver;
}

int cli_check_loop_solver(const char *cmd, const mbd_model *model, const mbd_solver *solver)
{
    if (mbd_model_nloops(model) == 0 || mbd_solver_closes_loops(solver))
        return 0;
    fprintf(
        stderr,
        "mbd %s: --solver: '%s' has no route for closed loops; model %s has %d (use dense or bodies)\n",
        cmd, mbd_solver_name(solver), mbd_model_name(model), mbd_model_nloops(model));
    return CLI_USAGE_ERROR;
}

int cli_check_derivatives_model(const char *cmd, const mbd_model *model)
{
    if (!mbd_model_has_friction(model) && mbd_model_nloops(model) == 0)
        return 0;
    fprintf(stderr, "mbd %s: model %s has %s: derivatives need a model without friction or loops\n",
            cmd, mbd_model_name(model), mbd_model_nloops(model) ? "loops" : "joint friction");
    return CLI_USAGE_ERROR;
}

int cli_baumgarte(const char *cmd, const cli_flag *flags, const mbd_model *model,
                  mbd_baumgarte *out)
{
    *out = (mbd_baumgarte){CLI_BAUMGARTE_DEFAULT, CLI_BAUMGARTE_DEFAULT};
    if (!cli_get(flags, "--baumgarte"))
        return 0;
    if (mbd_model_nloops(model) == 0) {
        fprintf(stderr, "mbd %s: --baumgarte: model %s has no loops to stabilize\n", cmd,
                mbd_model_name(model));
        return CLI_USAGE_ERROR;
    }
    double ab[2];
    int rc = cli_vector(cmd, flags, "--baumgarte", 2, ab);
    if (rc == 0 && (ab[0] < 0.0 || ab[1] < 0.0)) {
        fprintf(stderr, "mbd %s: --baumgarte: expected ALPHA,BETA >= 0, got '%.60s'\n", cmd,
                cli_get(flags, "--baumgarte"));
        rc = CLI_USAGE_ERROR;
    }
    *out = (mbd_baumgarte){ab[0], ab[1]};
    return rc;
}

void json_vector(FILE *out, const double *x, int n)
{
    fputc('[', out);
    for (int k = 0; k < n; k++)
        fprintf(out, "%s%.17g", k ? ", " : "", x[k]);
    fputc(']', out);
}

void json_key_vector(FILE *out, const char *key, const double *x, int n, int last)
{
    fprintf(out, "\"%s\": ", key);
    json_vector(out, x, n);
    fputs(last ? "" : ", ", out);
}

/* A matrix as rows: JSON (a list of rows, full precision) or text (one row a line, 12
 * digits). */
void cli_print_matrix(const char *key, const double *M, int n, int json, int last)
{
    printf(json ? "\"%s\": [" : "%s =\n", key);
    for (int r = 0; r < n; r++) {
        if (json) {
            printf(r ? ", " : "");
            json_vector(stdout, M + (size_t)r * n, n);
        } else {
            for (int c = 0; c < n; c++)
                printf(" % .12g", M[(size_t)r * n + c]);
            printf("\n");
        }
    }
    printf(json ? (last ? "]" : "], ") : "");
}

void cli_state_columns(FILE *out, const mbd_model *model, int momenta)
{
    static const char *const kinds[] = {"q", "qd", "p"};
    for (int kind = 0; kind < (momenta ? 3 : 2); kind++)
        for (int i = 0; i < mbd_model_nbodies(model); i++) {
            const mbd_joint_type joint = mbd_model_body(model, i)->joint;
            const int n = kind == 0 ? mbd_joint_type_nq(joint) : mbd_joint_type_nv(joint);
            for (int k = 0; k < n; k++) {
                fprintf(out, ",%s.%s", mbd_model_joint_name(model, i), kinds[kind]);
                if (n > 1)
                    fprintf(out, "%d", k);
            }
        }
}

int cli_check_finite(const char *cmd, const char *quantity, const double *x, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (!isfinite(x[k])) {
            fprintf(stderr, "mbd %s: %s: element %zu is %g: %s\n", cmd, quantity, k, x[k],
                    mbd_strerror(MBD_ENONFINITE));
            return CLI_RUNTIME_ERROR;
        }
    return 0;
}

int cli_fail(const char *cmd, const char *what, int status)
{
    fprintf(stderr, "mbd %s: %s: %s\n", cmd, what, mbd_strerror(status));
    return CLI_RUNTIME_ERROR;
}

int cli_fail_solve(const char *cmd, const char *what, const mbd_model *model, int body, int status)
{
    if ((status != MBD_ESINGULAR && status != MBD_EFRICTION) || body < 0)
        return cli_fail(cmd, what, status);
    const mbd_body_def *def = mbd_model_body(model, body);
    fprintf(stderr, "mbd %s: %s: %s at the %s joint of body %d (\"%s\"): %s\n", cmd, what,
            mbd_strerror(status), mbd_joint_type_name(def->joint), body, def->name,
            status == MBD_ESINGULAR ? "is the subtree it moves massless?"
                                    : "is its Coulomb coefficient too large (Painleve's paradox)?");
    return CLI_RUNTIME_ERROR;
}

int cli_fail_solver(const char *cmd, const char *what, const mbd_solver *solver, int status)
{
    const char *plugin = mbd_solver_plugin_path(solver);
    fprintf(stderr, "mbd %s: %s: solver '%s'%s%s%s: %s%s\n", cmd, what, mbd_solver_name(solver),
            plugin ? " (plugin " : "", plugin ? plugin : "", plugin ? ")" : "",
            mbd_strerror(status),
            plugin && status == MBD_EINVAL ? " (or its forward returned a code that is not an "
                                             "mbd status)"
                                           : "");
    return CLI_RUNTIME_ERROR;
}

/* The directory that holds path (malloc'ed; NULL when out of memory). */
static char *directory_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
}

/* fsync of the directory that holds path, so that a rename survives a crash; best effort
 * (some file systems refuse to sync a directory). */
static void sync_parent_directory(const char *path)
{
    char *dir = directory_of(path);
    const int fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(dir);
}

/* ---- output files ----
 * A result replaces a regular file only whole: written to a temporary file beside it and
 * renamed onto it. What is not a regular file (a FIFO, a device, /dev/stdout) is written in
 * place, never replaced by a plain file. */

/* The temporary files that exist now, for cli_remove_temporaries to unlink on a signal;
 * one beyond the slots (never, in practice) is only not cleaned up on a signal. */
#define MAX_TEMPORARIES 8
static char *_Atomic temporaries[MAX_TEMPORARIES];

void cli_remove_temporaries(void)
{
    for (int k = 0; k < MAX_TEMPORARIES; k++) {
        char *name = atomic_load(&temporaries[k]);
        if (name)
            unlink(name);
    }
}

static void remove_temporaries_and_die(int signo)
{
    cli_remove_temporaries();
    signal(signo, SIG_DFL);
    raise(signo); /* delivered as the handler returns: the usual death by signal */
}

/* Signals that end the process by default remove the temporary files first; a program
 * that handles them itself (mbd-bench) keeps its handler and calls cli_remove_temporaries. */
static void catch_ending_signals(void)
{
    static const int ending[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    for (size_t k = 0; k < sizeof ending / sizeof *ending; k++) {
        struct sigaction old;
        if (sigaction(ending[k], NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
            old.sa_handler == SIG_DFL)
            signal(ending[k], remove_temporaries_and_die);
    }
}

static void track_temporary(char *name, int tracked)
{
    for (int k = 0; k < MAX_TEMPORARIES; k++) {
        char *expected = tracked ? NULL : name;
        if (atomic_compare_exchange_strong(&temporaries[k], &expected, tracked ? name : NULL))
            return;
    }
}

/* Reports a bad output path; returns CLI_USAGE_ERROR. */
static int output_error(const char *cmd, const char *path, const char *what, int error)
{
    fprintf(stderr, "mbd %s: output '%s': %s%s%s\n", cmd, path, what, error ? ": " : "",
            error ? strerror(error) : "");
    return CLI_USAGE_ERROR;
}

/* The directory of path must take a new file (the temporary one, or path itself). */
static int check_directory_of(const char *cmd, const char *path, const char *file)
{
    char *dir = directory_of(file);
    const int error = !dir ? ENOMEM : access(dir, W_OK | X_OK) != 0 ? errno : 0;
    free(dir);
    return error ? output_error(cmd, path, "cannot create a file in its directory", error) : 0;
}

/* A path that names an open descriptor whatever its file is (/dev/stdout, /dev/fd/3,
 * /proc/self/fd/1): written in place (appended), so that a shell redirection behind it,
 * even onto a regular file, keeps what is already there and its place. */
static int names_a_stream(const char *path)
{
    return strcmp(path, "/dev/stdout") == 0 || strcmp(path, "/dev/stderr") == 0 ||
           strncmp(path, "/dev/fd/", 8) == 0 ||
           (strncmp(path, "/proc/", 6) == 0 && strstr(path, "/fd/"));
}

/* How path is written: 0 with *target the file to replace through a temporary file (a
 * regular file we may write, or a new one), or with *target NULL to write in place; else
 * CLI_USAGE_ERROR (reported, naming path). */
static int resolve_output(const char *cmd, const char *path, char **target)
{
    struct stat info;
    *target = NULL;
    if (!path[0])
        return output_error(cmd, path, "an empty path", 0);
    if (stat(path, &info) != 0) {
        const int error = errno;
        if (error != ENOENT)
            return output_error(cmd, path, "cannot reach it", error);
        if (lstat(path, &info) == 0)
            return output_error(cmd, path, "a symbolic link to nothing", 0);
        if (check_directory_of(cmd, path, path))
            return CLI_USAGE_ERROR;
        *target = strdup(path);
    } else if (S_ISDIR(info.st_mode)) {
        return output_error(cmd, path, "a directory", 0);
    } else if (access(path, W_OK) != 0) {
        return output_error(cmd, path, "cannot write it", errno);
    } else if (!S_ISREG(info.st_mode) || names_a_stream(path)) {
        return 0;
    } else if ((*target = realpath(path, NULL)) && check_directory_of(cmd, path, *target)) {
        free(*target);
        *target = NULL;
        return CLI_USAGE_ERROR;
    }
    return *target ? 0 : output_error(cmd, path, "cannot resolve it", errno ? errno : ENOMEM);
}

int cli_check_output(const char *cmd, const char *path)
{
    char *target;
    const int rc = resolve_output(cmd, path, &target);
    free(target);
    return rc;
}

int cli_check_output_dir(const char *cmd, const char *dir)
{
    struct stat info;
    if (stat(dir, &info) != 0)
        return cli_check_output(cmd, dir); /* a new one: its parent must take it */
    if (!S_ISDIR(info.st_mode))
        return output_error(cmd, dir, "not a directory", 0);
    if (access(dir, W_OK | X_OK) != 0)
        return output_error(cmd, dir, "cannot create files in it", errno);
    return 0;
}

/* The temporary file sits beside the target (same file system, so rename is atomic) and
 * takes its permissions (a new one: 0644, results are for everyone to read). */
static int open_temporary(const char *cmd, cli_atomic *file)
{
    const size_t len = strlen(file->target);
    struct stat info;
    const mode_t mode = stat(file->target, &info) == 0 ? info.st_mode & 07777 : 0644;
    if (!(file->tmp = malloc(len + 16)))
        return cli_fail(cmd, file->path, MBD_ENOMEM);
    snprintf(file->tmp, len + 16, "%s.tmp.XXXXXX", file->target);
    errno = 0;
    file->fd = mkstemp(file->tmp);
    if (file->fd < 0) {
        fprintf(stderr, "mbd %s: %s: cannot create a temporary file beside it: %s\n", cmd,
                file->path, strerror(errno));
        free(file->tmp);
        file->tmp = NULL;
        return CLI_RUNTIME_ERROR;
    }
    track_temporary(file->tmp, 1);
    fchmod(file->fd, mode);
    return 0;
}

int cli_atomic_open(const char *cmd, const char *path, cli_atomic *file)
{
    *file = (cli_atomic){.path = path, .fd = -1};
    int rc = resolve_output(cmd, path, &file->target);
    if (rc || (file->target && (rc = open_temporary(cmd, file)))) {
        free(file->target);
        file->target = NULL;
        return rc;
    }
    catch_ending_signals();
    if (!file->target && (file->fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)) < 0)
        return output_error(cmd, path, "cannot open it", errno);
    return 0;
}

/* In place (a FIFO, a device) the bytes go out in order, as they come. */
int cli_atomic_write_at(const char *cmd, cli_atomic *file, long long offset, const void *data,
                        size_t size)
{
    if (!file->tmp && offset != file->written) {
        fprintf(stderr, "mbd %s: %s: cannot write out of order to a FIFO or device\n", cmd,
                file->path);
        return CLI_RUNTIME_ERROR;
    }
    for (size_t done = 0; done < size;) {
        errno = 0;
        const char *from = (const char *)data + done;
        const ssize_t n =
            file->tmp ? pwrite(file->fd, from, size - done, (off_t)(offset + (long long)done))
                      : write(file->fd, from, size - done);
        if (n <= 0) {
            fprintf(stderr, "mbd %s: %s: cannot write: %s\n", cmd, file->path,
                    errno ? strerror(errno) : "nothing written");
            return CLI_RUNTIME_ERROR;
        }
        done += (size_t)n;
    }
    file->written += (long long)size;
    return 0;
}

/* Closes the descriptor if still open, then renames when no step failed (step "");
 * otherwise reports the step (unless NULL: reported already) and removes the temporary
 * file. Written in place, there is nothing to rename or remove. */
static int atomic_finish(const char *cmd, cli_atomic *file, const char *step, int error)
{
    if (file->fd >= 0)
        close(file->fd);
    file->fd = -1;
    int rc = CLI_RUNTIME_ERROR;
    if (step && !step[0]) {
        if (!file->tmp || rename(file->tmp, file->target) == 0)
            rc = 0;
        else
            error = errno, step = "cannot rename the temporary file onto it";
    }
    if (rc && step)
        fprintf(stderr, "mbd %s: %s: %s: %s\n", cmd, file->path, step,
                error ? strerror(error) : "write failed");
    if (file->tmp && rc)
        unlink(file->tmp);
    else if (file->tmp)
        sync_parent_directory(file->target);
    track_temporary(file->tmp, 0);
    free(file->tmp);
    free(file->target);
    file->tmp = file->target = NULL;
    return rc;
}

int cli_atomic_close(const char *cmd, cli_atomic *file, int status)
{
    if (status == 0 && file->tmp && file->fd >= 0 && fsync(file->fd) != 0)
        return atomic_finish(cmd, file, "cannot sync", errno);
    return atomic_finish(cmd, file, status == 0 ? "" : NULL, 0);
}

/* On any failure (write_fn's, a short write, a full disk, fsync, rename) the temporary
 * file is removed and path keeps its earlier content. The message names the first
 * failing step's errno. */
int cli_write_atomic(const char *cmd, const char *path, int (*write_fn)(FILE *, void *), void *ctx)
{
    cli_atomic file;
    int rc = cli_atomic_open(cmd, path, &file);
    if (rc)
        return rc;
    int error = 0;
    const char *step = "";
    FILE *out = fdopen(file.fd, "w");
    if (!out)
        return atomic_finish(cmd, &file, "cannot write", errno);
    file.fd = -1; /* fclose closes it */
    errno = 0;
    const int written = write_fn(out, ctx);
    if (written == CLI_RUNTIME_ERROR)
        step = NULL; /* the writer's own failure, which it reported */
    else if (written != 0 || ferror(out))
        error = errno, step = "cannot write";
    else if (fflush(out) != 0 || ferror(out))
        error = errno, step = "cannot write";
    else if (file.tmp && fsync(fileno(out)) != 0)
        error = errno, step = "cannot sync";
    errno = 0;
    if (fclose(out) != 0 && step && !step[0])
        error = errno, step = "cannot close";
    return atomic_finish(cmd, &file, step, error);
}
