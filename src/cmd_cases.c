/* cmd_cases.c: mbd cases MODEL --states K [--seed S] --out FILE.json, reference data for
 * other libraries (docs/reference-data.md): K random states and what the dense reference
 * computes at each. mbd check --cases replays such a file (models/cases.c reads it). */
#include "cli.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The ranges the file records: every scalar coordinate (angle or length) in [-Q, Q], the
 * quaternions uniform on the unit sphere, every rate in [-QD, QD], force in [-TAU, TAU]. */
#define Q_RANGE M_PI
#define QD_RANGE 2.0
#define TAU_RANGE 5.0
#define MAX_STATES 1000000

typedef struct {
    const char *cmd, *source;
    const mbd_model *model;
    int floating_base, count;
    uint64_t seed;
    mbd_work *work; /* dense */
    double *q, *qd, *tau, *qdd, *H, *bias, *zero, *tau_id, *reactions, *dq, *dqd, *dtau;
} generator;

/* splitmix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
 * 2014): the same seed gives the same file on every machine. */
static double uniform(uint64_t *state, double lo, double hi)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return lo + (hi - lo) * (double)(z >> 11) * 0x1.0p-53;
}

/* A quaternion uniform on the unit sphere: a point uniform in the 4-ball (by rejection
 * from the cube) scaled to unit length. */
static void random_quaternion(uint64_t *state, double *quat)
{
    double r2 = 0.0;
    while (!(r2 > 1e-6 && r2 <= 1.0)) {
        r2 = 0.0;
        for (int k = 0; k < 4; k++) {
            quat[k] = uniform(state, -1.0, 1.0);
            r2 += quat[k] * quat[k];
        }
    }
    for (int k = 0; k < 4; k++)
        quat[k] /= sqrt(r2);
}

/* State k: q joint by joint (a free joint's position, then its quaternion), qd, tau. */
static void draw_state(const generator *g, uint64_t *state)
{
    double *q = g->q;
    for (int i = 0; i < mbd_model_nbodies(g->model); i++) {
        const mbd_joint_type joint = mbd_model_body(g->model, i)->joint;
        const int rotates = joint == MBD_SPHERICAL || joint == MBD_FREE;
        const int scalars = mbd_joint_type_nq(joint) - (rotates ? 4 : 0);
        for (int k = 0; k < scalars; k++)
            *q++ = uniform(state, -Q_RANGE, Q_RANGE);
        if (rotates) {
            random_quaternion(state, q);
            q += 4;
        }
    }
    const int nv = mbd_model_nv(g->model);
    for (int k = 0; k < nv; k++)
        g->qd[k] = uniform(state, -QD_RANGE, QD_RANGE);
    for (int k = 0; k < nv; k++)
        g->tau[k] = uniform(state, -TAU_RANGE, TAU_RANGE);
}

/* The dense reference at the drawn state; a message naming the case on failure. */
static int compute_case(const generator *g, int k)
{
    const mbd_model *m = g->model;
    int status = mbd_forward(m, g->work, g->q, g->qd, g->tau, g->qdd);
    if (status == MBD_OK)
        status = mbd_mass_matrix(m, g->work, g->q, g->H);
    if (status == MBD_OK)
        status = mbd_inverse_dynamics(m, g->work, g->q, g->qd, g->zero, g->bias, NULL);
    if (status == MBD_OK)
        status = mbd_inverse_dynamics(m, g->work, g->q, g->qd, g->qdd, g->tau_id, g->reactions);
    if (status == MBD_OK)
        status = mbd_forward_derivatives(m, g->work, g->q, g->qd, g->tau,
                                         mbd_derivatives_method_find("analytic"), g->dq, g->dqd,
                                         g->dtau);
    if (status != MBD_OK)
        fprintf(stderr, "mbd %s: case %d: %s\n", g->cmd, k, mbd_strerror(status));
    return status;
}

static void write_rows(FILE *out, const char *key, const double *x, int rows, int cols)
{
    fprintf(out, ",\n   \"%s\": [", key);
    for (int r = 0; r < rows; r++) {
        fputs(r ? ", " : "", out);
        json_vector(out, x + (size_t)r * (size_t)cols, cols);
    }
    fputc(']', out);
}

static void write_case(FILE *out, const generator *g, int k)
{
    const int nq = mbd_model_nq(g->model), nv = mbd_model_nv(g->model);
    fprintf(out, "%s\n  {", k ? "," : "");
    json_key_vector(out, "q", g->q, nq, 1);
    fprintf(out, ",\n   ");
    json_key_vector(out, "qd", g->qd, nv, 0);
    json_key_vector(out, "tau", g->tau, nv, 0);
    json_key_vector(out, "qdd", g->qdd, nv, 1);
    write_rows(out, "H", g->H, nv, nv);
    fprintf(out, ",\n   ");
    json_key_vector(out, "bias", g->bias, nv, 1);
    write_rows(out, "reactions", g->reactions, mbd_model_nbodies(g->model), 6);
    write_rows(out, "dqdd_dq", g->dq, nv, nv);
    write_rows(out, "dqdd_dqd", g->dqd, nv, nv);
    write_rows(out, "dqdd_dtau", g->dtau, nv, nv);
    fputc('}', out);
}

/* The fields before "cases", by jansson (the model's name may need escaping). */
static int write_header(FILE *out, const generator *g)
{
    json_t *joints = cli_joints_json(g->model);
    json_t *head =
        joints ? json_pack("{s:i, s:s, s:b, s:I, s:{s:[f,f], s:[f,f], s:[f,f]}, s:o}", "schema",
                           MBD_CASES_SCHEMA, "model", g->source, "floating_base", g->floating_base,
                           "seed", (json_int_t)g->seed, "ranges", "q", -Q_RANGE, Q_RANGE, "qd",
                           -QD_RANGE, QD_RANGE, "tau", -TAU_RANGE, TAU_RANGE, "joints", joints)
               : NULL;
    char *text = head ? json_dumps(head, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17)) : NULL;
    json_decref(head);
    if (!text)
        return -1;
    fprintf(out, "%.*s,\n \"cases\": [", (int)strlen(text) - 1, text); /* without its '}' */
    free(text);
    return 0;
}

static int write_cases(FILE *out, void *ctx)
{
    const generator *g = ctx;
    if (write_header(out, g) < 0)
        return -1;
    uint64_t state = g->seed;
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    double next_progress = 1.0;
    for (int k = 0; k < g->count; k++) {
        draw_state(g, &state);
        if (compute_case(g, k) != MBD_OK)
            return CLI_RUNTIME_ERROR; /* reported: not a failed write */
        write_case(out, g, k);
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((double)(now.tv_sec - start.tv_sec) >= next_progress) {
            fprintf(stderr, "mbd %s: %d of %d states\n", g->cmd, k + 1, g->count);
            next_progress += 1.0;
        }
    }
    fprintf(out, "\n]}\n");
    return ferror(out) ? -1 : 0;
}

/* The reference data is the rigid-body equation H qdd + C qd + g = tau of a tree. */
static int check_model(const char *cmd, const mbd_model *model)
{
    const char *why = mbd_model_nloops(model)         ? "has closed loops"
                      : mbd_model_has_friction(model) ? "has joint friction"
                                                      : NULL;
    if (!why)
        return 0;
    fprintf(stderr,
            "mbd %s: model %s %s: reference data covers trees without friction "
            "(H qdd + C qd + g = tau)\n",
            cmd, mbd_model_name(model), why);
    return CLI_USAGE_ERROR;
}

static int allocate(generator *g)
{
    const size_t nq = (size_t)mbd_model_nq(g->model), nv = (size_t)mbd_model_nv(g->model);
    const size_t nb = (size_t)mbd_model_nbodies(g->model);
    g->q = calloc(nq + 7 * nv + 4 * nv * nv + 6 * nb, sizeof *g->q);
    if (!g->q || mbd_work_new(g->model, mbd_solver_find("dense"), &g->work) != MBD_OK)
        return -1;
    g->qd = g->q + nq, g->tau = g->qd + nv, g->qdd = g->tau + nv, g->bias = g->qdd + nv;
    g->zero = g->bias + nv, g->tau_id = g->zero + nv, g->H = g->tau_id + nv;
    g->reactions = g->H + nv * nv, g->dq = g->reactions + 6 * nb, g->dqd = g->dq + nv * nv;
    g->dtau = g->dqd + nv * nv;
    return 0;
}

int cmd_cases(const char *cmd, int argc, char **argv)
{
    cli_flag flags[] = {FLAG("--states"), FLAG("--seed"), OUTPUT("--out"), CLI_FLOATING_BASE,
                        END_FLAGS};
    const char *pos[1];
    int npos, rc = cli_parse(cmd, argc, argv, 2, flags, pos, 1, &npos);
    if (rc)
        return rc;
    long long states = 0, seed = 1;
    const char *out = cli_get(flags, "--out");
    if (npos != 1 || !cli_get(flags, "--states") || !out) {
        fprintf(stderr, "mbd %s: expected MODEL --states K --out FILE.json\n", cmd);
        return CLI_USAGE_ERROR;
    }
    if ((rc = cli_integer(cmd, flags, "--states", 1, MAX_STATES, 1, &states)) ||
        (rc = cli_integer(cmd, flags, "--seed", 0, 9007199254740992.0, 1, &seed)))
        return rc;
    mbd_model *model = cli_load_model(cmd, pos[0], flags);
    if (!model)
        return CLI_USAGE_ERROR;
    generator g = {.cmd = cmd,
                   .source = pos[0],
                   .model = model,
                   .floating_base = cli_get(flags, "--floating-base") != NULL,
                   .count = (int)states,
                   .seed = (uint64_t)seed};
    rc = check_model(cmd, model);
    if (!rc && allocate(&g) < 0)
        rc = cli_fail(cmd, "allocation", MBD_ENOMEM);
    if (!rc)
        rc = cli_write_atomic(cmd, out, write_cases, &g);
    mbd_work_free(g.work);
    free(g.q);
    mbd_model_free(model);
    return rc;
}
