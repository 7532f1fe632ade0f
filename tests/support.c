#include "support.h"

#include "mbd_plugin.h"

#include <lapacke.h>
#undef I /* complex.h's imaginary unit, from lapacke.h: I is an inertia here */
#include <float.h>
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

mbd_model *build_tree(const char *name, const double gravity[3], int nbodies,
                      const mbd_body_def *bodies, char *err, size_t err_size)
{
    mbd_model_def def = {.name = name, .nbodies = nbodies, .bodies = bodies};
    memcpy(def.gravity, gravity, sizeof def.gravity);
    mbd_model *model;
    const int status = mbd_model_build(&def, &model, err, err_size);
    assert_true(status == MBD_OK ? model != NULL : status < 0 && model == NULL);
    return model;
}

int rebuild_with_loops(const mbd_model *tree, int nloops, const mbd_loop_def *loops,
                       mbd_model **closed, char *err, size_t err_size)
{
    const int nb = mbd_model_nbodies(tree);
    mbd_body_def *bodies = malloc((size_t)nb * sizeof *bodies);
    assert_non_null(bodies);
    for (int i = 0; i < nb; i++)
        bodies[i] = *mbd_model_body(tree, i);
    mbd_model_def def = {.name = mbd_model_name(tree),
                         .nbodies = nb,
                         .bodies = bodies,
                         .nloops = nloops,
                         .loops = loops};
    mbd_model_gravity(tree, def.gravity);
    const int status = mbd_model_build(&def, closed, err, err_size);
    free(bodies);
    return status;
}

mbd_model *load_model(const char *spec)
{
    char err[512];
    mbd_model *model;
    mbd_model_load(spec, NULL, &model, err, sizeof err);
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
    const double M[3][3] = {
        {c + k * a[0] * a[0], k * a[0] * a[1] - sn * a[2], k * a[0] * a[2] + sn * a[1]},
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
    char(*names)[16] = calloc((size_t)nb, sizeof *names);
    for (int i = 0; i < nb; i++) {
        mbd_body_def *b = &defs[i];
        snprintf(names[i], sizeof names[i], "b%d", i);
        b->name = names[i];
        b->parent = random_parent(&s, i, shape);
        const int ntypes = type == MIXED_COORDINATE_JOINTS ? MBD_CARDAN + 1 : MBD_JOINT_TYPE_COUNT;
        b->joint =
            type >= 0 ? (mbd_joint_type)type : (mbd_joint_type)(int)test_uniform(&s, 0.0, ntypes);
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
    const mbd_model_def def = {
        .name = "random", .gravity = {0.3, -9.81, 0.2}, .nbodies = nb, .bodies = defs};
    mbd_model *model;
    mbd_model_build(&def, &model, err, sizeof err);
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

cli_result shell_run(const char *command)
{
    char dir[] = "/tmp/mbd-cli-XXXXXX", line[8192], out[64], err[64];
    assert_non_null(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(err, sizeof err, "%s/err", dir);
    snprintf(line, sizeof line, "%s >%s 2>%s </dev/null", command, out, err);
    const int rc = system(line);
    assert_true(rc != -1 && WIFEXITED(rc));
    cli_result result = {WEXITSTATUS(rc), read_text_file(out), read_text_file(err)};
    unlink(out);
    unlink(err);
    rmdir(dir);
    return result;
}

const char *mbd_binary(void)
{
    const char *binary = getenv("MBD");
    return binary && *binary ? binary : "./mbd";
}

cli_result mbd_run(const char *args)
{
    char command[8192];
    snprintf(command, sizeof command, "%s %s", mbd_binary(), args);
    return shell_run(command);
}

void cli_result_free(cli_result *result)
{
    free(result->out);
    free(result->err);
}

char temp_dir[64];

int make_temp_dir(void **state)
{
    (void)state;
    snprintf(temp_dir, sizeof temp_dir, "/tmp/mbd-test-XXXXXX");
    return mkdtemp(temp_dir) ? 0 : -1;
}

int remove_temp_dir(void **state)
{
    (void)state;
    char command[128];
    snprintf(command, sizeof command, "rm -rf '%s'", temp_dir);
    return system(command) == 0 ? 0 : -1;
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

/* Runs mbd with args; fails unless it exits with exit_status and prints both fragments
 * (either may be NULL). */
void expect_mbd2(const char *args, int exit_status, const char *fragment, const char *fragment2)
{
    cli_result r = mbd_run(args);
    const char *out = r.status == 0 ? r.out : r.err;
    if (r.status != exit_status || (fragment && !strstr(out, fragment)) ||
        (fragment2 && !strstr(out, fragment2))) {
        print_error("mbd %s: exit %d (expected %d), output \"%s\" (expected \"%s\" and \"%s\")\n",
                    args, r.status, exit_status, out, fragment ? fragment : "",
                    fragment2 ? fragment2 : "");
        cli_result_free(&r);
        fail();
    }
    cli_result_free(&r);
}

void expect_mbd(const char *args, int exit_status, const char *fragment)
{
    expect_mbd2(args, exit_status, fragment, NULL);
}

json_t *run_json(const char *args)
{
    cli_result r = mbd_run(args);
    if (r.status != 0)
        print_error("mbd %s: %s", args, r.err);
    assert_int_equal(r.status, 0);
    json_error_t error;
    json_t *root = json_loads(r.out, 0, &error);
    if (!root)
        print_error("mbd %s: output is not JSON: %s\n", args, error.text);
    assert_non_null(root);
    cli_result_free(&r);
    return root;
}

json_t *load_json_file(const char *path)
{
    json_error_t error;
    json_t *root = json_load_file(path, 0, &error);
    if (!root)
        print_error("%s: %s\n", path, error.text);
    assert_non_null(root);
    return root;
}

state_buf state_new(const mbd_model *model, uint64_t seed)
{
    state_buf s = {.nq = mbd_model_nq(model), .nv = mbd_model_nv(model)};
    double *mem = calloc((size_t)s.nq + 7 * (size_t)s.nv, sizeof *mem);
    assert_non_null(mem);
    s.q = mem;
    s.qd = s.q + s.nq;
    s.tau = s.qd + s.nv;
    s.out = s.tau + s.nv;
    s.out2 = s.out + s.nv;
    s.ref = s.out2 + s.nv;
    s.ref2 = s.ref + s.nv;
    s.p = s.ref2 + s.nv;
    uint64_t x = seed * 7919 + 13;
    test_fill(&x, s.q, s.nq, -1.5, 1.5);
    test_fill(&x, s.qd, s.nv, -1.0, 1.0);
    test_fill(&x, s.tau, s.nv, -1.0, 1.0);
    return s;
}

void state_free(state_buf *s) { free(s->q); }

void check_against_dense_at(const mbd_model *model, const mbd_solver *solver, state_buf *s,
                            double tol, const char *label)
{
    mbd_work *dense, *work;
    mbd_work_new(model, mbd_solver_find("dense"), &dense);
    mbd_work_new(model, solver, &work);
    assert_int_equal(mbd_forward(model, dense, s->q, s->qd, s->tau, s->ref), MBD_OK);
    assert_int_equal(mbd_momentum(model, dense, s->q, s->qd, s->p), MBD_OK);
    assert_int_equal(mbd_forward_momentum(model, dense, s->q, s->p, s->tau, s->out, s->ref2),
                     MBD_OK);
    if (mbd_solver_formulations(solver) & MBD_ACCELERATION) {
        assert_int_equal(mbd_forward(model, work, s->q, s->qd, s->tau, s->out), MBD_OK);
        assert_close(s->out, s->ref, s->nv, tol, label);
    }
    if (mbd_solver_formulations(solver) & MBD_MOMENTUM) {
        assert_int_equal(mbd_forward_momentum(model, work, s->q, s->p, s->tau, s->out, s->out2),
                         MBD_OK);
        assert_close(s->out, s->qd, s->nv, tol, label);
        assert_close(s->out2, s->ref2, s->nv, tol, label);
    }
    mbd_work_free(work);
    mbd_work_free(dense);
}

static int test_plugin_loaded;

int load_test_plugin(const char *path, const char *why)
{
    if (access(path, F_OK) != 0) {
        print_message("[  SKIP    ] %s not built (%s): untested\n", path, why);
        return 0;
    }
    char err[512];
    if (mbd_plugin_load(path, err, sizeof err) != MBD_OK) {
        print_error("%s\n", err);
        return -1;
    }
    test_plugin_loaded = 1;
    return 0;
}

void skip_without_plugin(void)
{
    if (!test_plugin_loaded)
        skip();
}

void check_random_models(int type,
                         void (*check)(const mbd_model *model, uint64_t seed, const char *label))
{
    static const tree_shape shapes[] = {SHAPE_CHAIN, SHAPE_BINARY, SHAPE_RANDOM};
    for (int sh = 0; sh < 3; sh++)
        for (uint64_t seed = 1; seed <= 3; seed++) {
            mbd_model *model = random_model(seed * 31 + (uint64_t)(type + 1), 9, type, shapes[sh]);
            char label[64];
            snprintf(label, sizeof label, "random type %d shape %d seed %d", type, sh, (int)seed);
            check(model, seed, label);
            mbd_model_free(model);
        }
}

void check_batch_bitwise(const mbd_solver *solver)
{
    enum { K = 23 };
    mbd_model *model = load_model("tree:n=9,branching=2,skew=0.5,base=free");
    const int nq = mbd_model_nq(model), nv = mbd_model_nv(model);
    double q[K * 16], qd[K * 15], qdd[K * 15], one[15];
    assert_true(nq <= 16 && nv <= 15);
    uint64_t seed = 9;
    test_fill(&seed, q, K * nq, -2, 2);
    test_fill(&seed, qd, K * nv, -2, 2);
    mbd_batch *batch;
    mbd_work *work;
    assert_int_equal(mbd_batch_new(model, solver, 3, 0, &batch), MBD_OK);
    assert_int_equal(mbd_batch_forward(model, batch, K, q, qd, NULL, qdd, NULL), MBD_OK);
    assert_int_equal(mbd_work_new(model, solver, &work), MBD_OK);
    for (int i = 0; i < K; i++) {
        assert_int_equal(mbd_forward(model, work, q + i * nq, qd + i * nv, NULL, one), MBD_OK);
        assert_memory_equal(one, qdd + i * nv, sizeof *one * nv);
    }
    mbd_work_free(work);
    mbd_batch_free(batch);
    mbd_model_free(model);
}

/* cond(H) = largest / smallest eigenvalue, by LAPACK (dsyev); where the smallest computed
 * eigenvalue is below eps times the largest (even negative: H is then singular to working
 * precision) it counts as that, so that cond is at most 1/eps. */
double condition_number(const mbd_model *model, const double *q)
{
    const int nv = mbd_model_nv(model);
    double *H = malloc(sizeof(double) * (size_t)nv * (size_t)nv),
           *w = malloc(sizeof(double) * (size_t)nv);
    mbd_work *work;
    mbd_work_new(model, NULL, &work);
    assert_int_equal(mbd_mass_matrix(model, work, q, H), MBD_OK);
    assert_int_equal(LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'L', nv, H, nv, w), 0);
    const double cond = w[nv - 1] / fmax(w[0], DBL_EPSILON * w[nv - 1]);
    mbd_work_free(work);
    free(H);
    free(w);
    return cond;
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

const char *temp_path(int slot, const char *name)
{
    static char paths[4][256];
    snprintf(paths[slot], sizeof paths[slot], "%s/%s", temp_dir, name);
    return paths[slot];
}

void write_text(const char *path, const char *text)
{
    FILE *file = fopen(path, "w");
    assert_non_null(file);
    fputs(text, file);
    assert_int_equal(fclose(file), 0);
}

mbd_body_def body_def(const char *name, int parent, mbd_joint_type joint, double mass)
{
    mbd_body_def b = {.name = name, .parent = parent, .joint = joint, .mass = mass};
    b.axes[0][2] = 1.0;
    b.axes[1][1] = 1.0;
    for (int k = 0; k < 3; k++) {
        b.rotation[k][k] = 1.0;
        b.inertia[k][k] = 0.1 * mass;
    }
    b.inertia[2][2] = 0.15 * mass;
    b.com[0] = 0.2;
    return b;
}
