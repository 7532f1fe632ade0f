/* model.c: building, validating, describing and freeing models; mbd_model_load. */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "models.h"

#define TOLERANCE 1e-9

/* Every type a model file may name (MBD_FIXED included; MBD_JOINT_TYPE_COUNT is not one). */
static const char *const joint_names[MBD_FIXED + 1] = {
    [MBD_REVOLUTE] = "revolute",
    [MBD_PRISMATIC] = "prismatic",
    [MBD_CYLINDRICAL] = "cylindrical",
    [MBD_CARDAN] = "cardan",
    [MBD_SPHERICAL] = "spherical",
    [MBD_FREE] = "free",
    [MBD_FIXED] = "fixed",
};

static const int dofs_of_type[MBD_JOINT_TYPE_COUNT] = {
    [MBD_REVOLUTE] = 1, [MBD_PRISMATIC] = 1, [MBD_CYLINDRICAL] = 2, [MBD_CARDAN] = 2,
    [MBD_SPHERICAL] = 3, [MBD_FREE] = 6,
};

/* Position coordinates: the quaternion takes 4 numbers for 3 rotational DOFs. */
static const int coordinates_of_type[MBD_JOINT_TYPE_COUNT] = {
    [MBD_REVOLUTE] = 1, [MBD_PRISMATIC] = 1, [MBD_CYLINDRICAL] = 2, [MBD_CARDAN] = 2,
    [MBD_SPHERICAL] = 4, [MBD_FREE] = 7,
};

static int joint_type_valid(mbd_joint_type type)
{
    return (int)type >= 0 && type < MBD_JOINT_TYPE_COUNT;
}

const char *mbd_joint_type_name(mbd_joint_type type)
{
    return (int)type >= 0 && type <= MBD_FIXED && joint_names[type] ? joint_names[type] : "unknown";
}

int mbd_joint_type_nv(mbd_joint_type type)
{
    return joint_type_valid(type) ? dofs_of_type[type] : 0;
}

int mbd_joint_type_nq(mbd_joint_type type)
{
    return joint_type_valid(type) ? coordinates_of_type[type] : 0;
}

/* The number of axes a joint type reads: spherical, free and fixed joints have none. */
int joint_type_naxes(mbd_joint_type type)
{
    return type == MBD_CARDAN                                            ? 2
           : type == MBD_SPHERICAL || type == MBD_FREE || type == MBD_FIXED ? 0
                                                                            : 1;
}

int joint_type_from_name(const char *name)
{
    for (int t = 0; t <= MBD_FIXED; t++)
        if (joint_names[t] && strcmp(name, joint_names[t]) == 0)
            return t;
    return -1;
}

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
static void symmetric3_eigenvalues(const double A[9], double out[3])
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
void model_format_values(char *out, size_t size, int digits, const double *x, int rows,
                         int cols)
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
static void symmetrized(double out[9], const double *I)
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
        return reject(c, "parent", "expected -1 (world) or the index of an earlier body",
                      &value, 1, 1);
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
    if (!(moments[0] > 0.0)) {
        snprintf(problem, sizeof problem,
                 "expected a positive definite matrix%s (principal moments %.6g, %.6g, %.6g)",
                 after, moments[0], moments[1], moments[2]);
        return reject(c, "inertia", problem, I, 3, 3);
    }
    if (moments[0] + moments[1] < moments[2] * (1.0 - TOLERANCE)) {
        snprintf(problem, sizeof problem,
                 "principal moments %.6g, %.6g, %.6g violate the triangle inequality%s",
                 moments[0], moments[1], moments[2], after);
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
        return reject(c, fields[3], "expected a number > 0 where coulomb > 0", &fr->smoothing, 1, 1);
    const mbd_joint_type type = c->body->joint;
    if ((type == MBD_SPHERICAL || type == MBD_FREE || type == MBD_FIXED) &&
        (fr->coulomb > 0.0 || fr->viscous > 0.0)) {
        const double value = fr->coulomb > 0.0 ? fr->coulomb : fr->viscous;
        return reject(c, fr->coulomb > 0.0 ? fields[0] : fields[2],
                      type == MBD_SPHERICAL ? "friction on spherical joints is not supported, expected 0"
                      : type == MBD_FREE    ? "a free joint has no friction, expected 0"
                                            : "a fixed joint has no friction, expected 0",
                      &value, 1, 1);
    }
    return 0;
}

static int check_body(const body_check *c, mbd_joint *joint)
{
    if (check_name(c) < 0 || check_parent(c) < 0 || check_joint(c, joint) < 0)
        return -1;
    if (!all_finite(c->body->origin, 3))
        return reject(c, "joint.origin", "expected 3 finite numbers", c->body->origin, 1, 3);
    if (check_rotation(c) < 0 || check_mass_and_com(c) < 0 || check_inertia(c) < 0 ||
        check_friction(c) < 0)
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
        return -1;
    }
    for (int i = 0; i < n; i++)
        sorted[i] = &bodies[i];
    qsort(sorted, (size_t)n, sizeof *sorted, compare_names);
    int status = 0;
    for (int k = 1; k < n && status == 0; k++)
        if (strcmp(sorted[k - 1]->name, sorted[k]->name) == 0) {
            model_error(err, err_size, "bodies[%d] (\"%s\").name: duplicate of bodies[%d], got \"%s\"",
                        (int)(sorted[k] - bodies), sorted[k]->name, (int)(sorted[k - 1] - bodies),
                        sorted[k]->name);
            status = -1;
        }
    free(sorted);
    return status;
}

static int check_model_header(const char *name, const double gravity[3], int nbodies, char *err,
                              size_t err_size)
{
    if (!name) {
        model_error(err, err_size, "name: missing");
        return -1;
    }
    if (!gravity || !all_finite(gravity, 3)) {
        char value[100] = "NULL";
        if (gravity)
            model_format_values(value, sizeof value, 15, gravity, 1, 3);
        model_error(err, err_size, "gravity: expected 3 finite numbers, got %s", value);
        return -1;
    }
    if (nbodies < 1 || nbodies > MBD_MAX_BODIES) {
        model_error(err, err_size, "bodies: expected 1 to %d bodies, got %d", MBD_MAX_BODIES,
                    nbodies);
        return -1;
    }
    return 0;
}

/* ---- construction ---- */

static mbd_model *model_alloc(int n, int nframes)
{
    mbd_model *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->nb = n;
    m->nframes = nframes;
    const size_t count = (size_t)n;
    m->defs = calloc(count, sizeof *m->defs);
    m->frames = calloc((size_t)nframes + 1, sizeof *m->frames);
    m->parent = malloc(count * sizeof *m->parent);
    m->last_child = malloc(count * sizeof *m->last_child);
    m->sum_slot = malloc(count * sizeof *m->sum_slot);
    m->motion_slot = malloc(count * sizeof *m->motion_slot);
    m->q0 = malloc(count * sizeof *m->q0);
    m->v0 = malloc(count * sizeof *m->v0);
    m->d0 = malloc(count * sizeof *m->d0);
    m->joint = malloc(count * sizeof *m->joint);
    m->Xtree = malloc(count * sizeof *m->Xtree);
    m->tree_form = malloc(count * sizeof *m->tree_form);
    m->joint_type = malloc(count * sizeof *m->joint_type);
    m->inertia = malloc(count * sizeof *m->inertia);
    m->user_rotation = malloc(count * sizeof *m->user_rotation);
    if (!m->defs || !m->frames || !m->parent || !m->last_child || !m->sum_slot ||
        !m->motion_slot || !m->q0 || !m->v0 || !m->d0 || !m->joint || !m->Xtree ||
        !m->tree_form || !m->joint_type || !m->inertia || !m->user_rotation) {
        mbd_model_free(m);
        return NULL;
    }
    return m;
}

/* Replaces *s (the caller's) by the model's own copy; once a copy has failed, by NULL, so
 * that mbd_model_free frees only what the model owns. */
static void own_string(const char **s, int *failed)
{
    if (!*s)
        return;
    *s = *failed ? NULL : strdup(*s);
    *failed |= !*s;
}

/* Copies the header and takes the strings of the merged descriptions. */
static int own_descriptions(mbd_model *m, const char *source, const char *name,
                            const double gravity[3])
{
    m->name = strdup(name);
    m->source = strdup(source);
    memcpy(m->gravity, gravity, sizeof m->gravity);
    int failed = !m->name || !m->source;
    for (int i = 0; i < m->nb; i++) {
        own_string(&m->defs[i].name, &failed);
        own_string(&m->defs[i].joint_name, &failed);
    }
    for (int f = 0; f < m->nframes; f++) {
        own_string(&m->frames[f].name, &failed);
        own_string(&m->frames[f].joint_name, &failed);
    }
    return failed ? -1 : 0;
}

/* A slot from the free list, or a new one. */
static int take_slot(const int *free_slots, int *nfree, int *used)
{
    return *nfree ? free_slots[--*nfree] : (*used)++;
}

/* The slots of the O(N) sweeps (mbd_model.sum_slot, motion_slot), so that a slot
 * serves every value that does not live at the same time as another (a chain needs two).
 * The backward pass visits bodies from the highest index down: a body's inertia sum is
 * taken at the step of its highest-index child (a leaf's at its own) and given back after
 * its own. The forward passes visit them upwards: a velocity (an acceleration) is taken at
 * its body's step and given back after the step of the body's highest-index child (a
 * leaf's after its own). free_slots: nb ints. */
static void fill_slots(mbd_model *m, int *free_slots)
{
    int nfree = 0, used = 0;
    for (int i = m->nb - 1; i >= 0; i--) {
        const int p = m->parent[i];
        if (m->last_child[i] < 0)
            m->sum_slot[i] = take_slot(free_slots, &nfree, &used);
        if (p >= 0 && m->last_child[p] == i)
            m->sum_slot[p] = take_slot(free_slots, &nfree, &used);
        free_slots[nfree++] = m->sum_slot[i];
    }
    nfree = used = 0;
    for (int i = 0; i < m->nb; i++) {
        const int p = m->parent[i];
        m->motion_slot[i] = take_slot(free_slots, &nfree, &used);
        if (p >= 0 && m->last_child[p] == i)
            free_slots[nfree++] = m->motion_slot[p];
        if (m->last_child[i] < 0)
            free_slots[nfree++] = m->motion_slot[i];
    }
}

/* Parents, last children, coordinate offsets, the widest branching (the world counts as a
 * parent) and the sweeps' slots. */
static int fill_topology(mbd_model *m)
{
    int *children = calloc((size_t)m->nb + 1, sizeof *children);
    if (!children)
        return -1;
    int nq = 0, nv = 0, ndd = 0;
    m->max_children = 0;
    m->angles_from = m->angles_to = 0;
    for (int i = 0; i < m->nb; i++) {
        const int angles = joint_angles(m->joint[i].type);
        if (angles && m->angles_from == m->angles_to)
            m->angles_from = nq;
        if (angles)
            m->angles_to = nq + angles;
        m->parent[i] = m->defs[i].parent;
        m->last_child[i] = -1;
        if (m->parent[i] >= 0)
            m->last_child[m->parent[i]] = i; /* parents come first: i is the highest so far */
        m->q0[i] = nq;
        m->v0[i] = nv;
        m->d0[i] = ndd;
        nq += m->joint[i].nq;
        nv += m->joint[i].nv;
        ndd += m->joint[i].nv * m->joint[i].nv;
        const int count = ++children[m->parent[i] + 1];
        if (count > m->max_children)
            m->max_children = count;
    }
    fill_slots(m, children); /* nb + 1 ints, no longer needed as counts */
    free(children);
    m->nq = nq;
    m->nv = nv;
    m->ndd = ndd;
    return 0;
}

/* Q = [x y n] with Q e_z = n, right-handed (Duff et al., "Building an orthonormal basis,
 * revisited", 2017); Q = 1 when n = e_z, so models already in that form keep their frames. */
static void basis_with_z(double Q[9], const double n[3])
{
    const double sign = copysign(1.0, n[2]), a = -1.0 / (sign + n[2]), b = n[0] * n[1] * a;
    const double x[3] = {1.0 + sign * n[0] * n[0] * a, sign * b, -sign * n[0]};
    const double y[3] = {b, sign + n[1] * n[1] * a, -n[1]};
    for (int k = 0; k < 3; k++) {
        Q[3 * k] = x[k];
        Q[3 * k + 1] = y[k];
        Q[3 * k + 2] = n[k];
    }
}

/* The solvers' joint frame: turned by a constant Q (x_user = Q x_solver) so that the joint's
 * axis is z; a Cardan joint's second axis is z, and its first lies in the y-z plane with a
 * positive y part. Then S has unit columns (all but a Cardan's first) and the joint
 * rotation acts on 2x2 blocks. The body frame turns with it; the joint coordinates are
 * unchanged. */
static void canonical_joint_frame(double Q[9], mbd_joint *joint)
{
    const double *a1 = joint->axis[0];
    if (joint_type_naxes(joint->type) == 0) { /* spherical, free: no axis, frame kept */
        static const double identity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
        memcpy(Q, identity, sizeof identity);
        return;
    }
    if (joint->type == MBD_CARDAN) { /* z along the second axis, the first in the y-z plane */
        const double *a2 = joint->axis[1];
        double x[3], y[3];
        vec3_cross(x, a1, a2);
        const double s = sqrt(vec3_dot(x, x)), c = vec3_dot(a1, a2);
        for (int k = 0; k < 3; k++)
            x[k] /= s;
        vec3_cross(y, a2, x);
        for (int k = 0; k < 3; k++) {
            Q[3 * k] = x[k];
            Q[3 * k + 1] = y[k];
            Q[3 * k + 2] = a2[k];
        }
        memcpy(joint->axis[0], (const double[3]){0.0, s, c}, sizeof joint->axis[0]);
        memcpy(joint->axis[1], (const double[3]){0.0, 0.0, 1.0}, sizeof joint->axis[1]);
        return;
    }
    basis_with_z(Q, a1);
    memcpy(joint->axis[0], (const double[3]){0.0, 0.0, 1.0}, sizeof joint->axis[0]);
}

/* out = A^T B (3x3, row-major) */
static void mat3_mul_tn(double *restrict out, const double *A, const double *B)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            out[3 * i + j] = A[i] * B[j] + A[3 + i] * B[3 + j] + A[6 + i] * B[6 + j];
}

/* The tree transform's form (mbd_tree_form): a revolute joint's X_T = (E, r) with
 * E = rotx(alpha) and r = (a, 0, 0). Exact zeros only, as canonical_joint_frame keeps
 * frames whose axes are z exactly; E[0] = c + (1 - c) of a turn about x may miss 1 by an
 * ulp, which the screw kernels' exact 1 replaces at round-off level. */
static mbd_tree_form tree_form(const mbd_joint *joint, const mbd_xform *XT)
{
    const double *E = XT->E;
    const int about_x = fabs(E[0] - 1.0) <= 4 * DBL_EPSILON && E[1] == 0.0 && E[2] == 0.0 &&
                        E[3] == 0.0 && E[6] == 0.0 && E[4] == E[8] && E[5] == -E[7];
    if (joint->type != MBD_REVOLUTE || !about_x || XT->r[1] != 0.0 || XT->r[2] != 0.0)
        return TREE_GENERAL;
    return E[5] == 0.0 && E[4] == 1.0 ? TREE_OFFSET : TREE_SCREW;
}

/* A twisted screw's twice_twist (mbd_joint) from its tree transform's turn about x,
 * E = rotx(alpha): cos alpha = E[8], sin alpha = -E[7]. */
static void screw_twist(mbd_joint *joint, mbd_tree_form form, const double *ET)
{
    if (form != TREE_SCREW)
        return;
    const double c = ET[8], s = -ET[7];
    joint->twice_twist[0] = c * c - s * s;
    joint->twice_twist[1] = 2.0 * c * s;
}

/* A Cardan joint's turn_rest = (1 - a1 a1^T) E_T and turn_cross = a1 x E_T (mbd_joint),
 * column by column. */
static void cardan_first_turn(mbd_joint *joint, const double *ET)
{
    if (joint->type != MBD_CARDAN)
        return;
    const double *a = joint->axis[0];
    for (int j = 0; j < 3; j++) {
        const double col[3] = {ET[j], ET[3 + j], ET[6 + j]}, along = vec3_dot(a, col);
        double cross[3];
        vec3_cross(cross, a, col);
        for (int i = 0; i < 3; i++) {
            joint->turn_rest[3 * i + j] = col[i] - a[i] * along;
            joint->turn_cross[3 * i + j] = cross[i];
        }
    }
}

/* Tree transforms and spatial inertias in the solvers' frames. The user's tree transform is
 * x_parent = origin + R x_joint; with x_parent = Q_p x'_parent and x_joint = Q_i x'_joint it
 * becomes origin' = Q_p^T origin, R' = Q_p^T R Q_i, and X_T = (R'^T, origin'). The centre of
 * mass and inertia turn with the body: c' = Q_i^T c, Ic' = Q_i^T Ic Q_i. */
static void fill_geometry(mbd_model *m)
{
    static const double identity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    for (int i = 0; i < m->nb; i++) {
        const mbd_body_def *b = &m->defs[i];
        double *Q = m->user_rotation[i], RQ[9], R[9], Ic[9], IcQ[9], Ic_solver[9], com[3];
        canonical_joint_frame(Q, &m->joint[i]);
        const double *Qp = m->parent[i] < 0 ? identity : m->user_rotation[m->parent[i]];
        mat3_mul(RQ, &b->rotation[0][0], Q);
        mat3_mul_tn(R, Qp, RQ);
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++)
                m->Xtree[i].E[3 * r + c] = R[3 * c + r];
        mat3_apply_t(m->Xtree[i].r, Qp, b->origin);
        cardan_first_turn(&m->joint[i], m->Xtree[i].E);
        m->tree_form[i] = tree_form(&m->joint[i], &m->Xtree[i]);
        screw_twist(&m->joint[i], m->tree_form[i], m->Xtree[i].E);
        m->joint_type[i] = m->joint[i].type;
        symmetrized(Ic, &b->inertia[0][0]);
        mat3_mul(IcQ, Ic, Q);
        mat3_mul_tn(Ic_solver, Q, IcQ);
        mat3_apply_t(com, Q, b->com);
        rigid_inertia(&m->inertia[i], b->mass, com, Ic_solver);
        m->has_coulomb |= b->friction.coulomb > 0.0;
        m->has_friction |= b->friction.coulomb > 0.0 || b->friction.viscous > 0.0;
    }
}

/* Checks every body as given; counts the fixed ones. */
static int check_input(const model_input *in, char *err, size_t err_size, int *nfixed)
{
    *nfixed = 0;
    for (int i = 0; i < in->nbodies; i++) {
        const body_check check = {err, err_size, i, &in->bodies[i],
                                  in->labels ? in->labels[i] : NULL};
        mbd_joint joint;
        if (check_body(&check, &joint) < 0)
            return -1;
        *nfixed += in->bodies[i].joint == MBD_FIXED;
    }
    if (check_unique_names(in->bodies, in->nbodies, err, err_size) < 0)
        return -1;
    if (*nfixed == in->nbodies) {
        model_error(err, err_size, "bodies: every joint is fixed, nothing moves");
        return -1;
    }
    return 0;
}

/* The moving bodies' inertias (physical once fixed bodies are merged) and joints;
 * from[k]: the body given that became body k. */
static int check_moving(mbd_model *m, const model_input *in, const int *from, char *err,
                        size_t err_size)
{
    for (int k = 0; k < m->nb; k++) {
        const mbd_body_def *given = &in->bodies[from[k]];
        const body_check check = {err, err_size, from[k], &m->defs[k],
                                  in->labels ? in->labels[from[k]] : NULL};
        const int merged = m->defs[k].mass != given->mass; /* massive fixed bodies merged */
        if (check_physical_inertia(&check, merged) < 0 || check_joint(&check, &m->joint[k]) < 0)
            return -1;
    }
    return 0;
}

mbd_model *model_build_input(const model_input *in, char *err, size_t err_size)
{
    int nfixed, nmoving, nframes;
    if (check_model_header(in->name, in->gravity, in->nbodies, err, err_size) < 0)
        return NULL;
    if (!in->bodies) {
        model_error(err, err_size, "bodies: missing");
        return NULL;
    }
    if (check_input(in, err, err_size, &nfixed) < 0)
        return NULL;
    mbd_model *m = model_alloc(in->nbodies - nfixed, nfixed);
    int *from = malloc((size_t)in->nbodies * sizeof *from);
    int status = m && from ? model_merge_fixed(in->bodies, in->nbodies, m->defs, from, m->frames,
                                               &nmoving, &nframes)
                           : -1;
    if (status == 0 && check_moving(m, in, from, err, err_size) < 0)
        status = -2;
    else if (status == 0 && (own_descriptions(m, in->source, in->name, in->gravity) < 0 ||
                             fill_topology(m) < 0))
        status = -1;
    free(from);
    if (status == -1)
        model_error(err, err_size, "out of memory for %d bodies", in->nbodies);
    if (status < 0) {
        if (m && status == -2) /* the names are still the caller's */
            m->nb = m->nframes = 0;
        mbd_model_free(m);
        return NULL;
    }
    fill_geometry(m);
    return m;
}

mbd_model *model_build_from(const char *source, const char *name, const double gravity[3],
                            int nbodies, const mbd_body_def *bodies, char *err, size_t err_size)
{
    const model_input in = {source, name, gravity, nbodies, bodies, NULL};
    return model_build_input(&in, err, err_size);
}

mbd_model *mbd_model_build(const char *name, const double gravity[3], int nbodies,
                           const mbd_body_def *bodies, char *err, size_t err_size)
{
    return model_build_from("(built in memory)", name, gravity, nbodies, bodies, err, err_size);
}

/* "family:..." with no '/' or ".json" before the ':' reads as a generator spec; returns
 * the family's length, or 0 for a file path. */
static size_t spec_family_length(const char *s)
{
    const char *colon = strchr(s, ':');
    if (!colon)
        return 0;
    const size_t length = (size_t)(colon - s);
    const char *json = strstr(s, ".json");
    if (memchr(s, '/', length) || (json && json < colon))
        return 0;
    return length;
}

/* XML (URDF) starts with '<' after any blanks; JSON cannot. */
static int looks_like_xml(const char *text)
{
    text += strspn(text, " \t\r\n");
    return text[0] == '<';
}

static mbd_model *load_file(const char *path, const mbd_load_options *options, char *err,
                            size_t err_size)
{
    size_t size;
    char *text = model_read_file(path, &size, err, err_size);
    if (!text)
        return NULL;
    mbd_model *model = NULL;
    if (looks_like_xml(text))
        model = model_urdf_from_text(path, text, size, options, err, err_size);
    else if (options->floating_base)
        model_error(err, err_size, "%s: a floating base is an option of URDF models only", path);
    else
        model = model_json_from_text(path, text, size, err, err_size);
    free(text);
    return model;
}

mbd_model *mbd_model_load_with(const char *path_or_spec, const mbd_load_options *options,
                               char *err, size_t err_size)
{
    static const mbd_load_options defaults;
    if (!options)
        options = &defaults;
    if (!path_or_spec) {
        model_error(err, err_size, "model: no file or generator spec given");
        return NULL;
    }
    const size_t family = spec_family_length(path_or_spec);
    /* An unknown family that is not a file either gets the generator's message. */
    if (family > 0 &&
        (generator_exists(path_or_spec, family) || access(path_or_spec, F_OK) != 0)) {
        if (!options->floating_base)
            return generator_load(path_or_spec, err, err_size);
        model_error(err, err_size, "%s: a floating base is an option of URDF models only",
                    path_or_spec);
        return NULL;
    }
    return load_file(path_or_spec, options, err, err_size);
}

mbd_model *mbd_model_load(const char *path_or_spec, char *err, size_t err_size)
{
    return mbd_model_load_with(path_or_spec, NULL, err, err_size);
}

void mbd_model_free(mbd_model *model)
{
    if (!model)
        return;
    if (model->defs)
        for (int i = 0; i < model->nb; i++) {
            free((char *)model->defs[i].name);
            free((char *)model->defs[i].joint_name);
        }
    if (model->frames)
        for (int f = 0; f < model->nframes; f++) {
            free((char *)model->frames[f].name);
            free((char *)model->frames[f].joint_name);
        }
    free(model->defs);
    free(model->frames);
    free(model->name);
    free(model->source);
    free(model->parent);
    free(model->last_child);
    free(model->q0);
    free(model->v0);
    free(model->d0);
    free(model->joint);
    free(model->Xtree);
    free(model->tree_form);
    free(model->sum_slot);
    free(model->motion_slot);
    free(model->joint_type);
    free(model->inertia);
    free(model->user_rotation);
    model_free_loops(model);
    free(model);
}

/* ---- accessors ---- */

const char *mbd_model_name(const mbd_model *model) { return model->name; }
int mbd_model_nbodies(const mbd_model *model) { return model->nb; }
int mbd_model_nq(const mbd_model *model) { return model->nq; }
int mbd_model_nv(const mbd_model *model) { return model->nv; }

const mbd_body_def *mbd_model_body(const mbd_model *model, int body)
{
    return body >= 0 && body < model->nb ? &model->defs[body] : NULL;
}

void mbd_model_gravity(const mbd_model *model, double gravity[3])
{
    memcpy(gravity, model->gravity, sizeof model->gravity);
}

int mbd_model_has_friction(const mbd_model *model) { return model->has_friction; }
int mbd_model_nframes(const mbd_model *model) { return model->nframes; }

const mbd_frame_def *mbd_model_frame(const mbd_model *model, int frame)
{
    return frame >= 0 && frame < model->nframes ? &model->frames[frame] : NULL;
}

const char *mbd_model_joint_name(const mbd_model *model, int body)
{
    const mbd_body_def *b = mbd_model_body(model, body);
    return !b ? NULL : b->joint_name ? b->joint_name : b->name;
}

void mbd_model_print(const mbd_model *model, FILE *out)
{
    char text[3][200];
    model_format_values(text[0], sizeof text[0], 6, model->gravity, 1, 3);
    fprintf(out, "model %s (from %s)\ngravity %s\n%d bodies, nq %d, nv %d\n", model->name,
            model->source, text[0], model->nb, model->nq, model->nv);
    for (int i = 0; i < model->nb; i++) {
        const mbd_body_def *b = &model->defs[i];
        const mbd_joint *j = &model->joint[i];
        double sym[9], moments[3];
        symmetrized(sym, &b->inertia[0][0]);
        symmetric3_eigenvalues(sym, moments);
        double axes[2][3]; /* the user's unit axes: Q_i turns the solvers' back */
        for (int k = 0; k < 2; k++)
            mat3_apply(axes[k], model->user_rotation[i], j->axis[k]);
        const int naxes = joint_type_naxes(j->type);
        if (naxes > 0)
            model_format_values(text[0], sizeof text[0], 6, &axes[0][0], naxes, 3);
        else
            snprintf(text[0], sizeof text[0], "(nq %d, nv %d)", j->nq, j->nv);
        model_format_values(text[1], sizeof text[1], 6, b->com, 1, 3);
        model_format_values(text[2], sizeof text[2], 6, moments, 1, 3);
        fprintf(out, "%6d %-12s parent %-12s %s %s, mass %g, com %s, principal moments %s", i,
                b->name, b->parent < 0 ? "world" : model->defs[b->parent].name,
                mbd_joint_type_name(j->type), text[0], b->mass, text[1], text[2]);
        const mbd_friction *fr = &b->friction;
        if (fr->coulomb > 0.0 || fr->viscous > 0.0)
            fprintf(out, ", friction coulomb %g radius %g viscous %g smoothing %g", fr->coulomb,
                    fr->radius, fr->viscous, fr->smoothing);
        fputc('\n', out);
    }
    for (int f = 0; f < model->nframes; f++) {
        const mbd_frame_def *fr = &model->frames[f];
        model_format_values(text[0], sizeof text[0], 6, fr->origin, 1, 3);
        fprintf(out, "frame %s (fixed joint %s) in %s at %s\n", fr->name,
                fr->joint_name ? fr->joint_name : fr->name,
                fr->body < 0 ? "world" : model->defs[fr->body].name, text[0]);
    }
    model_print_loops(model, out);
}
