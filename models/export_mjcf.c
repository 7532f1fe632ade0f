/* export_mjcf.c: writes a model as a MuJoCo MJCF file (mbd_export_mjcf).
 *
 * Frames: an MJCF <body> is placed by pos/quat in its parent at qpos = 0, which is our joint
 * frame (origin, rotation); MuJoCo then moves it by the body's joints in the order written,
 * each joint about its axis as carried by the joints before it. So a revolute joint is a
 * hinge, a prismatic one a slide, a cylindrical one a hinge and a slide on the same axis,
 * and a Cardan joint two hinges: Rot(a1, q1) Rot(a2, q2). A spherical joint is a ball (the
 * same quaternion, the same body-frame angular velocity) and a free joint a free joint,
 * which MuJoCo allows on the world's children only; its qpos is the body's pose in the
 * world (the joint frame composed with ours), its qvel the linear velocity of the body
 * origin in world coordinates, then the angular velocity in the body's: v_mj = R v_O.
 *
 * Inertia: MuJoCo's compiler diagonalizes a fullinertia only to about 1e-7 relative, so the
 * principal moments and axes are computed here in double and written as diaginertia + quat.
 *
 * Passive elements (mbd_passive) are MJCF's attributes of the same names: armature,
 * damping, stiffness and springref on each MJCF joint of ours, gravcomp on the body,
 * actuatorgravcomp; fixed tendons as <fixed>, their joints named; the spring and damper
 * flags on where the model has any.
 *
 * Depth: MuJoCo parses with a tinyxml2 that refuses elements nested deeper than
 * 100, so every NEST_LIMIT body levels the children move into an <include>d file written
 * beside the main one (STEM.partK.xml for PATH = STEM.xml). Every file is written to a
 * temporary name first and renamed only when all are complete, the main file last. */
#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lapacke.h>

#include "models.h"

/* Body levels per file: each level is one element deeper, the file adds 3 (<mujoco>,
 * <worldbody>, a body's <joint>), and tinyxml2 stops at 100. */
#define NEST_LIMIT 64

/* One file of the export: the main one (parent_body -1, the world's children) or an include
 * file holding the children of parent_body. */
typedef struct {
    int parent_body;
    char *path;
    char *tmp; /* NULL until its temporary file exists */
} mjcf_file;

typedef struct {
    const mbd_model *model;
    int *first_child;   /* (nb + 1), index parent + 1 so that the world is 0; -1: none */
    int *next_sibling;  /* (nb) */
    char *tendon_joint; /* (nb) whether a tendon sums the body's joint: it is named */
    const char *path;
    size_t stem_len; /* path without a trailing ".xml" */
    mjcf_file *files;
    int nfiles, capacity;
    char *err;
    size_t err_size;
} exporter;

/* ---- numbers ---- */

/* Unit quaternion (w, x, y, z) of the rotation matrix R, from its largest component so that
 * no division loses precision. */
static void quat_from_rotation(const double R[3][3], double q[4])
{
    const double trace = R[0][0] + R[1][1] + R[2][2];
    const double squares4[4] = {1 + trace, 1 + 2 * R[0][0] - trace, 1 + 2 * R[1][1] - trace,
                                1 + 2 * R[2][2] - trace}; /* 4 w^2, 4 x^2, 4 y^2, 4 z^2 */
    int big = 0;
    for (int k = 1; k < 4; k++)
        if (squares4[k] > squares4[big])
            big = k;
    const double s = 2 * sqrt(squares4[big]); /* 4 |q_big| */
    /* pairs[k][l] = 4 q_k q_l for k != l */
    const double pairs[4][4] = {
        {0, R[2][1] - R[1][2], R[0][2] - R[2][0], R[1][0] - R[0][1]},
        {R[2][1] - R[1][2], 0, R[0][1] + R[1][0], R[0][2] + R[2][0]},
        {R[0][2] - R[2][0], R[0][1] + R[1][0], 0, R[1][2] + R[2][1]},
        {R[1][0] - R[0][1], R[0][2] + R[2][0], R[1][2] + R[2][1], 0},
    };
    for (int k = 0; k < 4; k++)
        q[k] = k == big ? s / 4 : pairs[big][k] / s;
}

/* Principal moments and the quaternion of the principal axes (columns of a proper
 * rotation) of the symmetric part of the inertia. Returns LAPACKE_dsyev's info. */
static int principal_inertia(const double inertia[3][3], double moments[3], double quat[4])
{
    double V[3][3];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            V[r][c] = 0.5 * (inertia[r][c] + inertia[c][r]);
    const int info = LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'V', 'U', 3, &V[0][0], 3, moments);
    if (info != 0)
        return info;
    const double det = V[0][0] * (V[1][1] * V[2][2] - V[1][2] * V[2][1]) -
                       V[0][1] * (V[1][0] * V[2][2] - V[1][2] * V[2][0]) +
                       V[0][2] * (V[1][0] * V[2][1] - V[1][1] * V[2][0]);
    if (det < 0) /* eigenvectors come with either sign: make the frame right-handed */
        for (int r = 0; r < 3; r++)
            V[r][2] = -V[r][2];
    /* MuJoCo refuses A + B < C outright; a lamina (A + B = C) can land an ulp below after
     * the decomposition. Moments come ascending, so only the largest can break it. */
    if (moments[0] + moments[1] < moments[2])
        moments[2] = moments[0] + moments[1];
    quat_from_rotation(V, quat);
    return 0;
}

/* ---- XML text ---- */

static void write_escaped(FILE *out, const char *text)
{
    for (const char *c = text; *c; c++)
        switch (*c) {
        case '&':
            fputs("&amp;", out);
            break;
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        case '\'':
            fputs("&apos;", out);
            break;
        default:
            fputc(*c, out);
        }
}

/* ` name="x y z"` with every double in full precision. */
static void write_numbers(FILE *out, const char *name, const double *x, int n)
{
    fprintf(out, " %s=\"", name);
    for (int k = 0; k < n; k++)
        fprintf(out, "%s%.17g", k ? " " : "", x[k]);
    fputc('"', out);
}

static void indent(FILE *out, int level) { fprintf(out, "%*s", 2 * level, ""); }

/* ---- files ---- */

/* Writes "PATH: MESSAGE" into the caller's err and returns status. */
__attribute__((format(printf, 3, 4))) static int fail(exporter *ex, int status, const char *format,
                                                      ...)
{
    char message[384];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    model_error(ex->err, ex->err_size, "%s: %s", ex->path, message);
    return status;
}

/* Names the file that failed (the main one or an include file) and errno's reason. */
static int fail_io(exporter *ex, const char *path)
{
    model_error(ex->err, ex->err_size, "%s: cannot write: %s", path, strerror(errno));
    return MBD_EIO;
}

/* Registers the file that will hold the children of parent_body; returns its index. */
static int add_file(exporter *ex, int parent_body)
{
    if (ex->nfiles == ex->capacity) {
        const int capacity = ex->capacity ? 2 * ex->capacity : 4;
        mjcf_file *files = realloc(ex->files, (size_t)capacity * sizeof *files);
        if (!files)
            return -1;
        ex->files = files;
        ex->capacity = capacity;
    }
    const int index = ex->nfiles;
    const size_t size = ex->stem_len + 32;
    char *path = malloc(size);
    if (!path)
        return -1;
    if (index == 0)
        snprintf(path, size, "%s", ex->path);
    else
        snprintf(path, size, "%.*s.part%d.xml", (int)ex->stem_len, ex->path, index);
    ex->files[index] = (mjcf_file){parent_body, path, NULL};
    ex->nfiles++;
    return index;
}

/* The file name without its directory: MuJoCo resolves includes beside the main file. */
static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* ---- bodies ---- */

/* One MJCF joint of body b: its coordinate k's (axis NULL: a ball or free joint, which
 * have none and spring towards qpos0, the identity), with the joint's passive elements;
 * named (mbd_model_joint_name) when a tendon refers to it. */
static void write_joint(FILE *out, int level, const char *type, const double axis[3],
                        const mbd_body_def *b, int k, const char *name)
{
    const mbd_passive *p = &b->passive;
    indent(out, level);
    fprintf(out, "<joint type=\"%s\"", type);
    if (name) {
        fputs(" name=\"", out);
        write_escaped(out, name);
        fputc('"', out);
    }
    if (axis)
        write_numbers(out, "axis", axis, 3);
    if (p->armature != 0.0)
        write_numbers(out, "armature", &p->armature, 1);
    if (p->damping != 0.0)
        write_numbers(out, "damping", &p->damping, 1);
    if (p->stiffness != 0.0) {
        write_numbers(out, "stiffness", &p->stiffness, 1);
        if (axis)
            write_numbers(out, "springref", &p->springref[k], 1);
    }
    if (p->actuator_gravcomp)
        fputs(" actuatorgravcomp=\"true\"", out);
    fputs("/>\n", out);
}

static void write_joints(const exporter *ex, FILE *out, int level, int body)
{
    const mbd_body_def *b = mbd_model_body(ex->model, body);
    const char *name = ex->tendon_joint[body] ? mbd_model_joint_name(ex->model, body) : NULL;
    switch (b->joint) {
    case MBD_REVOLUTE:
        write_joint(out, level, "hinge", b->axes[0], b, 0, name);
        break;
    case MBD_PRISMATIC:
        write_joint(out, level, "slide", b->axes[0], b, 0, name);
        break;
    case MBD_CYLINDRICAL:
        write_joint(out, level, "hinge", b->axes[0], b, 0, NULL);
        write_joint(out, level, "slide", b->axes[0], b, 1, NULL);
        break;
    case MBD_CARDAN:
        write_joint(out, level, "hinge", b->axes[0], b, 0, NULL);
        write_joint(out, level, "hinge", b->axes[1], b, 1, NULL);
        break;
    case MBD_SPHERICAL:
        write_joint(out, level, "ball", NULL, b, 0, NULL);
        break;
    case MBD_FREE:
        write_joint(out, level, "free", NULL, b, 0, NULL);
        break;
    default:
        break;
    }
}

/* The fixed tendons, on the joints written with their names. */
static void write_tendons(const exporter *ex, FILE *out)
{
    const int n = mbd_model_ntendons(ex->model);
    if (n == 0)
        return;
    fputs("  <tendon>\n", out);
    for (int t = 0; t < n; t++) {
        const mbd_tendon_def *tendon = mbd_model_tendon(ex->model, t);
        fputs("    <fixed", out);
        if (tendon->name) {
            fputs(" name=\"", out);
            write_escaped(out, tendon->name);
            fputc('"', out);
        }
        write_numbers(out, "stiffness", &tendon->stiffness, 1);
        write_numbers(out, "damping", &tendon->damping, 1);
        write_numbers(out, "springlength", tendon->length_spring, 2);
        fputs(">\n", out);
        for (int k = 0; k < tendon->ncoef; k++) {
            fputs("      <joint joint=\"", out);
            write_escaped(out, mbd_model_joint_name(ex->model, tendon->bodies[k]));
            fputc('"', out);
            write_numbers(out, "coef", &tendon->coef[k], 1);
            fputs("/>\n", out);
        }
        fputs("    </fixed>\n", out);
    }
    fputs("  </tendon>\n", out);
}

/* <body> with its inertial and joints, without the closing tag. */
static int open_body(exporter *ex, FILE *out, int level, int body)
{
    const mbd_body_def *b = mbd_model_body(ex->model, body);
    for (const char *c = b->name; *c; c++)
        if ((unsigned char)*c < 0x20)
            return fail(ex, MBD_EINVAL, "body \"%s\": a control character cannot go into XML",
                        b->name);
    double quat[4], moments[3], inertia_quat[4];
    const int info = principal_inertia(b->inertia, moments, inertia_quat);
    if (info != 0)
        return fail(ex, MBD_EINVAL, "body \"%s\".inertia: LAPACKE_dsyev failed, info %d", b->name,
                    info);
    quat_from_rotation(b->rotation, quat);
    indent(out, level);
    fputs("<body name=\"", out);
    write_escaped(out, b->name);
    fputc('"', out);
    write_numbers(out, "pos", b->origin, 3);
    write_numbers(out, "quat", quat, 4);
    if (b->passive.gravcomp != 0.0)
        write_numbers(out, "gravcomp", &b->passive.gravcomp, 1);
    fputs(">\n", out);
    indent(out, level + 1);
    fputs("<inertial", out);
    write_numbers(out, "pos", b->com, 3);
    write_numbers(out, "mass", &b->mass, 1);
    write_numbers(out, "diaginertia", moments, 3);
    write_numbers(out, "quat", inertia_quat, 4);
    fputs("/>\n", out);
    write_joints(ex, out, level + 1, body);
    return MBD_OK;
}

/* The bodies of the subtree rooted at body, depth levels below the file's top (bounded by
 * NEST_LIMIT, so the recursion is shallow); deeper children go to a new include file. */
static int write_subtree(exporter *ex, FILE *out, int level, int body, int depth)
{
    int status = open_body(ex, out, level, body);
    const int first = ex->first_child[body + 1];
    if (status == MBD_OK && first >= 0 && depth + 1 == NEST_LIMIT) {
        const int file = add_file(ex, body);
        if (file < 0)
            return fail(ex, MBD_ENOMEM, "out of memory");
        indent(out, level + 1);
        fputs("<include file=\"", out);
        write_escaped(out, base_name(ex->files[file].path));
        fputs("\"/>\n", out);
    } else {
        for (int child = first; child >= 0 && status == MBD_OK; child = ex->next_sibling[child])
            status = write_subtree(ex, out, level + 1, child, depth + 1);
    }
    indent(out, level);
    fputs("</body>\n", out);
    return status;
}

static void write_header(const exporter *ex, FILE *out)
{
    double gravity[3];
    mbd_model_gravity(ex->model, gravity);
    fputs("<!-- Written by mbd export mjcf: smooth rigid-body dynamics only. Each body frame\n"
          "     is the mbd joint frame; qpos/qvel are in MuJoCo's depth-first body order, so\n"
          "     match coordinates by body name and joint order within the body. -->\n",
          out);
    fputs("<mujoco model=\"", out);
    write_escaped(out, mbd_model_name(ex->model));
    fputs("\">\n", out);
    /* Nothing may change the given inertias: no geoms, no bounds, no balancing. */
    fputs("  <compiler angle=\"radian\" inertiafromgeom=\"false\" balanceinertia=\"false\"\n"
          "            boundmass=\"0\" boundinertia=\"0\"/>\n",
          out);
    fputs("  <option timestep=\"0.001\" integrator=\"Euler\"", out);
    write_numbers(out, "gravity", gravity, 3);
    fputs(">\n"
          "    <flag constraint=\"disable\" equality=\"disable\" frictionloss=\"disable\"\n"
          "          limit=\"disable\" contact=\"disable\" actuation=\"disable\"",
          out);
    if (!mbd_model_has_passive(ex->model)) /* else springs, dampers and gravcomp act */
        fputs(" spring=\"disable\" damper=\"disable\"", out);
    fputs("/>\n"
          "  </option>\n"
          "  <default>\n"
          "    <joint pos=\"0 0 0\" limited=\"false\" damping=\"0\" stiffness=\"0\"\n"
          "           armature=\"0\" frictionloss=\"0\"/>\n"
          "  </default>\n"
          "  <worldbody>\n",
          out);
}

/* The content of file index: the main document or an include file's <mujoco> wrapper. */
static int write_content(exporter *ex, FILE *out, int index)
{
    const int parent = ex->files[index].parent_body;
    const int level = parent < 0 ? 2 : 1;
    if (parent < 0)
        write_header(ex, out);
    else
        fputs("<mujoco>\n", out);
    int status = MBD_OK;
    for (int b = ex->first_child[parent + 1]; b >= 0 && status == MBD_OK; b = ex->next_sibling[b])
        status = write_subtree(ex, out, level, b, 0);
    fputs(parent < 0 ? "  </worldbody>\n" : "</mujoco>\n", out);
    if (parent < 0) {
        write_tendons(ex, out);
        fputs("</mujoco>\n", out);
    }
    return status;
}

/* Writes file index to a temporary name beside it, flushed to disk. */
static int write_file(exporter *ex, int index)
{
    mjcf_file *f = &ex->files[index];
    const size_t size = strlen(f->path) + 16;
    if (!(f->tmp = malloc(size)))
        return fail(ex, MBD_ENOMEM, "out of memory");
    snprintf(f->tmp, size, "%s.tmp.XXXXXX", f->path);
    const int fd = mkstemp(f->tmp);
    if (fd < 0) {
        const int status = fail_io(ex, f->path);
        free(f->tmp);
        f->tmp = NULL;
        return status;
    }
    fchmod(fd, 0644); /* mkstemp makes 0600; a model is for everyone to read */
    FILE *out = fdopen(fd, "w");
    if (!out) {
        const int status = fail_io(ex, f->path);
        close(fd);
        return status;
    }
    int status = write_content(ex, out, index);
    f = &ex->files[index]; /* write_content may have grown (moved) the file table */
    const int flushed = fflush(out) == 0 && fsync(fileno(out)) == 0;
    const int closed = fclose(out) == 0;
    if (status == MBD_OK && !(flushed && closed))
        status = fail_io(ex, f->path);
    return status;
}

/* ---- the export ---- */

static int link_children(exporter *ex)
{
    const int nb = mbd_model_nbodies(ex->model);
    ex->first_child = malloc((size_t)(nb + 1) * sizeof *ex->first_child);
    ex->next_sibling = malloc((size_t)(nb > 0 ? nb : 1) * sizeof *ex->next_sibling);
    if (!ex->first_child || !ex->next_sibling)
        return -1;
    for (int i = 0; i <= nb; i++)
        ex->first_child[i] = -1;
    ex->tendon_joint = calloc((size_t)(nb > 0 ? nb : 1), sizeof *ex->tendon_joint);
    if (!ex->tendon_joint)
        return -1;
    for (int t = 0; t < mbd_model_ntendons(ex->model); t++)
        for (int k = 0; k < mbd_model_tendon(ex->model, t)->ncoef; k++)
            ex->tendon_joint[mbd_model_tendon(ex->model, t)->bodies[k]] = 1;
    for (int i = nb - 1; i >= 0; i--) { /* backwards: children end up in index order */
        const int slot = mbd_model_body(ex->model, i)->parent + 1;
        ex->next_sibling[i] = ex->first_child[slot];
        ex->first_child[slot] = i;
    }
    return 0;
}

/* Renames the include files into place, the main file last; returns MBD_OK or MBD_EIO. */
static int commit_files(exporter *ex)
{
    for (int k = ex->nfiles - 1; k >= 0; k--) {
        mjcf_file *f = &ex->files[k];
        if (rename(f->tmp, f->path) != 0)
            return fail_io(ex, f->path);
        free(f->tmp);
        f->tmp = NULL;
    }
    return MBD_OK;
}

static void release(exporter *ex)
{
    for (int k = 0; k < ex->nfiles; k++) {
        if (ex->files[k].tmp)
            unlink(ex->files[k].tmp);
        free(ex->files[k].tmp);
        free(ex->files[k].path);
    }
    free(ex->files);
    free(ex->first_child);
    free(ex->next_sibling);
    free(ex->tendon_joint);
}

/* MJCF's ball and free joints spring towards qpos0 (the identity, and the frame written):
 * the body that asks for another rest orientation or place, or -1. */
static int find_unwritable_spring(const mbd_model *model)
{
    for (int i = 0; i < mbd_model_nbodies(model); i++) {
        const mbd_body_def *b = mbd_model_body(model, i);
        const int quat = b->joint == MBD_FREE ? 3 : 0;
        if ((b->joint == MBD_SPHERICAL || b->joint == MBD_FREE) && b->passive.stiffness != 0.0) {
            const double *ref = b->passive.springref;
            if (ref[quat] != 1.0 || (quat && (ref[0] != 0.0 || ref[1] != 0.0 || ref[2] != 0.0)))
                return i;
        }
    }
    return -1;
}

/* MuJoCo's compiler refuses a moving body without mass (mjMINVAL), and its bounds that
 * would let one through change the inertias: a massless body cannot be exported exactly. */
static int find_massless_body(const mbd_model *model)
{
    for (int i = 0; i < mbd_model_nbodies(model); i++)
        if (mbd_model_body(model, i)->mass == 0.0)
            return i;
    return -1;
}

/* MuJoCo takes a free joint only on a child of the world. */
static int find_inner_free_joint(const mbd_model *model)
{
    for (int i = 0; i < mbd_model_nbodies(model); i++)
        if (mbd_model_body(model, i)->joint == MBD_FREE && mbd_model_body(model, i)->parent >= 0)
            return i;
    return -1;
}

int mbd_export_mjcf(const mbd_model *model, const char *path, char *err, size_t err_size)
{
    if (!model || !path || !path[0]) {
        model_error(err, err_size, "mbd_export_mjcf: %s", !model ? "no model" : "no path");
        return MBD_EINVAL;
    }
    const int inner_free = find_inner_free_joint(model);
    if (inner_free >= 0) {
        model_error(err, err_size,
                    "%s: bodies[%d] (\"%s\").joint: free: MuJoCo allows free "
                    "joints on children of the world only",
                    path, inner_free, mbd_model_body(model, inner_free)->name);
        return MBD_EUNSUPPORTED;
    }
    const int massless = find_massless_body(model);
    if (massless >= 0) {
        model_error(err, err_size,
                    "%s: bodies[%d] (\"%s\").mass: 0: MuJoCo refuses massless moving bodies", path,
                    massless, mbd_model_body(model, massless)->name);
        return MBD_EINVAL;
    }
    const int spring = find_unwritable_spring(model);
    if (spring >= 0) {
        model_error(err, err_size,
                    "%s: bodies[%d] (\"%s\").joint.springref: MJCF's ball and "
                    "free joints spring towards the identity, not another rest pose",
                    path, spring, mbd_model_body(model, spring)->name);
        return MBD_EUNSUPPORTED;
    }
    if (mbd_model_nloops(model) > 0) {
        model_error(err, err_size,
                    "%s: loops: %d closed loops: the export writes trees only "
                    "(MJCF equality constraints are not written)",
                    path, mbd_model_nloops(model));
        return MBD_EUNSUPPORTED;
    }
    const size_t len = strlen(path);
    exporter ex = {.model = model, .path = path, .err = err, .err_size = err_size};
    ex.stem_len = len > 4 && strcmp(path + len - 4, ".xml") == 0 ? len - 4 : len;
    int status = link_children(&ex) == 0 && add_file(&ex, -1) == 0
                     ? MBD_OK
                     : fail(&ex, MBD_ENOMEM, "out of memory");
    /* add_file may append while the loop runs: nfiles grows as include files appear. */
    for (int k = 0; k < ex.nfiles && status == MBD_OK; k++)
        status = write_file(&ex, k);
    if (status == MBD_OK)
        status = commit_files(&ex);
    release(&ex);
    return status;
}
