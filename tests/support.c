#include "support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

double rel_error(const double *a, const double *b, int n, double floor)
{
    double diff = 0.0, norm = 0.0;
    for (int k = 0; k < n; k++) {
        diff += (a[k] - b[k]) * (a[k] - b[k]);
        norm += b[k] * b[k];
    }
    norm = sqrt(norm);
    return sqrt(diff) / (norm > floor ? norm : floor);
}

void assert_close_at(const double *a, const double *b, int n, double tol, const char *label,
                     const char *file, int line)
{
    double err = rel_error(a, b, n, 1e-300);
    if (!(err <= tol)) {
        print_error("%s: relative error %.3e > %.1e\n", label, err, tol);
        _fail(file, line);
    }
}

mbd_model *load_model(const char *spec)
{
    char err[512];
    mbd_model *model = mbd_model_load(spec, err, sizeof err);
    if (!model)
        print_error("cannot load %s: %s\n", spec, err);
    assert_non_null(model);
    return model;
}

double test_uniform(uint64_t *state, double lo, double hi)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    return lo + (hi - lo) * (double)(x >> 11) * 0x1.0p-53;
}

void test_fill(uint64_t *state, double *x, int n, double lo, double hi)
{
    for (int k = 0; k < n; k++)
        x[k] = test_uniform(state, lo, hi);
}

static void random_unit(uint64_t *s, double *a)
{
    double n;
    do {
        test_fill(s, a, 3, -1.0, 1.0);
        n = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
    } while (n < 0.2 || n > 1.0);
    for (int k = 0; k < 3; k++)
        a[k] /= n;
}

/* R = rotation by a random angle about a random axis. */
static void random_rotation(uint64_t *s, double R[3][3])
{
    double a[3];
    random_unit(s, a);
    const double t = test_uniform(s, -3.0, 3.0), c = cos(t), sn = sin(t), k = 1 - c;
    const double M[3][3] = {{c + k * a[0] * a[0], k * a[0] * a[1] - sn * a[2], k * a[0] * a[2] + sn * a[1]},
                            {k * a[1] * a[0] + sn * a[2], c + k * a[1] * a[1], k * a[1] * a[2] - sn * a[0]},
                            {k * a[2] * a[0] - sn * a[1], k * a[2] * a[1] + sn * a[0], c + k * a[2] * a[2]}};
    memcpy(R, M, sizeof M);
}

/* Principal moments that satisfy the triangle inequality, turned by a random rotation. */
static void random_inertia(uint64_t *s, double I[3][3])
{
    double R[3][3];
    const double a = test_uniform(s, 0.2, 1.0), b = test_uniform(s, 0.2, 1.0);
    const double d[3] = {a, b, test_uniform(s, fabs(a - b) + 0.05, a + b - 0.05)};
    random_rotation(s, R);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            I[i][j] = 0.0;
            for (int k = 0; k < 3; k++)
                I[i][j] += R[i][k] * d[k] * R[j][k];
        }
    for (int i = 0; i < 3; i++) /* exact symmetry */
        for (int j = 0; j < i; j++)
            I[i][j] = I[j][i];
}

static int random_parent(uint64_t *s, int i, tree_shape shape)
{
    switch (shape) {
    case SHAPE_CHAIN:
        return i - 1;
    case SHAPE_BINARY:
        return i == 0 ? -1 : (i - 1) / 2;
    default:
        return (int)floor(test_uniform(s, -1.0, (double)i));
    }
}

mbd_model *random_model(uint64_t seed, int nb, int type, tree_shape shape)
{
    uint64_t s = seed * 2654435761u + 88172645463325252ull;
    mbd_body_def *defs = calloc((size_t)nb, sizeof *defs);
    char (*names)[16] = calloc((size_t)nb, sizeof *names);
    for (int i = 0; i < nb; i++) {
        mbd_body_def *b = &defs[i];
        snprintf(names[i], sizeof names[i], "b%d", i);
        b->name = names[i];
        b->parent = random_parent(&s, i, shape);
        b->joint = type >= 0 ? (mbd_joint_type)type
                             : (mbd_joint_type)(int)test_uniform(&s, 0.0, MBD_JOINT_TYPE_COUNT);
        random_unit(&s, b->axes[0]);
        do
            random_unit(&s, b->axes[1]);
        while (fabs(b->axes[0][0] * b->axes[1][0] + b->axes[0][1] * b->axes[1][1] +
                    b->axes[0][2] * b->axes[1][2]) > 0.9);
        test_fill(&s, b->origin, 3, -0.4, 0.4);
        random_rotation(&s, b->rotation);
        b->mass = test_uniform(&s, 0.5, 2.0);
        test_fill(&s, b->com, 3, -0.3, 0.3);
        random_inertia(&s, b->inertia);
    }
    char err[512];
    const double gravity[3] = {0.3, -9.81, 0.2};
    mbd_model *model = mbd_model_build("random", gravity, nb, defs, err, sizeof err);
    if (!model)
        print_error("random_model: %s\n", err);
    assert_non_null(model);
    free(names);
    free(defs);
    return model;
}

char *read_text_file(const char *path)
{
    FILE *in = fopen(path, "rb");
    assert_non_null(in);
    size_t size = 0, cap = 4096;
    char *text = malloc(cap);
    for (size_t n; (n = fread(text + size, 1, cap - size - 1, in)) > 0;) {
        size += n;
        if (cap - size - 1 == 0)
            text = realloc(text, cap *= 2);
    }
    text[size] = '\0';
    fclose(in);
    return text;
}

cli_result mbd_run(const char *args)
{
    const char *binary = getenv("MBD");
    char dir[] = "/tmp/mbd-cli-XXXXXX", command[8192], out[64], err[64];
    assert_non_null(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(err, sizeof err, "%s/err", dir);
    snprintf(command, sizeof command, "%s %s >%s 2>%s </dev/null", binary && *binary ? binary : "./mbd",
             args, out, err);
    const int rc = system(command);
    assert_true(rc != -1 && WIFEXITED(rc));
    cli_result result = {WEXITSTATUS(rc), read_text_file(out), read_text_file(err)};
    unlink(out);
    unlink(err);
    rmdir(dir);
    return result;
}

void cli_result_free(cli_result *result)
{
    free(result->out);
    free(result->err);
}

const char *temp_file_with(const char *text, const char *suffix)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/mbd-test-XXXXXX%s", suffix);
    const int fd = mkstemps(path, (int)strlen(suffix));
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

/* Runs args; expects exit 2 and one stderr line containing every needle. */
void expect_rejected(const char *args, const char *const *needles)
{
    cli_result r = mbd_run(args);
    if (r.status != 2)
        print_error("mbd %s: exit %d, stderr: %s\n", args, r.status, r.err);
    assert_int_equal(r.status, 2);
    assert_string_equal(r.out, "");
    const char *newline = strchr(r.err, '\n');
    assert_non_null(newline);
    assert_int_equal(newline[1], '\0'); /* exactly one line */
    for (const char *const *n = needles; *n; n++)
        if (!strstr(r.err, *n)) {
            print_error("mbd %s: stderr lacks '%s': %s", args, *n, r.err);
            fail();
        }
    cli_result_free(&r);
}

void expect_model_rejected(const char *path, const char *field, const char *value)
{
    char args[256];
    snprintf(args, sizeof args, "fd %s", path);
    expect_rejected(args, (const char *const[]){path, field, value, NULL});
    unlink(path);
}
