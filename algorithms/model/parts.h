/* parts.h: what the files of algorithms/model/ share while they build a model. */
#ifndef MBD_MODEL_PARTS_H
#define MBD_MODEL_PARTS_H

#include <stdio.h>

#include "model/model.h"
#include "spatial/joint_space.h"
#include "model/build.h"

static inline int joint_type_valid(mbd_joint_type type)
{
    return (int)type >= 0 && type < MBD_JOINT_TYPE_COUNT;
}

static inline int loop_type_valid(mbd_loop_type type)
{
    return (int)type >= 0 && type < MBD_LOOP_TYPE_COUNT;
}

/* ---- checks and their messages (check.c) ---- */

/* a / |a| into unit, or -1 for a zero or non-finite a; the problem with a 3x3 rotation
 * (row-major), or NULL if it is one; "[a, b, c]" ("[[...], ...]" for rows > 1) with
 * digits significant digits. */
int model_normalize(double unit[3], const double a[3]);
const char *model_rotation_problem(const double *R);
void model_format_values(char *out, size_t size, int digits, const double *x, int rows, int cols);
/* (I + I^T) / 2 as 9 row-major numbers; the eigenvalues of a symmetric 3x3, ascending. */
void symmetrized(double out[9], const double *I);
void symmetric3_eigenvalues(const double A[9], double out[3]);

/* The header (name, gravity, body count): MBD_OK, MBD_EPARSE or MBD_ELIMIT after a
 * message. */
int check_model_header(const mbd_model_def *def, char *err, size_t err_size);
/* Checks every body as given (labels as model_build_labelled's), counts the fixed ones;
 * MBD_OK, or MBD_EPARSE or MBD_ENOMEM after a message. */
int check_input(const mbd_model_def *def, const char *const *labels, char *err, size_t err_size,
                int *nfixed);
/* The moving bodies' inertias (physical once fixed bodies are merged) and joints, into
 * m->joint; from[k]: the body given that became body k. */
int check_moving(mbd_model *m, const mbd_model_def *def, const char *const *labels, const int *from,
                 char *err, size_t err_size);

/* ---- construction ---- */

/* The fixed bodies of bodies (n, parents first) merged into their moving ancestors
 * (fixed.c): moving (n) receives the nmoving moving bodies in order, re-parented, their
 * placements composed and their mass properties combined (names: bodies'); from[k] the
 * index in bodies of moving[k]; frames (n) the nframes fixed bodies as frames. -1: no
 * memory. */
int model_merge_fixed(const mbd_body_def *bodies, int n, mbd_body_def *moving, int *from,
                      mbd_frame_def *frames, int *nmoving, int *nframes);
/* Parents, last children, coordinate offsets and the sweeps' slots (topology.c); -1: no
 * memory. */
int fill_topology(mbd_model *m);
/* Canonical joint frames, tree transforms and their forms, inertias (frames.c). */
void fill_geometry(mbd_model *m);
/* model->free_body_inverse (frames.c), after fill_passive; -1: no memory. */
int fill_free_body_inverses(mbd_model *m);
/* Armature, gravity compensation and tendons (passive_elements.c) after fill_geometry;
 * from: the model's body k -> the body given. -1: no memory. free_passive frees them,
 * part of mbd_model_free. */
int fill_passive(mbd_model *m, const mbd_model_def *def, const int *from);
void free_passive(mbd_model *m);
/* def's tendons: their bodies 1-DOF joints, their numbers finite; MBD_OK, or MBD_EPARSE
 * after a message. */
int check_tendons(const mbd_model_def *def, char *err, size_t err_size);
/* Checks def's loops against the model built from def's bodies and closes them (loops.c);
 * an mbd_status after a message. */
int model_close_loops(mbd_model *m, const mbd_model_def *def, char *err, size_t err_size);
/* Frees the loops of a model; part of mbd_model_free. */
void model_free_loops(mbd_model *model);

#endif
