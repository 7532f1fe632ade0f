/* cases.c: reference-data files (written by mbd cases; the schema is docs/reference-data.md):
 * reading and checking them, the model they name, and their replay through a solver.
 *
 * Every error is one line "FILE: FIELD: PROBLEM, got VALUE", FIELD a JSON path such as
 * cases[3].qdd or joints[1] ("elbow").type. The numbers of all cases go into one block,
 * allocated only once every case has the shape that the coordinate map asks for, so
 * that a short file cannot make the reader allocate much. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "models.h"

#define MAX_VALUE_CHARS 60

/* The numbers of one case, in this order in the block: every file's, then the derivatives
 * that files have from `mbd cases` with derivatives (F_DQ on: in all cases or none). */
enum { F_Q, F_QD, F_TAU, F_QDD, F_H, F_BIAS, F_REACTIONS, F_DQ, F_DQD, F_DTAU, F_COUNT };
static const char *const field_names[F_COUNT + 1] = {
    "q", "qd", "tau", "qdd", "H", "bias", "reactions", "dqdd_dq", "dqdd_dqd", "dqdd_dtau", NULL};

struct mbd_cases {
    char *path;
    json_t *root; /* the file; the model's name and the coordinate map point into it */
    const char *model;
    int floating_base;
    int count, nq, nv, nbodies;
    int nfields;                      /* F_COUNT with derivatives, else F_DQ */
    int rows[F_COUNT], cols[F_COUNT]; /* rows 0: a flat list of cols numbers */
    size_t offset[F_COUNT], stride;   /* where each field starts in a case's row of data */
    double *data;                     /* count x stride */
};

typedef struct {
    const char *file;
    char *err;
    size_t err_size;
} reader;

/* Reports "FILE: FIELD: PROBLEM, got VALUE" (no ", got" without a value); returns -1. */
static int reject(const reader *rd, const char *field, const char *problem, const json_t *value)
{
    field = field[0] ? field : "(top)";
    char *text = value ? json_dumps(value, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    const int cut = text && strlen(text) > MAX_VALUE_CHARS;
    model_error(rd->err, rd->err_size, "%s: %s: %s%s%.*s%s", rd->file, field, problem,
                text ? ", got " : "", MAX_VALUE_CHARS - 3 * cut, text ? text : "",
                cut ? "..." : "");
    free(text);
    return -1;
}

/* Whether value is an object with no field but the allowed ones; -1 after a message. */
static int object_of(const reader *rd, const char *where, json_t *object,
                     const char *const allowed[])
{
    if (!json_is_object(object))
        return reject(rd, where, "expected an object", object);
    const char *key;
    json_t *value;
    json_object_foreach(object, key, value)
    {
        int known = 0;
        for (const char *const *a = allowed; *a && !known; a++)
            known = strcmp(*a, key) == 0;
        if (!known) {
            char field[128];
            snprintf(field, sizeof field, "%s%s%.60s", where, where[0] ? "." : "", key);
            return reject(rd, field, "unknown field", value);
        }
    }
    return 0;
}

/* object's member called name, or NULL after reporting it missing. */
static json_t *member(const reader *rd, const char *where, json_t *object, const char *name)
{
    json_t *value = json_object_get(object, name);
    if (!value) {
        char field[128];
        snprintf(field, sizeof field, "%s%s%s", where, where[0] ? "." : "", name);
        reject(rd, field, "missing", NULL);
    }
    return value;
}

/* ---- the coordinate map ---- */

static const char *const joint_fields[] = {"name",    "type", "body", "q_index",
                                           "v_index", "nq",   "nv",   NULL};

/* Checks joints[k]'s fields and types; adds its coordinates to the sizes. */
static int read_joint(const reader *rd, size_t k, json_t *joint, mbd_cases *c)
{
    char where[48];
    snprintf(where, sizeof where, "joints[%zu]", k);
    if (object_of(rd, where, joint, joint_fields) < 0)
        return -1;
    for (int f = 0; joint_fields[f]; f++) {
        json_t *value = member(rd, where, joint, joint_fields[f]);
        char field[64];
        snprintf(field, sizeof field, "%s.%s", where, joint_fields[f]);
        if (!value)
            return -1;
        if (f < 3 && !json_is_string(value))
            return reject(rd, field, "expected a string", value);
        if (f >= 5 && !(json_is_integer(value) && json_integer_value(value) >= 0 &&
                        json_integer_value(value) <= 7))
            return reject(rd, field, "expected an integer from 0 to 7", value);
        if (f >= 3 && !json_is_integer(value))
            return reject(rd, field, "expected an integer", value);
    }
    const int nq = (int)json_integer_value(json_object_get(joint, "nq"));
    const int nv = (int)json_integer_value(json_object_get(joint, "nv"));
    c->nq += nq, c->nv += nv;
    c->nbodies += strcmp(json_string_value(json_object_get(joint, "type")), "fixed") != 0;
    return 0;
}

static int read_joints(const reader *rd, json_t *joints, mbd_cases *c)
{
    if (!json_is_array(joints) || json_array_size(joints) == 0 ||
        json_array_size(joints) > MBD_MAX_BODIES)
        return reject(rd, "joints", "expected an array of joints (mbd info --json)", joints);
    size_t k;
    json_t *joint;
    json_array_foreach(joints, k, joint)
    {
        if (read_joint(rd, k, joint, c) < 0)
            return -1;
    }
    return 0;
}

/* ---- the cases ---- */

/* The shapes of the fields from the sizes, and where each goes in a case's row. */
static void lay_out(mbd_cases *c)
{
    const int rows[F_COUNT] = {0, 0, 0, 0, c->nv, 0, c->nbodies, c->nv, c->nv, c->nv};
    const int cols[F_COUNT] = {c->nq, c->nv, c->nv, c->nv, c->nv, c->nv, 6, c->nv, c->nv, c->nv};
    c->stride = 0;
    for (int f = 0; f < F_COUNT; f++) {
        c->rows[f] = rows[f], c->cols[f] = cols[f];
        c->offset[f] = c->stride;
        c->stride += (size_t)(rows[f] ? rows[f] : 1) * (size_t)cols[f];
    }
}

/* Whether array holds n finite numbers (copied to out unless it is NULL). */
static int numbers(const json_t *array, int n, double *out)
{
    if (!json_is_array(array) || json_array_size(array) != (size_t)n)
        return 0;
    for (int k = 0; k < n; k++) {
        const json_t *x = json_array_get(array, (size_t)k);
        if (!json_is_number(x) || !isfinite(json_number_value(x)))
            return 0;
        if (out)
            out[k] = json_number_value(x);
    }
    return 1;
}

/* cases[i].FIELD: checked, and copied into out unless it is NULL. */
static int read_field(const reader *rd, const mbd_cases *c, size_t i, json_t *item, int f,
                      double *out)
{
    char where[48], field[64];
    snprintf(where, sizeof where, "cases[%zu]", i);
    snprintf(field, sizeof field, "%s.%s", where, field_names[f]);
    const json_t *value = member(rd, where, item, field_names[f]);
    if (!value)
        return -1;
    const int rows = c->rows[f], cols = c->cols[f];
    int valid = rows ? json_is_array(value) && json_array_size(value) == (size_t)rows
                     : numbers(value, cols, out);
    for (int r = 0; valid && r < rows; r++)
        valid = numbers(json_array_get(value, (size_t)r), cols,
                        out ? out + (size_t)r * (size_t)cols : NULL);
    if (valid)
        return 0;
    char problem[96];
    if (rows)
        snprintf(problem, sizeof problem, "expected %d arrays of %d finite numbers", rows, cols);
    else
        snprintf(problem, sizeof problem, "expected an array of %d finite numbers", cols);
    return reject(rd, field, problem, value);
}

/* Every case's fields (values too when data is not NULL). */
static int read_cases(const reader *rd, const mbd_cases *c, json_t *cases, double *data)
{
    const char *allowed[F_COUNT + 1];
    memcpy(allowed, field_names, sizeof allowed);
    allowed[c->nfields] = NULL;
    size_t i;
    json_t *item;
    json_array_foreach(cases, i, item)
    {
        char where[48];
        snprintf(where, sizeof where, "cases[%zu]", i);
        if (object_of(rd, where, item, allowed) < 0)
            return -1;
        for (int f = 0; f < c->nfields; f++)
            if (read_field(rd, c, i, item, f, data ? data + i * c->stride + c->offset[f] : NULL))
                return -1;
    }
    return 0;
}

/* ---- the file ---- */

static int read_header(const reader *rd, json_t *root, mbd_cases *c)
{
    static const char *const fields[] = {"schema", "model",  "floating_base", "seed",
                                         "ranges", "joints", "cases",         NULL};
    if (object_of(rd, "", root, fields) < 0)
        return -1;
    for (int f = 0; fields[f]; f++)
        if (!member(rd, "", root, fields[f]))
            return -1;
    json_t *schema = json_object_get(root, "schema"), *model = json_object_get(root, "model");
    json_t *floating = json_object_get(root, "floating_base");
    json_t *cases = json_object_get(root, "cases");
    if (!json_is_integer(schema) || json_integer_value(schema) != MBD_CASES_SCHEMA)
        return reject(rd, "schema", "expected 1 (this reader's version)", schema);
    if (!json_is_string(model) || json_string_length(model) == 0)
        return reject(rd, "model", "expected a model file or generator spec", model);
    if (!json_is_boolean(floating))
        return reject(rd, "floating_base", "expected true or false", floating);
    if (!json_is_integer(json_object_get(root, "seed")))
        return reject(rd, "seed", "expected an integer", json_object_get(root, "seed"));
    if (!json_is_object(json_object_get(root, "ranges")))
        return reject(rd, "ranges", "expected an object", json_object_get(root, "ranges"));
    if (!json_is_array(cases) || json_array_size(cases) == 0)
        return reject(rd, "cases", "expected a non-empty array of cases", cases);
    c->model = json_string_value(model);
    c->floating_base = json_is_true(floating);
    c->count = (int)json_array_size(cases);
    return read_joints(rd, json_object_get(root, "joints"), c);
}

/* The file's fields into c: the shapes of every case first, then the numbers. */
static int read_file(const reader *rd, mbd_cases *c)
{
    if (read_header(rd, c->root, c) < 0)
        return MBD_EPARSE;
    lay_out(c);
    json_t *items = json_object_get(c->root, "cases");
    c->nfields = json_object_get(json_array_get(items, 0), field_names[F_DQ]) ? F_COUNT : F_DQ;
    if (read_cases(rd, c, items, NULL) < 0)
        return MBD_EPARSE;
    c->data = malloc((size_t)c->count * c->stride * sizeof *c->data);
    if (!c->data)
        return MBD_ENOMEM;
    return read_cases(rd, c, items, c->data) < 0 ? MBD_EPARSE : MBD_OK;
}

int mbd_cases_read(const char *path, mbd_cases **cases, char *err, size_t err_size)
{
    if (!cases)
        return MBD_EINVAL;
    *cases = NULL;
    size_t size;
    char *text;
    int status = model_read_file(path, &text, &size, err, err_size);
    if (status != MBD_OK)
        return status;
    mbd_cases *c = calloc(1, sizeof *c);
    status = c && (c->path = strdup(path)) ? MBD_OK : MBD_ENOMEM;
    if (status == MBD_OK)
        status = model_json_parse(path, text, size, &c->root, err, err_size);
    free(text);
    if (status == MBD_OK) {
        const reader rd = {path, err, err_size};
        status = read_file(&rd, c);
    }
    if (status != MBD_OK)
        mbd_cases_free(c);
    else
        *cases = c;
    return status;
}

void mbd_cases_free(mbd_cases *cases)
{
    if (!cases)
        return;
    json_decref(cases->root);
    free(cases->path);
    free(cases->data);
    free(cases);
}

int mbd_cases_count(const mbd_cases *cases) { return cases->count; }

const char *mbd_cases_model(const mbd_cases *cases) { return cases->model; }

/* ---- the model ---- */

/* The model's joint at index k of the coordinate map (as mbd info --json lists it: the
 * moving joints in coordinate order, then the fixed ones), its coordinates starting at q
 * and v, into the fields' values. */
typedef struct {
    const char *name, *type, *body;
    int q_index, v_index, nq, nv;
} joint_entry;

static joint_entry model_joint(const mbd_model *model, int k, int q, int v)
{
    const int nb = mbd_model_nbodies(model);
    if (k >= nb) {
        const mbd_frame_def *fr = mbd_model_frame(model, k - nb);
        return (joint_entry){fr->joint_name ? fr->joint_name : fr->name,
                             "fixed",
                             fr->body < 0 ? "world" : mbd_model_body(model, fr->body)->name,
                             -1,
                             -1,
                             0,
                             0};
    }
    const mbd_body_def *b = mbd_model_body(model, k);
    return (joint_entry){
        mbd_model_joint_name(model, k), mbd_joint_type_name(b->joint), b->name, q, v,
        mbd_joint_type_nq(b->joint),    mbd_joint_type_nv(b->joint)};
}

/* The file's joints[k] against the model's; -1 after a message naming the field. */
static int match_joint(const reader *rd, const char *model_name, json_t *joint,
                       const joint_entry *e, size_t k)
{
    const char *texts[] = {e->name, e->type, e->body};
    const int numbers_[] = {e->q_index, e->v_index, e->nq, e->nv};
    for (int f = 0; joint_fields[f]; f++) {
        const json_t *value = json_object_get(joint, joint_fields[f]);
        char field[160], problem[160];
        snprintf(field, sizeof field, "joints[%zu] (\"%.40s\").%s", k, e->name, joint_fields[f]);
        const int same = f < 3 ? strcmp(json_string_value(value), texts[f]) == 0
                               : json_integer_value(value) == numbers_[f - 3];
        if (same)
            continue;
        if (f < 3)
            snprintf(problem, sizeof problem, "model %.40s has \"%.40s\"", model_name, texts[f]);
        else
            snprintf(problem, sizeof problem, "model %.40s has %d", model_name, numbers_[f - 3]);
        return reject(rd, field, problem, value);
    }
    return 0;
}

static int match_model(const mbd_cases *c, const mbd_model *model, char *err, size_t err_size)
{
    const reader rd = {c->path, err, err_size};
    json_t *joints = json_object_get(c->root, "joints");
    const size_t n = (size_t)(mbd_model_nbodies(model) + mbd_model_nframes(model));
    if (json_array_size(joints) != n) {
        char problem[160];
        snprintf(problem, sizeof problem, "model %.60s has %zu joints, the file %zu", c->model, n,
                 json_array_size(joints));
        return reject(&rd, "joints", problem, NULL);
    }
    for (size_t k = 0, q = 0, v = 0; k < n; k++) {
        const joint_entry e = model_joint(model, (int)k, (int)q, (int)v);
        if (match_joint(&rd, c->model, json_array_get(joints, k), &e, k) < 0)
            return -1;
        q += (size_t)e.nq, v += (size_t)e.nv;
    }
    return 0;
}

/* The model's path: as recorded if it names a file from here (or is a generator spec),
 * else beside the reference-data file. */
static char *model_path(const mbd_cases *c)
{
    const char *slash = strrchr(c->path, '/');
    if (c->model[0] == '/' || access(c->model, F_OK) == 0 || !slash)
        return strdup(c->model);
    const int dir = (int)(slash - c->path);
    const size_t size = (size_t)dir + strlen(c->model) + 2;
    char *beside = malloc(size);
    if (beside)
        snprintf(beside, size, "%.*s/%s", dir, c->path, c->model);
    if (beside && access(beside, F_OK) != 0) {
        free(beside);
        return strdup(c->model);
    }
    return beside;
}

int mbd_cases_load_model(const mbd_cases *cases, mbd_model **model, char *err, size_t err_size)
{
    *model = NULL;
    const mbd_load_options options = {.floating_base = cases->floating_base};
    char *path = model_path(cases);
    if (!path)
        return MBD_ENOMEM;
    int status = mbd_model_load(path, &options, model, err, err_size);
    free(path);
    if (status == MBD_OK && match_model(cases, *model, err, err_size) < 0) {
        mbd_model_free(*model);
        *model = NULL;
        status = MBD_EINVAL;
    }
    return status;
}

/* ---- the replay ---- */

typedef struct {
    const mbd_cases *c;
    const mbd_solver *solver;
    int index; /* the case */
    const double *row;
    mbd_cases_worst *worst;
    char *err;
    size_t err_size;
} replay;

/* Folds |got - field f of the case| into the worst disagreement; MBD_ENONFINITE (with a
 * message) for a non-finite answer, else status, which it reports when not MBD_OK. */
static int compare(replay *r, int status, const char *call, int f, const double *got)
{
    const int n = (r->c->rows[f] ? r->c->rows[f] : 1) * r->c->cols[f];
    for (int k = 0; status == MBD_OK && k < n; k++)
        if (!isfinite(got[k]))
            status = MBD_ENONFINITE;
    if (status != MBD_OK) {
        model_error(r->err, r->err_size, "%s: cases[%d]: %s (%s): %s", r->c->path, r->index, call,
                    mbd_solver_name(r->solver), mbd_strerror(status));
        return status;
    }
    const double *ref = r->row + r->c->offset[f];
    double scale = 1.0, diff = 0.0;
    int at = 0;
    for (int k = 0; k < n; k++) {
        scale = fmax(scale, fabs(ref[k]));
        if (fabs(got[k] - ref[k]) > diff)
            diff = fabs(got[k] - ref[k]), at = k;
    }
    mbd_cases_worst *w = r->worst;
    if (w->case_index < 0 || diff / scale > w->error)
        *w = (mbd_cases_worst){diff / scale, r->index, field_names[f], at, got[at], ref[at]};
    return MBD_OK;
}

/* The derivatives by the solver's own method (a plugin's of its name), else analytic's,
 * against the file's (analytic's when written); big holds 3 nv x nv. */
static int replay_derivatives(replay *r, const mbd_model *model, mbd_work *work, double *big)
{
    const mbd_cases *c = r->c;
    const double *q = r->row + c->offset[F_Q], *qd = r->row + c->offset[F_QD];
    const double *tau = r->row + c->offset[F_TAU];
    const mbd_derivatives_method *own = mbd_derivatives_method_find(mbd_solver_name(r->solver));
    const size_t nn = (size_t)c->nv * (size_t)c->nv;
    int status = mbd_forward_derivatives(model, work, q, qd, tau,
                                         own ? own : mbd_derivatives_method_find("analytic"), big,
                                         big + nn, big + 2 * nn);
    for (int f = F_DQ; f < F_COUNT; f++)
        if ((status = compare(r, status, "mbd_forward_derivatives", f, big + (f - F_DQ) * nn)))
            break;
    return status;
}

/* One case: the solver's answers, then the reference quantities (the reactions at the
 * dense solver's qdd, so that they do not repeat an error in the file's qdd). */
static int replay_case(replay *r, const mbd_model *model, mbd_work *work, mbd_work *ref_work,
                       double *buf)
{
    const mbd_cases *c = r->c;
    const int nv = c->nv;
    const double *q = r->row + c->offset[F_Q], *qd = r->row + c->offset[F_QD];
    const double *tau = r->row + c->offset[F_TAU], *H = r->row + c->offset[F_H];
    double *out = buf, *p = out + nv, *pd = p + nv, *zero = pd + nv, *qdd = zero + nv;
    double *big = qdd + nv;
    const unsigned forms = mbd_solver_formulations(r->solver);
    int status = MBD_OK;
    if (forms & MBD_ACCELERATION)
        status = compare(r, mbd_forward(model, work, q, qd, tau, out), "mbd_forward", F_QDD, out);
    if (status == MBD_OK && (forms & MBD_MOMENTUM)) {
        for (int i = 0; i < nv; i++) {
            p[i] = 0.0;
            for (int j = 0; j < nv; j++)
                p[i] += H[(size_t)i * (size_t)nv + (size_t)j] * qd[j];
        }
        status = compare(r, mbd_forward_momentum(model, work, q, p, tau, out, pd),
                         "mbd_forward_momentum", F_QD, out);
    }
    if (status == MBD_OK)
        status = compare(r, mbd_mass_matrix(model, ref_work, q, big), "mbd_mass_matrix", F_H, big);
    memset(zero, 0, (size_t)nv * sizeof *zero);
    if (status == MBD_OK)
        status = compare(r, mbd_inverse_dynamics(model, ref_work, q, qd, zero, big, NULL),
                         "mbd_inverse_dynamics", F_BIAS, big);
    if (status == MBD_OK)
        status = compare(r, mbd_forward(model, ref_work, q, qd, tau, qdd), "mbd_forward (dense)",
                         F_QDD, qdd);
    if (status == MBD_OK)
        status = compare(r, mbd_inverse_dynamics(model, ref_work, q, qd, qdd, out, big),
                         "mbd_inverse_dynamics", F_REACTIONS, big);
    if (status == MBD_OK && c->nfields == F_COUNT)
        status = replay_derivatives(r, model, work, big);
    return status;
}

int mbd_cases_replay(const mbd_cases *cases, const mbd_model *model, const mbd_solver *solver,
                     mbd_cases_worst *worst, char *err, size_t err_size)
{
    *worst = (mbd_cases_worst){0.0, -1, NULL, -1, 0.0, 0.0};
    if (mbd_model_nq(model) != cases->nq || mbd_model_nv(model) != cases->nv ||
        mbd_model_nbodies(model) != cases->nbodies || !solver) {
        model_error(err, err_size, "%s: the model or solver does not fit the file", cases->path);
        return MBD_EINVAL;
    }
    const size_t nv = (size_t)cases->nv, nb = (size_t)cases->nbodies;
    mbd_work *work, *ref_work;
    mbd_work_new(model, solver, &work);
    mbd_work_new(model, mbd_solver_find("dense"), &ref_work);
    double *buf = malloc((5 * nv + (3 * nv * nv > 6 * nb ? 3 * nv * nv : 6 * nb)) * sizeof *buf);
    replay r = {cases, solver, 0, NULL, worst, err, err_size};
    int status = work && ref_work && buf ? MBD_OK : MBD_ENOMEM;
    if (status)
        model_error(err, err_size, "%s: solver '%s': %s", cases->path, mbd_solver_name(solver),
                    work ? "out of memory"
                         : "no workspace (out of memory, or its work_new failed)");
    for (int k = 0; status == MBD_OK && k < cases->count; k++) {
        r.index = k;
        r.row = cases->data + (size_t)k * cases->stride;
        status = replay_case(&r, model, work, ref_work, buf);
    }
    free(buf);
    mbd_work_free(ref_work);
    mbd_work_free(work);
    return status;
}
