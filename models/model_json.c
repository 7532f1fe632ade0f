/* model_json.c: loads a model file (JSON, see models/README.md) with jansson.
 *
 * Every error is one line "FILE: PATH: PROBLEM, got VALUE", where PATH is the JSON path
 * of the field, such as bodies[3] ("link4").joint.axis; syntax errors are
 * "FILE:LINE:COLUMN: jansson's message". Semantic checks (mass positive or a massless
 * body, valid inertia, non-zero axes, ...) are mbd_model_build's, whose messages use the
 * same paths. Limits, each with its own message: file size (model_file.c), nesting depth
 * (MAX_NESTING, checked before jansson's recursive parser runs) and body count
 * (MBD_MAX_BODIES). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "models.h"

#define MAX_NESTING 32 /* a model needs 6: top, bodies, body, joint, axes, axis */
#define MAX_VALUE_CHARS 60
#define PREFIX_SIZE 192

typedef struct {
    const char *file;
    char *err;
    size_t err_size;
} loader;

/* The value as compact JSON, cut to about MAX_VALUE_CHARS. */
static void describe_value(const json_t *value, char *out, size_t size)
{
    char *text = json_dumps(value, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(15));
    if (!text)
        snprintf(out, size, "(unprintable)");
    else if (strlen(text) > MAX_VALUE_CHARS)
        snprintf(out, size, "%.*s...", MAX_VALUE_CHARS - 3, text);
    else
        snprintf(out, size, "%s", text);
    free(text);
}

/* Reports "FILE: PREFIX.FIELD: PROBLEM, got VALUE" (no ", got" without a value) and
 * returns -1. */
static int reject(const loader *ld, const char *prefix, const char *field, const char *problem,
                  const json_t *value)
{
    const char *dot = prefix[0] && field[0] ? "." : "";
    char got[MAX_VALUE_CHARS + 16] = "";
    if (value) {
        strcpy(got, ", got ");
        describe_value(value, got + strlen(got), sizeof got - strlen(got));
    }
    model_error(ld->err, ld->err_size, "%s: %s%s%s: %s%s", ld->file, prefix, dot, field, problem,
                got);
    return -1;
}

static int check_fields(const loader *ld, const char *prefix, json_t *object,
                        const char *const allowed[])
{
    const char *key;
    json_t *value;
    json_object_foreach(object, key, value)
    {
        bool known = false;
        for (const char *const *a = allowed; *a && !known; a++)
            known = strcmp(*a, key) == 0;
        if (!known)
            return reject(ld, prefix, key, "unknown field", value);
    }
    return 0;
}

/* The field's value, or NULL after reporting it missing. */
static json_t *require(const loader *ld, const char *prefix, json_t *object, const char *field)
{
    json_t *value = json_object_get(object, field);
    if (!value)
        reject(ld, prefix, field, "missing", NULL);
    return value;
}

static bool finite_number(const json_t *x)
{
    return json_is_number(x) && isfinite(json_number_value(x));
}

/* Whether array is an array of exactly n finite numbers; copies them into out. */
static bool numbers_into(const json_t *array, double *out, size_t n)
{
    if (!json_is_array(array) || json_array_size(array) != n)
        return false;
    for (size_t k = 0; k < n; k++) {
        if (!finite_number(json_array_get(array, k)))
            return false;
        out[k] = json_number_value(json_array_get(array, k));
    }
    return true;
}

static int read_number(const loader *ld, const char *prefix, json_t *object, const char *field,
                       double *out)
{
    const json_t *value = require(ld, prefix, object, field);
    if (!value)
        return -1;
    if (!finite_number(value))
        return reject(ld, prefix, field, "expected a finite number", value);
    *out = json_number_value(value);
    return 0;
}

static int read_string(const loader *ld, const char *prefix, json_t *object, const char *field,
                       const char **out)
{
    const json_t *value = require(ld, prefix, object, field);
    if (!value)
        return -1;
    if (!json_is_string(value))
        return reject(ld, prefix, field, "expected a string", value);
    *out = json_string_value(value);
    return 0;
}

static int read_vec3(const loader *ld, const char *prefix, json_t *object, const char *field,
                     double out[3])
{
    const json_t *value = require(ld, prefix, object, field);
    if (!value)
        return -1;
    if (!numbers_into(value, out, 3))
        return reject(ld, prefix, field, "expected an array of 3 finite numbers", value);
    return 0;
}

/* rows x 3 numbers as an array of rows arrays, row-major into out. */
static int read_rows(const loader *ld, const char *prefix, json_t *object, const char *field,
                     size_t rows, double *out)
{
    const json_t *value = require(ld, prefix, object, field);
    if (!value)
        return -1;
    bool valid = json_is_array(value) && json_array_size(value) == rows;
    for (size_t r = 0; valid && r < rows; r++)
        valid = numbers_into(json_array_get(value, r), out + 3 * r, 3);
    if (!valid) {
        char problem[80];
        snprintf(problem, sizeof problem, "expected %zu arrays of 3 finite numbers", rows);
        return reject(ld, prefix, field, problem, value);
    }
    return 0;
}

/* "friction": {"coulomb", "radius", "viscous", "smoothing"}, each optional (default 0);
 * their ranges are mbd_model_build's to check. */
static int read_friction(const loader *ld, const char *joint_prefix, json_t *joint,
                         mbd_friction *out)
{
    static const char *const fields[] = {"coulomb", "radius", "viscous", "smoothing", NULL};
    json_t *friction = json_object_get(joint, "friction");
    if (!friction)
        return 0;
    if (!json_is_object(friction))
        return reject(ld, joint_prefix, "friction", "expected an object", friction);
    char prefix[PREFIX_SIZE + sizeof ".joint.friction"];
    snprintf(prefix, sizeof prefix, "%s.friction", joint_prefix);
    if (check_fields(ld, prefix, friction, fields) < 0)
        return -1;
    double *slots[] = {&out->coulomb, &out->radius, &out->viscous, &out->smoothing};
    for (int k = 0; k < 4; k++)
        if (json_object_get(friction, fields[k]) &&
            read_number(ld, prefix, friction, fields[k], slots[k]) < 0)
            return -1;
    return 0;
}

/* "armature", "damping", "stiffness" (numbers) and "springref" (a number, or an array of
 * the joint's nq numbers), each optional (default 0; a zero quaternion is the identity);
 * their ranges are mbd_model_build's to check. */
static int read_passive(const loader *ld, const char *prefix, json_t *joint, mbd_body_def *def)
{
    static const char *const fields[] = {"armature", "damping", "stiffness"};
    double *slots[] = {&def->passive.armature, &def->passive.damping, &def->passive.stiffness};
    for (int k = 0; k < 3; k++)
        if (json_object_get(joint, fields[k]) &&
            read_number(ld, prefix, joint, fields[k], slots[k]) < 0)
            return -1;
    json_t *ref = json_object_get(joint, "springref");
    const size_t nq = def->joint == MBD_FIXED ? 0 : (size_t)mbd_joint_type_nq(def->joint);
    if (!ref)
        return 0;
    if (nq == 1 && finite_number(ref)) {
        def->passive.springref[0] = json_number_value(ref);
        return 0;
    }
    if (nq > 0 && numbers_into(ref, def->passive.springref, nq))
        return 0;
    char problem[80];
    snprintf(problem, sizeof problem, "expected %s%zu finite numbers (the joint's coordinates)",
             nq == 1 ? "a number or an array of " : "an array of ", nq);
    return reject(ld, prefix, "springref", problem, ref);
}

/* "LIST[i] ("name")" (without the name if it has none) into prefix (PREFIX_SIZE), or -1
 * after reporting an element that is not an object. */
static int element_prefix(const loader *ld, const char *list, size_t i, const json_t *element,
                          char *prefix)
{
    snprintf(prefix, PREFIX_SIZE, "%s[%zu]", list, i);
    if (!json_is_object(element))
        return reject(ld, prefix, "", "expected an object", element);
    const json_t *name = json_object_get(element, "name");
    if (json_is_string(name)) {
        char quoted[MAX_VALUE_CHARS + 8];
        describe_value(name, quoted, sizeof quoted);
        snprintf(prefix, PREFIX_SIZE, "%s[%zu] (%s)", list, i, quoted);
    }
    return 0;
}

/* "axis" (one axis), "axes" (Cardan: two) or neither (spherical, free); the other field
 * is refused. */
static int read_axes(const loader *ld, const char *prefix, json_t *joint, const char *type_name,
                     mbd_body_def *def)
{
    const int naxes = joint_type_naxes(def->joint);
    static const char *const names[] = {"axis", "axes"};
    for (int k = 0; k < 2; k++) {
        json_t *given = json_object_get(joint, names[k]);
        if (given && naxes != k + 1) {
            char problem[80];
            if (naxes == 0)
                snprintf(problem, sizeof problem, "a %s joint takes no axis", type_name);
            else
                snprintf(problem, sizeof problem, "a %s joint takes \"%s\", not \"%s\"", type_name,
                         names[naxes - 1], names[k]);
            return reject(ld, prefix, names[k], problem, given);
        }
    }
    if (naxes == 2)
        return read_rows(ld, prefix, joint, "axes", 2, &def->axes[0][0]);
    return naxes == 1 ? read_vec3(ld, prefix, joint, "axis", def->axes[0]) : 0;
}

static int read_joint(const loader *ld, const char *body_prefix, json_t *body, mbd_body_def *def)
{
    static const char *const fields[] = {"name",    "type",      "axis",      "axes",
                                         "origin",  "rotation",  "friction",  "armature",
                                         "damping", "stiffness", "springref", NULL};
    json_t *joint = require(ld, body_prefix, body, "joint");
    if (!joint)
        return -1;
    if (!json_is_object(joint))
        return reject(ld, body_prefix, "joint", "expected an object", joint);
    char prefix[PREFIX_SIZE + sizeof ".joint"];
    snprintf(prefix, sizeof prefix, "%s.joint", body_prefix);
    const char *type_name = NULL;
    if (check_fields(ld, prefix, joint, fields) < 0 ||
        (json_object_get(joint, "name") &&
         read_string(ld, prefix, joint, "name", &def->joint_name) < 0) ||
        read_string(ld, prefix, joint, "type", &type_name) < 0)
        return -1;
    const int type = joint_type_from_name(type_name);
    if (type < 0)
        return reject(ld, prefix, "type",
                      "expected \"revolute\", \"prismatic\", \"cylindrical\", \"cardan\", "
                      "\"spherical\", \"free\" or \"fixed\"",
                      json_object_get(joint, "type"));
    def->joint = (mbd_joint_type)type;
    if (read_axes(ld, prefix, joint, type_name, def) < 0)
        return -1;
    if (json_object_get(joint, "origin") && read_vec3(ld, prefix, joint, "origin", def->origin) < 0)
        return -1;
    for (int k = 0; k < 3; k++)
        def->rotation[k][k] = 1.0;
    if (json_object_get(joint, "rotation") &&
        read_rows(ld, prefix, joint, "rotation", 3, &def->rotation[0][0]) < 0)
        return -1;
    if (read_passive(ld, prefix, joint, def) < 0)
        return -1;
    return read_friction(ld, prefix, joint, &def->friction);
}

/* "world" or a body already read: names maps each name to its first index. */
static int read_parent(const loader *ld, const char *prefix, json_t *body, const json_t *names,
                       int *parent)
{
    const json_t *value = require(ld, prefix, body, "parent");
    if (!value)
        return -1;
    const char *name = json_string_value(value);
    if (name && strcmp(name, "world") == 0) {
        *parent = -1;
        return 0;
    }
    const json_t *index = name ? json_object_get(names, name) : NULL;
    if (!index)
        return reject(ld, prefix, "parent", "expected \"world\" or the name of an earlier body",
                      value);
    *parent = (int)json_integer_value(index);
    return 0;
}

static int read_body(const loader *ld, size_t i, json_t *body, json_t *names, mbd_body_def *def)
{
    static const char *const fields[] = {"name", "parent",  "joint",    "mass",
                                         "com",  "inertia", "gravcomp", NULL};
    char prefix[PREFIX_SIZE];
    if (element_prefix(ld, "bodies", i, body, prefix) < 0)
        return -1;
    if (check_fields(ld, prefix, body, fields) < 0 ||
        read_string(ld, prefix, body, "name", &def->name) < 0 ||
        read_parent(ld, prefix, body, names, &def->parent) < 0 ||
        read_joint(ld, prefix, body, def) < 0 ||
        read_number(ld, prefix, body, "mass", &def->mass) < 0 ||
        read_vec3(ld, prefix, body, "com", def->com) < 0 ||
        read_rows(ld, prefix, body, "inertia", 3, &def->inertia[0][0]) < 0 ||
        (json_object_get(body, "gravcomp") &&
         read_number(ld, prefix, body, "gravcomp", &def->passive.gravcomp) < 0))
        return -1;
    /* A duplicate keeps the first index; mbd_model_build reports it. */
    if (!json_object_get(names, def->name) &&
        json_object_set_new(names, def->name, json_integer((json_int_t)i)) != 0)
        return reject(ld, prefix, "name", "out of memory", NULL);
    return 0;
}

static int read_bodies(const loader *ld, json_t *bodies, json_t *names, mbd_body_def *defs)
{
    int status = 0;
    for (size_t i = 0; i < json_array_size(bodies) && status == 0; i++)
        status = read_body(ld, i, json_array_get(bodies, i), names, &defs[i]);
    return status;
}

/* A loop's body_a or body_b: the name of a body (or "world" where allowed); names maps
 * each name to its index in "bodies" (mbd_model_build places a loop on a body merged by a
 * fixed joint). */
static int read_loop_body(const loader *ld, const char *prefix, json_t *loop, const char *field,
                          const json_t *names, bool world_allowed, int *body)
{
    const json_t *value = require(ld, prefix, loop, field);
    if (!value)
        return -1;
    const char *name = json_string_value(value);
    if (name && world_allowed && strcmp(name, "world") == 0) {
        *body = -1;
        return 0;
    }
    const json_t *index = name ? json_object_get(names, name) : NULL;
    if (!index)
        return reject(ld, prefix, field,
                      world_allowed ? "expected \"world\" or the name of a body"
                                    : "expected the name of a body",
                      value);
    *body = (int)json_integer_value(index);
    return 0;
}

/* Optional origin and rotation of a loop frame (default: the body frame). */
static int read_loop_frame(const loader *ld, const char *prefix, json_t *loop, const char *origin,
                           const char *rotation, double out_origin[3], double out_rotation[3][3])
{
    for (int k = 0; k < 3; k++)
        out_rotation[k][k] = 1.0;
    if (json_object_get(loop, origin) && read_vec3(ld, prefix, loop, origin, out_origin) < 0)
        return -1;
    if (json_object_get(loop, rotation) &&
        read_rows(ld, prefix, loop, rotation, 3, &out_rotation[0][0]) < 0)
        return -1;
    return 0;
}

static int read_loop(const loader *ld, size_t l, json_t *loop, const json_t *names,
                     mbd_loop_def *def)
{
    static const char *const fields[] = {"name",       "type",   "body_a",   "origin_a",
                                         "rotation_a", "body_b", "origin_b", "rotation_b",
                                         "axis",       NULL};
    char prefix[PREFIX_SIZE];
    if (element_prefix(ld, "loops", l, loop, prefix) < 0)
        return -1;
    const char *type_name = NULL;
    if (check_fields(ld, prefix, loop, fields) < 0 ||
        read_string(ld, prefix, loop, "name", &def->name) < 0 ||
        read_string(ld, prefix, loop, "type", &type_name) < 0)
        return -1;
    const int type = loop_type_from_name(type_name);
    if (type < 0)
        return reject(ld, prefix, "type", "expected \"spherical\", \"revolute\" or \"weld\"",
                      json_object_get(loop, "type"));
    def->type = (mbd_loop_type)type;
    const bool revolute = type == MBD_LOOP_REVOLUTE;
    if (!revolute && json_object_get(loop, "axis"))
        return reject(ld, prefix, "axis", "only a revolute loop takes an axis",
                      json_object_get(loop, "axis"));
    if (read_loop_body(ld, prefix, loop, "body_a", names, false, &def->body_a) < 0 ||
        read_loop_body(ld, prefix, loop, "body_b", names, true, &def->body_b) < 0 ||
        read_loop_frame(ld, prefix, loop, "origin_a", "rotation_a", def->origin_a,
                        def->rotation_a) < 0 ||
        read_loop_frame(ld, prefix, loop, "origin_b", "rotation_b", def->origin_b,
                        def->rotation_b) < 0 ||
        (revolute && read_vec3(ld, prefix, loop, "axis", def->axis) < 0))
        return -1;
    return 0;
}

/* Reads "loops" (if present) into *defs (free it) and *n; -1 after a message. */
static int read_loops(const loader *ld, json_t *root, const json_t *names, mbd_loop_def **defs,
                      size_t *n)
{
    json_t *loops = json_object_get(root, "loops");
    if (!loops)
        return 0;
    if (!json_is_array(loops))
        return reject(ld, "", "loops", "expected an array of loops", loops);
    *n = json_array_size(loops);
    if (!(*defs = calloc(*n + 1, sizeof **defs)))
        return reject(ld, "", "loops", "out of memory", NULL);
    int status = 0;
    for (size_t l = 0; l < *n && status == 0; l++)
        status = read_loop(ld, l, json_array_get(loops, l), names, &(*defs)[l]);
    return status;
}

/* The file's base name without ".json": the default model name. */
static void default_name(const char *path, char *out, size_t size)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t len = strlen(base);
    if (len > 5 && strcmp(base + len - 5, ".json") == 0)
        len -= 5;
    snprintf(out, size, "%.*s", (int)len, base);
}

/* The bodies and loops of the file into a model; an mbd_status after a message. */
static int build(const loader *ld, json_t *root, json_t *bodies, const char *name,
                 const double gravity[3], mbd_model **model)
{
    const size_t n = json_array_size(bodies);
    mbd_body_def *defs = calloc(n, sizeof *defs);
    mbd_loop_def *loops = NULL;
    size_t nloops = 0;
    json_t *names = json_object();
    int status = MBD_EPARSE;
    if (!defs || !names) {
        reject(ld, "", "bodies", "out of memory", NULL);
        status = MBD_ENOMEM;
    } else if (read_bodies(ld, bodies, names, defs) == 0 &&
               read_loops(ld, root, names, &loops, &nloops) == 0) {
        mbd_model_def def = {.name = name,
                             .nbodies = (int)n,
                             .bodies = defs,
                             .loops = loops,
                             .nloops = nloops > INT32_MAX ? INT32_MAX : (int)nloops};
        memcpy(def.gravity, gravity, sizeof def.gravity);
        char reason[512];
        status = model_build_labelled(&def, ld->file, NULL, model, reason, sizeof reason);
        if (status != MBD_OK)
            model_error(ld->err, ld->err_size, "%s: %s", ld->file, reason);
    }
    json_decref(names);
    free(loops);
    free(defs);
    return status;
}

static int read_model(const loader *ld, json_t *root, mbd_model **model)
{
    static const char *const fields[] = {"name", "gravity", "bodies", "loops", NULL};
    if (!json_is_object(root)) {
        reject(ld, "", "top level", "expected an object", root);
        return MBD_EPARSE;
    }
    char name_buffer[256];
    const char *name = name_buffer;
    double gravity[3] = {0, 0, -9.81};
    default_name(ld->file, name_buffer, sizeof name_buffer);
    if (check_fields(ld, "", root, fields) < 0 ||
        (json_object_get(root, "name") && read_string(ld, "", root, "name", &name) < 0) ||
        (json_object_get(root, "gravity") && read_vec3(ld, "", root, "gravity", gravity) < 0))
        return MBD_EPARSE;
    json_t *bodies = require(ld, "", root, "bodies");
    if (!bodies)
        return MBD_EPARSE;
    const size_t n = json_array_size(bodies);
    if (!json_is_array(bodies) || n == 0) {
        reject(ld, "", "bodies", "expected a non-empty array of bodies", bodies);
        return MBD_EPARSE;
    }
    if (n > MBD_MAX_BODIES) {
        char problem[80];
        snprintf(problem, sizeof problem, "%zu bodies, over the limit of %d", n, MBD_MAX_BODIES);
        reject(ld, "", "bodies", problem, NULL);
        return MBD_ELIMIT;
    }
    return build(ld, root, bodies, name, gravity, model);
}

/* The line and column (both from 1) of text[at]. */
static void position_of(const char *text, size_t at, int *line, int *column)
{
    *line = 1;
    *column = 1;
    for (size_t k = 0; k < at; k++) {
        if (text[k] == '\n') {
            ++*line;
            *column = 1;
        } else {
            ++*column;
        }
    }
}

/* Fails (with a message) if arrays and objects nest deeper than MAX_NESTING outside
 * strings: jansson's parser recurses, and no model needs more than a few levels. */
static int check_nesting(const loader *ld, const char *text, size_t size)
{
    int depth = 0;
    bool in_string = false;
    for (size_t k = 0; k < size; k++) {
        const char ch = text[k];
        if (in_string) {
            if (ch == '\\')
                k++;
            else if (ch == '"')
                in_string = false;
        } else if (ch == '"') {
            in_string = true;
        } else if (ch == '[' || ch == '{') {
            if (++depth > MAX_NESTING) {
                int line, column;
                position_of(text, k, &line, &column);
                model_error(
                    ld->err, ld->err_size,
                    "%s:%d:%d: arrays and objects nested deeper than %d levels, over the limit",
                    ld->file, line, column, MAX_NESTING);
                return -1;
            }
        } else if (ch == ']' || ch == '}') {
            depth--;
        }
    }
    return 0;
}

int model_json_parse(const char *path, const char *text, size_t size, json_t **root, char *err,
                     size_t err_size)
{
    const loader ld = {path, err, err_size};
    *root = NULL;
    if (check_nesting(&ld, text, size) < 0)
        return MBD_EPARSE;
    json_error_t error;
    *root = json_loadb(text, size, JSON_REJECT_DUPLICATES, &error);
    if (!*root) {
        model_error(err, err_size, "%s:%d:%d: %s", path, error.line, error.column, error.text);
        return MBD_EPARSE;
    }
    return MBD_OK;
}

int model_json_from_text(const char *path, const char *text, size_t size, mbd_model **model,
                         char *err, size_t err_size)
{
    const loader ld = {path, err, err_size};
    json_t *root;
    if (model_json_parse(path, text, size, &root, err, err_size) != MBD_OK)
        return MBD_EPARSE;
    const int status = read_model(&ld, root, model);
    json_decref(root);
    return status;
}
