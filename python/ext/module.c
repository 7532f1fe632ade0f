/* module.c: mbdbench._mbdbench, the Model type and its single-state and batch calls. */
#define MBDBENCH_EXT_MAIN
#include "ext.h"

#include "mbd_plugin.h"

#include <structmember.h>

#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

PyObject *ext_error_type;

/* ---- the model ------------------------------------------------------------------------ */

/* A new object of type (Model or the package's subclass) holding the model that status
 * says was made (else the library's error raised), or NULL with the exception (the model
 * freed); spec as source says. */
static PyObject *model_object(PyTypeObject *type, int status, mbd_model *model, const char *err,
                              PyObject *spec, model_source source, int floating_base)
{
    if (status)
        return ext_raise_message(status, err[0] ? err : mbd_strerror(status));
    ModelObject *self = (ModelObject *)type->tp_alloc(type, 0);
    if (!self) {
        mbd_model_free(model);
        return NULL;
    }
    self->model = model;
    self->nq = mbd_model_nq(model);
    self->nv = mbd_model_nv(model);
    self->nbodies = mbd_model_nbodies(model);
    self->floating_base = floating_base;
    self->source = source;
    self->spec = Py_NewRef(spec);
    return (PyObject *)self;
}

/* A model loaded without the GIL from spec: a path or generator spec (SOURCE_SPEC) or a
 * model file's text standing for the file name (SOURCE_TEXT); the object keeps keep. */
static PyObject *load(PyTypeObject *type, PyObject *spec, model_source source, const char *name,
                      int floating_base, PyObject *keep)
{
    const char *text = ext_text(spec, source == SOURCE_SPEC ? "path_or_spec" : "text");
    if (!text)
        return NULL;
    char err[MBD_ERROR_SIZE] = "";
    mbd_model *model;
    int status;
    Py_BEGIN_ALLOW_THREADS status =
        source == SOURCE_SPEC ? ext_load_model(text, floating_base, &model, err, sizeof err)
                              : ext_load_text(text, name, floating_base, &model, err, sizeof err);
    Py_END_ALLOW_THREADS return model_object(type, status, model, err, keep, source, floating_base);
}

static PyObject *Model_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"path_or_spec", "floating_base", NULL};
    PyObject *spec;
    int floating_base = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "U|p:Model", names, &spec, &floating_base))
        return NULL;
    return load(type, spec, SOURCE_SPEC, NULL, floating_base, spec);
}

/* _from_text(cls, text, name, floating_base): mbd_model_load_text; the model keeps
 * (text, name), to be pickled as. */
static PyObject *module_from_text(PyObject *module, PyObject *args)
{
    (void)module;
    PyTypeObject *type;
    PyObject *text, *name;
    int floating_base;
    if (!PyArg_ParseTuple(args, "O!UUp:_from_text", &PyType_Type, &type, &text, &name,
                          &floating_base))
        return NULL;
    const char *name_text = ext_text(name, "name");
    PyObject *keep = name_text ? PyTuple_Pack(2, text, name) : NULL;
    PyObject *model = keep ? load(type, text, SOURCE_TEXT, name_text, floating_base, keep) : NULL;
    Py_XDECREF(keep);
    return model;
}

/* _from_mujoco(cls, address, name): mbd_model_from_mujoco on the mjModel at address, which
 * the caller keeps alive (the GIL held: the mjModel is a Python object's). */
static PyObject *module_from_mujoco(PyObject *module, PyObject *args)
{
    (void)module;
    PyTypeObject *type;
    unsigned long long address;
    PyObject *name;
    if (!PyArg_ParseTuple(args, "O!KU:_from_mujoco", &PyType_Type, &type, &address, &name))
        return NULL;
    const char *text = ext_text(name, "name");
    if (!text)
        return NULL;
    char err[MBD_ERROR_SIZE] = "";
    mbd_model *model;
    const int status =
        ext_load_mujoco((const void *)(uintptr_t)address, text, &model, err, sizeof err);
    return model_object(type, status, model, err, name, SOURCE_MUJOCO, 0);
}

static void Model_dealloc(ModelObject *self)
{
    for (int k = 0; k < POOL_SLOTS; k++) {
        pool_slot *s = &self->pool[k];
        if (s->object && s->lanes < 0)
            mbd_work_free(s->object);
        else if (s->object)
            mbd_batch_free(s->object);
    }
    mbd_model_free(self->model);
    Py_XDECREF(self->spec);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Model_repr(ModelObject *self)
{
    static const char *const made_from[] = {NULL, "<text>", "<MjModel>"};
    PyObject *from = self->source == SOURCE_SPEC ? PyObject_Repr(self->spec)
                                                 : PyUnicode_FromString(made_from[self->source]);
    PyObject *repr =
        from ? PyUnicode_FromFormat("mbdbench.Model(%U%s): %s, nq=%d, nv=%d, nbodies=%d", from,
                                    self->floating_base ? ", floating_base=True" : "",
                                    mbd_model_name(self->model), self->nq, self->nv, self->nbodies)
             : NULL;
    Py_XDECREF(from);
    return repr;
}

/* Pickled as what it was loaded from (a path, spec or text): loaded again where it is
 * unpickled; a MuJoCo model's is not kept. */
static PyObject *Model_reduce(ModelObject *self, PyObject *unused)
{
    (void)unused;
    PyObject *floating = self->floating_base ? Py_True : Py_False;
    if (self->source == SOURCE_SPEC)
        return Py_BuildValue("O(OO)", Py_TYPE(self), self->spec, floating);
    if (self->source == SOURCE_TEXT) {
        PyObject *ext = PyImport_ImportModule("mbdbench._mbdbench");
        PyObject *from_text = ext ? PyObject_GetAttrString(ext, "_from_text") : NULL;
        Py_XDECREF(ext);
        return from_text ? Py_BuildValue("N(OOOO)", from_text, Py_TYPE(self),
                                         PyTuple_GET_ITEM(self->spec, 0),
                                         PyTuple_GET_ITEM(self->spec, 1), floating)
                         : NULL;
    }
    return PyErr_Format(PyExc_TypeError,
                        "cannot pickle model %s: it was built from a MuJoCo "
                        "MjModel (pickle that and call Model.from_mujoco again)",
                        mbd_model_name(self->model));
}

/* One entry of .joints, as `mbd info --json` writes it. */
static PyObject *joint_entry(const char *name, const char *type, const char *body, int q_index,
                             int v_index, int nq, int nv)
{
    return Py_BuildValue("{s:s, s:s, s:s, s:i, s:i, s:i, s:i}", "name", name, "type", type, "body",
                         body, "q_index", q_index, "v_index", v_index, "nq", nq, "nv", nv);
}

static PyObject *Model_joints(ModelObject *self, void *closure)
{
    (void)closure;
    const mbd_model *m = self->model;
    const int nframes = mbd_model_nframes(m);
    PyObject *list = PyList_New(self->nbodies + nframes);
    int q = 0, v = 0;
    for (int i = 0; list && i < self->nbodies; i++) {
        const mbd_body_def *b = mbd_model_body(m, i);
        const int nq = mbd_joint_type_nq(b->joint), nv = mbd_joint_type_nv(b->joint);
        PyObject *entry = joint_entry(mbd_model_joint_name(m, i), mbd_joint_type_name(b->joint),
                                      b->name, q, v, nq, nv);
        if (!entry)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, i, entry);
        q += nq, v += nv;
    }
    for (int f = 0; list && f < nframes; f++) {
        const mbd_frame_def *fr = mbd_model_frame(m, f);
        PyObject *entry =
            joint_entry(fr->joint_name ? fr->joint_name : fr->name, "fixed",
                        fr->body < 0 ? "world" : mbd_model_body(m, fr->body)->name, -1, -1, 0, 0);
        if (!entry)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, self->nbodies + f, entry);
    }
    return list;
}

static PyObject *Model_name(ModelObject *self, void *closure)
{
    (void)closure;
    return PyUnicode_FromString(mbd_model_name(self->model));
}

static PyObject *Model_spec(ModelObject *self, void *closure)
{
    (void)closure;
    return Py_NewRef(self->source == SOURCE_SPEC ? self->spec : Py_None);
}

static PyObject *Model_floating_base(ModelObject *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(self->floating_base);
}

static PyObject *Model_gravity(ModelObject *self, void *closure)
{
    (void)closure;
    PyArrayObject *g = ext_new_array(1, 3, 0, 0);
    if (g)
        mbd_model_gravity(self->model, ext_data(g));
    return (PyObject *)g;
}

static PyObject *Model_nloops(ModelObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromLong(mbd_model_nloops(self->model));
}

/* "; "-separated in the C API: a list here, empty for none. */
static PyObject *Model_left_out(ModelObject *self, void *closure)
{
    (void)closure;
    PyObject *items = PyList_New(0);
    for (const char *at = mbd_model_left_out(self->model); items && at && *at;) {
        const size_t length = strcspn(at, ";");
        PyObject *item = PyUnicode_FromStringAndSize(at, (Py_ssize_t)length);
        if (!item || PyList_Append(items, item) < 0) {
            Py_XDECREF(item);
            Py_DECREF(items);
            return NULL;
        }
        Py_DECREF(item);
        at += length;
        at += strspn(at, "; ");
    }
    return items;
}

static PyObject *Model_has_passive(ModelObject *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(mbd_model_has_passive(self->model));
}

static PyObject *Model_nconstraints(ModelObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromLong(mbd_model_nconstraints(self->model));
}

static PyObject *Model_neutral(ModelObject *self, PyObject *unused)
{
    (void)unused;
    PyArrayObject *q = ext_new_array(1, self->nq, 0, 0);
    if (q)
        mbd_neutral_positions(self->model, ext_data(q));
    return (PyObject *)q;
}

/* ---- single-state calls ---------------------------------------------------------------- */

/* What a call needs besides its workspace: inputs a, b, c, outputs x, y, z. */
typedef struct {
    const mbd_model *model;
    const double *a, *b, *c;
    double *x, *y, *z, *w;
    const mbd_baumgarte *stab;
    double tol;
    const mbd_derivatives_method *method;
} call_args;

typedef int (*work_call)(mbd_work *work, const call_args *c);

/* OpenBLAS's (the one the process loaded: the OpenMP build, or numpy's choice where numpy
 * was imported first). */
int openblas_get_parallel(void); /* 1: pthreads, 2: OpenMP */
int openblas_get_num_threads(void);
void openblas_set_num_threads(int threads);

/* The pthreads build's thread count is global: single-state calls hold it at 1 while any
 * runs, and the last one out restores what it was. */
static pthread_mutex_t blas_lock = PTHREAD_MUTEX_INITIALIZER;
static int blas_holders, blas_saved;

static void hold_blas_at_one(int hold)
{
    pthread_mutex_lock(&blas_lock);
    if (hold && blas_holders++ == 0) {
        blas_saved = openblas_get_num_threads();
        openblas_set_num_threads(1);
    } else if (!hold && --blas_holders == 0) {
        openblas_set_num_threads(blas_saved);
    }
    pthread_mutex_unlock(&blas_lock);
}

/* One state's call on one BLAS thread, as each of a batch's states is: OpenBLAS otherwise
 * starts its threads for every small factorization of dense, from every Python thread at
 * once (8 threads: 200 to 1500 times slower). The OpenMP build reads the calling thread's
 * own setting (OpenMP's nthreads-var), restored for its batches. */
static int call_on_one_thread(work_call call, mbd_work *work, const call_args *c)
{
    const int pthreads = openblas_get_parallel() == 1, threads = omp_get_max_threads();
    if (pthreads)
        hold_blas_at_one(1);
    else
        omp_set_num_threads(1);
    const int status = call(work, c);
    if (pthreads)
        hold_blas_at_one(0);
    else
        omp_set_num_threads(threads);
    return status;
}

/* Runs call on a workspace of solver taken for it alone, without the GIL on big models.
 * 0, or -1 with mbdbench.Error naming what and the failed body. */
static int run_call(ModelObject *self, const mbd_solver *solver, const char *what, work_call call,
                    call_args *c)
{
    mbd_work *work = ext_take_work(self, solver);
    if (!work)
        return -1;
    c->model = self->model;
    int status;
    if (self->nv >= GIL_RELEASE_NV) {
        Py_BEGIN_ALLOW_THREADS status = call_on_one_thread(call, work, c);
        Py_END_ALLOW_THREADS
    } else
        status = call_on_one_thread(call, work, c);
    const int body = status ? mbd_work_failed_body(work) : -1;
    ext_put_work(self, solver, work);
    if (status)
        ext_raise_solve(self, what, status, body);
    return status ? -1 : 0;
}

static int call_forward(mbd_work *w, const call_args *c)
{
    return mbd_forward(c->model, w, c->a, c->b, c->c, c->x);
}

static int call_forward_momentum(mbd_work *w, const call_args *c)
{
    return mbd_forward_momentum(c->model, w, c->a, c->b, c->c, c->x, c->y);
}

static int call_forward_constrained(mbd_work *w, const call_args *c)
{
    return mbd_forward_constrained(c->model, w, c->a, c->b, c->c, c->stab, c->x, c->y);
}

static int call_inverse_dynamics(mbd_work *w, const call_args *c)
{
    return mbd_inverse_dynamics(c->model, w, c->a, c->b, c->c, c->x, c->y);
}

static int call_mass_matrix(mbd_work *w, const call_args *c)
{
    return mbd_mass_matrix(c->model, w, c->a, c->x);
}

static int call_mass_matrix_inverse(mbd_work *w, const call_args *c)
{
    return mbd_mass_matrix_inverse(c->model, w, c->a, c->x);
}

static int call_coefficients(mbd_work *w, const call_args *c)
{
    return mbd_coefficients(c->model, w, c->a, c->b, c->x, c->y, c->z, c->w);
}

static int call_momentum(mbd_work *w, const call_args *c)
{
    return mbd_momentum(c->model, w, c->a, c->b, c->x);
}

static int call_energy(mbd_work *w, const call_args *c)
{
    return mbd_energy(c->model, w, c->a, c->b, c->x, c->x + 1);
}

/* The inputs of a call: q (nq), then each named velocity-sized vector (NULL where
 * optional and absent). 0, or -1 with the exception. */
static int state_inputs(ModelObject *self, ext_arrays *in, PyObject *const *objs,
                        const char *const *names, int count, const double **out)
{
    out[0] = ext_vector(in, objs[0], names[0], "nq", self->nq);
    for (int k = 1; out[0] && k < count; k++)
        if (objs[k] && !(out[k] = ext_vector(in, objs[k], names[k], "nv", self->nv)))
            return -1;
    return out[0] ? 0 : -1;
}

/* The result of a method: first, or the tuple (first, second); NULL with both released
 * where rc says the call failed. Releases the converted inputs either way. */
static PyObject *finish(int rc, ext_arrays *in, PyArrayObject *first, PyArrayObject *second)
{
    ext_release(in);
    if (rc) {
        Py_XDECREF(first), Py_XDECREF(second);
        return NULL;
    }
    return second ? Py_BuildValue("NN", first, second) : (PyObject *)first;
}

#define FASTCALL_ARGS ModelObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames

static const char forward_doc[] =
    "forward(q, qd, tau=None, solver='dense') -> qdd (nv,) float64\n\n"
    "Forward dynamics: the joint accelerations qdd (nv,) = H(q)^-1 (tau - C(q, qd) qd - g(q)),\n"
    "in rad/s^2, m/s^2, with the model's joint friction (iterated as the library does).\n"
    "Arrays in: float64, or anything that converts to it; out: new float64 arrays (as in\n"
    "every method).\n"
    "q (nq,): positions (rad, m; spherical and free joints: unit quaternion (w, x, y, z),\n"
    "free joints first the position of the body's origin in the joint frame);\n"
    "qd (nv,): velocities (rad/s, m/s; spherical joints: angular velocity in the body frame,\n"
    "free joints: (w; v_O) in body coordinates); tau (nv,): generalized forces (N m, N),\n"
    "None: zero. solver: one of solvers(); 'dense' (CRBA + Cholesky) is the reference and\n"
    "the CLI's default. On a model with loops this solves the open tree (see\n"
    "forward_constrained). Raises mbdbench.Error (NaN or Inf, singular H, ...).";

/* forward and forward_momentum: (q, x, tau=None, solver) to outputs (1 or 2) of nv each. */
static PyObject *forward_form(ModelObject *self, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames, const char *what, const char *const *names,
                              work_call call, int outputs)
{
    PyObject *o[4];
    if (ext_parse(what, args, nargs, kwnames, names, 2, o))
        return NULL;
    const mbd_solver *solver = ext_solver(o[3]);
    const double *in[3] = {NULL, NULL, NULL};
    ext_arrays held = {0};
    PyArrayObject *x = NULL, *y = NULL;
    int rc = !solver || state_inputs(self, &held, o, names, 3, in) ||
             !(x = ext_new_array(1, self->nv, 0, 0)) ||
             (outputs == 2 && !(y = ext_new_array(1, self->nv, 0, 0)));
    if (!rc) {
        call_args c = {
            .a = in[0], .b = in[1], .c = in[2], .x = ext_data(x), .y = y ? ext_data(y) : NULL};
        rc = run_call(self, solver, what, call, &c);
    }
    return finish(rc, &held, x, y);
}

static PyObject *Model_forward(FASTCALL_ARGS)
{
    static const char *const names[] = {"q", "qd", "tau", "solver", NULL};
    return forward_form(self, args, nargs, kwnames, "forward", names, call_forward, 1);
}

static const char forward_momentum_doc[] =
    "forward_momentum(q, p, tau=None, solver='dense') -> (qd, pd), each (nv,) float64\n\n"
    "Forward dynamics in the momentum form: from the positions q (nq,) and the generalized\n"
    "momenta p = H(q) qd (nv,; kg m^2/s, kg m/s) the velocities qd = H^-1 p (nv,) and the\n"
    "rates pd = tau + dT/dq (nv,; N m, N). tau (nv,) as in forward. Raises mbdbench.Error\n"
    "where the solver does not offer this form (mbd solvers lists the forms).";

static PyObject *Model_forward_momentum(FASTCALL_ARGS)
{
    static const char *const names[] = {"q", "p", "tau", "solver", NULL};
    return forward_form(self, args, nargs, kwnames, "forward_momentum", names,
                        call_forward_momentum, 2);
}

static const char forward_constrained_doc[] =
    "forward_constrained(q, qd, tau=None, solver='dense', baumgarte=(10.0, 10.0))\n"
    "    -> (qdd (nv,), lam (nconstraints,)), float64\n\n"
    "Forward dynamics of a model with closed loops (Lagrange multipliers):\n"
    "[H Phi_q^T; Phi_q 0] [qdd; -lam] = [tau - C qd - g; gamma - 2 alpha dPhi/dt - beta^2 Phi].\n"
    "q (nq,), qd (nv,), tau (nv,) as in forward; baumgarte: Baumgarte's (alpha, beta) in\n"
    "1/s (the CLI's default 10, 10; (0, 0): none). Returns qdd (nv,) and the multipliers lam\n"
    "(nconstraints,). solver: 'dense' or 'bodies' (the others raise mbdbench.Error). A model\n"
    "without loops gives forward's qdd and an empty lam.";

static int baumgarte_arg(PyObject *obj, mbd_baumgarte *stab)
{
    *stab = (mbd_baumgarte){10.0, 10.0};
    if (!obj)
        return 0;
    if (!PyArg_ParseTuple(obj, "dd", &stab->alpha, &stab->beta)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "baumgarte: expected (alpha, beta), two numbers, got %R",
                     obj);
        return -1;
    }
    if (!(stab->alpha >= 0.0 && stab->beta >= 0.0 && isfinite(stab->alpha) &&
          isfinite(stab->beta))) {
        PyErr_Format(PyExc_ValueError, "baumgarte: expected two finite numbers >= 0, got %R", obj);
        return -1;
    }
    return 0;
}

static PyObject *Model_forward_constrained(FASTCALL_ARGS)
{
    static const char *const names[] = {"q", "qd", "tau", "solver", "baumgarte", NULL};
    PyObject *o[5];
    if (ext_parse("forward_constrained", args, nargs, kwnames, names, 2, o))
        return NULL;
    const mbd_solver *solver = ext_solver(o[3]);
    mbd_baumgarte stab;
    const double *in[3] = {NULL, NULL, NULL};
    ext_arrays held = {0};
    PyArrayObject *qdd = NULL, *lam = NULL;
    int rc = !solver || baumgarte_arg(o[4], &stab) || state_inputs(self, &held, o, names, 3, in) ||
             !(qdd = ext_new_array(1, self->nv, 0, 0)) ||
             !(lam = ext_new_array(1, mbd_model_nconstraints(self->model), 0, 0));
    if (!rc) {
        call_args c = {.a = in[0],
                       .b = in[1],
                       .c = in[2],
                       .x = ext_data(qdd),
                       .y = ext_data(lam),
                       .stab = &stab};
        rc = run_call(self, solver, "forward_constrained", call_forward_constrained, &c);
    }
    return finish(rc, &held, qdd, lam);
}

static const char inverse_dynamics_doc[] =
    "inverse_dynamics(q, qd, qdd) -> (tau (nv,), reactions (nbodies, 6)), float64\n\n"
    "Inverse dynamics (RNEA): the generalized forces tau (nv,; N m, N) that give qdd\n"
    "(nv,) at (q (nq,), qd (nv,)), and the wrench (n; f) (N m; N) that each joint transmits\n"
    "from parent to child, in the child body's frame about its origin: reactions\n"
    "(nbodies, 6). With joint friction tau is the actuators' (forward(tau) gives qdd again).";

static PyObject *Model_inverse_dynamics(FASTCALL_ARGS)
{
    static const char *const names[] = {"q", "qd", "qdd", NULL};
    PyObject *o[3];
    if (ext_parse("inverse_dynamics", args, nargs, kwnames, names, 3, o))
        return NULL;
    const double *in[3] = {NULL, NULL, NULL};
    ext_arrays held = {0};
    PyArrayObject *tau = NULL, *reactions = NULL;
    int rc = state_inputs(self, &held, o, names, 3, in) ||
             !(tau = ext_new_array(1, self->nv, 0, 0)) ||
             !(reactions = ext_new_array(2, self->nbodies, 6, 0));
    if (!rc) {
        call_args c = {
            .a = in[0], .b = in[1], .c = in[2], .x = ext_data(tau), .y = ext_data(reactions)};
        rc = run_call(self, NULL, "inverse_dynamics", call_inverse_dynamics, &c);
    }
    return finish(rc, &held, tau, reactions);
}

/* A method of q, or of (q, qd) where ninputs is 2, with one result of shape (d0,) or, where
 * d1 > 0, (d0, d1). */
static PyObject *state_method(ModelObject *self, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames, const char *what, int ninputs, work_call call,
                              npy_intp d0, npy_intp d1)
{
    static const char *const names[2][3] = {{"q", NULL}, {"q", "qd", NULL}};
    PyObject *o[2];
    if (ext_parse(what, args, nargs, kwnames, names[ninputs - 1], ninputs, o))
        return NULL;
    const double *in[2] = {NULL, NULL};
    ext_arrays held = {0};
    PyArrayObject *x = NULL;
    int rc = state_inputs(self, &held, o, names[ninputs - 1], ninputs, in) ||
             !(x = ext_new_array(d1 ? 2 : 1, d0, d1, 0));
    if (!rc) {
        call_args c = {.a = in[0], .b = in[1], .x = ext_data(x)};
        rc = run_call(self, NULL, what, call, &c);
    }
    return finish(rc, &held, x, NULL);
}

static const char mass_matrix_doc[] =
    "mass_matrix(q) -> H (nv, nv) float64\n\n"
    "The joint-space inertia matrix H(q) (nv, nv; kg m^2, kg, kg m) by CRBA, full and\n"
    "symmetric, at the positions q (nq,).";

static PyObject *Model_mass_matrix(FASTCALL_ARGS)
{
    return state_method(self, args, nargs, kwnames, "mass_matrix", 1, call_mass_matrix, self->nv,
                        self->nv);
}

static const char mass_matrix_inverse_doc[] =
    "mass_matrix_inverse(q) -> Hinv (nv, nv) float64\n\n"
    "H(q)^-1 (nv, nv), exactly symmetric, by the O(N^2) articulated-body recursion without\n"
    "forming H, at the positions q (nq,). Raises mbdbench.Error naming the body where the\n"
    "inertia is singular.";

static PyObject *Model_mass_matrix_inverse(FASTCALL_ARGS)
{
    return state_method(self, args, nargs, kwnames, "mass_matrix_inverse", 1,
                        call_mass_matrix_inverse, self->nv, self->nv);
}

static const char momentum_doc[] =
    "momentum(q, qd) -> p (nv,) float64\n\n"
    "The generalized momenta p = H(q) qd (nv,; kg m^2/s, kg m/s) by one O(N) pass, at the\n"
    "positions q (nq,) and velocities qd (nv,).";

static PyObject *Model_momentum(FASTCALL_ARGS)
{
    return state_method(self, args, nargs, kwnames, "momentum", 2, call_momentum, self->nv, 0);
}

static const char energy_doc[] =
    "energy(q, qd) -> (kinetic, potential): two Python floats (J)\n\n"
    "The kinetic and the potential energy (J; potential zero at the world origin) at the\n"
    "positions q (nq,) and velocities qd (nv,).";

static PyObject *Model_energy(FASTCALL_ARGS)
{
    PyArrayObject *e =
        (PyArrayObject *)state_method(self, args, nargs, kwnames, "energy", 2, call_energy, 2, 0);
    if (!e)
        return NULL;
    PyObject *pair = Py_BuildValue("dd", ext_data(e)[0], ext_data(e)[1]);
    Py_DECREF(e);
    return pair;
}

static const char coefficients_doc[] =
    "coefficients(q, qd) -> {'H', 'C', 'g', 'Cqd'}: float64 arrays\n\n"
    "The coefficients of H(q) qdd + C(q, qd) qd + g(q) = tau (rigid bodies, no friction):\n"
    "H (nv, nv), the Coriolis matrix C (nv, nv) of the Christoffel symbols of H (dH/dt - 2C\n"
    "skew-symmetric), g (nv,) and C qd (nv,), at q (nq,) and qd (nv,). Raises\n"
    "mbdbench.Error for models with spherical or free joints (no Christoffel symbols in q).";

static PyObject *Model_coefficients(FASTCALL_ARGS)
{
    static const char *const names[] = {"q", "qd", NULL};
    PyObject *o[2];
    if (ext_parse("coefficients", args, nargs, kwnames, names, 2, o))
        return NULL;
    const double *in[2] = {NULL, NULL};
    ext_arrays held = {0};
    PyArrayObject *H = NULL, *C = NULL, *g = NULL, *Cqd = NULL;
    const npy_intp nv = self->nv;
    int rc = state_inputs(self, &held, o, names, 2, in) || !(H = ext_new_array(2, nv, nv, 0)) ||
             !(C = ext_new_array(2, nv, nv, 0)) || !(g = ext_new_array(1, nv, 0, 0)) ||
             !(Cqd = ext_new_array(1, nv, 0, 0));
    if (!rc) {
        call_args c = {.a = in[0],
                       .b = in[1],
                       .x = ext_data(H),
                       .y = ext_data(C),
                       .z = ext_data(g),
                       .w = ext_data(Cqd)};
        rc = run_call(self, NULL, "coefficients", call_coefficients, &c);
    }
    ext_release(&held);
    PyObject *dict =
        rc ? NULL : Py_BuildValue("{s:O, s:O, s:O, s:O}", "H", H, "C", C, "g", g, "Cqd", Cqd);
    Py_XDECREF(H), Py_XDECREF(C), Py_XDECREF(g), Py_XDECREF(Cqd);
    return dict;
}

static const char forward_derivatives_doc[] =
    "forward_derivatives(q, qd, tau=None, method=None, solver='bodies')\n"
    "    -> (dqdd_dq, dqdd_dqd, dqdd_dtau), each (nv, nv) float64\n\n"
    "The derivatives of forward's qdd (no friction, no loops), each (nv, nv), row i: qdd_i:\n"
    "with respect to q along q (+) delta (tangent coordinates: a spherical or free joint's\n"
    "quaternion turns by its body-frame angular velocity, Pinocchio's convention), to qd,\n"
    "and to tau (= H^-1). method: one of derivative_methods() (None: the first), which lists\n"
    "those of loaded plugins too (e.g. 'pinocchio-aba'); solver: the workspace's, which the\n"
    "automatic method differentiates. q, qd, tau as in forward.\n"
    "Raises mbdbench.Error for a model with friction or loops.";

static int call_forward_derivatives(mbd_work *w, const call_args *c)
{
    return mbd_forward_derivatives(c->model, w, c->a, c->b, c->c, c->method, c->x, c->y, c->z);
}

/* The method called by obj (a str; NULL: the table's first), or NULL with mbdbench.Error. */
static const mbd_derivatives_method *derivatives_method(PyObject *obj)
{
    if (!obj)
        return mbd_derivatives_method_at(0);
    const char *name = PyUnicode_Check(obj) ? ext_text(obj, "method") : NULL;
    const mbd_derivatives_method *method = name ? mbd_derivatives_method_find(name) : NULL;
    if (method || PyErr_Occurred())
        return method;
    char message[512];
    int at = snprintf(message, sizeof message,
                      "method: unknown method %.60s (one of:", name ? name : Py_TYPE(obj)->tp_name);
    for (int k = 0; k < mbd_derivatives_method_count() && at < (int)sizeof message; k++)
        at += snprintf(message + at, sizeof message - (size_t)at, " %s",
                       mbd_derivatives_method_name(mbd_derivatives_method_at(k)));
    if (at < (int)sizeof message)
        snprintf(message + at, sizeof message - (size_t)at, ")");
    ext_raise_message(MBD_EINVAL, message);
    return NULL;
}

static PyObject *Model_forward_derivatives(FASTCALL_ARGS)
{
    static const char *const names[] = {"q", "qd", "tau", "method", "solver", NULL};
    PyObject *o[5];
    if (ext_parse("forward_derivatives", args, nargs, kwnames, names, 2, o))
        return NULL;
    const mbd_derivatives_method *method = derivatives_method(o[3]);
    const mbd_solver *solver = !method ? NULL : o[4] ? ext_solver(o[4]) : mbd_solver_find("bodies");
    const double *in[3] = {NULL, NULL, NULL};
    ext_arrays held = {0};
    PyArrayObject *d[3] = {NULL, NULL, NULL};
    const npy_intp nv = self->nv;
    int rc = !solver || state_inputs(self, &held, o, names, 3, in) ||
             !(d[0] = ext_new_array(2, nv, nv, 0)) || !(d[1] = ext_new_array(2, nv, nv, 0)) ||
             !(d[2] = ext_new_array(2, nv, nv, 0));
    if (!rc) {
        call_args c = {.a = in[0],
                       .b = in[1],
                       .c = in[2],
                       .x = ext_data(d[0]),
                       .y = ext_data(d[1]),
                       .z = ext_data(d[2]),
                       .method = method};
        rc = run_call(self, solver, "forward_derivatives", call_forward_derivatives, &c);
    }
    ext_release(&held);
    PyObject *triple = rc ? NULL : Py_BuildValue("OOO", d[0], d[1], d[2]);
    Py_XDECREF(d[0]), Py_XDECREF(d[1]), Py_XDECREF(d[2]);
    return triple;
}

static const char constraint_violation_doc[] =
    "constraint_violation(q, qd) -> (phi, phid), each (nconstraints,) float64\n\n"
    "The loop constraints' violation Phi(q) and its rate dPhi/dt = Phi_q qd\n"
    "(nconstraints,) each; m, rad and m/s, rad/s by constraint. Empty without loops.";

static int call_constraint_violation(mbd_work *w, const call_args *c)
{
    return mbd_constraint_violation(c->model, w, c->a, c->b, c->x, c->y);
}

static PyObject *Model_constraint_violation(FASTCALL_ARGS)
{
    static const char *const names[] = {"q", "qd", NULL};
    PyObject *o[2];
    if (ext_parse("constraint_violation", args, nargs, kwnames, names, 2, o))
        return NULL;
    const double *in[2] = {NULL, NULL};
    ext_arrays held = {0};
    const npy_intp m = mbd_model_nconstraints(self->model);
    PyArrayObject *phi = NULL, *phid = NULL;
    int rc = state_inputs(self, &held, o, names, 2, in) || !(phi = ext_new_array(1, m, 0, 0)) ||
             !(phid = ext_new_array(1, m, 0, 0));
    if (!rc) {
        call_args c = {.a = in[0], .b = in[1], .x = ext_data(phi), .y = ext_data(phid)};
        rc = run_call(self, NULL, "constraint_violation", call_constraint_violation, &c);
    }
    return finish(rc, &held, phi, phid);
}

static const char project_constraints_doc[] =
    "project_constraints(q, qd, tol=1e-12) -> (q (nq,), qd (nv,)), float64\n\n"
    "Copies of q (nq,) and qd (nv,) moved onto the loop constraints: Gauss-Newton\n"
    "q <- q - Phi_q^+ Phi until |Phi| <= tol, then qd <- qd - Phi_q^+ Phi_q qd. Raises\n"
    "mbdbench.Error when it does not converge (models with nq == nv only).";

static int call_project_constraints(mbd_work *w, const call_args *c)
{
    return mbd_project_constraints(c->model, w, c->x, c->y, c->tol);
}

static PyObject *Model_project_constraints(FASTCALL_ARGS)
{
    static const char *const names[] = {"q", "qd", "tol", NULL};
    PyObject *o[3];
    if (ext_parse("project_constraints", args, nargs, kwnames, names, 2, o))
        return NULL;
    double tol;
    const double *in[2] = {NULL, NULL};
    ext_arrays held = {0};
    PyArrayObject *q = NULL, *qd = NULL;
    int rc = ext_positive(o[2], "tol", 0, 1e-12, &tol) ||
             state_inputs(self, &held, o, names, 2, in) ||
             !(q = ext_new_array(1, self->nq, 0, 0)) || !(qd = ext_new_array(1, self->nv, 0, 0));
    if (!rc) {
        memcpy(ext_data(q), in[0], (size_t)self->nq * sizeof(double));
        memcpy(ext_data(qd), in[1], (size_t)self->nv * sizeof(double));
        call_args c = {.x = ext_data(q), .y = ext_data(qd), .tol = tol};
        rc = run_call(self, NULL, "project_constraints", call_project_constraints, &c);
    }
    return finish(rc, &held, q, qd);
}

/* ---- many states at once -------------------------------------------------------------- */

static const char forward_batch_doc[] =
    "forward_batch(Q, QD, TAU=None, solver='dense', threads=None, simd=True,\n"
    "              return_status=False) -> QDD (K, nv) float64, or (QDD, status (K,) intc)\n\n"
    "forward for K states at once by the library's batch (mbd_batch_forward): rows of\n"
    "Q (K, nq), QD (K, nv), TAU (K, nv; None: zero) give the rows of QDD (K, nv), each\n"
    "forward's answer for its state to round-off, whatever K, its row or the threads. The\n"
    "states are spread over threads OpenMP threads (None: all), each running W states in\n"
    "lockstep in SIMD lanes where the solver has a lane form and simd is true (W from the\n"
    "CPU: 8 with AVX-512, 4 with AVX2). The GIL is released for the whole call, so that\n"
    "Python threads can run batches side by side. A state that fails (NaN, singular H)\n"
    "leaves the others right: with return_status=True its row of QDD is NaN and status\n"
    "(K,) ints holds each state's library status (0: success); with return_status=False\n"
    "the first failed state raises mbdbench.Error.";

/* Rows whose state failed read NaN. */
static void blank_failed_rows(double *qdd, const int *status, npy_intp K, int nv)
{
    for (npy_intp k = 0; k < K; k++)
        if (status[k])
            for (int i = 0; i < nv; i++)
                qdd[k * nv + i] = NAN;
}

static PyObject *batch_result(int rc, PyArrayObject *qdd, PyArrayObject *status, int return_status)
{
    if (rc || !return_status) {
        Py_XDECREF(status);
        if (rc)
            Py_XDECREF(qdd);
        return rc ? NULL : (PyObject *)qdd;
    }
    return Py_BuildValue("NN", qdd, status);
}

static PyObject *Model_forward_batch(FASTCALL_ARGS)
{
    static const char *const names[] = {"Q",       "QD",   "TAU",           "solver",
                                        "threads", "simd", "return_status", NULL};
    PyObject *o[7];
    if (ext_parse("forward_batch", args, nargs, kwnames, names, 2, o))
        return NULL;
    const mbd_solver *solver = ext_solver(o[3]);
    long threads;
    const int simd = o[5] ? PyObject_IsTrue(o[5]) : 1,
              return_status = o[6] ? PyObject_IsTrue(o[6]) : 0;
    ext_arrays held = {0};
    npy_intp dims[2] = {-1, self->nq};
    PyArrayObject *Q = NULL, *QD = NULL, *TAU = NULL, *qdd = NULL, *status = NULL;
    int rc = !solver || ext_int(o[4], "threads", 1, 4096, 0, &threads) || simd < 0 ||
             return_status < 0 || !(Q = ext_array(&held, o[0], "Q", 2, dims, "(K, nq)"));
    const npy_intp K = Q ? PyArray_DIM(Q, 0) : 0;
    dims[0] = K, dims[1] = self->nv;
    if (!rc && K > INT_MAX) {
        PyErr_Format(PyExc_ValueError, "Q: at most %d states, got %zd", INT_MAX, (Py_ssize_t)K);
        rc = -1;
    }
    rc = rc || !(QD = ext_array(&held, o[1], "QD", 2, dims, "(K, nv)")) ||
         (o[2] && !(TAU = ext_array(&held, o[2], "TAU", 2, dims, "(K, nv)"))) ||
         !(qdd = ext_new_array(2, K, self->nv, 0)) ||
         !(status = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_INT));
    const int lanes = simd ? 0 : 1;
    mbd_batch *batch = rc ? NULL : ext_take_batch(self, solver, (int)threads, lanes);
    rc = rc || !batch;
    if (!rc) {
        int *st = PyArray_DATA(status), first;
        Py_BEGIN_ALLOW_THREADS first =
            mbd_batch_forward(self->model, batch, (int)K, ext_data(Q), ext_data(QD),
                              TAU ? ext_data(TAU) : NULL, ext_data(qdd), st);
        blank_failed_rows(ext_data(qdd), st, K, self->nv);
        Py_END_ALLOW_THREADS ext_put_batch(self, solver, (int)threads, lanes, batch);
        for (npy_intp k = 0; first && !return_status && k < K; k++)
            if (st[k]) {
                char what[64];
                snprintf(what, sizeof what, "forward_batch: state %zd", (Py_ssize_t)k);
                ext_raise(what, st[k]);
                rc = -1;
                break;
            }
    }
    ext_release(&held);
    return batch_result(rc, qdd, status, return_status);
}

/* ---- the C side of python/bench_overhead.py ----------------------------------------------- */

/* The calling thread's cpu time, which other load on the machine does not inflate (as mbd
 * recommend times one call). */
static double thread_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Seconds per mbd_forward call, repeated in C on one workspace: what forward's overhead is
 * measured against. */
static PyObject *Model_time_forward(FASTCALL_ARGS)
{
    static const char *const names[] = {"q", "qd", "tau", "solver", "repeats", NULL};
    PyObject *o[5];
    long repeats;
    if (ext_parse("_time_forward", args, nargs, kwnames, names, 5, o) ||
        ext_int(o[4], "repeats", 1, LONG_MAX, 1, &repeats))
        return NULL;
    const mbd_solver *solver = ext_solver(o[3]);
    const double *in[3] = {NULL, NULL, NULL};
    ext_arrays held = {0};
    mbd_work *work = NULL;
    double *qdd = malloc((size_t)self->nv * sizeof *qdd), elapsed = 0.0;
    int rc = !qdd || !solver || state_inputs(self, &held, o, names, 3, in) ||
             !(work = ext_take_work(self, solver));
    if (!rc) {
        const double start = thread_seconds();
        for (long k = 0; k < repeats; k++)
            rc |= mbd_forward(self->model, work, in[0], in[1], in[2], qdd);
        elapsed = thread_seconds() - start;
        ext_put_work(self, solver, work);
    }
    free(qdd);
    ext_release(&held);
    return rc ? (PyErr_Occurred() ? NULL : ext_raise("_time_forward", rc))
              : PyFloat_FromDouble(elapsed / (double)repeats);
}

/* Seconds per mbd_batch_forward call over the rows given, repeated in C on one batch
 * (threads 1: cpu time is then this thread's). */
static PyObject *Model_time_forward_batch(FASTCALL_ARGS)
{
    static const char *const names[] = {"Q", "QD", "TAU", "solver", "threads", "repeats", NULL};
    PyObject *o[6];
    long threads, repeats;
    if (ext_parse("_time_forward_batch", args, nargs, kwnames, names, 6, o) ||
        ext_int(o[4], "threads", 0, 4096, 0, &threads) ||
        ext_int(o[5], "repeats", 1, LONG_MAX, 1, &repeats))
        return NULL;
    const mbd_solver *solver = ext_solver(o[3]);
    ext_arrays held = {0};
    npy_intp dims[2] = {-1, self->nq};
    PyArrayObject *Q = solver ? ext_array(&held, o[0], "Q", 2, dims, "(K, nq)") : NULL;
    dims[0] = Q ? PyArray_DIM(Q, 0) : 0, dims[1] = self->nv;
    PyArrayObject *QD = Q ? ext_array(&held, o[1], "QD", 2, dims, "(K, nv)") : NULL;
    PyArrayObject *TAU = QD ? ext_array(&held, o[2], "TAU", 2, dims, "(K, nv)") : NULL;
    double *qdd = TAU ? malloc((size_t)(dims[0] * dims[1] + 1) * sizeof *qdd) : NULL;
    mbd_batch *batch = qdd ? ext_take_batch(self, solver, (int)threads, 0) : NULL;
    double elapsed = 0.0;
    int rc = !batch;
    if (!rc) {
        Py_BEGIN_ALLOW_THREADS const double start =
            thread_seconds(); /* one thread: the batch runs on this one */
        for (long k = 0; k < repeats; k++)
            rc |= mbd_batch_forward(self->model, batch, (int)dims[0], ext_data(Q), ext_data(QD),
                                    ext_data(TAU), qdd, NULL);
        elapsed = thread_seconds() - start;
        Py_END_ALLOW_THREADS ext_put_batch(self, solver, (int)threads, 0, batch);
    }
    free(qdd);
    ext_release(&held);
    return rc ? (PyErr_Occurred() ? NULL : ext_raise("_time_forward_batch", rc))
              : PyFloat_FromDouble(elapsed / (double)repeats);
}

/* ---- the type and the module ------------------------------------------------------------- */

#define FASTCALL(name, doc)                                                                        \
    {                                                                                              \
#name, (PyCFunction)(void (*)(void))Model_##name, METH_FASTCALL | METH_KEYWORDS, doc       \
    }
#define PRIVATE_FASTCALL(name, doc)                                                                \
    {                                                                                              \
        "_" #name, (PyCFunction)(void (*)(void))Model_##name, METH_FASTCALL | METH_KEYWORDS, doc   \
    }

static PyMethodDef Model_methods[] = {
    FASTCALL(forward, forward_doc),
    FASTCALL(forward_momentum, forward_momentum_doc),
    FASTCALL(forward_constrained, forward_constrained_doc),
    FASTCALL(inverse_dynamics, inverse_dynamics_doc),
    FASTCALL(mass_matrix, mass_matrix_doc),
    FASTCALL(mass_matrix_inverse, mass_matrix_inverse_doc),
    FASTCALL(coefficients, coefficients_doc),
    FASTCALL(forward_derivatives, forward_derivatives_doc),
    FASTCALL(momentum, momentum_doc),
    FASTCALL(energy, energy_doc),
    FASTCALL(forward_batch, forward_batch_doc),
    FASTCALL(constraint_violation, constraint_violation_doc),
    FASTCALL(project_constraints, project_constraints_doc),
    PRIVATE_FASTCALL(time_forward,
                     "_time_forward(q, qd, tau, solver, repeats) -> seconds per C call"),
    PRIVATE_FASTCALL(
        time_forward_batch,
        "_time_forward_batch(Q, QD, TAU, solver, threads, repeats) -> seconds per C call"),
    {"_simulate", (PyCFunction)(void (*)(void))ext_simulate, METH_FASTCALL | METH_KEYWORDS,
     ext_simulate_doc},
    {"_simulate_ensemble", (PyCFunction)(void (*)(void))ext_simulate_ensemble,
     METH_FASTCALL | METH_KEYWORDS, ext_simulate_ensemble_doc},
    {"neutral", (PyCFunction)Model_neutral, METH_NOARGS,
     "neutral() -> q (nq,) float64\n\nThe neutral positions (nq,): every coordinate 0 but the quaternions'\n"
     "w = 1 (the joint frames)."},
    {"__reduce__", (PyCFunction)Model_reduce, METH_NOARGS, "Pickled as what it was loaded from."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef Model_members[] = {
    {"nq", T_INT, offsetof(ModelObject, nq), READONLY, "number of position coordinates"},
    {"nv", T_INT, offsetof(ModelObject, nv), READONLY, "number of velocities (degrees of freedom)"},
    {"nbodies", T_INT, offsetof(ModelObject, nbodies), READONLY, "number of moving bodies"},
    {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef Model_getset[] = {
    {"name", (getter)Model_name, NULL, "the model's name", NULL},
    {"spec", (getter)Model_spec, NULL,
     "the path or generator spec it was loaded from (str), None for a model made by\n"
     "Model.from_string or Model.from_mujoco",
     NULL},
    {"joints", (getter)Model_joints, NULL,
     "list of dicts {name, type, body, q_index, v_index, nq, nv}, as `mbd info --json`: the\n"
     "moving joints in coordinate order, then the fixed ones (nq = nv = 0, q_index = v_index\n"
     "= -1, body: the body they are fixed in). A new list each time.",
     NULL},
    {"floating_base", (getter)Model_floating_base, NULL,
     "whether a URDF robot's root link was loaded as moving freely", NULL},
    {"gravity", (getter)Model_gravity, NULL, "gravity (3,) in the world frame, m/s^2", NULL},
    {"nloops", (getter)Model_nloops, NULL, "number of loop-closing (cut) joints", NULL},
    {"left_out", (getter)Model_left_out, NULL,
     "what the model file describes and the dynamics leave out (an MJCF model's contacts,\n"
     "limits, equality constraints, actuators, ...), as `mbd info`: a list of str",
     NULL},
    {"has_passive", (getter)Model_has_passive, NULL,
     "whether any joint has armature or any body or tendon passive forces (springs,\n"
     "dampers, gravity compensation), which every forward call adds to tau",
     NULL},
    {"nconstraints", (getter)Model_nconstraints, NULL,
     "number of loop constraint equations (the length of forward_constrained's lam)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject Model_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "mbdbench._mbdbench.Model",
    .tp_basicsize = sizeof(ModelObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Model(path_or_spec, floating_base=False)\n\n"
              "A multibody model, loaded from a JSON, URDF or MJCF file or made by a generator\n"
              "spec such as 'chain:n=10,joint=cardan' (`mbd help` lists the generators;\n"
              "Model.from_string and Model.from_mujoco: from a file's text, from an MjModel);\n"
              "floating_base: a URDF robot's root link moves freely (a free joint). Raises\n"
              "mbdbench.Error with the library's message (file, field, value). Immutable: any\n"
              "number of Python threads may share one; each call takes a workspace of its own.\n"
              "Units SI; spatial vectors in body coordinates, motion (w; v_O), force (n_O; f).",
    .tp_new = Model_new,
    .tp_dealloc = (destructor)Model_dealloc,
    .tp_repr = (reprfunc)Model_repr,
    .tp_methods = Model_methods,
    .tp_members = Model_members,
    .tp_getset = Model_getset,
};

/* The names of a table's rows as a list of str, or NULL with the exception. */
static PyObject *name_list(int count, const char *(*name_at)(int))
{
    PyObject *list = PyList_New(count);
    for (int k = 0; list && k < count; k++) {
        PyObject *name = PyUnicode_FromString(name_at(k));
        if (!name)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, k, name);
    }
    return list;
}

static const char *solver_name_at(int k) { return mbd_solver_name(mbd_solver_at(k)); }

static const char *method_name_at(int k)
{
    return mbd_derivatives_method_name(mbd_derivatives_method_at(k));
}

static PyObject *module_solvers(PyObject *module, PyObject *unused)
{
    (void)module, (void)unused;
    return name_list(mbd_solver_count(), solver_name_at);
}

static PyObject *module_derivative_methods(PyObject *module, PyObject *unused)
{
    (void)module, (void)unused;
    return name_list(mbd_derivatives_method_count(), method_name_at);
}

/* Python loads an extension with its symbols private (RTLD_LOCAL): this one's go into the
 * global scope before the first plugin, so that a plugin's calls of the API resolve to it. */
static int export_api(PyObject *module)
{
    PyObject *file = PyModule_GetFilenameObject(module), *bytes = NULL;
    if (!file || !PyUnicode_FSConverter(file, &bytes)) {
        Py_XDECREF(file);
        return -1;
    }
    const int found =
        dlopen(PyBytes_AS_STRING(bytes), RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL) != NULL;
    if (!found)
        PyErr_Format(PyExc_ImportError, "load_plugin: cannot export the library's API: %s",
                     dlerror());
    Py_DECREF(bytes);
    Py_DECREF(file);
    return found ? 0 : -1;
}

static PyObject *module_load_plugin(PyObject *module, PyObject *arg)
{
    PyObject *bytes;
    if (export_api(module) || !PyUnicode_FSConverter(arg, &bytes))
        return NULL;
    char err[512];
    const int status = mbd_plugin_load(PyBytes_AS_STRING(bytes), err, sizeof err);
    Py_DECREF(bytes);
    if (status == MBD_ENOMEM)
        return PyErr_Format(PyExc_MemoryError, "%s", err);
    return status ? ext_raise_message(status, err) : Py_NewRef(Py_None);
}

static PyMethodDef module_methods[] = {
    {"solvers", module_solvers, METH_NOARGS,
     "solvers() -> list of str\n\nThe names of the registered solvers, as `mbd solvers`."},
    {"derivative_methods", module_derivative_methods, METH_NOARGS,
     "derivative_methods() -> list of str\n\nThe names of the methods of forward_derivatives,\n"
     "the table's first (the default) first."},
    {"_from_text", module_from_text, METH_VARARGS,
     "_from_text(cls, text, name, floating_base): mbd_model_load_text (use\n"
     "mbdbench.Model.from_string)."},
    {"_from_mujoco", module_from_mujoco, METH_VARARGS,
     "_from_mujoco(cls, address, name): mbd_model_from_mujoco (use\n"
     "mbdbench.Model.from_mujoco)."},
    {"_load_plugin", module_load_plugin, METH_O,
     "_load_plugin(path): mbd_plugin_load (use mbdbench.load_plugin)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "mbdbench._mbdbench",
    "The C extension over libmbd; use the package mbdbench.",
    -1,
    module_methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__mbdbench(void)
{
    import_array();
    if (PyType_Ready(&Model_Type) < 0)
        return NULL;
    PyObject *module = PyModule_Create(&module_def);
    if (!module)
        return NULL;
    ext_error_type = PyErr_NewExceptionWithDoc(
        "mbdbench.Error",
        "A failure the library reports; str(e) is its message (file, field, value), e.status\n"
        "its mbd_status (negative).",
        PyExc_ValueError, NULL);
    const char *mujoco = mbd_mujoco_version();
    if (!ext_error_type || PyModule_AddObjectRef(module, "Error", ext_error_type) < 0 ||
        PyModule_AddStringConstant(module, "__version__", mbd_version()) < 0 ||
        (mujoco ? PyModule_AddStringConstant(module, "mujoco_version", mujoco)
                : PyModule_AddObjectRef(module, "mujoco_version", Py_None)) < 0 ||
        PyModule_AddObjectRef(module, "Model", (PyObject *)&Model_Type) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
