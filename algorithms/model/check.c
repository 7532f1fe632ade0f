/* check.c: validation of a model's description, body by body and as a whole, and the
 * messages that name the body, field and value. */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "model/parts.h"

#define TOLERANCE 1e-9

void model_error(char *err, size_t err_size, const char *format, ...)
{
    if (!err || err_size == 0)
        return;
    va_list args;
    va_start(args, format);
    vsnprintf(err, err_size, format, args);
    va_end(args);
    for (char *c = err; *c; c++)
        if ((unsigned char)*c < 0x20)
            *c = ' ';
}

/* ---- small numeric helpers ---- */

static int all_finite(const double *x, int n)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return 0;
    return 1;
}

/* Writes a / |a| into unit; fails on a zero or non-finite vector. Scales first so that
 * neither tiny nor huge components under- or overflow. */
int model_normalize(double unit[3], const double a[3])
{
    if (!all_finite(a, 3))
        return -1;
    const double scale = fmax(fabs(a[0]), fmax(fabs(a[1]), fabs(a[2])));
    if (scale == 0.0)
        return -1;
    const double s[3] = {a[0] / scale, a[1] / scale, a[2] / scale};
    const double norm = sqrt(vec3_dot(s, s));
    for (int k = 0; k < 3; k++)
        unit[k] = s[k] / norm;
    return 0;
}

/* Eigenvalues of a symmetric 3x3 matrix, ascending, by cyclic Jacobi rotations:
 * accurate also for the small moments of thin bodies, where closed forms cancel. */
void symmetric3_eigenvalues(const double A[9], double out[3])
{
    double a[3][3];
    memcpy(a, A, sizeof a);
    for (int sweep = 0; sweep < 32; sweep++) {
        const double off = a[0][1] * a[0][1] + a[0][2] * a[0][2] + a[1][2] * a[1][2];
        const double diag = a[0][0] * a[0][0] + a[1][1] * a[1][1] + a[2][2] * a[2][2];
        if (off <= DBL_EPSILON * DBL_EPSILON * diag)
            break;
        for (int p = 0; p < 2; p++)
            for (int q = p + 1; q < 3; q++) {
                if (a[p][q] == 0.0)
                    continue;
                const double theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
                const double t = copysign(1.0, theta) / (fabs(theta) + sqrt(theta * theta + 1.0));
                const double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
                const int r = 3 - p - q;
                const double arp = a[r][p], arq = a[r][q];
                a[p][p] -= t * a[p][q];
                a[q][q] += t * a[p][q];
                a[p][q] = a[q][p] = 0.0;
                a[r][p] = a[p][r] = c * arp - s * arq;
                a[r][q] = a[q][r] = s * arp + c * arq;
            }
    }
    double d[3] = {a[0][0], a[1][1], a[2][2]};
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (d[j] < d[i]) {
                const double tmp = d[i];
                d[i] = d[j];
                d[j] = tmp;
            }
    memcpy(out, d, sizeof d);
}

/* Appends printf-formatted text at out + *used, never past size. */
static void append(char *out, size_t size, size_t *used, const char *format, ...)
{
    if (*used >= size)
        return;
    va_list args;
    va_start(args, format);
    const int n = vsnprintf(out + *used, size - *used, format, args);
    va_end(args);
    *used += n > 0 ? (size_t)n : 0;
}

/* "[a, b, c]" for one row, "[[a, b, c], [d, e, f]]" for several, a bare number for 1x1;
 * truncated to size. */
void model_format_values(char *out, size_t size, int digits, const double *x, int rows, int cols)
{
    size_t used = 0;
    out[0] = '\0';
    if (rows == 1 && cols == 1) {
        append(out, size, &used, "%.*g", digits, x[0]);
        return;
    }
    if (rows > 1)
        append(out, size, &used, "[");
    for (int i = 0; i < rows; i++) {
        append(out, size, &used, "%s[", i > 0 ? ", " : "");
        for (int j = 0; j < cols; j++)
            append(out, size, &used, "%s%.*g", j > 0 ? ", " : "", digits, x[cols * i + j]);
        append(out, size, &used, "]");
    }
    if (rows > 1)
        append(out, size, &used, "]");
}

/* (I + I^T) / 2 as 9 row-major numbers: inertias are only checked symmetric to 1e-9. */
void symmetrized(double out[9], const double *I)
{
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            out[3 * r + c] = 0.5 * (I[3 * r + c] + I[3 * c + r]);
}

/* ---- validation of one body ---- */

typedef struct {
    char *err;
    size_t err_size;
    int index;
    const mbd_body_def *body;
    const char *label; /* NULL: the body is named "bodies[i] ("name")" */
} body_check;

/* Reports "bodies[i] ("name").FIELD: PROBLEM, got VALUES" (or "LABEL: FIELD: ...") and
 * returns -1. */
static int reject(const body_check *c, const char *field, const char *problem, const double *x,
                  int rows, int cols)
{
    char value[400];
    model_format_values(value, sizeof value, 15, x, rows, cols);
    if (c->label)
        model_error(c->err, c->err_size, "%s: %s: %s, got %s", c->label, field, problem, value);
    else
        model_error(c->err, c->err_size, "bodies[%d] (\"%s\").%s: %s, got %s", c->index,
                    c->body->name, field, problem, value);
    return -1;
}

static int check_name(const body_check *c)
{
    const char *name = c->body->name;
    if (!name || !name[0] || strcmp(name, "world") == 0) {
        char where[32];
        snprintf(where, sizeof where, "bodies[%d].name", c->index);
        model_error(c->err, c->err_size,
                    "%s%s: expected a non-empty name other than \"world\", got %s%s%s",
                    c->label ? c->label : where, c->label ? ": name" : "", name ? "\"" : "",
                    name ? name : "NULL", name ? "\"" : "");
        return -1;
    }
    return 0;
}

static int check_parent(const body_check *c)
{
    const int parent = c->body->parent;
    if (parent < -1 || parent >= c->index) {
        const double value = parent;
        return reject(c, "parent", "expected -1 (world) or the index of an earlier body", &value, 1,
                      1);
    }
    return 0;
}

/* Validates the joint and stores its unit axes in joint. */
static int check_joint(const body_check *c, mbd_joint *joint)
{
    static const char *const axis_fields[2][2] = {{"joint.axis", NULL},
                                                  {"joint.axes[0]", "joint.axes[1]"}};
    const mbd_body_def *b = c->body;
    if (b->joint == MBD_FIXED)
        return 0; /* no axes; merged away */
    if (!joint_type_valid(b->joint)) {
        const double value = b->joint;
        return reject(c, "joint.type", "unknown joint type", &value, 1, 1);
    }
    joint->type = b->joint;
    joint->nq = mbd_joint_type_nq(b->joint);
    joint->nv = mbd_joint_type_nv(b->joint);
    memset(joint->axis, 0, sizeof joint->axis);
    const int naxes = joint_type_naxes(b->joint);
    for (int k = 0; k < naxes; k++)
        if (model_normalize(joint->axis[k], b->axes[k]) != 0)
            return reject(c, axis_fields[naxes - 1][k], "expected a finite non-zero vector",
                          b->axes[k], 1, 3);
    double normal[3];
    vec3_cross(normal, joint->axis[0], joint->axis[1]);
    if (naxes == 2 && sqrt(vec3_dot(normal, normal)) < TOLERANCE)
        return reject(c, "joint.axes", "Cardan axes must not be collinear", &b->axes[0][0], 2, 3);
    return 0;
}

const char *model_rotation_problem(const double *R)
{
    if (!all_finite(R, 9))
        return "expected finite numbers";
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            const double RtR = R[i] * R[j] + R[3 + i] * R[3 + j] + R[6 + i] * R[6 + j];
            if (fabs(RtR - (i == j)) > TOLERANCE)
                return "expected an orthonormal matrix";
        }
    double row12[3];
    vec3_cross(row12, R + 3, R + 6);
    if (vec3_dot(R, row12) < 0.0)
        return "expected a rotation (determinant +1), not a reflection";
    return NULL;
}

static int check_rotation(const body_check *c)
{
    const double *R = &c->body->rotation[0][0];
    const char *problem = model_rotation_problem(R);
    return problem ? reject(c, "joint.rotation", problem, R, 3, 3) : 0;
}

static int all_zero(const double *x, int n)
{
    for (int i = 0; i < n; i++)
        if (x[i] != 0.0)
            return 0;
    return 1;
}

/* A positive mass, or 0 for a massless body (an intermediate frame), whose inertia must
 * then be zero too; its com is irrelevant but must still be finite. */
static int check_mass_and_com(const body_check *c)
{
    const mbd_body_def *b = c->body;
    if (!isfinite(b->mass) || b->mass < 0.0)
        return reject(c, "mass", "expected a finite positive number (or 0 for a massless body)",
                      &b->mass, 1, 1);
    if (b->mass == 0.0 && !all_zero(&b->inertia[0][0], 9))
        return reject(c, "mass",
                      "expected a finite positive number (0 only for a massless body, whose "
                      "inertia must be all zero)",
                      &b->mass, 1, 1);
    if (!all_finite(b->com, 3))
        return reject(c, "com", "expected 3 finite numbers", b->com, 1, 3);
    return 0;
}

/* Finite and symmetric; whether it is physical is checked once fixed bodies are merged. */
static int check_inertia(const body_check *c)
{
    const double *I = &c->body->inertia[0][0];
    if (!all_finite(I, 9))
        return reject(c, "inertia", "expected finite numbers", I, 3, 3);
    double scale = 0.0;
    for (int k = 0; k < 9; k++)
        scale = fmax(scale, fabs(I[k]));
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (fabs(I[3 * i + j] - I[3 * j + i]) > TOLERANCE * scale)
                return reject(c, "inertia", "expected a symmetric matrix", I, 3, 3);
    return 0;
}

/* A moving body (fixed ones merged in) with mass has a positive definite inertia whose
 * principal moments satisfy the triangle inequality. */
static int check_physical_inertia(const body_check *c, int merged)
{
    const double *I = &c->body->inertia[0][0];
    if (c->body->mass == 0.0) /* massless: all zero, checked with the mass */
        return 0;
    const char *after = merged ? " once its fixed bodies are merged" : "";
    double sym[9], moments[3];
    symmetrized(sym, I);
    symmetric3_eigenvalues(sym, moments);
    char problem[160];
    if (!isfinite(moments[2])) {
        snprintf(problem, sizeof problem,
                 "expected finite principal moments%s (got %.6g, %.6g, %.6g)", after, moments[0],
                 moments[1], moments[2]);
        return reject(c, "inertia", problem, I, 3, 3);
    }
    if (!(moments[0] > 0.0)) {
        snprintf(problem, sizeof problem,
                 "expected a positive definite matrix%s (principal moments %.6g, %.6g, %.6g)",
                 after, moments[0], moments[1], moments[2]);
        return reject(c, "inertia", problem, I, 3, 3);
    }
    if (moments[0] + moments[1] < moments[2] * (1.0 - TOLERANCE)) {
        snprintf(problem, sizeof problem,
                 "principal moments %.6g, %.6g, %.6g violate the triangle inequality%s", moments[0],
                 moments[1], moments[2], after);
        return reject(c, "inertia", problem, I, 3, 3);
    }
    return 0;
}

/* All finite and >= 0; smoothing > 0 wherever Coulomb friction acts. */
static int check_friction(const body_check *c)
{
    static const char *const fields[] = {"joint.friction.coulomb", "joint.friction.radius",
                                         "joint.friction.viscous", "joint.friction.smoothing"};
    const mbd_friction *fr = &c->body->friction;
    const double values[] = {fr->coulomb, fr->radius, fr->viscous, fr->smoothing};
    for (int k = 0; k < 4; k++)
        if (!isfinite(values[k]) || values[k] < 0.0)
            return reject(c, fields[k], "expected a finite number >= 0", &values[k], 1, 1);
    if (fr->coulomb > 0.0 && !(fr->smoothing > 0.0))
        return reject(c, fields[3], "expected a number > 0 where coulomb > 0", &fr->smoothing, 1,
                      1);
    const mbd_joint_type type = c->body->joint;
    if ((type == MBD_SPHERICAL || type == MBD_FREE || type == MBD_FIXED) &&
        (fr->coulomb > 0.0 || fr->viscous > 0.0)) {
        const double value = fr->coulomb > 0.0 ? fr->coulomb : fr->viscous;
        return reject(c, fr->coulomb > 0.0 ? fields[0] : fields[2],
                      type == MBD_SPHERICAL
                          ? "friction on spherical joints is not supported, expected 0"
                      : type == MBD_FREE ? "a free joint has no friction, expected 0"
                                         : "a fixed joint has no friction, expected 0",
                      &value, 1, 1);
    }
    return 0;
}

/* armature, damping, stiffness >= 0 and a gravcomp, all finite; a fixed joint has no
 * armature, damper or spring; the rest position finite. */
static int check_passive(const body_check *c)
{
    static const char *const fields[] = {"joint.armature", "joint.damping", "joint.stiffness"};
    const mbd_passive *p = &c->body->passive;
    const double values[] = {p->armature, p->damping, p->stiffness};
    for (int k = 0; k < 3; k++) {
        if (!isfinite(values[k]) || values[k] < 0.0)
            return reject(c, fields[k], "expected a finite number >= 0", &values[k], 1, 1);
        if (c->body->joint == MBD_FIXED && values[k] != 0.0)
            return reject(c, fields[k], "a fixed joint has none, expected 0", &values[k], 1, 1);
    }
    if (!isfinite(p->gravcomp))
        return reject(c, "gravcomp", "expected a finite number", &p->gravcomp, 1, 1);
    if (!all_finite(p->springref, 7))
        return reject(c, "joint.springref", "expected finite numbers", p->springref, 1, 7);
    return 0;
}

static int check_body(const body_check *c, mbd_joint *joint)
{
    if (check_name(c) < 0 || check_parent(c) < 0 || check_joint(c, joint) < 0)
        return -1;
    if (!all_finite(c->body->origin, 3))
        return reject(c, "joint.origin", "expected 3 finite numbers", c->body->origin, 1, 3);
    if (check_rotation(c) < 0 || check_mass_and_com(c) < 0 || check_inertia(c) < 0 ||
        check_friction(c) < 0 || check_passive(c) < 0)
        return -1;
    return 0;
}

/* ---- whole-model checks ---- */

static int compare_names(const void *a, const void *b)
{
    const mbd_body_def *const *x = a, *const *y = b;
    const int order = strcmp((*x)->name, (*y)->name);
    return order != 0 ? order : (*x > *y) - (*x < *y);
}

/* Sorting (O(n log n)) rather than comparing all pairs, for models of 10^6 bodies. */
static int check_unique_names(const mbd_body_def *bodies, int n, char *err, size_t err_size)
{
    const mbd_body_def **sorted = malloc((size_t)n * sizeof *sorted);
    if (!sorted) {
        model_error(err, err_size, "out of memory");
        return MBD_ENOMEM;
    }
    for (int i = 0; i < n; i++)
        sorted[i] = &bodies[i];
    qsort(sorted, (size_t)n, sizeof *sorted, compare_names);
    int status = 0;
    for (int k = 1; k < n && status == 0; k++)
        if (strcmp(sorted[k - 1]->name, sorted[k]->name) == 0) {
            model_error(err, err_size,
                        "bodies[%d] (\"%s\").name: duplicate of bodies[%d], got \"%s\"",
                        (int)(sorted[k] - bodies), sorted[k]->name, (int)(sorted[k - 1] - bodies),
                        sorted[k]->name);
            status = MBD_EPARSE;
        }
    free(sorted);
    return status;
}

int check_model_header(const mbd_model_def *def, char *err, size_t err_size)
{
    if (!def->name) {
        model_error(err, err_size, "name: missing");
        return MBD_EPARSE;
    }
    if (!all_finite(def->gravity, 3)) {
        char value[100];
        model_format_values(value, sizeof value, 15, def->gravity, 1, 3);
        model_error(err, err_size, "gravity: expected 3 finite numbers, got %s", value);
        return MBD_EPARSE;
    }
    if (def->nbodies < 1 || def->nbodies > MBD_MAX_BODIES) {
        model_error(err, err_size, "bodies: expected 1 to %d bodies, got %d", MBD_MAX_BODIES,
                    def->nbodies);
        return def->nbodies > MBD_MAX_BODIES ? MBD_ELIMIT : MBD_EPARSE;
    }
    if (!def->bodies) {
        model_error(err, err_size, "bodies: missing");
        return MBD_EPARSE;
    }
    return MBD_OK;
}

int check_input(const mbd_model_def *def, const char *const *labels, char *err, size_t err_size,
                int *nfixed)
{
    *nfixed = 0;
    for (int i = 0; i < def->nbodies; i++) {
        const body_check check = {err, err_size, i, &def->bodies[i], labels ? labels[i] : NULL};
        mbd_joint joint;
        if (check_body(&check, &joint) < 0)
            return MBD_EPARSE;
        *nfixed += def->bodies[i].joint == MBD_FIXED;
    }
    const int status = check_unique_names(def->bodies, def->nbodies, err, err_size);
    if (status == MBD_OK && *nfixed == def->nbodies) {
        model_error(err, err_size, "bodies: every joint is fixed, nothing moves");
        return MBD_EPARSE;
    }
    return status;
}

/* One tendon: coefficients on 1-DOF joints that move, finite numbers, a rest range. */
static int check_tendon(const mbd_model_def *def, int t, char *err, size_t err_size)
{
    const mbd_tendon_def *tendon = &def->tendons[t];
    const char *name = tendon->name ? tendon->name : "";
    if (tendon->ncoef < 1 || !tendon->bodies || !tendon->coef) {
        model_error(err, err_size, "tendons[%d] (\"%s\").joints: expected at least one, got %d", t,
                    name, tendon->ncoef);
        return MBD_EPARSE;
    }
    for (int k = 0; k < tendon->ncoef; k++) {
        const int b = tendon->bodies[k];
        const mbd_joint_type type = b >= 0 && b < def->nbodies ? def->bodies[b].joint : MBD_FIXED;
        if (type != MBD_REVOLUTE && type != MBD_PRISMATIC) {
            model_error(err, err_size,
                        "tendons[%d] (\"%s\").joints[%d]: expected the index of a body whose "
                        "joint is revolute or prismatic, got %d",
                        t, name, k, b);
            return MBD_EPARSE;
        }
        if (!isfinite(tendon->coef[k])) {
            model_error(err, err_size,
                        "tendons[%d] (\"%s\").coef[%d]: expected a finite "
                        "number, got %g",
                        t, name, k, tendon->coef[k]);
            return MBD_EPARSE;
        }
    }
    const double values[] = {tendon->stiffness, tendon->damping};
    for (int k = 0; k < 2; k++)
        if (!isfinite(values[k]) || values[k] < 0.0) {
            model_error(err, err_size,
                        "tendons[%d] (\"%s\").%s: expected a finite number "
                        ">= 0, got %g",
                        t, name, k ? "damping" : "stiffness", values[k]);
            return MBD_EPARSE;
        }
    const double *range = tendon->length_spring;
    if (!all_finite(range, 2) || range[0] > range[1]) {
        model_error(err, err_size,
                    "tendons[%d] (\"%s\").springlength: expected two finite "
                    "numbers, the first <= the second, got [%g, %g]",
                    t, name, range[0], range[1]);
        return MBD_EPARSE;
    }
    return MBD_OK;
}

int check_tendons(const mbd_model_def *def, char *err, size_t err_size)
{
    if (def->ntendons < 0 || (def->ntendons > 0 && !def->tendons)) {
        model_error(err, err_size, "tendons: expected a list, got %d", def->ntendons);
        return MBD_EPARSE;
    }
    for (int t = 0; t < def->ntendons; t++) {
        const int status = check_tendon(def, t, err, err_size);
        if (status != MBD_OK)
            return status;
    }
    return MBD_OK;
}

int check_moving(mbd_model *m, const mbd_model_def *def, const char *const *labels, const int *from,
                 char *err, size_t err_size)
{
    for (int k = 0; k < m->nb; k++) {
        const mbd_body_def *given = &def->bodies[from[k]];
        const body_check check = {err, err_size, from[k], &m->defs[k],
                                  labels ? labels[from[k]] : NULL};
        const int merged = m->defs[k].mass != given->mass; /* massive fixed bodies merged */
        if (check_physical_inertia(&check, merged) < 0 || check_joint(&check, &m->joint[k]) < 0)
            return -1;
    }
    return 0;
}
