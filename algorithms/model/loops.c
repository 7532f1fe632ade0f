/* loops.c: the cut joints that close a model's kinematic loops, given to mbd_model_build:
 * validation, their frames placed on moving bodies, and their equations in the solvers'
 * body frames (mbd_loop, see algorithms/dynamics/loops.c).
 *
 * A loop's frames come in the user's body frames (x_body = origin + R x_frame); the
 * solvers' frame of body i is turned by Q_i (x_user = Q_i x_internal), so a point or axis
 * p becomes Q_i^T p: body origins coincide, no translation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/parts.h"

#define MBD_MAX_LOOPS 1000

/* ---- validation ---- */

/* Reports "loops[l] ("name").FIELD: PROBLEM, got VALUES" and returns MBD_EPARSE. */
static int reject(char *err, size_t err_size, int l, const mbd_loop_def *def, const char *field,
                  const char *problem, const double *x, int rows, int cols)
{
    char value[400];
    model_format_values(value, sizeof value, 15, x, rows, cols);
    model_error(err, err_size, "loops[%d] (\"%s\").%s: %s, got %s", l, def->name, field, problem,
                value);
    return MBD_EPARSE;
}

static int check_body_index(const mbd_model_def *given, int l, const mbd_loop_def *def,
                            const char *field, int body, int world_allowed, char *err,
                            size_t err_size)
{
    if (body >= (world_allowed ? -1 : 0) && body < given->nbodies)
        return MBD_OK;
    const double value = body;
    return reject(err, err_size, l, def, field,
                  world_allowed ? "expected -1 (world) or a body index" : "expected a body index",
                  &value, 1, 1);
}

static int check_frame(int l, const mbd_loop_def *def, const char *origin_field,
                       const double origin[3], const char *rotation_field,
                       const double rotation[3][3], char *err, size_t err_size)
{
    for (int k = 0; k < 3; k++)
        if (!isfinite(origin[k]))
            return reject(err, err_size, l, def, origin_field, "expected 3 finite numbers", origin,
                          1, 3);
    const char *problem = model_rotation_problem(&rotation[0][0]);
    return problem ? reject(err, err_size, l, def, rotation_field, problem, &rotation[0][0], 3, 3)
                   : MBD_OK;
}

/* The loop as given: name, type, body indices, frames and axis. */
static int check_loop(const mbd_model_def *given, int l, char *err, size_t err_size)
{
    const mbd_loop_def *loops = given->loops, *def = &loops[l];
    if (!def->name || !def->name[0]) {
        model_error(err, err_size, "loops[%d].name: expected a non-empty name", l);
        return MBD_EPARSE;
    }
    for (int k = 0; k < l; k++)
        if (strcmp(loops[k].name, def->name) == 0) {
            model_error(err, err_size, "loops[%d] (\"%s\").name: duplicate of loops[%d]", l,
                        def->name, k);
            return MBD_EPARSE;
        }
    const double type = def->type;
    if (!loop_type_valid(def->type))
        return reject(err, err_size, l, def, "type", "unknown loop type", &type, 1, 1);
    int status = check_body_index(given, l, def, "body_a", def->body_a, 0, err, err_size);
    if (!status)
        status = check_body_index(given, l, def, "body_b", def->body_b, 1, err, err_size);
    if (!status)
        status = check_frame(l, def, "origin_a", def->origin_a, "rotation_a", def->rotation_a, err,
                             err_size);
    if (!status)
        status = check_frame(l, def, "origin_b", def->origin_b, "rotation_b", def->rotation_b, err,
                             err_size);
    double unit[3];
    if (!status && def->type == MBD_LOOP_REVOLUTE && model_normalize(unit, def->axis) != 0)
        return reject(err, err_size, l, def, "axis", "expected a finite non-zero vector", def->axis,
                      1, 3);
    return status;
}

/* ---- the loops placed on the moving bodies ---- */

/* Where each body given ended up: its index in the model, or -2 - f for one merged by a
 * fixed joint into frame f (model_merge_fixed keeps both in the order given); NULL: no
 * memory. */
static int *body_places(const mbd_model_def *given)
{
    int *place = malloc((size_t)given->nbodies * sizeof *place);
    for (int i = 0, moving = 0, frame = 0; place && i < given->nbodies; i++)
        place[i] = given->bodies[i].joint == MBD_FIXED ? -2 - frame++ : moving++;
    return place;
}

/* A loop frame in the body given (-1: the world) becomes the same frame in the model's
 * body: a merged body's frame f, x_carrier = f.origin + f.rotation x_body, moves to the
 * body (or world) that carries it. */
static void place_frame(const mbd_model *model, const int *place, int *body, double origin[3],
                        double rotation[3][3])
{
    if (*body < 0 || place[*body] >= 0) {
        *body = *body < 0 ? -1 : place[*body];
        return;
    }
    const mbd_frame_def *f = &model->frames[-2 - place[*body]];
    double o[3], R[3][3];
    for (int r = 0; r < 3; r++) {
        o[r] = f->origin[r];
        for (int c = 0; c < 3; c++) {
            o[r] += f->rotation[r][c] * origin[c];
            R[r][c] = 0.0;
            for (int k = 0; k < 3; k++)
                R[r][c] += f->rotation[r][k] * rotation[k][c];
        }
    }
    memcpy(origin, o, sizeof o);
    memcpy(rotation, R, sizeof R);
    *body = f->body;
}

/* Loop l placed on the model's bodies (names still the caller's): body_a must move, and
 * the two bodies must differ once placed. */
static int place_loop(const mbd_model *model, const mbd_model_def *given, const int *place, int l,
                      mbd_loop_def *placed, char *err, size_t err_size)
{
    *placed = given->loops[l];
    place_frame(model, place, &placed->body_a, placed->origin_a, placed->rotation_a);
    place_frame(model, place, &placed->body_b, placed->origin_b, placed->rotation_b);
    if (placed->body_a < 0) {
        const char *fixed = given->bodies[given->loops[l].body_a].name;
        model_error(err, err_size,
                    "loops[%d] (\"%s\").body_a: expected a body that moves, not one fixed to the "
                    "world, got \"%s\"",
                    l, placed->name, fixed);
        return MBD_EPARSE;
    }
    if (placed->body_a == placed->body_b) {
        model_error(err, err_size,
                    "loops[%d] (\"%s\").body_b: a loop must join two different bodies, not close "
                    "\"%s\" on itself",
                    l, placed->name, model->defs[placed->body_b].name);
        return MBD_EPARSE;
    }
    return MBD_OK;
}

/* ---- the equations in the solvers' frames ---- */

static const double identity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};

static const double *user_rotation(const mbd_model *model, int body)
{
    return body < 0 ? identity : model->user_rotation[body];
}

/* out = Q^T A for 3x3 row-major matrices. */
static void rotate_back(double *out, const double *Q, const double *A)
{
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            out[3 * r + c] = Q[r] * A[c] + Q[3 + r] * A[3 + c] + Q[6 + r] * A[6 + c];
}

static void column(double out[3], const double M[9], int c)
{
    for (int r = 0; r < 3; r++)
        out[r] = M[3 * r + c];
}

/* Two unit vectors that make a right-handed orthonormal basis with the unit axis. */
static void perpendiculars(double e1[3], double e2[3], const double axis[3])
{
    const int least = fabs(axis[0]) <= fabs(axis[1]) && fabs(axis[0]) <= fabs(axis[2]) ? 0
                      : fabs(axis[1]) <= fabs(axis[2])                                 ? 1
                                                                                       : 2;
    double basis[3] = {0, 0, 0}, t[3];
    basis[least] = 1.0;
    vec3_cross(t, axis, basis);
    model_normalize(e1, t);
    vec3_cross(e2, axis, e1);
}

/* revolute: u = R_a axis twice, w = R_b e1, R_b e2 (e1, e2 perpendicular to the axis);
 * weld: (z_a, x_b), (z_a, y_b), (x_a, y_b), zero when the frames coincide. */
static void build_loop(const mbd_model *model, const mbd_loop_def *def, int row0, mbd_loop *loop)
{
    double frame_b[9];
    const double *Qa = user_rotation(model, def->body_a), *Qb = user_rotation(model, def->body_b);
    loop->body_a = def->body_a;
    loop->body_b = def->body_b;
    loop->row0 = row0;
    loop->ndot = mbd_loop_type_nconstraints(def->type) - 3;
    mat3_apply_t(loop->point_a, Qa, def->origin_a);
    mat3_apply_t(loop->point_b, Qb, def->origin_b);
    rotate_back(loop->frame_a, Qa, &def->rotation_a[0][0]);
    rotate_back(frame_b, Qb, &def->rotation_b[0][0]);
    if (def->type == MBD_LOOP_REVOLUTE) {
        double axis[3], e[2][3];
        model_normalize(axis, def->axis);
        perpendiculars(e[0], e[1], axis);
        for (int k = 0; k < 2; k++) {
            mat3_apply(loop->u[k], loop->frame_a, axis);
            mat3_apply(loop->w[k], frame_b, e[k]);
        }
    } else if (def->type == MBD_LOOP_WELD) {
        static const int pairs[3][2] = {{2, 0}, {2, 1}, {0, 1}};
        for (int k = 0; k < 3; k++) {
            column(loop->u[k], loop->frame_a, pairs[k][0]);
            column(loop->w[k], frame_b, pairs[k][1]);
        }
    }
}

void model_free_loops(mbd_model *model)
{
    for (int l = 0; model->loop_defs && l < model->nloops; l++)
        free((char *)model->loop_defs[l].name);
    free(model->loop_defs);
    free(model->loops);
    model->loop_defs = NULL;
    model->loops = NULL;
    model->nloops = model->nc = 0;
}

/* Whether the model's tree can take loops: MBD_OK or MBD_EUNSUPPORTED after a message. */
static int check_tree_for_loops(const mbd_model *model, char *err, size_t err_size)
{
    if (model->has_friction) { /* the constrained solve has no friction */
        model_error(err, err_size, "loops: joint friction in a model with loops is not supported");
        return MBD_EUNSUPPORTED;
    }
    for (int i = 0; i < model->nb; i++)
        if (joint_has_quaternion(model->joint[i].type)) { /* the projection moves q by qd steps */
            model_error(err, err_size,
                        "loops: bodies[%d] (\"%s\") has a %s joint; loops close trees of "
                        "revolute, prismatic, cylindrical and Cardan joints only",
                        i, model->defs[i].name, mbd_joint_type_name(model->joint[i].type));
            return MBD_EUNSUPPORTED;
        }
    return MBD_OK;
}

/* The placed loops, checked, each into the model with its own name. */
static int add_loops(mbd_model *model, int nloops, const mbd_loop_def *placed)
{
    model->loop_defs = calloc((size_t)nloops + 1, sizeof *model->loop_defs);
    model->loops = calloc((size_t)nloops + 1, sizeof *model->loops);
    int ok = model->loop_defs && model->loops;
    for (int l = 0; ok && l < nloops; l++) {
        model->loop_defs[l] = placed[l];
        ok = (model->loop_defs[l].name = strdup(placed[l].name)) != NULL;
        model->nloops = l + 1;
        build_loop(model, &placed[l], model->nc, &model->loops[l]);
        model->nc += mbd_loop_type_nconstraints(placed[l].type);
    }
    return ok ? MBD_OK : MBD_ENOMEM;
}

int model_close_loops(mbd_model *model, const mbd_model_def *def, char *err, size_t err_size)
{
    const int nloops = def->nloops;
    if (nloops < 0 || !def->loops) {
        model_error(err, err_size, "loops: expected nloops >= 0 and a list of nloops loops");
        return MBD_EINVAL;
    }
    if (nloops > MBD_MAX_LOOPS) {
        model_error(err, err_size, "loops: %d loops, over the limit of %d", nloops, MBD_MAX_LOOPS);
        return MBD_ELIMIT;
    }
    int status = check_tree_for_loops(model, err, err_size);
    for (int l = 0; status == MBD_OK && l < nloops; l++)
        status = check_loop(def, l, err, err_size);
    if (status != MBD_OK)
        return status;
    mbd_loop_def *placed = malloc((size_t)nloops * sizeof *placed);
    int *place = body_places(def);
    status = placed && place ? MBD_OK : MBD_ENOMEM;
    for (int l = 0; status == MBD_OK && l < nloops; l++)
        status = place_loop(model, def, place, l, &placed[l], err, err_size);
    if (status == MBD_OK)
        status = add_loops(model, nloops, placed);
    if (status == MBD_ENOMEM)
        model_error(err, err_size, "loops: out of memory for %d loops", nloops);
    free(place);
    free(placed);
    return status;
}
